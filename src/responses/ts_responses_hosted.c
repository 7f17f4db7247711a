/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Responses, request side: what the request's state allows and hosted
 * tool_search.  Its tools and input items read for the path (its own
 * search, hosted search items, item_reference, a chain); the functions a
 * stateless turn keeps loaded; for an openai upstream with a model that
 * has hosted tool_search, defer_loading and {"type":"tool_search"}, with
 * the searches a client dropped restored before the calls of what they
 * found (one a namespace, for its members).
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


static const char  ts_rs_hosted_tool[] = "{\"type\":\"tool_search\"}";

/* the API's function names: [a-zA-Z0-9_-], at most 128 */
#define TS_RS_NAME_MAX  128

static const char  ts_rs_search_call[] =
    "{\"type\":\"tool_search_call\",\"execution\":\"server\","
    "\"call_id\":null,\"status\":\"completed\",\"arguments\":{\"paths\":[";
static const char  ts_rs_search_output[] =
    "]}},{\"type\":\"tool_search_output\",\"execution\":\"server\","
    "\"call_id\":null,\"status\":\"completed\",\"tools\":[";


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


void
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
    const ts_val_t  *conv;

    if (rq->ix.members == NULL) {
        return 0;
    }

    /* store defaults to true; a conversation keeps the items whatever */
    conv = ts_rs_member(&rq->ix, TS_RS_CONVERSATION);

    return ts_rs_member(&rq->ix, TS_RS_STORE)->kind != TS_FALSE
           || (conv->kind != TS_NONE && conv->kind != TS_NULL);
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
int
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


/*
 * 1 when a definition of a tool_search_output declares the name: a
 * function (a member by its qualified name), or with ns a namespace
 */
static int
ts_rs_declares(const char *buf, const ts_val_t *def, const char *name,
    size_t len, int ns)
{
    ts_val_t     gns, *members;
    const char  *s;
    char         tmp[2 * TS_NAME_MAX];
    size_t       j, m, slen;
    int          found;

    if (!ts_rs_group(buf, def, &gns, &members, &m)) {
        s = ns ? NULL : ts_rs_name(buf, def, NULL, tmp, sizeof(tmp), &slen);

        return s != NULL && slen == len && memcmp(s, name, len) == 0;
    }

    found = 0;

    if (ns && gns.kind != TS_NONE) {
        s = ts_str_view(buf, &gns, tmp, sizeof(tmp), &slen);
        found = s != NULL && slen == len && memcmp(s, name, len) == 0;
    }

    for (j = 0; !ns && gns.kind != TS_NONE && j < m; j++) {
        s = ts_rs_name(buf, &members[j], &gns, tmp, sizeof(tmp), &slen);
        found |= s != NULL && slen == len && memcmp(s, name, len) == 0;
    }

    free(members);

    return found;
}


/*
 * 1 when a hosted tool_search_output of the input declares the name (a
 * function's; with ns, a namespace's)
 */
static int
ts_rs_found_by_hosted(const ts_index_t *ix, const char *name, size_t len,
    int ns)
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
            found |= ts_rs_declares(ix->buf, &items[j], name, len, ns);
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

    if (s == NULL || (call && ts_rs_found_by_hosted(ix, s, len, 0))) {
        return 0;
    }

    for (i = 0; i < ix->ntools; i++) {
        t = ts_str_view(ix->buf, &ix->tools[i].name, ttmp, sizeof(ttmp),
                        &tlen);

        if (t != NULL && ts_rs_same(t, tlen, s, len, !call)) {
            ts_request_load(rq, i, call);
            found = 1;
        }
    }

    return found;
}


/*
 * A name a restored search can carry: a string written without escapes,
 * of the API's characters, in *s and *len
 */
static int
ts_rs_api_name(const char *buf, const ts_val_t *v, const char **s,
    size_t *len)
{
    size_t  i;

    if (v->kind != TS_STRING || v->esc) {
        return 0;
    }

    *s = buf + v->off + 1;
    *len = v->len - 2;

    for (i = 0; i < *len; i++) {
        if (!((*s)[i] >= 'a' && (*s)[i] <= 'z')
            && !((*s)[i] >= 'A' && (*s)[i] <= 'Z')
            && !((*s)[i] >= '0' && (*s)[i] <= '9')
            && (*s)[i] != '_' && (*s)[i] != '-')
        {
            return 0;
        }
    }

    return *len > 0 && *len <= TS_RS_NAME_MAX;
}


