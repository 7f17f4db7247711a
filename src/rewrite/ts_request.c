/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite/ts_beta.h"
#include "rewrite/ts_client.h"
#include "rewrite/ts_defer.h"
#include "rewrite/ts_gateway.h"
#include "rewrite/ts_hygiene.h"
#include "rewrite/ts_request.h"
#include "rewrite/ts_wrapper.h"


static const char  *ts_decision_names[TS_DECISION_N] = {
    "none",
    "passthrough",
    "passthrough_malformed",
    "passthrough_too_deep",
    "passthrough_duplicate_key",
    "passthrough_wrong_type",
    "passthrough_limit",
    "passthrough_error",
    "passthrough_too_large",
    "passthrough_not_json",
    "passthrough_encoded",
    "passthrough_method",
    "standard_mode",
    "kill_switch",
    "model_unsupported",
    "upstream_unsupported",
    "nothing_to_defer",
    "below_threshold",
    "client_managed",
    "server_state",
    "deferred_hosted",
    "deferred_gateway",
    "thread_create",
    "thread_continue"
};


static ts_decision_t
ts_status_decision(ts_status_t st)
{
    switch (st) {
    case TS_OK:
        return TS_DECISION_PASSTHROUGH;
    case TS_ERR_SYNTAX:
        return TS_DECISION_MALFORMED;
    case TS_ERR_DEPTH:
        return TS_DECISION_TOO_DEEP;
    case TS_ERR_DUPLICATE:
        return TS_DECISION_DUPLICATE_KEY;
    case TS_ERR_TYPE:
        return TS_DECISION_WRONG_TYPE;
    case TS_ERR_LIMIT:
        return TS_DECISION_LIMIT;
    default:
        return TS_DECISION_ERROR;
    }
}


/*
 * Bedrock's InvokeModel reads betas from the body: the array is edited
 * item by item, or added in front of the other members.
 */
static int
ts_body_betas(ts_request_t *rq, const char *want)
{
    static const char   drop[][32] = { TS_BETA_FIRST_PARTY,
                                       TS_BETA_THIRD_PARTY };
    const ts_index_t   *ix;
    const ts_member_t  *m;
    ts_val_t           *items;
    unsigned char      *del;
    size_t              n, i;
    int                 rc, have;
    char                item[64];

    ix = &rq->ix;
    m = ts_index_top(ix, TS_TOP_ANTHROPIC_BETA);

    if (m == NULL) {
        if (want == NULL) {
            return 0;
        }

        n = (size_t) snprintf(item, sizeof(item), "\"anthropic_beta\":"
                              "[\"%s\"],", want);

        return ts_edit_replace(&rq->edits, ix->members[0].off, 0, item, n);
    }

    if (m->val.kind != TS_ARRAY
        || ts_container_items(ix->buf, &m->val, &items, &n) != TS_OK)
    {
        return -1;
    }

    del = calloc(n ? n : 1, 1);
    if (del == NULL) {
        free(items);
        return -1;
    }

    have = 0;

    for (i = 0; i < n; i++) {
        if (want && ts_str_eq(ix->buf, &items[i], want)) {
            have = 1;

        } else {
            del[i] = ts_str_eq(ix->buf, &items[i], drop[0])
                     || ts_str_eq(ix->buf, &items[i], drop[1]);
        }
    }

    rc = ts_edit_delete_items(&rq->edits, items, n, del);

    if (rc == 0 && want && !have) {
        i = (size_t) snprintf(item, sizeof(item), "\"%s\"", want);
        rc = ts_edit_append_item(&rq->edits, &m->val,
                                 n ? &items[n - 1] : NULL, item, i);
    }

    free(del);
    free(items);

    return rc;
}


/* the header value changes when a tool-search value is wrong or missing */
static int
ts_header_betas(ts_request_t *rq, const ts_input_t *in, const char *want)
{
    static const char  *drop[] = { TS_BETA_FIRST_PARTY, TS_BETA_THIRD_PARTY,
                                   NULL };
    const char        **d;
    int                 change;

    change = want && !ts_beta_has(in->betas, in->betas_len, want);

    for (d = drop; *d; d++) {
        if ((want == NULL || strcmp(*d, want) != 0)
            && ts_beta_has(in->betas, in->betas_len, *d))
        {
            change = 1;
        }
    }

    if (!change) {
        return 0;
    }

    rq->betas = ts_beta_edit(in->betas, in->betas_len, drop, want);
    rq->betas_changed = 1;

    return rq->betas ? 0 : -1;
}


/*
 * The tool-search beta goes with the fields that need it: added in the
 * profile's spelling while the outgoing body has one, removed otherwise.
 */
