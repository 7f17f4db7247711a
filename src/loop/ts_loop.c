/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "search/ts_catalog.h"
#include "loop/ts_gateway.h"
#include "messages/ts_history.h"
#include "loop/ts_loop.h"
#include "rewrite/ts_request.h"
#include "search/ts_search.h"
#include "loop/ts_sse.h"
#include "scan/ts_strmap.h"


enum {
    TS_USAGE_IN = 0,
    TS_USAGE_OUT,
    TS_USAGE_CACHE_WRITE,
    TS_USAGE_CACHE_READ,
    TS_USAGE_N
};

/* numbers the loop converts to integers: indexes and token counts */
#define TS_LOOP_NUMBER_MAX  1e15

static const char  *ts_usage_keys[TS_USAGE_N] = {
    "input_tokens", "output_tokens", "cache_creation_input_tokens",
    "cache_read_input_tokens"
};


/* one content block of an answer */
typedef struct {
    cJSON          *block;      /* SSE: as content_block_start gave it */
    const char     *raw;        /* JSON: the block's bytes */
    size_t          raw_len;
    ts_buf_t        text;       /* SSE: text, thinking or input so far */
    ts_buf_t        sig;        /* SSE: a thinking block's signature */
    const char     *field;      /* the member text goes to; NULL: input */
    long            index;      /* the upstream's index */
    long            client;     /* the client's index; -1: held back */
    char           *id;         /* a search call's id, JSON-quoted */
    char           *input;      /* and its input object */
    unsigned        search:1;   /* a call of the gateway's search tool */
    unsigned        implicit:1; /* a call of a tool not loaded yet */
} ts_lblock_t;


struct ts_loop_s {
    ts_input_t          in;
    const char         *body;
    size_t              len;
    const char         *tool;
    unsigned char      *loaded;
    size_t              ntools;
    size_t              nloaded;
    ts_request_t        rq;
    int                 have_rq;
    ts_buf_t            turns;      /* appended to the messages */
    ts_buf_t            content;    /* JSON: the client's blocks so far */
    unsigned            calls;
    unsigned            searches;
    unsigned            misses;
    int                 paused;
    int                 sse;
    long                next_index;
    unsigned long long  total[TS_USAGE_N];

    /* the current answer */
    ts_buf_t            pending;
    size_t              seen;       /* of pending, scanned: no event */
    ts_lblock_t         blocks[TS_LOOP_BLOCKS_MAX];
    size_t              nblocks;
    unsigned            held;
    int                 client_tool;
    int                 broken;     /* not followed: no continuation */
    int                 errored;    /* an error event came */
    int                 stopped;    /* message_stop came */
    char                stop_reason[32];
    unsigned long long  usage[TS_USAGE_N];
    cJSON              *delta;      /* a held message_delta */
};


ts_loop_t *
ts_loop_create(const ts_input_t *in, const char *body, size_t len)
{
    ts_loop_t  *lp;
    ts_index_t  ix;

    lp = calloc(1, sizeof(ts_loop_t));
    if (lp == NULL) {
        return NULL;
    }

    lp->in = *in;

    /* the loop's request lives between calls: its index has own memory */
    lp->in.index_mem = NULL;
    lp->body = body;
    lp->len = len;
    lp->tool = ts_policy_search_tool(in->policy);
    ts_buf_init(&lp->turns, TS_LOOP_TURNS_MAX);
    ts_buf_init(&lp->content, TS_LOOP_ANSWER_MAX);
    ts_buf_init(&lp->pending, TS_LOOP_ANSWER_MAX);

    if (ts_index_build(&ix, body, len) == TS_OK) {
        lp->ntools = ix.ntools;
    }

    ts_index_free(&ix);

    lp->loaded = calloc(lp->ntools ? lp->ntools : 1, 1);
    if (lp->loaded == NULL) {
        free(lp);
        return NULL;
    }

    return lp;
}


static void
ts_answer_reset(ts_loop_t *lp)
{
    size_t        i;
    ts_lblock_t  *b;

    for (i = 0; i < lp->nblocks; i++) {
        b = &lp->blocks[i];
        cJSON_Delete(b->block);
        ts_buf_free(&b->text);
        ts_buf_free(&b->sig);
        free(b->id);
        free(b->input);
    }

    memset(lp->blocks, 0, sizeof(lp->blocks));
    lp->nblocks = 0;
    lp->held = 0;
    lp->client_tool = 0;
    lp->broken = 0;
    lp->errored = 0;
    lp->stopped = 0;
    lp->stop_reason[0] = '\0';
    memset(lp->usage, 0, sizeof(lp->usage));
    cJSON_Delete(lp->delta);
    lp->delta = NULL;
    ts_buf_reset(&lp->pending);
    lp->seen = 0;
}


void
ts_loop_free(ts_loop_t *lp)
{
    if (lp == NULL) {
        return;
    }

    ts_answer_reset(lp);

    if (lp->have_rq) {
        ts_request_free(&lp->rq);
    }

    ts_buf_free(&lp->turns);
    ts_buf_free(&lp->content);
    ts_buf_free(&lp->pending);
    free(lp->loaded);
    free(lp);
}


int
ts_loop_request(ts_loop_t *lp, ts_buf_t *out)
{
    ts_input_t  in;
    size_t      len;

    if (lp->have_rq) {
        ts_request_free(&lp->rq);
        lp->have_rq = 0;
    }

    in = lp->in;
    in.loaded = lp->loaded;
    in.tail = lp->turns.p;
    in.tail_len = lp->turns.len;

    lp->have_rq = 1;

    if (ts_request_process(&lp->rq, &in, lp->body, lp->len)
        != TS_DECISION_DEFERRED_GATEWAY)
    {
        return -1;
    }

    len = ts_request_size(&lp->rq);
    ts_buf_reset(out);

    if (ts_buf_space(out, len) != 0
        || ts_request_render(&lp->rq, out->p) != 0)
    {
        return -1;
    }

    out->len = len;
    lp->calls++;

    return 0;
}


