
/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The $toolsearch_* variables.
 */


#ifndef _NGX_HTTP_TOOLSEARCH_VARIABLES_H_INCLUDED_
#define _NGX_HTTP_TOOLSEARCH_VARIABLES_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>


/* adds the variables (preconfiguration) */
ngx_int_t ngx_http_toolsearch_add_variables(ngx_conf_t *cf);


#endif /* _NGX_HTTP_TOOLSEARCH_VARIABLES_H_INCLUDED_ */
