/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

#include "rewrite/ts_defer.h"
#include "rewrite/ts_shape.h"


static const char  *ts_hosted_tools[] = {
    "{\"type\":\"tool_search_tool_bm25_20251119\","
    "\"name\":\"tool_search_tool_bm25\"}",
    "{\"type\":\"tool_search_tool_regex_20251119\","
    "\"name\":\"tool_search_tool_regex\"}"
};

static const char  *ts_hosted_names[] = {
    "tool_search_tool_bm25", "tool_search_tool_regex"
};


/* a server tool: any "type" other than "custom" */
static int
ts_is_server_tool(const char *buf, const ts_tool_t *t)
{
    return t->type.kind == TS_STRING && !ts_str_eq(buf, &t->type, "custom");
}


static int
ts_is_search_tool(const char *buf, const ts_tool_t *t, const ts_policy_t *p)
{
    char         tmp[TS_NAME_MAX];
    const char  *name;
    size_t       len, i;

    if (ts_history_is_hosted_tool(buf, t)) {
        return 1;
    }

    name = ts_str_view(buf, &t->name, tmp, sizeof(tmp), &len);
    if (name == NULL) {
        return 0;
    }

    for (i = 0; i < 2; i++) {
        if (strlen(ts_hosted_names[i]) == len
            && memcmp(ts_hosted_names[i], name, len) == 0)
        {
            return 1;
        }
    }

    /*
     * A tool named like the gateway's own search tool: the request
     * passed a gateway already, or the client has one; a second tool of
     * that name would be refused upstream.
     */
    if (p->search != TS_SEARCH_HOSTED
        && strlen(ts_policy_search_tool(p)) == len
        && memcmp(ts_policy_search_tool(p), name, len) == 0)
    {
        return 1;
    }

    return ts_match_any(p->client_search_tools, name, len);
}


/*
 * The request already uses tool search: a search tool of its own, a
 * deferred tool, or a client-side search result in history.  Hosted
 * results alone are the gateway's own work from an earlier turn.
 */
