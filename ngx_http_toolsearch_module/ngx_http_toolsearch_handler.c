
/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The precontent phase handler: which requests go to the engine, the
 * body read in one buffer, and the engine's run over it.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_toolsearch_module.h"
#include "ngx_http_toolsearch_status.h"
#include "ngx_http_toolsearch_handler.h"
#include "ngx_http_toolsearch_body.h"
#include "ngx_http_toolsearch_loop.h"
#include "ngx_http_toolsearch_betas.h"
#include "chat/ts_chat.h"
#include "rewrite/ts_gateway.h"
#include "responses/ts_responses.h"


#define NGX_HTTP_TOOLSEARCH_MODE_HEADER  "X-Toolsearch-Mode"


static ngx_int_t ngx_http_toolsearch_handler(ngx_http_request_t *r);
static ts_decision_t ngx_http_toolsearch_precheck(ngx_http_request_t *r,
    ngx_http_toolsearch_loc_conf_t *tlcf);
static ngx_int_t ngx_http_toolsearch_is_json(ngx_http_request_t *r);
static ngx_int_t ngx_http_toolsearch_is_encoded(ngx_http_request_t *r);
static void ngx_http_toolsearch_read_in_one(ngx_http_request_t *r,
    ngx_http_toolsearch_ctx_t *ctx);
static void ngx_http_toolsearch_body_handler(ngx_http_request_t *r);
static void ngx_http_toolsearch_process(ngx_http_request_t *r,
    ngx_http_toolsearch_ctx_t *ctx);
static void ngx_http_toolsearch_input(ngx_http_request_t *r,
    ngx_http_toolsearch_loc_conf_t *tlcf, ts_input_t *in);


/* found by name: nginx may be built without it, and a module naming
 * its symbol would then not load */
static ngx_module_t  *ngx_http_toolsearch_proxy_module;

/*
 * The engine's index arrays, kept by the worker for all its requests
 * (one request is processed at a time): grown to the largest body seen,
 * they spare each request fresh pages, whose faults cost more than the
 * scan.  With toolsearch_recall on, they also keep the tools arrays
 * read last, within toolsearch_recall_tools bytes, and the last
 * conversation's messages.
 */
static ts_index_mem_t  ngx_http_toolsearch_index_mem;


static ngx_int_t
ngx_http_toolsearch_handler(ngx_http_request_t *r)
{
    ngx_int_t                        rc;
    ts_decision_t                    d;
    ngx_http_toolsearch_ctx_t       *ctx;
    ngx_http_toolsearch_loc_conf_t  *tlcf;

    if (r != r->main) {
        return NGX_DECLINED;
    }

    tlcf = ngx_http_get_module_loc_conf(r, ngx_http_toolsearch_module);

    if (!tlcf->enable) {
        return NGX_DECLINED;
    }

    ctx = ngx_http_get_module_ctx(r, ngx_http_toolsearch_module);

    if (ctx) {
        return ctx->status;
    }

    ctx = ngx_pcalloc(r->pool, sizeof(ngx_http_toolsearch_ctx_t));
    if (ctx == NULL) {
        return NGX_ERROR;
    }

    ngx_http_set_ctx(r, ctx, ngx_http_toolsearch_module);

    ctx->format = ts_format_of_uri((char *) r->uri.data, r->uri.len);
    d = ngx_http_toolsearch_precheck(r, tlcf);

    if (d != TS_DECISION_NONE) {
        ctx->decision = d;
        ctx->status = NGX_DECLINED;
        ngx_http_toolsearch_stat_request(r, ctx->format, ctx->decision,
                                         ctx->changed, ctx->count);
        return NGX_DECLINED;
    }

    /* re-entry before the whole body is read must not run later phases */
    ctx->status = NGX_DONE;

    ngx_http_toolsearch_read_in_one(r, ctx);

    rc = ngx_http_read_client_request_body(r,
                                           ngx_http_toolsearch_body_handler);

    if (rc >= NGX_HTTP_SPECIAL_RESPONSE) {
        return rc;
    }

    ngx_http_finalize_request(r, NGX_DONE);
    return NGX_DONE;
}


