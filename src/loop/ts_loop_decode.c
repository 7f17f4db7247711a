/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

#include "loop/ts_loop_state.h"
#include "scan/ts_strmap.h"


/*
 * The answers' decoder.  An SSE event and a JSON message are read with
 * the scanner into the same things: blocks opened, grown and ended, the
 * usage counts and the stop reason.  cJSON holds only what the loop
 * changes and writes again (a streamed block, a message_delta).
 */


/* a number; 0 when v is none */
int
ts_loop_num(const char *buf, const ts_val_t *v, double *d)
{
    if (v->kind != TS_NUMBER) {
        return 0;
    }

    /* a number inside an object is followed by a byte that ends it */
    *d = strtod(buf + v->off, NULL);

    return 1;
}


/*
 * A string decoded into a C string, which ends at a decoded NUL as
 * cJSON's does; NULL when v is none.  The caller frees it.
 */
static char *
ts_loop_str_dup(const char *buf, const ts_val_t *v)
{
    char    *s;
    size_t   n;

    if (v->kind != TS_STRING) {
        return NULL;
    }

    /* decoding never makes a string longer than its JSON form */
    s = malloc(v->len);
    if (s == NULL) {
        return NULL;
    }

    n = ts_str_decode(buf, v, s, v->len - 1);
    s[n == (size_t) -1 ? 0 : n] = '\0';

    return s;
}


/* the query of a held call's input, decoded; NULL when there is none */
char *
ts_loop_query(const char *input, const ts_val_t *in)
{
    ts_val_t  q;

    (void) ts_object_member(input, in, "query", &q);

    return ts_loop_str_dup(input, &q);
}


/* the usage counts of a usage object */
static void
ts_usage_read(ts_loop_t *lp, const char *buf, const ts_val_t *usage)
{
    ts_val_t  n[TS_USAGE_N];
    double    d;
    int       i;

    (void) ts_object_members(buf, usage, ts_loop_usage_keys, TS_USAGE_N, n);

    for (i = 0; i < TS_USAGE_N; i++) {

        /* a cast of a value out of range is undefined */
        if (ts_loop_num(buf, &n[i], &d) && d >= 0 && d < TS_LOOP_NUMBER_MAX) {
            lp->ans.usage[i] = (unsigned long long) d;
        }
    }
}


static void
ts_set_stop_reason(ts_loop_t *lp, const char *s)
{
    if (s != NULL && strlen(s) < sizeof(lp->ans.stop_reason)) {
        strcpy(lp->ans.stop_reason, s);
    }
}


/* the members of an event the loop reads, found in one pass */
enum {
    TS_EV_TYPE = 0, TS_EV_INDEX, TS_EV_MESSAGE, TS_EV_BLOCK, TS_EV_DELTA,
    TS_EV_USAGE, TS_EV_N
};

static const char  *ts_event_keys[TS_EV_N] = {
    "type", "index", "message", "content_block", "delta", "usage"
};


typedef struct {
    const ts_sse_event_t  *sse;
    const char            *buf;     /* its data */
    ts_val_t               m[TS_EV_N];
} ts_event_t;


/* an event's block index; -1 without one in long's range */
static long
ts_event_index(const ts_event_t *e)
{
    double  d;

    return ts_loop_num(e->buf, &e->m[TS_EV_INDEX], &d) && d >= 0
           && d < TS_LOOP_NUMBER_MAX ? (long) d : -1;
}


static int
ts_event_forward(const ts_event_t *e, ts_buf_t *out)
{
    return ts_buf_add(out, e->sse->raw, e->sse->raw_len);
}


static ts_lblock_t *
ts_block_find(ts_loop_t *lp, long index)
{
    size_t  i;

    for (i = 0; i < lp->ans.nblocks; i++) {
        if (lp->ans.blocks[i].index == index) {
            return &lp->ans.blocks[i];
        }
    }

    return NULL;
}