const char *
ts_loop_betas(const ts_loop_t *lp, size_t *len)
{
    if (lp->have_rq && lp->rq.betas_changed) {
        *len = strlen(lp->rq.betas);
        return lp->rq.betas;
    }

    *len = lp->in.betas_len;

    return lp->in.betas ? lp->in.betas : "";
}


void
ts_loop_start(ts_loop_t *lp, int sse)
{
    ts_answer_reset(lp);
    lp->sse = sse;
}


/* the usage counts of a usage object */
static void
ts_usage_read(ts_loop_t *lp, const cJSON *usage)
{
    const cJSON  *n;
    int           i;

    for (i = 0; i < TS_USAGE_N; i++) {
        n = cJSON_GetObjectItemCaseSensitive(usage, ts_usage_keys[i]);

        /* a cast of a value out of range is undefined */
        if (cJSON_IsNumber(n) && n->valuedouble >= 0
            && n->valuedouble < TS_LOOP_NUMBER_MAX)
        {
            lp->usage[i] = (unsigned long long) n->valuedouble;
        }
    }
}


static void
ts_json_set_num(cJSON *obj, const char *key, double v)
{
    cJSON  *n;

    n = cJSON_CreateNumber(v);
    if (n == NULL) {
        return;
    }

    if (cJSON_GetObjectItemCaseSensitive(obj, key)) {
        cJSON_ReplaceItemInObjectCaseSensitive(obj, key, n);

    } else {
        cJSON_AddItemToObject(obj, key, n);
    }
}


/* usage of the whole loop: every call's counts and the searches */
static void
ts_usage_write(const ts_loop_t *lp, cJSON *usage)
{
    cJSON               *server;
    unsigned long long   n;
    int                  i;

    for (i = 0; i < TS_USAGE_N; i++) {
        n = lp->total[i] + lp->usage[i];

        if (n || cJSON_GetObjectItemCaseSensitive(usage, ts_usage_keys[i])) {
            ts_json_set_num(usage, ts_usage_keys[i], (double) n);
        }
    }

    if (lp->searches == 0) {
        return;
    }

    server = cJSON_GetObjectItemCaseSensitive(usage, "server_tool_use");

    if (!cJSON_IsObject(server)) {
        server = cJSON_CreateObject();
        if (server == NULL) {
            return;
        }

        cJSON_DeleteItemFromObjectCaseSensitive(usage, "server_tool_use");
        cJSON_AddItemToObject(usage, "server_tool_use", server);
    }

    ts_json_set_num(server, "tool_search_requests", lp->searches);
}


static void
ts_totals_add(ts_loop_t *lp)
{
    int  i;

    for (i = 0; i < TS_USAGE_N; i++) {
        lp->total[i] += lp->usage[i];
    }

    memset(lp->usage, 0, sizeof(lp->usage));
}


static int
ts_emit_json(ts_buf_t *out, const char *name, cJSON *j)
{
    char  *s;
    int    rc;

    s = cJSON_PrintUnformatted(j);
    if (s == NULL) {
        return -1;
    }

    rc = ts_sse_emit(out, name, s, strlen(s));
    free(s);

    return rc;
}


/* the tool of the request with this name, when it is deferred */
static long
ts_deferred_tool(const ts_loop_t *lp, const char *name)
{
    const ts_index_t  *ix;
    size_t             i;

    ix = &lp->rq.ix;

    for (i = 0; lp->rq.defer && i < ix->ntools; i++) {
        if (lp->rq.defer[i] && ts_str_eq(ix->buf, &ix->tools[i].name, name)) {
            return (long) i;
        }
    }

    return -1;
}


/* a JSON-quoted copy of a string */
static char *
ts_quoted(const char *s)
{
    ts_buf_t  b;

    ts_buf_init(&b, 0);
    ts_buf_str(&b, "\"");
    ts_buf_escaped(&b, s, strlen(s));
    ts_buf_add(&b, "\"", 2);

    if (b.failed) {
        ts_buf_free(&b);
        return NULL;
    }

    return b.p;
}


/*
 * A tool_use block: a call of the search tool is held back; so is a call
 * of a tool that is deferred and not loaded (seed 000: the schema was
 * never sent), which becomes an implicit select: of that tool.
 */
static void
ts_classify_call(ts_loop_t *lp, ts_lblock_t *b, const char *id,
    const char *name)
{
    ts_buf_t  q;

    if (strcmp(name, lp->tool) == 0) {
        b->search = 1;

    } else if (ts_deferred_tool(lp, name) >= 0) {
        b->search = 1;
        b->implicit = 1;
        ts_buf_init(&q, 0);
        ts_buf_str(&q, "{\"query\":\"select:");
        ts_buf_escaped(&q, name, strlen(name));
        ts_buf_add(&q, "\"}", 3);
        b->input = q.failed ? NULL : q.p;
        lp->broken |= q.failed;

    } else {
        lp->client_tool = 1;
        return;
    }

    b->id = ts_quoted(id);
    lp->broken |= (b->id == NULL);
    lp->held++;
}


/* an event's block index; -1 without one in long's range */
static long
ts_event_index(const cJSON *j)
{
    const cJSON  *n;

    n = cJSON_GetObjectItem(j, "index");

    return cJSON_IsNumber(n) && n->valuedouble >= 0
           && n->valuedouble < TS_LOOP_NUMBER_MAX
           ? (long) n->valuedouble : -1;
}


