/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Responses, request side.  The body is read into the shared index: a
 * function tool's name, description and parameters, a namespace's
 * members one by one under their qualified names (mcp__memory +
 * create_entities: mcp__memory__create_entities), the input's items as
 * messages.  Hosted tools and tool_search keep no name: the rules never
 * defer them.  What the
 * request may carry decides the path (docs/gateway-search.md,
 * "Responses"): its own search passes (client_managed); state the
 * gateway's exchange could not keep whole passes (server_state); an
 * openai upstream
 * with a model that has hosted tool_search gets defer_loading and
 * {"type":"tool_search"}; any other upstream gets the gateway's search
 * as Chat Completions does, in this format's shapes.
 */

#include <stdlib.h>
#include <string.h>

#include "scan/ts_scan.h"
#include "scan/ts_str.h"
#include "rewrite/ts_defer.h"
#include "rewrite/ts_facts.h"
#include "rewrite/ts_format.h"
#include "rewrite/ts_gateway.h"
#include "rewrite/ts_wrapper.h"
#include "responses/ts_responses.h"


/* the top-level members read */
enum {
    TS_RS_MODEL = 0,
    TS_RS_INPUT,
    TS_RS_TOOLS,
    TS_RS_STREAM,
    TS_RS_TOOL_CHOICE,
    TS_RS_INSTRUCTIONS,
    TS_RS_PREVIOUS,
    TS_RS_CONVERSATION,
    TS_RS_STORE,
    TS_RS_PARALLEL,
    TS_RS_KEYS
};

static const char *const  ts_rs_keys[TS_RS_KEYS] = {
    "model", "input", "tools", "stream", "tool_choice", "instructions",
    "previous_response_id", "conversation", "store", "parallel_tool_calls"
};

static const char  ts_rs_hosted_tool[] = "{\"type\":\"tool_search\"}";
static const char  ts_rs_one_call[] = "\"parallel_tool_calls\":false,";


/* what the request's tools and input items say of its state */
typedef struct {
    unsigned    managed:1;      /* it searches on its own */
    unsigned    hosted:1;       /* hosted search items in its input */
    unsigned    refs:1;         /* item_reference in its input */
    unsigned    conversation:1; /* it adds to a conversation the
                                   upstream holds */
    unsigned    chained:1;      /* previous_response_id, conversation */
} ts_rs_state_t;

/* the API's function names: [a-zA-Z0-9_-], at most 128 */
#define TS_RS_NAME_MAX  128

static const char  ts_rs_search_call[] =
    "{\"type\":\"tool_search_call\",\"execution\":\"server\","
    "\"call_id\":null,\"status\":\"completed\",\"arguments\":{\"paths\":[";
static const char  ts_rs_search_output[] =
    "]}},{\"type\":\"tool_search_output\",\"execution\":\"server\","
    "\"call_id\":null,\"status\":\"completed\",\"tools\":[";


static const ts_val_t *
ts_rs_member(const ts_index_t *ix, int key)
{
    return &ix->members[key].val;
}


/* a member a value has that is there and not null */
static int
ts_rs_has(const char *buf, const ts_val_t *obj, const char *key,
    ts_val_t *v)
{
    return obj->kind == TS_OBJECT
           && ts_object_member(buf, obj, key, v) == TS_OK
           && v->kind != TS_NONE && v->kind != TS_NULL;
}


/*
 * The type of input item i, when it has one that is not null: read with
 * the items (ts_format_messages), not looked up again in items that may
 * hold some KB of text.
 */
static int
ts_rs_item_type(const ts_index_t *ix, size_t i, ts_val_t *type)
{
    *type = ix->messages[i].type;

    return type->kind != TS_NONE && type->kind != TS_NULL;
}


/* the members of a tool read, in one pass with the array's items */
enum {
    TS_RS_T_TYPE = 0,
    TS_RS_T_NAME,
    TS_RS_T_DESCRIPTION,
    TS_RS_T_PARAMETERS,
    TS_RS_T_DEFER,
    TS_RS_T_TOOLS,
    TS_RS_T_KEYS
};

static const char *const  ts_rs_tool_keys[TS_RS_T_KEYS] = {
    "type", "name", "description", "parameters", "defer_loading", "tools"
};


/*
 * A function tool, {"type":"function","name","description",
 * "parameters",…}, from its members v.  Other tools keep no name.
 */
static void
ts_rs_tool(const char *buf, const ts_val_t *item, const ts_val_t *v,
    ts_tool_t *t)
{
    memset(t, 0, sizeof(ts_tool_t));
    t->elem = *item;

    if (item->kind != TS_OBJECT) {
        return;
    }

    t->defer_loading.val = v[TS_RS_T_DEFER];

    /* a typed tool is a server tool to the rules: a function is not */
    if (!ts_str_eq(buf, &v[TS_RS_T_TYPE], "function")
        || v[TS_RS_T_NAME].kind != TS_STRING)
    {
        t->type = v[TS_RS_T_TYPE];
        return;
    }

    t->name = v[TS_RS_T_NAME];
    t->description = v[TS_RS_T_DESCRIPTION];
    t->input_schema = v[TS_RS_T_PARAMETERS];
}


/*
 * A namespace ({"type":"namespace","name","tools":[…]}) from its members
 * v: 1 with its name in ns (kind NONE when it is no string); 0 for any
 * other tool, and for a namespace without a tools array, which stands
 * for itself.
 */
static int
ts_rs_is_group(const char *buf, const ts_val_t *item, const ts_val_t *v,
    ts_val_t *ns)
{
    if (item->kind != TS_OBJECT
        || !ts_str_eq(buf, &v[TS_RS_T_TYPE], "namespace")
        || v[TS_RS_T_TOOLS].kind != TS_ARRAY)
    {
        return 0;
    }

    *ns = v[TS_RS_T_NAME];

    if (ns->kind != TS_STRING) {
        ns->kind = TS_NONE;
    }

    return 1;
}


/* a namespace's members (ts_rs_is_group), which the caller frees */
static int
ts_rs_group(const char *buf, const ts_val_t *item, ts_val_t *ns,
    ts_val_t **members, size_t *n)
{
    ts_val_t  v[TS_RS_T_KEYS];

    return item->kind == TS_OBJECT
           && ts_object_members(buf, item, ts_rs_tool_keys, TS_RS_T_KEYS, v)
              == TS_OK
           && ts_rs_is_group(buf, item, v, ns)
           && ts_container_items(buf, &v[TS_RS_T_TOOLS], members, n)
              == TS_OK;
}


