
/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Status and metrics: the counters of the toolsearch_zone shared memory,
 * the toolsearch_status handler, and the per-request info log line.
 */


#ifndef _NGX_HTTP_TOOLSEARCH_STATUS_H_INCLUDED_
#define _NGX_HTTP_TOOLSEARCH_STATUS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "rewrite/ts_request.h"


/*
 * The counters of the zone.  Requests by decision and requests forwarded
 * unchanged follow, one slot per ts_decision_t each.
 */
typedef enum {
    NGX_HTTP_TOOLSEARCH_STAT_TOOLS_SEEN = 0,
    NGX_HTTP_TOOLSEARCH_STAT_TOOLS_RECALLED,
    NGX_HTTP_TOOLSEARCH_STAT_MESSAGES_RECALLED,
    NGX_HTTP_TOOLSEARCH_STAT_TOOLS_DEFERRED,
    NGX_HTTP_TOOLSEARCH_STAT_BYTES_REMOVED,
    NGX_HTTP_TOOLSEARCH_STAT_HOSTED_SEARCHES,

    /* counted when gateway-executed search runs */
    NGX_HTTP_TOOLSEARCH_STAT_GATEWAY_SEARCHES,
    NGX_HTTP_TOOLSEARCH_STAT_SEARCH_MISSES,
    NGX_HTTP_TOOLSEARCH_STAT_LOOP_ITERATIONS,
    NGX_HTTP_TOOLSEARCH_STAT_PAUSE_TURNS,

    NGX_HTTP_TOOLSEARCH_STAT_REFS_STALE,
    NGX_HTTP_TOOLSEARCH_STAT_REFS_CONVERTED,
    NGX_HTTP_TOOLSEARCH_STAT_SIBLINGS_MOVED,
    NGX_HTTP_TOOLSEARCH_STAT_BOUNDARIES_ADDED,
    NGX_HTTP_TOOLSEARCH_STAT_INTERNAL_ERRORS,

    NGX_HTTP_TOOLSEARCH_STAT_DECISION,
    NGX_HTTP_TOOLSEARCH_STAT_UNCHANGED =
        NGX_HTTP_TOOLSEARCH_STAT_DECISION + TS_DECISION_N,
    NGX_HTTP_TOOLSEARCH_STAT_N =
        NGX_HTTP_TOOLSEARCH_STAT_UNCHANGED + TS_DECISION_N
} ngx_http_toolsearch_stat_e;


/* what one request did, as counted and logged */
typedef struct {
    ts_decision_t   decision;
    ngx_uint_t      changed;        /* body or headers were rewritten */
    size_t          bytes_in;
    size_t          bytes_out;
    size_t          tools_total;
    size_t          tools_recalled;
    size_t          messages_recalled;
    size_t          tools_deferred;
    size_t          defer_chars;
    size_t          hosted_searches;
    size_t          refs_converted;
    size_t          refs_stale;
    size_t          siblings_moved;
    size_t          boundaries_added;
    size_t          discovered;
} ngx_http_toolsearch_report_t;


/* adds n to a counter; a no-op without toolsearch_zone */
void ngx_http_toolsearch_stat_add(ngx_http_request_t *r,
    ngx_uint_t counter, ngx_atomic_int_t n);

/* whether a decision defers tools: its tools and bytes count as removed */
ngx_uint_t ngx_http_toolsearch_deferred(ts_decision_t decision);

/* counts a decided request and writes its info log line */
void ngx_http_toolsearch_stat_request(ngx_http_request_t *r,
    ngx_http_toolsearch_report_t *rep);

/* hosted searches the previous response ran: those of the last turn */
size_t ngx_http_toolsearch_hosted_searches(const ts_index_t *ix);

void *ngx_http_toolsearch_create_main_conf(ngx_conf_t *cf);
char *ngx_http_toolsearch_init_main_conf(ngx_conf_t *cf, void *conf);
char *ngx_http_toolsearch_zone(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
char *ngx_http_toolsearch_status(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);


#endif /* _NGX_HTTP_TOOLSEARCH_STATUS_H_INCLUDED_ */