/* a streamed block keeps its tree: its end is written from it */
static int
ts_event_block_start(ts_loop_t *lp, const ts_event_t *e, ts_buf_t *out)
{
    cJSON           *cb;
    ts_lblock_t     *b;
    const ts_val_t  *v;
    const char      *type, *id, *name;

    b = ts_loop_block_add(lp, ts_event_index(e));
    if (b == NULL) {
        return ts_event_forward(e, out);
    }

    v = &e->m[TS_EV_BLOCK];
    cb = v->kind ? cJSON_ParseWithLength(e->buf + v->off, v->len) : NULL;
    b->block = cb;
    type = cJSON_GetStringValue(cJSON_GetObjectItem(cb, "type"));
    type = type ? type : "";

    if (strcmp(type, "text") == 0 || strcmp(type, "thinking") == 0) {
        b->field = type;
    }

    id = cJSON_GetStringValue(cJSON_GetObjectItem(cb, "id"));
    name = cJSON_GetStringValue(cJSON_GetObjectItem(cb, "name"));

    if (strcmp(type, "tool_use") == 0 && id && name) {
        ts_loop_classify(lp, b, id, name);
    }

    if (b->search || b->wrapper) {
        return 0;
    }

    b->client = lp->next_index++;

    return ts_loop_forward(b, e->sse, out);
}


/* a delta's type and the member it carries, by its index in these */
enum {
    TS_DELTA_TYPE = 0, TS_DELTA_TEXT, TS_DELTA_THINKING, TS_DELTA_SIGNATURE,
    TS_DELTA_JSON, TS_DELTA_CITATION, TS_DELTA_N
};

static const char  *ts_delta_keys[TS_DELTA_N] = {
    "type", "text", "thinking", "signature", "partial_json", "citation"
};

static const char  *ts_delta_types[TS_DELTA_N] = {
    "", "text_delta", "thinking_delta", "signature_delta",
    "input_json_delta", "citations_delta"
};


static void
ts_delta_add(ts_buf_t *b, const char *buf, const ts_val_t *v)
{
    char  *s;

    s = ts_loop_str_dup(buf, v);

    if (s != NULL) {
        ts_buf_str(b, s);
        free(s);
    }
}


static void
ts_citation_add(ts_loop_t *lp, ts_lblock_t *b, const char *buf,
    const ts_val_t *v)
{
    cJSON  *list, *c;

    list = cJSON_GetObjectItem(b->block, "citations");
    if (!cJSON_IsArray(list)) {
        cJSON_DeleteItemFromObject(b->block, "citations");
        list = cJSON_AddArrayToObject(b->block, "citations");
    }

    c = v->kind ? cJSON_ParseWithLength(buf + v->off, v->len) : NULL;

    if (list == NULL || !cJSON_AddItemToArray(list, c)) {
        cJSON_Delete(c);
        lp->ans.broken = 1;
    }
}


/* the block as it grows, for the turn the next call carries */
static void
ts_delta_apply(ts_loop_t *lp, ts_lblock_t *b, const char *buf,
    const ts_val_t *d)
{
    ts_val_t  m[TS_DELTA_N];
    int       i;

    (void) ts_object_members(buf, d, ts_delta_keys, TS_DELTA_N, m);

    for (i = 1; i < TS_DELTA_N; i++) {
        if (ts_str_eq(buf, &m[TS_DELTA_TYPE], ts_delta_types[i])) {
            break;
        }
    }

    if (i == TS_DELTA_SIGNATURE) {
        ts_delta_add(&b->sig, buf, &m[i]);

    } else if (i < TS_DELTA_CITATION) {
        ts_delta_add(&b->text, buf, &m[i]);

    } else if (i == TS_DELTA_CITATION && b->block) {
        ts_citation_add(lp, b, buf, &m[i]);

    } else {
        lp->ans.broken = 1;
    }

    lp->ans.broken |= b->text.failed || b->sig.failed;
}


/*
 * An event the loop cannot follow: data that is not a JSON event, or a
 * block's event whose block never started.  The first call's passes as
 * it came (its indexes are the upstream's, as through plain proxying)
 * and no further call follows.  In a later call, whose events the
 * client sees renumbered, it ends the answer: the client gets an error
 * event after the events so far (ts_loop_unreadable).
 */
static int
ts_event_unknown(ts_loop_t *lp, const ts_event_t *e, ts_buf_t *out)
{
    lp->ans.broken = 1;

    if (lp->calls > 1) {
        ts_loop_unreadable(lp, out);
        return out->failed ? -1 : 0;
    }

    return ts_event_forward(e, out);
}


static int
ts_event_block(ts_loop_t *lp, const ts_event_t *e, ts_buf_t *out, int stop)
{
    ts_lblock_t  *b;

    b = ts_block_find(lp, ts_event_index(e));
    if (b == NULL) {
        return ts_event_unknown(lp, e, out);
    }

    if (!stop) {
        ts_delta_apply(lp, b, e->buf, &e->m[TS_EV_DELTA]);
    }

    /* the wrapper's call is judged whole, at its end */
    if (b->wrapper && !b->search && b->client < 0) {
        return stop ? ts_loop_wrapper_end(lp, b, b->text.p, b->text.len, out)
                    : 0;
    }

    if (b->search) {
        return 0;
    }

    return ts_loop_forward(b, e->sse, out);
}


