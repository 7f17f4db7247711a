
/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Nginx glue: the module, its directives and their configuration; the
 * other files of this folder do the request's work.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_toolsearch_module.h"
#include "ngx_http_toolsearch_conf.h"
#include "ngx_http_toolsearch_status.h"
#include "ngx_http_toolsearch_blocks.h"
#include "ngx_http_toolsearch_handler.h"
#include "ngx_http_toolsearch_loop.h"
#include "ngx_http_toolsearch_variables.h"
#include "search/ts_search.h"


/* each search is one subrequest; nginx allows 50 per request */
#define NGX_HTTP_TOOLSEARCH_MAX_SEARCHES  20

/* a directive row's offset of an engine setting */
#define NGX_HTTP_TOOLSEARCH_POLICY(field)                                    \
    (offsetof(ngx_http_toolsearch_loc_conf_t, policy)                         \
     + offsetof(ts_policy_t, field))


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

static void *ngx_http_toolsearch_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_toolsearch_merge_loc_conf(ngx_conf_t *cf, void *parent,
    void *child);
static ngx_int_t ngx_http_toolsearch_init(ngx_conf_t *cf);
static void ngx_http_toolsearch_exit_process(ngx_cycle_t *cycle);


static const char *const  ngx_http_toolsearch_blocks_words[] = {
    "keep", "strip"     /* NGX_HTTP_TOOLSEARCH_BLOCKS_KEEP, _STRIP */
};

static ts_words_t  ngx_http_toolsearch_search_blocks =
    TS_WORDS(ngx_http_toolsearch_blocks_words);


/* the evaluation's baseline, BM25 alone, is the command line's only */
static ts_words_t  ngx_http_toolsearch_scorings = {
    ts_scoring_names, TS_SCORING_BM25
};


static ngx_conf_num_bounds_t  ngx_http_toolsearch_max_searches_bounds = {
    ngx_conf_check_num_bounds, 1, NGX_HTTP_TOOLSEARCH_MAX_SEARCHES
};


