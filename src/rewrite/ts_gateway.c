/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Gateway-executed search, request side, in a Messages body: tools[]
 * with the search tool (its cache breakpoint, the loaded tools kept in
 * their places), the announcement after the system prompt, the turns of
 * this request's earlier searches, the searches a client dropped restored,
 * the cache breakpoint on the last message; the edits in a format's form
 * (ts_gateway_apply_as) for the OpenAI formats too.
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


/* the cache breakpoints the API takes in one request */
#define TS_MAX_BREAKPOINTS  4

/* a breakpoint of the gateway's own, as a member of a block */
#define TS_GATEWAY_BREAKPOINT  ",\"cache_control\":{\"type\":\"ephemeral\"}"


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
        ts_gateway_raw(b, ix->buf, moved);

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
        ts_gateway_raw(b, ix->buf, &t->elem);
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
