/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * A body filter that copied every piece of the answer and marked the
 * upstream's buffers taken let nginx read the whole answer into the
 * worker's memory while the client read slowly or not at all.  Here the
 * upstream's buffers stay untaken until their bytes are fed, and bytes
 * are fed only while the filter's own buffers, reused as the client
 * takes them, have room: the upstream module then stops reading, or
 * spools to its temporary file, as for plain proxying.  What waits moves
 * on at the client's write events, not only when the upstream sends more.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_toolsearch_module.h"


/* the most fed at a time: what one feed makes stays near this size */
#define NGX_HTTP_TOOLSEARCH_PACE_SLICE  NGX_HTTP_TOOLSEARCH_PACE_BUF


void
ngx_http_toolsearch_pace_init(ngx_http_toolsearch_pace_t *pace,
    ngx_http_toolsearch_feed_pt feed, ngx_uint_t flush)
{
    ngx_memzero(pace, sizeof(ngx_http_toolsearch_pace_t));

    pace->feed = feed;
    pace->flush = flush ? 1 : 0;
    ts_buf_init(&pace->held, 0);
}


void
ngx_http_toolsearch_pace_free(ngx_http_toolsearch_pace_t *pace)
{
    ts_buf_free(&pace->held);
}


/* the capacity of our buffers the client has not taken */
static size_t
ngx_http_toolsearch_pace_busy(ngx_http_toolsearch_pace_t *pace)
{
    size_t        size;
    ngx_chain_t  *cl;

    size = 0;

    for (cl = pace->busy; cl; cl = cl->next) {
        size += cl->buf->end - cl->buf->start;
    }

    return size;
}


/* a free buffer of ours, or a new one */
static ngx_chain_t *
ngx_http_toolsearch_pace_buf(ngx_http_request_t *r,
    ngx_http_toolsearch_pace_t *pace)
{
    u_char       *start, *end;
    ngx_buf_t    *b;
    ngx_chain_t  *cl;


    if (pace->free) {
        cl = pace->free;
        pace->free = cl->next;
        cl->next = NULL;

        b = cl->buf;
        start = b->start;
        end = b->end;

        ngx_memzero(b, sizeof(ngx_buf_t));
        b->start = start;
        b->end = end;
        b->pos = start;
        b->last = start;
        b->temporary = 1;
        b->tag = (ngx_buf_tag_t) &ngx_http_toolsearch_pace;

        return cl;
    }

    cl = ngx_alloc_chain_link(r->pool);
    if (cl == NULL) {
        return NULL;
    }

    cl->buf = ngx_create_temp_buf(r->pool, NGX_HTTP_TOOLSEARCH_PACE_BUF);
    if (cl->buf == NULL) {
        return NULL;
    }

    cl->buf->tag = (ngx_buf_tag_t) &ngx_http_toolsearch_pace;
    cl->next = NULL;

    return cl;
}


/*
 * A buffer without bytes that says flush, or last, after out's bytes: a
 * flush marks the last of our buffers when there is one, else the pace's
 * own empty buffer, the same each time (an upstream that flushes every
 * piece would otherwise cost a buffer each); tag NULL: not for reuse.
 */
static ngx_int_t
ngx_http_toolsearch_pace_special(ngx_http_request_t *r,
    ngx_http_toolsearch_pace_t *pace, ngx_chain_t ***ll, ngx_buf_t *cur,
    ngx_uint_t last)
{
    ngx_buf_t    *b;
    ngx_chain_t  *cl;

    if (!last && cur) {
        cur->flush = 1;
        return NGX_OK;
    }

    if (last || pace->flush_buf == NULL) {
        b = ngx_calloc_buf(r->pool);
        if (b == NULL) {
            return NGX_ERROR;
        }

        b->flush = 1;
        b->last_buf = last ? 1 : 0;
        b->last_in_chain = 1;

        if (!last) {
            pace->flush_buf = b;
        }

    } else {
        b = pace->flush_buf;
    }

    cl = ngx_alloc_chain_link(r->pool);
    if (cl == NULL) {
        return NGX_ERROR;
    }

    cl->buf = b;
    cl->next = NULL;

    **ll = cl;
    *ll = &cl->next;

    return NGX_OK;
}


