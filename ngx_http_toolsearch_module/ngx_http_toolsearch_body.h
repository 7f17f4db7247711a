
/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The request body as the engine reads it, and the rewritten body put
 * into the request.
 */


#ifndef _NGX_HTTP_TOOLSEARCH_BODY_H_INCLUDED_
#define _NGX_HTTP_TOOLSEARCH_BODY_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "rewrite/ts_request.h"


/* the size of the body's buffers */
off_t ngx_http_toolsearch_body_size(ngx_chain_t *cl);

/* the body as one range of len bytes: in place or copied; NULL on error */
u_char *ngx_http_toolsearch_body_bytes(ngx_http_request_t *r, size_t len);

/* size bytes for the request: small ones from its pool, others lent */
u_char *ngx_http_toolsearch_body_block(ngx_http_request_t *r, size_t size);

/* the engine's result into the request: body and betas, or nothing */
ngx_int_t ngx_http_toolsearch_apply(ngx_http_request_t *r, ts_request_t *rq,
    u_char *body);


#endif /* _NGX_HTTP_TOOLSEARCH_BODY_H_INCLUDED_ */
