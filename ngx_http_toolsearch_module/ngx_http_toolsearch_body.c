
/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The request body: its bytes as one range for the engine, and the
 * rewritten body, with its anthropic-beta lines, put into the request.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_toolsearch_module.h"
#include "ngx_http_toolsearch_blocks.h"
#include "ngx_http_toolsearch_body.h"
#include "ngx_http_toolsearch_betas.h"


/*
 * A new body, allocated before anything of the request changes: a chain
 * whose buffers point into the body for the ranges the engine keeps and
 * into one small block for the new bytes.
 */
typedef struct {
    ngx_chain_t    *cl;
    ngx_buf_t      *last;
    off_t           size;
    ngx_str_t       length;
} ngx_http_toolsearch_body_t;


/*
 * Kept ranges shorter than this are copied with the new bytes: a buffer
 * of the chain costs the proxy module more than copying them (measured
 * in docs/benchmarks.md).
 */
#define NGX_HTTP_TOOLSEARCH_COPY_BELOW   4096

/* buffers of this size and more (bodies read in one, copies) are lent */
#define NGX_HTTP_TOOLSEARCH_BLOCK_FROM   16384


off_t
ngx_http_toolsearch_body_size(ngx_chain_t *cl)
{
    off_t  size;

    size = 0;

    for ( /* void */ ; cl; cl = cl->next) {
        size += ngx_buf_size(cl->buf);
    }

    return size;
}


/* the first byte of buffers in memory that follow each other, or NULL */
static u_char *
ngx_http_toolsearch_body_in_place(ngx_chain_t *cl)
{
    u_char  *first, *last;

    first = NULL;
    last = NULL;

    for ( /* void */ ; cl; cl = cl->next) {
        if (cl->buf->in_file) {
            return NULL;
        }

        /* the empty last buffer of a chunked body */
        if (ngx_buf_size(cl->buf) == 0) {
            continue;
        }

        if (first == NULL) {
            first = cl->buf->pos;

        } else if (cl->buf->pos != last) {
            return NULL;
        }

        last = cl->buf->last;
    }

    return first;
}


/*
 * The body as one contiguous range: buffers that lie one after the
 * other in memory (one buffer, or nginx's reads into one buffer) are
 * used in place, anything else (separate buffers, a temp file) is
 * copied.
 */
u_char *
ngx_http_toolsearch_body_bytes(ngx_http_request_t *r, size_t len)
{
    u_char       *body, *p;
    ssize_t       n;
    ngx_buf_t    *b;
    ngx_chain_t  *cl;

    cl = r->request_body ? r->request_body->bufs : NULL;

    if (cl == NULL || len == 0) {
        return (u_char *) "";
    }

    body = ngx_http_toolsearch_body_in_place(cl);

    if (body) {
        return body;
    }

    body = ngx_pnalloc(r->pool, len);
    if (body == NULL) {
        return NULL;
    }

    p = body;

    for ( /* void */ ; cl; cl = cl->next) {
        b = cl->buf;

        if (!b->in_file) {
            p = ngx_cpymem(p, b->pos, b->last - b->pos);
            continue;
        }

        n = ngx_read_file(b->file, p, (size_t) (b->file_last - b->file_pos),
                          b->file_pos);

        if (n != b->file_last - b->file_pos) {
            ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                          "toolsearch: could not read the request body "
                          "from its temp file");
            return NULL;
        }

        p += n;
    }

    return body;
}


/*
 * New bytes and short kept ranges go into one block; so do all kept
 * ranges of a body the engine did not index in place (it indexed a body
 * of its own).
 */
static ngx_flag_t
ngx_http_toolsearch_piece_copied(const ts_piece_t *pc, ngx_flag_t in_body)
{
    return !pc->kept || !in_body || pc->len < NGX_HTTP_TOOLSEARCH_COPY_BELOW;
}


u_char *
ngx_http_toolsearch_body_block(ngx_http_request_t *r, size_t size)
{
    if (size < NGX_HTTP_TOOLSEARCH_BLOCK_FROM) {
        return ngx_pnalloc(r->pool, size ? size : 1);
    }

    return ngx_http_toolsearch_block_lend(r->pool, size);
}