static ts_lblock_t *
ts_block_add(ts_loop_t *lp, long index)
{
    ts_lblock_t  *b;

    if (lp->nblocks == TS_LOOP_BLOCKS_MAX) {
        lp->broken = 1;
        return NULL;
    }

    b = &lp->blocks[lp->nblocks++];
    memset(b, 0, sizeof(ts_lblock_t));
    b->index = index;
    b->client = -1;
    ts_buf_init(&b->text, TS_LOOP_EVENT_MAX);
    ts_buf_init(&b->sig, TS_LOOP_EVENT_MAX);

    return b;
}


static ts_lblock_t *
ts_block_find(ts_loop_t *lp, long index)
{
    size_t  i;

    for (i = 0; i < lp->nblocks; i++) {
        if (lp->blocks[i].index == index) {
            return &lp->blocks[i];
        }
    }

    return NULL;
}


/* forwards an event of a block the client sees, under its own index */
static int
ts_forward_block(const ts_lblock_t *b, const ts_sse_event_t *ev,
    ts_buf_t *out)
{
    if (b->client == b->index) {
        return ts_buf_add(out, ev->raw, ev->raw_len);
    }

    return ts_sse_reindex(ev, b->client, out);
}


static int
ts_event_block_start(ts_loop_t *lp, cJSON *j, const ts_sse_event_t *ev,
    ts_buf_t *out)
{
    cJSON        *cb;
    ts_lblock_t  *b;
    const char   *type, *id, *name;

    b = ts_block_add(lp, ts_event_index(j));
    if (b == NULL) {
        return ts_buf_add(out, ev->raw, ev->raw_len);
    }

    cb = cJSON_DetachItemFromObjectCaseSensitive(j, "content_block");
    b->block = cb;
    type = cJSON_GetStringValue(cJSON_GetObjectItem(cb, "type"));
    type = type ? type : "";

    if (strcmp(type, "text") == 0 || strcmp(type, "thinking") == 0) {
        b->field = type;
    }

    id = cJSON_GetStringValue(cJSON_GetObjectItem(cb, "id"));
    name = cJSON_GetStringValue(cJSON_GetObjectItem(cb, "name"));

    if (strcmp(type, "tool_use") == 0 && id && name) {
        ts_classify_call(lp, b, id, name);
    }

    if (b->search) {
        return 0;
    }

    b->client = lp->next_index++;

    return ts_forward_block(b, ev, out);
}


static void
ts_delta_add(ts_buf_t *b, const cJSON *d, const char *key)
{
    const char  *s;

    s = cJSON_GetStringValue(cJSON_GetObjectItem(d, key));

    if (s != NULL) {
        ts_buf_str(b, s);
    }
}


/* the block as it grows, for the turn the next call carries */
static void
ts_delta_apply(ts_loop_t *lp, ts_lblock_t *b, const cJSON *d)
{
    const char  *type;
    cJSON       *list;

    type = cJSON_GetStringValue(cJSON_GetObjectItem(d, "type"));
    type = type ? type : "";

    if (strcmp(type, "text_delta") == 0) {
        ts_delta_add(&b->text, d, "text");

    } else if (strcmp(type, "thinking_delta") == 0) {
        ts_delta_add(&b->text, d, "thinking");

    } else if (strcmp(type, "signature_delta") == 0) {
        ts_delta_add(&b->sig, d, "signature");

    } else if (strcmp(type, "input_json_delta") == 0) {
        ts_delta_add(&b->text, d, "partial_json");

    } else if (strcmp(type, "citations_delta") == 0 && b->block) {
        list = cJSON_GetObjectItem(b->block, "citations");
        if (!cJSON_IsArray(list)) {
            cJSON_DeleteItemFromObject(b->block, "citations");
            list = cJSON_AddArrayToObject(b->block, "citations");
        }

        if (list == NULL
            || !cJSON_AddItemToArray(list, cJSON_Duplicate(
                   cJSON_GetObjectItem(d, "citation"), 1)))
        {
            lp->broken = 1;
        }

    } else {
        lp->broken = 1;
    }

    lp->broken |= b->text.failed || b->sig.failed;
}


static int
ts_event_block(ts_loop_t *lp, cJSON *j, const ts_sse_event_t *ev,
    ts_buf_t *out, int stop)
{
    ts_lblock_t  *b;

    b = ts_block_find(lp, ts_event_index(j));
    if (b == NULL) {
        lp->broken = 1;
        return ts_buf_add(out, ev->raw, ev->raw_len);
    }

    if (!stop) {
        ts_delta_apply(lp, b, cJSON_GetObjectItem(j, "delta"));
    }

    if (b->search) {
        return 0;
    }

    return ts_forward_block(b, ev, out);
}


static void
ts_set_stop_reason(ts_loop_t *lp, const char *s)
{
    if (s != NULL && strlen(s) < sizeof(lp->stop_reason)) {
        strcpy(lp->stop_reason, s);
    }
}


static int
ts_event_delta(ts_loop_t *lp, cJSON *j, const ts_sse_event_t *ev,
    ts_buf_t *out)
{
    cJSON  *usage;

    ts_set_stop_reason(lp, cJSON_GetStringValue(cJSON_GetObjectItem(
                               cJSON_GetObjectItem(j, "delta"),
                               "stop_reason")));
    usage = cJSON_GetObjectItem(j, "usage");
    ts_usage_read(lp, usage);

    if (lp->held) {
        cJSON_Delete(lp->delta);
        lp->delta = cJSON_Duplicate(j, 1);
        return 0;
    }

    if (lp->calls == 1 || !cJSON_IsObject(usage)) {
        return ts_buf_add(out, ev->raw, ev->raw_len);
    }

    /* the last call's message_delta speaks for the whole loop */
    ts_usage_write(lp, usage);

    return ts_emit_json(out, "message_delta", j);
}


