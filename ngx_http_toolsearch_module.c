
/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Nginx glue: directives, the precontent phase handler that hands request
 * bodies to the engine (src/), and the $toolsearch_* variables.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ts_request.h"


typedef struct {
    ngx_flag_t      enable;
    size_t          max_body_size;
} ngx_http_toolsearch_loc_conf_t;


typedef struct {
    ngx_int_t       status;
    ts_decision_t   decision;
    size_t          bytes_in;
    size_t          bytes_out;
    size_t          tools_total;
} ngx_http_toolsearch_ctx_t;


static ngx_int_t ngx_http_toolsearch_handler(ngx_http_request_t *r);
static ts_decision_t ngx_http_toolsearch_precheck(ngx_http_request_t *r,
    ngx_http_toolsearch_loc_conf_t *tlcf);
static ngx_int_t ngx_http_toolsearch_is_json(ngx_http_request_t *r);
static ngx_int_t ngx_http_toolsearch_is_encoded(ngx_http_request_t *r);
static void ngx_http_toolsearch_body_handler(ngx_http_request_t *r);
static void ngx_http_toolsearch_process(ngx_http_request_t *r,
    ngx_http_toolsearch_ctx_t *ctx);
static off_t ngx_http_toolsearch_body_size(ngx_chain_t *cl);
static u_char *ngx_http_toolsearch_body_bytes(ngx_http_request_t *r,
    size_t len);
static ngx_int_t ngx_http_toolsearch_replace_body(ngx_http_request_t *r,
    u_char *data, size_t len);
static ngx_int_t ngx_http_toolsearch_decision_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);
static ngx_int_t ngx_http_toolsearch_count_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);

static ngx_int_t ngx_http_toolsearch_add_variables(ngx_conf_t *cf);
static void *ngx_http_toolsearch_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_toolsearch_merge_loc_conf(ngx_conf_t *cf, void *parent,
    void *child);
static ngx_int_t ngx_http_toolsearch_init(ngx_conf_t *cf);


static ngx_command_t  ngx_http_toolsearch_commands[] = {

    { ngx_string("toolsearch"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, enable),
      NULL },

    { ngx_string("toolsearch_max_body_size"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_size_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, max_body_size),
      NULL },

      ngx_null_command
};


static ngx_http_module_t  ngx_http_toolsearch_module_ctx = {
    ngx_http_toolsearch_add_variables,     /* preconfiguration */
    ngx_http_toolsearch_init,              /* postconfiguration */

    NULL,                                  /* create main configuration */
    NULL,                                  /* init main configuration */

    NULL,                                  /* create server configuration */
    NULL,                                  /* merge server configuration */

    ngx_http_toolsearch_create_loc_conf,   /* create location configuration */
    ngx_http_toolsearch_merge_loc_conf     /* merge location configuration */
};


ngx_module_t  ngx_http_toolsearch_module = {
    NGX_MODULE_V1,
    &ngx_http_toolsearch_module_ctx,       /* module context */
    ngx_http_toolsearch_commands,          /* module directives */
    NGX_HTTP_MODULE,                       /* module type */
    NULL,                                  /* init master */
    NULL,                                  /* init module */
    NULL,                                  /* init process */
    NULL,                                  /* init thread */
    NULL,                                  /* exit thread */
    NULL,                                  /* exit process */
    NULL,                                  /* exit master */
    NGX_MODULE_V1_PADDING
};


static ngx_http_variable_t  ngx_http_toolsearch_vars[] = {

    { ngx_string("toolsearch_decision"), NULL,
      ngx_http_toolsearch_decision_variable, 0,
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("toolsearch_bytes_in"), NULL,
      ngx_http_toolsearch_count_variable,
      offsetof(ngx_http_toolsearch_ctx_t, bytes_in),
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("toolsearch_bytes_out"), NULL,
      ngx_http_toolsearch_count_variable,
      offsetof(ngx_http_toolsearch_ctx_t, bytes_out),
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("toolsearch_tools_total"), NULL,
      ngx_http_toolsearch_count_variable,
      offsetof(ngx_http_toolsearch_ctx_t, tools_total),
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

      ngx_http_null_variable
};


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

    d = ngx_http_toolsearch_precheck(r, tlcf);

    if (d != TS_DECISION_NONE) {
        ctx->decision = d;
        ctx->status = NGX_DECLINED;
        return NGX_DECLINED;
    }

    /* re-entry before the whole body is read must not run later phases */
    ctx->status = NGX_DONE;

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


static void
ngx_http_toolsearch_body_handler(ngx_http_request_t *r)
{
    ngx_http_toolsearch_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_toolsearch_module);

    ngx_http_toolsearch_process(r, ctx);

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
    u_char                          *body, *out;
    size_t                           len;
    ts_request_t                     rq;
    ngx_http_toolsearch_loc_conf_t  *tlcf;

    tlcf = ngx_http_get_module_loc_conf(r, ngx_http_toolsearch_module);

    size = r->request_body ? ngx_http_toolsearch_body_size(
                                 r->request_body->bufs)
                           : 0;
    ctx->bytes_in = (size_t) size;
    ctx->bytes_out = (size_t) size;

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

    ctx->decision = ts_request_process(&rq, (char *) body, len);
    ctx->tools_total = rq.ix.ntools;

    if (ts_request_changed(&rq)) {
        ctx->bytes_out = ts_request_size(&rq);
        out = ngx_pnalloc(r->pool, ctx->bytes_out);

        if (out == NULL
            || ts_request_render(&rq, (char *) out) != 0
            || ngx_http_toolsearch_replace_body(r, out, ctx->bytes_out)
               != NGX_OK)
        {
            ctx->decision = TS_DECISION_ERROR;
            ctx->bytes_out = len;
        }
    }

    ts_request_free(&rq);

    ngx_log_debug2(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "toolsearch: %s, %uz bytes out",
                   ts_decision_name(ctx->decision), ctx->bytes_out);
}