static int
ts_request_betas(ts_request_t *rq, const ts_input_t *in)
{
    const char  *want;
    int          uses, in_body;

    uses = rq->decision == TS_DECISION_DEFERRED_HOSTED
           || rq->referenced.n > 0
           || (!rq->stripped
               && (rq->hygiene.refs_kept > 0
                   || ts_hygiene_has_artifacts(&rq->ix, 0)));

    /*
     * A client that runs its own search keeps the betas it sent where they
     * are Anthropic's own: Claude Code sends advanced-tool-use before its
     * first deferred tool
     */
    want = ts_upstream_beta(rq->upstream,
                            in->policy->upstream_tool_reference);

    if (!uses && rq->decision == TS_DECISION_CLIENT_MANAGED
        && !rq->stripped && want != NULL
        && strcmp(want, TS_BETA_FIRST_PARTY) == 0)
    {
        return 0;
    }

    want = uses ? want : NULL;

    in_body = rq->upstream == TS_UPSTREAM_BEDROCK
              && ts_index_top(&rq->ix, TS_TOP_ANTHROPIC_VERSION) != NULL;

    if (ts_header_betas(rq, in, in_body ? NULL : want) != 0) {
        return -1;
    }

    return in_body ? ts_body_betas(rq, want) : 0;
}


/*
 * A request that may not carry tool-search fields loses them; one that
 * may gets its references and turn boundaries repaired.
 */
static int
ts_request_hygiene(ts_request_t *rq, const ts_input_t *in,
    const ts_history_t *h)
{
    ts_hygiene_t  hy;

    if (!ts_hygiene_has_artifacts(&rq->ix, 1)) {
        return 0;
    }

    hy.ix = &rq->ix;
    hy.edits = &rq->edits;
    hy.defer = rq->defer;
    hy.referenced = &rq->referenced;
    hy.counts = &rq->hygiene;

    /*
     * gateway search leaves deferred tools out: only references to the
     * tools it sends deferred may stay
     */
    if (rq->decision == TS_DECISION_DEFERRED_HOSTED
        || (rq->decision != TS_DECISION_DEFERRED_GATEWAY
            && ts_defer_artifacts_allowed(&rq->ix, rq->mode,
                                          rq->upstream, in->policy)))
    {
        return ts_hygiene_repair(&hy, in->policy->turn_boundary);
    }

    rq->stripped = 1;

    return ts_hygiene_strip(&hy, h);
}


/*
 * Tools of the request that history shows loaded on demand: found by a
 * search, deferrable (MCP, or sent deferred) and already called, or
 * deferrable and named where a compaction summary stands.  The sets are
 * asked first: most are empty, which costs nothing.
 */
static void
ts_request_discovered(ts_request_t *rq, const ts_history_t *h)
{
    const ts_index_t  *ix;
    const ts_tool_t   *t;
    size_t             i;

    ix = &rq->ix;

    for (i = 0; i < ix->ntools; i++) {
        t = &ix->tools[i];

        rq->discovered += (rq->loaded && rq->loaded[i])
                          || (rq->deferrable
                              && (rq->deferrable[i] & TS_NAMED))
                          || ts_names_has_val(&h->client, ix->buf, &t->name)
                          || ts_names_has_val(&h->hosted, ix->buf, &t->name)
                          || (ts_names_has_val(&h->called, ix->buf,
                                               &t->name)
                              && (t->defer_loading.val.kind == TS_TRUE
                                  || (t->name.kind == TS_STRING
                                      && ts_name_is_mcp(
                                             ix->buf + t->name.off + 1,
                                             t->name.len - 2))));
    }
}


static void
ts_request_fail(ts_request_t *rq)
{
    rq->decision = TS_DECISION_ERROR;
    ts_edits_free(&rq->edits);
    ts_edits_init(&rq->edits);
    free(rq->betas);
    rq->betas = NULL;
    rq->betas_changed = 0;
    rq->stripped = 0;
    rq->searches_restored = 0;
    memset(&rq->hygiene, 0, sizeof(ts_hygiene_counts_t));
    ts_names_free(&rq->referenced);
}


/* the tools the loop's searches loaded join those history shows */
static int
ts_request_loaded(ts_request_t *rq, const ts_input_t *in)
{
    size_t  i;

    if (in->loaded == NULL) {
        return 0;
    }

    if (rq->loaded == NULL) {
        rq->loaded = calloc(rq->ix.ntools ? rq->ix.ntools : 1, 1);
        if (rq->loaded == NULL) {
            return -1;
        }
    }

    for (i = 0; i < rq->ix.ntools; i++) {
        rq->loaded[i] |= in->loaded[i] ? TS_LOADED_LOOP : 0;
    }

    return 0;
}


