/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Responses, request side: the path and the order of the steps.  What
 * the request may carry decides the path (docs/gateway-search.md,
 * "Responses"): its own search passes (client_managed); state the
 * gateway's exchange could not keep whole passes (server_state); an
 * openai upstream with a model that has hosted tool_search gets
 * defer_loading and {"type":"tool_search"} (ts_responses_hosted.c); any
 * other upstream gets the gateway's search as Chat Completions does, in
 * this format's shapes (ts_responses_edit.c).
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


/* the path before the rules: what the request's state allows */
static ts_decision_t
ts_rs_path(const ts_request_t *rq, const ts_input_t *in, int hosted,
    const ts_rs_state_t *s)
{
    if (s->managed) {
        return TS_DECISION_CLIENT_MANAGED;
    }

    if (!hosted && in->policy->search == TS_SEARCH_HOSTED) {
        return in->upstream == TS_UPSTREAM_OPENAI
               ? TS_DECISION_MODEL_UNSUPPORTED
               : TS_DECISION_UPSTREAM_UNSUPPORTED;
    }

    /*
     * Hosted search items need the upstream's hosted search; a
     * conversation with previous_response_id is the upstream's to refuse
     * (docs/gateway-search.md, "Server-held state").  Stored responses
     * and previous_response_id chains get the search: its exchange is
     * kept whole, the client goes on from its end.  A conversation gets
     * it only where the operator allows it (toolsearch_conversations):
     * a continuation the upstream refuses leaves the search call
     * unanswered in the conversation, which then refuses every later
     * request, and the gateway cannot mend it.
     */
    if (!hosted
        && (s->hosted
            || (s->conversation
                && (!in->policy->conversations
                    || ts_rs_member(&rq->ix, TS_RS_PREVIOUS)->kind
                       != TS_NONE))))
    {
        return TS_DECISION_SERVER_STATE;
    }

    /* a kept answer that may hold the search beside the client's call */
    if (!hosted && ts_responses_stored(rq)
        && ts_rs_member(&rq->ix, TS_RS_PARALLEL)->kind == TS_TRUE)
    {
        return TS_DECISION_SERVER_STATE;
    }

    return TS_DECISION_NONE;
}


ts_decision_t
ts_responses_process(ts_request_t *rq, const ts_input_t *in,
    const char *body, size_t len)
{
    ts_policy_t     policy;
    ts_input_t      gin;
    ts_history_t    h;
    ts_rs_state_t   s;
    ts_rs_tools_t   rt;
    unsigned char  *restore;
    int             hosted;

    memset(rq, 0, sizeof(ts_request_t));
    ts_edits_init(&rq->edits);

    memset(&rt, 0, sizeof(ts_rs_tools_t));
    rq->decision = ts_rs_index(rq, in, body, len, &rt);

    if (rq->decision != TS_DECISION_NONE || in == NULL
        || in->policy == NULL)
    {
        free(rt.nsv);
        free(rt.elems);
        return rq->decision;
    }

    ts_rs_state(rq, &s);
    hosted = in->policy->search != TS_SEARCH_GATEWAY && ts_rs_hosted(rq, in);
    rq->upstream = in->upstream;
    rq->decision = ts_rs_path(rq, in, hosted, &s);

    /* the rules, the search and history know members by their names */
    if (rq->decision == TS_DECISION_NONE
        && ts_rs_qualify(rq, &rt) != 0)
    {
        rq->decision = TS_DECISION_ERROR;
    }

    free(rt.nsv);
    free(rt.elems);

    if (rq->decision != TS_DECISION_NONE) {
        return rq->decision;
    }

    /* the shared rules run as for gateway search; hosted is the dialect's */
    policy = *in->policy;
    policy.search = TS_SEARCH_GATEWAY;
    gin = *in;
    gin.policy = &policy;

    rq->mode = in->defer_mode >= 0 ? in->defer_mode : policy.defer_mode;
    rq->percent = in->defer_mode >= 0 ? in->defer_percent
                                      : policy.defer_percent;

    if (policy.disable_betas) {
        rq->mode = TS_DEFER_OFF;
    }

    /*
     * items the upstream resolves may call any function: all declared;
     * a chain's upstream holds the searches of its calls
     */
    restore = NULL;

    if (hosted && !s.refs && !s.chained) {
        restore = calloc(rq->ix.ntools ? rq->ix.ntools : 1, 1);

        if (restore == NULL) {
            rq->decision = TS_DECISION_ERROR;
            return rq->decision;
        }
    }

    /*
     * The call wrapper, whatever the upstream keeps: call_tool is
     * declared on every request the gateway edits, so a kept call of it
     * stays a call of a declared function for a chain or a reference
     * that goes on from it; a client that sends its history whole sends
     * the call the client got, which goes back as call_tool's again
     * (its call_id and id those of the kept call); a conversation keeps
     * them where no request of the client carries them back.  Not with
     * namespaces (Codex): their found members load in their namespace,
     * whose calls carry it (ts_rs_tools_grouped writes no call_tool), so
     * a search's result names them without the wrapper's text
     */
    rq->load_wrapper = !hosted && policy.found_tools == TS_FOUND_WRAPPER
                       && rq->qualified == NULL
                       && ts_wrapper_free(&rq->ix);

    if (ts_rs_loaded(rq, in, hosted && s.refs, restore) != 0) {
        free(restore);
        rq->decision = TS_DECISION_ERROR;
        return rq->decision;
    }

    memset(&h, 0, sizeof(ts_history_t));
    rq->decision = ts_defer_decide(rq, &gin, &h);

    if (hosted && s.refs && rq->decision == TS_DECISION_NOTHING_TO_DEFER
        && rq->tools_deferrable > 0)
    {
        /* the referenced search items keep their tool */
        rq->decision = TS_DECISION_DEFERRED_GATEWAY;
    }

    if (rq->decision != TS_DECISION_DEFERRED_GATEWAY) {
        free(restore);
        return rq->decision;
    }

    if (hosted) {
        rq->decision = TS_DECISION_DEFERRED_HOSTED;
    }

    if ((hosted ? ts_rs_apply_hosted(rq, restore)
                : (rq->load_wrapper
                   && ts_rs_wrapper_history(rq, &gin) != 0)
                  || ts_rs_apply_gateway(rq, &gin))
        != 0)
    {
        rq->decision = TS_DECISION_ERROR;
        ts_edits_free(&rq->edits);
        ts_edits_init(&rq->edits);
    }

    free(restore);

    return rq->decision;
}
