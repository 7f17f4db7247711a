
/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Directive setters with precise messages: "nginx -t" is where an
 * operator learns what a directive takes.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_toolsearch_module.h"
#include "ngx_http_toolsearch_conf.h"


void
ngx_http_toolsearch_conf_invalid(ngx_conf_t *cf, ngx_str_t *value,
    const char *fmt, ...)
{
    u_char     *p, *last;
    va_list     args;
    ngx_str_t  *args_v;
    u_char      errstr[NGX_MAX_CONF_ERRSTR];

    args_v = cf->args->elts;
    last = errstr + NGX_MAX_CONF_ERRSTR;
    p = ngx_slprintf(errstr, last, "invalid value \"%V\" in \"%V\" "
                     "directive, ", value, &args_v[0]);

    va_start(args, fmt);
    p = ngx_vslprintf(p, last, fmt, args);
    va_end(args);

    ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%*s", p - errstr, errstr);
}


char *
ngx_http_toolsearch_conf_enum(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    u_char           *p, *last;
    ngx_uint_t        i, *np;
    ngx_str_t        *value;
    ngx_conf_enum_t  *e;
    u_char            allowed[NGX_MAX_CONF_ERRSTR];

    np = (ngx_uint_t *) ((char *) conf + cmd->offset);

    if (*np != NGX_CONF_UNSET_UINT) {
        return "is duplicate";
    }

    value = cf->args->elts;
    e = cmd->post;

    for (i = 0; e[i].name.len != 0; i++) {
        if (e[i].name.len == value[1].len
            && ngx_strcmp(e[i].name.data, value[1].data) == 0)
        {
            *np = e[i].value;
            return NGX_CONF_OK;
        }
    }

    p = allowed;
    last = allowed + NGX_MAX_CONF_ERRSTR;

    for (i = 0; e[i].name.len != 0; i++) {
        p = ngx_slprintf(p, last, "%s\"%V\"",
                         i == 0 ? "" : (e[i + 1].name.len ? ", " : " or "),
                         &e[i].name);
    }

    ngx_http_toolsearch_conf_invalid(cf, &value[1], "it must be %*s",
                                     p - allowed, allowed);

    return NGX_CONF_ERROR;
}


char *
ngx_http_toolsearch_conf_size(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    size_t     *sp;
    ssize_t     size;
    ngx_str_t  *value;

    sp = (size_t *) ((char *) conf + cmd->offset);

    if (*sp != NGX_CONF_UNSET_SIZE) {
        return "is duplicate";
    }

    value = cf->args->elts;
    size = ngx_parse_size(&value[1]);

    if (size == NGX_ERROR || size == 0) {
        ngx_http_toolsearch_conf_invalid(cf, &value[1],
                                         "it must be a positive number of "
                                         "bytes with an optional \"k\" or "
                                         "\"m\" suffix");
        return NGX_CONF_ERROR;
    }

    *sp = (size_t) size;

    return NGX_CONF_OK;
}


char *
ngx_http_toolsearch_conf_num(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_int_t              *np, n;
    ngx_str_t              *value;
    ngx_conf_num_bounds_t  *bounds;

    np = (ngx_int_t *) ((char *) conf + cmd->offset);

    if (*np != NGX_CONF_UNSET) {
        return "is duplicate";
    }

    value = cf->args->elts;
    bounds = cmd->post;
    n = ngx_atoi(value[1].data, value[1].len);

    if (n == NGX_ERROR || n < bounds->low || n > bounds->high) {
        ngx_http_toolsearch_conf_invalid(cf, &value[1],
                                         "it must be a number from %i to %i",
                                         bounds->low, bounds->high);
        return NGX_CONF_ERROR;
    }

    *np = n;

    return NGX_CONF_OK;
}


static void
ngx_http_toolsearch_list_cleanup(void *data)
{
    ts_match_free(data);
}


ts_match_list_t *
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
char *
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


char *
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
char *
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
char *
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
char *
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
