/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Responses, request side: what its files share (the top-level members
 * read, the request's state, the helpers one file defines for another).
 * Not for the other floors: ts_responses.h is the dialect's interface.
 */

#ifndef TS_RESPONSES_INT_H
#define TS_RESPONSES_INT_H

#include "scan/ts_buf.h"
#include "rewrite/ts_request.h"
#include "rewrite/ts_policy.h"


/* the top-level members read */
enum {
    TS_RS_MODEL = 0,
    TS_RS_INPUT,
    TS_RS_TOOLS,
    TS_RS_STREAM,
    TS_RS_TOOL_CHOICE,
    TS_RS_INSTRUCTIONS,
    TS_RS_PREVIOUS,
    TS_RS_CONVERSATION,
    TS_RS_STORE,
    TS_RS_PARALLEL,
    TS_RS_KEYS
};

/* what the request's tools and input items say of its state */
typedef struct {
    unsigned    managed:1;      /* it searches on its own */
    unsigned    hosted:1;       /* hosted search items in its input */
    unsigned    refs:1;         /* item_reference in its input */
    unsigned    conversation:1; /* it adds to a conversation the
                                   upstream holds */
    unsigned    chained:1;      /* previous_response_id, conversation */
} ts_rs_state_t;


/* ts_responses_index.c */

const ts_val_t *ts_rs_member(const ts_index_t *ix, int key);

int ts_rs_has(const char *buf, const ts_val_t *obj, const char *key,
    ts_val_t *v);

int ts_rs_item_type(const ts_index_t *ix, size_t i, ts_val_t *type);

int ts_rs_group(const char *buf, const ts_val_t *item, ts_val_t *ns,
    ts_val_t **members, size_t *n);

/*
 * What reading the tools array gives beside the index's tools: each
 * tool's namespace and the array's own elements (a namespace's span
 * holds its members); the caller frees them
 */
typedef struct {
    ts_val_t       *nsv;            /* per tool: kind NONE, or the name
                                       of the namespace it is in */
    size_t          groups;         /* namespaces */
    ts_val_t       *elems;          /* the array's elements */
    size_t          nelems;
} ts_rs_tools_t;

int ts_rs_qualify(ts_request_t *rq, ts_rs_tools_t *rt);

ts_decision_t ts_rs_index(ts_request_t *rq, const ts_input_t *in,
    const char *body, size_t len, ts_rs_tools_t *rt);


/* ts_responses_hosted.c */

void ts_rs_state(const ts_request_t *rq, ts_rs_state_t *s);

int ts_rs_hosted(const ts_request_t *rq, const ts_input_t *in);

int ts_rs_loaded(ts_request_t *rq, const ts_input_t *in, int all,
    unsigned char *restore);

int ts_rs_apply_hosted(ts_request_t *rq, const unsigned char *restore);


/* ts_responses_wrapper.c */

int ts_rs_wrapper_history(ts_request_t *rq, const ts_input_t *in);


/* ts_responses_edit.c */

int ts_rs_apply_gateway(ts_request_t *rq, const ts_input_t *in);

/* 1 when the index's tool i goes into a namespace written */
typedef int (*ts_rs_keep_pt)(const void *arg, size_t i);

/*
 * A namespace of tools[] (elem; the index's tools k to k + m are its
 * members) with the members keep keeps, in their order; whole, byte for
 * byte, when it keeps them all
 */
void ts_rs_namespace_write(ts_buf_t *b, const ts_index_t *ix,
    const ts_val_t *elem, size_t k, size_t m, ts_rs_keep_pt keep,
    const void *arg);

#endif /* TS_RESPONSES_INT_H */