static int
ts_client_managed(const ts_index_t *ix, const ts_policy_t *p,
    const ts_history_t *h)
{
    size_t  i;

    for (i = 0; i < ix->ntools; i++) {
        if (ix->tools[i].defer_loading.val.kind != TS_NONE
            || ts_is_search_tool(ix->buf, &ix->tools[i], p))
        {
            return 1;
        }
    }

    return h->client.n > 0;
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


/*
 * The core communication tools (docs/spec/deferral.md): the model needs
 * them on its first turn, so no configuration defers them.
 */
static int
ts_is_core_tool(const char *name, size_t len)
{
    static const char  *core[] = { "Agent", "Brief" };
    size_t              i;

    for (i = 0; i < sizeof(core) / sizeof(core[0]); i++) {
        if (strlen(core[i]) == len && memcmp(core[i], name, len) == 0) {
            return 1;
        }
    }

    return 0;
}


/*
 * The location's rules alone, whatever the conversation did: what the
 * gateway's announcement lists and the threshold weighs.  1: deferrable.
 */
static int
ts_tool_deferrable(const ts_index_t *ix, const ts_tool_t *t,
    const ts_policy_t *p, int rule)
{
    char         tmp[TS_NAME_MAX];
    const char  *name;
    size_t       len;

    name = ts_str_view(ix->buf, &t->name, tmp, sizeof(tmp), &len);

    /* what cannot be named cannot be found: keep it loaded */
    if (name == NULL || ts_match_any(p->always_load, name, len)
        || ts_is_server_tool(ix->buf, t))
    {
        return 0;
    }

    return !ts_is_core_tool(name, len)
           && (ts_shape_defers(rule, name, len)
               || ts_match_any(p->defer_tools, name, len));
}


/*
 * The priority chain for one tool: what this request and its history
 * add to the location's rules (deferrable).  1: deferred.
 */
static int
ts_tool_deferred(const ts_index_t *ix, const ts_tool_t *t,
    const ts_policy_t *p, const ts_history_t *h, const ts_val_t *forced,
    int gateway, int deferrable)
{
    char         tmp[TS_NAME_MAX], ftmp[TS_NAME_MAX];
    const char  *name, *fname;
    size_t       len, flen;

    name = ts_str_view(ix->buf, &t->name, tmp, sizeof(tmp), &len);

    if (name == NULL || ts_match_any(p->always_load, name, len)
        || ts_is_server_tool(ix->buf, t))
    {
        return 0;
    }

    fname = ts_str_view(ix->buf, forced, ftmp, sizeof(ftmp), &flen);
    if (fname != NULL && flen == len && memcmp(fname, name, len) == 0) {
        return 0;
    }

    /*
     * An earlier hosted search found it: its reference needs it deferred,
     * unless the gateway searches, which turns references into text.
     */
    if (ts_names_has(&h->hosted, name, len)) {
        return !gateway;
    }

    /*
     * called before any search loaded it (e.g. history from before), or
     * named where a compaction summary stands: found before it
     */
    if (ts_names_has(&h->called, name, len) || (deferrable & TS_NAMED)) {
        return 0;
    }

    return deferrable != 0;
}


static size_t
ts_tool_chars(const ts_tool_t *t)
{
    size_t  n;

    n = t->name.len - 2 + t->input_schema.len;

    if (t->description.kind == TS_STRING) {
        n += t->description.len - 2;
    }

    return n;
}


/*
 * The strongest MCP shape among the names the chain may defer; compound
 * names count only when they weigh enough to be worth a search.
 */
static int
ts_defer_rule(const ts_index_t *ix, const ts_policy_t *p)
{
    char         tmp[TS_NAME_MAX];
    const char  *name;
    size_t       i, len, compound, n;
    int          rule, shape;

    rule = TS_SHAPE_NONE;
    compound = 0;
    n = 0;

    for (i = 0; i < ix->ntools; i++) {
        name = ts_str_view(ix->buf, &ix->tools[i].name, tmp, sizeof(tmp),
                           &len);

        if (name == NULL || ts_is_server_tool(ix->buf, &ix->tools[i])
            || ts_match_any(p->always_load, name, len))
        {
            continue;
        }

        shape = ts_shape_of(name, len);

        if (shape == TS_SHAPE_COMPOUND) {
            compound += ts_tool_chars(&ix->tools[i]);
            n++;
        }

        if (shape > rule) {
            rule = shape;
        }
    }

    if (rule == TS_SHAPE_COMPOUND
        && (n < TS_SHAPE_COMPOUND_MIN_TOOLS
            || compound < TS_SHAPE_COMPOUND_MIN_CHARS))
    {
        return TS_SHAPE_NONE;
    }

    return rule;
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


/* marks the deferrable tools, sums their size, collects their names */
static int
ts_mark_deferrable(ts_request_t *rq, const ts_policy_t *p,
    ts_names_t *names)
{
    const ts_index_t  *ix;
    size_t             i;

    ix = &rq->ix;

    for (i = 0; i < ix->ntools; i++) {
        rq->deferrable[i] = (unsigned char) ts_tool_deferrable(ix,
                                                &ix->tools[i], p,
                                                rq->defer_rule);

        if (rq->deferrable[i]) {
            rq->tools_deferrable++;
            rq->defer_chars += ts_tool_chars(&ix->tools[i]);

            if (ts_names_add(names, ix->buf, &ix->tools[i].name) != 0) {
                return -1;
            }
        }
    }

    ts_names_seal(names);

    return 0;
}


/* marks the deferrable and the deferred tools */
static int
ts_mark_tools(ts_request_t *rq, const ts_policy_t *p, const ts_history_t *h,
    int gateway)
{
    const ts_index_t  *ix;
    ts_val_t           forced;
    ts_names_t         deferrable, named;
    size_t             i;
    int                rc;

    ix = &rq->ix;

    rq->defer = calloc(ix->ntools ? ix->ntools : 1, 1);
    rq->deferrable = calloc(ix->ntools ? ix->ntools : 1, 1);
    if (rq->defer == NULL || rq->deferrable == NULL) {
        return -1;
    }

    ts_names_init(&deferrable);
    ts_names_init(&named);
    rq->defer_rule = ts_defer_rule(ix, p);

    rc = (ts_mark_deferrable(rq, p, &deferrable) == 0
          && ts_history_named(ix, &deferrable, &named) == 0) ? 0 : -1;

    ts_names_seal(&named);
    forced = ts_forced_tool(ix);

    for (i = 0; rc == 0 && i < ix->ntools; i++) {
        if (rq->deferrable[i]
            && ts_names_has_val(&named, ix->buf, &ix->tools[i].name))
        {
            rq->deferrable[i] |= TS_NAMED;
        }

        if (!(rq->loaded && rq->loaded[i])
            && ts_tool_deferred(ix, &ix->tools[i], p, h, &forced, gateway,
                                rq->deferrable[i]))
        {
            rq->defer[i] = 1;
            rq->tools_deferred++;
        }
    }

    ts_names_free(&named);
    ts_names_free(&deferrable);

    return rc;
}


int
ts_defer_artifacts_allowed(const ts_request_t *rq, const ts_input_t *in)
{
    const ts_policy_t  *p;

    p = in->policy;

    return !p->disable_betas && rq->mode != TS_DEFER_OFF
           && !ts_model_unsupported(&rq->ix, p)
           && ts_upstream_beta(rq->upstream, p->upstream_tool_reference)
              != NULL;
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


ts_decision_t
ts_defer_decide(ts_request_t *rq, const ts_input_t *in,
    const ts_history_t *h)
{
    const ts_policy_t  *p;
    ts_decision_t       hosted;

    p = in->policy;

    if (p->disable_betas) {
        return TS_DECISION_KILL_SWITCH;
    }

    if (ts_client_managed(&rq->ix, p, h)) {
        return TS_DECISION_CLIENT_MANAGED;
    }

    if (rq->mode == TS_DEFER_OFF) {
        return TS_DECISION_STANDARD_MODE;
    }

    hosted = ts_hosted_decision(rq, p);

    if (hosted != TS_DECISION_DEFERRED_HOSTED
        && p->search == TS_SEARCH_HOSTED)
    {
        return hosted;
    }

    if (p->search == TS_SEARCH_GATEWAY
        || hosted != TS_DECISION_DEFERRED_HOSTED)
    {
        hosted = TS_DECISION_DEFERRED_GATEWAY;
    }

    if (ts_mark_tools(rq, p, h, hosted == TS_DECISION_DEFERRED_GATEWAY)
        != 0)
    {
        return TS_DECISION_ERROR;
    }

    /*
     * A search loop's later call goes on with what its first call began,
     * also once its searches have loaded every deferred tool.
     */
    if (in->loaded != NULL && hosted == TS_DECISION_DEFERRED_GATEWAY) {
        return hosted;
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
            && (hosted != TS_DECISION_DEFERRED_GATEWAY
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

    return hosted;
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
ts_move_cache_control(ts_request_t *rq)
{
    static const char   key[] = ",\"cache_control\":";
    const ts_index_t   *ix;
    const ts_member_t  *moved;
    const ts_tool_t    *last;
    size_t              i;

    ix = &rq->ix;
    moved = NULL;
    last = NULL;

    for (i = 0; i < ix->ntools; i++) {
        if (!rq->defer[i]) {
            last = &ix->tools[i];

        } else if (ix->tools[i].cache_control.val.kind != TS_NONE) {
            moved = &ix->tools[i].cache_control;

            if (ts_edit_delete_member(&rq->edits, ix->buf,
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

    return ts_edit_put(&rq->edits, ts_tool_close(last), 0, key,
                       sizeof(key) - 1, ix->buf + moved->val.off,
                       moved->val.len);
}


int
ts_defer_apply(ts_request_t *rq, const ts_input_t *in)
{
    static const char   flag[] = TS_DEFER_FLAG;
    const ts_index_t   *ix;
    const ts_member_t  *tools;
    const char         *hosted;
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

    if (ts_move_cache_control(rq) != 0) {
        return -1;
    }

    tools = ts_index_top(ix, TS_TOP_TOOLS);
    hosted = ts_hosted_tools[in->policy->hosted_search == TS_HOSTED_REGEX];

    /* deferring needs a tool, so tools[] is not empty */
    return ts_edit_append_item(&rq->edits, &tools->val,
                               &ix->tools[ix->ntools - 1].elem, hosted,
                               strlen(hosted));
}