/* one more tool in the index, with the namespace it is a member of */
static ts_tool_t *
ts_rs_tool_add(ts_index_t *ix, ts_val_t **nsv, size_t *cap,
    const ts_val_t *ns)
{
    ts_tool_t  *t;
    ts_val_t   *v;
    size_t      n;

    if (ix->ntools == *cap) {
        n = *cap * 2 + 8;
        t = realloc(ix->tools, n * sizeof(ts_tool_t));
        v = t ? realloc(*nsv, n * sizeof(ts_val_t)) : NULL;

        if (t != NULL) {
            ix->tools = t;
        }

        if (v == NULL) {
            return NULL;
        }

        *nsv = v;
        *cap = n;
    }

    (*nsv)[ix->ntools].kind = TS_NONE;

    if (ns != NULL) {
        (*nsv)[ix->ntools] = *ns;
    }

    return &ix->tools[ix->ntools++];
}


/*
 * The items of a tools array, each a tool of the index, with the
 * namespace ns (NULL: none) in nsv; their own members read in the same
 * pass.  *cap: the index's room.
 */
static ts_status_t
ts_rs_tools_of(ts_index_t *ix, const ts_val_t *arr, const ts_val_t *ns,
    ts_val_t **nsv, size_t *cap, size_t *groups)
{
    ts_val_t     *items, *vals, *v, gns;
    ts_tool_t    *t;
    ts_status_t   st;
    size_t        i, n;

    if (ts_items_members(ix->buf, arr, ts_rs_tool_keys, TS_RS_T_KEYS, &items,
                         &vals, &n)
        != TS_OK)
    {
        return TS_ERR_NOMEM;
    }

    st = TS_OK;

    for (i = 0; st == TS_OK && i < n; i++) {
        v = vals + i * TS_RS_T_KEYS;

        /* a namespace's members one by one; namespaces do not nest */
        if (ns == NULL && ts_rs_is_group(ix->buf, &items[i], v, &gns)) {
            (*groups)++;
            st = ts_rs_tools_of(ix, &v[TS_RS_T_TOOLS], &gns, nsv, cap,
                                groups);
            continue;
        }

        t = ts_rs_tool_add(ix, nsv, cap, ns);

        if (t == NULL) {
            st = TS_ERR_NOMEM;
            break;
        }

        ts_rs_tool(ix->buf, &items[i], v, t);
    }

    free(items);
    free(vals);

    return st;
}


/*
 * The tools: a namespace's members one by one (Codex's mcp__<server>
 * groups), each with its namespace in nsv, any other tool as itself;
 * the namespaces counted in groups.  A member's name is qualified by
 * its namespace once the request may be deferred (ts_rs_qualify).
 */
static ts_status_t
ts_rs_tools(ts_index_t *ix, const ts_val_t *tools, ts_val_t **nsv,
    size_t *groups)
{
    size_t  cap;

    cap = 0;

    return ts_rs_tools_of(ix, tools, NULL, nsv, &cap, groups);
}


/*
 * A namespace member's name in the index: its namespace's, "__", its own
 * (mcp__memory + create_entities: mcp__memory__create_entities), the
 * name the rules, the search and the announcement know it by.  The
 * names go after the end of a copy of the body, which the index reads
 * from then on; with namespaces, the copy is made even without a name
 * to add, so that rq->qualified says they are there.  A member whose
 * names have escapes keeps no name: it stays loaded.
 */
static int
ts_rs_qualify(ts_request_t *rq, const ts_val_t *nsv, size_t groups)
{
    ts_index_t  *ix;
    ts_tool_t   *t;
    char        *buf, *p;
    size_t       i, extra;

    ix = &rq->ix;
    extra = 0;

    for (i = 0; nsv != NULL && i < ix->ntools; i++) {
        t = &ix->tools[i];

        if (nsv[i].kind == TS_NONE) {
            continue;
        }

        if (nsv[i].esc || t->name.kind != TS_STRING || t->name.esc) {
            t->name.kind = TS_NONE;
            continue;
        }

        extra += nsv[i].len + t->name.len;
    }

    if (groups == 0) {
        return 0;
    }

    buf = malloc(ix->len + extra ? ix->len + extra : 1);
    if (buf == NULL) {
        return -1;
    }

    memcpy(buf, ix->buf, ix->len);
    p = buf + ix->len;

    for (i = 0; i < ix->ntools; i++) {
        t = &ix->tools[i];

        if (nsv[i].kind == TS_NONE || t->name.kind != TS_STRING) {
            continue;
        }

        /* "ns + __ + name" */
        memcpy(p, ix->buf + nsv[i].off, nsv[i].len - 1);
        memcpy(p + nsv[i].len - 1, "__", 2);
        memcpy(p + nsv[i].len + 1, ix->buf + t->name.off + 1,
               t->name.len - 1);

        t->name.off = p - buf;
        t->name.len = nsv[i].len + t->name.len;
        p += t->name.len;
    }

    rq->qualified = buf;
    ix->buf = buf;

    return 0;
}


/*
 * The tools of an array the worker's memory may keep and recall
 * (toolsearch_recall): one without namespaces.  An array with
 * namespaces is TS_ERR_TYPE, never kept: its members' names are
 * qualified per request, past the body's end (ts_rs_qualify), and the
 * caller reads it again itself.
 */
static ts_status_t
ts_rs_tools_kept(ts_index_t *ix, const ts_val_t *tools)
{
    ts_val_t     *nsv;
    ts_status_t   st;
    size_t        groups;

    nsv = NULL;
    groups = 0;
    st = ts_rs_tools(ix, tools, &nsv, &groups);
    free(nsv);

    if (st == TS_OK && groups > 0) {
        free(ix->tools);
        ix->tools = NULL;
        ix->ntools = 0;
        st = TS_ERR_TYPE;
    }

    return st;
}


/*
 * The body read into the index: an object with an input (a string or
 * an array of items), the namespace of each tool in nsv (the caller
 * frees it), the namespaces counted in groups.  What is not of this
 * shape passes untouched.  The tools array may come from the worker's
 * memory (toolsearch_recall), when it has no namespace.
 */
