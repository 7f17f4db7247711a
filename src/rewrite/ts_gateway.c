/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

#include "rewrite/ts_defer.h"
#include "rewrite/ts_facts.h"
#include "rewrite/ts_gateway.h"
#include "rewrite/ts_wrapper.h"
#include "messages/ts_history.h"
#include "scan/ts_str.h"


/* the cache breakpoints the API takes in one request */
#define TS_MAX_BREAKPOINTS  4

/* a breakpoint of the gateway's own, as a member of a block */
#define TS_GATEWAY_BREAKPOINT  ",\"cache_control\":{\"type\":\"ephemeral\"}"

static const char  ts_search_description[] =
    "Searches the tools that are not loaded yet (the system prompt lists "
    "their names) and loads the matches so that they can be called. Call "
    "it before calling a tool that is not in your tool list. Query forms: "
    "\\\"select:name1,name2\\\" loads tools by exact name; keywords such "
    "as \\\"slack send message\\\" rank tools by name and description; a "
    "keyword with a leading + is required (\\\"+github issue\\\"); a query "
    "starting with mcp__ lists the tools with that prefix. Loaded tools "
    "stay available for the rest of the conversation.";


/* history rewriting state */
typedef struct {
    const ts_index_t   *ix;
    const char         *tool;
    ts_edits_t          edits;
    ts_buf_t            out;
    ts_names_t          found;
    unsigned char      *used;       /* per block: a result already used */
    size_t              calls;
    int                 refs;       /* results as references */
    const ts_index_t   *defs;       /* wrapper: definitions as text */
    ts_buf_t            servers;    /* the no-match text, once needed */
    int                 have_servers;
} ts_normal_t;


/* the result block of the call at block c, or -1 */
static long
ts_gateway_result_of(const ts_normal_t *nm, const ts_message_t *m, size_t c)
{
    const ts_index_t  *ix;
    const ts_block_t  *b;
    size_t             i;

    ix = nm->ix;

    for (i = c + 1; i < m->block_end; i++) {
        b = &ix->blocks[i];

        if (b->parent < 0 && !nm->used[i]
            && ts_str_eq(ix->buf, &b->type, "tool_search_tool_result")
            && ts_str_same_raw(ix->buf, &b->id, &ix->blocks[c].id))
        {
            return (long) i;
        }
    }

    return -1;
}


/*
 * A gateway's search call: one of this tool's, or of another gateway
 * search tool (another location's name, a name changed since), known by
 * the tool_search_tool_result that answers it (the gateway gives the
 * client a call with its result, always).  All become calls of this
 * location's tool, which the upstream knows; the API's hosted search
 * calls are hygiene's.
 */
static int
ts_is_gateway_call(const ts_normal_t *nm, const ts_message_t *m, size_t c)
{
    const ts_index_t  *ix;
    const ts_block_t  *b;

    ix = nm->ix;
    b = &ix->blocks[c];

    /* the gateway's calls have ids: a block without one is not its own */
    if (b->parent >= 0
        || b->id.kind != TS_STRING
        || !ts_str_eq(ix->buf, &b->type, "server_tool_use"))
    {
        return 0;
    }

    if (ts_str_eq(ix->buf, &b->name, nm->tool)) {
        return 1;
    }

    return !ts_history_is_hosted(ix, b) && ts_gateway_result_of(nm, m, c) >= 0;
}


static void
ts_raw(ts_buf_t *b, const char *buf, const ts_val_t *v)
{
    ts_buf_add(b, buf + v->off, v->len);
}


/*
 * The search call as the upstream knows it: a tool_use of this
 * location's search tool, whatever tool made it (a valid tool name,
 * written as it is: the directive allows no character JSON escapes).
 */
static void
ts_call_as_tool_use(ts_buf_t *b, const ts_index_t *ix, const ts_block_t *c,
    const char *tool)
{
    ts_val_t  input;

    ts_buf_str(b, "{\"type\":\"tool_use\",\"id\":");
    ts_raw(b, ix->buf, &c->id);
    ts_buf_str(b, ",\"name\":\"");
    ts_buf_str(b, tool);
    ts_buf_str(b, "\",\"input\":");

    if (ts_object_member(ix->buf, &c->elem, "input", &input) == TS_OK
        && input.kind == TS_OBJECT)
    {
        ts_raw(b, ix->buf, &input);

    } else {
        ts_buf_str(b, "{}");
    }

    ts_buf_str(b, "}");
}


/*
 * An error result, such as a search past the budget: its message is the
 * result the model reads.  1: not an error result.
 */
static int
ts_error_as_result(ts_normal_t *nm, const ts_block_t *c, const ts_block_t *a)
{
    const char  *buf;
    ts_val_t     type, message;

    buf = nm->ix->buf;

    if (a->content.kind != TS_OBJECT
        || ts_object_member(buf, &a->content, "type", &type) != TS_OK
        || !ts_str_eq(buf, &type, "tool_search_tool_result_error"))
    {
        return 1;
    }

    ts_buf_str(&nm->out, "{\"type\":\"tool_result\",\"tool_use_id\":");
    ts_raw(&nm->out, buf, &c->id);
    ts_buf_str(&nm->out, ",\"content\":");

    if (ts_object_member(buf, &a->content, "error_message", &message)
        == TS_OK && message.kind == TS_STRING && message.len > 2)
    {
        ts_raw(&nm->out, buf, &message);

    } else {
        ts_buf_str(&nm->out, "\"This search did not run. Search again.\"");
    }

    ts_buf_str(&nm->out, ",\"is_error\":true}");

    return nm->out.failed ? -1 : 0;
}


