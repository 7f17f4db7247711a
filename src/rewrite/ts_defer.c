/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

#include "scan/ts_buf.h"
#include "rewrite/ts_defer.h"
#include "rewrite/ts_facts.h"


/* the longest tool name (the API's) and call id a restored search takes */
#define TS_RESTORE_NAME_MAX  64
#define TS_RESTORE_ID_MAX    96


static const char  *ts_hosted_tools[] = {
    "{\"type\":\"tool_search_tool_bm25_20251119\","
    "\"name\":\"tool_search_tool_bm25\"}",
    "{\"type\":\"tool_search_tool_regex_20251119\","
    "\"name\":\"tool_search_tool_regex\"}"
};

/*
 * The request already uses tool search: a search tool of its own, a
 * deferred tool, or a client-side search result in history.  Hosted
 * results alone are the gateway's own work from an earlier turn.
 */
static int
ts_client_managed(const ts_facts_t *f, const ts_history_t *h)
{
    return f->managed || h->client.n > 0;
}


/* the tool tool_choice forces, which must stay loaded */
static ts_val_t
ts_forced_tool(const ts_index_t *ix)
{
    const ts_member_t  *m;
    ts_val_t            type, name;

    name.kind = TS_NONE;
    m = ts_index_top(ix, TS_TOP_TOOL_CHOICE);

    if (m != NULL
        && ts_object_member(ix->buf, &m->val, "type", &type) == TS_OK
        && ts_str_eq(ix->buf, &type, "tool")
        && ts_object_member(ix->buf, &m->val, "name", &name) != TS_OK)
    {
        name.kind = TS_NONE;
    }

    return name;
}


int
ts_defer_restorable(const char *name, size_t len)
{
    size_t  i;

    if (len == 0 || len > TS_RESTORE_NAME_MAX) {
        return 0;
    }

    for (i = 0; i < len; i++) {
        if (!ts_ascii_alnum((unsigned char) name[i])
            && name[i] != '_' && name[i] != '-')
        {
            return 0;
        }
    }

    return 1;
}


/*
 * The priority chain for one tool the chain may defer (TS_FACT_ELIGIBLE):
 * what this request and its history add to the location's rules
 * (deferrable).  fname: the tool tool_choice forces, or NULL.
 * 1: deferred.
 */
static int
ts_tool_deferred(const ts_index_t *ix, const ts_tool_t *t,
    const ts_history_t *h, const char *fname, size_t flen, int gateway,
    int deferrable)
{
    char         tmp[TS_NAME_MAX];
    const char  *name;
    size_t       len;

    if (fname != NULL || h->hosted.n > 0 || h->called.n > 0) {
        name = ts_str_view(ix->buf, &t->name, tmp, sizeof(tmp), &len);

        if (name == NULL
            || (fname != NULL && flen == len && memcmp(fname, name, len) == 0))
        {
            return 0;
        }

        /*
         * An earlier hosted search found it: its reference needs it
         * deferred, unless the gateway searches, which turns references
         * into text.
         */
        if (ts_names_has(&h->hosted, name, len)) {
            return !gateway;
        }

        /*
         * Called before any reference of history loaded it: a hosted
         * search the client did not carry back found it (search blocks
         * stripped), or history from before.  On the hosted path it stays
         * deferred where its search can be restored before the call
         * (ts_restore_searches), so that tools[], and the prompt cached
         * up to the client's breakpoints, keep their bytes; it is loaded
         * in full otherwise.
         */
        if (ts_names_has(&h->called, name, len)
            && (gateway
                || !ts_defer_restorable(ix->buf + t->name.off + 1,
                                        t->name.len - 2)))
        {
            return 0;
        }
    }

    /* named where a compaction summary stands: found before it */
    return deferrable != 0 && !(deferrable & TS_NAMED);
}


/* the request's model, decoded into tmp when escaped; NULL: none */
static const char *
ts_model(const ts_index_t *ix, char *tmp, size_t *len)
{
    const ts_member_t  *m;

    m = ts_index_top(ix, TS_TOP_MODEL);

    return m ? ts_str_view(ix->buf, &m->val, tmp, TS_NAME_MAX, len) : NULL;
}


