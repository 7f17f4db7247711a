/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Responses, the gateway loop's answers.  The model's call of the search
 * function (or of a deferred function never loaded, which becomes a
 * select: of it) is a function_call output item: held back from the
 * client, in one JSON response or as the response.* events of its
 * output_index.  The search runs (ts_loop_search), the answer's items and
 * a function_call_output per search go after the input, and the next
 * call continues.  The client gets one response: the first call's id,
 * its output items from every call with output_index from 0, events
 * whose sequence_number runs 0, 1, 2, … across the calls, one
 * response.completed (or the last call's response.incomplete or
 * response.failed) with the output and the usage summed.
 */

#include <stdlib.h>
#include <string.h>

#include "scan/ts_str.h"
#include "rewrite/ts_gateway.h"
#include "rewrite/ts_wrapper.h"
#include "loop/ts_loop_state.h"
#include "responses/ts_responses.h"


/*
 * Searches past the budget in a stored exchange are answered, not left
 * open in the response the client goes on from, this many times
 */
#define TS_RS_SPENT_MAX  2

static const char  ts_rs_spent_output[] =
    "No more tool searches are available for this answer: answer with "
    "the tools loaded.";


/* one output item of an answer */
typedef struct {
    long            index;      /* the upstream's output_index */
    long            client;     /* the client's; -1: held back */
    cJSON          *item;       /* as the answer gave it, when done */
    ts_buf_t        args;       /* a held call's arguments so far */
    char           *error;      /* an invalid wrapper call's, escaped */
    unsigned        search:1;   /* a search, or an implicit select: */
    unsigned        implicit:1;
    unsigned        reasoning:1;
    unsigned        wrapper:1;  /* a call of the call wrapper */
} ts_rs_item_t;


typedef struct {
    char           *id;         /* the response's: the first call's */
    char           *last;       /* the current call's response id */
    char           *resume;     /* the one the next call goes on from */
    cJSON          *prev;       /* the first call's previous_response_id */
    unsigned        stored:1;   /* the upstream keeps each call's response:
                                   the client goes on from the last */
    unsigned        spent;      /* searches answered as spent (stored) */
    unsigned        opened:1;   /* the client has its response.created */
    cJSON          *head;       /* a stored stream's held events: the
                                   call's created and in_progress ... */
    cJSON          *early;      /* ... and what came before the client's
                                   first item but reasoning, as
                                   [name, event] pairs */
    cJSON          *usage;      /* summed over the calls */
    cJSON          *output;     /* the client's items, every call's */
    long            seq;        /* the client's next sequence_number */
    long            nout;       /* the client's output items so far */

    /* the current answer */
    ts_rs_item_t    items[TS_LOOP_BLOCKS_MAX];
    size_t          nitems;
    unsigned        held;
    unsigned        wrapped;    /* calls of the call wrapper */
    long            nclient;    /* calls the client runs */
    cJSON          *terminal;   /* its response.completed (or other end) */
    char            status[32];
    int             errored;

    char           *body;       /* the client's body, when the first
                                   call's request indexes a copy of it
                                   that leaves with that request */
} ts_rs_loop_t;


static void
ts_rs_answer_reset(ts_rs_loop_t *st)
{
    size_t  i;

    for (i = 0; i < st->nitems; i++) {
        cJSON_Delete(st->items[i].item);
        free(st->items[i].error);
        ts_buf_free(&st->items[i].args);
    }

    st->nitems = 0;
    st->held = 0;
    st->wrapped = 0;
    st->nclient = 0;
    cJSON_Delete(st->terminal);
    st->terminal = NULL;
    st->status[0] = '\0';
    st->errored = 0;
}


static void
ts_rs_free(ts_loop_t *lp)
{
    ts_rs_loop_t  *st = lp->format;

    if (st == NULL) {
        return;
    }

    ts_rs_answer_reset(st);
    cJSON_Delete(st->usage);
    cJSON_Delete(st->output);
    cJSON_Delete(st->prev);
    cJSON_Delete(st->head);
    cJSON_Delete(st->early);
    free(st->id);
    free(st->body);
    free(st->last);
    free(st->resume);
    free(st);
    lp->format = NULL;
}


static void
ts_rs_start(ts_loop_t *lp)
{
    ts_rs_answer_reset(lp->format);
}


