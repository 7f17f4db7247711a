
/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Status and metrics.  The counters live in one shared memory zone
 * (toolsearch_zone) that every worker adds to atomically and that a
 * reload hands over to the new configuration; toolsearch_status prints
 * them as JSON or in the Prometheus text exposition format.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "messages/ts_history.h"
#include "ngx_http_toolsearch_conf.h"
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


typedef struct {
    ngx_shm_zone_t     *zone;
    ngx_uint_t          status;     /* some location has toolsearch_status */
} ngx_http_toolsearch_main_conf_t;


typedef struct {
    ngx_atomic_t        counter[NGX_HTTP_TOOLSEARCH_STAT_N];
} ngx_http_toolsearch_shctx_t;


/* a counter that is not per decision, as JSON and Prometheus name it */
typedef struct {
    ngx_str_t           name;
    ngx_uint_t          counter;
    ngx_uint_t          tokens;     /* bytes shown as estimated tokens */
    const char         *help;
} ngx_http_toolsearch_metric_t;


typedef struct {
    ngx_str_t           name;
    ngx_uint_t          counter;    /* the first of TS_DECISION_N */
    const char         *label;
    const char         *help;
} ngx_http_toolsearch_family_t;


typedef struct {
    u_char            *(*begin)(u_char *p, ngx_str_t *zone);
    u_char            *(*family)(u_char *p, ngx_str_t *name,
                                 const char *help, const char *label);
    u_char            *(*value)(u_char *p, ngx_str_t *name, const char *label,
                                const char *key, ngx_atomic_uint_t n,
                                ngx_uint_t first);
    ngx_str_t           family_end;
    ngx_str_t           end;
    ngx_str_t           type;
} ngx_http_toolsearch_format_t;


static ngx_int_t ngx_http_toolsearch_zone_name(ngx_str_t *name);
static ngx_int_t ngx_http_toolsearch_init_zone(ngx_shm_zone_t *shm_zone,
    void *data);
static ngx_int_t ngx_http_toolsearch_status_handler(ngx_http_request_t *r);
static ngx_uint_t ngx_http_toolsearch_wants_prometheus(ngx_http_request_t *r);
static size_t ngx_http_toolsearch_status_size(ngx_str_t *zone);
static u_char *ngx_http_toolsearch_status_family(u_char *p,
    ngx_http_toolsearch_format_t *f, ngx_http_toolsearch_family_t *fm,
    ngx_atomic_t *c);
static u_char *ngx_http_toolsearch_status_render(u_char *p,
    ngx_http_toolsearch_format_t *f, ngx_str_t *zone, ngx_atomic_t *c);

static u_char *ngx_http_toolsearch_json_begin(u_char *p, ngx_str_t *zone);
static u_char *ngx_http_toolsearch_json_family(u_char *p, ngx_str_t *name,
    const char *help, const char *label);
static u_char *ngx_http_toolsearch_json_value(u_char *p, ngx_str_t *name,
    const char *label, const char *key, ngx_atomic_uint_t n,
    ngx_uint_t first);
static u_char *ngx_http_toolsearch_prom_begin(u_char *p, ngx_str_t *zone);
static u_char *ngx_http_toolsearch_prom_family(u_char *p, ngx_str_t *name,
    const char *help, const char *label);
static u_char *ngx_http_toolsearch_prom_value(u_char *p, ngx_str_t *name,
    const char *label, const char *key, ngx_atomic_uint_t n,
    ngx_uint_t first);


extern ngx_module_t  ngx_http_toolsearch_module;