static ts_decision_t
ts_rs_index(ts_request_t *rq, const ts_input_t *in, const char *body,
    size_t len, ts_val_t **nsv, size_t *groups)
{
    ts_member_reader_t   rd;
    ts_format_recall_t   rc;
    ts_index_mem_t      *mem;
    ts_index_t          *ix;
    ts_val_t             top, v[TS_RS_KEYS];
    ts_decision_t        d;
    ts_status_t          st;
    size_t               i;

    ix = &rq->ix;
    mem = in ? in->index_mem : NULL;
    ts_format_recall_init(&rc, &rd, TS_RS_TOOLS, mem,
                          mem ? &mem->responses_tools : NULL);
    d = ts_format_object_read(ix, body, len, ts_rs_keys, TS_RS_KEYS, &top,
                              v, rc.memory ? &rd : NULL);

    if (d != TS_DECISION_NONE) {
        return d;
    }

    if (v[TS_RS_INPUT].kind != TS_ARRAY && v[TS_RS_INPUT].kind != TS_STRING) {
        return TS_DECISION_PASSTHROUGH;
    }

    if ((v[TS_RS_TOOLS].kind != TS_ARRAY && v[TS_RS_TOOLS].kind != TS_NONE)
        || (v[TS_RS_MODEL].kind != TS_STRING
            && v[TS_RS_MODEL].kind != TS_NONE)
        || (v[TS_RS_INSTRUCTIONS].kind != TS_STRING
            && v[TS_RS_INSTRUCTIONS].kind != TS_NONE
            && v[TS_RS_INSTRUCTIONS].kind != TS_NULL))
    {
        return TS_DECISION_WRONG_TYPE;
    }

    /* one more member: the top object, where instructions may go */
    ix->members = calloc(TS_RS_KEYS + 1, sizeof(ts_member_t));
    if (ix->members == NULL) {
        return TS_DECISION_ERROR;
    }

    for (i = 0; i < TS_RS_KEYS; i++) {
        ix->members[i].val = v[i];
    }

    ix->members[TS_RS_KEYS].val = top;
    ix->nmembers = TS_RS_KEYS + 1;

    ix->top[TS_TOP_MODEL] = v[TS_RS_MODEL].kind != TS_NONE ? TS_RS_MODEL : -1;
    ix->top[TS_TOP_MESSAGES] = v[TS_RS_INPUT].kind == TS_ARRAY ? TS_RS_INPUT
                                                               : -1;
    ix->top[TS_TOP_TOOLS] = v[TS_RS_TOOLS].kind != TS_NONE ? TS_RS_TOOLS : -1;
    ix->top[TS_TOP_STREAM] = v[TS_RS_STREAM].kind != TS_NONE ? TS_RS_STREAM
                                                             : -1;

    if ((v[TS_RS_TOOLS].kind == TS_ARRAY
         && (st = ts_format_tools_of(ix, &rc, &v[TS_RS_TOOLS],
                                     ts_rs_tools_kept)) != TS_OK
         && (st != TS_ERR_TYPE
             || ts_rs_tools(ix, &v[TS_RS_TOOLS], nsv, groups) != TS_OK))
        || (v[TS_RS_INPUT].kind == TS_ARRAY
            && ts_format_messages(ix, &v[TS_RS_INPUT]) != TS_OK))
    {
        return TS_DECISION_ERROR;
    }

    return ix->ntools ? TS_DECISION_NONE : TS_DECISION_NOTHING_TO_DEFER;
}


/*
 * 1 when a tool searches on its own: a tool_search tool, or a function
 * (a namespace member too) marked defer_loading
 */
static int
ts_rs_tool_managed(const char *buf, const ts_tool_t *t)
{
    return t->defer_loading.val.kind != TS_NONE
           || ts_str_eq(buf, &t->type, "tool_search");
}


static void
ts_rs_state(const ts_request_t *rq, ts_rs_state_t *s)
{
    const ts_index_t  *ix;
    const ts_val_t    *conv;
    ts_val_t           type, exec;
    size_t             i;

    ix = &rq->ix;
    memset(s, 0, sizeof(ts_rs_state_t));

    for (i = 0; i < ix->ntools; i++) {
        s->managed |= ts_rs_tool_managed(ix->buf, &ix->tools[i]);
    }

    for (i = 0; i < ix->nmessages; i++) {
        if (!ts_rs_item_type(ix, i, &type)) {
            continue;
        }

        if (ts_str_eq(ix->buf, &type, "item_reference")) {
            s->refs = 1;

        } else if (ts_str_eq(ix->buf, &type, "tool_search_call")
                   || ts_str_eq(ix->buf, &type, "tool_search_output"))
        {
            /* the client runs its searches, or the upstream ran them */
            if (ts_rs_has(ix->buf, &ix->messages[i].elem, "execution", &exec)
                && ts_str_eq(ix->buf, &exec, "client"))
            {
                s->managed = 1;

            } else {
                s->hosted = 1;
            }
        }
    }

    conv = ts_rs_member(ix, TS_RS_CONVERSATION);
    s->conversation = conv->kind != TS_NONE && conv->kind != TS_NULL;
    s->chained = s->conversation
                 || ts_rs_member(ix, TS_RS_PREVIOUS)->kind == TS_STRING;
}


int
ts_responses_stored(const ts_request_t *rq)
{
    /* store defaults to true */
    return rq->ix.members != NULL
           && ts_rs_member(&rq->ix, TS_RS_STORE)->kind != TS_FALSE;
}


int
ts_responses_hosted_model(const char *model, size_t len)
{
    const char  *p, *end, *slash;
    long         major, minor;

    end = model + len;
    slash = NULL;

    /* a router's prefix, as in openai/gpt-5.4 */
    for (p = model; p < end; p++) {
        if (*p == '/') {
            slash = p;
        }
    }

    p = slash ? slash + 1 : model;

    if (end - p < 5 || memcmp(p, "gpt-", 4) != 0) {
        return 0;
    }

    for (p += 4, major = 0; p < end && *p >= '0' && *p <= '9'; p++) {
        major = major * 10 + (*p - '0');

        if (major > 1000) {
            return 0;
        }
    }

    if (major != 5) {
        return major > 5;
    }

    if (p == end || *p != '.') {
        return 0;
    }

    for (p++, minor = -1; p < end && *p >= '0' && *p <= '9'; p++) {
        minor = (minor < 0 ? 0 : minor * 10) + (*p - '0');

        if (minor > 1000) {
            return 1;
        }
    }

    return minor >= 4;
}


/* 1 when the upstream runs the model's searches (hosted tool_search) */
static int
ts_rs_hosted(const ts_request_t *rq, const ts_input_t *in)
{
    const ts_val_t  *model;
    const char      *s;
    char             tmp[TS_NAME_MAX];
    size_t           len;

    model = ts_rs_member(&rq->ix, TS_RS_MODEL);
    s = ts_str_view(rq->ix.buf, model, tmp, sizeof(tmp), &len);

    return in->upstream == TS_UPSTREAM_OPENAI && s != NULL
           && ts_responses_hosted_model(s, len);
}


/*
 * The name an object has in the index: its "name", qualified by the
 * namespace ns when there is one (as ts_rs_qualify writes it), in tmp
 * when it is not in buf as it stands; NULL when it has none, or when it
 * is longer than cap.
 */