static int
ts_event(ts_loop_t *lp, const ts_sse_event_t *ev, ts_buf_t *out)
{
    cJSON       *j;
    const char  *type;
    int          rc;

    j = ev->data ? cJSON_ParseWithLength(ev->data, ev->data_len) : NULL;
    type = cJSON_GetStringValue(cJSON_GetObjectItem(j, "type"));

    /* what is not UTF-8 is not JSON text: a next call could not carry it */
    if (ev->data && !ts_utf8_valid(ev->data, ev->data_len)) {
        lp->broken = 1;
    }

    if (type == NULL) {
        rc = ts_buf_add(out, ev->raw, ev->raw_len);

    } else if (strcmp(type, "message_start") == 0) {
        ts_usage_read(lp, cJSON_GetObjectItem(cJSON_GetObjectItem(j,
                                              "message"), "usage"));
        rc = lp->calls == 1 ? ts_buf_add(out, ev->raw, ev->raw_len) : 0;

    } else if (strcmp(type, "content_block_start") == 0) {
        rc = ts_event_block_start(lp, j, ev, out);

    } else if (strcmp(type, "content_block_delta") == 0
               || strcmp(type, "content_block_stop") == 0)
    {
        rc = ts_event_block(lp, j, ev, out, type[14] == 's');

    } else if (strcmp(type, "message_delta") == 0) {
        rc = ts_event_delta(lp, j, ev, out);

    } else if (strcmp(type, "message_stop") == 0) {
        lp->stopped = 1;
        rc = lp->held ? 0 : ts_buf_add(out, ev->raw, ev->raw_len);

    } else {
        lp->errored |= strcmp(type, "error") == 0;
        rc = ts_buf_add(out, ev->raw, ev->raw_len);
    }

    cJSON_Delete(j);

    return rc;
}


int
ts_loop_feed(ts_loop_t *lp, const char *p, size_t n, ts_buf_t *out)
{
    ts_sse_event_t  ev;
    size_t          used, at;

    if (ts_buf_add(&lp->pending, p, n) != 0) {
        return -1;
    }

    if (!lp->sse) {
        return 0;
    }

    at = 0;

    while ((used = ts_sse_next(lp->pending.p + at, lp->pending.len - at,
                               &lp->seen, &ev)) > 0)
    {
        if (ts_event(lp, &ev, out) != 0) {
            return -1;
        }

        at += used;
    }

    ts_buf_consume(&lp->pending, at);

    /* an event longer than the limit is not an event of this API */
    if (lp->pending.len > TS_LOOP_EVENT_MAX) {
        lp->broken = 1;
        ts_buf_add(out, lp->pending.p, lp->pending.len);
        ts_buf_reset(&lp->pending);
        lp->seen = 0;
    }

    return out->failed ? -1 : 0;
}


/* the input of a held search call, as a JSON object */
static void
ts_call_input(ts_loop_t *lp, ts_lblock_t *b, const char *p, size_t n)
{
    ts_val_t  v;

    if (b->implicit || b->input != NULL) {
        return;
    }

    if (n == 0 || ts_value_parse(p, n, &v) != TS_OK || v.kind != TS_OBJECT) {
        p = "{}";
        n = 2;
    }

    b->input = malloc(n + 1);
    if (b->input == NULL) {
        lp->broken = 1;
        return;
    }

    memcpy(b->input, p, n);
    b->input[n] = '\0';
}


static size_t
ts_call_max(const ts_loop_t *lp, const cJSON *in)
{
    const cJSON  *n;
    unsigned      cap;

    cap = ts_policy_max_results(lp->in.policy);
    n = cJSON_GetObjectItemCaseSensitive(in, "max_results");

    if (!cJSON_IsNumber(n) || n->valuedouble < 1) {
        return TS_SEARCH_DEFAULT < cap ? TS_SEARCH_DEFAULT : cap;
    }

    return n->valuedouble < cap ? (size_t) n->valuedouble : cap;
}


/* runs one search; the found tools are marked loaded and listed */
static int
ts_search_call(ts_loop_t *lp, const ts_lblock_t *b, ts_buf_t *refs,
    ts_buf_t *result)
{
    const ts_policy_t  *p;
    ts_catalog_t        cat;
    ts_result_t         res;
    ts_buf_t            servers;
    ts_hints_t          hints;
    ts_name_t          *names;
    const ts_entry_t   *e;
    cJSON              *in;
    const char         *q;
    size_t              i, n;
    int                 rc;

    p = lp->in.policy;
    in = cJSON_Parse(b->input);
    q = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(in, "query"));
    q = q ? q : "";

    hints.names = p->hint_names;
    hints.phrases = p->hint_phrases;
    memset(&res, 0, sizeof(ts_result_t));
    names = NULL;
    n = 0;

    rc = lp->rq.defer == NULL ? 0
         : ts_catalog_build(&cat, &lp->rq.ix, lp->rq.defer, &hints,
                            p->scoring == TS_SCORING_HYBRID);

    if (rc == 0 && lp->rq.defer != NULL) {
        rc = ts_search_run(&cat, q, strlen(q), p->scoring,
                           ts_call_max(lp, in), &res);
        names = calloc(res.nhits ? res.nhits : 1, sizeof(ts_name_t));
        rc = (rc == 0 && names != NULL) ? 0 : -1;

        for (i = 0; rc == 0 && i < res.nhits; i++, n++) {
            e = &cat.tools[res.hits[i].tool];
            names[n].p = ts_catalog_name(&cat, e);
            names[n].len = e->name.len;

            lp->nloaded += !lp->loaded[res.hits[i].tool];
            lp->loaded[res.hits[i].tool] = 1;
        }
    }

    ts_buf_init(&servers, 0);

    if (rc == 0 && n == 0) {
        rc = ts_gateway_servers(&servers, &lp->rq.ix);
    }

    if (rc == 0) {
        ts_gateway_references(refs, names, n);

        if (result->len) {
            ts_buf_str(result, ",");
        }

        rc = ts_gateway_result(result, b->id, strlen(b->id), names, n, 1,
                               lp->rq.load_refs, &servers);
    }

    ts_buf_free(&servers);

    lp->searches++;
    lp->misses += (n == 0);

    free(names);
    ts_result_free(&res);

    if (lp->rq.defer != NULL) {
        ts_catalog_free(&cat);
    }

    cJSON_Delete(in);

    return rc;
}


