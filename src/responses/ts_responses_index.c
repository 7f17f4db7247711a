/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Responses, request side: the body read into the shared index.  A
 * function tool's name, description and parameters, a namespace's
 * members one by one under their qualified names (mcp__memory +
 * create_entities: mcp__memory__create_entities), the input's items as
 * messages.  Hosted tools and tool_search keep no name: the rules never
 * defer them.
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
#include "responses/ts_responses_int.h"


static const char *const  ts_rs_keys[TS_RS_KEYS] = {
    "model", "input", "tools", "stream", "tool_choice", "instructions",
    "previous_response_id", "conversation", "store", "parallel_tool_calls"
};


const ts_val_t *
ts_rs_member(const ts_index_t *ix, int key)
{
    return &ix->members[key].val;
}


/* a member a value has that is there and not null */
int
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
int
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
int
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
ts_rs_tool_add(ts_index_t *ix, ts_rs_tools_t *rt, size_t *cap,
    const ts_val_t *ns)
{
    ts_tool_t  *t;
    ts_val_t   *v;
    size_t      n;

    if (ix->ntools == *cap) {
        n = *cap * 2 + 8;
        t = realloc(ix->tools, n * sizeof(ts_tool_t));
        v = t ? realloc(rt->nsv, n * sizeof(ts_val_t)) : NULL;

        if (t != NULL) {
            ix->tools = t;
        }

        if (v == NULL) {
            return NULL;
        }

        rt->nsv = v;
        *cap = n;
    }

    memset(&rt->nsv[ix->ntools], 0, sizeof(ts_val_t));

    if (ns != NULL) {
        rt->nsv[ix->ntools] = *ns;
    }

    return &ix->tools[ix->ntools++];
}


/*
 * The items of a tools array, each a tool of the index, with the
 * namespace ns (NULL: none, the array itself, whose elements go to rt)
 * in rt; their own members read in the same pass.  *cap: the index's
 * room.
 */
static ts_status_t
ts_rs_tools_of(ts_index_t *ix, const ts_val_t *arr, const ts_val_t *ns,
    ts_rs_tools_t *rt, size_t *cap)
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
            rt->groups++;
            st = ts_rs_tools_of(ix, &v[TS_RS_T_TOOLS], &gns, rt, cap);
            continue;
        }

        t = ts_rs_tool_add(ix, rt, cap, ns);

        if (t == NULL) {
            st = TS_ERR_NOMEM;
            break;
        }

        ts_rs_tool(ix->buf, &items[i], v, t);
    }

    if (ns == NULL) {
        rt->elems = items;
        rt->nelems = n;

    } else {
        free(items);
    }

    free(vals);

    return st;
}


/*
 * The tools: a namespace's members one by one (Codex's mcp__<server>
 * groups), each with its namespace in rt, any other tool as itself;
 * the namespaces counted in rt.  A member's name is qualified by its
 * namespace once the request may be deferred (ts_rs_qualify).
 */
static ts_status_t
ts_rs_tools(ts_index_t *ix, const ts_val_t *tools, ts_rs_tools_t *rt)
{
    size_t  cap;

    cap = 0;

    return ts_rs_tools_of(ix, tools, NULL, rt, &cap);
}


/*
 * A namespace member's name in the index: its namespace's, "__", its own
 * (mcp__memory + create_entities: mcp__memory__create_entities), the
 * name the rules, the search and the announcement know it by.  The
 * names go after the end of a copy of the body, which the index reads
 * from then on; with namespaces, the copy is made even without a name
 * to add, so that rq->qualified says they are there.  A member whose
 * names have escapes keeps no name: it stays loaded.  The request takes
 * the array's elements from rt with the copy.
 */
int
ts_rs_qualify(ts_request_t *rq, ts_rs_tools_t *rt)
{
    ts_index_t      *ix;
    ts_tool_t       *t;
    const ts_val_t  *nsv;
    char            *buf, *p;
    size_t           i, extra;

    ix = &rq->ix;
    nsv = rt->nsv;
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

    if (rt->groups == 0) {
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
    rq->tool_elems = rt->elems;
    rq->ntool_elems = rt->nelems;
    rt->elems = NULL;

    return 0;
}


/*
 * What the worker's memory keeps beside a tools array's tools when the
 * array has namespaces (toolsearch_recall): what the read gave in
 * ts_rs_tools_t, offsets from the array's first byte, each tool's
 * namespace, then the array's elements.  A request that sends the
 * array's bytes again takes them with the tools and qualifies the
 * members' names itself (ts_rs_qualify), as one that read the array
 * does.
 */
typedef struct {
    size_t    groups;
    size_t    nelems;
    ts_val_t  vals[];
} ts_rs_kept_ns_t;


/* n spans from src to dst, moved from offsets from base from to to */
static void
ts_rs_spans_move(ts_val_t *dst, const ts_val_t *src, size_t n, size_t from,
    size_t to)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        dst[i] = src[i];

        if (src[i].kind != TS_NONE) {
            dst[i].off = dst[i].off - from + to;
        }
    }
}


