/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Gateway-executed search in Nginx: each upstream call is a subrequest
 * to the request's own location, whose proxy_pass runs it; the response
 * filters feed its answer to the engine's loop (src/loop/ts_loop.c) and send
 * the client what the loop gives.  The first call starts from the
 * request's content handler, each later one from the main request's
 * write handler, once the previous one has ended.  The loop's state
 * (ngx_http_toolsearch_loop.h) lives from ngx_http_toolsearch_loop_start()
 * to the cleanup of the request's pool, the one place that frees it.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_toolsearch_module.h"
#include "ngx_http_toolsearch_loop.h"
#include "ngx_http_toolsearch_status.h"
#include "ngx_http_toolsearch_betas.h"
#include "chat/ts_chat.h"
#include "responses/ts_responses.h"

#if (NGX_HAVE_MALLOC_TRIM)
#include <malloc.h>
#endif


/* the most of a failed call's answer kept for the client's error */
#define NGX_HTTP_TOOLSEARCH_ERROR_MAX  (64 * 1024)


static ngx_int_t ngx_http_toolsearch_loop_content(ngx_http_request_t *r);
static ngx_int_t ngx_http_toolsearch_call(ngx_http_request_t *r,
    ngx_http_toolsearch_loop_t *ctx);
static void ngx_http_toolsearch_loop_handler(ngx_http_request_t *r);
static ngx_int_t ngx_http_toolsearch_loop_feed(ngx_http_request_t *r,
    u_char *p, size_t n, ngx_uint_t last, ts_buf_t *out);


/* gateway-search requests in flight at once that make a burst, after
 * which the worker gives back the memory they freed */
#define NGX_HTTP_TOOLSEARCH_BURST  16


static ngx_http_output_header_filter_pt  ngx_http_next_header_filter;
static ngx_http_output_body_filter_pt    ngx_http_next_body_filter;

/* the worker's gateway-search requests in flight, and their most since
 * it last gave memory back */
static ngx_uint_t  ngx_http_toolsearch_loops;
static ngx_uint_t  ngx_http_toolsearch_loops_peak;


/* the request's loop, through the context its calls share */
static ngx_http_toolsearch_loop_t *
ngx_http_toolsearch_loop_of(ngx_http_request_t *r)
{
    ngx_http_toolsearch_ctx_t  *shared;

    shared = ngx_http_get_module_ctx(r, ngx_http_toolsearch_module);

    return shared ? shared->loop : NULL;
}


static void
ngx_http_toolsearch_loop_began(void)
{
    if (++ngx_http_toolsearch_loops > ngx_http_toolsearch_loops_peak) {
        ngx_http_toolsearch_loops_peak = ngx_http_toolsearch_loops;
    }
}


/*
 * glibc keeps what the loops of a burst freed (each holds its body's
 * size several times: index, calls, answers), and the heap stays at the
 * burst's size.  Once the last of a burst has ended, it goes back to the
 * system: once per burst, never while requests run.
 */
static void
ngx_http_toolsearch_loop_ended(void)
{
    ngx_http_toolsearch_loops--;

    if (ngx_http_toolsearch_loops > 0
        || ngx_http_toolsearch_loops_peak < NGX_HTTP_TOOLSEARCH_BURST)
    {
        return;
    }

    ngx_http_toolsearch_loops_peak = 0;

#if (NGX_HAVE_MALLOC_TRIM)
    (void) malloc_trim(0);
#endif
}


static void
ngx_http_toolsearch_loop_cleanup(void *data)
{
    ngx_http_toolsearch_loop_t  *ctx = data;

    ts_loop_free(ctx->loop);
    ts_buf_free(&ctx->call);
    ts_buf_free(&ctx->out);
    ts_buf_free(&ctx->error);
    ngx_http_toolsearch_pace_free(&ctx->shared->pace);
    ctx->loop = NULL;

    if (ctx->cut) {
        ts_cut_free(ctx->cut);
        ctx->cut = NULL;
    }

    ngx_http_toolsearch_loop_ended();
}


