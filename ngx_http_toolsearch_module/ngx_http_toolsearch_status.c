
/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Status and metrics.  The counters live in one shared memory zone
 * (toolsearch_zone), one set per API format, that every worker adds to
 * atomically and that a reload hands over to the new configuration;
 * toolsearch_status prints them as JSON (the sums over the formats, then
 * each format's) or in the Prometheus text exposition format (every
 * series labelled with its format).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_toolsearch_conf.h"
#include "rewrite/ts_format.h"
#include "rewrite/ts_policy.h"
#include "ngx_http_toolsearch_status.h"


#define NGX_HTTP_TOOLSEARCH_PROMETHEUS_TYPE                                   \
    "text/plain; version=0.0.4; charset=utf-8"

/*
 * The longest line of the output but for its help text and label value:
 * the fixed text, a metric name or label name (both under 32 bytes) and
 * a value.
 */
#define NGX_HTTP_TOOLSEARCH_LINE_LEN  (128 + NGX_ATOMIC_T_LEN)

/* the counters of the info log line: " key=value", keys under 32 bytes */
#define NGX_HTTP_TOOLSEARCH_LOG_LEN                                       \
    (TS_COUNTER_N * (34 + NGX_SIZE_T_LEN))


typedef struct {
    ngx_shm_zone_t     *zone;
    ngx_uint_t          status;     /* some location has toolsearch_status */
} ngx_http_toolsearch_main_conf_t;


typedef struct {
    ngx_atomic_t        counter[TS_FORMAT_N][NGX_HTTP_TOOLSEARCH_STAT_N];
} ngx_http_toolsearch_shctx_t;


typedef struct ngx_http_toolsearch_format_s  ngx_http_toolsearch_format_t;


/* the values of one set of counters, read at once for the status page */
typedef ngx_atomic_uint_t  ngx_http_toolsearch_values_t[
                               NGX_HTTP_TOOLSEARCH_STAT_N];


/* when the zone adds a counter (the "when" of ts_counters.h) */
typedef enum {
    NGX_HTTP_TOOLSEARCH_ADD_NONE = 0,
    NGX_HTTP_TOOLSEARCH_ADD_ANALYSED,
    NGX_HTTP_TOOLSEARCH_ADD_DEFERRED,
    NGX_HTTP_TOOLSEARCH_ADD_LOOP
} ngx_http_toolsearch_add_e;


/*
 * A counter that is not per decision, as JSON and Prometheus name it
 * (no name: the zone keeps no sum of it), and its field of the info log
 * line (no key: not logged).
 */
typedef struct {
    ngx_str_t           name;
    ngx_uint_t          counter;
    ngx_uint_t          when;       /* ngx_http_toolsearch_add_e */
    ngx_str_t           log;
    const char         *help;
} ngx_http_toolsearch_metric_t;


/* the estimated tokens of a metric's bytes */
typedef struct {
    ngx_str_t           name;
    ngx_uint_t          counter;
    const char         *help;
} ngx_http_toolsearch_tokens_t;


typedef struct {
    ngx_str_t           name;
    ngx_uint_t          counter;    /* the first of TS_DECISION_N */
    const char         *label;
    const char         *help;
} ngx_http_toolsearch_family_t;


/*
 * An output format.  A value's format is the API format's word of the
 * series (Prometheus labels each with it) or NULL (JSON, whose sets are
 * objects of their own).
 */
struct ngx_http_toolsearch_format_s {
    u_char            *(*begin)(u_char *p, ngx_str_t *zone);
    u_char            *(*family)(u_char *p, ngx_str_t *name,
                                 const char *help, const char *label);
    u_char            *(*value)(u_char *p, ngx_str_t *name, const char *label,
                                const char *key, ngx_atomic_uint_t n,
                                ngx_uint_t first, const char *format);
    u_char            *(*sets)(u_char *p, ngx_http_toolsearch_format_t *f,
                               ngx_http_toolsearch_values_t *v);
    ngx_str_t           family_end;
    ngx_str_t           end;
    ngx_str_t           type;
};


static void ngx_http_toolsearch_stat_add(ngx_atomic_t *c, size_t *count,
    ngx_uint_t when, ts_decision_t decision);
static void ngx_http_toolsearch_log_request(ngx_http_request_t *r,
    ts_decision_t decision, ngx_uint_t changed, size_t *count);
