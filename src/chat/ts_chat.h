/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The Chat Completions dialect (POST …/chat/completions): the request's
 * tools and conversation read into the shared index, gateway search's
 * edits in this format's shapes, and the loop's answers (one JSON
 * completion or chat.completion.chunk events) so that the client gets
 * one completion whatever the searches took (docs/gateway-search.md).
 */

#ifndef TS_CHAT_H
#define TS_CHAT_H

#include "rewrite/ts_request.h"
#include "loop/ts_loop.h"


/* a request with n above this passes: its choices cannot be joined */
#define TS_CHAT_CHOICES_MAX  1


/*
 * Reads a Chat Completions body into rq->ix (tools by their function's
 * name, description and parameters; messages) and, with a policy,
 * decides and records gateway search's edits, as ts_request_process()
 * does for Messages.  The body must outlive rq.
 */
ts_decision_t ts_chat_process(ts_request_t *rq, const ts_input_t *in,
    const char *body, size_t len);

/*
 * With the call wrapper, history's calls of deferred functions become
 * calls of the wrapper, and the search that found them is restored
 * before the first (ts_chat_wrapper.c)
 */
int ts_chat_wrapper_history(ts_request_t *rq, const ts_policy_t *p);

/* 1 when the request asks for a stream ("stream": true) */
int ts_chat_stream(const ts_request_t *rq);

/*
 * The gateway loop in this format for the request rq read (its body must
 * outlive the loop); NULL without memory
 */
ts_loop_t *ts_chat_loop_create(const ts_input_t *in, const ts_request_t *rq);

#endif /* TS_CHAT_H */
