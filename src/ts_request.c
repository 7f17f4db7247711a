/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <string.h>

#include "ts_request.h"


static const char  *ts_decision_names[TS_DECISION_N] = {
    "none",
    "passthrough",
    "passthrough_malformed",
    "passthrough_too_deep",
    "passthrough_duplicate_key",
    "passthrough_wrong_type",
    "passthrough_limit",
    "passthrough_error",
    "passthrough_too_large",
    "passthrough_not_json",
    "passthrough_encoded",
    "passthrough_method"
};


static ts_decision_t
ts_status_decision(ts_status_t st)
{
    switch (st) {
    case TS_OK:
        return TS_DECISION_PASSTHROUGH;
    case TS_ERR_SYNTAX:
        return TS_DECISION_MALFORMED;
    case TS_ERR_DEPTH:
        return TS_DECISION_TOO_DEEP;
    case TS_ERR_DUPLICATE:
        return TS_DECISION_DUPLICATE_KEY;
    case TS_ERR_TYPE:
        return TS_DECISION_WRONG_TYPE;
    case TS_ERR_LIMIT:
        return TS_DECISION_LIMIT;
    default:
        return TS_DECISION_ERROR;
    }
}


ts_decision_t
ts_request_process(ts_request_t *rq, const char *body, size_t len)
{
    ts_status_t  st;

    ts_edits_init(&rq->edits);

    st = ts_index_build(&rq->ix, body, len);
    rq->decision = ts_status_decision(st);

    return rq->decision;
}


int
ts_request_changed(const ts_request_t *rq)
{
    return rq->edits.n > 0;
}


size_t
ts_request_size(const ts_request_t *rq)
{
    return ts_edits_size(&rq->edits, rq->ix.len);
}


int
ts_request_render(ts_request_t *rq, char *out)
{
    return ts_edits_render(&rq->edits, rq->ix.buf, rq->ix.len, out);
}


void
ts_request_free(ts_request_t *rq)
{
    ts_index_free(&rq->ix);
    ts_edits_free(&rq->edits);
}


const char *
ts_decision_name(ts_decision_t d)
{
    return (unsigned) d < TS_DECISION_N ? ts_decision_names[d] : "none";
}