/* counts the chain's pieces and the bytes it copies */
static size_t
ngx_http_toolsearch_body_count(ts_pieces_t it, ngx_flag_t in_body,
    size_t *copied)
{
    size_t      n;
    ts_piece_t  pc;

    n = 0;
    *copied = 0;

    while (ts_pieces_next(&it, &pc)) {
        n++;

        if (ngx_http_toolsearch_piece_copied(&pc, in_body)) {
            *copied += pc.len;
        }
    }

    return n;
}


static ngx_int_t
ngx_http_toolsearch_body_prepare(ngx_http_request_t *r, ts_request_t *rq,
    u_char *body, ngx_http_toolsearch_body_t *nb)
{
    u_char        *p;
    size_t         n, copied;
    ngx_buf_t     *b, *bufs;
    ngx_flag_t     in_body, copy, was_copy;
    ngx_chain_t   *links, **ll;
    ts_piece_t     pc;
    ts_pieces_t    it;

    if (ts_request_pieces(rq, &it) != 0) {
        return NGX_ERROR;
    }

    in_body = rq->ix.buf == (char *) body;
    n = ngx_http_toolsearch_body_count(it, in_body, &copied);

    bufs = ngx_pcalloc(r->pool, (n ? n : 1) * sizeof(ngx_buf_t));
    links = ngx_palloc(r->pool, (n ? n : 1) * sizeof(ngx_chain_t));
    p = ngx_http_toolsearch_body_block(r, copied);
    nb->length.data = ngx_pnalloc(r->pool, NGX_OFF_T_LEN);

    /* a JSON body never becomes empty */
    if (n == 0 || bufs == NULL || links == NULL || p == NULL
        || nb->length.data == NULL)
    {
        return NGX_ERROR;
    }

    b = NULL;
    ll = &nb->cl;
    was_copy = 0;
    nb->size = 0;

    while (ts_pieces_next(&it, &pc)) {
        copy = ngx_http_toolsearch_piece_copied(&pc, in_body);
        nb->size += pc.len;

        /* copied pieces in a row are one range of the block */
        if (copy && was_copy) {
            p = ngx_cpymem(p, pc.data, pc.len);
            b->last = p;
            b->end = p;
            continue;
        }

        b = bufs++;
        b->start = copy ? p : (u_char *) pc.data;
        b->end = b->start + pc.len;

        if (copy) {
            p = ngx_cpymem(p, pc.data, pc.len);
        }

        /* upstream retries rewind buffers to start */
        b->pos = b->start;
        b->last = b->end;
        b->memory = 1;

        links->buf = b;
        *ll = links;
        ll = &links->next;
        links++;
        was_copy = copy;
    }

    *ll = NULL;
    b->last_buf = 1;
    nb->last = b;

    nb->length.len = ngx_sprintf(nb->length.data, "%O", nb->size)
                     - nb->length.data;

    return NGX_OK;
}


static void
ngx_http_toolsearch_body_commit(ngx_http_request_t *r,
    ngx_http_toolsearch_body_t *nb)
{
    ngx_http_request_body_t  *rb;

    rb = r->request_body;
    rb->bufs = nb->cl;
    rb->buf = nb->last;

    /* the pool cleanup still removes the file */
    rb->temp_file = NULL;

    r->headers_in.content_length_n = nb->size;

    if (r->headers_in.content_length) {
        r->headers_in.content_length->value = nb->length;
    }
}


/*
 * Puts the engine's result into the request: the new body and the
 * anthropic-beta lines change together or not at all.
 */
ngx_int_t
ngx_http_toolsearch_apply(ngx_http_request_t *r, ts_request_t *rq,
    u_char *body)
{
    ngx_flag_t                    changed;
    ngx_http_toolsearch_body_t    nb;
    ngx_http_toolsearch_betas_t   nh;

    ngx_memzero(&nb, sizeof(ngx_http_toolsearch_body_t));
    ngx_memzero(&nh, sizeof(ngx_http_toolsearch_betas_t));

    changed = ts_request_changed(rq);

    if (changed
        && ngx_http_toolsearch_body_prepare(r, rq, body, &nb) != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (rq->betas_changed
        && ngx_http_toolsearch_betas_prepare(r, rq->betas,
                                             ngx_strlen(rq->betas), &nh)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (changed) {
        ngx_http_toolsearch_body_commit(r, &nb);
    }

    if (rq->betas_changed) {
        ngx_http_toolsearch_betas_commit(r, &nh);
    }

    return NGX_OK;
}