static ts_rs_item_t *
ts_rs_item_find(ts_rs_loop_t *st, long index)
{
    size_t  i;

    for (i = 0; i < st->nitems; i++) {
        if (st->items[i].index == index) {
            return &st->items[i];
        }
    }

    return NULL;
}


/* 1 for an item the client runs: its search cannot wait for it */
static int
ts_rs_client_call(const char *type)
{
    static const char *const  calls[] = {
        "function_call", "custom_tool_call", "computer_call",
        "local_shell_call", "shell_call", "apply_patch_call"
    };
    size_t                    i;

    for (i = 0; type != NULL && i < sizeof(calls) / sizeof(calls[0]); i++) {
        if (strcmp(type, calls[i]) == 0) {
            return 1;
        }
    }

    return 0;
}


/*
 * The name a function_call calls in the request's index: a namespace
 * member's qualified by its namespace (mcp__memory__create_entities),
 * as the request side names members; NULL when it has none.  The caller
 * frees it.
 */
static char *
ts_rs_called(const cJSON *item)
{
    const char  *name, *ns;
    size_t       nlen, slen;
    char        *q;

    name = cJSON_GetStringValue(cJSON_GetObjectItem(item, "name"));
    ns = cJSON_GetStringValue(cJSON_GetObjectItem(item, "namespace"));

    if (name == NULL) {
        return NULL;
    }

    nlen = strlen(name);
    slen = ns ? strlen(ns) + 2 : 0;
    q = malloc(slen + nlen + 1);

    if (q != NULL) {
        if (ns != NULL) {
            memcpy(q, ns, slen - 2);
            memcpy(q + slen - 2, "__", 2);
        }

        memcpy(q + slen, name, nlen + 1);
    }

    return q;
}


/* an output item seen first: a held call, or the client's */
static ts_rs_item_t *
ts_rs_item_add(ts_loop_t *lp, long index, const cJSON *item)
{
    ts_rs_loop_t  *st = lp->format;
    ts_rs_item_t  *it;
    const char    *type;
    char          *name;

    if (st->nitems == TS_LOOP_BLOCKS_MAX) {
        lp->ans.broken = 1;
        return NULL;
    }

    it = &st->items[st->nitems++];
    memset(it, 0, sizeof(ts_rs_item_t));
    it->index = index;
    it->client = -1;
    ts_buf_init(&it->args, TS_LOOP_EVENT_MAX);

    type = cJSON_GetStringValue(cJSON_GetObjectItem(item, "type"));
    name = ts_rs_called(item);
    it->reasoning = type != NULL && strcmp(type, "reasoning") == 0;

    if (type != NULL && strcmp(type, "function_call") == 0 && name != NULL) {
        if (strcmp(name, lp->tool) == 0) {
            it->search = 1;

        } else if (lp->rq.load_wrapper && strcmp(name, TS_WRAPPER_NAME) == 0) {
            /* numbered when it ends: ts_rs_wrapper_end() */
            it->wrapper = 1;
            st->wrapped++;
            free(name);
            return it;

        } else if (ts_loop_unloaded(lp, name) >= 0) {
            it->search = 1;
            it->implicit = 1;
        }
    }

    free(name);

    if (it->search) {
        st->held++;

    } else {
        it->client = st->nout++;
        st->nclient += ts_rs_client_call(type);
    }

    return it;
}


static void
ts_rs_usage(ts_rs_loop_t *st, const cJSON *u)
{
    if (!cJSON_IsObject(u)) {
        return;
    }

    if (st->usage == NULL) {
        st->usage = cJSON_CreateObject();
    }

    if (st->usage != NULL) {
        ts_loop_usage_sum(st->usage, u);
    }
}


/* a member put in an object, in its place if it has one; else freed */
static void
ts_rs_put(cJSON *obj, const char *key, cJSON *v)
{
    if (!cJSON_IsObject(obj) || v == NULL) {
        cJSON_Delete(v);
        return;
    }

    if (cJSON_GetObjectItemCaseSensitive(obj, key) != NULL) {
        cJSON_ReplaceItemInObjectCaseSensitive(obj, key, v);

    } else {
        cJSON_AddItemToObject(obj, key, v);
    }
}


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
static int
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
static int
ts_rs_holding(const ts_loop_t *lp)
{
    const ts_rs_loop_t  *st = lp->format;

    return st->stored && lp->sse && !st->opened;
}