static const char *
ts_rs_name(const char *buf, const ts_val_t *obj, const ts_val_t *ns,
    char *tmp, size_t cap, size_t *len)
{
    ts_val_t     name;
    const char  *s, *n;
    char         stmp[TS_NAME_MAX], ntmp[TS_NAME_MAX];
    size_t       slen, nlen;

    if (!ts_rs_has(buf, obj, "name", &name)) {
        return NULL;
    }

    if (ns == NULL || ns->kind == TS_NONE) {
        return ts_str_view(buf, &name, tmp, cap, len);
    }

    s = ts_str_view(buf, ns, stmp, sizeof(stmp), &slen);
    n = ts_str_view(buf, &name, ntmp, sizeof(ntmp), &nlen);

    if (s == NULL || n == NULL || slen + 2 + nlen > cap) {
        return NULL;
    }

    memcpy(tmp, s, slen);
    memcpy(tmp + slen, "__", 2);
    memcpy(tmp + slen + 2, n, nlen);
    *len = slen + 2 + nlen;

    return tmp;
}


/* 1 when a definition of a tool_search_output declares the name */
static int
ts_rs_declares(const char *buf, const ts_val_t *def, const char *name,
    size_t len)
{
    ts_val_t     ns, *members;
    const char  *s;
    char         tmp[2 * TS_NAME_MAX];
    size_t       j, m, slen;
    int          found;

    if (!ts_rs_group(buf, def, &ns, &members, &m)) {
        s = ts_rs_name(buf, def, NULL, tmp, sizeof(tmp), &slen);

        return s != NULL && slen == len && memcmp(s, name, len) == 0;
    }

    found = 0;

    for (j = 0; ns.kind != TS_NONE && j < m; j++) {
        s = ts_rs_name(buf, &members[j], &ns, tmp, sizeof(tmp), &slen);
        found |= s != NULL && slen == len && memcmp(s, name, len) == 0;
    }

    free(members);

    return found;
}


/* 1 when a hosted tool_search_output of the input declares the name */
static int
ts_rs_found_by_hosted(const ts_index_t *ix, const char *name, size_t len)
{
    ts_val_t   type, tools, *items;
    size_t     i, j, n;
    int        found;

    found = 0;

    for (i = 0; !found && i < ix->nmessages; i++) {
        if (!ts_rs_item_type(ix, i, &type)
            || !ts_str_eq(ix->buf, &type, "tool_search_output")
            || !ts_rs_has(ix->buf, &ix->messages[i].elem, "tools", &tools)
            || ts_container_items(ix->buf, &tools, &items, &n) != TS_OK)
        {
            continue;
        }

        for (j = 0; j < n; j++) {
            found |= ts_rs_declares(ix->buf, &items[j], name, len);
        }

        free(items);
    }

    return found;
}


/*
 * 1 when the index's name t is name, or (member) a namespace's member
 * of that bare name: it ends with "__" and name
 */
static int
ts_rs_same(const char *t, size_t tlen, const char *name, size_t len,
    int member)
{
    if (tlen == len) {
        return memcmp(t, name, len) == 0;
    }

    return member && tlen > len + 2 && memcmp(t + tlen - len, name, len) == 0
           && memcmp(t + tlen - len - 2, "__", 2) == 0;
}


/*
 * Marks loaded the function an object names ({"name": …}, a call's
 * "namespace" qualifying it), ranked as history's calls when call is
 * set; 1 when the request has it.  A call a hosted search's output
 * declares stays deferred: that output loads it.
 * tool_choice names a function without its namespace: each function of
 * that bare name stays loaded.
 */
static int
ts_rs_load_named(ts_request_t *rq, const ts_val_t *obj, int call)
{
    const ts_index_t  *ix;
    ts_val_t           ns;
    const char        *s, *t;
    char               tmp[2 * TS_NAME_MAX], ttmp[TS_NAME_MAX];
    size_t             i, len, tlen;
    int                found;

    ix = &rq->ix;
    found = 0;

    if (!ts_rs_has(ix->buf, obj, "namespace", &ns)) {
        ns.kind = TS_NONE;
    }

    s = ts_rs_name(ix->buf, obj, &ns, tmp, sizeof(tmp), &len);

    if (s == NULL || (call && ts_rs_found_by_hosted(ix, s, len))) {
        return 0;
    }

    for (i = 0; i < ix->ntools; i++) {
        t = ts_str_view(ix->buf, &ix->tools[i].name, ttmp, sizeof(ttmp),
                        &tlen);

        if (t != NULL && ts_rs_same(t, tlen, s, len, !call)) {
            if (call) {
                ts_request_called(rq, i);

            } else {
                rq->loaded[i] = 1;
            }

            found = 1;
        }
    }

    return found;
}


/*
 * The tool a function_call item calls when its hosted search can be
 * restored (ts_rs_restore_searches): a flat function of tools[] (the
 * call has no namespace) whose name is of the API's characters, written
 * without escapes, and that no hosted tool_search_output of the input
 * declares; -1 otherwise.
 */
static long
ts_rs_restorable(const ts_index_t *ix, const ts_val_t *call)
{
    ts_val_t     name, ns;
    const char  *s, *t;
    char         tmp[TS_NAME_MAX];
    size_t       i, len, tlen;

    if (ts_rs_has(ix->buf, call, "namespace", &ns)
        || !ts_rs_has(ix->buf, call, "name", &name)
        || name.kind != TS_STRING || name.esc)
    {
        return -1;
    }

    s = ix->buf + name.off + 1;
    len = name.len - 2;

    if (len == 0 || len > TS_RS_NAME_MAX
        || ts_rs_found_by_hosted(ix, s, len))
    {
        return -1;
    }

    for (i = 0; i < len; i++) {
        if (!(s[i] >= 'a' && s[i] <= 'z') && !(s[i] >= 'A' && s[i] <= 'Z')
            && !(s[i] >= '0' && s[i] <= '9') && s[i] != '_' && s[i] != '-')
        {
            return -1;
        }
    }

    /* not a namespace's member: its name lies past the body's end */
    for (i = 0; i < ix->ntools; i++) {
        t = ts_str_view(ix->buf, &ix->tools[i].name, tmp, sizeof(tmp),
                        &tlen);

        if (t != NULL && tlen == len && memcmp(t, s, len) == 0
            && ix->tools[i].name.off < ix->len)
        {
            return (long) i;
        }
    }

    return -1;
}


/*
 * Stateless turns: a function the input calls (a function_call item)
 * stays loaded, as does the one tool_choice names; such calls count as
 * the searches of history, so that a conversation keeps its form.  With
 * restore (hosted search), a call whose search can be restored marks
 * its tool there instead, and the tool stays deferred.
 */
