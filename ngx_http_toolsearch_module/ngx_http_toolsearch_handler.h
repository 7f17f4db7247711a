
/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The precontent phase handler, which hands request bodies to the engine.
 */


#ifndef _NGX_HTTP_TOOLSEARCH_HANDLER_H_INCLUDED_
#define _NGX_HTTP_TOOLSEARCH_HANDLER_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>


/* adds the phase handler */
ngx_int_t ngx_http_toolsearch_handler_init(ngx_conf_t *cf);

/* frees the worker's memory of earlier requests (at exit) */
void ngx_http_toolsearch_handler_exit(void);


#endif /* _NGX_HTTP_TOOLSEARCH_HANDLER_H_INCLUDED_ */
