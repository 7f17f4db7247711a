
/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Directive setters with precise messages: "nginx -t" is where an
 * operator learns what a directive takes.
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_toolsearch_conf.h"
#include "rewrite/ts_policy.h"


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
ngx_http_toolsearch_conf_flag(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    int        *fp;
    ngx_str_t  *value;

    fp = (int *) ((char *) conf + cmd->offset);

    if (*fp != NGX_CONF_UNSET) {
        return "is duplicate";
    }

    value = cf->args->elts;

    if (ngx_strcasecmp(value[1].data, (u_char *) "on") == 0) {
        *fp = 1;

    } else if (ngx_strcasecmp(value[1].data, (u_char *) "off") == 0) {
        *fp = 0;

    } else {
        ngx_http_toolsearch_conf_invalid(cf, &value[1],
                                         "it must be \"on\" or \"off\"");
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


char *
ngx_http_toolsearch_conf_words(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    int                v, *np;
    u_char            *p, *last;
    ngx_uint_t         i;
    ngx_str_t         *value;
    const ts_words_t  *w;
    u_char             allowed[NGX_MAX_CONF_ERRSTR];

    np = (int *) ((char *) conf + cmd->offset);

    if (*np != NGX_CONF_UNSET) {
        return "is duplicate";
    }

    value = cf->args->elts;
    w = cmd->post;

    v = ts_words_parse(w, (char *) value[1].data, value[1].len);
    if (v >= 0) {
        *np = v;
        return NGX_CONF_OK;
    }

    p = allowed;
    last = allowed + NGX_MAX_CONF_ERRSTR;

    for (i = 0; i < w->n; i++) {
        p = ngx_slprintf(p, last, "%s\"%s\"",
                         i == 0 ? "" : (i + 1 < w->n ? ", " : " or "),
                         w->word[i]);
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
    int                    *np;
    ngx_int_t               n;
    ngx_str_t              *value;
    ngx_conf_num_bounds_t  *bounds;

    np = (int *) ((char *) conf + cmd->offset);

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

    *np = (int) n;

    return NGX_CONF_OK;
}