/*
 * Held bytes into our buffers, the current one first, each new one
 * appended at **ll and taken off the room.  NGX_DECLINED: no room.
 */
static ngx_int_t
ngx_http_toolsearch_pace_fill(ngx_http_request_t *r,
    ngx_http_toolsearch_pace_t *pace, ngx_chain_t ***ll, ngx_buf_t **cur,
    size_t *room)
{
    size_t        n;
    ngx_buf_t    *b;
    ngx_chain_t  *cl;

    while (pace->taken < pace->held.len) {
        b = *cur;

        if (b == NULL || b->last == b->end) {
            if (*room == 0) {
                return NGX_DECLINED;
            }

            cl = ngx_http_toolsearch_pace_buf(r, pace);
            if (cl == NULL) {
                return NGX_ERROR;
            }

            b = cl->buf;
            b->flush = pace->flush;
            b->last_in_chain = (r != r->main);

            **ll = cl;
            *ll = &cl->next;
            *cur = b;

            n = b->end - b->start;
            *room = *room > n ? *room - n : 0;
        }

        n = ngx_min(pace->held.len - pace->taken, (size_t) (b->end - b->last));
        b->last = ngx_cpymem(b->last, pace->held.p + pace->taken, n);
        pace->taken += n;
    }

    /* a large event or a JSON answer's cut leaves no memory behind */
    if (pace->held.cap > NGX_HTTP_TOOLSEARCH_PACE_BUSY) {
        ts_buf_free(&pace->held);

    } else {
        ts_buf_reset(&pace->held);
    }

    pace->taken = 0;

    return NGX_OK;
}


/* the next slice of the upstream's bytes to the feed */
static ngx_int_t
ngx_http_toolsearch_pace_feed(ngx_http_request_t *r,
    ngx_http_toolsearch_pace_t *pace)
{
    size_t        n;
    ngx_buf_t    *b;
    ngx_uint_t    last;
    ngx_chain_t  *cl;

    cl = pace->in;
    b = cl->buf;

    if (!ngx_buf_in_memory(b) && ngx_buf_size(b) != 0) {
        /* filter_need_in_memory asks the copy filter for memory */
        ngx_log_error(NGX_LOG_ALERT, r->connection->log, 0,
                      "toolsearch: an answer's bytes not in memory");
        return NGX_ERROR;
    }

    n = ngx_buf_in_memory(b) ? (size_t) (b->last - b->pos) : 0;
    n = ngx_min(n, NGX_HTTP_TOOLSEARCH_PACE_SLICE);
    last = (b->last_buf && (ngx_buf_in_memory(b) ? b->pos + n == b->last
                                                  : 1));

    if ((n || last)
        && (pace->feed(r, b->pos, n, last, &pace->held) != NGX_OK
            || pace->held.failed))
    {
        return NGX_ERROR;
    }

    if (n) {
        b->pos += n;
    }

    if (ngx_buf_in_memory(b) && b->pos != b->last) {
        return NGX_OK;
    }

    /* the buffer is done: the upstream module may reuse it */
    if (b->in_file) {
        b->file_pos = b->file_last;
    }

    pace->last |= last;
    pace->flushing |= b->flush;
    pace->in = cl->next;
    ngx_free_chain(r->pool, cl);

    return NGX_OK;
}


/*
 * One round: the held bytes and as much of the upstream's as there is
 * room for, in our buffers; *moved when anything was fed or made.
 */
