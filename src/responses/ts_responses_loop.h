/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Responses in the gateway loop: what its files share (the loop's state,
 * an answer's output items, the helpers one file defines for another).
 * Not for the other floors: ts_responses.h is the dialect's interface.
 */

#ifndef TS_RESPONSES_LOOP_H
#define TS_RESPONSES_LOOP_H

#include "loop/ts_loop_state.h"


/* one output item of an answer */
typedef struct {
    long            index;      /* the upstream's output_index */
    long            client;     /* the client's; -1: held back */
    cJSON          *item;       /* as the answer gave it, when done */
    ts_buf_t        args;       /* a held call's arguments so far */
    char           *error;      /* an invalid wrapper call's, escaped */
    unsigned        search:1;   /* a search, or an implicit select: */
    unsigned        implicit:1;
    unsigned        reasoning:1;
    unsigned        wrapper:1;  /* a call of the call wrapper */
} ts_rs_item_t;


typedef struct {
    char           *id;         /* the response's: the first call's */
    char           *last;       /* the current call's response id */
    char           *resume;     /* the one the next call goes on from */
    cJSON          *prev;       /* the first call's previous_response_id */
    unsigned        stored:1;   /* the upstream keeps each call's response:
                                   the client goes on from the last */
    unsigned        spent;      /* searches answered as spent (stored) */
    unsigned        opened:1;   /* the client has its response.created */
    cJSON          *head;       /* a stored stream's held events: the
                                   call's created and in_progress ... */
    cJSON          *early;      /* ... and what came before the client's
                                   first item but reasoning, as
                                   [name, event] pairs */
    cJSON          *usage;      /* summed over the calls */
    cJSON          *output;     /* the client's items, every call's */
    long            seq;        /* the client's next sequence_number */
    long            nout;       /* the client's output items so far */

    /* the current answer */
    ts_rs_item_t    items[TS_LOOP_BLOCKS_MAX];
    size_t          nitems;
    unsigned        held;
    unsigned        wrapped;    /* calls of the call wrapper */
    long            nclient;    /* calls the client runs */
    cJSON          *terminal;   /* its response.completed (or other end) */
    char            status[32];
    int             errored;

    char           *body;       /* the client's body, when the first
                                   call's request indexes a copy of it
                                   that leaves with that request */
} ts_rs_loop_t;


/* ts_responses_loop.c */

ts_rs_item_t *ts_rs_item_find(ts_rs_loop_t *st, long index);

char *ts_rs_called(const cJSON *item);

ts_rs_item_t *ts_rs_item_add(ts_loop_t *lp, long index, const cJSON *item);

void ts_rs_usage(ts_rs_loop_t *st, const cJSON *u);

void ts_rs_put(cJSON *obj, const char *key, cJSON *v);

void ts_rs_first(ts_rs_loop_t *st, const cJSON *resp);

int ts_rs_wrapper_end(ts_loop_t *lp, ts_rs_item_t *it);

cJSON *ts_rs_spent_item(void);

void ts_rs_response(ts_rs_loop_t *st, cJSON *resp);


/* ts_responses_stream.c */

int ts_rs_open(ts_rs_loop_t *st, ts_buf_t *out);

int ts_rs_holding(const ts_loop_t *lp);

int ts_rs_event(ts_loop_t *lp, const ts_sse_event_t *ev, ts_buf_t *out);

void ts_rs_stream_end(ts_loop_t *lp, ts_buf_t *out);


/* ts_responses_next.c */

int ts_rs_goes_on(const ts_loop_t *lp);

int ts_rs_searches(ts_loop_t *lp);

#endif /* TS_RESPONSES_LOOP_H */
