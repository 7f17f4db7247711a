/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Gateway-side deferral (docs/spec/deferral.md): classification, the
 * per-tool priority chain, the threshold and the hosted-search edits.
 */

#ifndef TS_DEFER_H
#define TS_DEFER_H

#include "scan/ts_buf.h"
#include "messages/ts_history.h"
#include "rewrite/ts_request.h"


/* what makes a tool deferred, put before its closing brace */
#define TS_DEFER_FLAG  ",\"defer_loading\":true"


/* what a request's "thread" member asks of a server-held conversation */
typedef enum {
    TS_THREAD_NONE = 0,         /* none, or null: an ordinary request */
    TS_THREAD_CREATE,           /* {"type":"create"}: the server keeps
                                   this request's tools for the thread */
    TS_THREAD_HELD              /* a continuation, or a form the module
                                   does not know: the server holds what
                                   the request builds on */
} ts_thread_t;


ts_thread_t ts_defer_thread(const ts_index_t *ix);

/* the reason the request gets (or does not get) deferral */
ts_decision_t ts_defer_decide(ts_request_t *rq, const ts_input_t *in,
    const ts_history_t *h);

/*
 * 1 when the outgoing request may carry tool-search fields: not for the
 * kill switch, standard mode, a negative-listed model or an upstream
 * without tool_reference support
 */
int ts_defer_artifacts_allowed(const ts_index_t *ix, int mode, int upstream,
    const ts_policy_t *p);

/*
 * The edits of a DEFERRED_HOSTED decision: defer_loading on the tools
 * rq->defer marks, their cache breakpoint moved, the search tool, and the
 * hosted searches history h dropped restored before the calls of the
 * tools they found (counted in rq->searches_restored)
 */
int ts_defer_flags(ts_request_t *rq);
int ts_defer_apply(ts_request_t *rq, const ts_history_t *h,
    const ts_policy_t *p);

/*
 * 1 when a tool name may be written as it is in a restored search, as its
 * query too: the characters the API allows in tool names, no escapes
 */
int ts_defer_restorable(const char *name, size_t len);

/*
 * The id of a search restored before a call, derived from the call's id
 * alone (with prefix "srvtoolu_", "toolu_01Ab" gives "srvtoolu_01Ab"), in
 * the API's id characters
 */
void ts_defer_restored_id(ts_buf_t *t, const char *buf, const ts_val_t *id,
    const char *prefix);

#endif /* TS_DEFER_H */
