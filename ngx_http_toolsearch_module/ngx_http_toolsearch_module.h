/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * What the glue's files share: the location configuration and the request
 * context.
 */

#ifndef NGX_HTTP_TOOLSEARCH_MODULE_H
#define NGX_HTTP_TOOLSEARCH_MODULE_H

#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "loop/ts_cut.h"
#include "rewrite/ts_client.h"
#include "rewrite/ts_counters.h"
#include "rewrite/ts_format.h"
#include "rewrite/ts_request.h"
#include "ngx_http_toolsearch_pace.h"


/* toolsearch_search_blocks; not set: by the client's profile */
#define NGX_HTTP_TOOLSEARCH_BLOCKS_KEEP    0
#define NGX_HTTP_TOOLSEARCH_BLOCKS_STRIP   1
#define NGX_HTTP_TOOLSEARCH_BLOCKS_CLIENT  2


/*
 * The engine's settings live in policy: a directive row points into it,
 * create_loc_conf() unsets them, the merge takes ts_policy_init()'s
 * defaults.  The fields before it are the glue's own.
 */
typedef struct {
    ngx_flag_t          enable;
    size_t              max_body_size;
    ngx_flag_t          client_mode;
    ngx_flag_t          recall;
    size_t              recall_tools;
    int                 upstream;           /* ts_upstream_t */
    int                 search_blocks;
    const ts_match_list_t  *first_party_hosts;
    const ts_match_list_t  *openai_hosts;
    ts_match_list_t    *windows;
    ngx_array_t        *window_tokens;      /* of unsigned long */
    ts_match_list_t    *hint_names;
    ngx_array_t        *hint_phrases;       /* of char * */
    ts_policy_t         policy;
} ngx_http_toolsearch_loc_conf_t;


typedef struct {
    ngx_int_t       status;
    ts_decision_t   decision;
    int             mode;
    unsigned        percent;
    int             upstream;
    int             defer_rule;     /* ts_shape_t */
    int             format;         /* ts_format_t, from the URI */
    int             client;         /* ts_client_t */
    const char     *found;          /* ts_gateway_found_name() */
    size_t          count[TS_COUNTER_N];
    ngx_uint_t      changed;
    ngx_buf_t      *header_in;      /* lent out while the body is read */
    ts_cut_t       *cut;            /* the search blocks' cut of a
                                       deferred_hosted answer */
    ngx_http_toolsearch_pace_t  pace;   /* of the answer's body filter */

    /* gateway-executed search: the loop's own (ngx_http_toolsearch_loop.h) */
    struct ngx_http_toolsearch_loop_s  *loop;
} ngx_http_toolsearch_ctx_t;


typedef struct ngx_http_toolsearch_loop_s  ngx_http_toolsearch_loop_t;


extern ngx_module_t  ngx_http_toolsearch_module;


/* the response filters that cut search blocks from hosted answers */
ngx_int_t ngx_http_toolsearch_answer_init(ngx_conf_t *cf);


/*
 * Whether the client's answer loses its search blocks: as
 * toolsearch_search_blocks says, or where it is not set, unless the
 * client's profile carries them back (docs/clients.md#client-profiles).
 * Only Messages answers carry such blocks: other formats' loops never
 * show their searches.
 */
static ngx_inline ngx_uint_t
ngx_http_toolsearch_strips(ngx_http_toolsearch_loc_conf_t *tlcf,
    ngx_http_toolsearch_ctx_t *ctx)
{
    if (ctx->format != TS_FORMAT_MESSAGES) {
        return 0;
    }

    if (tlcf->search_blocks != NGX_HTTP_TOOLSEARCH_BLOCKS_CLIENT) {
        return tlcf->search_blocks == NGX_HTTP_TOOLSEARCH_BLOCKS_STRIP;
    }

    return !ts_client_keeps_blocks(ctx->client);
}


/*
 * Puts a header filter and a body filter on top of nginx's chains; the
 * next ones get the filters they pass on to.  Inline: each filter file
 * installs its own, and the glue's files call one another one way only.
 */
static ngx_inline void
ngx_http_toolsearch_filters_add(ngx_http_output_header_filter_pt header,
    ngx_http_output_header_filter_pt *next_header,
    ngx_http_output_body_filter_pt body,
    ngx_http_output_body_filter_pt *next_body)
{
    *next_header = ngx_http_top_header_filter;
    ngx_http_top_header_filter = header;

    *next_body = ngx_http_top_body_filter;
    ngx_http_top_body_filter = body;
}

#endif /* NGX_HTTP_TOOLSEARCH_MODULE_H */
