
/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * A rewritten body is sent as a chain of buffers, and each buffer costs
 * the proxy module a link, an iovec and its share of writev calls: a
 * deferral of 120 tools made 250 of them, which cost more than copying
 * the short kept ranges between the edits into one block.  A block of a
 * whole tools array, like the buffer a body is read into, is too large
 * for the pool to serve from its own memory, and one malloc'd and freed
 * per request is faulted in afresh each time; so the worker keeps the
 * blocks its requests give back.
 */


#include "ngx_http_toolsearch_blocks.h"


/* free blocks a worker keeps between requests; more are freed */
#define NGX_HTTP_TOOLSEARCH_BLOCKS_KEPT  4


typedef struct ngx_http_toolsearch_block_s  ngx_http_toolsearch_block_t;

struct ngx_http_toolsearch_block_s {
    ngx_http_toolsearch_block_t  *next;
    size_t                        size;
};


/* the free blocks, the largest first */
static ngx_http_toolsearch_block_t  *ngx_http_toolsearch_blocks;
static ngx_uint_t                    ngx_http_toolsearch_nblocks;


static void ngx_http_toolsearch_block_return(void *data);


/* the smallest free block that fits, or a new one */
static ngx_http_toolsearch_block_t *
ngx_http_toolsearch_block_take(size_t size)
{
    ngx_http_toolsearch_block_t  *b, **bp, **fit;

    fit = NULL;

    for (bp = &ngx_http_toolsearch_blocks; *bp && (*bp)->size >= size;
         bp = &(*bp)->next)
    {
        fit = bp;
    }

    if (fit) {
        b = *fit;
        *fit = b->next;
        ngx_http_toolsearch_nblocks--;
        return b;
    }

    b = ngx_alloc(sizeof(ngx_http_toolsearch_block_t) + size,
                  ngx_cycle->log);
    if (b == NULL) {
        return NULL;
    }

    b->size = size;
    return b;
}


u_char *
ngx_http_toolsearch_block_lend(ngx_pool_t *pool, size_t size)
{
    ngx_pool_cleanup_t           *cln;
    ngx_http_toolsearch_block_t  *b;

    cln = ngx_pool_cleanup_add(pool, 0);
    if (cln == NULL) {
        return NULL;
    }

    b = ngx_http_toolsearch_block_take(size);
    if (b == NULL) {
        return NULL;
    }

    cln->handler = ngx_http_toolsearch_block_return;
    cln->data = b;

    return (u_char *) (b + 1);
}


/* kept in order, the largest first; past the limit the smallest goes */
static void
ngx_http_toolsearch_block_return(void *data)
{
    ngx_http_toolsearch_block_t   *b, **bp;

    b = data;

    for (bp = &ngx_http_toolsearch_blocks; *bp; bp = &(*bp)->next) {
        if ((*bp)->size <= b->size) {
            break;
        }
    }

    b->next = *bp;
    *bp = b;

    if (++ngx_http_toolsearch_nblocks <= NGX_HTTP_TOOLSEARCH_BLOCKS_KEPT) {
        return;
    }

    for (bp = &ngx_http_toolsearch_blocks; (*bp)->next; bp = &(*bp)->next) {
        /* void */
    }

    ngx_free(*bp);
    *bp = NULL;
    ngx_http_toolsearch_nblocks--;
}


void
ngx_http_toolsearch_blocks_free(void)
{
    ngx_http_toolsearch_block_t  *b;

    while (ngx_http_toolsearch_blocks) {
        b = ngx_http_toolsearch_blocks;
        ngx_http_toolsearch_blocks = b->next;
        ngx_free(b);
    }

    ngx_http_toolsearch_nblocks = 0;
}
