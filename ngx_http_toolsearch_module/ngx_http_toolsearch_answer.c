
/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The client's answer without tool-search blocks, toolsearch_search_blocks
 * strip: the answer of a deferred_hosted request passes through the
 * engine's cut (src/loop/ts_cut.c) on its way to the client.  Gateway
 * search cuts the bytes its loop gives the client (the loop's file).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_toolsearch_module.h"


static ngx_http_output_header_filter_pt  ngx_http_next_header_filter;
static ngx_http_output_body_filter_pt    ngx_http_next_body_filter;


static void
ngx_http_toolsearch_answer_cleanup(void *data)
{
    ngx_http_toolsearch_ctx_t  *ctx = data;

    ts_cut_free(ctx->cut);
    ngx_http_toolsearch_pace_free(&ctx->pace);
}


/* the cut of n bytes of the answer, and of its end */
static ngx_int_t
ngx_http_toolsearch_answer_feed(ngx_http_request_t *r, u_char *p, size_t n,
    ngx_uint_t last, ts_buf_t *out)
{
    ngx_http_toolsearch_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_toolsearch_module);

    if (n && ts_cut_feed(ctx->cut, (char *) p, n, out) != 0) {
        return NGX_ERROR;
    }

    if (last) {
        if (ts_cut_end(ctx->cut, out) != 0) {
            return NGX_ERROR;
        }

        /* a JSON answer was held whole: its memory goes now */
        ts_cut_free(ctx->cut);
    }

    return NGX_OK;
}


/* the kind of answer the cut reads: 1 SSE, 0 JSON, -1 neither */
static int
ngx_http_toolsearch_answer_kind(ngx_http_request_t *r)
{
    ngx_str_t  *t;

    t = &r->headers_out.content_type;

    if (t->len >= sizeof("text/event-stream") - 1
        && ngx_strncasecmp(t->data, (u_char *) "text/event-stream",
                           sizeof("text/event-stream") - 1) == 0)
    {
        return 1;
    }

    if (t->len >= sizeof("application/json") - 1
        && ngx_strncasecmp(t->data, (u_char *) "application/json",
                           sizeof("application/json") - 1) == 0)
    {
        return 0;
    }

    return -1;
}


static ngx_int_t
ngx_http_toolsearch_answer_start(ngx_http_request_t *r,
    ngx_http_toolsearch_ctx_t *ctx, int sse)
{
    ngx_pool_cleanup_t  *cln;

    ctx->cut = ngx_palloc(r->pool, sizeof(ts_cut_t));
    cln = ngx_pool_cleanup_add(r->pool, 0);

    if (ctx->cut == NULL || cln == NULL) {
        ctx->cut = NULL;
        return NGX_ERROR;
    }

    ts_cut_init(ctx->cut, NULL, sse);
    ngx_http_toolsearch_pace_init(&ctx->pace, ngx_http_toolsearch_answer_feed,
                                  sse);
    cln->handler = ngx_http_toolsearch_answer_cleanup;
    cln->data = ctx;

    return NGX_OK;
}


static ngx_int_t
ngx_http_toolsearch_answer_header_filter(ngx_http_request_t *r)
{
    int                              kind;
    ngx_http_toolsearch_ctx_t       *ctx;
    ngx_http_toolsearch_loc_conf_t  *tlcf;

    ctx = ngx_http_get_module_ctx(r, ngx_http_toolsearch_module);
    tlcf = ngx_http_get_module_loc_conf(r, ngx_http_toolsearch_module);

    if (r != r->main || ctx == NULL
        || ctx->decision != TS_DECISION_DEFERRED_HOSTED
        || !ngx_http_toolsearch_strips(tlcf, ctx)
        || r->headers_out.status != NGX_HTTP_OK || r->header_only)
    {
        return ngx_http_next_header_filter(r);
    }

    kind = ngx_http_toolsearch_answer_kind(r);

    /* an answer the cut cannot read (compressed, another type) goes on as
     * it came */
    if (kind < 0
        || (r->headers_out.content_encoding
            && r->headers_out.content_encoding->value.len)
        || ngx_http_toolsearch_answer_start(r, ctx, kind) != NGX_OK)
    {
        return ngx_http_next_header_filter(r);
    }

    /* the answer's length changes */
    ngx_http_clear_content_length(r);
    ngx_http_clear_accept_ranges(r);
    ngx_http_weak_etag(r);
    r->filter_need_in_memory = 1;

    return ngx_http_next_header_filter(r);
}


/*
 * The cut of what came, and of the answer's end at its last buffer:
 * events go on as they come, a JSON message at its end, at the client's
 * pace (the pace's file).
 */
static ngx_int_t
ngx_http_toolsearch_answer_body_filter(ngx_http_request_t *r,
    ngx_chain_t *in)
{
    ngx_http_toolsearch_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_toolsearch_module);

    if (r != r->main || ctx == NULL || ctx->cut == NULL
        || ctx->decision != TS_DECISION_DEFERRED_HOSTED)
    {
        return ngx_http_next_body_filter(r, in);
    }

    return ngx_http_toolsearch_pace(r, &ctx->pace, in,
                                    ngx_http_next_body_filter);
}


ngx_int_t
ngx_http_toolsearch_answer_init(ngx_conf_t *cf)
{
    ngx_http_toolsearch_filters_add(ngx_http_toolsearch_answer_header_filter,
                                    &ngx_http_next_header_filter,
                                    ngx_http_toolsearch_answer_body_filter,
                                    &ngx_http_next_body_filter);

    return NGX_OK;
}
