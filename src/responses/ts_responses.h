/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The Responses dialect (POST …/responses).  Requests that search on
 * their own pass byte-identical (client_managed), and so does one whose
 * server-held state the gateway's exchange could not keep whole (hosted
 * search items, kept parallel calls, a conversation with
 * previous_response_id: server_state); an upstream that runs OpenAI's hosted tool_search gets
 * defer_loading and the tool_search tool; any other gets the gateway's
 * search, and the client one response whatever the searches took, a
 * stored exchange each call going on from the one before, a
 * conversation's in the conversation (docs/gateway-search.md, "Responses", "Server-held state").
 */

#ifndef TS_RESPONSES_H
#define TS_RESPONSES_H

#include "rewrite/ts_request.h"
#include "loop/ts_loop.h"


/*
 * Reads a Responses body into rq->ix (function tools by their name,
 * description and parameters; input items) and, with a policy, decides
 * and records the edits.  The body must outlive rq.
 */
ts_decision_t ts_responses_process(ts_request_t *rq, const ts_input_t *in,
    const char *body, size_t len);

/*
 * 1 when the upstream keeps the response of a request ts_responses_process
 * read (store absent or true, or a conversation, which keeps its items
 * with store false too): the gateway's continuations go on from it
 */
int ts_responses_stored(const ts_request_t *rq);

/* 1 when a model runs OpenAI's hosted tool_search: gpt-5.4 and later */
int ts_responses_hosted_model(const char *model, size_t len);

/*
 * The gateway loop in this format for the request rq read (its body must
 * outlive the loop); NULL without memory
 */
ts_loop_t *ts_responses_loop_create(const ts_input_t *in,
    const ts_request_t *rq);

#endif /* TS_RESPONSES_H */
