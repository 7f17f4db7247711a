/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Responses in the gateway loop: the answer as response.* events.  Each
 * event renumbered for the client (sequence_number, output_index), a held
 * call's events kept back, a stored stream's head held until the client's
 * first item, a valid wrapper call's events written when its item is done,
 * the stream's one end.
 */

#include <stdlib.h>
#include <string.h>

#include "scan/ts_str.h"
#include "rewrite/ts_gateway.h"
#include "rewrite/ts_wrapper.h"
#include "loop/ts_loop_state.h"
#include "responses/ts_responses.h"
#include "responses/ts_responses_loop.h"


/*
 * A number member set, when it differs; 1 when it changed.  The member
 * is compared as a double: the upstream's number may be out of a long's
 * range (1e79), where a cast is undefined.
 */
static int
ts_rs_set(cJSON *j, const char *key, long v)
{
    cJSON  *n;

    n = cJSON_GetObjectItemCaseSensitive(j, key);

    if (!cJSON_IsNumber(n) || n->valuedouble == (double) v) {
        return 0;
    }

    cJSON_SetNumberValue(n, (double) v);

    return 1;
}


/*
 * The event as the client gets it, renumbered: under its own name, or
 * its type where it came without one
 */
static int
ts_rs_emit(ts_rs_loop_t *st, const ts_sse_event_t *ev, cJSON *j,
    int changed, ts_buf_t *out)
{
    ts_buf_t     name;
    const char  *type;
    int          rc;

    changed |= ts_rs_set(j, "sequence_number", st->seq);
    st->seq += cJSON_GetObjectItem(j, "sequence_number") != NULL;

    if (!changed) {
        return ts_buf_add(out, ev->raw, ev->raw_len);
    }

    ts_buf_init(&name, TS_LOOP_EVENT_MAX);
    type = cJSON_GetStringValue(cJSON_GetObjectItem(j, "type"));

    if (ev->name != NULL) {
        ts_buf_add(&name, ev->name, ev->name_len);

    } else {
        ts_buf_str(&name, type ? type : "message");
    }

    rc = ts_buf_add(&name, "", 1) == 0 ? ts_loop_emit_json(out, name.p, j)
                                       : -1;
    ts_buf_free(&name);

    out->failed |= rc != 0;

    return rc;
}


/*
 * A stored stream holds its response.created back until the client's
 * first item but reasoning, which tells that the call's answer is not a
 * search alone: the created the client gets then names the response it
 * goes on from, unless the model writes before it searches.  An event
 * held, under its name, in a list.
 */
static void
ts_rs_hold(cJSON **list, const ts_sse_event_t *ev, const cJSON *j,
    const char *type)
{
    cJSON  *pair;
    char    name[64];
    size_t  n;

    n = ev->name != NULL ? ev->name_len : strlen(type);
    n = n < sizeof(name) - 1 ? n : sizeof(name) - 1;
    memcpy(name, ev->name != NULL ? ev->name : type, n);
    name[n] = '\0';

    if (*list == NULL) {
        *list = cJSON_CreateArray();
    }

    pair = cJSON_CreateArray();
    cJSON_AddItemToArray(pair, cJSON_CreateString(name));
    cJSON_AddItemToArray(pair, cJSON_Duplicate(j, 1));

    /* without memory the event is lost, and ts_rs_open says so */
    if (!cJSON_AddItemToArray(*list, pair)) {
        cJSON_Delete(pair);
    }
}


/* the held events go out, renumbered, the head first */
int
ts_rs_open(ts_rs_loop_t *st, ts_buf_t *out)
{
    cJSON           *lists[2], *pair, *j;
    ts_sse_event_t   ev;
    size_t           i;
    int              rc;

    lists[0] = st->head;
    lists[1] = st->early;
    st->opened = 1;
    rc = 0;

    for (i = 0; i < 2; i++) {
        cJSON_ArrayForEach(pair, lists[i]) {
            memset(&ev, 0, sizeof(ts_sse_event_t));
            ev.name = cJSON_GetStringValue(cJSON_GetArrayItem(pair, 0));
            j = cJSON_GetArrayItem(pair, 1);

            if (ev.name == NULL || j == NULL) {
                rc = -1;
                continue;
            }

            ev.name_len = strlen(ev.name);
            rc |= ts_rs_emit(st, &ev, j, 1, out);
        }

        cJSON_Delete(lists[i]);
    }

    st->head = NULL;
    st->early = NULL;

    return rc;
}


/* 1 while a stored stream holds its events back */
int
ts_rs_holding(const ts_loop_t *lp)
{
    const ts_rs_loop_t  *st = lp->format;

    return st->stored && lp->sse && !st->opened;
}