static void
ts_call_block(const ts_loop_t *lp, const ts_lblock_t *b, const char *type,
    ts_buf_t *out)
{
    ts_buf_str(out, "{\"type\":\"");
    ts_buf_str(out, type);
    ts_buf_str(out, "\",\"id\":");
    ts_buf_str(out, b->id);
    ts_buf_str(out, ",\"name\":\"");
    ts_buf_str(out, lp->tool);
    ts_buf_str(out, "\",\"input\":");
    ts_buf_str(out, b->input);
    ts_buf_str(out, "}");
}


/* content: the result's content object, as hosted search writes it */
static void
ts_result_block(const ts_lblock_t *b, const ts_buf_t *content, ts_buf_t *out)
{
    ts_buf_str(out, "{\"type\":\"tool_search_tool_result\",\"tool_use_id\":");
    ts_buf_str(out, b->id);
    ts_buf_str(out, ",\"content\":");
    ts_buf_add(out, content->p, content->len);
    ts_buf_str(out, "}");
}


static void
ts_found_content(ts_buf_t *content, const ts_buf_t *refs)
{
    ts_buf_str(content, "{\"type\":\"tool_search_tool_search_result\","
                        "\"tool_references\":[");
    ts_buf_add(content, refs->p, refs->len);
    ts_buf_str(content, "]}");
}


/*
 * A search past the budget does not run.  A call of a tool never loaded
 * gets seed 000's hint; the next request's history carries the message
 * to the model as the call's result.
 */
static void
ts_spent_content(const ts_loop_t *lp, const ts_lblock_t *b, unsigned max,
    ts_buf_t *content)
{
    cJSON       *in;
    const char  *q;

    ts_buf_str(content, "{\"type\":\"tool_search_tool_result_error\","
                        "\"error_code\":\"too_many_requests\","
                        "\"error_message\":\"");

    if (b->implicit) {
        in = cJSON_Parse(b->input);
        q = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(in,
                                                                  "query"));
        ts_buf_str(content, "This tool's schema was not sent to the API: "
                            "it was not in the discovered-tool set. Use ");
        ts_buf_str(content, lp->tool);
        ts_buf_str(content, " to load it first: ");
        ts_buf_str(content, lp->tool);
        ts_buf_str(content, "({ query: '");
        ts_buf_escaped(content, q ? q : "", q ? strlen(q) : 0);
        ts_buf_str(content, "' })");
        cJSON_Delete(in);

    } else {
        ts_buf_str(content, "This search did not run: this request's "
                            "budget of ");
        ts_buf_num(content, max);
        ts_buf_str(content, " searches was spent. Search again.");
    }

    ts_buf_str(content, "\"}");
}


static void
ts_sse_block_event(ts_buf_t *out, const char *name, long index,
    const char *rest, const ts_buf_t *body)
{
    ts_buf_str(out, "event: ");
    ts_buf_str(out, name);
    ts_buf_str(out, "\ndata: {\"type\":\"");
    ts_buf_str(out, name);
    ts_buf_str(out, "\",\"index\":");
    ts_buf_num(out, (unsigned long long) index);
    ts_buf_str(out, rest);

    if (body != NULL) {
        ts_buf_add(out, body->p, body->len);
        ts_buf_str(out, "}");
    }

    ts_buf_str(out, "}\n\n");
}


/* what the client sees of a search: the call and its result blocks */
static void
ts_client_search(ts_loop_t *lp, const ts_lblock_t *b,
    const ts_buf_t *content, ts_buf_t *out)
{
    ts_buf_t  blk;
    long      k;

    ts_buf_init(&blk, 0);

    if (!lp->sse) {
        ts_buf_str(&lp->content, lp->content.len ? "," : "");
        ts_call_block(lp, b, "server_tool_use", &lp->content);
        ts_buf_str(&lp->content, ",");
        ts_result_block(b, content, &lp->content);
        return;
    }

    k = lp->next_index;
    lp->next_index += 2;

    ts_buf_str(&blk, "{\"type\":\"server_tool_use\",\"id\":");
    ts_buf_str(&blk, b->id);
    ts_buf_str(&blk, ",\"name\":\"");
    ts_buf_str(&blk, lp->tool);
    ts_buf_str(&blk, "\",\"input\":{}");
    ts_sse_block_event(out, "content_block_start", k, ",\"content_block\":",
                       &blk);

    ts_buf_reset(&blk);
    ts_buf_str(&blk, "{\"type\":\"input_json_delta\",\"partial_json\":\"");
    ts_buf_escaped(&blk, b->input, strlen(b->input));
    ts_buf_str(&blk, "\"");
    ts_sse_block_event(out, "content_block_delta", k, ",\"delta\":", &blk);
    ts_sse_block_event(out, "content_block_stop", k, "", NULL);

    ts_buf_reset(&blk);
    ts_result_block(b, content, &blk);
    blk.len--;
    ts_sse_block_event(out, "content_block_start", k + 1,
                       ",\"content_block\":", &blk);
    ts_sse_block_event(out, "content_block_stop", k + 1, "", NULL);

    lp->broken |= blk.failed;
    ts_buf_free(&blk);
}