/* the upstream must answer uncompressed: the filters read its events */
static void
ngx_http_toolsearch_drop_accept_encoding(ngx_http_request_t *r)
{
    ngx_uint_t        i;
    ngx_list_part_t  *part;
    ngx_table_elt_t  *h;

    for (part = &r->headers_in.headers.part; part; part = part->next) {
        h = part->elts;

        for (i = 0; i < part->nelts; i++) {
            if (h[i].key.len == sizeof("Accept-Encoding") - 1
                && ngx_strncasecmp(h[i].key.data,
                                   (u_char *) "Accept-Encoding",
                                   sizeof("Accept-Encoding") - 1) == 0)
            {
                /* a header with an empty value is not sent by proxy */
                h[i].value.len = 0;
            }
        }
    }
}


/* the engine's loop for the request's format, and whether it streams */
static ts_loop_t *
ngx_http_toolsearch_loop_create(ngx_http_toolsearch_loop_t *ctx,
    ts_request_t *rq, ts_input_t *in, u_char *body, size_t len)
{
    const ts_member_t  *stream;

    if (ctx->shared->format == TS_FORMAT_CHAT) {
        ctx->sse = ts_chat_stream(rq);
        return ts_chat_loop_create(in, rq);
    }

    stream = ts_index_top(&rq->ix, TS_TOP_STREAM);
    ctx->sse = stream != NULL && stream->val.kind == TS_TRUE;

    if (ctx->shared->format == TS_FORMAT_RESPONSES) {
        return ts_responses_loop_create(in, rq);
    }

    return ts_loop_create(in, (char *) body, len);
}


/*
 * The loop's state from its start: bytes for the client go out as they
 * come (the pace), and what the client gets of the searches is their
 * blocks, or only the final content (the cut runs over those bytes).
 */
static void
ngx_http_toolsearch_loop_init_state(ngx_http_toolsearch_loop_t *ctx,
    ngx_http_toolsearch_loc_conf_t *tlcf)
{
    ts_buf_init(&ctx->call, 0);
    ts_buf_init(&ctx->out, 0);
    ts_buf_init(&ctx->error, 0);

    ngx_http_toolsearch_pace_init(&ctx->shared->pace,
                                  ngx_http_toolsearch_loop_feed, 1);

    if (ctx->cut) {
        ts_cut_init(ctx->cut, tlcf->policy.search_tool, ctx->sse);
    }
}


ngx_int_t
ngx_http_toolsearch_loop_start(ngx_http_request_t *r,
    ngx_http_toolsearch_ctx_t *shared, ts_request_t *rq, ts_input_t *in,
    u_char *body, size_t len)
{
    ngx_pool_cleanup_t              *cln;
    ngx_http_toolsearch_loop_t      *ctx;
    ngx_http_toolsearch_loc_conf_t  *tlcf;

    tlcf = ngx_http_get_module_loc_conf(r, ngx_http_toolsearch_module);
    ctx = ngx_pcalloc(r->pool, sizeof(ngx_http_toolsearch_loop_t));
    cln = ngx_pool_cleanup_add(r->pool, 0);

    if (ctx == NULL || cln == NULL) {
        return NGX_ERROR;
    }

    ctx->shared = shared;

    if (ngx_http_toolsearch_strips(tlcf, shared)) {
        ctx->cut = ngx_palloc(r->pool, sizeof(ts_cut_t));
        if (ctx->cut == NULL) {
            return NGX_ERROR;
        }
    }

    ctx->loop = ngx_http_toolsearch_loop_create(ctx, rq, in, body, len);
    if (ctx->loop == NULL) {
        return NGX_ERROR;
    }

    /* from here on the pool's cleanup frees what the loop holds */
    cln->handler = ngx_http_toolsearch_loop_cleanup;
    cln->data = ctx;
    ngx_http_toolsearch_loop_began();

    ngx_http_toolsearch_loop_init_state(ctx, tlcf);
    shared->loop = ctx;

    r->content_handler = ngx_http_toolsearch_loop_content;

    return NGX_OK;
}


void
ngx_http_toolsearch_loop_keep(ngx_http_toolsearch_ctx_t *shared,
    ts_request_t *rq)
{
    if (shared->loop != NULL) {
        ts_loop_keep(shared->loop->loop, rq);
    }
}


/*
 * The loop is the request's content: the phases before it (mirror,
 * try_files and the other precontent handlers) run as for any request.
 */