/*
 * A call's response begins: the first call's id is the client's, unless
 * the upstream keeps the calls, where the client goes on from the last
 */
static void
ts_rs_first(ts_rs_loop_t *st, const cJSON *resp)
{
    const char  *id;

    id = cJSON_GetStringValue(cJSON_GetObjectItem(resp, "id"));

    if (id == NULL) {
        return;
    }

    if (st->id == NULL) {
        st->id = strdup(id);
        st->prev = cJSON_Duplicate(cJSON_GetObjectItem(resp,
                                                 "previous_response_id"), 1);
    }

    free(st->last);
    st->last = strdup(id);
}


/*
 * A wrapper call's item when it is done, checked: a valid one becomes
 * the client's function_call of its function (the same ids, the
 * arguments the wrapper's) under the client's next output_index (1); an
 * invalid one is held with why, answered in the loop (0)
 */
static int
ts_rs_wrapper_end(ts_loop_t *lp, ts_rs_item_t *it)
{
    ts_rs_loop_t       *st = lp->format;
    ts_wrapper_call_t   call;
    ts_buf_t            err, args;
    const char         *s;
    cJSON              *name;

    s = cJSON_GetStringValue(cJSON_GetObjectItem(it->item, "arguments"));
    s = s ? s : "";
    ts_buf_init(&err, 0);

    if (ts_wrapper_check(&lp->rq.ix, s, strlen(s), &call, &err) == 0) {
        ts_buf_free(&err);
        ts_buf_init(&args, 0);
        name = cJSON_ParseWithLength(call.buf + call.name.off, call.name.len);

        if (ts_buf_add(&args, call.buf + call.args.off, call.args.len) != 0
            || ts_buf_add(&args, "", 1) != 0 || !cJSON_IsString(name))
        {
            cJSON_Delete(name);
            ts_buf_free(&args);
            lp->ans.broken = 1;
            return 0;
        }

        ts_rs_put(it->item, "arguments", cJSON_CreateString(args.p));
        ts_rs_put(it->item, "name", name);
        ts_buf_free(&args);

        it->client = st->nout++;
        st->nclient++;

        if (st->output != NULL) {
            cJSON_AddItemToArray(st->output, cJSON_Duplicate(it->item, 1));
        }

        return 1;
    }

    /* held as a search is: the answer's end decides */
    it->search = 1;
    st->held++;

    if (ts_buf_add(&err, "", 1) == 0) {
        it->error = err.p;

    } else {
        ts_buf_free(&err);
        lp->ans.broken = 1;
    }

    return 0;
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


static int
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


/* 1 when the answer asks only for searches, which may run */
static int
ts_rs_goes_on(const ts_loop_t *lp)
{
    const ts_rs_loop_t  *st = lp->format;
    unsigned             max;

    max = lp->in.policy->max_searches;

    return st->held > 0 && st->nclient == 0 && !lp->ans.broken
           && strcmp(st->status, "completed") == 0 && lp->refusals < max
           && (lp->searches + st->held <= max
               || (st->stored && st->spent < TS_RS_SPENT_MAX));
}


/* a search's function_call_output: what it loaded, or what exists */
typedef struct {
    ts_buf_t          *turns;
    const char        *call_id;
    const ts_index_t  *defs;        /* the call wrapper's definitions */
} ts_rs_found_t;


/* a call's function_call_output begun, after a comma */
static void
ts_rs_output_open(ts_buf_t *turns, const char *call_id)
{
    ts_buf_str(turns, ",{\"type\":\"function_call_output\",\"call_id\":\"");
    ts_buf_escaped(turns, call_id, strlen(call_id));
    ts_buf_str(turns, "\",\"output\":\"");
}


/* a call's function_call_output saying a text */
static void
ts_rs_output(ts_buf_t *turns, const char *call_id, const char *text)
{
    ts_rs_output_open(turns, call_id);
    ts_buf_escaped(turns, text, strlen(text));
    ts_buf_str(turns, "\"}");
}


static int
ts_rs_found(void *arg, const ts_name_t *names, size_t n,
    const ts_buf_t *servers)
{
    ts_rs_found_t  *f = arg;

    ts_rs_output_open(f->turns, f->call_id);
    ts_gateway_found_text(f->turns, names, n, 1, servers, f->defs);
    ts_buf_str(f->turns, "\"}");

    return f->turns->failed ? -1 : 0;
}


/*
 * The search a held call asks for, as a call of the search function: an
 * implicit one's select: of its function.  Arguments that are no object
 * search for nothing.
 */
static char *
ts_rs_input(const ts_loop_t *lp, ts_rs_item_t *it)
{
    cJSON       *args;
    const char  *s;
    char        *q, *name;
    ts_buf_t     b;
    ts_val_t     v;

    args = cJSON_GetObjectItem(it->item, "arguments");
    s = cJSON_GetStringValue(args);
    name = it->implicit ? ts_rs_called(it->item) : NULL;

    if (name != NULL) {
        ts_buf_init(&b, 0);
        ts_buf_str(&b, "{\"query\":\"select:");
        ts_buf_escaped(&b, name, strlen(name));
        ts_buf_add(&b, "\"}", 3);
        free(name);

        if (b.failed) {
            ts_buf_free(&b);
            return NULL;
        }

        /* the upstream sees a call of the search function */
        ts_rs_put(it->item, "name", cJSON_CreateString(lp->tool));
        ts_rs_put(it->item, "arguments", cJSON_CreateString(b.p));
        cJSON_DeleteItemFromObjectCaseSensitive(it->item, "namespace");
        return b.p;
    }

    if (s == NULL) {
        if (ts_buf_space(&it->args, 1) != 0) {
            return NULL;
        }

        it->args.p[it->args.len] = '\0';
        s = it->args.p;
    }

    if (ts_value_parse(s, strlen(s), &v) != TS_OK || v.kind != TS_OBJECT) {
        s = "{}";
    }

    q = strdup(s);

    return q;
}


/* a reasoning item without encrypted content: nothing to send back */
static int
ts_rs_unsendable(const cJSON *item)
{
    const char  *type;

    type = cJSON_GetStringValue(cJSON_GetObjectItem(item, "type"));

    return type != NULL && strcmp(type, "reasoning") == 0
           && !cJSON_IsString(cJSON_GetObjectItem(item, "encrypted_content"));
}


/* runs the answer's searches; 1 when the loop goes on */
static int
ts_rs_searches(ts_loop_t *lp)
{
    ts_rs_loop_t   *st = lp->format;
    ts_rs_found_t   f;
    ts_rs_item_t   *it;
    ts_buf_t        turns;
    const char     *call_id;
    char           *input, *s;
    size_t          i;
    int             ok, spent;

    ts_buf_init(&turns, 0);
    ok = !st->stored || st->last != NULL;
    spent = lp->searches + st->held > lp->in.policy->max_searches;
    st->spent += spent;

    /*
     * With store false the answer's items go back to it as the upstream
     * gave them, but for their ids: an item id names nothing the
     * upstream kept (OpenAI refuses it), so they go without, as clients
     * send them; a reasoning item without its encrypted content cannot
     * go at all.  A stored answer the upstream holds: the next call goes
     * on from it with the searches' outputs alone.
     */
    for (i = 0; ok && i < st->nitems; i++) {
        it = &st->items[i];
        input = it->search ? ts_rs_input(lp, it) : NULL;
        call_id = cJSON_GetStringValue(cJSON_GetObjectItem(it->item,
                                                           "call_id"));
        cJSON_DeleteItemFromObjectCaseSensitive(it->item, "id");
        s = it->item == NULL || ts_rs_unsendable(it->item) ? NULL
            : cJSON_PrintUnformatted(it->item);

        ok = (s != NULL || ts_rs_unsendable(it->item))
             && (!it->search || (input != NULL && call_id));

        /* a stored call's items the upstream holds: not sent again */
        if (ok && s != NULL && !st->stored) {
            ts_buf_str(&turns, turns.len ? "," : "");
            ts_buf_str(&turns, s);
        }

        if (ok && it->error != NULL) {
            /* an invalid wrapper call: why, for the model to correct it */
            ts_rs_output_open(&turns, call_id);
            ts_buf_str(&turns, it->error);
            ts_buf_str(&turns, "\"}");
            lp->refusals++;

        } else if (ok && it->search && spent) {
            ts_rs_output(&turns, call_id, ts_rs_spent_output);

        } else if (ok && it->search) {
            f.turns = &turns;
            f.call_id = call_id;
            f.defs = lp->rq.load_wrapper ? &lp->rq.ix : NULL;
            ok = ts_loop_search(lp, input, ts_rs_found, &f) == 0;
        }

        free(s);
        free(input);
    }

    ok = ok && !turns.failed && turns.len > 0;

    if (ok && st->stored) {
        /*
         * The next call goes on from this one's response, with the
         * searches' outputs alone (each written after a comma)
         */
        ts_buf_reset(&lp->turns);
        free(st->resume);
        st->resume = strdup(st->last);
        lp->in.resume = st->resume;
        ok = st->resume != NULL
             && ts_buf_add(&lp->turns, turns.p + 1, turns.len - 1) == 0;

    } else if (ok) {
        ts_buf_str(&lp->turns, lp->turns.len ? "," : "");
        ok = ts_buf_add(&lp->turns, turns.p, turns.len) == 0;
    }

    ts_buf_free(&turns);

    return ok;
}


/* the answer's items from a JSON response's output */
static void
ts_rs_json_items(ts_loop_t *lp, const cJSON *output)
{
    ts_rs_loop_t  *st = lp->format;
    ts_rs_item_t  *it;
    const cJSON   *item;
    long           n;

    n = 0;

    cJSON_ArrayForEach(item, output) {
        it = ts_rs_item_add(lp, n++, item);

        if (it == NULL) {
            return;
        }

        it->item = cJSON_Duplicate(item, 1);

        if (it->wrapper) {
            (void) ts_rs_wrapper_end(lp, it);

        } else if (!it->search && st->output != NULL) {
            cJSON_AddItemToArray(st->output, cJSON_Duplicate(item, 1));
        }
    }
}


/* a message item saying the searches are spent */
static cJSON *
ts_rs_spent_item(void)
{
    cJSON  *m, *content, *part;

    m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "type", "message");
    cJSON_AddStringToObject(m, "id", "msg_toolsearch_spent");
    cJSON_AddStringToObject(m, "status", "completed");
    cJSON_AddStringToObject(m, "role", "assistant");
    content = cJSON_AddArrayToObject(m, "content");
    part = cJSON_CreateObject();
    cJSON_AddItemToArray(content, part);
    cJSON_AddStringToObject(part, "type", "output_text");
    cJSON_AddStringToObject(part, "text", ts_loop_openai_spent);
    cJSON_AddArrayToObject(part, "annotations");

    return m;
}


