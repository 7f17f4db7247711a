
/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Blocks a worker lends to its requests, for the body read in one buffer
 * and the bytes a rewrite copies, and takes back when the request's pool
 * goes.
 */


#ifndef _NGX_HTTP_TOOLSEARCH_BLOCKS_H_INCLUDED_
#define _NGX_HTTP_TOOLSEARCH_BLOCKS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


/* size bytes that live as long as pool, or NULL */
u_char *ngx_http_toolsearch_block_lend(ngx_pool_t *pool, size_t size);

/* frees the blocks the worker keeps (at exit) */
void ngx_http_toolsearch_blocks_free(void);


#endif /* _NGX_HTTP_TOOLSEARCH_BLOCKS_H_INCLUDED_ */