/*
 * The tool a function_call item calls when its hosted search can be
 * restored (ts_rs_restore_searches): a function of tools[] whose name
 * (and namespace, for a call that names one) is of the API's characters,
 * written without escapes, and that no hosted tool_search_output of the
 * input declares; a namespace's member only when no such output declares
 * its namespace (the API refuses two that declare one); -1 otherwise.
 */
static long
ts_rs_restorable(const ts_index_t *ix, const ts_val_t *call)
{
    ts_val_t     name, ns, bare;
    const char  *s, *n, *t;
    char         tmp[TS_NAME_MAX], q[2 * TS_RS_NAME_MAX + 2];
    size_t       i, len, nlen, tlen;
    int          member;

    member = ts_rs_has(ix->buf, call, "namespace", &ns);

    if (!ts_rs_has(ix->buf, call, "name", &name)
        || !ts_rs_api_name(ix->buf, &name, &s, &len)
        || (member && !ts_rs_api_name(ix->buf, &ns, &n, &nlen)))
    {
        return -1;
    }

    /* a member by its qualified name, as the index knows it */
    if (member) {
        if (ts_rs_found_by_hosted(ix, n, nlen, 1)) {
            return -1;
        }

        memcpy(q, n, nlen);
        memcpy(q + nlen, "__", 2);
        memcpy(q + nlen + 2, s, len);
        s = q;
        len += nlen + 2;

    } else if (ts_rs_found_by_hosted(ix, s, len, 0)) {
        return -1;
    }

    /*
     * A namespace's member has its qualified name past the body's end,
     * a flat function in the body; a member's own name is the call's, so
     * that the namespace is the call's too.
     */
    for (i = 0; i < ix->ntools; i++) {
        t = ts_str_view(ix->buf, &ix->tools[i].name, tmp, sizeof(tmp),
                        &tlen);

        if (t == NULL || tlen != len || memcmp(t, s, len) != 0
            || (ix->tools[i].name.off >= ix->len) != member)
        {
            continue;
        }

        if (!member
            || (ts_rs_has(ix->buf, &ix->tools[i].elem, "name", &bare)
                && bare.len == name.len
                && memcmp(ix->buf + bare.off, ix->buf + name.off,
                          name.len) == 0))
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
int
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


/* a namespace of tools[]: its element, name, and members in the index */
typedef struct {
    ts_val_t    elem;
    ts_val_t    name;
    size_t      first;
    size_t      n;
    unsigned    done:1;     /* its search restored */
} ts_rs_group_t;


/* the namespaces of tools[] (named by a string), which the caller frees */
static ts_rs_group_t *
ts_rs_groups(const ts_index_t *ix, size_t *ngroups)
{
    ts_rs_group_t  *g;
    ts_val_t       *items, *members, ns;
    size_t          i, k, n, m, first;

    if (ts_container_items(ix->buf, ts_rs_member(ix, TS_RS_TOOLS), &items,
                           &n)
        != TS_OK)
    {
        return NULL;
    }

    g = malloc((n ? n : 1) * sizeof(ts_rs_group_t));
    *ngroups = 0;

    /* the index's tools lie in tools[]'s elements in their order */
    for (i = 0, k = 0; g != NULL && i < n; i++) {
        first = k;

        while (k < ix->ntools
               && ix->tools[k].elem.off < items[i].off + items[i].len)
        {
            k++;
        }

        if (!ts_rs_group(ix->buf, &items[i], &ns, &members, &m)) {
            continue;
        }

        free(members);

        if (ns.kind == TS_STRING && k - first == m && m > 0) {
            memset(&g[*ngroups], 0, sizeof(ts_rs_group_t));
            g[*ngroups].elem = items[i];
            g[*ngroups].name = ns;
            g[*ngroups].first = first;
            g[*ngroups].n = m;
            (*ngroups)++;
        }
    }

    free(items);

    return g;
}


/* a member a restored search loads: marked in the mask arg */
static int
ts_rs_masked(const void *arg, size_t i)
{
    return ((const unsigned char *) arg)[i];
}


/*
 * The restored search of a function: its name in paths, its definition
 * as the client wrote it; of a namespace's members (mask): the
 * namespace's name in paths, the namespace with those members (the shape
 * in which the API loads a member), so that one output declares it
 */
static void
ts_rs_search_items(ts_buf_t *b, const ts_index_t *ix, const ts_val_t *name,
    long t, const ts_rs_group_t *g, const unsigned char *mask)
{
    const ts_val_t  *def;

    ts_buf_reset(b);
    ts_buf_str(b, ts_rs_search_call);
    ts_buf_add(b, ix->buf + (g ? g->name.off : name->off),
               g ? g->name.len : name->len);
    ts_buf_str(b, ts_rs_search_output);

    if (g != NULL) {
        ts_rs_namespace_write(b, ix, &g->elem, g->first, g->n, ts_rs_masked,
                              mask);

    } else {
        def = &ix->tools[t].elem;
        ts_buf_add(b, ix->buf + def->off, def->len);
    }

    ts_buf_str(b, "]},");
}


/*
 * The function_call item i when its search is restored: the tool it
 * calls (its namespace in *g when it is a member, else NULL), with the
 * members each namespace's restored search loads marked in mask; -1
 * otherwise
 */
static long
ts_rs_restored_call(const ts_request_t *rq, const unsigned char *restore,
    size_t i, ts_rs_group_t *groups, size_t ngroups, ts_rs_group_t **g,
    unsigned char *mask)
{
    const ts_index_t  *ix;
    ts_val_t           type;
    size_t             j;
    long               t;

    ix = &rq->ix;
    *g = NULL;

    if (!ts_rs_item_type(ix, i, &type)
        || !ts_str_eq(ix->buf, &type, "function_call")
        || (t = ts_rs_restorable(ix, &ix->messages[i].elem)) < 0
        || !restore[t] || !rq->defer[t])
    {
        return -1;
    }

    for (j = 0; j < ngroups; j++) {
        if ((size_t) t >= groups[j].first
            && (size_t) t < groups[j].first + groups[j].n)
        {
            *g = &groups[j];
            mask[t] = 1;
        }
    }

    return t;
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
 * the prefix the cache holds.  A namespace's members (Codex's
 * mcp__<server> groups) are restored by one search a namespace, before
 * the first call of any of them: its output declares the namespace with
 * every member the input calls, since the API refuses two outputs that
 * declare one namespace.  The same calls give the same bytes; a later
 * turn's first call of another member of that namespace adds it there.
 * The API takes such items back in the input (clients that keep them
 * send them back); a call that cannot be restored loads its function as
 * before (ts_rs_restorable).
 */
static int
ts_rs_restore_searches(ts_request_t *rq, const unsigned char *restore)
{
    const ts_index_t  *ix;
    const ts_val_t    *call;
    ts_rs_group_t     *groups, *g;
    ts_val_t           name;
    unsigned char     *done, *mask;
    ts_buf_t           b;
    size_t             i, ngroups;
    long               t;
    int                rc;

    ix = &rq->ix;
    done = calloc(ix->ntools ? ix->ntools : 1, 1);
    mask = calloc(ix->ntools ? ix->ntools : 1, 1);
    groups = ts_rs_groups(ix, &ngroups);
    ts_buf_init(&b, 0);
    rc = (done && mask && groups) ? 0 : -1;

    /* the members each namespace's search loads */
    for (i = 0; rc == 0 && i < ix->nmessages; i++) {
        (void) ts_rs_restored_call(rq, restore, i, groups, ngroups, &g,
                                   mask);
    }

    for (i = 0; rc == 0 && i < ix->nmessages; i++) {
        call = &ix->messages[i].elem;
        t = ts_rs_restored_call(rq, restore, i, groups, ngroups, &g, mask);

        if (t < 0 || done[t] || (g != NULL && g->done)
            || !ts_rs_has(ix->buf, call, "name", &name))
        {
            continue;
        }

        done[t] = 1;

        if (g != NULL) {
            g->done = 1;
        }

        ts_rs_search_items(&b, ix, &name, t, g, mask);

        if (b.failed
            || ts_edit_replace(&rq->edits, call->off, 0, b.p, b.len) != 0)
        {
            rc = -1;
        }

        rq->searches_restored++;
    }

    ts_buf_free(&b);
    free(groups);
    free(mask);
    free(done);

    return rc;
}


/* hosted search: defer_loading on deferred functions, the search tool */
int
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
