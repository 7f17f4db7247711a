/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Chat Completions, request side.  The body is read into the shared
 * index: a tool's name, description and parameters are its function's,
 * so that the deferral rules, the MCP naming shapes, the facts and the
 * search run over it as over a Messages request.  The upstream then sees
 * the tools that stay loaded in their places, the gateway's search
 * function, the tools loaded on demand after it (found by the loop's
 * searches, called in the conversation, or named by tool_choice), and the
 * announcement of what the search can load at the end of the first
 * system message.
 */

#include <stdlib.h>
#include <string.h>

#include "scan/ts_scan.h"
#include "scan/ts_str.h"
#include "rewrite/ts_defer.h"
#include "rewrite/ts_facts.h"
#include "rewrite/ts_format.h"
#include "rewrite/ts_gateway.h"
#include "rewrite/ts_wrapper.h"
#include "chat/ts_chat.h"


/* the top-level members read */
enum {
    TS_CHAT_MODEL = 0,
    TS_CHAT_MESSAGES,
    TS_CHAT_TOOLS,
    TS_CHAT_STREAM,
    TS_CHAT_TOOL_CHOICE,
    TS_CHAT_N,
    TS_CHAT_KEYS
};

static const char *const  ts_chat_keys[TS_CHAT_KEYS] = {
    "model", "messages", "tools", "stream", "tool_choice", "n"
};

/* the shared index's places of the members it keeps */
static const int  ts_chat_top[TS_CHAT_TOOL_CHOICE] = {
    TS_TOP_MODEL, TS_TOP_MESSAGES, TS_TOP_TOOLS, TS_TOP_STREAM
};


/* a JSON string value compared with len bytes at s */
static int
ts_chat_is(const char *buf, const ts_val_t *v, const char *s, size_t len)
{
    if (v->kind != TS_STRING) {
        return 0;
    }

    if (v->esc) {
        return ts_str_eq_escaped(buf, v, s, len);
    }

    return v->len - 2 == len && memcmp(buf + v->off + 1, s, len) == 0;
}


/*
 * A function tool: {"type":"function","function":{"name",
 * "description","parameters",…}}, its type and function read with the
 * array.  Other tools (custom) keep no name: the rules never defer them.
 */
static void
ts_chat_tool(const char *buf, const ts_val_t *item, const ts_val_t *m,
    ts_tool_t *t)
{
    static const char *const  keys[] = { "name", "description",
                                         "parameters" };
    ts_val_t                  v[3];

    memset(t, 0, sizeof(ts_tool_t));
    t->elem = *item;

    if (!ts_str_eq(buf, &m[0], "function") || m[1].kind != TS_OBJECT
        || ts_object_members(buf, &m[1], keys, 3, v) != TS_OK
        || v[0].kind != TS_STRING)
    {
        return;
    }

    t->name = v[0];
    t->description = v[1];
    t->input_schema = v[2];
}


static ts_status_t
ts_chat_tools(ts_index_t *ix, const ts_val_t *tools)
{
    static const char *const  keys[] = { "type", "function" };
    ts_val_t                 *items, *m;
    ts_status_t               st;
    size_t                    i, n;

    st = ts_items_members(ix->buf, tools, keys, 2, &items, &m, &n);
    if (st != TS_OK) {
        return st;
    }

    ix->tools = calloc(n ? n : 1, sizeof(ts_tool_t));

    for (i = 0; ix->tools != NULL && i < n; i++) {
        ts_chat_tool(ix->buf, &items[i], &m[i * 2], &ix->tools[i]);
    }

    ix->ntools = ix->tools ? n : 0;
    free(items);
    free(m);

    return ix->tools ? TS_OK : TS_ERR_NOMEM;
}


/*
 * An assistant message's tool calls, as the index's blocks: each call's
 * id and its function's name, and the message they are of
 */
static ts_status_t
ts_chat_calls(ts_index_t *ix, const ts_val_t *calls, uint32_t msg,
    size_t *cap)
{
    static const char *const  keys[] = { "id", "function" };
    ts_val_t                 *items, *m;
    ts_block_t               *b;
    ts_status_t               st;
    size_t                    i, n;

    st = ts_items_members(ix->buf, calls, keys, 2, &items, &m, &n);

    for (i = 0; st == TS_OK && i < n; i++) {
        b = ts_array_grow(ix->blocks, cap, ix->nblocks + 1,
                          sizeof(ts_block_t), 16);
        if (b == NULL) {
            st = TS_ERR_NOMEM;
            break;
        }

        ix->blocks = b;
        b = &ix->blocks[ix->nblocks++];
        memset(b, 0, sizeof(ts_block_t));
        b->elem = items[i];
        b->id = m[i * 2];
        b->message = msg;
        b->parent = -1;

        if (m[i * 2 + 1].kind == TS_OBJECT) {
            (void) ts_object_member(ix->buf, &m[i * 2 + 1], "name",
                                    &b->name);
        }
    }

    free(items);
    free(m);

    return st;
}