static int
ts_rs_loaded(ts_request_t *rq, const ts_input_t *in, int all,
    unsigned char *restore)
{
    const ts_index_t  *ix;
    const ts_val_t    *choice;
    ts_val_t           type;
    size_t             i;
    long               t;

    ix = &rq->ix;
    rq->loaded = calloc(ix->ntools ? ix->ntools : 1, 1);
    rq->called = calloc(ix->ntools ? ix->ntools : 1, sizeof(uint32_t));

    if (rq->loaded == NULL || rq->called == NULL) {
        return -1;
    }

    for (i = 0; i < ix->ntools; i++) {
        rq->loaded[i] = all || (in->loaded != NULL && in->loaded[i]);
    }

    for (i = 0; i < ix->nmessages; i++) {
        if (!ts_rs_item_type(ix, i, &type)
            || !ts_str_eq(ix->buf, &type, "function_call"))
        {
            continue;
        }

        t = restore ? ts_rs_restorable(ix, &ix->messages[i].elem) : -1;

        if (t >= 0) {
            restore[t] = 1;
            rq->history_searches++;

        } else {
            rq->history_searches += ts_rs_load_named(rq,
                                                     &ix->messages[i].elem, 1);
        }
    }

    choice = ts_rs_member(ix, TS_RS_TOOL_CHOICE);

    if (ts_rs_has(ix->buf, choice, "type", &type)
        && ts_str_eq(ix->buf, &type, "function"))
    {
        (void) ts_rs_load_named(rq, choice, 0);
    }

    return 0;
}


/*
 * Hosted search, and a client that drops the search's items (opencode,
 * cline, continue): the input's only trace of a search is the call of
 * the function it found.  Loading that function in its place in tools[]
 * would change tools[] on the turn after each discovery, and with it the
 * whole prompt cache.  The function stays deferred, and the search is
 * restored before its first call as the API gave it: a tool_search_call
 * and a tool_search_output with the client's definition, derived from
 * the call alone, so that every later turn sends the same bytes after
 * the prefix the cache holds.  The API takes such items back in the
 * input (clients that keep them send them back); a call that cannot be
 * restored loads its function as before (ts_rs_restorable).
 */
static int
ts_rs_restore_searches(ts_request_t *rq, const unsigned char *restore)
{
    const ts_index_t  *ix;
    const ts_val_t    *call, *def;
    ts_val_t           type, name;
    unsigned char     *done;
    ts_buf_t           b;
    size_t             i;
    long               t;
    int                rc;

    ix = &rq->ix;
    done = calloc(ix->ntools ? ix->ntools : 1, 1);
    ts_buf_init(&b, 0);
    rc = done ? 0 : -1;

    for (i = 0; rc == 0 && i < ix->nmessages; i++) {
        call = &ix->messages[i].elem;

        if (!ts_rs_has(ix->buf, call, "type", &type)
            || !ts_str_eq(ix->buf, &type, "function_call")
            || (t = ts_rs_restorable(ix, call)) < 0
            || !restore[t] || !rq->defer[t] || done[t]
            || !ts_rs_has(ix->buf, call, "name", &name))
        {
            continue;
        }

        done[t] = 1;
        def = &ix->tools[t].elem;
        ts_buf_reset(&b);
        ts_buf_str(&b, ts_rs_search_call);
        ts_buf_add(&b, ix->buf + name.off, name.len);
        ts_buf_str(&b, ts_rs_search_output);
        ts_buf_add(&b, ix->buf + def->off, def->len);
        ts_buf_str(&b, "]},");

        if (b.failed
            || ts_edit_replace(&rq->edits, call->off, 0, b.p, b.len) != 0)
        {
            rc = -1;
        }

        rq->searches_restored++;
    }

    ts_buf_free(&b);
    free(done);

    return rc;
}


/*
 * The deferred function a function_call item of the input calls, its
 * name and arguments at *name and *args; -1 when it calls none (a call
 * with a namespace is main's, never the wrapper's)
 */
static long
ts_rs_wrapped_call(const ts_request_t *rq, size_t i, ts_val_t *name,
    ts_val_t *args)
{
    const ts_index_t  *ix;
    const ts_val_t    *item;
    ts_val_t           type, ns;

    ix = &rq->ix;
    item = &ix->messages[i].elem;

    if (!ts_rs_item_type(ix, i, &type)
        || !ts_str_eq(ix->buf, &type, "function_call")
        || ts_rs_has(ix->buf, item, "namespace", &ns)
        || !ts_rs_has(ix->buf, item, "name", name)
        || name->kind != TS_STRING)
    {
        return -1;
    }

    if (!ts_rs_has(ix->buf, item, "arguments", args)) {
        args->kind = TS_NONE;
    }

    return ts_wrapper_deferred(rq, name);
}


/*
 * With the call wrapper, a deferred function that a call cannot reach
 * through it (arguments that are no JSON object, a name no select: can
 * carry, no call_id), or that tool_choice names, is declared as without
 * the wrapper
 */
static void
ts_rs_wrapper_load(ts_request_t *rq)
{
    const ts_index_t  *ix;
    ts_val_t           name, args, id;
    size_t             i;
    long               k;

    ix = &rq->ix;

    for (i = 0; i < ix->nmessages; i++) {
        k = ts_rs_wrapped_call(rq, i, &name, &args);

        if (k >= 0
            && (!ts_rs_has(ix->buf, &ix->messages[i].elem, "call_id", &id)
                || id.kind != TS_STRING
                || !ts_wrapper_turn_fits(ix, (size_t) k, &args)))
        {
            ts_wrapper_declare(rq, (size_t) k);
        }
    }

    if (ts_rs_has(ix->buf, ts_rs_member(ix, TS_RS_TOOL_CHOICE), "name",
                  &name)
        && (k = ts_wrapper_deferred(rq, &name)) >= 0)
    {
        ts_wrapper_declare(rq, (size_t) k);
    }
}


/* the search restored before item, of the function k, id from its call */
static int
ts_rs_wrapper_restore(ts_request_t *rq, const ts_policy_t *p,
    const ts_val_t *item, size_t k, ts_buf_t *t)
{
    const ts_index_t  *ix;
    ts_name_t          name;
    ts_val_t           id;
    ts_buf_t           none;
    size_t             at, len;

    ix = &rq->ix;
    ts_buf_init(&none, 0);
    (void) ts_rs_has(ix->buf, item, "call_id", &id);
    name.p = ix->buf + ix->tools[k].name.off + 1;
    name.len = ix->tools[k].name.len - 2;

    ts_buf_reset(t);
    ts_buf_str(t, "{\"type\":\"function_call\",\"call_id\":\"");
    at = t->len;
    ts_defer_restored_id(t, ix->buf, &id, "call_search_");
    len = t->len - at;
    ts_buf_str(t, "\",\"name\":\"");
    ts_buf_str(t, p->search_tool);
    ts_buf_str(t, "\",\"arguments\":\"{\\\"query\\\":\\\"");
    ts_gateway_select(t, &name, 1);
    ts_buf_str(t, "\\\"}\"},{\"type\":\"function_call_output\",\"call_id\":\"");

    /* the id again: room first, as adding may move what it copies */
    if (ts_buf_space(t, len) == 0) {
        ts_buf_add(t, t->p + at, len);
    }

    ts_buf_str(t, "\",\"output\":\"");
    ts_gateway_found_text(t, &name, 1, 1, &none, ix);
    ts_buf_str(t, "\"},");

    if (t->failed) {
        return -1;
    }

    rq->searches_restored++;

    return ts_edit_replace(&rq->edits, item->off, 0, t->p, t->len);
}