/* the tool_result of a call, from the references of its result block */
static int
ts_gateway_as_result(ts_normal_t *nm, const ts_block_t *c, long a)
{
    const ts_index_t  *ix;
    ts_val_t          *refs, name;
    ts_names_t         names;
    size_t             n, i;
    int                rc;

    ix = nm->ix;

    if (a >= 0) {
        rc = ts_error_as_result(nm, c, &ix->blocks[a]);
        if (rc != 1) {
            return rc;
        }
    }

    refs = NULL;
    n = 0;
    ts_names_init(&names);

    if (a >= 0 && ts_history_hosted_refs(ix, &ix->blocks[a], &refs, &n) != 0)
    {
        return -1;
    }

    for (i = 0; i < n; i++) {
        name = ts_history_ref_name(ix, &refs[i]);

        if (name.kind == TS_STRING
            && (ts_names_add(&names, ix->buf, &name) != 0
                || ts_names_add(&nm->found, ix->buf, &name) != 0))
        {
            break;
        }
    }

    rc = (i < n) ? -1 : 0;

    /* the servers are listed once per request, however many misses */
    if (rc == 0 && a >= 0 && names.n == 0 && !nm->have_servers) {
        nm->have_servers = 1;
        rc = ts_gateway_servers(&nm->servers, ix);
    }

    if (rc == 0) {
        rc = ts_gateway_result(&nm->out, ix->buf + c->id.off, c->id.len,
                               names.items, names.n, a >= 0, nm->refs,
                               &nm->servers, nm->defs);
    }

    if (rc == 0 && nm->refs && a >= 0 && names.n > 0) {
        rc = ts_buf_str(&nm->out, "," TS_BOUNDARY_BLOCK);
    }

    ts_names_free(&names);
    free(refs);

    return rc;
}


/* opens an assistant turn unless one is open */
static void
ts_open_turn(ts_normal_t *nm, int *open, int *first)
{
    if (!*open) {
        ts_buf_str(&nm->out, nm->out.len ? ",{\"role\":\"assistant\","
                                           "\"content\":["
                                         : "{\"role\":\"assistant\","
                                           "\"content\":[");
        *open = 1;
        *first = 1;
    }

    if (!*first) {
        ts_buf_str(&nm->out, ",");
    }

    *first = 0;
}


/*
 * One assistant message becomes a run of turns: the blocks up to each
 * search call and the call itself, then a user turn with its result.
 */
static int
ts_normalize_message(ts_normal_t *nm, const ts_message_t *m)
{
    const ts_index_t  *ix;
    const ts_block_t  *b;
    size_t             i;
    long               a;
    int                open, first;

    ix = nm->ix;
    ts_buf_reset(&nm->out);
    open = 0;
    first = 1;

    for (i = m->block_first; i < m->block_end; i++) {
        b = &ix->blocks[i];

        if (b->parent >= 0 || nm->used[i]) {
            continue;
        }

        ts_open_turn(nm, &open, &first);

        if (!ts_is_gateway_call(nm, m, i)) {
            ts_raw(&nm->out, ix->buf, &b->elem);
            continue;
        }

        a = ts_gateway_result_of(nm, m, i);
        if (a >= 0) {
            nm->used[a] = 1;
        }

        nm->calls++;
        ts_call_as_tool_use(&nm->out, ix, b, nm->tool);
        ts_buf_str(&nm->out, "]},{\"role\":\"user\",\"content\":[");

        if (ts_gateway_as_result(nm, b, a) != 0) {
            return -1;
        }

        ts_buf_str(&nm->out, "]}");
        open = 0;
    }

    if (open) {
        ts_buf_str(&nm->out, "]}");
    }

    if (nm->out.failed) {
        return -1;
    }

    return ts_edit_replace(&nm->edits, m->elem.off, m->elem.len,
                           nm->out.p, nm->out.len);
}


static int
ts_has_gateway_call(const ts_normal_t *nm, const ts_message_t *m)
{
    size_t  i;

    if (!ts_str_eq(nm->ix->buf, &m->role, "assistant")) {
        return 0;
    }

    for (i = m->block_first; i < m->block_end; i++) {
        if (ts_is_gateway_call(nm, m, i)) {
            return 1;
        }
    }

    return 0;
}