static ts_status_t
ts_chat_messages(ts_index_t *ix, const ts_val_t *msgs)
{
    static const char *const  keys[] = { "role", "content", "tool_calls" };
    ts_val_t                 *items, *m;
    ts_message_t             *msg;
    ts_status_t               st;
    size_t                    i, n, cap;

    st = ts_items_members(ix->buf, msgs, keys, 3, &items, &m, &n);
    if (st != TS_OK) {
        return st;
    }

    ix->messages = calloc(n ? n : 1, sizeof(ts_message_t));
    st = ix->messages ? TS_OK : TS_ERR_NOMEM;
    cap = 0;

    for (i = 0; st == TS_OK && i < n; i++) {
        msg = &ix->messages[i];
        msg->elem = items[i];
        msg->role = m[i * 3];
        msg->content = m[i * 3 + 1];
        msg->block_first = (uint32_t) ix->nblocks;

        if (m[i * 3 + 2].kind == TS_ARRAY
            && ts_str_eq(ix->buf, &msg->role, "assistant"))
        {
            st = ts_chat_calls(ix, &m[i * 3 + 2], (uint32_t) i, &cap);
        }

        msg->block_end = (uint32_t) ix->nblocks;
        ix->nmessages++;
    }

    free(items);
    free(m);

    return st;
}


/* 1 when n asks for more choices than one completion can carry */
static int
ts_chat_choices(const char *buf, const ts_val_t *n)
{
    size_t  i;

    if (n->kind != TS_NUMBER) {
        return n->kind != TS_NONE && n->kind != TS_NULL;
    }

    /* an integer above TS_CHAT_CHOICES_MAX, or a fraction or exponent */
    for (i = 0; i < n->len; i++) {
        if (buf[n->off + i] < '0' || buf[n->off + i] > '9') {
            return 1;
        }
    }

    return n->len > 1 || buf[n->off] - '0' > TS_CHAT_CHOICES_MAX;
}


/*
 * The body read into the index: an object with a messages array, and a
 * tools array if any.  What is not of this shape passes untouched.
 */
static ts_decision_t
ts_chat_index(ts_request_t *rq, const ts_input_t *in, const char *body,
    size_t len)
{
    ts_member_reader_t   rd;
    ts_format_recall_t   rc;
    ts_index_mem_t      *mem;
    ts_index_t          *ix;
    ts_val_t             top, v[TS_CHAT_KEYS];
    ts_decision_t        d;
    size_t               i;

    ix = &rq->ix;
    mem = in ? in->index_mem : NULL;
    ts_format_recall_init(&rc, &rd, TS_CHAT_TOOLS, mem,
                          mem ? &mem->chat_tools : NULL);

    d = ts_format_object_read(ix, body, len, ts_chat_keys, TS_CHAT_KEYS,
                              &top, v, rc.memory ? &rd : NULL);

    if (d != TS_DECISION_NONE) {
        return d;
    }

    if (v[TS_CHAT_MESSAGES].kind != TS_ARRAY) {
        return TS_DECISION_PASSTHROUGH;
    }

    if ((v[TS_CHAT_TOOLS].kind != TS_ARRAY
         && v[TS_CHAT_TOOLS].kind != TS_NONE)
        || (v[TS_CHAT_MODEL].kind != TS_STRING
            && v[TS_CHAT_MODEL].kind != TS_NONE))
    {
        return TS_DECISION_WRONG_TYPE;
    }

    if (ts_chat_choices(body, &v[TS_CHAT_N])) {
        return TS_DECISION_PASSTHROUGH;
    }

    ix->members = calloc(TS_CHAT_TOOL_CHOICE + 1, sizeof(ts_member_t));
    if (ix->members == NULL) {
        return TS_DECISION_ERROR;
    }

    for (i = 0; i <= TS_CHAT_TOOL_CHOICE; i++) {
        ix->members[i].val = v[i];

        if (i < TS_CHAT_TOOL_CHOICE && v[i].kind != TS_NONE) {
            ix->top[ts_chat_top[i]] = (int32_t) i;
        }
    }

    ix->nmembers = TS_CHAT_TOOL_CHOICE + 1;

    if ((v[TS_CHAT_TOOLS].kind == TS_ARRAY
         && ts_format_tools_of(ix, &rc, &v[TS_CHAT_TOOLS], ts_chat_tools)
            != TS_OK)
        || ts_chat_messages(ix, &v[TS_CHAT_MESSAGES]) != TS_OK)
    {
        return TS_DECISION_ERROR;
    }

    return ix->ntools ? TS_DECISION_NONE : TS_DECISION_NOTHING_TO_DEFER;
}