/* one event of the gateway's, numbered, of the item at the client's index */
static int
ts_rs_item_emit(ts_rs_loop_t *st, const char *type, const ts_rs_item_t *it,
    const char *key, cJSON *v, ts_buf_t *out)
{
    cJSON  *e;
    int     rc;

    e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "type", type);
    cJSON_AddNumberToObject(e, "sequence_number", (double) st->seq++);
    cJSON_AddNumberToObject(e, "output_index", (double) it->client);

    if (strcmp(key, "item") != 0) {
        cJSON_AddItemToObject(e, "item_id", cJSON_Duplicate(
            cJSON_GetObjectItem(it->item, "id"), 1));
    }

    cJSON_AddItemToObject(e, key, v);
    rc = ts_loop_emit_json(out, type, e);
    cJSON_Delete(e);

    return rc;
}


/*
 * A valid wrapper call in a stream: its events held until its item was
 * done, then added, one arguments delta, its done and the item's done
 */
static int
ts_rs_wrapper_events(ts_rs_loop_t *st, const ts_rs_item_t *it,
    ts_buf_t *out)
{
    cJSON       *added;
    const char  *args;
    int          rc;

    args = cJSON_GetStringValue(cJSON_GetObjectItem(it->item, "arguments"));
    added = cJSON_Duplicate(it->item, 1);
    ts_rs_put(added, "arguments", cJSON_CreateString(""));
    ts_rs_put(added, "status", cJSON_CreateString("in_progress"));

    rc = ts_rs_item_emit(st, "response.output_item.added", it, "item", added,
                         out);
    rc |= ts_rs_item_emit(st, "response.function_call_arguments.delta", it,
                          "delta", cJSON_CreateString(args), out);
    rc |= ts_rs_item_emit(st, "response.function_call_arguments.done", it,
                          "arguments", cJSON_CreateString(args), out);
    rc |= ts_rs_item_emit(st, "response.output_item.done", it, "item",
                          cJSON_Duplicate(it->item, 1), out);

    return rc;
}


/* an event of one output item: held, or the client's under its index */
static int
ts_rs_item_event(ts_loop_t *lp, const ts_sse_event_t *ev, cJSON *j,
    const char *type, ts_buf_t *out)
{
    ts_rs_loop_t  *st = lp->format;
    ts_rs_item_t  *it;
    cJSON         *item;
    const char    *s;
    long           index;
    int            changed;

    index = (long) cJSON_GetObjectItem(j, "output_index")->valuedouble;
    item = cJSON_GetObjectItem(j, "item");
    it = ts_rs_item_find(st, index);

    if (it == NULL) {
        it = ts_rs_item_add(lp, index, item);

        if (it == NULL) {
            return ts_buf_add(out, ev->raw, ev->raw_len);
        }
    }

    if (strcmp(type, "response.output_item.done") == 0 && item != NULL) {
        cJSON_Delete(it->item);
        it->item = cJSON_Duplicate(item, 1);

        if (!it->search && !it->wrapper && st->output != NULL) {
            cJSON_AddItemToArray(st->output, cJSON_Duplicate(item, 1));
        }

        if (it->wrapper && it->client < 0 && !it->search
            && ts_rs_wrapper_end(lp, it))
        {
            /* the client's first item opens a held stored response */
            if (ts_rs_holding(lp) && ts_rs_open(st, out) != 0) {
                return -1;
            }

            return ts_rs_wrapper_events(st, it, out);
        }
    }

    if (it->search || (it->wrapper && it->client < 0)) {
        s = cJSON_GetStringValue(cJSON_GetObjectItem(j, "delta"));

        if (s != NULL) {
            ts_buf_str(&it->args, s);
        }

        return 0;
    }

    changed = ts_rs_set(j, "output_index", it->client);

    if (ts_rs_holding(lp) && it->reasoning) {
        ts_rs_hold(&st->early, ev, j, type);
        return 0;
    }

    if (ts_rs_holding(lp) && ts_rs_open(st, out) != 0) {
        return -1;
    }

    return ts_rs_emit(st, ev, j, changed, out);
}