/*
 * The tools read, with what rt says of them, and kept by the worker's
 * memory with it when the array has namespaces (not kept when there is
 * no room for that: an array kept without it would be recalled as one
 * without namespaces)
 */
static ts_status_t
ts_rs_tools_read(ts_index_t *ix, const ts_format_recall_t *rc,
    const ts_val_t *tools, ts_rs_tools_t *rt)
{
    ts_rs_kept_ns_t  *k;
    ts_status_t       st;
    size_t            size;

    st = ts_rs_tools(ix, tools, rt);

    if (st != TS_OK || rt->groups == 0 || rc->memory == NULL) {
        if (st == TS_OK) {
            ts_format_tools_keep(ix, rc, tools, NULL, 0);
        }

        return st;
    }

    size = sizeof(ts_rs_kept_ns_t)
           + (ix->ntools + rt->nelems) * sizeof(ts_val_t);
    k = malloc(size);
    if (k == NULL) {
        return TS_OK;
    }

    k->groups = rt->groups;
    k->nelems = rt->nelems;
    ts_rs_spans_move(k->vals, rt->nsv, ix->ntools, tools->off, 0);
    ts_rs_spans_move(k->vals + ix->ntools, rt->elems, rt->nelems,
                     tools->off, 0);

    ts_format_tools_keep(ix, rc, tools, k, size);
    free(k);

    return TS_OK;
}


/* the tools recalled, with what was kept beside them, if anything */
static ts_status_t
ts_rs_tools_recalled(ts_index_t *ix, const ts_format_recall_t *rc,
    const ts_val_t *tools, ts_rs_tools_t *rt)
{
    const ts_rs_kept_ns_t  *k;
    ts_status_t             st;

    st = ts_format_tools_recall(ix, rc, tools);
    k = rc->recalled->extra;

    if (st != TS_OK || k == NULL) {
        return st;
    }

    rt->nsv = malloc((ix->ntools ? ix->ntools : 1) * sizeof(ts_val_t));
    rt->elems = malloc((k->nelems ? k->nelems : 1) * sizeof(ts_val_t));

    if (rt->nsv == NULL || rt->elems == NULL) {
        return TS_ERR_NOMEM;
    }

    rt->groups = k->groups;
    rt->nelems = k->nelems;
    ts_rs_spans_move(rt->nsv, k->vals, ix->ntools, 0, tools->off);
    ts_rs_spans_move(rt->elems, k->vals + ix->ntools, k->nelems, 0,
                     tools->off);

    return TS_OK;
}


/*
 * The body read into the index: an object with an input (a string or
 * an array of items), what the tools array gives beside the tools in
 * rt (the caller frees it).  What is not of this shape passes
 * untouched.  The tools array may come from the worker's memory
 * (toolsearch_recall), its namespaces with it.
 */
ts_decision_t
ts_rs_index(ts_request_t *rq, const ts_input_t *in, const char *body,
    size_t len, ts_rs_tools_t *rt)
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

    /* the tools, from the worker's memory when it holds the array */
    st = TS_OK;

    if (v[TS_RS_TOOLS].kind == TS_ARRAY) {
        st = rc.recalled != NULL
             ? ts_rs_tools_recalled(ix, &rc, &v[TS_RS_TOOLS], rt)
             : ts_rs_tools_read(ix, &rc, &v[TS_RS_TOOLS], rt);
    }

    if (st != TS_OK
        || (v[TS_RS_INPUT].kind == TS_ARRAY
            && ts_format_messages(ix, &v[TS_RS_INPUT]) != TS_OK))
    {
        return TS_DECISION_ERROR;
    }

    return ix->ntools ? TS_DECISION_NONE : TS_DECISION_NOTHING_TO_DEFER;
}
