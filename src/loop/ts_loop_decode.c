/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

#include "loop/ts_loop_state.h"
#include "scan/ts_strmap.h"


/* the usage counts of a usage object */
static void
ts_usage_read(ts_loop_t *lp, const cJSON *usage)
{
    const cJSON  *n;
    int           i;

    for (i = 0; i < TS_USAGE_N; i++) {
        n = cJSON_GetObjectItemCaseSensitive(usage, ts_loop_usage_keys[i]);

        /* a cast of a value out of range is undefined */
        if (cJSON_IsNumber(n) && n->valuedouble >= 0
            && n->valuedouble < TS_LOOP_NUMBER_MAX)
        {
            lp->usage[i] = (unsigned long long) n->valuedouble;
        }
    }
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


static int
ts_event_block_start(ts_loop_t *lp, cJSON *j, const ts_sse_event_t *ev,
    ts_buf_t *out)
{
    cJSON        *cb;
    ts_lblock_t  *b;
    const char   *type, *id, *name;

    b = ts_loop_block_add(lp, ts_event_index(j));
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
        ts_loop_classify(lp, b, id, name);
    }

    if (b->search) {
        return 0;
    }

    b->client = lp->next_index++;

    return ts_loop_forward(b, ev, out);
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

    return ts_loop_forward(b, ev, out);
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
    ts_loop_usage_write(lp, usage);

    return ts_loop_emit_json(out, "message_delta", j);
}


int
ts_loop_event(ts_loop_t *lp, const ts_sse_event_t *ev, ts_buf_t *out)
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


/* the input of a held search call, as a JSON object */
void
ts_loop_call_input(ts_loop_t *lp, ts_lblock_t *b, const char *p, size_t n)
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


/* the JSON answer's members, or -1 when it is not a message */
int
ts_loop_json_members(const ts_loop_t *lp, ts_val_t *doc, ts_val_t *content,
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
    b = ts_loop_block_add(lp, i);
    if (b == NULL) {
        return -1;
    }

    b->raw = buf + item->off;
    b->raw_len = item->len;

    if (strcmp(ts_member_str(buf, item, "type", type, sizeof(type)),
               "tool_use") == 0)
    {
        ts_loop_classify(lp, b, ts_member_str(buf, item, "id", id,
                                              sizeof(id)),
                         ts_member_str(buf, item, "name", name,
                                       sizeof(name)));
    }

    if (b->search) {
        if (ts_object_member(buf, item, "input", &input) != TS_OK) {
            input.len = 0;
        }

        ts_loop_call_input(lp, b, buf + input.off, input.len);
        return 0;
    }

    ts_buf_str(&lp->content, lp->content.len ? "," : "");

    return ts_buf_add(&lp->content, b->raw, b->raw_len);
}


/* reads a JSON answer into blocks; -1: not a message */
int
ts_loop_json_answer(ts_loop_t *lp)
{
    ts_val_t   doc, content, stop, usage, *items;
    size_t     n, i;
    char       tmp[32];
    cJSON     *u;

    if (ts_loop_json_members(lp, &doc, &content, &stop, &usage) != 0
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