int
ts_rs_event(ts_loop_t *lp, const ts_sse_event_t *ev, ts_buf_t *out)
{
    ts_rs_loop_t  *st = lp->format;
    cJSON         *j, *resp;
    const char    *type;
    int            rc;

    /*
     * What the scanner does not take passes as it came, and the loop
     * follows the answer no further: its bytes would go into the next
     * call.
     */
    j = ts_loop_parse(ev->data, ev->data_len);
    type = cJSON_GetStringValue(cJSON_GetObjectItem(j, "type"));

    if (!cJSON_IsObject(j) || type == NULL || strcmp(type, "error") == 0) {
        st->errored |= j != NULL;
        lp->ans.broken |= j == NULL;
        cJSON_Delete(j);
        rc = ts_rs_holding(lp) ? ts_rs_open(st, out) : 0;
        return rc | ts_buf_add(out, ev->raw, ev->raw_len);
    }

    resp = cJSON_GetObjectItem(j, "response");

    if (strcmp(type, "response.completed") == 0
        || strcmp(type, "response.incomplete") == 0
        || strcmp(type, "response.failed") == 0)
    {
        /* the end decides what the client's one end says */
        ts_rs_usage(st, cJSON_GetObjectItem(resp, "usage"));
        strncpy(st->status, type + sizeof("response.") - 1,
                sizeof(st->status) - 1);
        cJSON_Delete(st->terminal);
        st->terminal = j;
        return 0;
    }

    if (strcmp(type, "response.created") == 0
        || strcmp(type, "response.in_progress") == 0
        || strcmp(type, "response.queued") == 0)
    {
        ts_rs_first(st, resp);
        rc = 0;

        if (ts_rs_holding(lp)) {
            /* a later call's head stands for the earlier's */
            if (strcmp(type, "response.created") == 0) {
                cJSON_Delete(st->head);
                st->head = NULL;
            }

            ts_rs_hold(&st->head, ev, j, type);

        } else if (lp->calls == 1) {
            rc = ts_rs_emit(st, ev, j, 0, out);
        }

    } else if (cJSON_IsNumber(cJSON_GetObjectItem(j, "output_index"))) {
        rc = ts_rs_item_event(lp, ev, j, type, out);

    } else if (ts_rs_holding(lp)) {
        ts_rs_hold(&st->early, ev, j, type);
        rc = 0;

    } else {
        rc = ts_rs_emit(st, ev, j, 0, out);
    }

    cJSON_Delete(j);

    return rc;
}


/* the spent note's events, when searches held back left nothing said */
static void
ts_rs_spent_events(ts_rs_loop_t *st, ts_buf_t *out)
{
    cJSON  *item, *e;
    long    index;

    item = ts_rs_spent_item();
    index = st->nout++;
    cJSON_AddItemToArray(st->output, cJSON_Duplicate(item, 1));

    e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "type", "response.output_item.added");
    cJSON_AddNumberToObject(e, "sequence_number", (double) st->seq++);
    cJSON_AddNumberToObject(e, "output_index", (double) index);
    cJSON_AddItemToObject(e, "item", cJSON_Duplicate(item, 1));
    (void) ts_loop_emit_json(out, "response.output_item.added", e);
    cJSON_Delete(e);

    e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "type", "response.output_text.delta");
    cJSON_AddNumberToObject(e, "sequence_number", (double) st->seq++);
    cJSON_AddStringToObject(e, "item_id", "msg_toolsearch_spent");
    cJSON_AddNumberToObject(e, "output_index", (double) index);
    cJSON_AddNumberToObject(e, "content_index", 0);
    cJSON_AddStringToObject(e, "delta", ts_loop_openai_spent);
    (void) ts_loop_emit_json(out, "response.output_text.delta", e);
    cJSON_Delete(e);

    e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "type", "response.output_item.done");
    cJSON_AddNumberToObject(e, "sequence_number", (double) st->seq++);
    cJSON_AddNumberToObject(e, "output_index", (double) index);
    cJSON_AddItemToObject(e, "item", item);
    (void) ts_loop_emit_json(out, "response.output_item.done", e);
    cJSON_Delete(e);
}


/* the stream's one end: the last call's, with the response joined */
void
ts_rs_stream_end(ts_loop_t *lp, ts_buf_t *out)
{
    ts_rs_loop_t  *st = lp->format;
    char           name[40];

    if (ts_rs_holding(lp)) {
        (void) ts_rs_open(st, out);
    }

    if (st->held && st->nclient == 0 && st->output != NULL) {
        ts_rs_spent_events(st, out);
    }

    ts_rs_response(st, cJSON_GetObjectItem(st->terminal, "response"));
    (void) ts_rs_set(st->terminal, "sequence_number", st->seq++);

    memcpy(name, "response.", sizeof("response.") - 1);
    strncpy(name + sizeof("response.") - 1, st->status,
            sizeof(name) - sizeof("response."));
    name[sizeof(name) - 1] = '\0';

    if (ts_loop_emit_json(out, name, st->terminal) != 0) {
        out->failed = 1;
    }
}