static int
ts_model_unsupported(const ts_index_t *ix, const ts_policy_t *p)
{
    char         tmp[TS_NAME_MAX];
    const char  *model;
    size_t       len;

    model = ts_model(ix, tmp, &len);

    return model != NULL && ts_match_any(p->unsupported_models, model, len);
}


static unsigned long
ts_model_window(const ts_index_t *ix, const ts_input_t *in)
{
    char         tmp[TS_NAME_MAX];
    const char  *model;
    size_t       len;

    model = ts_model(ix, tmp, &len);

    return ts_policy_window(in->policy, model, model ? len : 0, in->betas,
                            in->betas_len);
}


/* marks the deferrable and the deferred tools */
static int
ts_mark_tools(ts_request_t *rq, const ts_facts_t *f, const ts_history_t *h,
    int gateway)
{
    const ts_index_t  *ix;
    ts_val_t           forced;
    ts_names_t         named;
    const char        *fname;
    size_t             i, flen;
    int                rc, called, wrapper;
    char               ftmp[TS_NAME_MAX];

    ix = &rq->ix;
    wrapper = gateway && rq->load_wrapper;

    rq->defer = calloc(ix->ntools ? ix->ntools : 1, 1);
    rq->deferrable = calloc(ix->ntools ? ix->ntools : 1, 1);
    if (rq->defer == NULL || rq->deferrable == NULL) {
        return -1;
    }

    rq->defer_rule = f->rule;
    rq->tools_deferrable = f->deferrable;
    rq->defer_chars = f->chars;

    for (i = 0; i < ix->ntools; i++) {
        rq->deferrable[i] = f->flags[i] & TS_FACT_DEFERRABLE;
    }

    ts_names_init(&named);
    rc = ts_history_named(ix, &f->names, &named);
    ts_names_seal(&named);

    forced = ts_forced_tool(ix);
    fname = ts_str_view(ix->buf, &forced, ftmp, sizeof(ftmp), &flen);

    for (i = 0; rc == 0 && i < ix->ntools; i++) {
        if (rq->deferrable[i]
            && ts_names_has_val(&named, ix->buf, &ix->tools[i].name))
        {
            rq->deferrable[i] |= TS_NAMED;
        }

        called = ts_names_has_val(&h->called, ix->buf, &ix->tools[i].name);

        /*
         * With the call wrapper, found and called tools stay deferred as
         * on the hosted path: their calls go through the wrapper, and
         * history's are restored before the first of them
         */
        if (!(rq->loaded && rq->loaded[i] && !wrapper)
            && (f->flags[i] & TS_FACT_ELIGIBLE)
            && ts_tool_deferred(ix, &ix->tools[i], h, fname, flen,
                                gateway && !wrapper, rq->deferrable[i]))
        {
            rq->defer[i] = 1;
            rq->tools_deferred++;

            if (wrapper && rq->deferrable[i] == TS_FACT_DEFERRABLE
                && called)
            {
                rq->deferrable[i] |= TS_CALLED;
            }

        } else if (gateway && rq->deferrable[i] == TS_FACT_DEFERRABLE
                   && called)
        {
            rq->deferrable[i] |= TS_CALLED;
        }
    }

    ts_names_free(&named);

    return rc;
}


int
ts_defer_artifacts_allowed(const ts_index_t *ix, int mode, int upstream,
    const ts_policy_t *p)
{
    return !p->disable_betas && mode != TS_DEFER_OFF
           && !ts_model_unsupported(ix, p)
           && ts_upstream_beta(upstream, p->upstream_tool_reference) != NULL;
}


ts_thread_t
ts_defer_thread(const ts_index_t *ix)
{
    const ts_member_t  *m;
    ts_val_t            type;

    m = ts_index_top(ix, TS_TOP_THREAD);

    if (m == NULL || m->val.kind == TS_NULL) {
        return TS_THREAD_NONE;
    }

    if (ts_object_member(ix->buf, &m->val, "type", &type) == TS_OK
        && ts_str_eq(ix->buf, &type, "create"))
    {
        return TS_THREAD_CREATE;
    }

    return TS_THREAD_HELD;
}