static void
ts_request_policy(ts_request_t *rq, const ts_input_t *in)
{
    ts_history_t  h;

    rq->upstream = in->upstream;
    rq->client = in->policy->client_profiles
                 ? ts_client_of(&rq->ix, in->user_agent, in->user_agent_len)
                 : TS_CLIENT_DEFAULT;
    rq->mode = in->defer_mode >= 0 ? in->defer_mode : in->policy->defer_mode;

    /* the kill switch is standard mode for everyone */
    if (in->policy->disable_betas) {
        rq->mode = TS_DEFER_OFF;
    }

    rq->percent = in->defer_mode >= 0 ? in->defer_percent
                                      : in->policy->defer_percent;
    rq->load_refs = ts_gateway_refs(&rq->ix, rq->mode, rq->upstream,
                                    in->policy);

    /* a client tool of the wrapper's name: found tools load as tools */
    rq->load_wrapper = !rq->load_refs
                       && in->policy->found_tools == TS_FOUND_WRAPPER
                       && ts_wrapper_free(&rq->ix);

    /*
     * A thread's later turn builds on tools and turns the server holds and
     * the request does not show: nothing here can be judged, so nothing
     * is changed, betas included
     */
    if (ts_defer_thread(&rq->ix) == TS_THREAD_HELD) {
        rq->decision = TS_DECISION_THREAD_CONTINUE;
        return;
    }

    /* freed below also when a step before ts_history_build() fails */
    memset(&h, 0, sizeof(ts_history_t));

    if (ts_gateway_normalize(rq, in->policy) != 0
        || ts_request_loaded(rq, in) != 0
        || ts_history_build(&h, &rq->ix,
                            in->policy->search_tool) != 0)
    {
        ts_history_free(&h);
        ts_request_fail(rq);
        return;
    }

    rq->decision = ts_defer_decide(rq, in, &h);
    ts_request_discovered(rq, &h);

    if (rq->decision == TS_DECISION_ERROR
        || (rq->decision == TS_DECISION_DEFERRED_HOSTED
            && ts_defer_apply(rq, &h, in->policy) != 0)
        || (rq->decision == TS_DECISION_DEFERRED_GATEWAY
            && ts_gateway_apply(rq, in) != 0)
        || ts_request_hygiene(rq, in, &h) != 0
        || ts_request_betas(rq, in) != 0)
    {
        ts_request_fail(rq);
    }

    ts_history_free(&h);
}


ts_decision_t
ts_request_process(ts_request_t *rq, const ts_input_t *in, const char *body,
    size_t len)
{
    ts_status_t  st;

    memset(rq, 0, sizeof(ts_request_t));
    ts_edits_init(&rq->edits);

    st = ts_index_build_in(&rq->ix, body, len, in ? in->index_mem : NULL);
    rq->decision = ts_status_decision(st);

    if (st == TS_OK && in != NULL && in->policy != NULL) {
        ts_request_policy(rq, in);
    }

    return rq->decision;
}


int
ts_request_changed(const ts_request_t *rq)
{
    return rq->decision != TS_DECISION_ERROR
           && (rq->edits.n > 0 || rq->own != NULL);
}


size_t
ts_request_size(const ts_request_t *rq)
{
    return ts_edits_size(&rq->edits, rq->ix.len);
}


int
ts_request_render(ts_request_t *rq, char *out)
{
    return ts_edits_render(&rq->edits, rq->ix.buf, rq->ix.len, out);
}


int
ts_request_pieces(ts_request_t *rq, ts_pieces_t *it)
{
    return ts_edits_pieces(&rq->edits, rq->ix.buf, rq->ix.len, it);
}


void
ts_request_free(ts_request_t *rq)
{
    ts_index_free(&rq->ix);
    ts_edits_free(&rq->edits);
    free(rq->defer);
    free(rq->deferrable);
    free(rq->betas);
    free(rq->loaded);
    free(rq->called);
    free(rq->own);
    free(rq->qualified);
    free(rq->tool_elems);
    ts_names_free(&rq->referenced);
    rq->defer = NULL;
    rq->deferrable = NULL;
    rq->betas = NULL;
    rq->loaded = NULL;
    rq->called = NULL;
    rq->own = NULL;
    rq->qualified = NULL;
    rq->tool_elems = NULL;
    rq->ntool_elems = 0;
}


void
ts_request_called(ts_request_t *rq, size_t i)
{
    rq->loaded[i] = 1;

    if (rq->called != NULL && rq->called[i] == 0) {
        rq->called[i] = ++rq->ncalled;
    }
}



void
ts_request_load(ts_request_t *rq, size_t i, int called)
{
    if (called) {
        ts_request_called(rq, i);

    } else {
        rq->loaded[i] = 1;
    }
}

const char *
ts_decision_name(ts_decision_t d)
{
    return (unsigned) d < TS_DECISION_N ? ts_decision_names[d] : "none";
}