static ngx_int_t
ngx_http_toolsearch_loop_content(ngx_http_request_t *r)
{
    ngx_http_toolsearch_loop_t  *ctx;

    /* a call of a location without a handler of its own (proxy_pass)
     * would inherit this one: it has nowhere to go */
    if (r != r->main) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ctx = ngx_http_toolsearch_loop_of(r);

    if (ctx == NULL || ctx->loop == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_toolsearch_drop_accept_encoding(r);

    if (ngx_http_toolsearch_call(r, ctx) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    r->write_event_handler = ngx_http_toolsearch_loop_handler;
    r->main->count++;

    return NGX_DONE;
}


static ngx_int_t
ngx_http_toolsearch_call_done(ngx_http_request_t *sr, void *data,
    ngx_int_t rc)
{
    ngx_http_toolsearch_loop_t  *ctx = data;

    /* $upstream_status and its kin of the client's request list every
     * call, " : " between them, as after an internal redirect */
    sr->main->upstream_states = sr->upstream_states;

    /* an unreachable upstream ends the call twice: its error, its page */
    if (ctx->sr == sr && !ctx->done) {
        ctx->done = 1;
    }

    return rc;
}


static ngx_int_t
ngx_http_toolsearch_call(ngx_http_request_t *r,
    ngx_http_toolsearch_loop_t *ctx)
{
    ngx_buf_t                    *b;
    ngx_chain_t                  *cl;
    ngx_http_request_t           *sr;
    ngx_http_request_body_t      *rb;
    ngx_http_post_subrequest_t   *ps;
    const char                   *betas;
    size_t                        len;

    if (ts_loop_request(ctx->loop, &ctx->call) != 0) {
        return NGX_ERROR;
    }

    /* a call that loads tools as references needs the beta, others not */
    betas = ts_loop_betas(ctx->loop, &len);

    if (ngx_http_toolsearch_set_betas(r, betas, len) != NGX_OK) {
        return NGX_ERROR;
    }

    ps = ngx_palloc(r->pool, sizeof(ngx_http_post_subrequest_t));
    rb = ngx_pcalloc(r->pool, sizeof(ngx_http_request_body_t));
    b = ngx_calloc_buf(r->pool);
    cl = ngx_alloc_chain_link(r->pool);

    if (ps == NULL || rb == NULL || b == NULL || cl == NULL) {
        return NGX_ERROR;
    }

    ps->handler = ngx_http_toolsearch_call_done;
    ps->data = ctx;

    /*
     * A clone is not routed again: it keeps the request's location, its
     * URI and arguments after rewrites, and starts at the content phase,
     * so each call goes where the client's own request goes, through the
     * same proxy_pass, and never into a location the client was denied
     * (subrequests skip the access phase).
     */
    if (ngx_http_subrequest(r, &r->uri, &r->args, &sr, ps,
                            NGX_HTTP_SUBREQUEST_CLONE)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* pos == start: a proxy_next_upstream retry rewinds to start */
    b->start = (u_char *) ctx->call.p;
    b->pos = b->start;
    b->last = b->start + ctx->call.len;
    b->end = b->last;
    b->memory = 1;
    b->last_buf = 1;

    cl->buf = b;
    cl->next = NULL;
    rb->bufs = cl;
    rb->buf = b;

    sr->request_body = rb;
    sr->method = NGX_HTTP_POST;
    ngx_str_set(&sr->method_name, "POST");
    sr->headers_in.content_length_n = ctx->call.len;
    sr->headers_in.content_length = NULL;
    sr->headers_in.chunked = 0;

    ngx_http_set_ctx(sr, ctx->shared, ngx_http_toolsearch_module);

    sr->upstream_states = r->upstream_states;

    ctx->sr = sr;
    ctx->done = 0;
    ctx->answering = 0;
    ctx->complete = 0;
    ctx->failed = 0;
    ts_buf_reset(&ctx->error);

    return NGX_OK;
}


/* the call's status, type and own headers become the client's */
static ngx_int_t
ngx_http_toolsearch_copy_headers(ngx_http_request_t *r,
    ngx_http_request_t *sr)
{
    ngx_uint_t        i;
    ngx_list_part_t  *part;
    ngx_table_elt_t  *h, *ho;

    r->headers_out.status = sr->headers_out.status;
    r->headers_out.status_line = sr->headers_out.status_line;
    r->headers_out.content_type = sr->headers_out.content_type;
    r->headers_out.content_type_len = sr->headers_out.content_type_len;
    r->headers_out.content_type_lowcase = NULL;
    r->headers_out.content_length_n = sr->headers_out.content_length_n;

    for (part = &sr->headers_out.headers.part; part; part = part->next) {
        h = part->elts;

        for (i = 0; i < part->nelts; i++) {
            if (h[i].hash == 0) {
                continue;
            }

            ho = ngx_list_push(&r->headers_out.headers);
            if (ho == NULL) {
                return NGX_ERROR;
            }

            *ho = h[i];
        }
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_toolsearch_is_sse(ngx_http_request_t *sr)
{
    ngx_str_t  *t;

    t = &sr->headers_out.content_type;

    return t->len >= sizeof("text/event-stream") - 1
           && ngx_strncasecmp(t->data, (u_char *) "text/event-stream",
                              sizeof("text/event-stream") - 1) == 0;
}


/*
 * A call's error goes to the client as the upstream gave it while the
 * client's header is not sent; once it is, its body is kept for the
 * error event that ends the stream.
 */
static ngx_int_t
ngx_http_toolsearch_loop_header_filter(ngx_http_request_t *r)
{
    ngx_http_request_t          *pr;
    ngx_http_toolsearch_loop_t  *ctx;

    ctx = ngx_http_toolsearch_loop_of(r);

    if (r == r->main || ctx == NULL || ctx->sr != r) {
        return ngx_http_next_header_filter(r);
    }

    pr = r->main;
    r->header_sent = 1;
    r->filter_need_in_memory = 1;
    ctx->answering = 1;

    if (r->headers_out.status != NGX_HTTP_OK
        || ngx_http_toolsearch_is_sse(r) != ctx->sse)
    {
        if (ctx->streaming) {
            ctx->failed = 1;
            ctx->error_status = r->headers_out.status;
            return NGX_OK;
        }

        ctx->passthrough = 1;

        if (ngx_http_toolsearch_copy_headers(pr, r) != NGX_OK) {
            return NGX_ERROR;
        }

        return ngx_http_send_header(pr);
    }

    ts_loop_start(ctx->loop, ctx->sse);

    if (!ctx->sse || ctx->streaming) {
        return NGX_OK;
    }

    /* events go out as they come: the client's header goes now */
    ctx->streaming = 1;

    if (ngx_http_toolsearch_copy_headers(pr, r) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_http_clear_content_length(pr);
    ngx_http_clear_accept_ranges(pr);

    return ngx_http_send_header(pr);
}


/*
 * The loop's bytes for the client without the search blocks, where
 * toolsearch_search_blocks strip asks it; last: the answer's end.
 */
static ngx_int_t
ngx_http_toolsearch_cut(ngx_http_toolsearch_loop_t *ctx, ngx_uint_t last)
{
    ts_buf_t  cut;

    if (ctx->cut == NULL) {
        return NGX_OK;
    }

    ts_buf_init(&cut, 0);
    (void) ts_cut_feed(ctx->cut, ctx->out.p, ctx->out.len, &cut);

    if (last) {
        (void) ts_cut_end(ctx->cut, &cut);
        ts_cut_free(ctx->cut);
        ctx->cut = NULL;
    }

    ts_buf_free(&ctx->out);
    ctx->out = cut;

    return cut.failed ? NGX_ERROR : NGX_OK;
}


/*
 * The loop's bytes between and after its calls (what a call's answer
 * gives goes through the body filter), flushed: the write filter must
 * not hold them.  The last ones are sent from where they are, a whole
 * JSON answer too, and stay until the request's pool goes.
 */
static ngx_int_t
ngx_http_toolsearch_send(ngx_http_request_t *r,
    ngx_http_toolsearch_loop_t *ctx, ngx_uint_t last)
{
    ngx_buf_t    *b;
    ngx_chain_t   out;

    if (ctx->out.failed || ngx_http_toolsearch_cut(ctx, last) != NGX_OK) {
        return NGX_ERROR;
    }

    if (ctx->out.len == 0 && !last) {
        return NGX_OK;
    }

    if (last) {
        b = ngx_calloc_buf(r->pool);
        if (b == NULL) {
            return NGX_ERROR;
        }

        b->pos = (u_char *) ctx->out.p;
        b->last = b->pos + ctx->out.len;
        b->memory = (ctx->out.len != 0);

    } else {
        b = ngx_create_temp_buf(r->pool, ctx->out.len);
        if (b == NULL) {
            return NGX_ERROR;
        }

        b->last = ngx_cpymem(b->pos, ctx->out.p, ctx->out.len);
        ts_buf_reset(&ctx->out);
    }

    b->flush = 1;
    b->last_buf = last;
    b->last_in_chain = 1;

    out.buf = b;
    out.next = NULL;

    return ngx_http_output_filter(r, &out);
}


/* keeps what the answer says: the loop's input, or a failed call's body */
static void
ngx_http_toolsearch_take(ngx_http_toolsearch_loop_t *ctx, u_char *p, size_t n)
{
    if (!ctx->failed) {
        if (ts_loop_feed(ctx->loop, (char *) p, n, &ctx->out) != 0) {
            /* the gateway cannot follow the answer: the call failed */
            ctx->failed = 1;
            ctx->error_status = 0;
        }

    } else if (ctx->error_status != 0
               && ctx->error.len + n <= NGX_HTTP_TOOLSEARCH_ERROR_MAX)
    {
        (void) ts_buf_add(&ctx->error, (char *) p, n);
    }
}


/*
 * The pace's feed: n bytes of the call's answer to the loop; what the
 * loop gives the client of an event stream, cut, in out.
 */
static ngx_int_t
ngx_http_toolsearch_loop_feed(ngx_http_request_t *r, u_char *p, size_t n,
    ngx_uint_t last, ts_buf_t *out)
{
    ngx_int_t                    rc;
    ngx_http_toolsearch_loop_t  *ctx;

    ctx = ngx_http_toolsearch_loop_of(r);

    ngx_http_toolsearch_take(ctx, p, n);

    if (ctx->failed || !ctx->sse) {
        ts_buf_reset(&ctx->out);
        return NGX_OK;
    }

    if (ctx->out.failed || ngx_http_toolsearch_cut(ctx, 0) != NGX_OK) {
        return NGX_ERROR;
    }

    rc = ts_buf_add(out, ctx->out.p, ctx->out.len) == 0 ? NGX_OK : NGX_ERROR;
    ts_buf_reset(&ctx->out);

    return rc;
}


static ngx_int_t
ngx_http_toolsearch_loop_body_filter(ngx_http_request_t *r,
    ngx_chain_t *in)
{
    ngx_chain_t                 *cl;
    ngx_http_toolsearch_loop_t  *ctx;

    ctx = ngx_http_toolsearch_loop_of(r);

    if (r == r->main || ctx == NULL || ctx->sr != r) {
        return ngx_http_next_body_filter(r, in);
    }

    /* an answer that breaks off ends without its last buffer */
    for (cl = in; cl; cl = cl->next) {
        if (cl->buf->last_in_chain || cl->buf->last_buf) {
            ctx->complete = 1;
        }
    }

    if (ctx->passthrough) {
        return ngx_http_next_body_filter(r, in);
    }

    /* the answer is fed at the client's pace (the pace's file) */
    return ngx_http_toolsearch_pace(r, &ctx->shared->pace, in,
                                    ngx_http_next_body_filter);
}


/* the counters the loop fills (LOOP in ts_counters.h), and their sums */
static void
ngx_http_toolsearch_loop_stats(ngx_http_request_t *r,
    ngx_http_toolsearch_loop_t *ctx)
{
    ts_loop_counters(ctx->shared->count, ctx->loop);

    ngx_http_toolsearch_stat_loop(r, ctx->shared->format,
                                  ctx->shared->count);
}


/* the header, with the length of what the loop has for the client, then
 * those bytes, the last */
static ngx_int_t
ngx_http_toolsearch_send_whole(ngx_http_request_t *r,
    ngx_http_toolsearch_loop_t *ctx)
{
    ngx_int_t  rc;

    r->headers_out.content_length_n = ctx->out.len;
    ngx_http_clear_accept_ranges(r);

    rc = ngx_http_send_header(r);
    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
        return rc;
    }

    return ngx_http_toolsearch_send(r, ctx, 1);
}


/* a whole JSON message goes out once the loop is done */
static ngx_int_t
ngx_http_toolsearch_send_json(ngx_http_request_t *r,
    ngx_http_toolsearch_loop_t *ctx)
{
    if (ngx_http_toolsearch_copy_headers(r, ctx->sr) != NGX_OK
        || ngx_http_toolsearch_cut(ctx, 1) != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_toolsearch_send_whole(r, ctx);
}


/* the client's error when the client's header is not sent yet */
static ngx_int_t
ngx_http_toolsearch_send_error(ngx_http_request_t *r,
    ngx_http_toolsearch_loop_t *ctx)
{
    r->headers_out.status = NGX_HTTP_BAD_GATEWAY;
    ngx_str_set(&r->headers_out.content_type, "application/json");
    r->headers_out.content_type_len = r->headers_out.content_type.len;
    r->headers_out.content_type_lowcase = NULL;

    return ngx_http_toolsearch_send_whole(r, ctx);
}


/*
 * A call failed: the client gets an error it can read, the upstream's own
 * where it gave one.  In a started stream it is an error event; before
 * that, a 502 with the API's error document (an error status of the
 * upstream went to the client as it came: the header filter).
 */
static ngx_int_t
ngx_http_toolsearch_fail(ngx_http_request_t *r,
    ngx_http_toolsearch_loop_t *ctx, ngx_uint_t status, const char *message)
{
    ts_loop_error_t  e;

    e.status = status;
    e.body = ctx->error.p;
    e.len = ctx->error.len;
    e.message = message;

    ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                  "toolsearch: call %ui of the loop failed: %s (status %ui)",
                  (ngx_uint_t) ts_loop_calls(ctx->loop), message, status);

    ts_loop_fail(ctx->loop, ctx->streaming, &e, &ctx->out);
    ngx_http_toolsearch_loop_stats(r, ctx);

    if (ctx->streaming) {
        return ngx_http_toolsearch_send(r, ctx, 1);
    }

    return ngx_http_toolsearch_send_error(r, ctx);
}


/* what the end of a call leads to: NGX_DONE while the next call runs */
static ngx_int_t
ngx_http_toolsearch_next(ngx_http_request_t *r,
    ngx_http_toolsearch_loop_t *ctx)
{
    if (ctx->failed) {
        return ngx_http_toolsearch_fail(r, ctx, ctx->error_status,
                                        ctx->error_status
                                        ? "the upstream answered with an error"
                                        : TS_LOOP_UNREADABLE);
    }

    if (!ctx->complete) {
        return ngx_http_toolsearch_fail(r, ctx, 0, "the upstream's answer "
                                        "broke off before its end");
    }

    if (ts_loop_end(ctx->loop, &ctx->out) == TS_LOOP_AGAIN
        && !r->connection->error)
    {
        if (ctx->sse && ngx_http_toolsearch_send(r, ctx, 0) == NGX_ERROR) {
            return NGX_ERROR;
        }

        if (ngx_http_toolsearch_call(r, ctx) == NGX_OK) {
            return NGX_DONE;
        }

        ts_buf_reset(&ctx->error);

        return ngx_http_toolsearch_fail(r, ctx, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                        "the gateway could not make its "
                                        "next call");
    }

    ngx_http_toolsearch_loop_stats(r, ctx);

    if (!ctx->sse) {
        return ngx_http_toolsearch_send_json(r, ctx);
    }

    return ngx_http_toolsearch_send(r, ctx, 1);
}


/*
 * Runs after each call has ended (ngx_http_finalize_request posts it).
 * Output the socket could not take yet stays with the write filter:
 * finalizing with NGX_AGAIN hands it to nginx's writer, which sends it
 * under send_timeout and then ends the request.
 */
static void
ngx_http_toolsearch_loop_handler(ngx_http_request_t *r)
{
    ngx_int_t                    rc;
    ngx_http_toolsearch_loop_t  *ctx;

    ctx = ngx_http_toolsearch_loop_of(r);

    if (ctx == NULL || !ctx->done) {
        return;
    }

    ctx->done = 0;

    if (!ctx->answering) {
        ngx_http_finalize_request(r, NGX_HTTP_BAD_GATEWAY);
        return;
    }

    if (ctx->passthrough) {
        /* an error answer cut short is cut short for the client too */
        ngx_http_finalize_request(r, ctx->complete
                                     ? ngx_http_send_special(r, NGX_HTTP_LAST)
                                     : NGX_ERROR);
        return;
    }

    rc = ngx_http_toolsearch_next(r, ctx);

    if (rc != NGX_DONE) {
        ngx_http_finalize_request(r, rc);
    }
}


ngx_int_t
ngx_http_toolsearch_loop_init(ngx_conf_t *cf)
{
    ngx_http_toolsearch_filters_add(ngx_http_toolsearch_loop_header_filter,
                                    &ngx_http_next_header_filter,
                                    ngx_http_toolsearch_loop_body_filter,
                                    &ngx_http_next_body_filter);

    return NGX_OK;
}