/*
 * The call wrapper's next turn: each function_call item of a deferred
 * function goes back as the model's call of call_tool (the same call_id,
 * arguments the string of {"name", "arguments"}), the search that found
 * it restored before its first call, the same bytes on every turn
 */
static int
ts_rs_wrapper_item(ts_request_t *rq, const ts_policy_t *p, size_t msg,
    unsigned char *done, ts_buf_t *t)
{
    const ts_val_t  *item;
    ts_val_t         name, args;
    long             k;
    int              rc;

    item = &rq->ix.messages[msg].elem;
    k = ts_rs_wrapped_call(rq, msg, &name, &args);

    if (k < 0) {
        return 0;
    }

    rc = 0;

    if (!done[k]) {
        done[k] = 1;
        rc = ts_rs_wrapper_restore(rq, p, item, (size_t) k, t);
    }

    return rc ? rc : ts_wrapper_turn_call(rq, &name, &args, t);
}


static int
ts_rs_wrapper_history(ts_request_t *rq, const ts_policy_t *p)
{
    ts_rs_wrapper_load(rq);

    return ts_wrapper_turns(rq, p, ts_rs_wrapper_item);
}


/* hosted search: defer_loading on deferred functions, the search tool */
static int
ts_rs_apply_hosted(ts_request_t *rq, const unsigned char *restore)
{
    const ts_index_t  *ix;
    const ts_val_t    *tools;
    ts_val_t          *items;
    size_t             n;
    int                rc;

    ix = &rq->ix;
    tools = ts_rs_member(ix, TS_RS_TOOLS);

    if (ts_defer_flags(rq) != 0
        || (restore != NULL && ts_rs_restore_searches(rq, restore) != 0)
        || ts_container_items(ix->buf, tools, &items, &n) != TS_OK)
    {
        return -1;
    }

    /* after the last tool of tools[], not in a namespace; one deferred */
    rc = ts_edit_append_item(&rq->edits, tools, &items[n - 1],
                             ts_rs_hosted_tool,
                             sizeof(ts_rs_hosted_tool) - 1);
    free(items);

    return rc;
}


/* where a tool of the index goes in gateway search's tools[] */
typedef enum {
    TS_RS_GONE = 0,     /* deferred */
    TS_RS_STAYS,        /* loaded, in its place */
    TS_RS_LATER         /* deferrable and loaded: after the search tool */
} ts_rs_place_t;


static ts_rs_place_t
ts_rs_place(const ts_request_t *rq, size_t i)
{
    if (rq->loaded[i] && (rq->deferrable[i] & TS_FACT_DEFERRABLE)) {
        return TS_RS_LATER;
    }

    return rq->defer[i] ? TS_RS_GONE : TS_RS_STAYS;
}


/*
 * A namespace with the members that are not deferred, in their order;
 * whole, byte for byte, when none is.  The index's tools k to k + m are
 * its members.
 */
static void
ts_rs_namespace(ts_buf_t *b, const ts_request_t *rq, const ts_val_t *elem,
    size_t k, size_t m)
{
    const ts_tool_t  *t;
    const char       *buf;
    size_t            j, open, close, sep;

    buf = rq->ix.buf;
    t = &rq->ix.tools[k];

    for (j = 0; j < m && ts_rs_place(rq, k + j) != TS_RS_GONE; j++) {
        /* void */
    }

    if (j == m) {
        ts_buf_add(b, buf + elem->off, elem->len);
        return;
    }

    /* from the namespace's start to its first member, from its last on */
    open = t[0].elem.off;
    close = t[m - 1].elem.off + t[m - 1].elem.len;
    ts_buf_add(b, buf + elem->off, open - elem->off);
    sep = 0;

    for (j = 0; j < m; j++) {
        if (ts_rs_place(rq, k + j) != TS_RS_GONE) {
            ts_buf_str(b, sep++ ? "," : "");
            ts_buf_add(b, buf + t[j].elem.off, t[j].elem.len);
        }
    }

    ts_buf_add(b, buf + close, elem->off + elem->len - close);
}


/* an element of the client's tools[] and the index's tools in it */
typedef struct {
    ts_val_t    elem;
    size_t      first;
    size_t      n;          /* a namespace's members, or 1 */
    unsigned    group:1;    /* a namespace */
    unsigned    now:1;      /* written in place */
    unsigned    later:1;    /* written after the search function */
    uint32_t    rank;       /* of history's first call of its tools */
} ts_rs_elem_t;


/*
 * Where an element goes, from the index's tools from *k that lie in it
 * (a namespace's members, or itself): a tool that stays, in place; one
 * loaded on demand, after the search function.  A namespace stays in
 * place with the members that stay and those loaded; with no member
 * staying, it comes after the search function with the members loaded,
 * so that the calls of those members carry its name; with none, it is
 * left out.  An empty namespace stays.
 */
static void
ts_rs_element(const ts_request_t *rq, const ts_val_t *elem, size_t *k,
    ts_rs_elem_t *e)
{
    const ts_index_t  *ix;
    size_t             j;
    uint32_t           c;
    unsigned           seen[3];
    ts_rs_place_t      at;

    ix = &rq->ix;
    memset(e, 0, sizeof(ts_rs_elem_t));
    e->elem = *elem;
    e->first = *k;

    while (*k < ix->ntools
           && ix->tools[*k].elem.off < elem->off + elem->len)
    {
        (*k)++;
    }

    e->n = *k - e->first;
    e->group = e->n != 1 || ix->tools[e->first].elem.off != elem->off;
    memset(seen, 0, sizeof(seen));

    for (j = 0; j < e->n; j++) {
        at = ts_rs_place(rq, e->first + j);
        seen[at] = 1;
        c = rq->called ? rq->called[e->first + j] : 0;

        /* the first of its tools that history calls ranks it */
        if (at == TS_RS_LATER && c && (e->rank == 0 || c < e->rank)) {
            e->rank = c;
        }
    }

    e->now = e->n == 0 || seen[TS_RS_STAYS];
    e->later = !e->now && seen[TS_RS_LATER];
}


