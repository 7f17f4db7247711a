
/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Directive setters whose errors tell the operator what is allowed.
 */


#ifndef _NGX_HTTP_TOOLSEARCH_CONF_H_INCLUDED_
#define _NGX_HTTP_TOOLSEARCH_CONF_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


/*
 * Logs "invalid value "V" in "D" directive, <reason>": every message of
 * nginx -t names the directive and the value it rejects.
 */
void ngx_http_toolsearch_conf_invalid(ngx_conf_t *cf, ngx_str_t *value,
    const char *fmt, ...);

/* ngx_conf_set_flag_slot for an int, the engine's booleans */
char *ngx_http_toolsearch_conf_flag(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);

/*
 * ngx_conf_set_enum_slot for an int over the words of the ts_words_t of
 * cmd->post (the engine's, which its command line accepts too): the value
 * is the word's place; an error lists the words
 */
char *ngx_http_toolsearch_conf_words(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);

/* ngx_conf_set_size_slot for a size that must be positive */
char *ngx_http_toolsearch_conf_size(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);

/* ngx_conf_set_num_slot for an int within the ngx_conf_num_bounds_t of
 * cmd->post */
char *ngx_http_toolsearch_conf_num(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);


#endif /* _NGX_HTTP_TOOLSEARCH_CONF_H_INCLUDED_ */
