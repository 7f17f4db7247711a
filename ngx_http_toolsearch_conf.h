
/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Directive setters whose errors tell the operator what is allowed.
 */


#ifndef _NGX_HTTP_TOOLSEARCH_CONF_H_INCLUDED_
#define _NGX_HTTP_TOOLSEARCH_CONF_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


/* ngx_conf_set_enum_slot that lists the allowed values on error */
char *ngx_http_toolsearch_conf_enum(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);

/* ngx_conf_set_size_slot for a size that must be positive */
char *ngx_http_toolsearch_conf_size(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);


#endif /* _NGX_HTTP_TOOLSEARCH_CONF_H_INCLUDED_ */