static ngx_int_t ngx_http_toolsearch_zone_name(ngx_str_t *name);
static ngx_int_t ngx_http_toolsearch_init_zone(ngx_shm_zone_t *shm_zone,
    void *data);
static ngx_int_t ngx_http_toolsearch_status_handler(ngx_http_request_t *r);
static ngx_uint_t ngx_http_toolsearch_wants_prometheus(ngx_http_request_t *r);
static size_t ngx_http_toolsearch_status_size(ngx_str_t *zone);
static u_char *ngx_http_toolsearch_json_sets(u_char *p,
    ngx_http_toolsearch_format_t *f, ngx_http_toolsearch_values_t *v);
static u_char *ngx_http_toolsearch_prom_sets(u_char *p,
    ngx_http_toolsearch_format_t *f, ngx_http_toolsearch_values_t *v);
static u_char *ngx_http_toolsearch_status_family(u_char *p,
    ngx_http_toolsearch_format_t *f, ngx_http_toolsearch_family_t *fm,
    ngx_http_toolsearch_values_t *v, ngx_uint_t first, ngx_uint_t last);
static u_char *ngx_http_toolsearch_status_metric(u_char *p,
    ngx_http_toolsearch_format_t *f, ngx_str_t *name, const char *help,
    ngx_http_toolsearch_values_t *v, ngx_uint_t counter, ngx_uint_t tokens,
    ngx_uint_t first, ngx_uint_t last);
static u_char *ngx_http_toolsearch_status_metrics(u_char *p,
    ngx_http_toolsearch_format_t *f, ngx_http_toolsearch_values_t *v,
    ngx_uint_t first, ngx_uint_t last);


extern ngx_module_t  ngx_http_toolsearch_module;


#define NGX_HTTP_TOOLSEARCH_METRIC(name, var, metric, when, log, from,    \
                                   help)                                  \
    { ngx_string(metric), TS_COUNTER_##name, NGX_HTTP_TOOLSEARCH_ADD_##when, \
      ngx_string(log), help },

static ngx_http_toolsearch_metric_t  ngx_http_toolsearch_metrics[] = {

    TS_COUNTERS(NGX_HTTP_TOOLSEARCH_METRIC)
};