/* re-indexes the rewritten body and marks the tools the searches found */
static int
ts_normal_commit(ts_normal_t *nm, ts_request_t *rq)
{
    char            *body;
    size_t           len, i;
    ts_index_mem_t  *mem;

    len = ts_edits_size(&nm->edits, rq->ix.len);
    body = malloc(len ? len : 1);

    if (body == NULL
        || ts_edits_render(&nm->edits, rq->ix.buf, rq->ix.len, body) != 0)
    {
        free(body);
        return -1;
    }

    ts_names_seal(&nm->found);
    mem = rq->ix.mem;
    ts_index_free(&rq->ix);

    /*
     * The original body stays the caller's: found names point into it.
     * The new one is rq's from now on, so that rq->ix never points to
     * freed memory, also when it cannot be indexed.
     */
    rq->own = body;

    if (ts_index_build_in(&rq->ix, body, len, mem) != TS_OK) {
        return -1;
    }
    rq->loaded = calloc(rq->ix.ntools ? rq->ix.ntools : 1, 1);
    if (rq->loaded == NULL) {
        return -1;
    }

    for (i = 0; i < rq->ix.ntools; i++) {
        rq->loaded[i] = ts_names_has_val(&nm->found, rq->ix.buf,
                                         &rq->ix.tools[i].name)
                        ? TS_LOADED_HISTORY : 0;
    }

    return 0;
}


int
ts_gateway_normalize(ts_request_t *rq, const ts_policy_t *p)
{
    ts_normal_t  nm;
    size_t       i;
    int          rc;

    memset(&nm, 0, sizeof(ts_normal_t));
    nm.ix = &rq->ix;
    nm.tool = p->search_tool;
    nm.refs = rq->load_refs;
    nm.defs = rq->load_wrapper ? &rq->ix : NULL;
    ts_edits_init(&nm.edits);
    ts_buf_init(&nm.out, 0);
    ts_buf_init(&nm.servers, 0);
    ts_names_init(&nm.found);

    nm.used = calloc(rq->ix.nblocks ? rq->ix.nblocks : 1, 1);
    rc = nm.used ? 0 : -1;

    for (i = 0; rc == 0 && i < rq->ix.nmessages; i++) {
        if (ts_has_gateway_call(&nm, &rq->ix.messages[i])) {
            rc = ts_normalize_message(&nm, &rq->ix.messages[i]);
        }
    }

    if (rc == 0 && nm.calls > 0) {
        rq->history_searches = nm.calls;
        rc = ts_normal_commit(&nm, rq);
    }

    free(nm.used);
    ts_names_free(&nm.found);
    ts_buf_free(&nm.out);
    ts_buf_free(&nm.servers);
    ts_edits_free(&nm.edits);

    return rc;
}


static void
ts_name_list(ts_buf_t *b, const ts_name_t *names, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        if (i) {
            ts_buf_str(b, ", ");
        }

        ts_buf_escaped(b, names[i].p, names[i].len);
    }
}


int
ts_gateway_refs(const ts_index_t *ix, int mode, int upstream,
    const ts_policy_t *p)
{
    /* Vertex and Bedrock are not known to expand a client's references */
    return p->search != TS_SEARCH_HOSTED
           && (upstream == TS_UPSTREAM_ANTHROPIC
               || upstream == TS_UPSTREAM_COMPATIBLE)
           && ts_defer_artifacts_allowed(ix, mode, upstream, p);
}


void
ts_gateway_references(ts_buf_t *b, const ts_name_t *names, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        ts_buf_str(b, i ? ",{" : "{");
        ts_buf_str(b, "\"type\":\"tool_reference\",\"tool_name\":\"");
        ts_buf_escaped(b, names[i].p, names[i].len);
        ts_buf_str(b, "\"}");
    }
}


/* the length of the server of an MCP tool name, or 0 */
static size_t
ts_mcp_server(const ts_name_t *name)
{
    const char  *sep;

    if (!ts_name_is_mcp(name->p, name->len)) {
        return 0;
    }

    sep = ts_find(name->p + 5, name->len - 5, "__", 2);

    return sep ? (size_t) (sep - name->p) - 5 : 0;
}


/* the tools of the server of names[i], which are next to it: sorted */
static size_t
ts_server_tools(const ts_names_t *names, size_t i, size_t len)
{
    const ts_name_t  *a, *b;
    size_t            j;

    a = &names->items[i];

    for (j = i + 1; j < names->n; j++) {
        b = &names->items[j];

        if (ts_mcp_server(b) != len || memcmp(a->p, b->p, len + 5) != 0) {
            break;
        }
    }

    return j - i;
}


int
ts_gateway_servers(ts_buf_t *b, const ts_index_t *ix)
{
    ts_names_t  names;
    size_t      i, len, k, servers;

    ts_names_init(&names);

    for (i = 0; i < ix->ntools; i++) {
        if (ix->tools[i].name.kind == TS_STRING
            && ts_names_add(&names, ix->buf, &ix->tools[i].name) != 0)
        {
            ts_names_free(&names);
            return -1;
        }
    }

    ts_names_sort(&names);

    for (i = 0, servers = 0; i < names.n; i += k) {
        len = ts_mcp_server(&names.items[i]);
        k = len ? ts_server_tools(&names, i, len) : 1;

        if (len == 0 || servers++ >= TS_GATEWAY_SERVERS_MAX) {
            continue;
        }

        if (servers > 1) {
            ts_buf_str(b, ", ");
        }

        ts_buf_escaped(b, names.items[i].p + 5, len);
        ts_buf_str(b, " (");
        ts_buf_num(b, k);
        ts_buf_str(b, k == 1 ? " tool)" : " tools)");
    }

    if (servers > TS_GATEWAY_SERVERS_MAX) {
        ts_buf_str(b, ", and ");
        ts_buf_num(b, servers - TS_GATEWAY_SERVERS_MAX);
        ts_buf_str(b, " more servers");
    }

    ts_names_free(&names);

    return b->failed ? -1 : 0;
}