static ngx_http_toolsearch_metric_t  ngx_http_toolsearch_metrics[] = {

    { ngx_string("tools_seen"),
      NGX_HTTP_TOOLSEARCH_STAT_TOOLS_SEEN, 0,
      "Tool definitions in the requests the module analysed." },

    { ngx_string("tools_recalled"),
      NGX_HTTP_TOOLSEARCH_STAT_TOOLS_RECALLED, 0,
      "Of those, tools a worker recalled from the last tools array it read." },

    { ngx_string("messages_recalled"),
      NGX_HTTP_TOOLSEARCH_STAT_MESSAGES_RECALLED, 0,
      "Messages a worker recalled from the last conversation it served." },

    { ngx_string("tools_deferred"),
      NGX_HTTP_TOOLSEARCH_STAT_TOOLS_DEFERRED, 0,
      "Tool definitions deferred (deferred_hosted, deferred_gateway)." },

    { ngx_string("tool_bytes_removed"),
      NGX_HTTP_TOOLSEARCH_STAT_BYTES_REMOVED, 0,
      "Bytes of deferred tool definitions kept out of the model's context." },

    { ngx_string("tokens_saved"),
      NGX_HTTP_TOOLSEARCH_STAT_BYTES_REMOVED, 1,
      "Estimated tokens saved: tool_bytes_removed / 2.5." },

    { ngx_string("hosted_searches"),
      NGX_HTTP_TOOLSEARCH_STAT_HOSTED_SEARCHES, 0,
      "Hosted tool searches the upstream ran, seen in the last turn." },

    { ngx_string("gateway_searches"),
      NGX_HTTP_TOOLSEARCH_STAT_GATEWAY_SEARCHES, 0,
      "Tool searches the gateway executed itself." },

    { ngx_string("search_misses"),
      NGX_HTTP_TOOLSEARCH_STAT_SEARCH_MISSES, 0,
      "Gateway-executed searches that found no tool." },

    { ngx_string("loop_iterations"),
      NGX_HTTP_TOOLSEARCH_STAT_LOOP_ITERATIONS, 0,
      "Upstream calls made by gateway-executed search loops." },

    { ngx_string("pause_turns"),
      NGX_HTTP_TOOLSEARCH_STAT_PAUSE_TURNS, 0,
      "Responses that ended with stop_reason pause_turn." },

    { ngx_string("refs_stale"),
      NGX_HTTP_TOOLSEARCH_STAT_REFS_STALE, 0,
      "Tool references to tools the upstream could not expand." },

    { ngx_string("refs_converted"),
      NGX_HTTP_TOOLSEARCH_STAT_REFS_CONVERTED, 0,
      "Tool references converted to text." },

    { ngx_string("siblings_moved"),
      NGX_HTTP_TOOLSEARCH_STAT_SIBLINGS_MOVED, 0,
      "Text blocks moved away from a tool reference." },

    { ngx_string("boundaries_added"),
      NGX_HTTP_TOOLSEARCH_STAT_BOUNDARIES_ADDED, 0,
      "Turn boundaries (Tool loaded.) appended." },

    { ngx_string("internal_errors"),
      NGX_HTTP_TOOLSEARCH_STAT_INTERNAL_ERRORS, 0,
      "Errors inside the module; requests were forwarded as they came." },

    { ngx_null_string, 0, 0, NULL }
};


/* the counters per decision: label is the label of the decision word */
static ngx_http_toolsearch_family_t  ngx_http_toolsearch_families[] = {

    { ngx_string("requests"), NGX_HTTP_TOOLSEARCH_STAT_DECISION, "decision",
      "Requests the module decided on, by decision." },

    { ngx_string("passthroughs"), NGX_HTTP_TOOLSEARCH_STAT_UNCHANGED, "reason",
      "Requests forwarded exactly as received, by decision." },

    { ngx_null_string, 0, NULL, NULL }
};


static ngx_http_toolsearch_format_t  ngx_http_toolsearch_json = {
    ngx_http_toolsearch_json_begin,
    ngx_http_toolsearch_json_family,
    ngx_http_toolsearch_json_value,
    ngx_string("}"),
    ngx_string("\n}\n"),
    ngx_string("application/json")
};


static ngx_http_toolsearch_format_t  ngx_http_toolsearch_prometheus = {
    ngx_http_toolsearch_prom_begin,
    ngx_http_toolsearch_prom_family,
    ngx_http_toolsearch_prom_value,
    /* nothing closes a family or the text; "", not NULL, for memcpy() */
    ngx_string(""),
    ngx_string(""),
    ngx_string(NGX_HTTP_TOOLSEARCH_PROMETHEUS_TYPE)
};


static ngx_atomic_t *
ngx_http_toolsearch_counters(ngx_http_request_t *r, ngx_str_t **name)
{
    ngx_http_toolsearch_shctx_t      *sh;
    ngx_http_toolsearch_main_conf_t  *tmcf;

    tmcf = ngx_http_get_module_main_conf(r, ngx_http_toolsearch_module);

    if (tmcf->zone == NULL) {
        return NULL;
    }

    if (name) {
        *name = &tmcf->zone->shm.name;
    }

    sh = tmcf->zone->data;

    return sh->counter;
}