/* a message_delta is kept whole while calls are held back */
static int
ts_event_delta(ts_loop_t *lp, const ts_event_t *e, ts_buf_t *out)
{
    ts_val_t   stop;
    cJSON     *j;
    char      *s;
    int        rc;

    (void) ts_object_member(e->buf, &e->m[TS_EV_DELTA], "stop_reason",
                            &stop);
    s = ts_loop_str_dup(e->buf, &stop);
    ts_set_stop_reason(lp, s);
    free(s);

    ts_usage_read(lp, e->buf, &e->m[TS_EV_USAGE]);

    if (lp->ans.held) {
        cJSON_Delete(lp->ans.delta);
        lp->ans.delta = cJSON_ParseWithLength(e->buf, e->sse->data_len);
        return 0;
    }

    j = NULL;

    if (lp->calls > 1 && e->m[TS_EV_USAGE].kind == TS_OBJECT) {
        j = cJSON_ParseWithLength(e->buf, e->sse->data_len);
    }

    if (j == NULL) {
        return ts_event_forward(e, out);
    }

    /* the last call's message_delta speaks for the whole loop */
    ts_loop_usage_write(lp, cJSON_GetObjectItemCaseSensitive(j, "usage"));
    rc = ts_loop_emit_json(out, "message_delta", j);
    cJSON_Delete(j);

    return rc;
}


static int
ts_event_message(ts_loop_t *lp, const ts_event_t *e, ts_buf_t *out)
{
    ts_val_t  usage;

    (void) ts_object_member(e->buf, &e->m[TS_EV_MESSAGE], "usage", &usage);
    ts_usage_read(lp, e->buf, &usage);

    return lp->calls == 1 ? ts_event_forward(e, out) : 0;
}


int
ts_loop_event(ts_loop_t *lp, const ts_sse_event_t *sse, ts_buf_t *out)
{
    ts_event_t   e;
    ts_val_t     doc, *type;

    e.sse = sse;
    e.buf = sse->data;
    type = &e.m[TS_EV_TYPE];

    /* what is not UTF-8 is not JSON text: a next call could not carry it */
    if (e.buf && !ts_utf8_valid(e.buf, sse->data_len)) {
        lp->ans.broken = 1;
    }

    /* a comment, a keep-alive: no data, nothing to follow */
    if (e.buf == NULL) {
        return ts_buf_add(out, sse->raw, sse->raw_len);
    }

    if (ts_value_parse(e.buf, sse->data_len, &doc) != TS_OK
        || ts_object_members(e.buf, &doc, ts_event_keys, TS_EV_N, e.m)
           != TS_OK
        || type->kind != TS_STRING)
    {
        return ts_event_unknown(lp, &e, out);
    }

    if (ts_str_eq(e.buf, type, "message_start")) {
        return ts_event_message(lp, &e, out);
    }

    if (ts_str_eq(e.buf, type, "content_block_start")) {
        return ts_event_block_start(lp, &e, out);
    }

    if (ts_str_eq(e.buf, type, "content_block_delta")) {
        return ts_event_block(lp, &e, out, 0);
    }

    if (ts_str_eq(e.buf, type, "content_block_stop")) {
        return ts_event_block(lp, &e, out, 1);
    }

    if (ts_str_eq(e.buf, type, "message_delta")) {
        return ts_event_delta(lp, &e, out);
    }

    if (ts_str_eq(e.buf, type, "message_stop")) {
        lp->ans.stopped = 1;
        return lp->ans.held ? 0 : ts_event_forward(&e, out);
    }

    lp->ans.errored |= ts_str_eq(e.buf, type, "error");

    return ts_event_forward(&e, out);
}


/*
 * The input of a held search call, as a JSON object.  One that is no
 * object with a query string is invalid: the search does not run, and
 * the model reads why (ts_loop_refused).
 */
void
ts_loop_call_input(ts_loop_t *lp, ts_lblock_t *b, const char *p, size_t n)
{
    ts_val_t  v, q;

    if (b->implicit || b->input != NULL) {
        return;
    }

    if (n == 0 || ts_value_parse(p, n, &v) != TS_OK || v.kind != TS_OBJECT) {
        b->invalid = 1;
        p = "{}";
        n = 2;

    } else if (ts_object_member(p, &v, "query", &q) != TS_OK
               || q.kind != TS_STRING)
    {
        b->invalid = 1;
    }

    b->input = malloc(n + 1);
    if (b->input == NULL) {
        lp->ans.broken = 1;
        return;
    }

    memcpy(b->input, p, n);
    b->input[n] = '\0';
}