/*
 * Marks loaded the tools named so, ranked as history's calls when call is
 * set; 1 when the request has one.
 */
static int
ts_chat_load_named(ts_request_t *rq, const ts_val_t *name, int call)
{
    const ts_index_t  *ix;
    const char        *s;
    char               tmp[TS_NAME_MAX];
    size_t             i, len;
    int                found;

    ix = &rq->ix;
    found = 0;
    s = ts_str_view(ix->buf, name, tmp, sizeof(tmp), &len);

    for (i = 0; s != NULL && i < ix->ntools; i++) {
        if (ts_chat_is(ix->buf, &ix->tools[i].name, s, len)) {
            ts_request_load(rq, i, call);
            found = 1;
        }
    }

    return found;
}


/* the function tool_choice names, as a string value; 0 when none */
static int
ts_chat_choice(const ts_index_t *ix, ts_val_t *name)
{
    ts_val_t  choice, fn;

    choice = ix->members[TS_CHAT_TOOL_CHOICE].val;

    return choice.kind == TS_OBJECT
           && ts_object_member(ix->buf, &choice, "function", &fn) == TS_OK
           && fn.kind == TS_OBJECT
           && ts_object_member(ix->buf, &fn, "name", name) == TS_OK
           && name->kind == TS_STRING;
}


/*
 * With the call wrapper, a function found stays deferred, but one that
 * tool_choice names is declared: the API refuses a choice of a function
 * tools[] does not have
 */
static void
ts_chat_keep_choice(ts_request_t *rq)
{
    ts_val_t  name;
    long      k;

    if (ts_chat_choice(&rq->ix, &name)
        && (k = ts_wrapper_deferred(rq, &name)) >= 0)
    {
        ts_wrapper_declare(rq, (size_t) k);
    }
}


/*
 * Stateless turns: a tool the conversation has called (an assistant's
 * tool_calls) stays loaded, as does the function tool_choice names.
 * Calls of the request's tools count as the searches of history: a
 * conversation whose calls have loaded every deferrable tool keeps its
 * form, and its prompt cache (ts_defer.c).
 */
static void
ts_chat_history(ts_request_t *rq)
{
    const ts_index_t  *ix;
    ts_val_t           fn;
    size_t             i;

    ix = &rq->ix;

    for (i = 0; i < ix->nblocks; i++) {
        rq->history_searches += ts_chat_load_named(rq, &ix->blocks[i].name,
                                                   1);
    }

    if (ts_chat_choice(ix, &fn)) {
        (void) ts_chat_load_named(rq, &fn, 0);
    }
}


/* the tools the loop's searches loaded */
static int
ts_chat_loaded(ts_request_t *rq, const ts_input_t *in)
{
    size_t  i;

    rq->loaded = calloc(rq->ix.ntools ? rq->ix.ntools : 1, 1);
    rq->called = calloc(rq->ix.ntools ? rq->ix.ntools : 1, sizeof(uint32_t));
    if (rq->loaded == NULL || rq->called == NULL) {
        return -1;
    }

    for (i = 0; in->loaded != NULL && i < rq->ix.ntools; i++) {
        rq->loaded[i] = in->loaded[i];
    }

    ts_chat_history(rq);

    return 0;
}


/* tools[]: the search function as a Chat Completions tool */
static int
ts_chat_tools_edit(ts_request_t *rq, const ts_policy_t *p, ts_buf_t *b)
{
    return ts_gateway_openai_tools(rq, p,
                                   "{\"type\":\"function\",\"function\":{",
                                   "}}", b);
}


/*
 * The announcement ends the first message when it is the client's
 * system (or developer) prompt, as a paragraph of its string or a text
 * part of its array; else a system message of its own opens the
 * conversation.
 */