/* a streamed block as it ended, for the next call's assistant turn */
static int
ts_streamed_block(ts_lblock_t *b, ts_buf_t *out)
{
    cJSON     *blk;
    char      *s;
    int        rc;
    ts_val_t   v;

    blk = b->block;

    if (ts_buf_add(&b->text, "", 1) != 0 || ts_buf_add(&b->sig, "", 1) != 0
        || blk == NULL)
    {
        return -1;
    }

    if (b->field != NULL) {
        if (b->text.len == 1 && strcmp(b->field, "text") == 0) {
            return 0;   /* the API refuses empty text blocks */
        }

        cJSON_DeleteItemFromObjectCaseSensitive(blk, b->field);
        cJSON_AddStringToObject(blk, b->field, b->text.p);

        if (b->sig.len > 1) {
            cJSON_DeleteItemFromObjectCaseSensitive(blk, "signature");
            cJSON_AddStringToObject(blk, "signature", b->sig.p);
        }

    } else if (cJSON_GetObjectItemCaseSensitive(blk, "input") != NULL) {
        /* the input goes in raw: a broken one would break the next call */
        if (b->text.len > 1
            && ts_value_parse(b->text.p, b->text.len - 1, &v) != TS_OK)
        {
            return -1;
        }

        cJSON_ReplaceItemInObjectCaseSensitive(blk, "input",
            cJSON_CreateRaw(b->text.len > 1 ? b->text.p : "{}"));
    }

    s = cJSON_PrintUnformatted(blk);
    if (s == NULL) {
        return -1;
    }

    ts_buf_str(out, out->len && out->p[out->len - 1] != '[' ? "," : "");
    rc = ts_buf_str(out, s);
    free(s);

    return rc;
}


static int
ts_answered_block(const ts_lblock_t *b, ts_buf_t *out)
{
    ts_val_t  v, text;

    /* the API refuses empty text blocks */
    if (ts_value_parse(b->raw, b->raw_len, &v) == TS_OK
        && ts_object_member(b->raw, &v, "text", &text) == TS_OK
        && text.kind == TS_STRING && text.len == 2)
    {
        return 0;
    }

    ts_buf_str(out, out->p[out->len - 1] != '[' ? "," : "");

    return ts_buf_add(out, b->raw, b->raw_len);
}


/* the answer and the search results, as turns after the messages */
static int
ts_add_turns(ts_loop_t *lp, const ts_buf_t *results, int referenced)
{
    ts_buf_t     *t;
    ts_lblock_t  *b;
    size_t        i;
    int           rc;

    t = &lp->turns;
    ts_buf_str(t, t->len ? ",{\"role\":\"assistant\",\"content\":["
                         : "{\"role\":\"assistant\",\"content\":[");

    for (i = 0; i < lp->nblocks; i++) {
        b = &lp->blocks[i];

        if (b->search) {
            ts_buf_str(t, t->p[t->len - 1] != '[' ? "," : "");
            ts_call_block(lp, b, "tool_use", t);
            continue;
        }

        rc = lp->sse ? ts_streamed_block(b, t) : ts_answered_block(b, t);
        if (rc != 0) {
            return -1;
        }
    }

    ts_buf_str(t, "]},{\"role\":\"user\",\"content\":[");
    ts_buf_add(t, results->p, results->len);
    ts_buf_str(t, referenced ? "," TS_BOUNDARY_BLOCK "]}" : "]}");

    return t->failed ? -1 : 0;
}


/* the JSON answer's members, or -1 when it is not a message */
static int
ts_json_members(const ts_loop_t *lp, ts_val_t *doc, ts_val_t *content,
    ts_val_t *stop, ts_val_t *usage)
{
    const char  *buf;
    ts_val_t     type;

    buf = lp->pending.p;

    if (ts_value_parse(buf, lp->pending.len, doc) != TS_OK
        || ts_object_member(buf, doc, "type", &type) != TS_OK
        || !ts_str_eq(buf, &type, "message")
        || ts_object_member(buf, doc, "content", content) != TS_OK
        || content->kind != TS_ARRAY
        || ts_object_member(buf, doc, "stop_reason", stop) != TS_OK
        || ts_object_member(buf, doc, "usage", usage) != TS_OK)
    {
        return -1;
    }

    return 0;
}


/* a string member of a JSON block as a C string, or "" */
static const char *
ts_member_str(const char *buf, const ts_val_t *obj, const char *key,
    char *tmp, size_t cap)
{
    ts_val_t     v;
    const char  *s;
    size_t       len;

    if (ts_object_member(buf, obj, key, &v) != TS_OK) {
        return "";
    }

    /* a string without escapes is viewed in place, whatever its length */
    s = ts_str_view(buf, &v, tmp, cap - 1, &len);
    if (s == NULL || len > cap - 1) {
        return "";
    }

    if (s != tmp) {
        memcpy(tmp, s, len);
    }

    tmp[len] = '\0';

    return tmp;
}