/* an element as it goes: whole, or a namespace with what it keeps */
static void
ts_rs_element_write(ts_buf_t *b, const ts_request_t *rq,
    const ts_rs_elem_t *e)
{
    if (e->group) {
        ts_rs_namespace(b, rq, &e->elem, e->first, e->n);

    } else {
        ts_buf_add(b, rq->ix.buf + e->elem.off, e->elem.len);
    }
}


/*
 * Gateway search's tools[] with namespaces: the elements that stay, in
 * place; the search function; the elements loaded on demand, as the
 * other OpenAI dialect orders found tools (ts_gateway_openai_tools):
 * those history calls in the order of their first calls, then the others
 * in the client's order, so that a later discovery follows the earlier
 * ones.  A namespace's found members go in it, in the client's order.
 */
static int
ts_rs_tools_grouped(ts_request_t *rq, const ts_policy_t *p, ts_buf_t *b)
{
    const ts_index_t  *ix;
    ts_rs_elem_t      *el;
    ts_val_t          *items;
    uint32_t           rank;
    size_t             i, k, n;

    ix = &rq->ix;

    if (ts_container_items(ix->buf, ts_rs_member(ix, TS_RS_TOOLS), &items,
                           &n)
        != TS_OK)
    {
        return -1;
    }

    el = malloc((n ? n : 1) * sizeof(ts_rs_elem_t));

    if (el == NULL) {
        free(items);
        return -1;
    }

    ts_buf_reset(b);
    ts_buf_str(b, "[");

    for (i = 0, k = 0; i < n; i++) {
        ts_rs_element(rq, &items[i], &k, &el[i]);

        if (el[i].now) {
            ts_rs_element_write(b, rq, &el[i]);
            ts_buf_str(b, ",");
        }
    }

    ts_buf_str(b, "{\"type\":\"function\",");
    ts_gateway_search_fields(b, p, "parameters");
    ts_buf_str(b, "}");

    /* rank 0 last: the elements history does not call */
    for (rank = 1; rank <= rq->ncalled + 1; rank++) {
        for (i = 0; i < n; i++) {
            if (el[i].later
                && el[i].rank == (rank <= rq->ncalled ? rank : 0))
            {
                ts_buf_str(b, ",");
                ts_rs_element_write(b, rq, &el[i]);
            }
        }
    }

    ts_buf_str(b, "]");
    free(items);
    free(el);

    return b->failed ? -1 : 0;
}


/*
 * Gateway search's tools[]: without namespaces (ts_rs_qualify), the
 * other OpenAI dialect's
 */
static int
ts_rs_tools_edit(ts_request_t *rq, const ts_policy_t *p, ts_buf_t *b)
{
    if (rq->qualified != NULL) {
        return ts_rs_tools_grouped(rq, p, b);
    }

    return ts_gateway_openai_tools(rq, p, "{\"type\":\"function\",", "}",
                                   b);
}


/*
 * The announcement ends the instructions, as a paragraph of their
 * string; without them, an instructions member opens the body.
 */
static int
ts_rs_instructions(ts_request_t *rq, const ts_buf_t *text, ts_buf_t *b)
{
    const ts_val_t  *ins, *top;

    ins = ts_rs_member(&rq->ix, TS_RS_INSTRUCTIONS);
    top = &rq->ix.members[TS_RS_KEYS].val;
    ts_buf_reset(b);

    if (ins->kind == TS_STRING) {
        ts_buf_str(b, "\\n\\n");
        ts_buf_add(b, text->p, text->len);

        return b->failed ? -1
               : ts_edit_replace(&rq->edits, ins->off + ins->len - 1, 0,
                                 b->p, b->len);
    }

    ts_buf_str(b, "\"instructions\":\"");
    ts_buf_add(b, text->p, text->len);
    ts_buf_str(b, "\"");

    if (ins->kind == TS_NULL) {
        return b->failed ? -1
               : ts_edit_replace(&rq->edits, ins->off, ins->len,
                                 b->p + sizeof("\"instructions\":") - 1,
                                 b->len - sizeof("\"instructions\":") + 1);
    }

    /* the body has an input: the object is not empty */
    ts_buf_str(b, ",");

    return b->failed ? -1
           : ts_edit_replace(&rq->edits, top->off + 1, 0, b->p, b->len);
}


/*
 * The input replaced by an array of the loop's items (the tail), after
 * the user message a string input stands for (own)
 */
static int
ts_rs_input_tail(ts_request_t *rq, const ts_input_t *in, int own)
{
    const ts_val_t  *input;
    ts_buf_t         b;
    int              rc;

    input = ts_rs_member(&rq->ix, TS_RS_INPUT);

    ts_buf_init(&b, 0);
    ts_buf_str(&b, "[");

    if (own) {
        ts_buf_str(&b, "{\"role\":\"user\",\"content\":");
        ts_buf_add(&b, rq->ix.buf + input->off, input->len);
        ts_buf_str(&b, "},");
    }

    ts_buf_add(&b, in->tail, in->tail_len);
    ts_buf_str(&b, "]");

    rc = b.failed ? -1
         : ts_edit_replace(&rq->edits, input->off, input->len, b.p, b.len);
    ts_buf_free(&b);

    return rc;
}


/*
 * The items of the loop's searches go after the input (the shared tail,
 * for an array); a string input becomes the user message it stands for,
 * followed by them.
 */
static int
ts_rs_string_tail(ts_request_t *rq, const ts_input_t *in)
{
    if (in->tail_len == 0
        || ts_rs_member(&rq->ix, TS_RS_INPUT)->kind != TS_STRING)
    {
        return 0;
    }

    return ts_rs_input_tail(rq, in, 1);
}


/*
 * A continuation of a stored exchange goes on from the response the
 * upstream kept of the last call (previous_response_id, in place of the
 * client's or first in the body), and its input is only what the
 * searches answered (the tail): the rest the upstream holds already.
 */
static int
ts_rs_resume(ts_request_t *rq, const ts_input_t *in)
{
    const ts_val_t  *prev, *top;
    ts_buf_t         b;
    int              rc;

    prev = ts_rs_member(&rq->ix, TS_RS_PREVIOUS);
    top = &rq->ix.members[TS_RS_KEYS].val;

    rc = ts_rs_input_tail(rq, in, 0);

    ts_buf_init(&b, 0);
    ts_buf_str(&b, "\"previous_response_id\":\"");
    ts_buf_escaped(&b, in->resume, strlen(in->resume));
    ts_buf_str(&b, "\",");

    if (rc == 0 && !b.failed) {
        rc = prev->kind != TS_NONE
             ? ts_edit_replace(&rq->edits, prev->off, prev->len,
                               b.p + sizeof("\"previous_response_id\":") - 1,
                               b.len - sizeof("\"previous_response_id\":"))
             : ts_edit_replace(&rq->edits, top->off + 1, 0, b.p, b.len);
    }

    rc = b.failed ? -1 : rc;
    ts_buf_free(&b);

    return rc;
}