static ngx_int_t
ngx_http_toolsearch_pace_round(ngx_http_request_t *r,
    ngx_http_toolsearch_pace_t *pace, ngx_chain_t **out, ngx_uint_t *moved)
{
    size_t         busy, room;
    ngx_int_t      rc;
    ngx_buf_t     *cur;
    ngx_chain_t  **ll;

    busy = ngx_http_toolsearch_pace_busy(pace);
    room = busy < NGX_HTTP_TOOLSEARCH_PACE_BUSY
           ? NGX_HTTP_TOOLSEARCH_PACE_BUSY - busy : 0;
    ll = out;
    cur = NULL;

    for ( ;; ) {
        rc = ngx_http_toolsearch_pace_fill(r, pace, &ll, &cur, &room);

        if (rc == NGX_ERROR) {
            return NGX_ERROR;
        }

        if (*out) {
            *moved = 1;
        }

        if (rc == NGX_DECLINED) {
            return NGX_OK;
        }

        if ((pace->last && !pace->ended) || pace->flushing) {
            if (ngx_http_toolsearch_pace_special(r, pace, &ll, cur,
                                                 pace->last && !pace->ended)
                != NGX_OK)
            {
                return NGX_ERROR;
            }

            cur = NULL;
            pace->ended = pace->last;
            pace->flushing = 0;
            *moved = 1;
        }

        if (pace->in == NULL || room == 0) {
            return NGX_OK;
        }

        if (ngx_http_toolsearch_pace_feed(r, pace) != NGX_OK) {
            return NGX_ERROR;
        }

        *moved = 1;
    }
}


/* bytes wait in the filter: fed or not */
static ngx_uint_t
ngx_http_toolsearch_pace_waiting(ngx_http_toolsearch_pace_t *pace)
{
    return pace->in != NULL || pace->taken < pace->held.len;
}


/* the client's write events move what waits, then go where they went */
static void
ngx_http_toolsearch_pace_write(ngx_http_request_t *r)
{
    ngx_event_t                *wev;
    ngx_http_toolsearch_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_toolsearch_module);
    wev = r->connection->write;

    if (!wev->timedout && !wev->delayed
        && (ngx_http_toolsearch_pace_waiting(&ctx->pace) || ctx->pace.busy))
    {
        /* an error shows again to the handler below, which ends the
         * request */
        (void) ngx_http_output_filter(r, NULL);
    }

    ctx->pace.write(r);
}


ngx_int_t
ngx_http_toolsearch_pace(ngx_http_request_t *r,
    ngx_http_toolsearch_pace_t *pace, ngx_chain_t *in,
    ngx_http_output_body_filter_pt next)
{
    size_t        busy;
    ngx_int_t     rc;
    ngx_uint_t    moved, first;
    ngx_chain_t  *out;

    if (in && ngx_chain_add_copy(r->pool, &pace->in, in) != NGX_OK) {
        return NGX_ERROR;
    }

    if (pace->hooked != r
        && r->write_event_handler != ngx_http_toolsearch_pace_write)
    {
        pace->hooked = r;
        pace->write = r->write_event_handler;
        r->write_event_handler = ngx_http_toolsearch_pace_write;
    }

    rc = NGX_OK;

    for (first = 1; /* void */; first = 0) {
        out = NULL;
        moved = 0;
        busy = ngx_http_toolsearch_pace_busy(pace);

        if (ngx_http_toolsearch_pace_round(r, pace, &out, &moved) != NGX_OK) {
            return NGX_ERROR;
        }

        /* a call without bytes passes on too: it flushes what waits */
        if (out || first) {
            rc = next(r, out);

            ngx_chain_update_chains(r->pool, &pace->free, &pace->busy, &out,
                                    (ngx_buf_tag_t) &ngx_http_toolsearch_pace);

            if (rc == NGX_ERROR) {
                return NGX_ERROR;
            }
        }

        /* on, while bytes move or the client took some of ours: the
         * socket may take more, and no write event would say so */
        if (!moved
            && !(ngx_http_toolsearch_pace_waiting(pace)
                 && ngx_http_toolsearch_pace_busy(pace) < busy))
        {
            break;
        }
    }

    if (ngx_http_toolsearch_pace_waiting(pace)) {
        r->buffered |= NGX_HTTP_TOOLSEARCH_BUFFERED;
        return NGX_AGAIN;
    }

    r->buffered &= ~NGX_HTTP_TOOLSEARCH_BUFFERED;

    return pace->busy ? NGX_AGAIN : rc;
}
