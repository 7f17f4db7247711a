
/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The $toolsearch_* variables: what the module decided for the
 * request, read from its context.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_toolsearch_module.h"
#include "ngx_http_toolsearch_status.h"
#include "ngx_http_toolsearch_variables.h"
#include "rewrite/ts_shape.h"


static ngx_int_t ngx_http_toolsearch_decision_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);
static ngx_int_t ngx_http_toolsearch_count_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);
static ngx_int_t ngx_http_toolsearch_mode_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);
static ngx_int_t ngx_http_toolsearch_upstream_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);
static ngx_int_t ngx_http_toolsearch_rule_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);
static ngx_int_t ngx_http_toolsearch_tokens_saved_variable(
    ngx_http_request_t *r, ngx_http_variable_value_t *v, uintptr_t data);


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

    { ngx_string("toolsearch_tools_recalled"), NULL,
      ngx_http_toolsearch_count_variable,
      offsetof(ngx_http_toolsearch_ctx_t, tools_recalled),
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("toolsearch_messages_recalled"), NULL,
      ngx_http_toolsearch_count_variable,
      offsetof(ngx_http_toolsearch_ctx_t, messages_recalled),
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("toolsearch_tools_deferred"), NULL,
      ngx_http_toolsearch_count_variable,
      offsetof(ngx_http_toolsearch_ctx_t, tools_deferred),
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("toolsearch_defer_chars"), NULL,
      ngx_http_toolsearch_count_variable,
      offsetof(ngx_http_toolsearch_ctx_t, defer_chars),
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("toolsearch_threshold_chars"), NULL,
      ngx_http_toolsearch_count_variable,
      offsetof(ngx_http_toolsearch_ctx_t, threshold_chars),
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("toolsearch_refs_converted"), NULL,
      ngx_http_toolsearch_count_variable,
      offsetof(ngx_http_toolsearch_ctx_t, refs_converted),
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("toolsearch_refs_stale"), NULL,
      ngx_http_toolsearch_count_variable,
      offsetof(ngx_http_toolsearch_ctx_t, refs_stale),
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("toolsearch_siblings_moved"), NULL,
      ngx_http_toolsearch_count_variable,
      offsetof(ngx_http_toolsearch_ctx_t, siblings_moved),
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("toolsearch_boundaries_added"), NULL,
      ngx_http_toolsearch_count_variable,
      offsetof(ngx_http_toolsearch_ctx_t, boundaries_added),
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("toolsearch_discovered"), NULL,
      ngx_http_toolsearch_count_variable,
      offsetof(ngx_http_toolsearch_ctx_t, discovered),
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("toolsearch_searches"), NULL,
      ngx_http_toolsearch_count_variable,
      offsetof(ngx_http_toolsearch_ctx_t, searches),
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("toolsearch_loaded"), NULL,
      ngx_http_toolsearch_count_variable,
      offsetof(ngx_http_toolsearch_ctx_t, loaded),
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("toolsearch_mode"), NULL,
      ngx_http_toolsearch_mode_variable, 0,
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("toolsearch_upstream"), NULL,
      ngx_http_toolsearch_upstream_variable, 0,
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("toolsearch_defer_rule"), NULL,
      ngx_http_toolsearch_rule_variable, 0,
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("toolsearch_tokens_saved"), NULL,
      ngx_http_toolsearch_tokens_saved_variable, 0,
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

      ngx_http_null_variable
};


/* the request's ctx, or NULL with the variable not found; policy set:
 * only when the decision got as far as the policy */
static ngx_http_toolsearch_ctx_t *
ngx_http_toolsearch_var_ctx(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, ngx_uint_t policy)
{
    ngx_http_toolsearch_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r->main, ngx_http_toolsearch_module);

    if (ctx == NULL
        || (policy && ctx->decision < TS_DECISION_STANDARD_MODE))
    {
        v->not_found = 1;
        return NULL;
    }

    return ctx;
}


static ngx_int_t
ngx_http_toolsearch_var_set(ngx_http_variable_value_t *v, u_char *data,
    size_t len)
{
    v->data = data;
    v->len = len;
    v->valid = 1;
    v->no_cacheable = 1;
    v->not_found = 0;

    return NGX_OK;
}