static int
ts_rs_apply_gateway(ts_request_t *rq, const ts_input_t *in)
{
    static const ts_gateway_form_t  form = {
        ts_rs_tools_edit, ts_rs_instructions
    };

    ts_input_t  gin;

    /*
     * A stored answer must not hold the search call beside one of the
     * client's: the client goes on from it, and the search's would stay
     * unanswered there.  One call an answer, the same on every call.
     */
    if (ts_responses_stored(rq)
        && ts_rs_member(&rq->ix, TS_RS_PARALLEL)->kind == TS_NONE
        && ts_edit_replace(&rq->edits, rq->ix.members[TS_RS_KEYS].val.off + 1,
                           0, ts_rs_one_call, sizeof(ts_rs_one_call) - 1)
           != 0)
    {
        return -1;
    }

    if (in->resume == NULL || in->tail_len == 0) {
        return ts_gateway_apply_as(rq, in, &form) == 0
               && ts_rs_string_tail(rq, in) == 0 ? 0 : -1;
    }

    /* the input is the tail alone: nothing goes after the client's */
    gin = *in;
    gin.tail_len = 0;

    return ts_gateway_apply_as(rq, &gin, &form) == 0
           && ts_rs_resume(rq, in) == 0 ? 0 : -1;
}


/* the path before the rules: what the request's state allows */
static ts_decision_t
ts_rs_path(const ts_request_t *rq, const ts_input_t *in, int hosted,
    const ts_rs_state_t *s)
{
    if (s->managed) {
        return TS_DECISION_CLIENT_MANAGED;
    }

    if (!hosted && in->policy->search == TS_SEARCH_HOSTED) {
        return in->upstream == TS_UPSTREAM_OPENAI
               ? TS_DECISION_MODEL_UNSUPPORTED
               : TS_DECISION_UPSTREAM_UNSUPPORTED;
    }

    /*
     * Hosted search items need the upstream's hosted search; a
     * conversation would keep the gateway's exchange in an order only
     * the upstream knows (docs/gateway-search.md, "Server-held state").
     * Stored responses and previous_response_id chains get the search:
     * its exchange is stored whole, the client goes on from its end.
     */
    if (!hosted && (s->hosted || s->conversation)) {
        return TS_DECISION_SERVER_STATE;
    }

    /* a stored answer that may hold the search beside the client's call */
    if (!hosted && ts_responses_stored(rq)
        && ts_rs_member(&rq->ix, TS_RS_PARALLEL)->kind == TS_TRUE)
    {
        return TS_DECISION_SERVER_STATE;
    }

    return TS_DECISION_NONE;
}


ts_decision_t
ts_responses_process(ts_request_t *rq, const ts_input_t *in,
    const char *body, size_t len)
{
    ts_policy_t     policy;
    ts_input_t      gin;
    ts_history_t    h;
    ts_rs_state_t   s;
    ts_val_t       *nsv;
    size_t          groups;
    unsigned char  *restore;
    int             hosted;

    memset(rq, 0, sizeof(ts_request_t));
    ts_edits_init(&rq->edits);

    nsv = NULL;
    groups = 0;
    rq->decision = ts_rs_index(rq, in, body, len, &nsv, &groups);

    if (rq->decision != TS_DECISION_NONE || in == NULL
        || in->policy == NULL)
    {
        free(nsv);
        return rq->decision;
    }

    ts_rs_state(rq, &s);
    hosted = in->policy->search != TS_SEARCH_GATEWAY && ts_rs_hosted(rq, in);
    rq->upstream = in->upstream;
    rq->decision = ts_rs_path(rq, in, hosted, &s);

    /* the rules, the search and history know members by their names */
    if (rq->decision == TS_DECISION_NONE
        && ts_rs_qualify(rq, nsv, groups) != 0)
    {
        rq->decision = TS_DECISION_ERROR;
    }

    free(nsv);

    if (rq->decision != TS_DECISION_NONE) {
        return rq->decision;
    }

    /* the shared rules run as for gateway search; hosted is this file's */
    policy = *in->policy;
    policy.search = TS_SEARCH_GATEWAY;
    gin = *in;
    gin.policy = &policy;

    rq->mode = in->defer_mode >= 0 ? in->defer_mode : policy.defer_mode;
    rq->percent = in->defer_mode >= 0 ? in->defer_percent
                                      : policy.defer_percent;

    if (policy.disable_betas) {
        rq->mode = TS_DEFER_OFF;
    }

    /*
     * items the upstream resolves may call any function: all declared;
     * a chain's upstream holds the searches of its calls
     */
    restore = NULL;

    if (hosted && !s.refs && !s.chained) {
        restore = calloc(rq->ix.ntools ? rq->ix.ntools : 1, 1);

        if (restore == NULL) {
            rq->decision = TS_DECISION_ERROR;
            return rq->decision;
        }
    }

    /*
     * The call wrapper where the whole conversation is in the request:
     * a stored response or a chain would keep the wrapper's calls where
     * the client's next request cannot turn them back
     */
    rq->load_wrapper = !hosted && policy.found_tools == TS_FOUND_WRAPPER
                       && !ts_responses_stored(rq) && !s.chained && !s.refs
                       && ts_wrapper_free(&rq->ix);

    if (ts_rs_loaded(rq, in, hosted && s.refs, restore) != 0) {
        free(restore);
        rq->decision = TS_DECISION_ERROR;
        return rq->decision;
    }

    memset(&h, 0, sizeof(ts_history_t));
    rq->decision = ts_defer_decide(rq, &gin, &h);

    if (hosted && s.refs && rq->decision == TS_DECISION_NOTHING_TO_DEFER
        && rq->tools_deferrable > 0)
    {
        /* the referenced search items keep their tool */
        rq->decision = TS_DECISION_DEFERRED_GATEWAY;
    }

    if (rq->decision != TS_DECISION_DEFERRED_GATEWAY) {
        free(restore);
        return rq->decision;
    }

    if (hosted) {
        rq->decision = TS_DECISION_DEFERRED_HOSTED;
    }

    if ((hosted ? ts_rs_apply_hosted(rq, restore)
                : (rq->load_wrapper
                   && ts_rs_wrapper_history(rq, &policy) != 0)
                  || ts_rs_apply_gateway(rq, &gin))
        != 0)
    {
        rq->decision = TS_DECISION_ERROR;
        ts_edits_free(&rq->edits);
        ts_edits_init(&rq->edits);
    }

    free(restore);

    return rq->decision;
}

