/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

#include "loop/ts_loop_state.h"
#include "messages/ts_history.h"
#include "rewrite/ts_wrapper.h"


static void
ts_loop_json_set_num(cJSON *obj, const char *key, double v)
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
void
ts_loop_usage_write(const ts_loop_t *lp, cJSON *usage)
{
    cJSON               *server;
    unsigned long long   n;
    int                  i;

    for (i = 0; i < TS_USAGE_N; i++) {
        n = lp->total[i] + lp->ans.usage[i];

        if (n || cJSON_GetObjectItemCaseSensitive(usage,
                                                  ts_loop_usage_keys[i]))
        {
            ts_loop_json_set_num(usage, ts_loop_usage_keys[i], (double) n);
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

    ts_loop_json_set_num(server, "tool_search_requests", lp->searches);
}


int
ts_loop_emit_json(ts_buf_t *out, const char *name, cJSON *j)
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


/* forwards an event of a block the client sees, under its own index */
int
ts_loop_forward(const ts_lblock_t *b, const ts_sse_event_t *ev,
    ts_buf_t *out)
{
    if (b->client == b->index) {
        return ts_buf_add(out, ev->raw, ev->raw_len);
    }

    return ts_sse_reindex(ev, b->client, out);
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
    ts_buf_str(out, b->wrapper ? TS_WRAPPER_NAME : lp->tool);
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


void
ts_loop_found(ts_buf_t *content, const ts_buf_t *refs)
{
    ts_buf_str(content, "{\"type\":\"tool_search_tool_search_result\","
                        "\"tool_references\":[");
    ts_buf_add(content, refs->p, refs->len);
    ts_buf_str(content, "]}");
}


/*
 * A search past the budget does not run.  A call of a tool never loaded
 * gets the hint of docs/spec/deferral.md; the next request's history
 * carries the message to the model as the call's result.
 */
void
ts_loop_spent(const ts_loop_t *lp, const ts_lblock_t *b, unsigned max,
    ts_buf_t *content)
{
    ts_val_t   in;
    char      *q;

    ts_buf_str(content, "{\"type\":\"tool_search_tool_result_error\","
                        "\"error_code\":\"too_many_requests\","
                        "\"error_message\":\"");

    if (b->implicit) {
        (void) ts_value_parse(b->input, strlen(b->input), &in);
        q = ts_loop_query(b->input, &in);
        ts_buf_str(content, "This tool's schema was not sent to the API: "
                            "it was not in the discovered-tool set. Use ");
        ts_buf_str(content, lp->tool);
        ts_buf_str(content, " to load it first: ");
        ts_buf_str(content, lp->tool);
        ts_buf_str(content, "({ query: '");
        ts_buf_escaped(content, q ? q : "", q ? strlen(q) : 0);
        ts_buf_str(content, "' })");
        free(q);

    } else {
        ts_buf_str(content, "This search did not run: this request's "
                            "budget of ");
        ts_buf_num(content, max);
        ts_buf_str(content, " searches was spent. Search again.");
    }

    ts_buf_str(content, "\"}");
}


/*
 * A search call whose input is no object with a query does not run; the
 * next request's history carries the message to the model as the call's
 * result, and this answer ends with pause_turn.
 */
void
ts_loop_refused(const ts_loop_t *lp, ts_buf_t *content)
{
    ts_buf_str(content, "{\"type\":\"tool_search_tool_result_error\","
                        "\"error_code\":\"invalid_tool_input\","
                        "\"error_message\":\"This search did not run: its "
                        "input was not a JSON object with a query string. "
                        "Call ");
    ts_buf_str(content, lp->tool);
    ts_buf_str(content, " with {\\\"query\\\": \\\"select:name\\\"} or "
                        "keywords.\"}");
}


void
ts_loop_sse_block_event(ts_buf_t *out, const char *name, long index,
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
void
ts_loop_client_search(ts_loop_t *lp, const ts_lblock_t *b,
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
    ts_loop_sse_block_event(out, "content_block_start", k,
                            ",\"content_block\":", &blk);

    ts_buf_reset(&blk);
    ts_buf_str(&blk, "{\"type\":\"input_json_delta\",\"partial_json\":\"");
    ts_buf_escaped(&blk, b->input, strlen(b->input));
    ts_buf_str(&blk, "\"");
    ts_loop_sse_block_event(out, "content_block_delta", k, ",\"delta\":", &blk);
    ts_loop_sse_block_event(out, "content_block_stop", k, "", NULL);

    ts_buf_reset(&blk);
    ts_result_block(b, content, &blk);
    blk.len--;
    ts_loop_sse_block_event(out, "content_block_start", k + 1,
                            ",\"content_block\":", &blk);
    ts_loop_sse_block_event(out, "content_block_stop", k + 1, "", NULL);

    lp->ans.broken |= blk.failed;
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
int
ts_loop_add_turns(ts_loop_t *lp, const ts_buf_t *results, int referenced)
{
    ts_buf_t     *t;
    ts_lblock_t  *b;
    size_t        i;
    int           rc;

    t = &lp->turns;
    ts_buf_str(t, t->len ? ",{\"role\":\"assistant\",\"content\":["
                         : "{\"role\":\"assistant\",\"content\":[");

    for (i = 0; i < lp->ans.nblocks; i++) {
        b = &lp->ans.blocks[i];

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


/* the last answer with the loop's content, stop reason and usage */
static int
ts_loop_json_final(ts_loop_t *lp, const char *stop_reason, ts_buf_t *out)
{
    ts_val_t    m[TS_MSG_N], *content, *stop, *usage;
    ts_edits_t  e;
    ts_buf_t    tmp;
    cJSON      *u;
    char       *s;
    size_t      len;
    int         rc;

    if (ts_loop_json_members(lp, m) != 0) {
        return ts_buf_add(out, lp->pending.p, lp->pending.len);
    }

    content = &m[TS_MSG_CONTENT];
    stop = &m[TS_MSG_STOP];
    usage = &m[TS_MSG_USAGE];

    ts_edits_init(&e);
    ts_buf_init(&tmp, 0);

    ts_buf_str(&tmp, "[");
    ts_buf_add(&tmp, lp->content.p, lp->content.len);
    ts_buf_str(&tmp, "]");
    ts_edit_replace(&e, content->off, content->len, tmp.p, tmp.len);

    if (stop_reason != NULL) {
        ts_buf_reset(&tmp);
        ts_buf_str(&tmp, "\"");
        ts_buf_str(&tmp, stop_reason);
        ts_buf_str(&tmp, "\"");
        ts_edit_replace(&e, stop->off, stop->len, tmp.p, tmp.len);
    }

    u = cJSON_ParseWithLength(lp->pending.p + usage->off, usage->len);
    s = NULL;

    if (cJSON_IsObject(u)) {
        ts_loop_usage_write(lp, u);
        s = cJSON_PrintUnformatted(u);
    }

    if (s != NULL) {
        ts_edit_replace(&e, usage->off, usage->len, s, strlen(s));
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
ts_loop_next_t
ts_loop_final(ts_loop_t *lp, const char *stop_reason, ts_buf_t *out)
{
    cJSON  *d, *delta, *usage;

    if (!lp->sse) {
        (void) ts_loop_json_final(lp, stop_reason, out);
        ts_loop_totals_add(lp);
        return TS_LOOP_DONE;
    }

    d = lp->ans.delta ? lp->ans.delta
                      : cJSON_Parse("{\"type\":\"message_delta\","
                                    "\"delta\":{\"stop_reason\":null,"
                                    "\"stop_sequence\":null},"
                                    "\"usage\":{}}");
    lp->ans.delta = d;
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

    ts_loop_usage_write(lp, usage);
    ts_loop_totals_add(lp);

    if (d != NULL) {
        ts_loop_emit_json(out, "message_delta", d);
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


/*
 * The gateway cannot follow the answer (an event over TS_LOOP_EVENT_MAX,
 * an event of a later call it cannot place): the client gets an error
 * event after the events so far, no further call is made, and the rest
 * of the answer is read and dropped.
 */
void
ts_loop_unreadable(ts_loop_t *lp, ts_buf_t *out)
{
    static const ts_loop_error_t  e = {
        0, NULL, 0, TS_LOOP_UNREADABLE
    };

    lp->ans.broken = 1;
    lp->ans.unread = 1;
    ts_loop_fail(lp, 1, &e, out);
}


void
ts_loop_fail(ts_loop_t *lp, int sse, const ts_loop_error_t *e,
    ts_buf_t *out)
{
    cJSON  *doc;
    char   *s;

    if (lp->dialect != NULL) {
        lp->dialect->fail(lp, sse, e, out);
        return;
    }

    /* an unfinished event would swallow the error event's first line */
    ts_buf_reset(&lp->pending);
    lp->seen = 0;
    lp->ans.errored = 1;

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


/* adds a usage object's numbers to the sum, nested objects too */
void
ts_loop_usage_sum(cJSON *sum, const cJSON *u)
{
    const cJSON  *it;
    cJSON        *s;

    cJSON_ArrayForEach(it, u) {
        s = cJSON_GetObjectItemCaseSensitive(sum, it->string);

        if (cJSON_IsNumber(it)) {
            if (cJSON_IsNumber(s)) {
                cJSON_SetNumberValue(s, s->valuedouble + it->valuedouble);

            } else if (s == NULL) {
                cJSON_AddNumberToObject(sum, it->string, it->valuedouble);
            }

        } else if (cJSON_IsObject(it)) {
            if (s == NULL) {
                s = cJSON_AddObjectToObject(sum, it->string);
            }

            if (cJSON_IsObject(s)) {
                ts_loop_usage_sum(s, it);
            }
        }
    }
}


/* the error type OpenAI's APIs give a status */
static const char *
ts_loop_openai_type(unsigned status)
{
    if (status == 401) {
        return "authentication_error";
    }

    if (status == 429) {
        return "rate_limit_exceeded";
    }

    return (status >= 400 && status < 500) ? "invalid_request_error"
                                             : "server_error";
}


cJSON *
ts_loop_openai_error(const ts_loop_error_t *e)
{
    cJSON  *doc, *err;

    doc = e->body ? cJSON_ParseWithLength(e->body, e->len) : NULL;

    if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(doc, "error"))) {
        return doc;
    }

    cJSON_Delete(doc);
    doc = cJSON_CreateObject();
    err = cJSON_AddObjectToObject(doc, "error");
    cJSON_AddStringToObject(err, "message", e->message);
    cJSON_AddStringToObject(err, "type", ts_loop_openai_type(e->status));
    cJSON_AddNullToObject(err, "param");
    cJSON_AddNullToObject(err, "code");

    return doc;
}


const char  ts_loop_openai_spent[] =
    "(The gateway's tool searches for this answer are spent. Ask again "
    "to continue.)";


void
ts_loop_openai_print(ts_buf_t *out, const char *before, const cJSON *j,
    const char *after)
{
    char  *s;

    s = j ? cJSON_PrintUnformatted(j) : NULL;

    if (s == NULL) {
        out->failed = 1;
        return;
    }

    ts_buf_str(out, before);
    ts_buf_str(out, s);
    ts_buf_str(out, after);
    free(s);
}
