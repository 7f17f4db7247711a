
/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The $toolsearch_* variables: what the module decided for the
 * request, read from its context.  One get handler serves them all: a
 * variable's data names its kind (what it shows) and the kind's
 * argument (for counters, the counter of ts_counters.h).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_toolsearch_module.h"
#include "ngx_http_toolsearch_status.h"
#include "ngx_http_toolsearch_variables.h"
#include "rewrite/ts_shape.h"


typedef enum {
    NGX_HTTP_TOOLSEARCH_DECISION = 0,
    NGX_HTTP_TOOLSEARCH_MODE,
    NGX_HTTP_TOOLSEARCH_UPSTREAM,
    NGX_HTTP_TOOLSEARCH_RULE,
    NGX_HTTP_TOOLSEARCH_FORMAT,
    NGX_HTTP_TOOLSEARCH_CLIENT,
    NGX_HTTP_TOOLSEARCH_FOUND,
    NGX_HTTP_TOOLSEARCH_COUNT,
    NGX_HTTP_TOOLSEARCH_TOKENS
} ngx_http_toolsearch_var_e;


/* a variable's data: its kind in the low byte, the kind's argument above */
#define NGX_HTTP_TOOLSEARCH_KIND(data)  ((data) & 0xff)
#define NGX_HTTP_TOOLSEARCH_ARG(data)   ((data) >> 8)


/* the value of a variable with this data */
typedef ngx_int_t (*ngx_http_toolsearch_value_pt)(ngx_http_request_t *r,
    ngx_http_toolsearch_ctx_t *ctx, uintptr_t data, ngx_str_t *value);

typedef struct {
    ngx_http_toolsearch_value_pt   value;
    ngx_uint_t                     policy;  /* found only once the
                                               decision got as far as
                                               the policy */
} ngx_http_toolsearch_kind_t;


static ngx_int_t ngx_http_toolsearch_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);
static ngx_int_t ngx_http_toolsearch_word_value(ngx_http_request_t *r,
    ngx_http_toolsearch_ctx_t *ctx, uintptr_t data, ngx_str_t *value);
static ngx_int_t ngx_http_toolsearch_mode_value(ngx_http_request_t *r,
    ngx_http_toolsearch_ctx_t *ctx, uintptr_t data, ngx_str_t *value);
static ngx_int_t ngx_http_toolsearch_count_value(ngx_http_request_t *r,
    ngx_http_toolsearch_ctx_t *ctx, uintptr_t data, ngx_str_t *value);


/* by ngx_http_toolsearch_var_e */
static ngx_http_toolsearch_kind_t  ngx_http_toolsearch_kinds[] = {
    { ngx_http_toolsearch_word_value, 0 },
    { ngx_http_toolsearch_mode_value, 1 },
    { ngx_http_toolsearch_word_value, 1 },
    { ngx_http_toolsearch_word_value, 1 },
    { ngx_http_toolsearch_word_value, 0 },
    { ngx_http_toolsearch_word_value, 1 },
    { ngx_http_toolsearch_word_value, 1 },
    { ngx_http_toolsearch_count_value, 0 },
    { ngx_http_toolsearch_count_value, 0 }
};