int
ts_gateway_result(ts_buf_t *b, const char *id, size_t id_len,
    const ts_name_t *names, size_t n, int ran, int refs,
    const ts_buf_t *servers, const ts_index_t *defs)
{
    ts_buf_str(b, "{\"type\":\"tool_result\",\"tool_use_id\":");
    ts_buf_add(b, id, id_len);

    if (refs && ran && n > 0) {
        /* Claude Code's shape: the references alone */
        ts_buf_str(b, ",\"content\":[");
        ts_gateway_references(b, names, n);
        ts_buf_str(b, "]}");

        return b->failed ? -1 : 0;
    }

    ts_buf_str(b, ",\"content\":\"");
    ts_gateway_found_text(b, names, n, ran, servers, defs);
    ts_buf_str(b, "\"}");

    return b->failed ? -1 : 0;
}


void
ts_gateway_select(ts_buf_t *b, const ts_name_t *names, size_t n)
{
    size_t  i;

    ts_buf_str(b, "select:");

    for (i = 0; i < n; i++) {
        ts_buf_str(b, i ? "," : "");
        ts_buf_add(b, names[i].p, names[i].len);
    }
}


void
ts_gateway_found_text(ts_buf_t *b, const ts_name_t *names, size_t n,
    int ran, const ts_buf_t *servers, const ts_index_t *defs)
{
    if (defs != NULL && ran && n > 0) {
        ts_wrapper_found_text(b, defs, names, n);

    } else {
        ts_gateway_result_text(b, names, n, ran, servers);
    }
}


void
ts_gateway_result_text(ts_buf_t *b, const ts_name_t *names, size_t n,
    int ran, const ts_buf_t *servers)
{
    if (!ran) {
        ts_buf_str(b, "This search did not run. Search again.");

    } else if (n == 0 && servers->len > 0) {
        ts_buf_str(b, "No tool matched. The tools come from these MCP "
                      "servers: ");
        ts_buf_add(b, servers->p, servers->len);
        ts_buf_str(b, ". Search again with a server's name and what the "
                      "tool does, or select: a name from the list in the "
                      "system prompt.");

    } else if (n == 0) {
        ts_buf_str(b, "No tool matched. Try other keywords, or select: a "
                      "name from the list in the system prompt.");

    } else {
        ts_buf_str(b, "Loaded: ");
        ts_name_list(b, names, n);
        ts_buf_str(b, ". Their definitions are in your tool list now; call "
                      "them directly.");
    }
}


void
ts_gateway_search_fields(ts_buf_t *b, const ts_policy_t *p,
    const char *schema)
{
    ts_buf_str(b, "\"name\":\"");
    ts_buf_str(b, p->search_tool);
    ts_buf_str(b, "\",\"description\":\"");
    ts_buf_str(b, ts_search_description);
    ts_buf_str(b, "\",\"");
    ts_buf_str(b, schema);
    ts_buf_str(b, "\":{\"type\":\"object\",\"properties\":"
                  "{\"query\":{\"type\":\"string\",\"description\":"
                  "\"select:name1,name2, or keywords\"},"
                  "\"max_results\":{\"type\":\"integer\",\"minimum\":1,"
                  "\"maximum\":");
    ts_buf_num(b, p->max_results);
    ts_buf_str(b, ",\"description\":\"how many tools to load (default 5)\"}},"
                  "\"required\":[\"query\"]}");
}


/* a deferrable tool loaded on demand: it follows the search function */
static int
ts_gateway_openai_found(const ts_request_t *rq, size_t i)
{
    return !rq->defer[i] && rq->loaded[i]
           && (rq->deferrable[i] & TS_FACT_DEFERRABLE);
}


/*
 * The tools loaded on demand, after the search function: those history
 * calls in the order of their first calls, then the others (found by this
 * request's searches, named by tool_choice) in the client's order.  So a
 * tool found later follows those found before it, on the loop's call
 * that found it and on the client's turns after it alike, and a discovery
 * leaves their definitions in the cached prefix (OpenAI and vLLM cache
 * the prompt up to its first change).
 */
static void
ts_gateway_openai_found_tools(const ts_request_t *rq, ts_buf_t *b)
{
    const ts_index_t  *ix;
    const ts_val_t    *e;
    uint32_t           rank, r;
    size_t             i;

    ix = &rq->ix;

    /* rank 0 last: the tools history does not call */
    for (rank = 1; rank <= rq->ncalled + 1; rank++) {
        for (i = 0; i < ix->ntools; i++) {
            r = rq->called ? rq->called[i] : 0;

            if (ts_gateway_openai_found(rq, i)
                && r == (rank <= rq->ncalled ? rank : 0))
            {
                e = &ix->tools[i].elem;
                ts_buf_str(b, ",");
                ts_buf_add(b, ix->buf + e->off, e->len);
            }
        }
    }
}


