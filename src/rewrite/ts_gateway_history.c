/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Gateway-executed search, request side: the history normalised.  The
 * searches of earlier turns, in an assistant message beside other blocks,
 * become ordinary tool_use and tool_result turns of their own
 * (ts_gateway_normalize); the tools they found stay loaded.
 */

#include <stdlib.h>
#include <string.h>

#include "rewrite/ts_defer.h"
#include "rewrite/ts_facts.h"
#include "rewrite/ts_gateway.h"
#include "rewrite/ts_gateway_int.h"
#include "rewrite/ts_wrapper.h"
#include "messages/ts_history.h"
#include "scan/ts_str.h"


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


void
ts_gateway_raw(ts_buf_t *b, const char *buf, const ts_val_t *v)
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
    ts_gateway_raw(b, ix->buf, &c->id);
    ts_buf_str(b, ",\"name\":\"");
    ts_buf_str(b, tool);
    ts_buf_str(b, "\",\"input\":");

    if (ts_object_member(ix->buf, &c->elem, "input", &input) == TS_OK
        && input.kind == TS_OBJECT)
    {
        ts_gateway_raw(b, ix->buf, &input);

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
    ts_gateway_raw(&nm->out, buf, &c->id);
    ts_buf_str(&nm->out, ",\"content\":");

    if (ts_object_member(buf, &a->content, "error_message", &message)
        == TS_OK && message.kind == TS_STRING && message.len > 2)
    {
        ts_gateway_raw(&nm->out, buf, &message);

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
            ts_gateway_raw(&nm->out, ix->buf, &b->elem);
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
