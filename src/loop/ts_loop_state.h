/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The gateway loop's state, shared by its files: ts_loop.c (the state
 * machine), ts_loop_decode.c (SSE and JSON answers into blocks, usage
 * and a stop reason), ts_loop_wrapper.c (the call wrapper's calls) and
 * ts_loop_write.c (the client's stream or JSON message, and the turns
 * the next call carries).
 */

#ifndef TS_LOOP_STATE_H
#define TS_LOOP_STATE_H

#include <cjson/cJSON.h>

#include "loop/ts_loop.h"
#include "loop/ts_sse.h"
#include "rewrite/ts_request.h"


enum {
    TS_USAGE_IN = 0,
    TS_USAGE_OUT,
    TS_USAGE_CACHE_WRITE,
    TS_USAGE_CACHE_READ,
    TS_USAGE_N
};

/* numbers the loop converts to integers: indexes and token counts */
#define TS_LOOP_NUMBER_MAX  1e15

extern const char  *ts_loop_usage_keys[TS_USAGE_N];

/* the members of a JSON answer the loop reads */
enum {
    TS_MSG_TYPE = 0,
    TS_MSG_CONTENT,
    TS_MSG_STOP,
    TS_MSG_USAGE,
    TS_MSG_N
};


/* one content block of an answer */
typedef struct {
    cJSON          *block;      /* SSE: as content_block_start gave it */
    const char     *raw;        /* JSON: the block's bytes */
    size_t          raw_len;
    ts_buf_t        text;       /* SSE: text, thinking or input so far */
    ts_buf_t        sig;        /* SSE: a thinking block's signature */
    const char     *field;      /* the member text goes to; NULL: input */
    long            index;      /* the upstream's index */
    long            client;     /* the client's index; -1: held back */
    char           *id;         /* a search call's id, JSON-quoted */
    char           *input;      /* and its input object */
    char           *error;      /* a wrapper call's: why it did not run */
    unsigned        search:1;   /* a call of the gateway's search tool,
                                   or a wrapper call answered here */
    unsigned        wrapper:1;  /* a call of the call wrapper */
    unsigned        implicit:1; /* a call of a tool not loaded yet */
    unsigned        invalid:1;  /* its input is no object with a query */
} ts_lblock_t;


/* what the loop knows of the current answer: all zero at its start */
typedef struct {
    ts_lblock_t         blocks[TS_LOOP_BLOCKS_MAX];
    size_t              nblocks;
    unsigned            held;
    int                 client_tool;
    int                 broken;     /* not followed: no continuation */
    int                 unread;     /* the gateway could not read it: an
                                       error event ended it, the rest is
                                       not looked at */
    int                 errored;    /* an error event came */
    int                 stopped;    /* message_stop came */
    char                stop_reason[32];
    unsigned long long  usage[TS_USAGE_N];
    cJSON              *delta;      /* a held message_delta */
} ts_loop_answer_t;


struct ts_loop_s {
    const ts_loop_dialect_t  *dialect;  /* NULL: Messages */
    void                     *format;   /* the dialect's own state */
    ts_input_t          in;
    const char         *body;
    size_t              len;
    const char         *tool;
    unsigned char      *loaded;
    size_t              ntools;
    size_t              nloaded;
    ts_request_t        rq;
    int                 have_rq;
    int                 kept;       /* rq is the caller's, for call 1 */
    ts_buf_t            turns;      /* appended to the messages */
    ts_buf_t            content;    /* JSON: the client's blocks so far */
    unsigned            calls;
    unsigned            searches;
    unsigned            misses;
    unsigned            refusals;   /* wrapper calls answered here */
    int                 paused;
    int                 sse;
    long                next_index;
    unsigned long long  total[TS_USAGE_N];

    /* the current answer */
    ts_buf_t            pending;
    size_t              seen;       /* of pending, scanned: no event */
    ts_loop_answer_t    ans;
};


/* ts_loop.c */

/* what a search found: names (n of them), else what servers exist */
typedef int (*ts_loop_found_pt)(void *arg, const ts_name_t *names,
    size_t n, const ts_buf_t *servers);

/*
 * Runs the search a call's input (a JSON object) asks for over the
 * request's deferred tools (lp->rq); the tools found are marked loaded
 * and handed to found.
 */
int ts_loop_search(ts_loop_t *lp, const char *input, ts_loop_found_pt found,
    void *arg);
void ts_loop_totals_add(ts_loop_t *lp);
void ts_loop_classify(ts_loop_t *lp, ts_lblock_t *b, const char *id,
    const char *name);
ts_lblock_t *ts_loop_block_add(ts_loop_t *lp, long index);

/*
 * The deferred tool of this name not loaded yet, or -1: the OpenAI
 * dialects hold a call of it back as an implicit select: of it
 */
long ts_loop_unloaded(const ts_loop_t *lp, const char *name);

/* ts_loop_decode.c */
int ts_loop_num(const char *buf, const ts_val_t *v, double *d);
char *ts_loop_query(const char *input, const ts_val_t *in);
int ts_loop_event(ts_loop_t *lp, const ts_sse_event_t *ev, ts_buf_t *out);
void ts_loop_call_input(ts_loop_t *lp, ts_lblock_t *b, const char *p,
    size_t n);
int ts_loop_json_members(const ts_loop_t *lp, ts_val_t m[TS_MSG_N]);
int ts_loop_json_answer(ts_loop_t *lp);

/*
 * A JSON value the scanner validated (RFC 8259, UTF-8), or NULL: cJSON
 * alone takes strings that are not UTF-8, which would go into the next
 * call's body
 */
cJSON *ts_loop_parse(const char *p, size_t n);

/* ts_loop_wrapper.c */

/*
 * A call of the call wrapper ended (input: its JSON text): a valid one
 * goes to the client as its tool's call; an invalid one is held, to be
 * answered with why (ts_loop_wrapper_results)
 */
int ts_loop_wrapper_end(ts_loop_t *lp, ts_lblock_t *b, const char *input,
    size_t len, ts_buf_t *out);

/*
 * The answer's held wrapper calls: with go, each one's error result is
 * appended to results; else those naming a tool of the request go to
 * the client as its calls.  1 when any went to the client.
 */
int ts_loop_wrapper_results(ts_loop_t *lp, int go, ts_buf_t *results,
    ts_buf_t *out);

/* ts_loop_write.c */
void ts_loop_sse_block_event(ts_buf_t *out, const char *name, long index,
    const char *rest, const ts_buf_t *body);
void ts_loop_usage_write(const ts_loop_t *lp, cJSON *usage);
int ts_loop_emit_json(ts_buf_t *out, const char *name, cJSON *j);
int ts_loop_forward(const ts_lblock_t *b, const ts_sse_event_t *ev,
    ts_buf_t *out);
void ts_loop_found(ts_buf_t *content, const ts_buf_t *refs);
void ts_loop_spent(const ts_loop_t *lp, const ts_lblock_t *b, unsigned max,
    ts_buf_t *content);
void ts_loop_refused(const ts_loop_t *lp, ts_buf_t *content);
void ts_loop_unreadable(ts_loop_t *lp, ts_buf_t *out);
void ts_loop_client_search(ts_loop_t *lp, const ts_lblock_t *b,
    const ts_buf_t *content, ts_buf_t *out);
int ts_loop_add_turns(ts_loop_t *lp, const ts_buf_t *results, int referenced);
/* adds an OpenAI usage object's numbers to sum, nested objects too */
void ts_loop_usage_sum(cJSON *sum, const cJSON *u);

/*
 * An OpenAI error document ({"error": {…}}) for a failed call: the
 * upstream's own where its body is one, else one made from the status
 */
cJSON *ts_loop_openai_error(const ts_loop_error_t *e);

/* what the OpenAI dialects answer when a call's searches are spent */
extern const char  ts_loop_openai_spent[];

/*
 * Appends j as compact JSON between before and after; where it cannot be
 * printed (NULL, no memory), nothing, and out is marked failed
 */
void ts_loop_openai_print(ts_buf_t *out, const char *before, const cJSON *j,
    const char *after);
ts_loop_next_t ts_loop_final(ts_loop_t *lp, const char *stop_reason,
    ts_buf_t *out);

#endif /* TS_LOOP_STATE_H */