static int
ts_json_block(ts_loop_t *lp, const ts_val_t *item, long i)
{
    const char   *buf;
    char          id[TS_NAME_MAX], name[TS_NAME_MAX], type[32];
    ts_lblock_t  *b;
    ts_val_t      input;

    buf = lp->pending.p;
    b = ts_block_add(lp, i);
    if (b == NULL) {
        return -1;
    }

    b->raw = buf + item->off;
    b->raw_len = item->len;

    if (strcmp(ts_member_str(buf, item, "type", type, sizeof(type)),
               "tool_use") == 0)
    {
        ts_classify_call(lp, b, ts_member_str(buf, item, "id", id,
                                              sizeof(id)),
                         ts_member_str(buf, item, "name", name,
                                       sizeof(name)));
    }

    if (b->search) {
        if (ts_object_member(buf, item, "input", &input) != TS_OK) {
            input.len = 0;
        }

        ts_call_input(lp, b, buf + input.off, input.len);
        return 0;
    }

    ts_buf_str(&lp->content, lp->content.len ? "," : "");

    return ts_buf_add(&lp->content, b->raw, b->raw_len);
}


/* reads a JSON answer into blocks; -1: not a message */
static int
ts_json_answer(ts_loop_t *lp)
{
    ts_val_t   doc, content, stop, usage, *items;
    size_t     n, i;
    char       tmp[32];
    cJSON     *u;

    if (ts_json_members(lp, &doc, &content, &stop, &usage) != 0
        || ts_container_items(lp->pending.p, &content, &items, &n) != TS_OK)
    {
        return -1;
    }

    for (i = 0; i < n; i++) {
        if (ts_json_block(lp, &items[i], (long) i) != 0) {
            lp->broken = 1;
            break;
        }
    }

    free(items);

    ts_set_stop_reason(lp, ts_member_str(lp->pending.p, &doc, "stop_reason",
                                         tmp, sizeof(tmp)));

    u = cJSON_ParseWithLength(lp->pending.p + usage.off, usage.len);
    ts_usage_read(lp, u);
    cJSON_Delete(u);

    return 0;
}


/* the last answer with the loop's content, stop reason and usage */
static int
ts_json_final(ts_loop_t *lp, const char *stop_reason, ts_buf_t *out)
{
    ts_val_t    doc, content, stop, usage;
    ts_edits_t  e;
    ts_buf_t    tmp;
    cJSON      *u;
    char       *s;
    size_t      len;
    int         rc;

    if (ts_json_members(lp, &doc, &content, &stop, &usage) != 0) {
        return ts_buf_add(out, lp->pending.p, lp->pending.len);
    }

    ts_edits_init(&e);
    ts_buf_init(&tmp, 0);

    ts_buf_str(&tmp, "[");
    ts_buf_add(&tmp, lp->content.p, lp->content.len);
    ts_buf_str(&tmp, "]");
    ts_edit_replace(&e, content.off, content.len, tmp.p, tmp.len);

    if (stop_reason != NULL) {
        ts_buf_reset(&tmp);
        ts_buf_str(&tmp, "\"");
        ts_buf_str(&tmp, stop_reason);
        ts_buf_str(&tmp, "\"");
        ts_edit_replace(&e, stop.off, stop.len, tmp.p, tmp.len);
    }

    u = cJSON_ParseWithLength(lp->pending.p + usage.off, usage.len);
    s = NULL;

    if (cJSON_IsObject(u)) {
        ts_usage_write(lp, u);
        s = cJSON_PrintUnformatted(u);
    }

    if (s != NULL) {
        ts_edit_replace(&e, usage.off, usage.len, s, strlen(s));
    }

    len = ts_edits_size(&e, lp->pending.len);
    rc = (tmp.failed || ts_buf_space(out, len) != 0
          || ts_edits_render(&e, lp->pending.p, lp->pending.len,
                             out->p + out->len) != 0) ? -1 : 0;

    if (rc == 0) {
        out->len += len;
    }

    free(s);
    cJSON_Delete(u);
    ts_buf_free(&tmp);
    ts_edits_free(&e);

    return rc;
}


/* the client's last events, or its whole JSON message */
static ts_loop_next_t
ts_loop_final(ts_loop_t *lp, const char *stop_reason, ts_buf_t *out)
{
    cJSON  *d, *delta, *usage;

    if (!lp->sse) {
        (void) ts_json_final(lp, stop_reason, out);
        ts_totals_add(lp);
        return TS_LOOP_DONE;
    }

    d = lp->delta ? lp->delta : cJSON_Parse("{\"type\":\"message_delta\","
                                            "\"delta\":{\"stop_reason\":null,"
                                            "\"stop_sequence\":null},"
                                            "\"usage\":{}}");
    lp->delta = d;
    delta = cJSON_GetObjectItemCaseSensitive(d, "delta");
    usage = cJSON_GetObjectItemCaseSensitive(d, "usage");

    if (stop_reason != NULL && cJSON_IsObject(delta)) {
        cJSON_DeleteItemFromObjectCaseSensitive(delta, "stop_reason");
        cJSON_AddStringToObject(delta, "stop_reason", stop_reason);
    }

    if (!cJSON_IsObject(usage)) {
        cJSON_DeleteItemFromObjectCaseSensitive(d, "usage");
        usage = cJSON_AddObjectToObject(d, "usage");
    }

    ts_usage_write(lp, usage);
    ts_totals_add(lp);

    if (d != NULL) {
        ts_emit_json(out, "message_delta", d);
    }

    ts_buf_str(out, "event: message_stop\ndata: {\"type\":\"message_stop\"}"
                    "\n\n");

    return TS_LOOP_DONE;
}