/* DEFERRED_HOSTED, or why the upstream cannot run the search */
static ts_decision_t
ts_hosted_decision(const ts_request_t *rq, const ts_policy_t *p)
{
    if (ts_model_unsupported(&rq->ix, p)) {
        return TS_DECISION_MODEL_UNSUPPORTED;
    }

    if (ts_upstream_beta(rq->upstream, p->upstream_tool_reference) == NULL) {
        return TS_DECISION_UPSTREAM_UNSUPPORTED;
    }

    return TS_DECISION_DEFERRED_HOSTED;
}


static ts_decision_t
ts_defer_decision(ts_request_t *rq, const ts_input_t *in,
    const ts_history_t *h, const ts_facts_t *f)
{
    const ts_policy_t  *p;
    ts_decision_t       deferred;   /* hosted, gateway, or why neither */

    p = in->policy;

    if (ts_client_managed(f, h)) {
        return TS_DECISION_CLIENT_MANAGED;
    }

    if (rq->mode == TS_DEFER_OFF) {
        return TS_DECISION_STANDARD_MODE;
    }

    deferred = ts_hosted_decision(rq, p);

    if (deferred != TS_DECISION_DEFERRED_HOSTED
        && p->search == TS_SEARCH_HOSTED)
    {
        return deferred;
    }

    /*
     * A server-held thread keeps the tools of the request that creates it
     * for every later turn, which sends no tools and nothing that says
     * whether they were deferred: deferred, each of those turns would
     * need the tool-search beta, which the gateway cannot know to add,
     * and gateway search could load no tool (docs/decisions.md).
     */
    if (ts_defer_thread(&rq->ix) == TS_THREAD_CREATE) {
        return TS_DECISION_THREAD_CREATE;
    }

    if (p->search == TS_SEARCH_GATEWAY
        || deferred != TS_DECISION_DEFERRED_HOSTED)
    {
        deferred = TS_DECISION_DEFERRED_GATEWAY;
    }

    if (ts_mark_tools(rq, f, h, deferred == TS_DECISION_DEFERRED_GATEWAY)
        != 0)
    {
        return TS_DECISION_ERROR;
    }

    /*
     * A search loop's later call goes on with what its first call began,
     * also once its searches have loaded every deferred tool.
     */
    if (in->loaded != NULL && deferred == TS_DECISION_DEFERRED_GATEWAY) {
        return deferred;
    }

    /*
     * The rules alone decide, not what searches found: a conversation
     * keeps its form, and with it its prompt cache, as tools load.  With
     * every deferrable tool found, gateway search goes on if its searches
     * are in history.  Every tool may be deferred: the search tool stays
     * loaded, the API's one non-deferred tool.
     */
    if (rq->tools_deferrable == 0
        || (rq->tools_deferred == 0
            && (deferred != TS_DECISION_DEFERRED_GATEWAY
                || rq->history_searches == 0)))
    {
        return TS_DECISION_NOTHING_TO_DEFER;
    }

    if (rq->mode == TS_DEFER_AUTO) {
        rq->threshold_chars = ts_policy_threshold_chars(
                                  ts_model_window(&rq->ix, in), rq->percent);

        if (rq->defer_chars < rq->threshold_chars) {
            return TS_DECISION_BELOW_THRESHOLD;
        }
    }

    return deferred;
}


ts_decision_t
ts_defer_decide(ts_request_t *rq, const ts_input_t *in,
    const ts_history_t *h)
{
    const ts_facts_t  *f;
    ts_facts_t        *made;
    ts_decision_t      d;

    if (in->policy->disable_betas) {
        return TS_DECISION_KILL_SWITCH;
    }

    /* what the rules say of the tools, kept with a recalled array */
    f = ts_facts_get(&rq->ix, in->policy, rq->client, &made);
    if (f == NULL) {
        return TS_DECISION_ERROR;
    }

    d = ts_defer_decision(rq, in, h, f);
    ts_facts_free(made);

    return d;
}


