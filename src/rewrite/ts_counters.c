/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The counters the engine fills, expanded from the table of
 * rewrite/ts_counters.h.
 */

#include "rewrite/ts_counters.h"
#include "messages/ts_history.h"


#define TS_FROM_IX(name, expr)    count[TS_COUNTER_##name] = rq->ix.expr;
#define TS_FROM_RQ(name, expr)    count[TS_COUNTER_##name] = rq->expr;
#define TS_FROM_FN(name, expr)    count[TS_COUNTER_##name] = expr(rq);
#define TS_FROM_LOOP(name, expr)
#define TS_FROM_GLUE(name, expr)
#define TS_COUNTER_FILL(name, var, metric, when, log, from, expr, help)    \
    TS_FROM_##from(name, expr)


void
ts_counters_from_request(size_t *count, const ts_request_t *rq)
{
    TS_COUNTERS(TS_COUNTER_FILL)
}


/* only a body read as far as the policy has its history indexed */
size_t
ts_counters_hosted_searches(const ts_request_t *rq)
{
    if (rq->decision < TS_DECISION_STANDARD_MODE) {
        return 0;
    }

    return ts_history_hosted_searches(&rq->ix);
}
