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
 *
 * This file: the loop's state, the answer's output items (a wrapper
 * call's checked), a JSON answer, the answer's end and a failed call's
 * error.  The events of a stream are ts_responses_stream.c's; the
 * searches run and the next call's input, ts_responses_next.c's.
 */

#include <stdlib.h>
#include <string.h>

#include "scan/ts_str.h"
#include "rewrite/ts_gateway.h"
#include "rewrite/ts_wrapper.h"
#include "loop/ts_loop_state.h"
#include "responses/ts_responses.h"
#include "responses/ts_responses_loop.h"


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


ts_rs_item_t *
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
char *
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
ts_rs_item_t *
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


void
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
void
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
 * A call's response begins: the first call's id is the client's, unless
 * the upstream keeps the calls, where the client goes on from the last
 */
void
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
int
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
cJSON *
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
void
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