/* the closing brace of a tool object */
static size_t
ts_tool_close(const ts_tool_t *t)
{
    return t->elem.off + t->elem.len - 1;
}


/*
 * A cache breakpoint on a deferred tool would mark a prefix the model
 * never sees: the last one moves to the last loaded tool instead.
 */
static int
ts_move_cache_control(ts_edits_t *e, const ts_index_t *ix,
    const unsigned char *defer)
{
    static const char   key[] = ",\"cache_control\":";
    const ts_member_t  *moved;
    const ts_tool_t    *last;
    size_t              i;

    moved = NULL;
    last = NULL;

    for (i = 0; i < ix->ntools; i++) {
        if (!defer[i]) {
            last = &ix->tools[i];

        } else if (ix->tools[i].cache_control.val.kind != TS_NONE) {
            moved = &ix->tools[i].cache_control;

            if (ts_edit_delete_member(e, ix->buf,
                                      &ix->tools[i].cache_control) != 0)
            {
                return -1;
            }
        }
    }

    if (moved == NULL || last == NULL
        || last->cache_control.val.kind != TS_NONE)
    {
        return 0;
    }

    return ts_edit_put(e, ts_tool_close(last), 0, key,
                       sizeof(key) - 1, ix->buf + moved->val.off,
                       moved->val.len);
}


/*
 * The deferred tool a tool_use block calls, or -1: its name, however the
 * call spells it, is the tool's, which ts_tool_deferred() deferred only
 * when it is written without escapes.
 */
static long
ts_deferred_tool(const ts_index_t *ix, const unsigned char *defer,
    const ts_block_t *b)
{
    char         tmp[TS_NAME_MAX];
    const char  *name;
    size_t       i, len;

    name = ts_str_view(ix->buf, &b->name, tmp, sizeof(tmp), &len);
    if (name == NULL) {
        return -1;
    }

    for (i = 0; i < ix->ntools; i++) {
        if (defer[i] && ix->tools[i].name.len == len + 2
            && memcmp(ix->buf + ix->tools[i].name.off + 1, name, len) == 0)
        {
            return (long) i;
        }
    }

    return -1;
}


void
ts_defer_restored_id(ts_buf_t *t, const char *buf, const ts_val_t *id,
    const char *prefix)
{
    const char  *p;
    size_t       n, i;

    p = buf + id->off + 1;
    n = id->len - 2;

    if (n > 6 && memcmp(p, "toolu_", 6) == 0) {
        p += 6;
        n -= 6;
    }

    ts_buf_str(t, prefix);

    for (i = 0; i < n && i < TS_RESTORE_ID_MAX; i++) {
        ts_buf_add(t, ts_ascii_alnum((unsigned char) p[i]) ? &p[i] : "_", 1);
    }
}


/* one hosted search that found tool, which b calls, put before b */
static int
ts_restore_search(ts_edits_t *e, const ts_index_t *ix, const ts_block_t *b,
    const ts_tool_t *tool, const char *search)
{
    ts_buf_t     t;
    size_t       id, idlen;
    const char  *name;
    int          rc;

    name = ix->buf + tool->name.off;
    ts_buf_init(&t, 0);

    ts_buf_str(&t, "{\"type\":\"server_tool_use\",\"id\":\"");
    id = t.len;
    ts_defer_restored_id(&t, ix->buf, &b->id, "srvtoolu_");
    idlen = t.len - id;
    ts_buf_str(&t, "\",\"name\":\"");
    ts_buf_str(&t, search);
    ts_buf_str(&t, "\",\"input\":{\"query\":");
    ts_buf_add(&t, name, tool->name.len);
    ts_buf_str(&t, "}},{\"type\":\"tool_search_tool_result\","
               "\"tool_use_id\":\"");
    ts_buf_add(&t, t.p + id, idlen);
    ts_buf_str(&t, "\",\"content\":{\"type\":"
               "\"tool_search_tool_search_result\",\"tool_references\":"
               "[{\"type\":\"tool_reference\",\"tool_name\":");
    ts_buf_add(&t, name, tool->name.len);
    ts_buf_str(&t, "}]}},");

    rc = t.failed ? -1 : ts_edit_replace(e, b->elem.off, 0, t.p, t.len);
    ts_buf_free(&t);

    return rc;
}