void
ngx_http_toolsearch_stat_add(ngx_http_request_t *r, ngx_uint_t counter,
    ngx_atomic_int_t n)
{
    ngx_atomic_t  *c;

    c = ngx_http_toolsearch_counters(r, NULL);

    if (c != NULL && n != 0 && counter < NGX_HTTP_TOOLSEARCH_STAT_N) {
        (void) ngx_atomic_fetch_add(&c[counter], n);
    }
}


/* tools count as deferred only when the body really defers them */
ngx_uint_t
ngx_http_toolsearch_deferred(ts_decision_t decision)
{
    return decision == TS_DECISION_DEFERRED_HOSTED
           || decision == TS_DECISION_DEFERRED_GATEWAY;
}


/*
 * The one place a decided request is counted and logged.  The log line
 * carries the decision and counts only: never text, tool input or keys.
 */
void
ngx_http_toolsearch_stat_request(ngx_http_request_t *r,
    ngx_http_toolsearch_report_t *rep)
{
    ngx_http_toolsearch_stat_add(r, NGX_HTTP_TOOLSEARCH_STAT_DECISION
                                    + rep->decision, 1);

    if (!rep->changed) {
        ngx_http_toolsearch_stat_add(r, NGX_HTTP_TOOLSEARCH_STAT_UNCHANGED
                                        + rep->decision, 1);
    }

    if (rep->decision == TS_DECISION_ERROR) {
        ngx_http_toolsearch_stat_add(r,
                                   NGX_HTTP_TOOLSEARCH_STAT_INTERNAL_ERRORS, 1);
    }

    if (ngx_http_toolsearch_deferred(rep->decision)) {
        ngx_http_toolsearch_stat_add(r, NGX_HTTP_TOOLSEARCH_STAT_TOOLS_DEFERRED,
                                     rep->tools_deferred);
        ngx_http_toolsearch_stat_add(r, NGX_HTTP_TOOLSEARCH_STAT_BYTES_REMOVED,
                                     rep->defer_chars);
    }

    ngx_http_toolsearch_stat_add(r, NGX_HTTP_TOOLSEARCH_STAT_TOOLS_SEEN,
                                 rep->tools_total);
    ngx_http_toolsearch_stat_add(r, NGX_HTTP_TOOLSEARCH_STAT_TOOLS_RECALLED,
                                 rep->tools_recalled);
    ngx_http_toolsearch_stat_add(r,
                                 NGX_HTTP_TOOLSEARCH_STAT_MESSAGES_RECALLED,
                                 rep->messages_recalled);
    ngx_http_toolsearch_stat_add(r, NGX_HTTP_TOOLSEARCH_STAT_HOSTED_SEARCHES,
                                 rep->hosted_searches);
    ngx_http_toolsearch_stat_add(r, NGX_HTTP_TOOLSEARCH_STAT_REFS_STALE,
                                 rep->refs_stale);
    ngx_http_toolsearch_stat_add(r, NGX_HTTP_TOOLSEARCH_STAT_REFS_CONVERTED,
                                 rep->refs_converted);
    ngx_http_toolsearch_stat_add(r, NGX_HTTP_TOOLSEARCH_STAT_SIBLINGS_MOVED,
                                 rep->siblings_moved);
    ngx_http_toolsearch_stat_add(r,
                                 NGX_HTTP_TOOLSEARCH_STAT_BOUNDARIES_ADDED,
                                 rep->boundaries_added);

    ngx_log_error(NGX_LOG_INFO, r->connection->log, 0,
                  "toolsearch: decision=%s changed=%ui in=%uz out=%uz "
                  "tools=%uz deferred=%uz chars=%uz hosted_searches=%uz "
                  "converted=%uz stale=%uz moved=%uz boundaries=%uz "
                  "discovered=%uz",
                  ts_decision_name(rep->decision), rep->changed,
                  rep->bytes_in, rep->bytes_out, rep->tools_total,
                  rep->tools_deferred, rep->defer_chars,
                  rep->hosted_searches, rep->refs_converted,
                  rep->refs_stale, rep->siblings_moved,
                  rep->boundaries_added, rep->discovered);
}


/*
 * Every request repeats the whole conversation, so a search is counted
 * once only in the request that carries it in its last assistant turn.
 */