/* decides, from the headers alone, that the body is not for the engine */
static ts_decision_t
ngx_http_toolsearch_precheck(ngx_http_request_t *r,
    ngx_http_toolsearch_loc_conf_t *tlcf)
{
    if (r->method != NGX_HTTP_POST) {
        return TS_DECISION_METHOD;
    }

    if (!ngx_http_toolsearch_is_json(r)) {
        return TS_DECISION_NOT_JSON;
    }

    if (ngx_http_toolsearch_is_encoded(r)) {
        return TS_DECISION_ENCODED;
    }

    if (r->headers_in.content_length_n > (off_t) tlcf->max_body_size) {
        return TS_DECISION_TOO_LARGE;
    }

    return TS_DECISION_NONE;
}


/* application/json or any application/...+json, parameters ignored */
static ngx_int_t
ngx_http_toolsearch_is_json(ngx_http_request_t *r)
{
    u_char  *start, *end, *semi;
    size_t   len;

    if (r->headers_in.content_type == NULL) {
        return 0;
    }

    start = r->headers_in.content_type->value.data;
    end = start + r->headers_in.content_type->value.len;

    semi = ngx_strlchr(start, end, ';');
    if (semi) {
        end = semi;
    }

    while (end > start && (end[-1] == ' ' || end[-1] == '\t')) {
        end--;
    }

    len = end - start;

    if (len < 12 || ngx_strncasecmp(start, (u_char *) "application/", 12)) {
        return 0;
    }

    if (len == 16 && ngx_strncasecmp(start + 12, (u_char *) "json", 4) == 0) {
        return 1;
    }

    return len > 17 && ngx_strncasecmp(end - 5, (u_char *) "+json", 5) == 0;
}


static ngx_int_t
ngx_http_toolsearch_is_encoded(ngx_http_request_t *r)
{
    ngx_uint_t        i;
    ngx_list_part_t  *part;
    ngx_table_elt_t  *h;

    part = &r->headers_in.headers.part;
    h = part->elts;

    for (i = 0; /* void */; i++) {

        if (i >= part->nelts) {
            if (part->next == NULL) {
                return 0;
            }

            part = part->next;
            h = part->elts;
            i = 0;
        }

        if (h[i].key.len == sizeof("Content-Encoding") - 1
            && ngx_strncasecmp(h[i].key.data, (u_char *) "Content-Encoding",
                               sizeof("Content-Encoding") - 1) == 0
            && !(h[i].value.len == sizeof("identity") - 1
                 && ngx_strncasecmp(h[i].value.data, (u_char *) "identity",
                                    sizeof("identity") - 1) == 0))
        {
            return 1;
        }
    }
}


/*
 * nginx keeps the part of a body that came with the headers in the
 * header buffer and reads the rest into a buffer of its own: two ranges,
 * which the engine would need copied into one.  When nginx would keep
 * the rest in memory anyway (below 1.25 x client_body_buffer_size, as
 * ngx_http_read_client_request_body() decides), the header buffer is
 * lent out for the read: a buffer of the body's size with the part
 * already read at its start stands in, and nginx reads the rest right
 * behind it (its case of a body that fits in r->header_in).  The body
 * handler gives the header buffer back: keepalive and pipelining read
 * r->header_in after the request pool, which holds the stand-in, is
 * gone.  A read that fails closes the connection, so the stand-in is
 * never looked at then.  Without memory nginx reads as it would.
 */
static void
ngx_http_toolsearch_read_in_one(ngx_http_request_t *r,
    ngx_http_toolsearch_ctx_t *ctx)
{
    off_t                      len;
    size_t                     preread, size;
    ngx_buf_t                 *b;
    ngx_http_core_loc_conf_t  *clcf;

    clcf = ngx_http_get_module_loc_conf(r, ngx_http_core_module);
    size = clcf->client_body_buffer_size;
    len = r->headers_in.content_length_n;
    preread = r->header_in->last - r->header_in->pos;

    /* read already (by another module): what is left is not body */
    if (r->request_body || r->discard_body
        || preread == 0 || (off_t) preread >= len
        || len - (off_t) preread >= (off_t) (size + (size >> 2))
        || r->headers_in.chunked || r->request_body_in_file_only
#if (NGX_HTTP_V2)
        || r->stream
#endif
        )
    {
        return;
    }

    b = ngx_calloc_buf(r->pool);
    if (b == NULL) {
        return;
    }

    b->start = ngx_http_toolsearch_body_block(r, (size_t) len);
    if (b->start == NULL) {
        return;
    }

    b->pos = b->start;
    b->end = b->start + len;
    b->temporary = 1;
    b->last = ngx_cpymem(b->pos, r->header_in->pos, preread);
    r->header_in->pos = r->header_in->last;

    ctx->header_in = r->header_in;
    r->header_in = b;
}


