/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The call wrapper's calls in the loop (rewrite/ts_wrapper.h): checked
 * when they end, a valid one given to the client as a call of its tool
 * (the same id, the arguments its input), an invalid one answered here
 * with why, so that the model corrects it without the client seeing it.
 */

#include <stdlib.h>
#include <string.h>

#include "loop/ts_loop_state.h"
#include "rewrite/ts_wrapper.h"


/* the client's tool_use of the tool a valid call names */
static int
ts_loop_wrapper_emit(ts_loop_t *lp, ts_lblock_t *b,
    const ts_wrapper_call_t *call, ts_buf_t *out)
{
    ts_buf_t  blk;
    long      k;
    int       rc;

    if (!lp->sse) {
        ts_buf_str(&lp->content, lp->content.len ? "," : "");
        ts_buf_str(&lp->content, "{\"type\":\"tool_use\",\"id\":");
        ts_buf_str(&lp->content, b->id);
        ts_buf_str(&lp->content, ",\"name\":");
        ts_buf_add(&lp->content, call->buf + call->name.off, call->name.len);
        ts_buf_str(&lp->content, ",\"input\":");
        ts_buf_add(&lp->content, call->buf + call->args.off, call->args.len);
        ts_buf_str(&lp->content, "}");

        return lp->content.failed ? -1 : 0;
    }

    /* held from its start, it takes the next index when it ends */
    k = lp->next_index++;
    b->client = k;
    ts_buf_init(&blk, 0);

    ts_buf_str(&blk, "{\"type\":\"tool_use\",\"id\":");
    ts_buf_str(&blk, b->id);
    ts_buf_str(&blk, ",\"name\":");
    ts_buf_add(&blk, call->buf + call->name.off, call->name.len);
    ts_buf_str(&blk, ",\"input\":{}");
    ts_loop_sse_block_event(out, "content_block_start", k,
                            ",\"content_block\":", &blk);

    ts_buf_reset(&blk);
    ts_buf_str(&blk, "{\"type\":\"input_json_delta\",\"partial_json\":\"");
    ts_buf_escaped(&blk, call->buf + call->args.off, call->args.len);
    ts_buf_str(&blk, "\"");
    ts_loop_sse_block_event(out, "content_block_delta", k, ",\"delta\":",
                            &blk);
    ts_loop_sse_block_event(out, "content_block_stop", k, "", NULL);

    rc = (blk.failed || out->failed) ? -1 : 0;
    ts_buf_free(&blk);

    return rc;
}


/* a copy of the call's input when it is an object, else of {} */
static char *
ts_loop_wrapper_input(const char *input, size_t len)
{
    ts_val_t   v;
    char      *s;

    if (len == 0 || ts_value_parse(input, len, &v) != TS_OK
        || v.kind != TS_OBJECT)
    {
        input = "{}";
        len = 2;
    }

    s = malloc(len + 1);
    if (s != NULL) {
        memcpy(s, input, len);
        s[len] = '\0';
    }

    return s;
}


int
ts_loop_wrapper_end(ts_loop_t *lp, ts_lblock_t *b, const char *input,
    size_t len, ts_buf_t *out)
{
    ts_wrapper_call_t  call;
    ts_buf_t           err;
    int                rc;

    ts_buf_init(&err, 0);

    if (ts_wrapper_check(&lp->rq.ix, input, len, &call, &err) == 0) {
        lp->ans.client_tool = 1;
        rc = ts_loop_wrapper_emit(lp, b, &call, out);
        ts_buf_free(&err);

        return rc;
    }

    /* held as a search is: the answer's end decides */
    b->search = 1;
    lp->ans.held++;
    b->input = ts_loop_wrapper_input(input, len);

    if (ts_buf_add(&err, "", 1) == 0) {
        b->error = err.p;

    } else {
        ts_buf_free(&err);
    }

    lp->ans.broken |= (b->input == NULL || b->error == NULL);

    return 0;
}


/* an invalid call's answer: its error as the tool_result the model reads */
static void
ts_loop_wrapper_refuse(const ts_lblock_t *b, ts_buf_t *results)
{
    ts_buf_str(results, results->len ? "," : "");
    ts_buf_str(results, "{\"type\":\"tool_result\",\"tool_use_id\":");
    ts_buf_str(results, b->id);
    ts_buf_str(results, ",\"content\":\"");
    ts_buf_str(results, b->error);
    ts_buf_str(results, "\",\"is_error\":true}");
}


int
ts_loop_wrapper_results(ts_loop_t *lp, int go, ts_buf_t *results,
    ts_buf_t *out)
{
    ts_wrapper_call_t  call;
    ts_lblock_t       *b;
    ts_buf_t           err;
    size_t             i;
    int                passed, refused;

    passed = 0;
    refused = 0;
    ts_buf_init(&err, 0);

    for (i = 0; i < lp->ans.nblocks; i++) {
        b = &lp->ans.blocks[i];

        if (!b->wrapper || !b->search) {
            continue;
        }

        if (go) {
            ts_loop_wrapper_refuse(b, results);
            refused = 1;
            continue;
        }

        /*
         * The loop cannot go on (a client tool in the same answer, the
         * budget spent): a call of a tool of the request reaches the
         * client, whose tool judges its arguments; nothing is dropped
         * that the client could run.
         */
        if (lp->ans.broken) {
            continue;
        }

        ts_buf_reset(&err);
        (void) ts_wrapper_check(&lp->rq.ix, b->input, strlen(b->input),
                                &call, &err);

        if (call.tool >= 0) {
            passed = 1;
            lp->ans.broken |= ts_loop_wrapper_emit(lp, b, &call, out) != 0;
        }
    }

    lp->refusals += refused;
    ts_buf_free(&err);

    return passed;
}
