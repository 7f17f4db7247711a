
/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Nginx glue: directives, the precontent phase handler that hands request
 * bodies to the engine (src/), and the $toolsearch_* variables.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_toolsearch_module.h"
#include "ngx_http_toolsearch_conf.h"
#include "ngx_http_toolsearch_status.h"
#include "ngx_http_toolsearch_blocks.h"
#include "search/ts_search.h"
#include "rewrite/ts_shape.h"


#define NGX_HTTP_TOOLSEARCH_MODE_HEADER  "X-Toolsearch-Mode"

/* each search is one subrequest; nginx allows 50 per request */
#define NGX_HTTP_TOOLSEARCH_MAX_SEARCHES  20


static ngx_int_t ngx_http_toolsearch_handler(ngx_http_request_t *r);
static ts_decision_t ngx_http_toolsearch_precheck(ngx_http_request_t *r,
    ngx_http_toolsearch_loc_conf_t *tlcf);
static ngx_int_t ngx_http_toolsearch_is_json(ngx_http_request_t *r);
static ngx_int_t ngx_http_toolsearch_is_encoded(ngx_http_request_t *r);
static void ngx_http_toolsearch_read_in_one(ngx_http_request_t *r,
    ngx_http_toolsearch_ctx_t *ctx);
static u_char *ngx_http_toolsearch_body_block(ngx_http_request_t *r,
    size_t size);
static void ngx_http_toolsearch_body_handler(ngx_http_request_t *r);
static void ngx_http_toolsearch_process(ngx_http_request_t *r,
    ngx_http_toolsearch_ctx_t *ctx);
static off_t ngx_http_toolsearch_body_size(ngx_chain_t *cl);
static u_char *ngx_http_toolsearch_body_bytes(ngx_http_request_t *r,
    size_t len);
static ngx_int_t ngx_http_toolsearch_apply(ngx_http_request_t *r,
    ts_request_t *rq, u_char *body);
static ngx_int_t ngx_http_toolsearch_loop_create(ngx_http_request_t *r,
    ngx_http_toolsearch_ctx_t *ctx, ts_request_t *rq, ts_input_t *in,
    u_char *body, size_t len);
static void ngx_http_toolsearch_report(ngx_http_request_t *r,
    ngx_http_toolsearch_ctx_t *ctx);
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
static void ngx_http_toolsearch_input(ngx_http_request_t *r,
    ngx_http_toolsearch_loc_conf_t *tlcf, ts_input_t *in);
static ngx_int_t ngx_http_toolsearch_betas(ngx_http_request_t *r,
    ngx_str_t *merged);