/*
 * The client's response: its id (the first call's; the last call's,
 * which holds the whole exchange, where the upstream keeps them, with
 * the client's previous_response_id), every call's output, usage summed
 */
static void
ts_rs_response(ts_rs_loop_t *st, cJSON *resp)
{
    if (st->stored) {
        ts_rs_put(resp, "previous_response_id", cJSON_Duplicate(st->prev, 1));

    } else if (st->id != NULL) {
        ts_rs_put(resp, "id", cJSON_CreateString(st->id));
    }

    if (st->output != NULL) {
        ts_rs_put(resp, "output", cJSON_Duplicate(st->output, 1));
    }

    if (st->usage != NULL && cJSON_GetObjectItem(resp, "usage") != NULL) {
        ts_rs_put(resp, "usage", cJSON_Duplicate(st->usage, 1));
    }
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
static void
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


static ts_loop_next_t
ts_rs_end(ts_loop_t *lp, ts_buf_t *out)
{
    static const ts_loop_error_t  early = {
        0, NULL, 0, "the upstream stream ended early"
    };

    ts_rs_loop_t  *st = lp->format;
    cJSON         *j, *output;

    j = NULL;

    if (!lp->sse) {
        j = ts_loop_parse(lp->pending.p, lp->pending.len);
        output = cJSON_GetObjectItem(j, "output");

        if (!cJSON_IsArray(output)
            || !cJSON_IsString(cJSON_GetObjectItem(j, "status")))
        {
            cJSON_Delete(j);
            ts_buf_add(out, lp->pending.p, lp->pending.len);
            return TS_LOOP_DONE;
        }

        ts_rs_first(st, j);
        ts_rs_usage(st, cJSON_GetObjectItem(j, "usage"));
        strncpy(st->status, cJSON_GetObjectItem(j, "status")->valuestring,
                sizeof(st->status) - 1);
        ts_rs_json_items(lp, output);
    }

    if (lp->sse && (st->errored || st->terminal == NULL)) {
        if (ts_rs_holding(lp)) {
            (void) ts_rs_open(st, out);
        }

        /* an unfinished event passes where the stream ends with it */
        ts_buf_add(out, lp->pending.p, lp->pending.len);

        if (!st->errored && lp->calls > 1) {
            ts_loop_fail(lp, 1, &early, out);
        }

        return TS_LOOP_DONE;
    }

    if (ts_rs_goes_on(lp) && ts_rs_searches(lp)) {
        cJSON_Delete(j);
        return TS_LOOP_AGAIN;
    }

    if (lp->sse) {
        ts_rs_stream_end(lp, out);
        return TS_LOOP_DONE;
    }

    if (lp->calls == 1 && st->held == 0 && st->wrapped == 0) {
        ts_buf_add(out, lp->pending.p, lp->pending.len);

    } else {
        if (st->held && st->nclient == 0 && st->output != NULL) {
            cJSON_AddItemToArray(st->output, ts_rs_spent_item());
        }

        ts_rs_response(st, j);
        ts_loop_openai_print(out, "", j, "");
    }

    cJSON_Delete(j);

    return TS_LOOP_DONE;
}


/*
 * A failed call's error for the client: the upstream's own error
 * document ({"error": {…}}) where it gave one, else one made from the
 * status; in a stream, an error event (type, code, message, param and
 * the next sequence_number), which ends it.
 */
static void
ts_rs_fail(ts_loop_t *lp, int sse, const ts_loop_error_t *e, ts_buf_t *out)
{
    ts_rs_loop_t  *st = lp->format;
    cJSON         *doc, *err, *ev;
    const char    *code;
    char          *s;

    ts_buf_reset(&lp->pending);
    lp->seen = 0;
    st->errored = 1;

    doc = ts_loop_openai_error(e);
    err = cJSON_GetObjectItemCaseSensitive(doc, "error");

    if (sse) {
        if (ts_rs_holding(lp)) {
            (void) ts_rs_open(st, out);
        }

        ev = cJSON_CreateObject();
        cJSON_AddStringToObject(ev, "type", "error");
        code = cJSON_GetStringValue(cJSON_GetObjectItem(err, "code"));
        code = code ? code : cJSON_GetStringValue(cJSON_GetObjectItem(err,
                                                                    "type"));
        cJSON_AddStringToObject(ev, "code", code ? code : "server_error");
        s = cJSON_GetStringValue(cJSON_GetObjectItem(err, "message"));
        cJSON_AddStringToObject(ev, "message", s ? s : e->message);
        cJSON_AddNullToObject(ev, "param");
        cJSON_AddNumberToObject(ev, "sequence_number", (double) st->seq++);

        if (ts_loop_emit_json(out, "error", ev) != 0) {
            out->failed = 1;
        }

        cJSON_Delete(ev);
        cJSON_Delete(doc);
        return;
    }

    ts_loop_openai_print(out, "", doc, "");
    cJSON_Delete(doc);
}


static const ts_loop_dialect_t  ts_rs_dialect = {
    ts_responses_process, ts_rs_start, ts_rs_event, ts_rs_end, ts_rs_fail,
    ts_rs_free
};


ts_loop_t *
ts_responses_loop_create(const ts_input_t *in, const ts_request_t *rq)
{
    ts_loop_t     *lp;
    ts_rs_loop_t  *st;
    const char    *body;

    st = calloc(1, sizeof(ts_rs_loop_t));

    if (st == NULL || (st->output = cJSON_CreateArray()) == NULL) {
        free(st);
        return NULL;
    }

    body = rq->ix.buf;

    /* the names of namespace members: rq, and its copy, may go first */
    if (rq->qualified != NULL) {
        st->body = malloc(rq->ix.len ? rq->ix.len : 1);
        body = st->body;

        if (body != NULL) {
            memcpy(st->body, rq->ix.buf, rq->ix.len);
        }
    }

    lp = body ? ts_loop_create_as(in, body, rq->ix.len, &ts_rs_dialect,
                                  rq->ix.ntools)
              : NULL;
    if (lp == NULL) {
        cJSON_Delete(st->output);
        free(st->body);
        free(st);
        return NULL;
    }

    lp->format = st;
    st->stored = ts_responses_stored(rq);

    return lp;
}