static void
ngx_http_toolsearch_body_handler(ngx_http_request_t *r)
{
    ngx_http_toolsearch_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_toolsearch_module);

    if (ctx->header_in) {
        r->header_in = ctx->header_in;
        ctx->header_in = NULL;
    }

    ngx_http_toolsearch_process(r, ctx);
    ngx_http_toolsearch_stat_request(r, ctx->format, ctx->decision,
                                     ctx->changed, ctx->count);

    ctx->status = NGX_DECLINED;
    r->preserve_body = 1;

    r->write_event_handler = ngx_http_core_run_phases;
    ngx_http_core_run_phases(r);
}


/*
 * Runs the engine over the body.  Whatever goes wrong here, the request
 * continues with its original body: the gateway fails open.
 */
static void
ngx_http_toolsearch_process(ngx_http_request_t *r,
    ngx_http_toolsearch_ctx_t *ctx)
{
    off_t                            size;
    u_char                          *body;
    size_t                           len;
    ts_input_t                       in;
    ts_request_t                     rq;
    ngx_http_toolsearch_loc_conf_t  *tlcf;

    tlcf = ngx_http_get_module_loc_conf(r, ngx_http_toolsearch_module);

    size = r->request_body ? ngx_http_toolsearch_body_size(
                                 r->request_body->bufs)
                           : 0;
    ctx->count[TS_COUNTER_bytes_in] = (size_t) size;
    ctx->count[TS_COUNTER_bytes_out] = (size_t) size;

    if (size > (off_t) tlcf->max_body_size) {
        ctx->decision = TS_DECISION_TOO_LARGE;
        return;
    }

    len = (size_t) size;
    body = ngx_http_toolsearch_body_bytes(r, len);

    if (body == NULL) {
        ctx->decision = TS_DECISION_ERROR;
        return;
    }

    ngx_http_toolsearch_input(r, tlcf, &in);

    /* the format's dialect reads the body */
    switch (ctx->format) {

    case TS_FORMAT_CHAT:
        ctx->decision = ts_chat_process(&rq, &in, (char *) body, len);
        break;

    case TS_FORMAT_RESPONSES:
        ctx->decision = ts_responses_process(&rq, &in, (char *) body, len);
        break;

    default:
        ctx->decision = ts_request_process(&rq, &in, (char *) body, len);
    }

    ctx->mode = rq.mode;
    ctx->percent = rq.percent;
    ctx->upstream = rq.upstream;
    ctx->defer_rule = rq.defer_rule;
    ctx->client = rq.client;
    ctx->found = ts_gateway_found_name(&rq);
    ts_counters_from_request(ctx->count, &rq);

    if (ctx->decision == TS_DECISION_DEFERRED_GATEWAY
        && ngx_http_toolsearch_loop_start(r, ctx, &rq, &in, body, len)
           != NGX_OK)
    {
        ctx->decision = TS_DECISION_ERROR;

    } else if (ngx_http_toolsearch_apply(r, &rq, body) != NGX_OK) {
        ctx->decision = TS_DECISION_ERROR;

    } else {
        ctx->count[TS_COUNTER_bytes_out] = ts_request_size(&rq);
        ctx->changed = ts_request_changed(&rq) || rq.betas_changed;

        /* the first call's body: not read a second time */
        ngx_http_toolsearch_loop_keep(ctx, &rq);
    }

    ts_request_free(&rq);

    ngx_log_debug2(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "toolsearch: %s, %uz bytes out",
                   ts_decision_name(ctx->decision),
                   ctx->count[TS_COUNTER_bytes_out]);
}


/*
 * Profile "auto": the proxied host decides (proxy_pass with a host).
 * nginx offers no public way to learn it before the content phase: the
 * proxy module's $proxy_host is set by its content handler, which runs
 * after this one, and the upstream module's list of upstreams does not
 * say which location proxies to which.  So the host is read from the
 * proxy module's location configuration, through the one part of it
 * that every nginx upstream module lays out alike (proxy, fastcgi,
 * uwsgi, scgi and grpc): its first member, the ngx_http_upstream_conf_t
 * it hands to the upstream module.
 */