static int
ts_chat_system(ts_request_t *rq, const ts_buf_t *text, ts_buf_t *b)
{
    const ts_index_t    *ix;
    const ts_message_t  *m;
    const ts_member_t   *msgs;
    ts_val_t            *parts;
    size_t               n;
    int                  rc;

    ix = &rq->ix;
    m = ix->nmessages ? &ix->messages[0] : NULL;
    ts_buf_reset(b);

    if (m != NULL && (ts_str_eq(ix->buf, &m->role, "system")
                      || ts_str_eq(ix->buf, &m->role, "developer")))
    {
        if (m->content.kind == TS_STRING) {
            ts_buf_str(b, "\\n\\n");
            ts_buf_add(b, text->p, text->len);

            return b->failed ? -1
                   : ts_edit_replace(&rq->edits,
                                     m->content.off + m->content.len - 1, 0,
                                     b->p, b->len);
        }

        if (m->content.kind == TS_ARRAY
            && ts_container_items(ix->buf, &m->content, &parts, &n) == TS_OK)
        {
            ts_buf_str(b, "{\"type\":\"text\",\"text\":\"");
            ts_buf_add(b, text->p, text->len);
            ts_buf_str(b, "\"}");

            rc = b->failed ? -1
                 : ts_edit_append_item(&rq->edits, &m->content,
                                       n ? &parts[n - 1] : NULL, b->p,
                                       b->len);
            free(parts);

            return rc;
        }
    }

    ts_buf_str(b, "{\"role\":\"system\",\"content\":\"");
    ts_buf_add(b, text->p, text->len);
    ts_buf_str(b, m ? "\"}," : "\"}");

    if (b->failed) {
        return -1;
    }

    msgs = ts_index_top(ix, TS_TOP_MESSAGES);

    return ts_edit_replace(&rq->edits, m ? m->elem.off : msgs->val.off + 1,
                           0, b->p, b->len);
}


static const ts_gateway_form_t  ts_chat_form = {
    ts_chat_tools_edit, ts_chat_system
};


ts_decision_t
ts_chat_process(ts_request_t *rq, const ts_input_t *in, const char *body,
    size_t len)
{
    ts_policy_t   policy;
    ts_input_t    gin;
    ts_history_t  h;

    memset(rq, 0, sizeof(ts_request_t));
    ts_edits_init(&rq->edits);

    rq->decision = ts_chat_index(rq, in, body, len);

    if (rq->decision != TS_DECISION_NONE || in == NULL
        || in->policy == NULL)
    {
        return rq->decision;
    }

    /*
     * This format has no hosted search: the gateway runs it, unless the
     * location allows the upstream's hosted search only.
     */
    if (in->policy->search == TS_SEARCH_HOSTED) {
        rq->decision = TS_DECISION_UPSTREAM_UNSUPPORTED;
        return rq->decision;
    }

    policy = *in->policy;
    policy.search = TS_SEARCH_GATEWAY;
    gin = *in;
    gin.policy = &policy;

    rq->upstream = in->upstream;
    rq->mode = in->defer_mode >= 0 ? in->defer_mode : policy.defer_mode;
    rq->percent = in->defer_mode >= 0 ? in->defer_percent
                                      : policy.defer_percent;

    if (policy.disable_betas) {
        rq->mode = TS_DEFER_OFF;
    }

    /* a client function of the wrapper's name: found ones load as tools */
    rq->load_wrapper = policy.found_tools == TS_FOUND_WRAPPER
                       && ts_wrapper_free(&rq->ix);

    if (ts_chat_loaded(rq, in) != 0) {
        rq->decision = TS_DECISION_ERROR;
        return rq->decision;
    }

    /* history is this format's: the loaded tools carry it */
    memset(&h, 0, sizeof(ts_history_t));
    rq->decision = ts_defer_decide(rq, &gin, &h);

    if (rq->decision == TS_DECISION_DEFERRED_GATEWAY && rq->load_wrapper) {
        ts_chat_keep_choice(rq);
    }

    if (rq->decision == TS_DECISION_DEFERRED_GATEWAY
        && ((rq->load_wrapper && ts_chat_wrapper_history(rq, &policy) != 0)
            || ts_gateway_apply_as(rq, &gin, &ts_chat_form) != 0))
    {
        rq->decision = TS_DECISION_ERROR;
        ts_edits_free(&rq->edits);
        ts_edits_init(&rq->edits);
    }

    return rq->decision;
}


int
ts_chat_stream(const ts_request_t *rq)
{
    const ts_member_t  *m;

    m = ts_index_top(&rq->ix, TS_TOP_STREAM);

    return m != NULL && m->val.kind == TS_TRUE;
}