#define NGX_HTTP_TOOLSEARCH_VAR(name, kind, arg)                          \
    { ngx_string("toolsearch_" #name), NULL, ngx_http_toolsearch_variable, \
      NGX_HTTP_TOOLSEARCH_##kind | (arg) << 8, NGX_HTTP_VAR_NOCACHEABLE, 0 },

/* the counters of ts_counters.h with a variable */
#define NGX_HTTP_TOOLSEARCH_VAR_NOVAR(name)
#define NGX_HTTP_TOOLSEARCH_VAR_VAR(name)                                 \
    NGX_HTTP_TOOLSEARCH_VAR(name, COUNT, TS_COUNTER_##name)
#define NGX_HTTP_TOOLSEARCH_COUNT_VAR(name, var, metric, when, log, from, \
                                      help)                               \
    NGX_HTTP_TOOLSEARCH_VAR_##var(name)

#define NGX_HTTP_TOOLSEARCH_TOKENS_VAR(name, counter, help)               \
    NGX_HTTP_TOOLSEARCH_VAR(name, TOKENS, TS_COUNTER_##counter)


static ngx_http_variable_t  ngx_http_toolsearch_vars[] = {

    NGX_HTTP_TOOLSEARCH_VAR(decision, DECISION, 0)
    NGX_HTTP_TOOLSEARCH_VAR(mode, MODE, 0)
    NGX_HTTP_TOOLSEARCH_VAR(upstream, UPSTREAM, 0)
    NGX_HTTP_TOOLSEARCH_VAR(defer_rule, RULE, 0)
    NGX_HTTP_TOOLSEARCH_VAR(format, FORMAT, 0)
    NGX_HTTP_TOOLSEARCH_VAR(client, CLIENT, 0)
    NGX_HTTP_TOOLSEARCH_VAR(found_tools, FOUND, 0)

    TS_COUNTERS(NGX_HTTP_TOOLSEARCH_COUNT_VAR)
    TS_COUNTERS_TOKENS(NGX_HTTP_TOOLSEARCH_TOKENS_VAR)

      ngx_http_null_variable
};


/* the main request's ctx: in a subrequest, the main request's values */
static ngx_int_t
ngx_http_toolsearch_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    ngx_str_t                    value;
    ngx_http_toolsearch_ctx_t   *ctx;
    ngx_http_toolsearch_kind_t  *kind;

    kind = &ngx_http_toolsearch_kinds[NGX_HTTP_TOOLSEARCH_KIND(data)];
    ctx = ngx_http_get_module_ctx(r->main, ngx_http_toolsearch_module);

    if (ctx == NULL
        || (kind->policy && ctx->decision < TS_DECISION_STANDARD_MODE))
    {
        v->not_found = 1;
        return NGX_OK;
    }

    if (kind->value(r, ctx, data, &value) != NGX_OK) {
        return NGX_ERROR;
    }

    v->data = value.data;
    v->len = value.len;
    v->valid = 1;
    v->no_cacheable = 1;
    v->not_found = 0;

    return NGX_OK;
}


/*
 * The words: the decision; the upstream profile the request was handled
 * as (a compatible upstream that forwards tool_reference is treated as
 * Anthropic's API); the name shape that chose the deferred tools
 * (rewrite/ts_shape.h); the API format the URI names; the client's profile
 * (rewrite/ts_client.h); how gateway search loads the tools it finds.
 */
static ngx_int_t
ngx_http_toolsearch_word_value(ngx_http_request_t *r,
    ngx_http_toolsearch_ctx_t *ctx, uintptr_t data, ngx_str_t *value)
{
    int                              upstream;
    const char                      *word;
    ngx_http_toolsearch_loc_conf_t  *tlcf;

    switch (NGX_HTTP_TOOLSEARCH_KIND(data)) {

    case NGX_HTTP_TOOLSEARCH_DECISION:
        word = ts_decision_name(ctx->decision);
        break;

    case NGX_HTTP_TOOLSEARCH_UPSTREAM:
        upstream = ctx->upstream;
        tlcf = ngx_http_get_module_loc_conf(r, ngx_http_toolsearch_module);

        if (upstream == TS_UPSTREAM_COMPATIBLE
            && tlcf->policy.upstream_tool_reference)
        {
            upstream = TS_UPSTREAM_ANTHROPIC;
        }

        word = ts_upstream_name(upstream);
        break;

    case NGX_HTTP_TOOLSEARCH_FORMAT:
        word = ts_format_name(ctx->format);
        break;

    case NGX_HTTP_TOOLSEARCH_CLIENT:
        word = ts_client_name(ctx->client);
        break;

    case NGX_HTTP_TOOLSEARCH_FOUND:
        word = ctx->found ? ctx->found : "none";
        break;

    default: /* NGX_HTTP_TOOLSEARCH_RULE */
        word = ts_shape_name(ctx->defer_rule);
    }

    value->data = (u_char *) word;
    value->len = ngx_strlen(word);

    return NGX_OK;
}


/* off, on, or auto:N */
static ngx_int_t
ngx_http_toolsearch_mode_value(ngx_http_request_t *r,
    ngx_http_toolsearch_ctx_t *ctx, uintptr_t data, ngx_str_t *value)
{
    const char  *name;

    value->data = ngx_pnalloc(r->pool, sizeof("auto:100"));
    if (value->data == NULL) {
        return NGX_ERROR;
    }

    name = ts_defer_mode_name(ctx->mode);

    if (ctx->mode == TS_DEFER_AUTO) {
        value->len = ngx_sprintf(value->data, "auto:%ui",
                                 (ngx_uint_t) ctx->percent)
                     - value->data;

    } else {
        value->len = ngx_cpymem(value->data, name, ngx_strlen(name))
                     - value->data;
    }

    return NGX_OK;
}


/*
 * A counter's value, or for TOKENS the estimated tokens of a counter's
 * bytes when the zone adds them (for tokens_saved: of the deferred
 * definitions), as the status page's metric of the same name counts
 * them.
 */
static ngx_int_t
ngx_http_toolsearch_count_value(ngx_http_request_t *r,
    ngx_http_toolsearch_ctx_t *ctx, uintptr_t data, ngx_str_t *value)
{
    uint64_t    n;
    ngx_uint_t  counter;

    counter = NGX_HTTP_TOOLSEARCH_ARG(data);
    n = ctx->count[counter];

    if (NGX_HTTP_TOOLSEARCH_KIND(data) == NGX_HTTP_TOOLSEARCH_TOKENS) {
        n = ngx_http_toolsearch_counted(ctx->decision, counter)
            ? ts_policy_tokens(n) : 0;
    }

    value->data = ngx_pnalloc(r->pool, NGX_INT64_LEN);
    if (value->data == NULL) {
        return NGX_ERROR;
    }

    value->len = ngx_sprintf(value->data, "%uL", n) - value->data;

    return NGX_OK;
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