/* the Messages API's error type for an upstream status */
static const char *
ts_error_type(unsigned status)
{
    static const struct {
        unsigned     status;
        const char  *type;
    } types[] = {
        { 400, "invalid_request_error" },
        { 401, "authentication_error" },
        { 403, "permission_error" },
        { 404, "not_found_error" },
        { 413, "request_too_large" },
        { 429, "rate_limit_error" },
        { 529, "overloaded_error" },
    };
    size_t  i;

    for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        if (types[i].status == status) {
            return types[i].type;
        }
    }

    return "api_error";
}


/* the upstream's body when it is an error document of the API, else one */
static cJSON *
ts_error_document(const ts_loop_error_t *e)
{
    cJSON       *doc, *err;
    const char  *type;

    doc = e->body ? cJSON_ParseWithLength(e->body, e->len) : NULL;
    type = cJSON_GetStringValue(cJSON_GetObjectItem(doc, "type"));
    err = cJSON_GetObjectItemCaseSensitive(doc, "error");

    if (type != NULL && strcmp(type, "error") == 0
        && cJSON_IsString(cJSON_GetObjectItem(err, "type")))
    {
        return doc;
    }

    cJSON_Delete(doc);

    doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "type", "error");
    err = cJSON_AddObjectToObject(doc, "error");
    cJSON_AddStringToObject(err, "type", ts_error_type(e->status));
    cJSON_AddStringToObject(err, "message", e->message);

    return doc;
}


void
ts_loop_fail(ts_loop_t *lp, int sse, const ts_loop_error_t *e,
    ts_buf_t *out)
{
    cJSON  *doc;
    char   *s;

    /* an unfinished event would swallow the error event's first line */
    ts_buf_reset(&lp->pending);
    lp->seen = 0;
    lp->errored = 1;

    doc = ts_error_document(e);
    s = doc ? cJSON_PrintUnformatted(doc) : NULL;

    if (s == NULL) {
        out->failed = 1;

    } else if (sse) {
        (void) ts_sse_emit(out, "error", s, strlen(s));

    } else {
        (void) ts_buf_add(out, s, strlen(s));
    }

    free(s);
    cJSON_Delete(doc);
}


/* runs the answer's searches; 1 when the loop may go on */
static int
ts_run_searches(ts_loop_t *lp, ts_buf_t *out)
{
    ts_buf_t      refs, content, results;
    ts_lblock_t  *b;
    size_t        i;
    unsigned      max;
    int           go, referenced;

    ts_buf_init(&refs, 0);
    ts_buf_init(&content, 0);
    ts_buf_init(&results, 0);
    referenced = 0;
    max = lp->in.policy->max_searches ? lp->in.policy->max_searches
                                      : TS_MAX_SEARCHES_DEFAULT;

    for (i = 0; i < lp->nblocks; i++) {
        b = &lp->blocks[i];

        if (!b->search) {
            continue;
        }

        ts_call_input(lp, b, b->text.p, b->text.len);
        ts_buf_reset(&refs);
        ts_buf_reset(&content);

        if (b->input == NULL) {
            lp->broken = 1;
            break;
        }

        if (lp->searches >= max) {
            ts_spent_content(lp, b, max, &content);

        } else if (ts_search_call(lp, b, &refs, &results) == 0) {
            ts_found_content(&content, &refs);
            referenced |= lp->rq.load_refs && refs.len > 0;

        } else {
            lp->broken = 1;
            break;
        }

        ts_client_search(lp, b, &content, out);
    }

    go = !lp->broken && !lp->client_tool && lp->searches < max
         && ts_add_turns(lp, &results, referenced) == 0;

    ts_buf_free(&refs);
    ts_buf_free(&content);
    ts_buf_free(&results);

    return go;
}


ts_loop_next_t
ts_loop_end(ts_loop_t *lp, ts_buf_t *out)
{
    static const ts_loop_error_t  early = {
        0, NULL, 0, "the upstream stream ended early"
    };

    if (!lp->sse && ts_json_answer(lp) != 0) {
        ts_buf_add(out, lp->pending.p, lp->pending.len);
        return TS_LOOP_DONE;
    }

    /*
     * An unfinished event at the end passes as it came where the stream
     * ends with it.  Where the gateway's own events follow, it is dropped,
     * as an SSE client drops it at the end of a stream: else it would
     * swallow the first of them.
     */
    if (lp->sse
        && (lp->errored
            || (lp->held == 0 && (lp->stopped || lp->calls == 1))))
    {
        ts_buf_add(out, lp->pending.p, lp->pending.len);
    }

    if (lp->errored) {
        ts_totals_add(lp);
        return TS_LOOP_DONE;
    }

    if (lp->held == 0 || strcmp(lp->stop_reason, "tool_use") != 0) {
        if (lp->sse && lp->held == 0) {
            if (!lp->stopped && lp->calls > 1) {
                ts_loop_fail(lp, 1, &early, out);
            }

            ts_totals_add(lp);
            return TS_LOOP_DONE;
        }

        /* calls cut off before the end cannot run */
        return ts_loop_final(lp, NULL, out);
    }

    if (ts_run_searches(lp, out)) {
        ts_totals_add(lp);
        return TS_LOOP_AGAIN;
    }

    lp->paused = !lp->client_tool;

    return ts_loop_final(lp, lp->client_tool ? "tool_use" : "pause_turn",
                         out);
}


unsigned
ts_loop_calls(const ts_loop_t *lp)
{
    return lp->calls;
}


unsigned
ts_loop_searches(const ts_loop_t *lp)
{
    return lp->searches;
}


unsigned
ts_loop_misses(const ts_loop_t *lp)
{
    return lp->misses;
}


size_t
ts_loop_loaded(const ts_loop_t *lp)
{
    return lp->nloaded;
}


int
ts_loop_paused(const ts_loop_t *lp)
{
    return lp->paused;
}