#define NGX_HTTP_TOOLSEARCH_TOKENS(name, counter, help)                   \
    { ngx_string(#name), TS_COUNTER_##counter, help },

static ngx_http_toolsearch_tokens_t  ngx_http_toolsearch_tokens[] = {
    TS_COUNTERS_TOKENS(NGX_HTTP_TOOLSEARCH_TOKENS)
    { ngx_null_string, 0, NULL }
};


/* the counters per decision: label is the label of the decision word */
static ngx_http_toolsearch_family_t  ngx_http_toolsearch_families[] = {

    { ngx_string("requests"), NGX_HTTP_TOOLSEARCH_STAT_DECISION, "decision",
      "Requests the module decided on, by decision." },

    { ngx_string("passthroughs"), NGX_HTTP_TOOLSEARCH_STAT_UNCHANGED, "reason",
      "Requests forwarded exactly as received, by decision." },

    { ngx_null_string, 0, NULL, NULL }
};


static u_char *
ngx_http_toolsearch_json_begin(u_char *p, ngx_str_t *zone)
{
    /* ngx_http_toolsearch_zone_name() let no byte through to escape */
    return ngx_sprintf(p, "{\"zone\":\"%V\"", zone);
}


static u_char *
ngx_http_toolsearch_json_family(u_char *p, ngx_str_t *name,
    const char *help, const char *label)
{
    p = ngx_sprintf(p, ",\n\"%V\":", name);

    return label ? ngx_cpymem(p, "{", 1) : p;
}


static u_char *
ngx_http_toolsearch_json_value(u_char *p, ngx_str_t *name, const char *label,
    const char *key, ngx_atomic_uint_t n, ngx_uint_t first,
    const char *format)
{
    if (key == NULL) {
        return ngx_sprintf(p, "%uA", n);
    }

    return ngx_sprintf(p, "%s\"%s\":%uA", first ? "" : ",", key, n);
}


static u_char *
ngx_http_toolsearch_prom_begin(u_char *p, ngx_str_t *zone)
{
    return p;
}


static u_char *
ngx_http_toolsearch_prom_family(u_char *p, ngx_str_t *name,
    const char *help, const char *label)
{
    return ngx_sprintf(p, "# HELP toolsearch_%V_total %s\n"
                          "# TYPE toolsearch_%V_total counter\n",
                       name, help, name);
}


static u_char *
ngx_http_toolsearch_prom_value(u_char *p, ngx_str_t *name, const char *label,
    const char *key, ngx_atomic_uint_t n, ngx_uint_t first,
    const char *format)
{
    if (label == NULL) {
        return ngx_sprintf(p, "toolsearch_%V_total{format=\"%s\"} %uA\n",
                           name, format, n);
    }

    return ngx_sprintf(p, "toolsearch_%V_total{format=\"%s\",%s=\"%s\"} "
                          "%uA\n", name, format, label, key, n);
}


static ngx_http_toolsearch_format_t  ngx_http_toolsearch_json = {
    ngx_http_toolsearch_json_begin,
    ngx_http_toolsearch_json_family,
    ngx_http_toolsearch_json_value,
    ngx_http_toolsearch_json_sets,
    ngx_string("}"),
    ngx_string("\n}\n"),
    ngx_string("application/json")
};


static ngx_http_toolsearch_format_t  ngx_http_toolsearch_prometheus = {
    ngx_http_toolsearch_prom_begin,
    ngx_http_toolsearch_prom_family,
    ngx_http_toolsearch_prom_value,
    ngx_http_toolsearch_prom_sets,
    /* nothing closes a family or the text; "", not NULL, for memcpy() */
    ngx_string(""),
    ngx_string(""),
    ngx_string(NGX_HTTP_TOOLSEARCH_PROMETHEUS_TYPE)
};


static ngx_http_toolsearch_shctx_t *
ngx_http_toolsearch_shctx(ngx_http_request_t *r, ngx_str_t **name)
{
    ngx_http_toolsearch_main_conf_t  *tmcf;

    tmcf = ngx_http_get_module_main_conf(r, ngx_http_toolsearch_module);

    if (tmcf->zone == NULL) {
        return NULL;
    }

    if (name) {
        *name = &tmcf->zone->shm.name;
    }

    return tmcf->zone->data;
}


/* the zone's counters of an API format (ts_format_t) */
static ngx_atomic_t *
ngx_http_toolsearch_counters(ngx_http_request_t *r, ngx_uint_t format)
{
    ngx_http_toolsearch_shctx_t  *sh;

    sh = ngx_http_toolsearch_shctx(r, NULL);

    if (sh == NULL) {
        return NULL;
    }

    return sh->counter[format < TS_FORMAT_N ? format : TS_FORMAT_MESSAGES];
}


/* tools count as deferred only when the body really defers them */
static ngx_uint_t
ngx_http_toolsearch_deferred(ts_decision_t decision)
{
    return decision == TS_DECISION_DEFERRED_HOSTED
           || decision == TS_DECISION_DEFERRED_GATEWAY;
}


/* whether the zone adds a counter at this point (when) of the request */
static ngx_uint_t
ngx_http_toolsearch_adds(ngx_uint_t counter, ngx_uint_t when,
    ts_decision_t decision)
{
    ngx_uint_t  w;

    w = ngx_http_toolsearch_metrics[counter].when;

    return w == when
           || (w == NGX_HTTP_TOOLSEARCH_ADD_DEFERRED
               && when == NGX_HTTP_TOOLSEARCH_ADD_ANALYSED
               && ngx_http_toolsearch_deferred(decision));
}


ngx_uint_t
ngx_http_toolsearch_counted(ts_decision_t decision, ts_counter_t counter)
{
    return ngx_http_toolsearch_adds(counter, NGX_HTTP_TOOLSEARCH_ADD_ANALYSED,
                                    decision);
}


/* adds the counters due at this point (when) to the zone's */
static void
ngx_http_toolsearch_stat_add(ngx_atomic_t *c, size_t *count,
    ngx_uint_t when, ts_decision_t decision)
{
    ngx_uint_t  i;

    for (i = 0; i < TS_COUNTER_N; i++) {
        if (count[i] != 0 && ngx_http_toolsearch_adds(i, when, decision)) {
            (void) ngx_atomic_fetch_add(&c[i], count[i]);
        }
    }
}


/*
 * The one place a decided request is counted and logged.  The log line
 * carries the decision and counts only: never text, tool input or keys.
 */
void
ngx_http_toolsearch_stat_request(ngx_http_request_t *r, ngx_uint_t format,
    ts_decision_t decision, ngx_uint_t changed, size_t *count)
{
    ngx_atomic_t  *c;

    count[TS_COUNTER_internal_errors] = (decision == TS_DECISION_ERROR);

    c = ngx_http_toolsearch_counters(r, format);

    if (c != NULL) {
        (void) ngx_atomic_fetch_add(&c[NGX_HTTP_TOOLSEARCH_STAT_DECISION
                                       + decision], 1);

        if (!changed) {
            (void) ngx_atomic_fetch_add(&c[NGX_HTTP_TOOLSEARCH_STAT_UNCHANGED
                                           + decision], 1);
        }

        ngx_http_toolsearch_stat_add(c, count,
                                     NGX_HTTP_TOOLSEARCH_ADD_ANALYSED,
                                     decision);
    }

    if (r->connection->log->log_level >= NGX_LOG_INFO) {
        ngx_http_toolsearch_log_request(r, decision, changed, count);
    }
}


void
ngx_http_toolsearch_stat_loop(ngx_http_request_t *r, ngx_uint_t format,
    size_t *count)
{
    ngx_atomic_t  *c;

    c = ngx_http_toolsearch_counters(r, format);

    if (c != NULL) {
        ngx_http_toolsearch_stat_add(c, count, NGX_HTTP_TOOLSEARCH_ADD_LOOP,
                                     TS_DECISION_DEFERRED_GATEWAY);
    }
}


/* "toolsearch: decision=... changed=..." and the counters with a key */
static void
ngx_http_toolsearch_log_request(ngx_http_request_t *r,
    ts_decision_t decision, ngx_uint_t changed, size_t *count)
{
    u_char                        *p;
    ngx_uint_t                     i;
    ngx_http_toolsearch_metric_t  *m;
    u_char                         line[NGX_HTTP_TOOLSEARCH_LOG_LEN];

    p = line;

    for (i = 0; i < TS_COUNTER_N; i++) {
        m = &ngx_http_toolsearch_metrics[i];

        if (m->log.len) {
            p = ngx_sprintf(p, " %V=%uz", &m->log, count[i]);
        }
    }

    ngx_log_error(NGX_LOG_INFO, r->connection->log, 0,
                  "toolsearch: decision=%s changed=%ui%*s",
                  ts_decision_name(decision), changed, p - line, line);
}


void *
ngx_http_toolsearch_create_main_conf(ngx_conf_t *cf)
{
    ngx_http_toolsearch_main_conf_t  *tmcf;

    tmcf = ngx_pcalloc(cf->pool, sizeof(ngx_http_toolsearch_main_conf_t));
    if (tmcf == NULL) {
        return NULL;
    }

    /*
     * set by ngx_pcalloc():
     *
     *     tmcf->zone = NULL;
     *     tmcf->status = 0;
     */

    return tmcf;
}


/* runs after the whole http block: the zone may follow the locations */
char *
ngx_http_toolsearch_init_main_conf(ngx_conf_t *cf, void *conf)
{
    ngx_http_toolsearch_main_conf_t *tmcf = conf;

    if (tmcf->status && tmcf->zone == NULL) {
        ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                      "\"toolsearch_status\" requires a \"toolsearch_zone\" "
                      "in the http block");
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


/* the status page prints the name in JSON as it is: nothing to escape */
static ngx_int_t
ngx_http_toolsearch_zone_name(ngx_str_t *name)
{
    u_char  *p, *last;

    if (name->len == 0) {
        return NGX_ERROR;
    }

    last = name->data + name->len;

    for (p = name->data; p < last; p++) {
        if (!(isalnum(*p) || *p == '_' || *p == '-' || *p == '.')) {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/* toolsearch_zone <name> <size> */
char *
ngx_http_toolsearch_zone(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_toolsearch_main_conf_t *tmcf = conf;

    ssize_t     size;
    ngx_str_t  *value;

    if (tmcf->zone != NULL) {
        return "is duplicate";
    }

    value = cf->args->elts;

    if (ngx_http_toolsearch_zone_name(&value[1]) != NGX_OK) {
        ngx_http_toolsearch_conf_invalid(cf, &value[1],
                                         "a zone name must be letters, "
                                         "digits, \"_\", \"-\" and "
                                         "\".\"");
        return NGX_CONF_ERROR;
    }

    size = ngx_parse_size(&value[2]);

    if (size == NGX_ERROR) {
        ngx_http_toolsearch_conf_invalid(cf, &value[2],
                                         "it must be a size such as "
                                         "\"64k\" or \"1m\"");
        return NGX_CONF_ERROR;
    }

    if (size < (ssize_t) (8 * ngx_pagesize)) {
        ngx_http_toolsearch_conf_invalid(cf, &value[2],
                                         "zone \"%V\" must be at least "
                                         "%uzk", &value[1],
                                         8 * ngx_pagesize / 1024);
        return NGX_CONF_ERROR;
    }

    tmcf->zone = ngx_shared_memory_add(cf, &value[1], size,
                                       &ngx_http_toolsearch_module);
    if (tmcf->zone == NULL) {
        return NGX_CONF_ERROR;
    }

    if (tmcf->zone->data) {
        ngx_http_toolsearch_conf_invalid(cf, &value[1],
                                         "the zone is already used");
        return NGX_CONF_ERROR;
    }

    tmcf->zone->init = ngx_http_toolsearch_init_zone;
    tmcf->zone->data = tmcf;

    return NGX_CONF_OK;
}


/*
 * data is the zone's data in the previous cycle, on a reload that kept
 * the zone's name and size: the counters carry on from there.
 */
static ngx_int_t
ngx_http_toolsearch_init_zone(ngx_shm_zone_t *shm_zone, void *data)
{
    ngx_slab_pool_t              *shpool;
    ngx_http_toolsearch_shctx_t  *sh;

    if (data) {
        shm_zone->data = data;
        return NGX_OK;
    }

    shpool = (ngx_slab_pool_t *) shm_zone->shm.addr;

    if (shm_zone->shm.exists) {
        shm_zone->data = shpool->data;
        return NGX_OK;
    }

    sh = ngx_slab_calloc(shpool, sizeof(ngx_http_toolsearch_shctx_t));
    if (sh == NULL) {
        return NGX_ERROR;
    }

    shpool->data = sh;
    shm_zone->data = sh;

    return NGX_OK;
}


/*
 * cmd->offset locates the location's "toolsearch" flag: the status page
 * itself is never a request for the module to analyse or count.
 */
char *
ngx_http_toolsearch_status(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_str_t                        *value;
    ngx_flag_t                       *enable;
    ngx_http_core_loc_conf_t         *clcf;
    ngx_http_toolsearch_main_conf_t  *tmcf;

    value = cf->args->elts;

    /* NGX_CONF_ANY: the value nginx would not name */
    if (cf->args->nelts > 1) {
        ngx_http_toolsearch_conf_invalid(cf, &value[1],
                                         "the directive takes no value");
        return NGX_CONF_ERROR;
    }

    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);

    if (clcf->handler == ngx_http_toolsearch_status_handler) {
        return "is duplicate";
    }

    if (clcf->handler != NULL) {
        return "conflicts with another content handler of the location";
    }

    enable = (ngx_flag_t *) ((char *) conf + cmd->offset);

    if (*enable == 1) {
        return "cannot be used in a location with \"toolsearch on\"";
    }

    *enable = 0;
    clcf->handler = ngx_http_toolsearch_status_handler;

    tmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_toolsearch_module);
    tmcf->status = 1;

    return NGX_CONF_OK;
}


static ngx_int_t
ngx_http_toolsearch_status_handler(ngx_http_request_t *r)
{
    u_char                        *p;
    size_t                         size;
    ngx_int_t                      rc;
    ngx_buf_t                     *b;
    ngx_str_t                     *zone;
    ngx_uint_t                     i, j;
    ngx_chain_t                    out;
    ngx_http_toolsearch_shctx_t   *sh;
    ngx_http_toolsearch_format_t  *f;
    ngx_http_toolsearch_values_t  *v;

    if (!(r->method & (NGX_HTTP_GET|NGX_HTTP_HEAD))) {
        return NGX_HTTP_NOT_ALLOWED;
    }

    rc = ngx_http_discard_request_body(r);
    if (rc != NGX_OK) {
        return rc;
    }

    sh = ngx_http_toolsearch_shctx(r, &zone);
    if (sh == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    /* each format's values, then their sums: v[TS_FORMAT_N] */
    v = ngx_pcalloc(r->pool, (TS_FORMAT_N + 1)
                             * sizeof(ngx_http_toolsearch_values_t));
    if (v == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    for (i = 0; i < TS_FORMAT_N; i++) {
        for (j = 0; j < NGX_HTTP_TOOLSEARCH_STAT_N; j++) {
            v[i][j] = sh->counter[i][j];
            v[TS_FORMAT_N][j] += v[i][j];
        }
    }

    f = ngx_http_toolsearch_wants_prometheus(r)
        ? &ngx_http_toolsearch_prometheus : &ngx_http_toolsearch_json;

    size = ngx_http_toolsearch_status_size(zone);

    b = ngx_create_temp_buf(r->pool, size);
    if (b == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    p = f->begin(b->last, zone);
    p = f->sets(p, f, v);
    p = ngx_cpymem(p, f->end.data, f->end.len);
    b->last = p;
    b->last_buf = (r == r->main) ? 1 : 0;
    b->last_in_chain = 1;

    r->headers_out.status = NGX_HTTP_OK;
    r->headers_out.content_length_n = b->last - b->pos;
    r->headers_out.content_type = f->type;
    r->headers_out.content_type_len = f->type.len;
    r->headers_out.content_type_lowcase = NULL;

    rc = ngx_http_send_header(r);

    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
        return rc;
    }

    out.buf = b;
    out.next = NULL;

    return ngx_http_output_filter(r, &out);
}


/*
 * ?format=prometheus or ?format=json decide; otherwise an Accept that
 * names text/plain or OpenMetrics (as Prometheus sends) asks for text.
 */
static ngx_uint_t
ngx_http_toolsearch_wants_prometheus(ngx_http_request_t *r)
{
    ngx_str_t         format;
#if (NGX_HTTP_GZIP || NGX_HTTP_HEADERS)
    u_char           *end;
    ngx_str_t        *accept;
    ngx_table_elt_t  *h;
#endif

    if (ngx_http_arg(r, (u_char *) "format", 6, &format) == NGX_OK) {
        return format.len == 10
               && ngx_strncmp(format.data, "prometheus", 10) == 0;
    }

#if (NGX_HTTP_GZIP || NGX_HTTP_HEADERS)

    /* nginx keeps the Accept header only in builds with these modules */
    h = r->headers_in.accept;
    if (h == NULL) {
        return 0;
    }

    accept = &h->value;
    end = accept->data + accept->len;

    return ngx_strlcasestrn(accept->data, end, (u_char *) "text/plain",
                            sizeof("text/plain") - 2) != NULL
           || ngx_strlcasestrn(accept->data, end,
                               (u_char *) "application/openmetrics-text",
                               sizeof("application/openmetrics-text") - 2)
              != NULL;
#else

    return 0;

#endif
}


/*
 * An upper bound of either format's output: Prometheus text is the longer
 * one, a line being its fixed part plus the help text or label value it
 * holds.
 */
static size_t
ngx_http_toolsearch_status_size(ngx_str_t *zone)
{
    size_t                         size;
    ngx_uint_t                     d, i;
    ngx_http_toolsearch_tokens_t  *t;
    ngx_http_toolsearch_family_t  *fm;

    /* the zone, the JSON braces, and each format's set of counters */
    size = zone->len + (TS_FORMAT_N + 1) * NGX_HTTP_TOOLSEARCH_LINE_LEN;

    for (fm = ngx_http_toolsearch_families; fm->name.len; fm++) {
        size += 2 * NGX_HTTP_TOOLSEARCH_LINE_LEN + ngx_strlen(fm->help);

        for (d = 0; d < TS_DECISION_N; d++) {
            size += NGX_HTTP_TOOLSEARCH_LINE_LEN
                    + ngx_strlen(ts_decision_name(d));
        }
    }

    /* HELP, TYPE and the value */
    for (i = 0; i < TS_COUNTER_N; i++) {
        size += 3 * NGX_HTTP_TOOLSEARCH_LINE_LEN
                + ngx_strlen(ngx_http_toolsearch_metrics[i].help);
    }

    for (t = ngx_http_toolsearch_tokens; t->name.len; t++) {
        size += 3 * NGX_HTTP_TOOLSEARCH_LINE_LEN + ngx_strlen(t->help);
    }

    /* JSON: the sums and each format's set; Prometheus: a series each */
    return (TS_FORMAT_N + 1) * size;
}


/* a family's values by decision, of the sets first to last - 1 */
static u_char *
ngx_http_toolsearch_status_family(u_char *p, ngx_http_toolsearch_format_t *f,
    ngx_http_toolsearch_family_t *fm, ngx_http_toolsearch_values_t *v,
    ngx_uint_t first, ngx_uint_t last)
{
    ngx_uint_t   d, i;
    const char  *word;

    p = f->family(p, &fm->name, fm->help, fm->label);

    for (i = first; i < last; i++) {

        /* "none" is never counted: such a request is never decided */
        for (d = TS_DECISION_NONE + 1; d < TS_DECISION_N; d++) {
            word = ts_decision_name(d);
            p = f->value(p, &fm->name, fm->label, word, v[i][fm->counter + d],
                         d == TS_DECISION_NONE + 1, ts_format_name(i));
        }
    }

    return ngx_cpymem(p, f->family_end.data, f->family_end.len);
}


/* a counter's value (or, with tokens, its tokens) in the sets */
static u_char *
ngx_http_toolsearch_status_metric(u_char *p, ngx_http_toolsearch_format_t *f,
    ngx_str_t *name, const char *help, ngx_http_toolsearch_values_t *v,
    ngx_uint_t counter, ngx_uint_t tokens, ngx_uint_t first, ngx_uint_t last)
{
    ngx_uint_t         i;
    ngx_atomic_uint_t  n;

    p = f->family(p, name, help, NULL);

    for (i = first; i < last; i++) {
        n = tokens ? ts_policy_tokens(v[i][counter]) : v[i][counter];
        p = f->value(p, name, NULL, NULL, n, 1, ts_format_name(i));
    }

    return p;
}


/* every family and counter of the sets first to last - 1 */
static u_char *
ngx_http_toolsearch_status_metrics(u_char *p, ngx_http_toolsearch_format_t *f,
    ngx_http_toolsearch_values_t *v, ngx_uint_t first, ngx_uint_t last)
{
    ngx_uint_t                     i;
    ngx_http_toolsearch_tokens_t  *t;
    ngx_http_toolsearch_family_t  *fm;
    ngx_http_toolsearch_metric_t  *m;

    for (fm = ngx_http_toolsearch_families; fm->name.len; fm++) {
        p = ngx_http_toolsearch_status_family(p, f, fm, v, first, last);
    }

    for (i = 0; i < TS_COUNTER_N; i++) {
        m = &ngx_http_toolsearch_metrics[i];

        if (m->name.len == 0) {
            continue;
        }

        p = ngx_http_toolsearch_status_metric(p, f, &m->name, m->help, v,
                                              m->counter, 0, first, last);

        /* the tokens of a metric's bytes follow it */
        for (t = ngx_http_toolsearch_tokens; t->name.len; t++) {
            if (t->counter == m->counter) {
                p = ngx_http_toolsearch_status_metric(p, f, &t->name,
                        t->help, v, m->counter, 1, first, last);
            }
        }
    }

    return p;
}


/*
 * JSON: the sums over the formats (v[TS_FORMAT_N]) at the top, as the
 * page had them before formats were counted apart, then
 * "formats":[{"format":WORD, the same keys}, ...].
 */
static u_char *
ngx_http_toolsearch_json_sets(u_char *p, ngx_http_toolsearch_format_t *f,
    ngx_http_toolsearch_values_t *v)
{
    ngx_uint_t  i;

    p = ngx_http_toolsearch_status_metrics(p, f, v, TS_FORMAT_N,
                                           TS_FORMAT_N + 1);
    p = ngx_sprintf(p, ",\n\"formats\":[");

    for (i = 0; i < TS_FORMAT_N; i++) {
        p = ngx_sprintf(p, "%s{\"format\":\"%s\"", i ? ",\n" : "",
                        ts_format_name(i));
        p = ngx_http_toolsearch_status_metrics(p, f, v, i, i + 1);
        *p++ = '}';
    }

    *p++ = ']';

    return p;
}


/* Prometheus: each metric's series of every format, one group a metric */
static u_char *
ngx_http_toolsearch_prom_sets(u_char *p, ngx_http_toolsearch_format_t *f,
    ngx_http_toolsearch_values_t *v)
{
    return ngx_http_toolsearch_status_metrics(p, f, v, 0, TS_FORMAT_N);
}
