
/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The anthropic-beta header of a request: read as one line, replaced
 * by one line.
 */


#ifndef _NGX_HTTP_TOOLSEARCH_BETAS_H_INCLUDED_
#define _NGX_HTTP_TOOLSEARCH_BETAS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>


/* the anthropic-beta lines: the first takes the value, others go */
typedef struct {
    ngx_str_t           value;
    ngx_table_elt_t    *added;      /* when the request had none */
    ngx_list_part_t    *parts;      /* one per line, for the splits */
} ngx_http_toolsearch_betas_t;


/* every anthropic-beta line of the request, comma-joined (or empty) */
ngx_int_t ngx_http_toolsearch_betas(ngx_http_request_t *r,
    ngx_str_t *merged);

/* allocates what a change to value needs; the request is not touched */
ngx_int_t ngx_http_toolsearch_betas_prepare(ngx_http_request_t *r,
    const char *value, size_t len, ngx_http_toolsearch_betas_t *nb);

/* makes the prepared change: it cannot fail */
void ngx_http_toolsearch_betas_commit(ngx_http_request_t *r,
    ngx_http_toolsearch_betas_t *nb);

/* the request's anthropic-beta lines become one line with value */
ngx_int_t ngx_http_toolsearch_set_betas(ngx_http_request_t *r,
    const char *value, size_t len);


#endif /* _NGX_HTTP_TOOLSEARCH_BETAS_H_INCLUDED_ */