size_t
ngx_http_toolsearch_hosted_searches(const ts_index_t *ix)
{
    size_t               i, n;
    const ts_block_t    *b;
    const ts_message_t  *m;

    for (i = ix->nmessages; i > 0; i--) {
        m = &ix->messages[i - 1];

        if (ts_str_eq(ix->buf, &m->role, "assistant")) {
            break;
        }
    }

    if (i == 0) {
        return 0;
    }

    n = 0;

    for (i = m->block_first; i < m->block_end; i++) {
        b = &ix->blocks[i];

        if (ts_str_eq(ix->buf, &b->type, "server_tool_use")
            && ts_history_is_hosted(ix, b))
        {
            n++;
        }
    }

    return n;
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
    ngx_chain_t                    out;
    ngx_atomic_t                  *c;
    ngx_http_toolsearch_format_t  *f;

    if (!(r->method & (NGX_HTTP_GET|NGX_HTTP_HEAD))) {
        return NGX_HTTP_NOT_ALLOWED;
    }

    rc = ngx_http_discard_request_body(r);
    if (rc != NGX_OK) {
        return rc;
    }

    c = ngx_http_toolsearch_counters(r, &zone);
    if (c == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    f = ngx_http_toolsearch_wants_prometheus(r)
        ? &ngx_http_toolsearch_prometheus : &ngx_http_toolsearch_json;

    size = ngx_http_toolsearch_status_size(zone);

    b = ngx_create_temp_buf(r->pool, size);
    if (b == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    p = ngx_http_toolsearch_status_render(b->last, f, zone, c);
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
    ngx_uint_t                     d;
    ngx_http_toolsearch_family_t  *fm;
    ngx_http_toolsearch_metric_t  *m;

    /* the zone and the JSON braces */
    size = zone->len + NGX_HTTP_TOOLSEARCH_LINE_LEN;

    for (fm = ngx_http_toolsearch_families; fm->name.len; fm++) {
        size += 2 * NGX_HTTP_TOOLSEARCH_LINE_LEN + ngx_strlen(fm->help);

        for (d = 0; d < TS_DECISION_N; d++) {
            size += NGX_HTTP_TOOLSEARCH_LINE_LEN
                    + ngx_strlen(ts_decision_name(d));
        }
    }

    /* HELP, TYPE and the value */
    for (m = ngx_http_toolsearch_metrics; m->name.len; m++) {
        size += 3 * NGX_HTTP_TOOLSEARCH_LINE_LEN + ngx_strlen(m->help);
    }

    return size;
}


static u_char *
ngx_http_toolsearch_status_family(u_char *p, ngx_http_toolsearch_format_t *f,
    ngx_http_toolsearch_family_t *fm, ngx_atomic_t *c)
{
    ngx_uint_t   d;
    const char  *word;

    p = f->family(p, &fm->name, fm->help, fm->label);

    /* "none" is never counted: such a request is never decided */
    for (d = TS_DECISION_NONE + 1; d < TS_DECISION_N; d++) {
        word = ts_decision_name(d);
        p = f->value(p, &fm->name, fm->label, word, c[fm->counter + d],
                     d == TS_DECISION_NONE + 1);
    }

    return ngx_cpymem(p, f->family_end.data, f->family_end.len);
}


static u_char *
ngx_http_toolsearch_status_render(u_char *p, ngx_http_toolsearch_format_t *f,
    ngx_str_t *zone, ngx_atomic_t *c)
{
    ngx_atomic_uint_t              n;
    ngx_http_toolsearch_family_t  *fm;
    ngx_http_toolsearch_metric_t  *m;

    p = f->begin(p, zone);

    for (fm = ngx_http_toolsearch_families; fm->name.len; fm++) {
        p = ngx_http_toolsearch_status_family(p, f, fm, c);
    }

    for (m = ngx_http_toolsearch_metrics; m->name.len; m++) {
        n = c[m->counter];

        if (m->tokens) {
            n = ts_policy_tokens(n);
        }

        p = f->family(p, &m->name, m->help, NULL);
        p = f->value(p, &m->name, NULL, NULL, n, 1);
    }

    return ngx_cpymem(p, f->end.data, f->end.len);
}


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
    const char *key, ngx_atomic_uint_t n, ngx_uint_t first)
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
    const char *key, ngx_atomic_uint_t n, ngx_uint_t first)
{
    if (label == NULL) {
        return ngx_sprintf(p, "toolsearch_%V_total %uA\n", name, n);
    }

    return ngx_sprintf(p, "toolsearch_%V_total{%s=\"%s\"} %uA\n",
                       name, label, key, n);
}