static int
ngx_http_toolsearch_upstream_of(ngx_http_request_t *r,
    ngx_http_toolsearch_loc_conf_t *tlcf)
{
    ngx_http_upstream_conf_t  *ucf;

    if (tlcf->upstream != TS_UPSTREAM_AUTO) {
        return (int) tlcf->upstream;
    }

    if (ngx_http_toolsearch_proxy_module == NULL) {
        return TS_UPSTREAM_COMPATIBLE;
    }

    ucf = r->loc_conf[ngx_http_toolsearch_proxy_module->ctx_index];

    if (ucf->upstream == NULL) {
        return TS_UPSTREAM_COMPATIBLE;
    }

    if (ts_match_any(tlcf->first_party_hosts,
                     (char *) ucf->upstream->host.data,
                     ucf->upstream->host.len))
    {
        return TS_UPSTREAM_ANTHROPIC;
    }

    if (ts_match_any(tlcf->openai_hosts, (char *) ucf->upstream->host.data,
                     ucf->upstream->host.len))
    {
        return TS_UPSTREAM_OPENAI;
    }

    return TS_UPSTREAM_COMPATIBLE;
}


/* a trusted client's X-Toolsearch-Mode, when the location allows it */
static void
ngx_http_toolsearch_client_mode(ngx_http_request_t *r, ts_input_t *in)
{
    ngx_uint_t        i;
    ngx_list_part_t  *part;
    ngx_table_elt_t  *h;
    int               mode;
    unsigned          percent;

    for (part = &r->headers_in.headers.part; part; part = part->next) {
        h = part->elts;

        for (i = 0; i < part->nelts; i++) {
            if (h[i].key.len != sizeof(NGX_HTTP_TOOLSEARCH_MODE_HEADER) - 1
                || ngx_strncasecmp(h[i].key.data,
                       (u_char *) NGX_HTTP_TOOLSEARCH_MODE_HEADER,
                       sizeof(NGX_HTTP_TOOLSEARCH_MODE_HEADER) - 1) != 0)
            {
                continue;
            }

            mode = ts_defer_mode_parse((char *) h[i].value.data,
                                       h[i].value.len, &percent);

            /* an unknown value leaves the location's mode in force */
            if (mode >= 0) {
                in->defer_mode = mode;
                in->defer_percent = percent;
            }

            return;
        }
    }
}


static void
ngx_http_toolsearch_input(ngx_http_request_t *r,
    ngx_http_toolsearch_loc_conf_t *tlcf, ts_input_t *in)
{
    ngx_str_t  betas;

    ngx_memzero(in, sizeof(ts_input_t));

    in->policy = &tlcf->policy;
    in->upstream = ngx_http_toolsearch_upstream_of(r, tlcf);
    in->defer_mode = -1;
    in->index_mem = &ngx_http_toolsearch_index_mem;
    ngx_http_toolsearch_index_mem.forget = !tlcf->recall;
    ngx_http_toolsearch_index_mem.tools.size = tlcf->recall_tools;
    ngx_http_toolsearch_index_mem.chat_tools.size = tlcf->recall_tools;
    ngx_http_toolsearch_index_mem.responses_tools.size = tlcf->recall_tools;

    if (tlcf->client_mode) {
        ngx_http_toolsearch_client_mode(r, in);
    }

    if (r->headers_in.user_agent != NULL) {
        in->user_agent = (char *) r->headers_in.user_agent->value.data;
        in->user_agent_len = r->headers_in.user_agent->value.len;
    }

    /* without memory the betas look absent: nothing is then added */
    if (ngx_http_toolsearch_betas(r, &betas) == NGX_OK) {
        in->betas = (char *) betas.data;
        in->betas_len = betas.len;
    }
}


ngx_int_t
ngx_http_toolsearch_handler_init(ngx_conf_t *cf)
{
    ngx_uint_t                  i;
    ngx_http_handler_pt        *h;
    ngx_http_core_main_conf_t  *cmcf;

    cmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module);

    h = ngx_array_push(&cmcf->phases[NGX_HTTP_PRECONTENT_PHASE].handlers);
    if (h == NULL) {
        return NGX_ERROR;
    }

    *h = ngx_http_toolsearch_handler;

    ngx_http_toolsearch_proxy_module = NULL;

    for (i = 0; cf->cycle->modules[i]; i++) {
        if (ngx_strcmp(cf->cycle->modules[i]->name, "ngx_http_proxy_module")
            == 0)
        {
            ngx_http_toolsearch_proxy_module = cf->cycle->modules[i];
        }
    }

    return NGX_OK;
}


void
ngx_http_toolsearch_handler_exit(void)
{
    ts_index_mem_free(&ngx_http_toolsearch_index_mem);
}