static ngx_conf_num_bounds_t  ngx_http_toolsearch_max_results_bounds = {
    ngx_conf_check_num_bounds, 1, TS_SEARCH_SELECT_MAX
};


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
      NGX_HTTP_TOOLSEARCH_POLICY(always_load),
      NULL },

    { ngx_string("toolsearch_defer_tools"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_ANY,
      ngx_http_toolsearch_list,
      NGX_HTTP_LOC_CONF_OFFSET,
      NGX_HTTP_TOOLSEARCH_POLICY(defer_tools),
      NULL },

    { ngx_string("toolsearch_client_search_tools"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_ANY,
      ngx_http_toolsearch_list,
      NGX_HTTP_LOC_CONF_OFFSET,
      NGX_HTTP_TOOLSEARCH_POLICY(client_search_tools),
      NULL },

    { ngx_string("toolsearch_unsupported_models"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_ANY,
      ngx_http_toolsearch_list,
      NGX_HTTP_LOC_CONF_OFFSET,
      NGX_HTTP_TOOLSEARCH_POLICY(unsupported_models),
      NULL },

    { ngx_string("toolsearch_first_party_hosts"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_ANY,
      ngx_http_toolsearch_list,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, first_party_hosts),
      NULL },

    { ngx_string("toolsearch_openai_hosts"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_ANY,
      ngx_http_toolsearch_list,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, openai_hosts),
      NULL },

    { ngx_string("toolsearch_context_window"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE2,
      ngx_http_toolsearch_window,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("toolsearch_upstream"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_toolsearch_conf_words,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, upstream),
      (void *) &ts_upstream_words },

    { ngx_string("toolsearch_upstream_tool_reference"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_FLAG,
      ngx_http_toolsearch_conf_flag,
      NGX_HTTP_LOC_CONF_OFFSET,
      NGX_HTTP_TOOLSEARCH_POLICY(upstream_tool_reference),
      NULL },

    { ngx_string("toolsearch_disable_betas"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_FLAG,
      ngx_http_toolsearch_conf_flag,
      NGX_HTTP_LOC_CONF_OFFSET,
      NGX_HTTP_TOOLSEARCH_POLICY(disable_betas),
      NULL },

    { ngx_string("toolsearch_turn_boundary"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_FLAG,
      ngx_http_toolsearch_conf_flag,
      NGX_HTTP_LOC_CONF_OFFSET,
      NGX_HTTP_TOOLSEARCH_POLICY(turn_boundary),
      NULL },

    { ngx_string("toolsearch_client_profiles"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_FLAG,
      ngx_http_toolsearch_conf_flag,
      NGX_HTTP_LOC_CONF_OFFSET,
      NGX_HTTP_TOOLSEARCH_POLICY(client_profiles),
      NULL },

    { ngx_string("toolsearch_hosted_search"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_toolsearch_conf_words,
      NGX_HTTP_LOC_CONF_OFFSET,
      NGX_HTTP_TOOLSEARCH_POLICY(hosted_search),
      (void *) &ts_hosted_words },

    { ngx_string("toolsearch_search"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_toolsearch_conf_words,
      NGX_HTTP_LOC_CONF_OFFSET,
      NGX_HTTP_TOOLSEARCH_POLICY(search),
      (void *) &ts_search_mode_words },

    { ngx_string("toolsearch_search_blocks"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_toolsearch_conf_words,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_toolsearch_loc_conf_t, search_blocks),
      &ngx_http_toolsearch_search_blocks },

    { ngx_string("toolsearch_found_tools"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_toolsearch_conf_words,
      NGX_HTTP_LOC_CONF_OFFSET,
      NGX_HTTP_TOOLSEARCH_POLICY(found_tools),
      (void *) &ts_found_tools_words },

    { ngx_string("toolsearch_cache_last_message"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_FLAG,
      ngx_http_toolsearch_conf_flag,
      NGX_HTTP_LOC_CONF_OFFSET,
      NGX_HTTP_TOOLSEARCH_POLICY(cache_last_message),
      NULL },

    { ngx_string("toolsearch_conversations"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_FLAG,
      ngx_http_toolsearch_conf_flag,
      NGX_HTTP_LOC_CONF_OFFSET,
      NGX_HTTP_TOOLSEARCH_POLICY(conversations),
      NULL },

    { ngx_string("toolsearch_tool_name"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_toolsearch_tool_name,
      NGX_HTTP_LOC_CONF_OFFSET,
      NGX_HTTP_TOOLSEARCH_POLICY(search_tool),
      NULL },

    { ngx_string("toolsearch_max_searches"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_toolsearch_conf_num,
      NGX_HTTP_LOC_CONF_OFFSET,
      NGX_HTTP_TOOLSEARCH_POLICY(max_searches),
      &ngx_http_toolsearch_max_searches_bounds },

    { ngx_string("toolsearch_max_results"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_toolsearch_conf_num,
      NGX_HTTP_LOC_CONF_OFFSET,
      NGX_HTTP_TOOLSEARCH_POLICY(max_results),
      &ngx_http_toolsearch_max_results_bounds },

    { ngx_string("toolsearch_search_scoring"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_toolsearch_conf_words,
      NGX_HTTP_LOC_CONF_OFFSET,
      NGX_HTTP_TOOLSEARCH_POLICY(scoring),
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


/*
 * A row whose setter writes an int into the policy: the booleans, words
 * and numbers of the engine, unset and merged by their offsets.
 */
static ngx_uint_t
ngx_http_toolsearch_is_setting(ngx_command_t *cmd)
{
    size_t  start;

    start = offsetof(ngx_http_toolsearch_loc_conf_t, policy);

    return cmd->offset >= start
           && cmd->offset < start + sizeof(ts_policy_t)
           && (cmd->set == ngx_http_toolsearch_conf_flag
               || cmd->set == ngx_http_toolsearch_conf_words
               || cmd->set == ngx_http_toolsearch_conf_num);
}


static void
ngx_http_toolsearch_settings_unset(ngx_http_toolsearch_loc_conf_t *conf)
{
    ngx_command_t  *cmd;

    for (cmd = ngx_http_toolsearch_commands; cmd->name.len; cmd++) {
        if (ngx_http_toolsearch_is_setting(cmd)) {
            *(int *) ((char *) conf + cmd->offset) = NGX_CONF_UNSET;
        }
    }
}


/* an unset setting takes the parent's, or at the top ts_policy_init()'s */
static void
ngx_http_toolsearch_settings_merge(ngx_http_toolsearch_loc_conf_t *prev,
    ngx_http_toolsearch_loc_conf_t *conf, const ts_policy_t *def)
{
    int            *v, *up;
    size_t          field;
    ngx_command_t  *cmd;

    for (cmd = ngx_http_toolsearch_commands; cmd->name.len; cmd++) {
        if (!ngx_http_toolsearch_is_setting(cmd)) {
            continue;
        }

        field = cmd->offset - offsetof(ngx_http_toolsearch_loc_conf_t, policy);
        v = (int *) ((char *) conf + cmd->offset);
        up = (int *) ((char *) prev + cmd->offset);

        ngx_conf_merge_value(*v, *up, *(int *) ((char *) def + field));
    }
}


static void *
ngx_http_toolsearch_create_loc_conf(ngx_conf_t *cf)
{
    ngx_http_toolsearch_loc_conf_t  *conf;

    conf = ngx_pcalloc(cf->pool, sizeof(ngx_http_toolsearch_loc_conf_t));
    if (conf == NULL) {
        return NULL;
    }

    /* set by ngx_pcalloc(): the lists, windows and hints (NULL) */

    conf->enable = NGX_CONF_UNSET;
    conf->max_body_size = NGX_CONF_UNSET_SIZE;
    conf->recall_tools = NGX_CONF_UNSET_SIZE;
    conf->client_mode = NGX_CONF_UNSET;
    conf->recall = NGX_CONF_UNSET;
    conf->upstream = NGX_CONF_UNSET;
    conf->search_blocks = NGX_CONF_UNSET;
    conf->policy.defer_mode = NGX_CONF_UNSET;
    conf->policy.search_tool = NGX_CONF_UNSET_PTR;

    ngx_http_toolsearch_settings_unset(conf);

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
    ngx_uint_t               i;
    ngx_str_t               *value;
    ts_match_list_t         *l;
    const ts_match_list_t  **lp;

    lp = (const ts_match_list_t **) ((char *) conf + cmd->offset);

    if (*lp != NULL) {
        return "is duplicate";
    }

    l = ngx_http_toolsearch_list_create(cf);
    if (l == NULL) {
        return NGX_CONF_ERROR;
    }

    *lp = l;

    value = cf->args->elts;

    /* NGX_CONF_ANY: nginx's own message would not say what is missing */
    if (cf->args->nelts < 2) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "no value in \"%V\" directive, it takes one or "
                           "more names or ~regexes", &value[0]);
        return NGX_CONF_ERROR;
    }

    for (i = 1; i < cf->args->nelts; i++) {
        if (ngx_http_toolsearch_list_add(cf, l, &value[i])
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

    if (tlcf->policy.defer_mode != NGX_CONF_UNSET) {
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

    tlcf->policy.defer_mode = mode;
    tlcf->policy.defer_percent = percent;

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

    if (tlcf->policy.search_tool != NGX_CONF_UNSET_PTR) {
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
    tlcf->policy.search_tool = (char *) value[1].data;

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
ngx_http_toolsearch_merge_list(ngx_conf_t *cf,
    const ts_match_list_t **conf, const ts_match_list_t *prev,
    const char *const *defaults)
{
    char              err[NGX_MAX_CONF_ERRSTR];
    ts_match_list_t  *l;

    if (*conf != NULL) {
        return NGX_CONF_OK;
    }

    if (prev != NULL || defaults == NULL) {
        *conf = prev;
        return NGX_CONF_OK;
    }

    l = ngx_http_toolsearch_list_create(cf);
    if (l == NULL) {
        return NGX_CONF_ERROR;
    }

    *conf = l;

    if (ts_match_add_all(l, defaults, err, sizeof(err)) != 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%s", err);
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


static char *
ngx_http_toolsearch_merge_lists(ngx_conf_t *cf,
    ngx_http_toolsearch_loc_conf_t *prev, ngx_http_toolsearch_loc_conf_t *conf)
{
    ts_policy_t  *p, *up;

    p = &conf->policy;
    up = &prev->policy;

    if (ngx_http_toolsearch_merge_list(cf, &p->always_load, up->always_load,
                                       NULL)
        != NGX_CONF_OK
        || ngx_http_toolsearch_merge_list(cf, &p->defer_tools,
                                          up->defer_tools, NULL)
           != NGX_CONF_OK
        || ngx_http_toolsearch_merge_list(cf, &p->client_search_tools,
                                          up->client_search_tools,
                                          ts_default_client_search_tools)
           != NGX_CONF_OK
        || ngx_http_toolsearch_merge_list(cf, &p->unsupported_models,
                                          up->unsupported_models,
                                          ts_default_unsupported_models)
           != NGX_CONF_OK
        || ngx_http_toolsearch_merge_list(cf, &conf->first_party_hosts,
                                          prev->first_party_hosts,
                                          ts_default_first_party_hosts)
           != NGX_CONF_OK
        || ngx_http_toolsearch_merge_list(cf, &conf->openai_hosts,
                                          prev->openai_hosts,
                                          ts_default_openai_hosts)
           != NGX_CONF_OK)
    {
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


/* the windows and hints: patterns and their values, taken as pairs */
static void
ngx_http_toolsearch_merge_pairs(ngx_http_toolsearch_loc_conf_t *prev,
    ngx_http_toolsearch_loc_conf_t *conf)
{
    if (conf->windows == NULL) {
        conf->windows = prev->windows;
        conf->window_tokens = prev->window_tokens;
    }

    if (conf->hint_names == NULL) {
        conf->hint_names = prev->hint_names;
        conf->hint_phrases = prev->hint_phrases;
    }

    conf->policy.windows = conf->windows;
    conf->policy.window_tokens = conf->window_tokens
                                 ? conf->window_tokens->elts : NULL;
    conf->policy.hint_names = conf->hint_names;
    conf->policy.hint_phrases = conf->hint_phrases
                                ? conf->hint_phrases->elts : NULL;
}


/* toolsearch_defer sets a mode and its percent together */
static void
ngx_http_toolsearch_merge_defer(ngx_http_toolsearch_loc_conf_t *prev,
    ngx_http_toolsearch_loc_conf_t *conf, const ts_policy_t *def)
{
    const ts_policy_t  *from;

    if (conf->policy.defer_mode != NGX_CONF_UNSET) {
        return;
    }

    from = prev->policy.defer_mode != NGX_CONF_UNSET ? &prev->policy : def;

    conf->policy.defer_mode = from->defer_mode;
    conf->policy.defer_percent = from->defer_percent;
}


static char *
ngx_http_toolsearch_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
    ngx_http_toolsearch_loc_conf_t *prev = parent;
    ngx_http_toolsearch_loc_conf_t *conf = child;

    ts_policy_t  def;

    ts_policy_init(&def);

    ngx_conf_merge_value(conf->enable, prev->enable, 0);
    ngx_conf_merge_size_value(conf->max_body_size, prev->max_body_size,
                              16 * 1024 * 1024);
    ngx_conf_merge_value(conf->client_mode, prev->client_mode, 0);
    ngx_conf_merge_value(conf->recall, prev->recall, 1);
    ngx_conf_merge_size_value(conf->recall_tools, prev->recall_tools,
                              TS_RECALL_SIZE);
    ngx_conf_merge_value(conf->upstream, prev->upstream, TS_UPSTREAM_AUTO);
    ngx_conf_merge_value(conf->search_blocks, prev->search_blocks,
                         NGX_HTTP_TOOLSEARCH_BLOCKS_CLIENT);

    ngx_http_toolsearch_settings_merge(prev, conf, &def);
    ngx_http_toolsearch_merge_defer(prev, conf, &def);
    ngx_conf_merge_ptr_value(conf->policy.search_tool,
                             prev->policy.search_tool, def.search_tool);
    ngx_http_toolsearch_merge_pairs(prev, conf);

    return ngx_http_toolsearch_merge_lists(cf, prev, conf);
}


static ngx_int_t
ngx_http_toolsearch_init(ngx_conf_t *cf)
{
    if (ngx_http_toolsearch_handler_init(cf) != NGX_OK
        || ngx_http_toolsearch_loop_init(cf) != NGX_OK
        || ngx_http_toolsearch_answer_init(cf) != NGX_OK)
    {
        return NGX_ERROR;
    }

    return NGX_OK;
}


static void
ngx_http_toolsearch_exit_process(ngx_cycle_t *cycle)
{
    ngx_http_toolsearch_handler_exit();
    ngx_http_toolsearch_blocks_free();
}