int
ts_gateway_openai_tools(ts_request_t *rq, const ts_policy_t *p,
    const char *open, const char *close, ts_buf_t *b)
{
    const ts_index_t  *ix;
    const ts_val_t    *e;
    size_t             i;

    ix = &rq->ix;
    ts_buf_reset(b);
    ts_buf_str(b, "[");

    for (i = 0; i < ix->ntools; i++) {
        e = &ix->tools[i].elem;

        if (!rq->defer[i] && !ts_gateway_openai_found(rq, i)) {
            ts_buf_add(b, ix->buf + e->off, e->len);
            ts_buf_str(b, ",");
        }
    }

    ts_buf_str(b, open);
    ts_gateway_search_fields(b, p, "parameters");
    ts_buf_str(b, close);

    /* with the call wrapper, found functions stay deferred: none follow */
    if (rq->load_wrapper) {
        ts_buf_str(b, ",");
        ts_buf_str(b, open);
        ts_wrapper_tool(b, p, "parameters");
        ts_buf_str(b, close);
    }

    ts_gateway_openai_found_tools(rq, b);
    ts_buf_str(b, "]");

    return b->failed ? -1 : 0;
}


/*
 * The cache breakpoints of a body, at most: the members named
 * cache_control (a string holding the name escapes its quotes, so only
 * keys count; keys of that name inside a schema count too, which only
 * makes room look scarcer).
 */
static size_t
ts_gateway_breakpoints(const ts_index_t *ix)
{
    static const char   key[] = "\"cache_control\":";
    const char         *p, *end;
    size_t              n;

    n = 0;
    p = ix->buf;
    end = ix->buf + ix->len;

    while ((p = ts_find(p, end - p, key, sizeof(key) - 1)) != NULL) {
        n++;
        p += sizeof(key) - 1;
    }

    return n;
}


/*
 * The search tool's cache breakpoint: the one of a tool left out or
 * found, else one of the gateway's own where the client put none in
 * tools[] and the API's limit leaves room, so that the tools before the
 * found ones stay cached on every call and turn.
 */
static void
ts_gateway_search_cache(ts_buf_t *b, const ts_index_t *ix,
    const ts_val_t *moved, int kept)
{
    if (kept) {
        return;
    }

    if (moved != NULL) {
        ts_buf_str(b, ",\"cache_control\":");
        ts_raw(b, ix->buf, moved);

    } else if (ts_gateway_breakpoints(ix) < TS_MAX_BREAKPOINTS) {
        ts_buf_str(b, TS_GATEWAY_BREAKPOINT);
    }
}


/*
 * The search tool, and with the call wrapper the wrapper after it: the
 * last of them carries the breakpoint, so that the whole fixed tools[]
 * stays cached.
 */
static void
ts_gateway_search_tool(ts_buf_t *b, const ts_policy_t *p,
    const ts_request_t *rq, const ts_val_t *moved, int kept)
{
    ts_buf_str(b, "{");
    ts_gateway_search_fields(b, p, "input_schema");

    if (rq->load_wrapper) {
        ts_buf_str(b, "},{");
        ts_wrapper_tool(b, p, "input_schema");
    }

    ts_gateway_search_cache(b, &rq->ix, moved, kept);
    ts_buf_str(b, "}");
}


/*
 * A found tool after the search tool: its cache breakpoint cannot stay
 * (it would add one to the client's); with references, deferred.
 */
static void
ts_found_copy(ts_buf_t *b, const char *buf, const ts_tool_t *t, int as_ref)
{
    size_t  end, from, to;

    end = t->elem.off + t->elem.len - 1;
    from = end;
    to = end;

    if (t->cache_control.val.kind != TS_NONE) {
        ts_member_span(buf, &t->cache_control, &from, &to);
    }

    ts_buf_add(b, buf + t->elem.off, from - t->elem.off);
    ts_buf_add(b, buf + to, end - to);
    ts_buf_str(b, as_ref ? TS_DEFER_FLAG "}" : "}");
}


/*
 * A tool after the search tool: found by a search of this request or of
 * history, or deferrable and called by history, which is what is left of
 * a search whose blocks the client dropped (toolsearch_search_blocks
 * strip).  The loop's call after a search and the client's next turn
 * then send the same tools[].
 */
static int
ts_after_search(const ts_request_t *rq, size_t i)
{
    return !rq->defer[i]
           && ((rq->loaded && rq->loaded[i])
               || (rq->deferrable[i] & TS_CALLED));
}


/*
 * tools[] keeps the loaded tools byte for byte, then the search tool,
 * then the tools found, in the client's order, so that finding one
 * changes no byte before it: the prefix up to the search tool stays
 * cached.  Where they go among the found ones makes no difference to
 * the cache: no breakpoint stands between them and the system prompt.
 * A cache breakpoint of a tool left out or found moves to the search
 * tool, whatever was found.  With the call wrapper, found tools stay
 * deferred: the search tool and the wrapper end tools[], which no
 * search changes.
 */