/* a tool_use of an assistant message, with a string id and name */
static int
ts_is_call(const ts_index_t *ix, const ts_block_t *b)
{
    return b->parent < 0
           && b->name.kind == TS_STRING && b->id.kind == TS_STRING
           && ts_str_eq(ix->buf, &b->type, "tool_use")
           && ts_str_eq(ix->buf, &ix->messages[b->message].role,
                        "assistant");
}



/*
 * "defer_loading": true on each deferred tool, before its closing brace:
 * the same flag in Messages and in Responses' flat functions.
 */
int
ts_defer_flags(ts_request_t *rq)
{
    static const char   flag[] = TS_DEFER_FLAG;
    const ts_index_t   *ix;
    size_t              i;

    ix = &rq->ix;

    for (i = 0; i < ix->ntools; i++) {
        if (rq->defer[i]
            && ts_edit_replace(&rq->edits, ts_tool_close(&ix->tools[i]), 0,
                               flag, sizeof(flag) - 1) != 0)
        {
            return -1;
        }
    }

    return 0;
}


/*
 * A client that drops search blocks (toolsearch_search_blocks strip, or
 * its own choice) sends back the calls of the tools a hosted search
 * found, not the search.  The search is restored before the first call
 * of each deferred tool no reference of history loads: the same bytes
 * on every turn, derived from the call alone, after the prefix the
 * client's cache holds, so that the tool stays deferred and callable.
 */
static int
ts_restore_searches(ts_request_t *rq, const ts_history_t *h,
    const char *search)
{
    const ts_index_t  *ix;
    const ts_block_t  *b;
    unsigned char     *done;
    size_t             i;
    long               tool;
    int                rc;

    ix = &rq->ix;

    if (h->called.n == 0) {
        return 0;
    }

    done = calloc(ix->ntools ? ix->ntools : 1, 1);
    if (done == NULL) {
        return -1;
    }

    rc = 0;

    for (i = 0; rc == 0 && i < ix->nblocks; i++) {
        b = &ix->blocks[i];

        if (!ts_is_call(ix, b)
            || ts_names_has_val(&h->hosted, ix->buf, &b->name)
            || ts_names_has_val(&h->client, ix->buf, &b->name))
        {
            continue;
        }

        tool = ts_deferred_tool(ix, rq->defer, b);

        if (tool >= 0 && !done[tool]) {
            done[tool] = 1;
            rq->searches_restored++;
            rc = ts_restore_search(&rq->edits, ix, b, &ix->tools[tool],
                                   search);
        }
    }

    free(done);

    return rc;
}


int
ts_defer_apply(ts_request_t *rq, const ts_history_t *h, const ts_policy_t *p)
{
    static const char   flag[] = TS_DEFER_FLAG;
    const ts_member_t  *tools;
    const ts_index_t   *ix;
    const char         *hosted;
    ts_edits_t         *e;
    size_t              n;

    ix = &rq->ix;
    e = &rq->edits;
    n = rq->tools_deferred;

    /* a flag per deferred tool, the cache breakpoint, the search tool */
    if (ts_edits_reserve(e, n + 3, n * (sizeof(flag) - 1) + 256) != 0) {
        return -1;
    }

    if (ts_defer_flags(rq) != 0
        || ts_move_cache_control(e, ix, rq->defer) != 0
        || ts_restore_searches(rq, h, ts_hosted_tool_names[p->hosted_search])
           != 0)
    {
        return -1;
    }

    tools = ts_index_top(ix, TS_TOP_TOOLS);
    hosted = ts_hosted_tools[p->hosted_search == TS_HOSTED_REGEX];

    /* deferring needs a tool, so tools[] is not empty */
    return ts_edit_append_item(e, &tools->val,
                               &ix->tools[ix->ntools - 1].elem, hosted,
                               strlen(hosted));
}
