
/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Status and metrics: the counters of the toolsearch_zone shared memory,
 * one set per API format, the toolsearch_status handler, and the
 * per-request info log line.
 */


#ifndef _NGX_HTTP_TOOLSEARCH_STATUS_H_INCLUDED_
#define _NGX_HTTP_TOOLSEARCH_STATUS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "rewrite/ts_counters.h"
#include "rewrite/ts_request.h"


/*
 * A set of counters of the zone (one per API format): one slot per
 * ts_counter_t (those the zone adds), then requests by decision and
 * requests forwarded unchanged, one slot per ts_decision_t each.
 */
typedef enum {
    NGX_HTTP_TOOLSEARCH_STAT_DECISION = TS_COUNTER_N,
    NGX_HTTP_TOOLSEARCH_STAT_UNCHANGED =
        NGX_HTTP_TOOLSEARCH_STAT_DECISION + TS_DECISION_N,
    NGX_HTTP_TOOLSEARCH_STAT_N =
        NGX_HTTP_TOOLSEARCH_STAT_UNCHANGED + TS_DECISION_N
} ngx_http_toolsearch_stat_e;


/*
 * Counts a decided request in its API format's counters (format: a
 * ts_format_t; its counters of ts_counters.h but the LOOP ones,
 * internal_errors set here from the decision; changed: body or headers
 * were rewritten) and writes its info log line.
 */
void ngx_http_toolsearch_stat_request(ngx_http_request_t *r,
    ngx_uint_t format, ts_decision_t decision, ngx_uint_t changed,
    size_t *count);

/* counts the LOOP counters of a gateway loop that has ended */
void ngx_http_toolsearch_stat_loop(ngx_http_request_t *r, ngx_uint_t format,
    size_t *count);

/* whether the zone adds the counter of a request with this decision */
ngx_uint_t ngx_http_toolsearch_counted(ts_decision_t decision,
    ts_counter_t counter);

void *ngx_http_toolsearch_create_main_conf(ngx_conf_t *cf);
char *ngx_http_toolsearch_init_main_conf(ngx_conf_t *cf, void *conf);
char *ngx_http_toolsearch_zone(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
char *ngx_http_toolsearch_status(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);


#endif /* _NGX_HTTP_TOOLSEARCH_STATUS_H_INCLUDED_ */