static char *ngx_http_toolsearch_defer(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static char *ngx_http_toolsearch_list(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static char *ngx_http_toolsearch_window(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static char *ngx_http_toolsearch_tool_name(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);
static char *ngx_http_toolsearch_hint(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);

static ngx_int_t ngx_http_toolsearch_add_variables(ngx_conf_t *cf);
static void *ngx_http_toolsearch_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_toolsearch_merge_loc_conf(ngx_conf_t *cf, void *parent,
    void *child);
static ngx_int_t ngx_http_toolsearch_init(ngx_conf_t *cf);
static void ngx_http_toolsearch_exit_process(ngx_cycle_t *cycle);


static ngx_conf_enum_t  ngx_http_toolsearch_upstreams[] = {
    { ngx_string("auto"), TS_UPSTREAM_AUTO },
    { ngx_string("anthropic"), TS_UPSTREAM_ANTHROPIC },
    { ngx_string("vertex"), TS_UPSTREAM_VERTEX },
    { ngx_string("bedrock"), TS_UPSTREAM_BEDROCK },
    { ngx_string("compatible"), TS_UPSTREAM_COMPATIBLE },
    { ngx_null_string, 0 }
};


static ngx_conf_enum_t  ngx_http_toolsearch_search_blocks[] = {
    { ngx_string("keep"), NGX_HTTP_TOOLSEARCH_BLOCKS_KEEP },
    { ngx_string("strip"), NGX_HTTP_TOOLSEARCH_BLOCKS_STRIP },
    { ngx_null_string, 0 }
};


static ngx_conf_enum_t  ngx_http_toolsearch_hosted[] = {
    { ngx_string("bm25"), TS_HOSTED_BM25 },
    { ngx_string("regex"), TS_HOSTED_REGEX },
    { ngx_null_string, 0 }
};


static ngx_conf_enum_t  ngx_http_toolsearch_searches[] = {
    { ngx_string("auto"), TS_SEARCH_AUTO },
    { ngx_string("hosted"), TS_SEARCH_HOSTED },
    { ngx_string("gateway"), TS_SEARCH_GATEWAY },
    { ngx_null_string, 0 }
};


static ngx_conf_enum_t  ngx_http_toolsearch_scorings[] = {
    { ngx_string("seed"), TS_SCORING_SEED },
    { ngx_string("hybrid"), TS_SCORING_HYBRID },
    { ngx_null_string, 0 }
};


static ngx_conf_num_bounds_t  ngx_http_toolsearch_max_searches_bounds = {
    ngx_conf_check_num_bounds, 1, NGX_HTTP_TOOLSEARCH_MAX_SEARCHES
};


static ngx_conf_num_bounds_t  ngx_http_toolsearch_max_results_bounds = {
    ngx_conf_check_num_bounds, 1, TS_SEARCH_SELECT_MAX
};


/* the proxy module's loc conf starts with its ngx_http_upstream_conf_t */
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


static ngx_command_t  ngx_http_toolsearch_commands[] = {

    { ngx_string("toolsearch"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, enable),
      NULL },

    { ngx_string("toolsearch_max_body_size"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_toolsearch_conf_size,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, max_body_size),
      NULL },

    { ngx_string("toolsearch_defer"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_toolsearch_defer,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("toolsearch_client_mode"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, client_mode),
      NULL },

    { ngx_string("toolsearch_recall"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, recall),
      NULL },

    /* a worker's memory, one for all its locations */
    { ngx_string("toolsearch_recall_tools"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_http_toolsearch_conf_size,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, recall_tools),
      NULL },

    { ngx_string("toolsearch_always_load"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_ANY,
      ngx_http_toolsearch_list,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, always_load),
      NULL },

    { ngx_string("toolsearch_defer_tools"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_ANY,
      ngx_http_toolsearch_list,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, defer_tools),
      NULL },

    { ngx_string("toolsearch_client_search_tools"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_ANY,
      ngx_http_toolsearch_list,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, client_search_tools),
      NULL },

    { ngx_string("toolsearch_unsupported_models"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_ANY,
      ngx_http_toolsearch_list,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, unsupported_models),
      NULL },

    { ngx_string("toolsearch_first_party_hosts"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_ANY,
      ngx_http_toolsearch_list,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, first_party_hosts),
      NULL },

    { ngx_string("toolsearch_context_window"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE2,
      ngx_http_toolsearch_window,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("toolsearch_upstream"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_toolsearch_conf_enum,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, upstream),
      &ngx_http_toolsearch_upstreams },

    { ngx_string("toolsearch_upstream_tool_reference"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, upstream_tool_reference),
      NULL },

    { ngx_string("toolsearch_disable_betas"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, disable_betas),
      NULL },

    { ngx_string("toolsearch_turn_boundary"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, turn_boundary),
      NULL },

    { ngx_string("toolsearch_hosted_search"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_toolsearch_conf_enum,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, hosted_search),
      &ngx_http_toolsearch_hosted },

    { ngx_string("toolsearch_search"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_toolsearch_conf_enum,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, search),
      &ngx_http_toolsearch_searches },

    { ngx_string("toolsearch_search_blocks"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_toolsearch_conf_enum,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, search_blocks),
      &ngx_http_toolsearch_search_blocks },

    { ngx_string("toolsearch_tool_name"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_toolsearch_tool_name,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("toolsearch_max_searches"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_toolsearch_conf_num,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, max_searches),
      &ngx_http_toolsearch_max_searches_bounds },

    { ngx_string("toolsearch_max_results"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_toolsearch_conf_num,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, max_results),
      &ngx_http_toolsearch_max_results_bounds },

    { ngx_string("toolsearch_search_scoring"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_toolsearch_conf_enum,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, scoring),
      &ngx_http_toolsearch_scorings },

    { ngx_string("toolsearch_hint"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE2,
      ngx_http_toolsearch_hint,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("toolsearch_zone"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE2,
      ngx_http_toolsearch_zone,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("toolsearch_status"),
      NGX_HTTP_LOC_CONF|NGX_CONF_ANY,
      ngx_http_toolsearch_status,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, enable),
      NULL },

      ngx_null_command
};


static ngx_http_module_t  ngx_http_toolsearch_module_ctx = {
    ngx_http_toolsearch_add_variables,     /* preconfiguration */
    ngx_http_toolsearch_init,              /* postconfiguration */

    ngx_http_toolsearch_create_main_conf,  /* create main configuration */
    ngx_http_toolsearch_init_main_conf,    /* init main configuration */

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
    ngx_http_toolsearch_exit_process,      /* exit process */
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
        ngx_http_toolsearch_report(r, ctx);
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
    ngx_http_toolsearch_report(r, ctx);

    if (ctx->loop
        && ngx_http_toolsearch_loop_prepare(r, ctx) != NGX_OK)
    {
        ngx_http_finalize_request(r, NGX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }

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

    ngx_http_toolsearch_input(r, tlcf, &in);

    ctx->decision = ts_request_process(&rq, &in, (char *) body, len);
    ctx->mode = rq.mode;
    ctx->percent = rq.percent;
    ctx->upstream = rq.upstream;
    ctx->defer_rule = rq.defer_rule;
    ctx->tools_total = rq.ix.ntools;
    ctx->tools_recalled = rq.ix.tools_recalled;
    ctx->messages_recalled = rq.ix.messages_recalled;
    ctx->tools_deferred = rq.tools_deferred;
    ctx->defer_chars = rq.defer_chars;
    ctx->threshold_chars = rq.threshold_chars;
    ctx->refs_converted = rq.refs_converted;
    ctx->refs_stale = rq.refs_stale;
    ctx->siblings_moved = rq.siblings_moved;
    ctx->boundaries_added = rq.boundaries_added;
    ctx->discovered = rq.discovered;

    if (ctx->decision >= TS_DECISION_STANDARD_MODE) {
        ctx->hosted_searches = ngx_http_toolsearch_hosted_searches(&rq.ix);
    }

    if (ctx->decision == TS_DECISION_DEFERRED_GATEWAY
        && ngx_http_toolsearch_loop_create(r, ctx, &rq, &in, body, len)
           != NGX_OK)
    {
        ctx->decision = TS_DECISION_ERROR;

    } else if (ngx_http_toolsearch_apply(r, &rq, body) != NGX_OK) {
        ctx->decision = TS_DECISION_ERROR;
        ts_loop_free(ctx->loop);
        ctx->loop = NULL;

    } else {
        ctx->bytes_out = ts_request_size(&rq);
        ctx->changed = ts_request_changed(&rq) || rq.betas_changed;
    }

    ts_request_free(&rq);

    ngx_log_debug2(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "toolsearch: %s, %uz bytes out",
                   ts_decision_name(ctx->decision), ctx->bytes_out);
}


/* the gateway answers the model's searches: the loop follows the calls */
static ngx_int_t
ngx_http_toolsearch_loop_create(ngx_http_request_t *r,
    ngx_http_toolsearch_ctx_t *ctx, ts_request_t *rq, ts_input_t *in,
    u_char *body, size_t len)
{
    const ts_member_t  *stream;

    stream = ts_index_top(&rq->ix, TS_TOP_STREAM);
    ctx->sse = stream != NULL && stream->val.kind == TS_TRUE;

    ctx->loop = ts_loop_create(in, (char *) body, len);

    return ctx->loop ? NGX_OK : NGX_ERROR;
}


/* profile "auto": the proxied host decides (proxy_pass with a host) */
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

    if (ucf->upstream != NULL
        && ts_match_any(tlcf->first_party_hosts,
                        (char *) ucf->upstream->host.data,
                        ucf->upstream->host.len))
    {
        return TS_UPSTREAM_ANTHROPIC;
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

    if (tlcf->client_mode) {
        ngx_http_toolsearch_client_mode(r, in);
    }

    /* without memory the betas look absent: nothing is then added */
    if (ngx_http_toolsearch_betas(r, &betas) == NGX_OK) {
        in->betas = (char *) betas.data;
        in->betas_len = betas.len;
    }
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


/* the anthropic-beta lines: the first takes the value, others go */
typedef struct {
    ngx_str_t           value;
    ngx_table_elt_t    *added;      /* when the request had none */
    ngx_list_part_t    *parts;      /* one per line, for the splits */
} ngx_http_toolsearch_betas_t;


/*
 * Kept ranges shorter than this are copied with the new bytes: a buffer
 * of the chain costs the proxy module more than copying them (measured
 * in docs/benchmarks.md).
 */
#define NGX_HTTP_TOOLSEARCH_COPY_BELOW   4096

/* buffers of this size and more (bodies read in one, copies) are lent */
#define NGX_HTTP_TOOLSEARCH_BLOCK_FROM   16384


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


static u_char *
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


static ngx_int_t
ngx_http_toolsearch_is_beta(ngx_table_elt_t *h)
{
    return h->key.len == sizeof("anthropic-beta") - 1
           && ngx_strncasecmp(h->key.data, (u_char *) "anthropic-beta",
                              sizeof("anthropic-beta") - 1) == 0;
}


/* every anthropic-beta line of the request, comma-joined */
static ngx_int_t
ngx_http_toolsearch_betas(ngx_http_request_t *r, ngx_str_t *merged)
{
    u_char           *p;
    size_t            len;
    ngx_uint_t        i, pass;
    ngx_list_part_t  *part;
    ngx_table_elt_t  *h;

    len = 0;
    p = NULL;
    ngx_str_null(merged);

    for (pass = 0; pass < 2; pass++) {
        for (part = &r->headers_in.headers.part; part; part = part->next) {
            h = part->elts;

            for (i = 0; i < part->nelts; i++) {
                if (!ngx_http_toolsearch_is_beta(&h[i])) {
                    continue;
                }

                if (pass == 0) {
                    len += h[i].value.len + 1;
                    continue;
                }

                if (p != merged->data) {
                    *p++ = ',';
                }

                p = ngx_cpymem(p, h[i].value.data, h[i].value.len);
            }
        }

        if (pass == 0) {
            if (len == 0) {
                return NGX_OK;
            }

            merged->data = ngx_pnalloc(r->pool, len);
            if (merged->data == NULL) {
                return NGX_ERROR;
            }

            p = merged->data;
        }
    }

    merged->len = p - merged->data;

    return NGX_OK;
}


static ngx_int_t
ngx_http_toolsearch_betas_prepare(ngx_http_request_t *r, const char *value,
    size_t len, ngx_http_toolsearch_betas_t *nb)
{
    ngx_uint_t        i, n;
    ngx_list_t       *l;
    ngx_list_part_t  *part;
    ngx_table_elt_t  *h;

    l = &r->headers_in.headers;
    n = 0;

    for (part = &l->part; part; part = part->next) {
        h = part->elts;

        for (i = 0; i < part->nelts; i++) {
            n += ngx_http_toolsearch_is_beta(&h[i]);
        }
    }

    nb->value.len = len;
    nb->value.data = ngx_pnalloc(r->pool, len + 1);
    nb->parts = ngx_palloc(r->pool, (n + 1) * sizeof(ngx_list_part_t));

    if (nb->value.data == NULL || nb->parts == NULL) {
        return NGX_ERROR;
    }

    ngx_memcpy(nb->value.data, value, len);
    nb->value.data[len] = '\0';
    nb->added = NULL;

    if (n > 0 || nb->value.len == 0) {
        return NGX_OK;
    }

    nb->added = ngx_list_push(l);
    if (nb->added == NULL) {
        return NGX_ERROR;
    }

    ngx_str_set(&nb->added->key, "anthropic-beta");
    nb->added->lowcase_key = (u_char *) "anthropic-beta";
    nb->added->hash = ngx_hash_key(nb->added->lowcase_key,
                                   nb->added->key.len);
    nb->added->value = nb->value;

    return NGX_OK;
}


/*
 * Drops element i of a part without moving any element, because other
 * request fields point into the list: the part is shortened, advanced or
 * split around it.  A part is never left empty but unlinked from prev:
 * readers of the list, the proxy module among them, take a part's first
 * slot without checking its count.  The last part is the one
 * ngx_list_push() fills: its capacity, l->nalloc, shrinks with it.
 */
static void
ngx_http_toolsearch_list_drop(ngx_list_t *l, ngx_list_part_t *prev,
    ngx_list_part_t *part, ngx_uint_t i, ngx_list_part_t *spare)
{
    if (part->nelts == 1 && prev != NULL) {
        prev->next = part->next;
        part->nelts = 0;

        /* prev is full: a push starts a new part (a first part that is
         * empty only ever lends a slot it dropped) */
        if (l->last == part) {
            l->last = prev;
            l->nalloc = prev->nelts ? prev->nelts : 1;
        }

        return;
    }

    if (i == part->nelts - 1) {
        part->nelts--;
        return;
    }

    if (l->last == part) {
        l->nalloc -= i + 1;
    }

    if (i == 0) {
        part->elts = (u_char *) part->elts + l->size;
        part->nelts--;
        return;
    }

    spare->elts = (u_char *) part->elts + (i + 1) * l->size;
    spare->nelts = part->nelts - i - 1;
    spare->next = part->next;

    part->nelts = i;
    part->next = spare;

    if (l->last == part) {
        l->last = spare;
    }
}


static void
ngx_http_toolsearch_betas_commit(ngx_http_request_t *r,
    ngx_http_toolsearch_betas_t *nb)
{
    ngx_uint_t        i, first;
    ngx_list_t       *l;
    ngx_list_part_t  *part, *prev, *spare;
    ngx_table_elt_t  *h;

    if (nb->added) {
        return;
    }

    l = &r->headers_in.headers;
    spare = nb->parts;
    first = nb->value.len > 0;
    prev = NULL;

    for (part = &l->part; part; part = part->next) {
        h = part->elts;

        for (i = 0; i < part->nelts; /* void */) {
            if (!ngx_http_toolsearch_is_beta(&h[i])) {
                i++;
                continue;
            }

            if (first) {
                h[i].value = nb->value;
                first = 0;
                i++;
                continue;
            }

            /* what follows the dropped line is rescanned from i */
            ngx_http_toolsearch_list_drop(l, prev, part, i, spare++);
            h = part->elts;

            if (i == part->nelts) {
                break;
            }
        }

        /* an unlinked part is no part's predecessor */
        if (part->nelts > 0 || prev == NULL) {
            prev = part;
        }
    }
}


ngx_int_t
ngx_http_toolsearch_set_betas(ngx_http_request_t *r, const char *value,
    size_t len)
{
    ngx_http_toolsearch_betas_t  nh;

    if (ngx_http_toolsearch_betas_prepare(r, value, len, &nh) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_http_toolsearch_betas_commit(r, &nh);

    return NGX_OK;
}


/*
 * Puts the engine's result into the request: the new body and the
 * anthropic-beta lines change together or not at all.
 */
static ngx_int_t
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


/* the status zone's counters and the info log line */
static void
ngx_http_toolsearch_report(ngx_http_request_t *r,
    ngx_http_toolsearch_ctx_t *ctx)
{
    ngx_http_toolsearch_report_t  rep;

    rep.decision = ctx->decision;
    rep.changed = ctx->changed;
    rep.bytes_in = ctx->bytes_in;
    rep.bytes_out = ctx->bytes_out;
    rep.tools_total = ctx->tools_total;
    rep.tools_recalled = ctx->tools_recalled;
    rep.messages_recalled = ctx->messages_recalled;
    rep.tools_deferred = ctx->tools_deferred;
    rep.defer_chars = ctx->defer_chars;
    rep.hosted_searches = ctx->hosted_searches;
    rep.refs_converted = ctx->refs_converted;
    rep.refs_stale = ctx->refs_stale;
    rep.siblings_moved = ctx->siblings_moved;
    rep.boundaries_added = ctx->boundaries_added;
    rep.discovered = ctx->discovered;

    ngx_http_toolsearch_stat_request(r, &rep);
}


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

    /* set by ngx_pcalloc(): the lists and window_tokens (NULL) */

    conf->enable = NGX_CONF_UNSET;
    conf->max_body_size = NGX_CONF_UNSET_SIZE;
    conf->recall_tools = NGX_CONF_UNSET_SIZE;
    conf->defer_mode = NGX_CONF_UNSET;
    conf->defer_percent = NGX_CONF_UNSET_UINT;
    conf->client_mode = NGX_CONF_UNSET;
    conf->recall = NGX_CONF_UNSET;
    conf->upstream = NGX_CONF_UNSET_UINT;
    conf->upstream_tool_reference = NGX_CONF_UNSET;
    conf->disable_betas = NGX_CONF_UNSET;
    conf->turn_boundary = NGX_CONF_UNSET;
    conf->search_blocks = NGX_CONF_UNSET_UINT;
    conf->hosted_search = NGX_CONF_UNSET_UINT;
    conf->search = NGX_CONF_UNSET_UINT;
    conf->max_searches = NGX_CONF_UNSET_UINT;
    conf->max_results = NGX_CONF_UNSET_UINT;
    conf->scoring = NGX_CONF_UNSET_UINT;

    return conf;
}


static void
ngx_http_toolsearch_list_cleanup(void *data)
{
    ts_match_free(data);
}


static ts_match_list_t *
ngx_http_toolsearch_list_create(ngx_conf_t *cf)
{
    ts_match_list_t     *l;
    ngx_pool_cleanup_t  *cln;

    cln = ngx_pool_cleanup_add(cf->pool, sizeof(ts_match_list_t));
    if (cln == NULL) {
        return NULL;
    }

    l = cln->data;
    ngx_memzero(l, sizeof(ts_match_list_t));
    cln->handler = ngx_http_toolsearch_list_cleanup;

    return l;
}


static char *
ngx_http_toolsearch_list_add(ngx_conf_t *cf, ts_match_list_t *l,
    ngx_str_t *pattern)
{
    char  err[NGX_MAX_CONF_ERRSTR];

    if (ts_match_add(l, (char *) pattern->data, pattern->len, err,
                     sizeof(err)) != 0)
    {
        ngx_http_toolsearch_conf_invalid(cf, pattern, "%s", err);
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


/* a list directive: names and ~regexes, once per level */
static char *
ngx_http_toolsearch_list(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_uint_t         i;
    ngx_str_t         *value;
    ts_match_list_t  **lp;

    lp = (ts_match_list_t **) ((char *) conf + cmd->offset);

    if (*lp != NULL) {
        return "is duplicate";
    }

    *lp = ngx_http_toolsearch_list_create(cf);
    if (*lp == NULL) {
        return NGX_CONF_ERROR;
    }

    value = cf->args->elts;

    /* NGX_CONF_ANY: nginx's own message would not say what is missing */
    if (cf->args->nelts < 2) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "no value in \"%V\" directive, it takes one or "
                           "more names or ~regexes", &value[0]);
        return NGX_CONF_ERROR;
    }

    for (i = 1; i < cf->args->nelts; i++) {
        if (ngx_http_toolsearch_list_add(cf, *lp, &value[i])
            != NGX_CONF_OK)
        {
            return NGX_CONF_ERROR;
        }
    }

    return NGX_CONF_OK;
}


static char *
ngx_http_toolsearch_defer(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_toolsearch_loc_conf_t *tlcf = conf;

    int         mode;
    unsigned    percent;
    ngx_str_t  *value;

    if (tlcf->defer_mode != NGX_CONF_UNSET) {
        return "is duplicate";
    }

    value = cf->args->elts;

    mode = ts_defer_mode_parse((char *) value[1].data, value[1].len,
                               &percent);
    if (mode < 0) {
        ngx_http_toolsearch_conf_invalid(cf, &value[1],
                                         "it must be \"off\", \"on\", "
                                         "\"auto\" or \"auto:N\" with N "
                                         "from 1 to 99");
        return NGX_CONF_ERROR;
    }

    tlcf->defer_mode = mode;
    tlcf->defer_percent = percent;

    return NGX_CONF_OK;
}


/* toolsearch_context_window <regex> <tokens>: first match wins */
static char *
ngx_http_toolsearch_window(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_toolsearch_loc_conf_t *tlcf = conf;

    u_char         *p;
    ngx_int_t       n;
    ngx_str_t      *value, re;
    unsigned long  *tokens;

    value = cf->args->elts;

    n = ngx_atoi(value[2].data, value[2].len);
    if (n <= 0) {
        ngx_http_toolsearch_conf_invalid(cf, &value[2],
                                         "it must be a positive number of "
                                         "tokens");
        return NGX_CONF_ERROR;
    }

    if (tlcf->windows == NULL) {
        tlcf->windows = ngx_http_toolsearch_list_create(cf);
        tlcf->window_tokens = ngx_array_create(cf->pool, 4,
                                               sizeof(unsigned long));
        if (tlcf->windows == NULL || tlcf->window_tokens == NULL) {
            return NGX_CONF_ERROR;
        }
    }

    /* the pattern is always a regex; a leading "~" is allowed */
    re = value[1];

    if (re.len == 0 || re.data[0] != '~') {
        p = ngx_pnalloc(cf->pool, re.len + 1);
        if (p == NULL) {
            return NGX_CONF_ERROR;
        }

        *p = '~';
        ngx_memcpy(p + 1, re.data, re.len);
        re.data = p;
        re.len++;
    }

    tokens = ngx_array_push(tlcf->window_tokens);
    if (tokens == NULL) {
        return NGX_CONF_ERROR;
    }

    *tokens = (unsigned long) n;

    return ngx_http_toolsearch_list_add(cf, tlcf->windows, &re);
}


/* the Messages API's tool names: [a-zA-Z0-9_-]{1,64} */
static char *
ngx_http_toolsearch_tool_name(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_toolsearch_loc_conf_t *tlcf = conf;

    ngx_str_t   *value;
    ngx_uint_t   i;
    u_char       c;

    if (tlcf->tool_name.data != NULL) {
        return "is duplicate";
    }

    value = cf->args->elts;

    for (i = 0; i < value[1].len; i++) {
        c = value[1].data[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9') || c == '_' || c == '-'))
        {
            break;
        }
    }

    if (value[1].len == 0 || value[1].len > 64 || i < value[1].len) {
        ngx_http_toolsearch_conf_invalid(cf, &value[1],
                                         "a tool name must be 1 to 64 "
                                         "letters, digits, \"_\" or "
                                         "\"-\"");
        return NGX_CONF_ERROR;
    }

    /* the engine reads it as a C string: the parser ends args with NUL */
    tlcf->tool_name = value[1];

    return NGX_CONF_OK;
}


/* toolsearch_hint <name | ~regex> <phrase>: the first match wins */
static char *
ngx_http_toolsearch_hint(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_toolsearch_loc_conf_t *tlcf = conf;

    ngx_str_t   *value;
    char       **phrase;

    value = cf->args->elts;

    if (value[2].len == 0) {
        ngx_http_toolsearch_conf_invalid(cf, &value[2],
                                         "the hint for \"%V\" is empty",
                                         &value[1]);
        return NGX_CONF_ERROR;
    }

    if (tlcf->hint_names == NULL) {
        tlcf->hint_names = ngx_http_toolsearch_list_create(cf);
        tlcf->hint_phrases = ngx_array_create(cf->pool, 4, sizeof(char *));
        if (tlcf->hint_names == NULL || tlcf->hint_phrases == NULL) {
            return NGX_CONF_ERROR;
        }
    }

    phrase = ngx_array_push(tlcf->hint_phrases);
    if (phrase == NULL) {
        return NGX_CONF_ERROR;
    }

    *phrase = (char *) value[2].data;

    return ngx_http_toolsearch_list_add(cf, tlcf->hint_names, &value[1]);
}


/* an unset list takes the parent's, or at the top its defaults */
static char *
ngx_http_toolsearch_merge_list(ngx_conf_t *cf, ts_match_list_t **conf,
    ts_match_list_t *prev, const char *const *defaults)
{
    char  err[NGX_MAX_CONF_ERRSTR];

    if (*conf != NULL) {
        return NGX_CONF_OK;
    }

    if (prev != NULL || defaults == NULL) {
        *conf = prev;
        return NGX_CONF_OK;
    }

    *conf = ngx_http_toolsearch_list_create(cf);
    if (*conf == NULL) {
        return NGX_CONF_ERROR;
    }

    if (ts_match_add_all(*conf, defaults, err, sizeof(err)) != 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%s", err);
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


static char *
ngx_http_toolsearch_merge_lists(ngx_conf_t *cf,
    ngx_http_toolsearch_loc_conf_t *prev, ngx_http_toolsearch_loc_conf_t *conf)
{
    if (ngx_http_toolsearch_merge_list(cf, &conf->always_load,
                                       prev->always_load, NULL)
        != NGX_CONF_OK
        || ngx_http_toolsearch_merge_list(cf, &conf->defer_tools,
                                          prev->defer_tools, NULL)
           != NGX_CONF_OK
        || ngx_http_toolsearch_merge_list(cf, &conf->client_search_tools,
                                          prev->client_search_tools,
                                          ts_default_client_search_tools)
           != NGX_CONF_OK
        || ngx_http_toolsearch_merge_list(cf, &conf->unsupported_models,
                                          prev->unsupported_models,
                                          ts_default_unsupported_models)
           != NGX_CONF_OK
        || ngx_http_toolsearch_merge_list(cf, &conf->first_party_hosts,
                                          prev->first_party_hosts,
                                          ts_default_first_party_hosts)
           != NGX_CONF_OK)
    {
        return NGX_CONF_ERROR;
    }

    if (conf->windows == NULL) {
        conf->windows = prev->windows;
        conf->window_tokens = prev->window_tokens;
    }

    if (conf->hint_names == NULL) {
        conf->hint_names = prev->hint_names;
        conf->hint_phrases = prev->hint_phrases;
    }

    return NGX_CONF_OK;
}


static void
ngx_http_toolsearch_set_policy(ngx_http_toolsearch_loc_conf_t *conf)
{
    ts_policy_t  *p;

    p = &conf->policy;

    p->defer_mode = (int) conf->defer_mode;
    p->defer_percent = (unsigned) conf->defer_percent;
    p->always_load = conf->always_load;
    p->defer_tools = conf->defer_tools;
    p->client_search_tools = conf->client_search_tools;
    p->unsupported_models = conf->unsupported_models;
    p->windows = conf->windows;
    p->window_tokens = conf->window_tokens ? conf->window_tokens->elts
                                           : NULL;
    p->upstream_tool_reference = (int) conf->upstream_tool_reference;
    p->disable_betas = (int) conf->disable_betas;
    p->turn_boundary = (int) conf->turn_boundary;
    p->hosted_search = (int) conf->hosted_search;
    p->search = (int) conf->search;
    p->search_tool = (char *) conf->tool_name.data;
    p->max_searches = (unsigned) conf->max_searches;
    p->max_results = (unsigned) conf->max_results;
    p->scoring = (int) conf->scoring;
    p->hint_names = conf->hint_names;
    p->hint_phrases = conf->hint_phrases ? conf->hint_phrases->elts : NULL;
}


static char *
ngx_http_toolsearch_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
    ngx_http_toolsearch_loc_conf_t *prev = parent;
    ngx_http_toolsearch_loc_conf_t *conf = child;

    ngx_conf_merge_value(conf->enable, prev->enable, 0);
    ngx_conf_merge_size_value(conf->max_body_size, prev->max_body_size,
                              16 * 1024 * 1024);

    if (conf->defer_mode == NGX_CONF_UNSET) {
        conf->defer_mode = prev->defer_mode;
        conf->defer_percent = prev->defer_percent;
    }

    ngx_conf_merge_value(conf->defer_mode, prev->defer_mode, TS_DEFER_ON);
    ngx_conf_merge_uint_value(conf->defer_percent, prev->defer_percent, 0);
    ngx_conf_merge_value(conf->client_mode, prev->client_mode, 0);
    ngx_conf_merge_value(conf->recall, prev->recall, 1);
    ngx_conf_merge_size_value(conf->recall_tools, prev->recall_tools,
                              TS_RECALL_SIZE);
    ngx_conf_merge_uint_value(conf->upstream, prev->upstream,
                              TS_UPSTREAM_AUTO);
    ngx_conf_merge_value(conf->upstream_tool_reference,
                         prev->upstream_tool_reference, 0);
    ngx_conf_merge_value(conf->disable_betas, prev->disable_betas, 0);
    ngx_conf_merge_value(conf->turn_boundary, prev->turn_boundary, 1);
    ngx_conf_merge_uint_value(conf->search_blocks, prev->search_blocks,
                              NGX_HTTP_TOOLSEARCH_BLOCKS_STRIP);
    ngx_conf_merge_uint_value(conf->hosted_search, prev->hosted_search,
                              TS_HOSTED_BM25);
    ngx_conf_merge_uint_value(conf->search, prev->search, TS_SEARCH_AUTO);
    ngx_conf_merge_str_value(conf->tool_name, prev->tool_name,
                             TS_SEARCH_TOOL_DEFAULT);
    ngx_conf_merge_uint_value(conf->max_searches, prev->max_searches,
                              TS_MAX_SEARCHES_DEFAULT);
    ngx_conf_merge_uint_value(conf->max_results, prev->max_results,
                              TS_MAX_RESULTS_DEFAULT);
    ngx_conf_merge_uint_value(conf->scoring, prev->scoring,
                              TS_SCORING_DEFAULT);

    if (ngx_http_toolsearch_merge_lists(cf, prev, conf) != NGX_CONF_OK) {
        return NGX_CONF_ERROR;
    }

    ngx_http_toolsearch_set_policy(conf);

    return NGX_CONF_OK;
}


static ngx_int_t
ngx_http_toolsearch_init(ngx_conf_t *cf)
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

    if (ngx_http_toolsearch_loop_init(cf) != NGX_OK
        || ngx_http_toolsearch_answer_init(cf) != NGX_OK)
    {
        return NGX_ERROR;
    }

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


static void
ngx_http_toolsearch_exit_process(ngx_cycle_t *cycle)
{
    ts_index_mem_free(&ngx_http_toolsearch_index_mem);
    ngx_http_toolsearch_blocks_free();
}
