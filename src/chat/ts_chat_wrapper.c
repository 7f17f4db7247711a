/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Chat Completions, the call wrapper's next turn (rewrite/ts_wrapper.h).
 * The client sent back its calls of the functions the wrapper called for
 * it; they stay deferred, so each call becomes the upstream's call of
 * call_tool again, its arguments the string of {"name", "arguments"}
 * with the client's arguments decoded, and the search that found them
 * is restored before the assistant message of the first call of each:
 * an assistant message with the search function's call (select: of the
 * names, its id derived from a call's) and a tool message with their
 * definitions as text, as the loop's own search turn has them.  Every
 * later turn derives the same bytes from the same calls.  A call whose
 * arguments are no JSON object, or a name no select: can carry, loads
 * its function in tools[] instead, as without the wrapper.
 */

#include <stdlib.h>
#include <string.h>

#include "scan/ts_str.h"
#include "rewrite/ts_defer.h"
#include "rewrite/ts_gateway.h"
#include "rewrite/ts_wrapper.h"
#include "chat/ts_chat.h"


/* a call's arguments string */
static int
ts_chat_wrapper_args(const char *buf, const ts_block_t *b, ts_val_t *args)
{
    ts_val_t  fn;

    return ts_object_member(buf, &b->elem, "function", &fn) == TS_OK
           && fn.kind == TS_OBJECT
           && ts_object_member(buf, &fn, "arguments", args) == TS_OK
           && args->kind == TS_STRING;
}


/* 1 when a call of history can go through the wrapper */
static int
ts_chat_wrapper_fits(const ts_request_t *rq, const ts_block_t *b, long k)
{
    ts_val_t  args;

    return b->id.kind == TS_STRING
           && ts_chat_wrapper_args(rq->ix.buf, b, &args)
           && ts_wrapper_turn_fits(&rq->ix, k, &args);
}


/*
 * The search turns restored before message m, for the tools its calls
 * are the first of (names), the id derived from the call at b
 */
static int
ts_chat_wrapper_restore(ts_request_t *rq, const ts_policy_t *p,
    const ts_message_t *m, const ts_block_t *b, const ts_names_t *names,
    ts_buf_t *t)
{
    ts_buf_t  none;
    size_t    id, idlen;

    ts_buf_init(&none, 0);
    ts_buf_reset(t);

    ts_buf_str(t, "{\"role\":\"assistant\",\"content\":null,"
                  "\"tool_calls\":[{\"id\":\"");
    id = t->len;
    ts_defer_restored_id(t, rq->ix.buf, &b->id, "call_search_");
    idlen = t->len - id;
    ts_buf_str(t, "\",\"type\":\"function\",\"function\":{\"name\":\"");
    ts_buf_str(t, p->search_tool);
    ts_buf_str(t, "\",\"arguments\":\"{\\\"query\\\":\\\"");
    ts_gateway_select(t, names->items, names->n);

    ts_buf_str(t, "\\\"}\"}}]},{\"role\":\"tool\",\"tool_call_id\":\"");

    /* the id again: room first, as adding may move what it copies */
    if (ts_buf_space(t, idlen) == 0) {
        ts_buf_add(t, t->p + id, idlen);
    }

    ts_buf_str(t, "\",\"content\":\"");
    ts_gateway_found_text(t, names->items, names->n, 1, &none, &rq->ix);
    ts_buf_str(t, "\"},");

    if (t->failed) {
        return -1;
    }

    rq->searches_restored++;

    return ts_edit_replace(&rq->edits, m->elem.off, 0, t->p, t->len);
}


/* the calls of one assistant message; the first of a tool restored */
static int
ts_chat_wrapper_message(ts_request_t *rq, const ts_policy_t *p, size_t msg,
    unsigned char *done, ts_buf_t *t)
{
    const ts_index_t  *ix;
    const ts_message_t  *m;
    const ts_block_t  *b, *first;
    ts_val_t           args;
    ts_names_t         names;
    size_t             i;
    long               k;
    int                rc;

    ix = &rq->ix;
    m = &ix->messages[msg];
    first = NULL;
    rc = 0;
    ts_names_init(&names);

    for (i = m->block_first; rc == 0 && i < m->block_end; i++) {
        b = &ix->blocks[i];
        k = ts_wrapper_deferred(rq, &b->name);

        if (k < 0) {
            continue;
        }

        first = first ? first : b;

        if (!done[k]) {
            done[k] = 1;
            rc = ts_names_add(&names, ix->buf, &ix->tools[k].name);
        }

        if (rc == 0 && !ts_chat_wrapper_args(ix->buf, b, &args)) {
            rc = -1;
        }

        rc = rc ? rc : ts_wrapper_turn_call(rq, &b->name, &args, t);
    }

    if (rc == 0 && names.n > 0) {
        rc = ts_chat_wrapper_restore(rq, p, m, first, &names, t);
    }

    ts_names_free(&names);

    return rc;
}


/*
 * A deferred function of which a call cannot go through the wrapper is
 * loaded, after the search function, as without it
 */
static void
ts_chat_wrapper_load(ts_request_t *rq)
{
    const ts_index_t  *ix;
    const ts_block_t  *b;
    size_t             i;
    long               k;

    ix = &rq->ix;

    for (i = 0; i < ix->nblocks; i++) {
        b = &ix->blocks[i];
        k = ts_wrapper_deferred(rq, &b->name);

        if (k >= 0 && !ts_chat_wrapper_fits(rq, b, k)) {
            ts_wrapper_declare(rq, (size_t) k);
        }
    }
}


int
ts_chat_wrapper_history(ts_request_t *rq, const ts_policy_t *p)
{
    if (rq->ix.nblocks == 0) {
        return 0;
    }

    ts_chat_wrapper_load(rq);

    return ts_wrapper_turns(rq, p, ts_chat_wrapper_message);
}