static int
ts_gateway_tools(ts_request_t *rq, const ts_policy_t *p, ts_buf_t *b)
{
    const ts_index_t  *ix;
    const ts_tool_t   *t;
    const ts_val_t    *moved;
    size_t             i;
    int                kept_cache, as_ref;

    ix = &rq->ix;
    moved = NULL;
    kept_cache = 0;
    ts_buf_reset(b);
    ts_buf_str(b, "[");

    for (i = 0; i < ix->ntools; i++) {
        t = &ix->tools[i];

        if (rq->defer[i] || ts_after_search(rq, i)) {
            if (t->cache_control.val.kind != TS_NONE) {
                moved = &t->cache_control.val;
            }

            continue;
        }

        kept_cache |= t->cache_control.val.kind != TS_NONE;
        ts_raw(b, ix->buf, &t->elem);
        ts_buf_str(b, ",");
    }

    ts_gateway_search_tool(b, p, rq, moved, kept_cache);

    for (i = 0; i < ix->ntools; i++) {
        if (!ts_after_search(rq, i)) {
            continue;
        }

        t = &ix->tools[i];

        /* a tool history only calls has no reference to load it */
        as_ref = rq->load_refs && rq->loaded && rq->loaded[i];

        if (as_ref
            && ts_names_add(&rq->referenced, ix->buf, &t->name) != 0)
        {
            return -1;
        }

        ts_buf_str(b, ",");
        ts_found_copy(b, ix->buf, t, as_ref);
    }

    ts_names_seal(&rq->referenced);
    ts_buf_str(b, "]");

    return b->failed ? -1 : 0;
}


/*
 * What the search tool can load: the deferrable tools, found or not,
 * sorted, so that the text is the same on every turn of a conversation
 * whatever its searches found (it follows the client's cache
 * breakpoints in the system prompt).  A summary that names the tools
 * found keeps them loaded after a compaction (ts_history_named).
 */
int
ts_gateway_announcement(const ts_index_t *ix,
    const unsigned char *deferrable, const ts_policy_t *p, ts_buf_t *b)
{
    ts_names_t  names;
    size_t      i, shown;

    ts_names_init(&names);

    for (i = 0; i < ix->ntools; i++) {
        if (deferrable[i] && ts_names_add(&names, ix->buf,
                                              &ix->tools[i].name) != 0)
        {
            ts_names_free(&names);
            return -1;
        }
    }

    ts_names_sort(&names);
    ts_buf_reset(b);
    ts_buf_str(b, "Call ");
    ts_buf_str(b, p->search_tool);
    ts_buf_str(b, " (select:<name> or keywords) to load one of these tools "
                  "before you call it, unless it is in your tool list "
                  "already; name the tools you loaded in any summary of "
                  "this conversation: ");

    for (shown = 0; shown < names.n; shown++) {
        if (b->len + names.items[shown].len > TS_GATEWAY_ANNOUNCE_MAX) {
            break;
        }

        ts_name_list(b, &names.items[shown], 1);

        if (shown + 1 < names.n) {
            ts_buf_str(b, ", ");
        }
    }

    if (shown < names.n) {
        ts_buf_str(b, "and ");
        ts_buf_num(b, names.n - shown);
        ts_buf_str(b, " more");
    }

    ts_buf_str(b, ".");
    ts_names_free(&names);

    return b->failed ? -1 : 0;
}


/* the announcement (text) goes after the system prompt the client wrote */
static int
ts_gateway_system(ts_request_t *rq, const ts_buf_t *text, ts_buf_t *b)
{
    ts_edits_t         *e = &rq->edits;
    const ts_index_t   *ix = &rq->ix;
    const ts_member_t  *sys;
    ts_val_t           *items;
    size_t              n;
    int                 rc;

    sys = ts_index_top(ix, TS_TOP_SYSTEM);
    ts_buf_reset(b);

    if (sys == NULL || sys->val.kind == TS_NULL) {
        ts_buf_str(b, "\"system\":\"");
        ts_buf_add(b, text->p, text->len);
        ts_buf_str(b, "\",");

        return b->failed ? -1
               : ts_edit_replace(e, ix->members[0].off, 0, b->p, b->len);
    }

    if (sys->val.kind == TS_STRING) {
        ts_buf_str(b, "\\n\\n");
        ts_buf_add(b, text->p, text->len);

        return b->failed ? -1
               : ts_edit_replace(e, sys->val.off + sys->val.len - 1, 0,
                                 b->p, b->len);
    }

    if (sys->val.kind != TS_ARRAY
        || ts_container_items(ix->buf, &sys->val, &items, &n) != TS_OK)
    {
        return 0;
    }

    ts_buf_str(b, "{\"type\":\"text\",\"text\":\"");
    ts_buf_add(b, text->p, text->len);
    ts_buf_str(b, "\"}");

    rc = b->failed ? -1
         : ts_edit_append_item(e, &sys->val, n ? &items[n - 1] : NULL,
                               b->p, b->len);
    free(items);

    return rc;
}


