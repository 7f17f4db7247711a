/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The counters the engine fills, those of rewrite/ts_counters.h's table
 * whose from is ENGINE, one line each.
 */

#include "rewrite/ts_counters.h"
#include "messages/ts_history.h"


/* the counters of ts_counters.h whose from is ENGINE */
void
ts_counters_from_request(size_t *count, const ts_request_t *rq)
{
    count[TS_COUNTER_tools_total] = rq->ix.ntools;
    count[TS_COUNTER_tools_recalled] = rq->ix.tools_recalled;
    count[TS_COUNTER_messages_recalled] = rq->ix.messages_recalled;
    count[TS_COUNTER_tools_deferred] = rq->tools_deferred;
    count[TS_COUNTER_defer_chars] = rq->defer_chars;
    count[TS_COUNTER_threshold_chars] = rq->threshold_chars;
    count[TS_COUNTER_hosted_searches] = ts_counters_hosted_searches(rq);
    count[TS_COUNTER_refs_converted] = rq->hygiene.refs_converted;
    count[TS_COUNTER_refs_stale] = rq->hygiene.refs_stale;
    count[TS_COUNTER_siblings_moved] = rq->hygiene.siblings_moved;
    count[TS_COUNTER_boundaries_added] = rq->hygiene.boundaries_added;
    count[TS_COUNTER_searches_restored] = rq->searches_restored;
    count[TS_COUNTER_discovered] = rq->discovered;
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