static const char  *ts_message_keys[TS_MSG_N] = {
    "type", "content", "stop_reason", "usage"
};


/* the JSON answer's members, or -1 when it is not a message */
int
ts_loop_json_members(const ts_loop_t *lp, ts_val_t m[TS_MSG_N])
{
    const char  *buf;
    ts_val_t     doc;

    buf = lp->pending.p;

    if (ts_value_parse(buf, lp->pending.len, &doc) != TS_OK
        || ts_object_members(buf, &doc, ts_message_keys, TS_MSG_N, m)
           != TS_OK
        || !ts_str_eq(buf, &m[TS_MSG_TYPE], "message")
        || m[TS_MSG_CONTENT].kind != TS_ARRAY)
    {
        return -1;
    }

    return 0;
}


/* a string as a C string, or "" when it is none or longer than cap - 1 */
static const char *
ts_loop_str_copy(const char *buf, const ts_val_t *v, char *tmp, size_t cap)
{
    const char  *s;
    size_t       len;

    /* a string without escapes is viewed in place, whatever its length */
    s = ts_str_view(buf, v, tmp, cap - 1, &len);
    if (s == NULL || len > cap - 1) {
        return "";
    }

    if (s != tmp) {
        memcpy(tmp, s, len);
    }

    tmp[len] = '\0';

    return tmp;
}


/* the members of a JSON answer's block the loop reads */
enum {
    TS_JB_TYPE = 0,
    TS_JB_ID,
    TS_JB_NAME,
    TS_JB_INPUT,
    TS_JB_N
};

static const char  *ts_json_block_keys[TS_JB_N] = {
    "type", "id", "name", "input"
};


static int
ts_loop_json_block(ts_loop_t *lp, const ts_val_t *item, long i)
{
    const char   *buf;
    char          id[TS_NAME_MAX], name[TS_NAME_MAX];
    ts_lblock_t  *b;
    ts_val_t      m[TS_JB_N];

    buf = lp->pending.p;
    b = ts_loop_block_add(lp, i);
    if (b == NULL) {
        return -1;
    }

    b->raw = buf + item->off;
    b->raw_len = item->len;

    (void) ts_object_members(buf, item, ts_json_block_keys, TS_JB_N, m);

    if (ts_str_eq(buf, &m[TS_JB_TYPE], "tool_use")) {
        ts_loop_classify(lp, b,
                         ts_loop_str_copy(buf, &m[TS_JB_ID], id, sizeof(id)),
                         ts_loop_str_copy(buf, &m[TS_JB_NAME], name,
                                          sizeof(name)));
    }

    if (b->wrapper) {
        return ts_loop_wrapper_end(lp, b, buf + m[TS_JB_INPUT].off,
                                   m[TS_JB_INPUT].len, NULL);
    }

    if (b->search) {
        ts_loop_call_input(lp, b, buf + m[TS_JB_INPUT].off,
                           m[TS_JB_INPUT].len);
        return 0;
    }

    ts_buf_str(&lp->content, lp->content.len ? "," : "");

    return ts_buf_add(&lp->content, b->raw, b->raw_len);
}


/* reads a JSON answer into blocks; -1: not a message */
int
ts_loop_json_answer(ts_loop_t *lp)
{
    ts_val_t   m[TS_MSG_N], *items;
    size_t     n, i;
    char      *s;

    if (ts_loop_json_members(lp, m) != 0
        || ts_container_items(lp->pending.p, &m[TS_MSG_CONTENT], &items, &n)
           != TS_OK)
    {
        return -1;
    }

    for (i = 0; i < n; i++) {
        if (ts_loop_json_block(lp, &items[i], (long) i) != 0) {
            lp->ans.broken = 1;
            break;
        }
    }

    free(items);

    s = ts_loop_str_dup(lp->pending.p, &m[TS_MSG_STOP]);
    ts_set_stop_reason(lp, s);
    free(s);

    ts_usage_read(lp, lp->pending.p, &m[TS_MSG_USAGE]);

    return 0;
}


cJSON *
ts_loop_parse(const char *p, size_t n)
{
    ts_val_t  v;

    if (p == NULL || ts_value_parse(p, n, &v) != TS_OK) {
        return NULL;
    }

    return cJSON_ParseWithLength(p, n);
}
