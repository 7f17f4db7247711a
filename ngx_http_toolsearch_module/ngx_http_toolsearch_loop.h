/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Gateway-executed search in nginx: the loop's own state, and the one
 * entry that makes a deferred_gateway request the loop's.
 */

#ifndef NGX_HTTP_TOOLSEARCH_LOOP_H
#define NGX_HTTP_TOOLSEARCH_LOOP_H

#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "loop/ts_cut.h"
#include "loop/ts_loop.h"
#include "rewrite/ts_request.h"
#include "ngx_http_toolsearch_module.h"


/*
 * What the loop alone reads and writes, from its start to the end of the
 * request's pool, whose cleanup frees it (ngx_http_toolsearch_loop.c).
 * The request's context (shared) points to it: its calls share that
 * context, and the loop's filters find it there.
 */
struct ngx_http_toolsearch_loop_s {
    ngx_http_toolsearch_ctx_t  *shared;     /* its pace and counters */
    ts_loop_t      *loop;
    ts_cut_t       *cut;            /* the search blocks' cut of out */
    ts_buf_t        call;           /* the body of the current call */
    ts_buf_t        out;            /* bytes for the client */
    ts_buf_t        error;          /* a failed call's answer */
    ngx_http_request_t  *sr;        /* the current call */
    ngx_uint_t      error_status;   /* the failed call's status */
    unsigned        done:1;         /* the current call ended */
    unsigned        answering:1;    /* the current call's answer began */
    unsigned        complete:1;     /* ... and reached its end */
    unsigned        sse:1;
    unsigned        streaming:1;    /* the client's header is sent */
    unsigned        passthrough:1;  /* the answer goes to the client as is */
    unsigned        failed:1;       /* the call answered with an error */
};


/*
 * A deferred_gateway request becomes the loop's: the loop is created over
 * the original body, its cleanup registered with the request's pool (the
 * one place that frees it), and it becomes the request's content handler.
 * NGX_ERROR leaves nothing behind: the request goes on unchanged.
 */
ngx_int_t ngx_http_toolsearch_loop_start(ngx_http_request_t *r,
    ngx_http_toolsearch_ctx_t *shared, ts_request_t *rq, ts_input_t *in,
    u_char *body, size_t len);

/*
 * The request the engine made, rewritten, is the loop's first call: the
 * loop takes it over, rq is left empty (once the rewrite is applied; no
 * loop, nothing).
 */
void ngx_http_toolsearch_loop_keep(ngx_http_toolsearch_ctx_t *shared,
    ts_request_t *rq);

/* the response filters that follow the calls */
ngx_int_t ngx_http_toolsearch_loop_init(ngx_conf_t *cf);


#endif /* NGX_HTTP_TOOLSEARCH_LOOP_H */