static off_t
ngx_http_toolsearch_body_size(ngx_chain_t *cl)
{
    off_t  size;

    size = 0;

    for ( /* void */ ; cl; cl = cl->next) {
        size += ngx_buf_size(cl->buf);
    }

    return size;
}


/*
 * The body as one contiguous range: a single memory buffer is used in
 * place, anything else (several buffers, a temp file) is copied.
 */
static u_char *
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

    if (cl->next == NULL && !cl->buf->in_file) {
        return cl->buf->pos;
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


static ngx_int_t
ngx_http_toolsearch_replace_body(ngx_http_request_t *r, u_char *data,
    size_t len)
{
    u_char                    *p;
    ngx_buf_t                 *b;
    ngx_chain_t               *cl;
    ngx_http_request_body_t   *rb;

    rb = r->request_body;

    b = ngx_calloc_buf(r->pool);
    cl = ngx_alloc_chain_link(r->pool);
    if (b == NULL || cl == NULL) {
        return NGX_ERROR;
    }

    /* upstream retries rewind buffers to start */
    b->start = data;
    b->pos = data;
    b->last = data + len;
    b->end = data + len;
    b->memory = 1;
    b->last_buf = 1;

    cl->buf = b;
    cl->next = NULL;

    rb->bufs = cl;
    rb->buf = b;

    /* the pool cleanup still removes the file */
    rb->temp_file = NULL;

    r->headers_in.content_length_n = len;

    if (r->headers_in.content_length) {
        p = ngx_pnalloc(r->pool, NGX_OFF_T_LEN);
        if (p == NULL) {
            return NGX_ERROR;
        }

        r->headers_in.content_length->value.data = p;
        r->headers_in.content_length->value.len =
                                       ngx_sprintf(p, "%uz", len) - p;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_toolsearch_decision_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    const char                 *name;
    ngx_http_toolsearch_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r->main, ngx_http_toolsearch_module);

    if (ctx == NULL) {
        v->not_found = 1;
        return NGX_OK;
    }

    name = ts_decision_name(ctx->decision);

    v->data = (u_char *) name;
    v->len = ngx_strlen(name);
    v->valid = 1;
    v->no_cacheable = 1;
    v->not_found = 0;

    return NGX_OK;
}


/* data is the offset of a size_t counter in the ctx */
static ngx_int_t
ngx_http_toolsearch_count_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    u_char                     *p;
    ngx_http_toolsearch_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r->main, ngx_http_toolsearch_module);

    if (ctx == NULL) {
        v->not_found = 1;
        return NGX_OK;
    }

    p = ngx_pnalloc(r->pool, NGX_SIZE_T_LEN);
    if (p == NULL) {
        return NGX_ERROR;
    }

    v->data = p;
    v->len = ngx_sprintf(p, "%uz", *(size_t *) ((char *) ctx + data)) - p;
    v->valid = 1;
    v->no_cacheable = 1;
    v->not_found = 0;

    return NGX_OK;
}


static ngx_int_t
ngx_http_toolsearch_add_variables(ngx_conf_t *cf)
{
    ngx_http_variable_t  *var, *v;

    for (v = ngx_http_toolsearch_vars; v->name.len; v++) {
        var = ngx_http_add_variable(cf, &v->name, v->flags);
        if (var == NULL) {
            return NGX_ERROR;
        }

        var->get_handler = v->get_handler;
        var->data = v->data;
    }

    return NGX_OK;
}


static void *
ngx_http_toolsearch_create_loc_conf(ngx_conf_t *cf)
{
    ngx_http_toolsearch_loc_conf_t  *conf;

    conf = ngx_pcalloc(cf->pool, sizeof(ngx_http_toolsearch_loc_conf_t));
    if (conf == NULL) {
        return NULL;
    }

    conf->enable = NGX_CONF_UNSET;
    conf->max_body_size = NGX_CONF_UNSET_SIZE;

    return conf;
}


static char *
ngx_http_toolsearch_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
    ngx_http_toolsearch_loc_conf_t *prev = parent;
    ngx_http_toolsearch_loc_conf_t *conf = child;

    ngx_conf_merge_value(conf->enable, prev->enable, 0);
    ngx_conf_merge_size_value(conf->max_body_size, prev->max_body_size,
                              16 * 1024 * 1024);

    return NGX_CONF_OK;
}


static ngx_int_t
ngx_http_toolsearch_init(ngx_conf_t *cf)
{
    ngx_http_handler_pt        *h;
    ngx_http_core_main_conf_t  *cmcf;

    cmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module);

    h = ngx_array_push(&cmcf->phases[NGX_HTTP_PRECONTENT_PHASE].handlers);
    if (h == NULL) {
        return NGX_ERROR;
    }

    *h = ngx_http_toolsearch_handler;

    return NGX_OK;
}