/* the turns of this request's earlier searches go after its messages */
static int
ts_gateway_tail(ts_edits_t *e, const ts_index_t *ix, const ts_input_t *in)
{
    const ts_member_t  *msgs;

    msgs = ts_index_top(ix, TS_TOP_MESSAGES);

    if (in->tail_len == 0 || msgs == NULL) {
        return 0;
    }

    return ts_edit_append_item(e, &msgs->val,
                               ix->nmessages
                               ? &ix->messages[ix->nmessages - 1].elem
                               : NULL,
                               in->tail, in->tail_len);
}


/* a deferrable tool history calls, to be loaded: restorable, or -1 */
static long
ts_restorable_tool(const ts_request_t *rq, const ts_block_t *b)
{
    const ts_index_t  *ix;
    const ts_val_t    *name;
    size_t             i;

    ix = &rq->ix;

    if (b->parent >= 0 || b->id.kind != TS_STRING
        || b->name.kind != TS_STRING
        || !ts_str_eq(ix->buf, &b->type, "tool_use")
        || !ts_str_eq(ix->buf, &ix->messages[b->message].role, "assistant"))
    {
        return -1;
    }

    for (i = 0; i < ix->ntools; i++) {
        name = &ix->tools[i].name;

        /*
         * With the call wrapper the tool stays deferred, and a search of
         * this loop that found it again restores it still: the loop's
         * calls keep the history its first call sent.
         */
        if ((rq->deferrable[i] & TS_CALLED)
            && (rq->load_wrapper
                ? rq->defer[i] && !(rq->loaded[i] & TS_LOADED_HISTORY)
                : !rq->defer[i] && !rq->loaded[i])
            && name->kind == TS_STRING
            && ts_str_same_raw(ix->buf, name, &b->name))
        {
            return ts_defer_restorable(ix->buf + name->off + 1,
                                       name->len - 2) ? (long) i : -1;
        }
    }

    return -1;
}


/*
 * One search of the tools names, put before the call at block first:
 * its tool_use ends the assistant turn, a user turn answers it with
 * their references, and the assistant turn goes on with its calls,
 * which the client's next user turn answers as before.
 */
static int
ts_restore_gateway_search(ts_request_t *rq, const ts_policy_t *p,
    const ts_block_t *first, const ts_names_t *names, ts_buf_t *t)
{
    ts_buf_t  id, none;
    int       rc;

    ts_buf_init(&id, 0);
    ts_buf_init(&none, 0);
    ts_buf_reset(t);

    ts_buf_str(&id, "\"");
    ts_defer_restored_id(&id, rq->ix.buf, &first->id, "toolu_search_");
    ts_buf_str(&id, "\"");

    ts_buf_str(t, "{\"type\":\"tool_use\",\"id\":");
    ts_buf_add(t, id.p, id.len);
    ts_buf_str(t, ",\"name\":\"");
    ts_buf_str(t, p->search_tool);
    ts_buf_str(t, "\",\"input\":{\"query\":\"");
    ts_gateway_select(t, names->items, names->n);

    ts_buf_str(t, "\"}}]},{\"role\":\"user\",\"content\":[");

    rc = (id.failed || ts_gateway_result(t, id.p, id.len, names->items,
                                         names->n, 1, rq->load_refs, &none,
                                         rq->load_wrapper ? &rq->ix : NULL)
                       != 0)
         ? -1 : 0;

    ts_buf_str(t, rq->load_refs ? "," TS_BOUNDARY_BLOCK "]},"
                                : "]},");
    ts_buf_str(t, "{\"role\":\"assistant\",\"content\":[");

    if (rc == 0 && !t->failed) {
        rq->searches_restored++;
        rc = ts_edit_replace(&rq->edits, first->elem.off, 0, t->p, t->len);

    } else {
        rc = -1;
    }

    ts_buf_free(&id);

    return rc;
}


/* the restorable tools message m calls first; its first call at *first */
static int
ts_restorable_calls(ts_request_t *rq, const ts_message_t *m,
    unsigned char *done, ts_names_t *names, const ts_block_t **first)
{
    const ts_index_t  *ix;
    const ts_block_t  *b;
    size_t             k;
    long               tool;

    ix = &rq->ix;
    *first = NULL;

    for (k = m->block_first; k < m->block_end; k++) {
        b = &ix->blocks[k];

        if (b->parent >= 0 || !ts_str_eq(ix->buf, &b->type, "tool_use")) {
            continue;
        }

        if (*first == NULL) {
            *first = b;

            /* the search's id derives from it: none, nothing restored */
            if (b->id.kind != TS_STRING) {
                return 0;
            }
        }

        tool = ts_restorable_tool(rq, b);

        if (tool >= 0 && !done[tool]) {
            done[tool] = 1;

            if (ts_names_add(names, ix->buf, &ix->tools[tool].name) != 0) {
                return -1;
            }
        }
    }

    return 0;
}


/*
 * A client that drops the search blocks (toolsearch_search_blocks strip,
 * or its own choice) sends back the calls of the tools the gateway's
 * searches found, not the searches.  Where found tools load as
 * references, the search is restored before the first call of each, as
 * on the hosted path (docs/decisions.md): the same bytes on every turn,
 * derived from the calls alone, after the prefix the client's cache
 * holds, so that the tool stays deferred, as the loop's call that found
 * it sent it, and tools[] keeps its bytes.  With the call wrapper, the
 * search's result gives the definitions as text, as the loop's does.  A
 * name the API would not take in a reference or a query is loaded in
 * full, as before.
 */
