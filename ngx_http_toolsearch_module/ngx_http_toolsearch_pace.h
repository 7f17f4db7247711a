/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The pace of a body filter that rewrites an answer: it takes the
 * upstream's bytes only as fast as the client takes what it makes of
 * them, so a request holds a few buffers whatever the answer's size or
 * the client's pace, and the upstream module stops reading (or spools to
 * its temporary file) as it does for plain proxying.
 */

#ifndef NGX_HTTP_TOOLSEARCH_PACE_H
#define NGX_HTTP_TOOLSEARCH_PACE_H

#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "scan/ts_buf.h"


/* the size of the filter's own output buffers */
#define NGX_HTTP_TOOLSEARCH_PACE_BUF    (8 * 1024)

/* the most the filter's buffers hold while the client has not taken them;
 * past it, the upstream's buffers wait where they are */
#define NGX_HTTP_TOOLSEARCH_PACE_BUSY   (4 * NGX_HTTP_TOOLSEARCH_PACE_BUF)

/* r->buffered while the filter holds bytes: the image filter's bit, which
 * never sees a JSON answer or an event stream */
#define NGX_HTTP_TOOLSEARCH_BUFFERED    0x08


/*
 * What a filter makes of n bytes of the answer: appends the client's bytes
 * to out; last at the answer's end (n may be 0).  NGX_OK or NGX_ERROR.
 */
typedef ngx_int_t (*ngx_http_toolsearch_feed_pt)(ngx_http_request_t *r,
    u_char *p, size_t n, ngx_uint_t last, ts_buf_t *out);


typedef struct {
    ngx_http_toolsearch_feed_pt   feed;
    ngx_chain_t                  *in;       /* the upstream's, not yet fed */
    ngx_chain_t                  *free;     /* our buffers, to reuse */
    ngx_chain_t                  *busy;     /* ours, not sent yet */
    ts_buf_t                      held;     /* fed, not yet in a buffer */
    ngx_buf_t                    *flush_buf;    /* an empty one, reused */
    size_t                        taken;    /* of held, in buffers */
    ngx_http_request_t           *hooked;   /* whose write events we see */
    ngx_http_event_handler_pt     write;    /* ... and their handler */
    unsigned                      flush:1;  /* each buffer flushed */
    unsigned                      flushing:1;   /* a flush came in */
    unsigned                      last:1;   /* the answer's end was fed */
    unsigned                      ended:1;  /* ... and went out */
} ngx_http_toolsearch_pace_t;


/* flush: every buffer goes out at once (an event stream) */
void ngx_http_toolsearch_pace_init(ngx_http_toolsearch_pace_t *pace,
    ngx_http_toolsearch_feed_pt feed, ngx_uint_t flush);

/* frees what the pace holds outside the request's pool */
void ngx_http_toolsearch_pace_free(ngx_http_toolsearch_pace_t *pace);

/*
 * The body filter's work: in (NULL too: the call that flushes) is fed as
 * the client takes the output, which goes to next.  NGX_AGAIN while bytes
 * wait; the client's write events move them on.
 */
ngx_int_t ngx_http_toolsearch_pace(ngx_http_request_t *r,
    ngx_http_toolsearch_pace_t *pace, ngx_chain_t *in,
    ngx_http_output_body_filter_pt next);


#endif /* NGX_HTTP_TOOLSEARCH_PACE_H */
