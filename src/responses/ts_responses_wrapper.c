/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Responses, request side: the call wrapper's next turn.  Each
 * function_call item of a deferred function goes back as the model's call
 * of call_tool, the search that found it restored before its first call
 * (as src/chat/ts_chat_wrapper.c does for Chat Completions).
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


int
ts_rs_wrapper_history(ts_request_t *rq, const ts_input_t *in)
{
    ts_rs_wrapper_load(rq);

    /*
     * A stored exchange's continuation sends the searches' outputs
     * alone: the upstream holds the history as the first call sent it
     */
    if (in->resume != NULL && in->tail_len > 0) {
        return 0;
    }

    return ts_wrapper_turns(rq, in->policy, ts_rs_wrapper_item);
}