static ngx_int_t
ngx_http_toolsearch_decision_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    const char                 *name;
    ngx_http_toolsearch_ctx_t  *ctx;

    ctx = ngx_http_toolsearch_var_ctx(r, v, 0);
    if (ctx == NULL) {
        return NGX_OK;
    }

    name = ts_decision_name(ctx->decision);

    return ngx_http_toolsearch_var_set(v, (u_char *) name, ngx_strlen(name));
}


/* data is the offset of a size_t counter in the ctx */
static ngx_int_t
ngx_http_toolsearch_count_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    u_char                     *p;
    ngx_http_toolsearch_ctx_t  *ctx;

    ctx = ngx_http_toolsearch_var_ctx(r, v, 0);
    if (ctx == NULL) {
        return NGX_OK;
    }

    p = ngx_pnalloc(r->pool, NGX_SIZE_T_LEN);
    if (p == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_toolsearch_var_set(v, p,
               ngx_sprintf(p, "%uz", *(size_t *) ((char *) ctx + data)) - p);
}


static ngx_int_t
ngx_http_toolsearch_mode_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    u_char                     *p, *last;
    const char                 *name;
    ngx_http_toolsearch_ctx_t  *ctx;

    ctx = ngx_http_toolsearch_var_ctx(r, v, 1);
    if (ctx == NULL) {
        return NGX_OK;
    }

    p = ngx_pnalloc(r->pool, sizeof("auto:100"));
    if (p == NULL) {
        return NGX_ERROR;
    }

    name = ts_defer_mode_name(ctx->mode);

    if (ctx->mode == TS_DEFER_AUTO) {
        last = ngx_sprintf(p, "auto:%ui", (ngx_uint_t) ctx->percent);

    } else {
        last = ngx_cpymem(p, name, ngx_strlen(name));
    }

    return ngx_http_toolsearch_var_set(v, p, last - p);
}


static ngx_int_t
ngx_http_toolsearch_upstream_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    int                              upstream;
    const char                      *name;
    ngx_http_toolsearch_ctx_t       *ctx;
    ngx_http_toolsearch_loc_conf_t  *tlcf;

    ctx = ngx_http_toolsearch_var_ctx(r, v, 1);
    if (ctx == NULL) {
        return NGX_OK;
    }

    /*
     * the profile the request was handled as: a compatible upstream that
     * forwards tool_reference is treated as Anthropic's API
     */
    upstream = ctx->upstream;
    tlcf = ngx_http_get_module_loc_conf(r, ngx_http_toolsearch_module);

    if (upstream == TS_UPSTREAM_COMPATIBLE && tlcf->upstream_tool_reference) {
        upstream = TS_UPSTREAM_ANTHROPIC;
    }

    name = ts_upstream_name(upstream);

    return ngx_http_toolsearch_var_set(v, (u_char *) name, ngx_strlen(name));
}


/* the name shape that chose the deferred tools (src/ts_shape.h) */
static ngx_int_t
ngx_http_toolsearch_rule_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    const char                 *name;
    ngx_http_toolsearch_ctx_t  *ctx;

    ctx = ngx_http_toolsearch_var_ctx(r, v, 1);
    if (ctx == NULL) {
        return NGX_OK;
    }

    name = ts_shape_name(ctx->defer_rule);

    return ngx_http_toolsearch_var_set(v, (u_char *) name, ngx_strlen(name));
}


/*
 * The estimated tokens of the deferred definitions, as the status page's
 * toolsearch_tokens_saved_total counts them.
 */
static ngx_int_t
ngx_http_toolsearch_tokens_saved_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    u_char                     *p;
    size_t                      chars;
    ngx_http_toolsearch_ctx_t  *ctx;

    ctx = ngx_http_toolsearch_var_ctx(r, v, 0);
    if (ctx == NULL) {
        return NGX_OK;
    }

    chars = ngx_http_toolsearch_deferred(ctx->decision) ? ctx->defer_chars
                                                          : 0;

    p = ngx_pnalloc(r->pool, NGX_INT64_LEN);
    if (p == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_toolsearch_var_set(v, p,
               ngx_sprintf(p, "%uL", (uint64_t) ts_policy_tokens(chars)) - p);
}


ngx_int_t
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

