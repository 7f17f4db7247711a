/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Gateway-executed search in the OpenAI formats (Chat Completions,
 * Responses): tools[] with the search function, the loaded deferrable
 * tools after it (ts_gateway_openai_tools).
 */

#include <stdlib.h>
#include <string.h>

#include "rewrite/ts_defer.h"
#include "rewrite/ts_facts.h"
#include "rewrite/ts_gateway.h"
#include "rewrite/ts_wrapper.h"
#include "messages/ts_history.h"
#include "scan/ts_str.h"


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