static int
ts_gateway_restore(ts_request_t *rq, const ts_policy_t *p)
{
    const ts_index_t  *ix;
    const ts_block_t  *first;
    unsigned char     *done;
    ts_names_t         names;
    ts_buf_t           t;
    size_t             i, k;
    int                rc;

    ix = &rq->ix;

    if ((!rq->load_refs && !rq->load_wrapper) || ix->ntools == 0) {
        return 0;
    }

    if (rq->loaded == NULL) {
        rq->loaded = calloc(ix->ntools, 1);
        if (rq->loaded == NULL) {
            return -1;
        }
    }

    done = calloc(ix->ntools, 1);
    if (done == NULL) {
        return -1;
    }

    ts_buf_init(&t, 0);
    rc = 0;

    for (i = 0; rc == 0 && i < ix->nmessages; i++) {
        ts_names_init(&names);
        rc = ts_restorable_calls(rq, &ix->messages[i], done, &names, &first);

        if (rc == 0 && names.n > 0) {
            rc = ts_restore_gateway_search(rq, p, first, &names, &t);
        }

        ts_names_free(&names);
    }

    /* what is restored loads as the loop's searches load it */
    for (k = 0; rc == 0 && k < ix->ntools; k++) {
        rq->loaded[k] |= done[k] ? TS_LOADED_HISTORY : 0;
    }

    ts_buf_free(&t);
    free(done);

    return rc;
}


/*
 * toolsearch_cache_last_message: a breakpoint of the gateway's on the
 * last block of the last message (text or tool_result, none there yet),
 * where the client put one or two and so leaves room for it and the
 * search tool's: each request then writes its conversation to the
 * cache, and the next reads it, for clients that cache less of it
 * themselves (cline: its last user text, which tool results never
 * move), whose every loop call would send it uncached again.
 */
static int
ts_gateway_cache_last(ts_request_t *rq)
{
    const ts_index_t   *ix;
    const ts_message_t *m;
    const ts_block_t   *b;
    ts_val_t            cc;
    size_t              i, n;

    ix = &rq->ix;

    /*
     * A client with no breakpoint may not want the cache (or an upstream
     * that takes no cache_control): none is added for it
     */
    n = ts_gateway_breakpoints(ix);

    if (ix->nmessages == 0 || n == 0 || n > TS_MAX_BREAKPOINTS - 2) {
        return 0;
    }

    m = &ix->messages[ix->nmessages - 1];
    b = NULL;

    for (i = m->block_first; i < m->block_end; i++) {
        if (ix->blocks[i].parent < 0) {
            b = &ix->blocks[i];
        }
    }

    if (b == NULL
        || !(ts_str_eq(ix->buf, &b->type, "text")
             || ts_str_eq(ix->buf, &b->type, "tool_result"))
        || ts_object_member(ix->buf, &b->elem, "cache_control", &cc) != TS_OK
        || cc.kind != TS_NONE)
    {
        return 0;
    }

    return ts_edit_replace(&rq->edits, b->elem.off + b->elem.len - 1, 0,
                           TS_GATEWAY_BREAKPOINT,
                           sizeof(TS_GATEWAY_BREAKPOINT) - 1);
}


const char *
ts_gateway_found_name(const ts_request_t *rq)
{
    if (rq->decision != TS_DECISION_DEFERRED_GATEWAY) {
        return "none";
    }

    return rq->load_refs ? "references"
                         : rq->load_wrapper ? "wrapper" : "tools";
}


int
ts_gateway_apply(ts_request_t *rq, const ts_input_t *in)
{
    static const ts_gateway_form_t  messages = {
        ts_gateway_tools, ts_gateway_system
    };

    /* before tools[] is written: what is restored loads as found */
    if (ts_gateway_restore(rq, in->policy) != 0
        || (rq->load_wrapper && ts_wrapper_history(rq) != 0)
        || (in->policy->cache_last_message && ts_gateway_cache_last(rq) != 0))
    {
        return -1;
    }

    return ts_gateway_apply_as(rq, in, &messages);
}


int
ts_gateway_apply_as(ts_request_t *rq, const ts_input_t *in,
    const ts_gateway_form_t *form)
{
    const ts_member_t  *tools;
    ts_buf_t            a, b;
    int                 rc;

    ts_buf_init(&a, 0);
    ts_buf_init(&b, 0);

    tools = ts_index_top(&rq->ix, TS_TOP_TOOLS);

    rc = (form->tools(rq, in->policy, &a) == 0
          && ts_edit_replace(&rq->edits, tools->val.off, tools->val.len, a.p,
                             a.len) == 0
          && ts_gateway_announcement(&rq->ix, rq->deferrable, in->policy,
                                     &a) == 0
          && form->system(rq, &a, &b) == 0
          && ts_gateway_tail(&rq->edits, &rq->ix, in) == 0) ? 0 : -1;

    ts_buf_free(&a);
    ts_buf_free(&b);

    return rc;
}
