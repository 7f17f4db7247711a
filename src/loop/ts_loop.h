/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Gateway-executed search, response side: one client request becomes a
 * run of upstream calls.  When the model calls the gateway's search
 * tool, the search runs here, the found tools are loaded and the
 * conversation continues upstream; the client receives one assistant
 * message in which each search shows as server_tool_use and
 * tool_search_tool_result blocks.  The caller moves the bytes: it sends
 * each call's body and feeds each answer back.
 */

#ifndef TS_LOOP_H
#define TS_LOOP_H

#include "scan/ts_buf.h"
#include "rewrite/ts_policy.h"
#include "rewrite/ts_request.h"
#include "loop/ts_sse.h"


#define TS_LOOP_EVENT_MAX   (4 * 1024 * 1024)   /* one SSE event */
#define TS_LOOP_ANSWER_MAX  (16 * 1024 * 1024)  /* one JSON answer */
#define TS_LOOP_TURNS_MAX   (8 * 1024 * 1024)   /* turns the loop appends */
#define TS_LOOP_BLOCKS_MAX  64                  /* blocks of one answer */

/* the error of an answer the gateway cannot follow */
#define TS_LOOP_UNREADABLE                                                  \
    "the gateway could not read the upstream's answer"


typedef enum {
    TS_LOOP_DONE = 0,       /* out holds the last bytes for the client */
    TS_LOOP_AGAIN           /* make the next call */
} ts_loop_next_t;


typedef struct ts_loop_s  ts_loop_t;


/* the body must outlive the loop; NULL without memory */
ts_loop_t *ts_loop_create(const ts_input_t *in, const char *body,
    size_t len);
void ts_loop_free(ts_loop_t *lp);

/*
 * Takes the request the caller read and decided (DEFERRED_GATEWAY) as
 * the first call's, so that the body is not read again; rq is left
 * empty.  A request whose index borrows a worker's memory stays the
 * caller's.
 */
void ts_loop_keep(ts_loop_t *lp, ts_request_t *rq);

/* the body of the next upstream call, in out (reset first) */
int ts_loop_request(ts_loop_t *lp, ts_buf_t *out);

/* the anthropic-beta value the call needs (len 0: none) */
const char *ts_loop_betas(const ts_loop_t *lp, size_t *len);

/* a call's answer begins; sse: an event stream, else one JSON message */
void ts_loop_start(ts_loop_t *lp, int sse);

/* bytes of the answer; what the client gets now is appended to out */
int ts_loop_feed(ts_loop_t *lp, const char *p, size_t n, ts_buf_t *out);

/* the answer ended: the next step, and the client's bytes in out */
ts_loop_next_t ts_loop_end(ts_loop_t *lp, ts_buf_t *out);

/* a call that failed: what the upstream gave, if anything */
typedef struct {
    unsigned            status;     /* its status; 0: its answer broke */
    const char         *body;       /* its answer's body, if any */
    size_t              len;
    const char         *message;    /* when body is not an API error */
} ts_loop_error_t;

/*
 * The client's error for a failed call, appended to out: an SSE error
 * event (sse) or a JSON error document.  It is the upstream's own error
 * document where body is one, else one of the API's error types made
 * from the status; an unfinished event held back is dropped.
 */
void ts_loop_fail(ts_loop_t *lp, int sse, const ts_loop_error_t *e,
    ts_buf_t *out);

/*
 * What a format other than Messages does at each step (src/chat): the
 * loop's state, its calls, the SSE reading, its search (ts_loop_search)
 * and its counters are shared; the request (process: as
 * ts_request_process), each event and JSON answer (end), and the errors
 * are the format's.  ts_loop_start() resets the shared answer state
 * first.
 */
typedef struct {
    ts_decision_t   (*process)(ts_request_t *rq, const ts_input_t *in,
                               const char *body, size_t len);
    void            (*start)(ts_loop_t *lp);
    int             (*event)(ts_loop_t *lp, const ts_sse_event_t *ev,
                             ts_buf_t *out);
    ts_loop_next_t  (*end)(ts_loop_t *lp, ts_buf_t *out);
    void            (*fail)(ts_loop_t *lp, int sse,
                            const ts_loop_error_t *e, ts_buf_t *out);
    void            (*free)(ts_loop_t *lp);
} ts_loop_dialect_t;

/*
 * A loop in a format's dialect (NULL: Messages) over a request with
 * ntools tools, which its searches mark loaded
 */
ts_loop_t *ts_loop_create_as(const ts_input_t *in, const char *body,
    size_t len, const ts_loop_dialect_t *dialect, size_t ntools);

unsigned ts_loop_calls(const ts_loop_t *lp);
unsigned ts_loop_searches(const ts_loop_t *lp);
unsigned ts_loop_misses(const ts_loop_t *lp);
size_t ts_loop_loaded(const ts_loop_t *lp);
int ts_loop_paused(const ts_loop_t *lp);

/* sets the loop's counters (LOOP in rewrite/ts_counters.h) from those */
void ts_loop_counters(size_t *count, const ts_loop_t *lp);

#endif /* TS_LOOP_H */
