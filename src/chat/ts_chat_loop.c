/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Chat Completions, the gateway loop's answers.  The model's call of the
 * search function (or of a deferred tool never loaded, which becomes a
 * select: of it) is held back from the client: in one JSON completion,
 * or as the tool_calls deltas of chat.completion.chunk events.  The
 * search runs (ts_loop_search), its turns (the assistant's call and a
 * tool message with what it loaded) go after the conversation, and the
 * next call continues.  The client gets one completion: the first
 * call's id on every chunk, tool call indexes from 0, one finish, usage
 * summed over the calls, [DONE] once.
 */

#include <stdlib.h>
#include <string.h>

#include "scan/ts_str.h"
#include "rewrite/ts_gateway.h"
#include "rewrite/ts_wrapper.h"
#include "loop/ts_loop_state.h"
#include "chat/ts_chat.h"


/* one tool call of an answer */
typedef struct {
    long            index;      /* the upstream's */
    long            client;     /* the client's; -1: held back */
    char           *id;
    char           *name;
    ts_buf_t        args;
    char           *error;      /* an invalid wrapper call's, escaped */
    unsigned        search:1;   /* a search, or an implicit select: */
    unsigned        implicit:1;
    unsigned        wrapper:1;  /* a call of the call wrapper */
    unsigned        ended:1;    /* a wrapper call checked */
} ts_chat_call_t;


typedef struct {
    char           *id;         /* the completion's: the first call's */
    cJSON          *usage;      /* summed over the calls */
    ts_buf_t        said;       /* the content of the calls before */

    /* the current answer */
    ts_chat_call_t  calls[TS_LOOP_BLOCKS_MAX];
    size_t          ncalls;
    long            nclient;
    unsigned        held;
    unsigned        wrapped;    /* calls of the call wrapper */
    ts_buf_t        text;       /* the assistant's content */
    char            finish[32];
    cJSON          *head;       /* a chunk's id, object, created, model */
    int             usage_seen;
    int             done;       /* data: [DONE] came */
    int             finished;   /* a finish_reason came */
    int             fin_held;   /* the finish was held back */
    int             errored;
} ts_chat_loop_t;


static int ts_chat_id(ts_chat_loop_t *st, cJSON *j);
static void ts_chat_emit(ts_buf_t *out, cJSON *j);
static int ts_chat_goes_on(const ts_loop_t *lp);


static void
ts_chat_answer_reset(ts_chat_loop_t *st)
{
    size_t  i;

    for (i = 0; i < st->ncalls; i++) {
        free(st->calls[i].id);
        free(st->calls[i].name);
        free(st->calls[i].error);
        ts_buf_free(&st->calls[i].args);
    }

    st->ncalls = 0;
    st->nclient = 0;
    st->held = 0;
    st->wrapped = 0;
    ts_buf_free(&st->text);
    ts_buf_init(&st->text, TS_LOOP_ANSWER_MAX);
    st->finish[0] = '\0';
    cJSON_Delete(st->head);
    st->head = NULL;
    st->done = 0;
    st->finished = 0;
    st->fin_held = 0;
    st->errored = 0;
}


static void
ts_chat_free(ts_loop_t *lp)
{
    ts_chat_loop_t  *st = lp->format;

    ts_chat_answer_reset(st);
    ts_buf_free(&st->text);
    ts_buf_free(&st->said);
    cJSON_Delete(st->usage);
    free(st->id);
    free(st);
    lp->format = NULL;
}


static void
ts_chat_start(ts_loop_t *lp)
{
    ts_chat_answer_reset(lp->format);
}


static void
ts_chat_usage(ts_chat_loop_t *st, const cJSON *u)
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

    st->usage_seen = 1;
}


/* a call seen first: the search, an implicit select:, or the client's */
static ts_chat_call_t *
ts_chat_call_add(ts_loop_t *lp, long index, const char *id,
    const char *name)
{
    ts_chat_loop_t  *st = lp->format;
    ts_chat_call_t  *c;

    if (st->ncalls == TS_LOOP_BLOCKS_MAX) {
        return NULL;
    }

    c = &st->calls[st->ncalls++];
    memset(c, 0, sizeof(ts_chat_call_t));
    c->index = index;
    c->client = -1;
    c->id = strdup(id ? id : "");
    c->name = strdup(name ? name : "");
    ts_buf_init(&c->args, TS_LOOP_EVENT_MAX);

    if (name != NULL && strcmp(name, lp->tool) == 0) {
        c->search = 1;

    } else if (name != NULL && lp->rq.load_wrapper
               && strcmp(name, TS_WRAPPER_NAME) == 0)
    {
        /* held until its arguments end: ts_chat_wrapper_end() */
        c->wrapper = 1;
        st->wrapped++;

    } else if (name != NULL && ts_loop_unloaded(lp, name) >= 0) {
        c->search = 1;
        c->implicit = 1;

    }

    st->held += c->search;

    return c;
}


static ts_chat_call_t *
ts_chat_call_find(ts_chat_loop_t *st, long index)
{
    size_t  i;

    for (i = 0; i < st->ncalls; i++) {
        if (st->calls[i].index == index) {
            return &st->calls[i];
        }
    }

    return NULL;
}


/* a string as JSON text, added to b */
static void
ts_chat_quoted(ts_buf_t *b, const char *s)
{
    cJSON  *j;
    char   *p;

    j = cJSON_CreateString(s);
    p = j ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);

    if (p == NULL) {
        b->failed = 1;
        return;
    }

    ts_buf_str(b, p);
    free(p);
}


/*
 * The client's call of the tool a wrapper call names: the same id, the
 * tool's name, its arguments the wrapper's as a string; with its index
 * in a stream's delta (index >= 0)
 */
static cJSON *
ts_chat_wrapper_call(const ts_chat_call_t *c, const ts_wrapper_call_t *call,
    long index)
{
    ts_buf_t   b;
    cJSON     *j;

    ts_buf_init(&b, 0);
    ts_buf_str(&b, "{");

    if (index >= 0) {
        ts_buf_str(&b, "\"index\":");
        ts_buf_num(&b, (size_t) index);
        ts_buf_str(&b, ",");
    }

    ts_buf_str(&b, "\"id\":");
    ts_chat_quoted(&b, c->id);
    ts_buf_str(&b, ",\"type\":\"function\",\"function\":{\"name\":");
    ts_buf_add(&b, call->buf + call->name.off, call->name.len);
    ts_buf_str(&b, ",\"arguments\":\"");
    ts_buf_escaped(&b, call->buf + call->args.off, call->args.len);
    ts_buf_str(&b, "\"}}");

    j = b.failed ? NULL : cJSON_ParseWithLength(b.p, b.len);
    ts_buf_free(&b);

    return j;
}


/*
 * A chunk of the gateway's on the answer's head: its one choice at *c,
 * the choice's delta at *d; NULL without a head or memory
 */
static cJSON *
ts_chat_chunk_new(ts_chat_loop_t *st, cJSON **c, cJSON **d)
{
    cJSON  *j, *choices;

    if (st->head == NULL || (j = cJSON_Duplicate(st->head, 1)) == NULL) {
        return NULL;
    }

    (void) ts_chat_id(st, j);
    choices = cJSON_AddArrayToObject(j, "choices");
    *c = cJSON_CreateObject();
    cJSON_AddItemToArray(choices, *c);
    cJSON_AddNumberToObject(*c, "index", 0);
    *d = cJSON_AddObjectToObject(*c, "delta");

    return j;
}


/* a stream's chunk with one tool call's delta, on the answer's head */
static void
ts_chat_call_chunk(ts_chat_loop_t *st, cJSON *call, ts_buf_t *out)
{
    cJSON  *j, *c, *d, *calls;

    j = ts_chat_chunk_new(st, &c, &d);

    if (j == NULL) {
        cJSON_Delete(call);
        return;
    }

    calls = cJSON_AddArrayToObject(d, "tool_calls");
    cJSON_AddItemToArray(calls, call);
    cJSON_AddNullToObject(c, "finish_reason");
    ts_chat_emit(out, j);
    cJSON_Delete(j);
}


/*
 * A call given to the client in its place: into a chunk's or the
 * completion's array before at (the call that follows it; at the end
 * without one), or, without an array, as a chunk of its own
 */
static void
ts_chat_give(ts_chat_loop_t *st, cJSON *j, cJSON *calls, cJSON *at,
    ts_buf_t *out)
{
    cJSON  *e, *next;

    if (calls == NULL) {
        ts_chat_call_chunk(st, j, out);
        return;
    }

    /*
     * Added last, then the items from at on follow it (cJSON 1.7.15's
     * cJSON_InsertItemInArray refuses a place after the first)
     */
    cJSON_AddItemToArray(calls, j);

    for (e = at; e != NULL && e != j; e = next) {
        next = e->next;
        cJSON_DetachItemViaPointer(calls, e);
        cJSON_AddItemToArray(calls, e);
    }
}


/*
 * 1 when this answer can no longer go on to another call: a call of the
 * client's came, the answer broke, or its searches and refusals would
 * pass the budget.  None of these can turn back within an answer, so a
 * held call's fate is known as soon as this holds.
 */
static int
ts_chat_stuck(const ts_loop_t *lp)
{
    const ts_chat_loop_t  *st = lp->format;
    unsigned               max;

    max = lp->in.policy->max_searches;

    return st->nclient > 0 || lp->ans.broken
           || lp->searches + st->held > max || lp->refusals >= max;
}


/*
 * The loop cannot go on: each held invalid wrapper call that names a tool
 * of the request reaches the client as a call of that tool, whose own
 * check judges its arguments, numbered as the client's next and given
 * in its place (ts_chat_give); one that names none stays held, dropped
 */
static void
ts_chat_wrapper_pass(ts_loop_t *lp, cJSON *calls, cJSON *at, ts_buf_t *out)
{
    ts_chat_loop_t     *st = lp->format;
    ts_wrapper_call_t   call;
    ts_chat_call_t     *c;
    ts_buf_t            err;
    cJSON              *j;
    size_t              i;

    ts_buf_init(&err, 0);

    for (i = 0; !lp->ans.broken && i < st->ncalls; i++) {
        c = &st->calls[i];

        if (c->error == NULL || !c->search) {
            continue;
        }

        ts_buf_reset(&err);
        (void) ts_wrapper_check(&lp->rq.ix, c->args.p ? c->args.p : "",
                                c->args.len, &call, &err);

        if (call.tool < 0) {
            continue;
        }

        j = ts_chat_wrapper_call(c, &call, lp->sse ? st->nclient : -1);

        if (j == NULL) {
            lp->ans.broken = 1;
            break;
        }

        c->search = 0;
        st->held--;
        c->client = st->nclient++;
        ts_chat_give(st, j, calls, at, out);
    }

    ts_buf_free(&err);
}


/*
 * A wrapper call whose arguments ended (the next call began, the choice
 * finished, or a completion's call), checked: a valid one reaches the
 * client at once as the call of its tool, numbered as the client's next
 * after the held invalid calls before it (which can then only go to the
 * client); an invalid one is held with why, answered in the loop, unless
 * the loop can no longer go on.  Either is given in its place.
 */
static void
ts_chat_wrapper_end(ts_loop_t *lp, ts_chat_call_t *c, cJSON *calls,
    cJSON *at, ts_buf_t *out)
{
    ts_chat_loop_t     *st = lp->format;
    ts_wrapper_call_t   call;
    ts_buf_t            err;
    cJSON              *j;

    c->ended = 1;
    ts_buf_init(&err, 0);

    if (ts_wrapper_check(&lp->rq.ix, c->args.p ? c->args.p : "",
                         c->args.len, &call, &err) == 0)
    {
        ts_buf_free(&err);
        ts_chat_wrapper_pass(lp, calls, at, out);
        j = ts_chat_wrapper_call(c, &call, lp->sse ? st->nclient : -1);

        if (j == NULL) {
            lp->ans.broken = 1;
            return;
        }

        c->client = st->nclient++;
        ts_chat_give(st, j, calls, at, out);

        return;
    }

    /* held as a search is: the answer's end decides */
    c->search = 1;
    st->held++;

    if (ts_buf_add(&err, "", 1) == 0) {
        c->error = err.p;

    } else {
        ts_buf_free(&err);
        lp->ans.broken = 1;
    }

    if (ts_chat_stuck(lp)) {
        ts_chat_wrapper_pass(lp, calls, at, out);
    }
}


/* a call began or the choice finished: the wrapper calls before it end */
static void
ts_chat_wrappers_end(ts_loop_t *lp, cJSON *calls, cJSON *at, ts_buf_t *out)
{
    ts_chat_loop_t  *st = lp->format;
    size_t           i;

    for (i = 0; i < st->ncalls; i++) {
        if (st->calls[i].wrapper && !st->calls[i].ended) {
            ts_chat_wrapper_end(lp, &st->calls[i], calls, at, out);
        }
    }
}


/*
 * The calls of an answer's tool_calls array (a whole message's, or a
 * chunk's deltas); held ones are taken out, the client's renumbered in
 * the order the upstream gave them: a call that begins ends the wrapper
 * calls before it, which reach the client first.  Returns 1 when the
 * array changed.
 */
static int
ts_chat_calls(ts_loop_t *lp, cJSON *calls, int whole)
{
    ts_chat_loop_t  *st = lp->format;
    ts_chat_call_t  *c;
    cJSON           *tc, *fn, *next, *idx;
    const char      *args;
    long             index, n, given;
    int              changed;

    changed = 0;
    n = 0;
    given = st->nclient;

    for (tc = calls ? calls->child : NULL; tc != NULL; tc = next, n++) {
        next = tc->next;
        idx = cJSON_GetObjectItemCaseSensitive(tc, "index");
        index = cJSON_IsNumber(idx) ? (long) idx->valuedouble : n;
        fn = cJSON_GetObjectItemCaseSensitive(tc, "function");
        c = whole ? NULL : ts_chat_call_find(st, index);

        if (c == NULL) {
            ts_chat_wrappers_end(lp, calls, tc, NULL);

            c = ts_chat_call_add(lp,
                    whole ? n : index,
                    cJSON_GetStringValue(
                        cJSON_GetObjectItemCaseSensitive(tc, "id")),
                    cJSON_GetStringValue(
                        cJSON_GetObjectItemCaseSensitive(fn, "name")));

            if (c == NULL) {
                lp->ans.broken = 1;
                continue;
            }

            if (!c->search && !c->wrapper) {
                /* the loop cannot go on: held invalid calls are given */
                ts_chat_wrapper_pass(lp, calls, tc, NULL);
                c->client = st->nclient++;
            }
        }

        args = cJSON_GetStringValue(
                   cJSON_GetObjectItemCaseSensitive(fn, "arguments"));

        if (args != NULL && !c->ended) {
            ts_buf_str(&c->args, args);
        }

        if (c->wrapper && whole) {
            ts_chat_wrapper_end(lp, c, calls, tc, NULL);
        }

        if (c->search || c->wrapper) {
            cJSON_DetachItemViaPointer(calls, tc);
            cJSON_Delete(tc);
            changed = 1;

        } else if (!whole && c->client != index) {
            cJSON_SetNumberValue(idx, (double) c->client);
            changed = 1;
        }
    }

    return changed || st->nclient != given;
}


/* the object a synthetic chunk starts from: the answer's first chunk */
static void
ts_chat_head(ts_chat_loop_t *st, const cJSON *j)
{
    static const char *const  keep[] = { "id", "object", "created", "model",
                                         "system_fingerprint" };
    const cJSON              *v;
    size_t                    i;

    if (st->head != NULL || (st->head = cJSON_CreateObject()) == NULL) {
        return;
    }

    for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
        v = cJSON_GetObjectItemCaseSensitive(j, keep[i]);

        if (v != NULL) {
            cJSON_AddItemToObject(st->head, keep[i], cJSON_Duplicate(v, 1));
        }
    }
}


/* every chunk and the completion carry the first call's id */
static int
ts_chat_id(ts_chat_loop_t *st, cJSON *j)
{
    cJSON       *id;
    const char  *s;

    id = cJSON_GetObjectItemCaseSensitive(j, "id");
    s = cJSON_GetStringValue(id);

    if (s == NULL) {
        return 0;
    }

    if (st->id == NULL) {
        st->id = strdup(s);
        return 0;
    }

    if (strcmp(s, st->id) == 0) {
        return 0;
    }

    cJSON_ReplaceItemInObjectCaseSensitive(j, "id",
                                           cJSON_CreateString(st->id));

    return 1;
}


static void
ts_chat_emit(ts_buf_t *out, cJSON *j)
{
    ts_loop_openai_print(out, "data: ", j, "\n\n");
}


/* a member that is there and not null */
static int
ts_chat_has(const cJSON *j, const char *key)
{
    const cJSON  *v;

    v = cJSON_GetObjectItemCaseSensitive(j, key);

    return v != NULL && !cJSON_IsNull(v);
}


/* 1 when a chunk's delta and finish say nothing any more */
static int
ts_chat_empty(const cJSON *choice, const cJSON *delta)
{
    return (delta == NULL || delta->child == NULL)
           && !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(
                                  choice, "finish_reason"))
           && !ts_chat_has(choice, "logprobs");
}


static int
ts_chat_chunk(ts_loop_t *lp, const ts_sse_event_t *ev, ts_buf_t *out)
{
    ts_chat_loop_t  *st = lp->format;
    cJSON           *j, *choices, *choice, *delta, *calls, *fin, *u;
    const char      *s;
    long             given;
    int              changed;

    if (ev->data_len == 6 && memcmp(ev->data, "[DONE]", 6) == 0) {
        st->done = 1;
        return 0;
    }

    /*
     * What the scanner does not take (not JSON, not UTF-8: cJSON takes
     * either) passes as it came, and the loop follows the answer no
     * further: its bytes would go into the next call.
     */
    j = ts_loop_parse(ev->data, ev->data_len);

    if (!cJSON_IsObject(j) || cJSON_GetObjectItem(j, "error") != NULL) {
        st->errored |= j != NULL;
        lp->ans.broken |= j == NULL;
        cJSON_Delete(j);
        return ts_buf_add(out, ev->raw, ev->raw_len);
    }

    changed = ts_chat_id(st, j);
    ts_chat_head(st, j);

    u = cJSON_GetObjectItemCaseSensitive(j, "usage");
    choices = cJSON_GetObjectItemCaseSensitive(j, "choices");

    if (cJSON_IsObject(u)) {
        ts_chat_usage(st, u);

        /* the sum comes at the end, in a chunk of its own */
        if (cJSON_GetArraySize(choices) == 0) {
            cJSON_Delete(j);
            return 0;
        }

        cJSON_ReplaceItemInObjectCaseSensitive(j, "usage",
                                               cJSON_CreateNull());
        changed = 1;
    }

    choice = cJSON_GetArrayItem(choices, 0);
    delta = cJSON_GetObjectItemCaseSensitive(choice, "delta");

    if (lp->calls > 1 && cJSON_GetObjectItem(delta, "role") != NULL) {
        cJSON_DeleteItemFromObjectCaseSensitive(delta, "role");
        changed = 1;
    }

    s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(delta,
                                                              "content"));
    if (s != NULL) {
        ts_buf_str(&st->text, s);
    }

    calls = cJSON_GetObjectItemCaseSensitive(delta, "tool_calls");

    if (!cJSON_IsArray(calls)) {
        calls = NULL;
    }

    if (calls != NULL && ts_chat_calls(lp, calls, 0)) {
        changed = 1;
    }

    fin = cJSON_GetObjectItemCaseSensitive(choice, "finish_reason");
    s = cJSON_GetStringValue(fin);

    if (s != NULL) {
        st->finished = 1;
        strncpy(st->finish, s, sizeof(st->finish) - 1);
        given = st->nclient;

        /*
         * The last wrapper call ends with the choice: given after this
         * chunk's calls (or in a chunk of its own before it), or held
         */
        ts_chat_wrappers_end(lp, calls, NULL, out);

        if (st->held && !ts_chat_goes_on(lp)) {
            ts_chat_wrapper_pass(lp, calls, NULL, out);
        }

        changed |= calls != NULL && st->nclient != given;

        /* the end decides how the completion finishes */
        if (st->held && st->nclient == 0) {
            cJSON_ReplaceItemInObjectCaseSensitive(choice, "finish_reason",
                                                   cJSON_CreateNull());
            st->fin_held = 1;
            changed = 1;
        }
    }

    if (calls != NULL && cJSON_GetArraySize(calls) == 0) {
        cJSON_DeleteItemFromObjectCaseSensitive(delta, "tool_calls");
    }

    if (!changed) {
        ts_buf_add(out, ev->raw, ev->raw_len);

    } else if (cJSON_GetArraySize(choices) != 1
               || !ts_chat_empty(choice, delta))
    {
        ts_chat_emit(out, j);
    }

    cJSON_Delete(j);

    return out->failed ? -1 : 0;
}


/* a search's tool message: what it loaded, or what exists */
typedef struct {
    ts_loop_t       *lp;
    ts_buf_t        *turns;
    ts_chat_call_t  *call;
} ts_chat_found_t;


static int
ts_chat_found(void *arg, const ts_name_t *names, size_t n,
    const ts_buf_t *servers)
{
    ts_chat_found_t  *f = arg;
    cJSON            *id;
    char             *s;

    id = cJSON_CreateString(f->call->id);
    s = id ? cJSON_PrintUnformatted(id) : NULL;
    cJSON_Delete(id);

    if (s == NULL) {
        return -1;
    }

    ts_buf_str(f->turns, ",{\"role\":\"tool\",\"tool_call_id\":");
    ts_buf_str(f->turns, s);
    ts_buf_str(f->turns, ",\"content\":\"");
    ts_gateway_found_text(f->turns, names, n, 1, servers,
                          f->lp->rq.load_wrapper ? &f->lp->rq.ix : NULL);
    ts_buf_str(f->turns, "\"}");
    free(s);

    return f->turns->failed ? -1 : 0;
}


/* the input a held call searches with: an implicit one selects its tool */
static char *
ts_chat_input(const ts_chat_call_t *c)
{
    cJSON  *j;
    char   *s;
    size_t  n;

    if (!c->implicit) {
        if (c->args.len == 0) {
            return strdup("{}");
        }

        s = malloc(c->args.len + 1);

        if (s != NULL) {
            memcpy(s, c->args.p, c->args.len);
            s[c->args.len] = '\0';
        }

        return s;
    }

    n = strlen(c->name) + sizeof("select:");
    s = malloc(n);

    if (s == NULL) {
        return NULL;
    }

    memcpy(s, "select:", sizeof("select:") - 1);
    memcpy(s + sizeof("select:") - 1, c->name, n - sizeof("select:") + 1);

    j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "query", s);
    free(s);
    s = j ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);

    return s;
}


/*
 * The assistant's turn as the upstream will see it again: its content
 * and its held calls, each as a call of the search function (an
 * implicit one with its select:), then a tool message per call.
 */
static cJSON *
ts_chat_turn(ts_loop_t *lp, char **inputs)
{
    ts_chat_loop_t  *st = lp->format;
    cJSON           *m, *calls, *c, *fn;
    size_t           i, k;

    m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "role", "assistant");

    /* the buffer's bytes as a C string: a NUL after them */
    if (st->text.len && ts_buf_space(&st->text, 1) == 0) {
        st->text.p[st->text.len] = '\0';
        cJSON_AddStringToObject(m, "content", st->text.p);
    } else {
        cJSON_AddNullToObject(m, "content");
    }

    calls = cJSON_AddArrayToObject(m, "tool_calls");

    for (i = 0, k = 0; i < st->ncalls; i++) {
        if (!st->calls[i].search) {
            continue;
        }

        c = cJSON_CreateObject();
        cJSON_AddItemToArray(calls, c);
        cJSON_AddStringToObject(c, "id", st->calls[i].id);
        cJSON_AddStringToObject(c, "type", "function");
        fn = cJSON_AddObjectToObject(c, "function");
        cJSON_AddStringToObject(fn, "name", st->calls[i].wrapper
                                            ? TS_WRAPPER_NAME : lp->tool);
        cJSON_AddStringToObject(fn, "arguments", inputs[k++]);
    }

    return m;
}


/* runs the answer's searches; 1 when the loop goes on */
static int
ts_chat_searches(ts_loop_t *lp)
{
    ts_chat_loop_t   *st = lp->format;
    ts_chat_found_t   f;
    ts_buf_t          turns;
    ts_val_t          v;
    cJSON            *m;
    char             *inputs[TS_LOOP_BLOCKS_MAX], *s;
    size_t            i, k;
    int               ok;

    ok = 1;
    k = 0;

    for (i = 0; i < st->ncalls; i++) {
        if (!st->calls[i].search) {
            continue;
        }

        s = ts_chat_input(&st->calls[i]);

        /* arguments that are no object search for nothing */
        if (s != NULL && (ts_value_parse(s, strlen(s), &v) != TS_OK
                          || v.kind != TS_OBJECT))
        {
            free(s);
            s = strdup("{}");
        }

        ok &= s != NULL;
        inputs[k++] = s;
    }

    m = ok ? ts_chat_turn(lp, inputs) : NULL;
    s = m ? cJSON_PrintUnformatted(m) : NULL;
    cJSON_Delete(m);

    ts_buf_init(&turns, 0);

    if (s != NULL) {
        ts_buf_str(&turns, s);
        free(s);
    }

    ok = ok && turns.len > 0;

    for (i = 0, k = 0; ok && i < st->ncalls; i++) {
        if (!st->calls[i].search) {
            continue;
        }

        if (st->calls[i].error != NULL) {
            /* an invalid wrapper call: why, for the model to correct it */
            ts_buf_str(&turns, ",{\"role\":\"tool\",\"tool_call_id\":");
            ts_chat_quoted(&turns, st->calls[i].id);
            ts_buf_str(&turns, ",\"content\":\"");
            ts_buf_str(&turns, st->calls[i].error);
            ts_buf_str(&turns, "\"}");
            lp->refusals++;
            k++;
            ok = !turns.failed;
            continue;
        }

        f.lp = lp;
        f.turns = &turns;
        f.call = &st->calls[i];
        ok = ts_loop_search(lp, inputs[k++], ts_chat_found, &f) == 0;
    }

    for (i = 0; i < st->held; i++) {
        free(inputs[i]);
    }

    if (ok && lp->turns.len) {
        ts_buf_str(&lp->turns, ",");
    }

    /* a JSON completion's content is what every call said */
    ts_buf_add(&st->said, st->text.p, st->text.len);

    ok = ok && ts_buf_add(&lp->turns, turns.p, turns.len) == 0;
    ts_buf_free(&turns);

    return ok;
}


/* 1 when the answer asks only for searches, which may run */
static int
ts_chat_goes_on(const ts_loop_t *lp)
{
    const ts_chat_loop_t  *st = lp->format;

    return st->held > 0 && !ts_chat_stuck(lp)
           && strcmp(st->finish, "length") != 0
           && strcmp(st->finish, "content_filter") != 0;
}


/* the end of a stream: a finish if it was held, the usage, [DONE] */
static void
ts_chat_stream_end(ts_loop_t *lp, ts_buf_t *out)
{
    ts_chat_loop_t  *st = lp->format;
    cJSON           *j, *c, *d;

    if (st->fin_held && (j = ts_chat_chunk_new(st, &c, &d)) != NULL) {
        if (st->text.len == 0 && st->nclient == 0) {
            cJSON_AddStringToObject(d, "content", ts_loop_openai_spent);
        }

        cJSON_AddStringToObject(c, "finish_reason",
                                st->nclient ? "tool_calls" : "stop");
        ts_chat_emit(out, j);
        cJSON_Delete(j);
    }

    if (st->usage_seen && st->usage != NULL && st->head != NULL) {
        j = cJSON_Duplicate(st->head, 1);
        (void) ts_chat_id(st, j);
        cJSON_AddArrayToObject(j, "choices");
        cJSON_AddItemToObject(j, "usage", cJSON_Duplicate(st->usage, 1));
        ts_chat_emit(out, j);
        cJSON_Delete(j);
    }

    if (st->done) {
        ts_buf_str(out, "data: [DONE]\n\n");
    }
}


/* a JSON completion: its calls read, held ones taken out at the end */
static cJSON *
ts_chat_json(ts_loop_t *lp, cJSON **calls)
{
    ts_chat_loop_t  *st = lp->format;
    cJSON           *j, *choices, *msg, *fin;
    const char      *s;

    j = ts_loop_parse(lp->pending.p, lp->pending.len);
    choices = cJSON_GetObjectItemCaseSensitive(j, "choices");

    if (!cJSON_IsObject(j) || cJSON_GetArraySize(choices) != 1) {
        cJSON_Delete(j);
        return NULL;
    }

    msg = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(choices, 0),
                                           "message");
    *calls = cJSON_GetObjectItemCaseSensitive(msg, "tool_calls");
    fin = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(choices, 0),
                                           "finish_reason");
    s = cJSON_GetStringValue(fin);

    if (s != NULL) {
        st->finished = 1;
        strncpy(st->finish, s, sizeof(st->finish) - 1);
    }

    s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(msg,
                                                              "content"));
    if (s != NULL) {
        ts_buf_str(&st->text, s);
    }

    ts_chat_usage(st, cJSON_GetObjectItemCaseSensitive(j, "usage"));
    (void) ts_chat_id(st, j);

    if (cJSON_IsArray(*calls)) {
        (void) ts_chat_calls(lp, *calls, 1);
    }

    return j;
}


/* a message's content, in its place */
static void
ts_chat_content(cJSON *msg, const char *text)
{
    if (cJSON_GetObjectItemCaseSensitive(msg, "content") != NULL) {
        cJSON_ReplaceItemInObjectCaseSensitive(msg, "content",
                                               cJSON_CreateString(text));

    } else {
        cJSON_AddStringToObject(msg, "content", text);
    }
}


/* the client's completion: held calls out, the id and usage the sums */
static void
ts_chat_json_final(ts_loop_t *lp, cJSON *j, cJSON *calls, ts_buf_t *out)
{
    ts_chat_loop_t  *st = lp->format;
    cJSON           *choice, *msg, *u;

    choice = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choices"), 0);
    msg = cJSON_GetObjectItemCaseSensitive(choice, "message");

    if (st->said.len) {
        ts_buf_add(&st->said, st->text.p, st->text.len);

        if (ts_buf_space(&st->said, 1) == 0) {
            st->said.p[st->said.len] = '\0';
            ts_chat_content(msg, st->said.p);
        }
    }

    if (st->held || st->wrapped) {
        if (cJSON_GetArraySize(calls) == 0) {
            cJSON_DeleteItemFromObjectCaseSensitive(msg, "tool_calls");
            cJSON_ReplaceItemInObjectCaseSensitive(choice, "finish_reason",
                cJSON_CreateString("stop"));

            if (!cJSON_IsString(cJSON_GetObjectItem(msg, "content"))) {
                ts_chat_content(msg, ts_loop_openai_spent);
            }
        }
    }

    u = cJSON_GetObjectItemCaseSensitive(j, "usage");

    if (u != NULL && st->usage != NULL) {
        cJSON_ReplaceItemInObjectCaseSensitive(j, "usage",
                                               cJSON_Duplicate(st->usage, 1));
    }

    ts_loop_openai_print(out, "", j, "");
}



static ts_loop_next_t
ts_chat_end(ts_loop_t *lp, ts_buf_t *out)
{
    static const ts_loop_error_t  early = {
        0, NULL, 0, "the upstream stream ended early"
    };

    ts_chat_loop_t  *st = lp->format;
    cJSON           *j, *calls;

    j = NULL;
    calls = NULL;

    if (!lp->sse && (j = ts_chat_json(lp, &calls)) == NULL) {
        ts_buf_add(out, lp->pending.p, lp->pending.len);
        return TS_LOOP_DONE;
    }

    if (lp->sse && st->errored) {
        ts_buf_add(out, lp->pending.p, lp->pending.len);
        return TS_LOOP_DONE;
    }

    if (ts_chat_goes_on(lp) && ts_chat_searches(lp)) {
        cJSON_Delete(j);
        return TS_LOOP_AGAIN;
    }

    if (!lp->sse) {
        if (st->held && calls != NULL) {
            ts_chat_wrapper_pass(lp, calls, NULL, out);
        }

        if (lp->calls == 1 && st->held == 0 && st->wrapped == 0) {
            ts_buf_add(out, lp->pending.p, lp->pending.len);

        } else {
            ts_chat_json_final(lp, j, calls, out);
        }

        cJSON_Delete(j);
        return TS_LOOP_DONE;
    }

    /*
     * An unfinished event passes where the stream ends with it; where the
     * gateway's own chunks follow, it is dropped, as an SSE client drops
     * it at the end of a stream: else it would swallow the first of them.
     */
    if (lp->calls == 1 && st->held == 0 && !st->done && !st->usage_seen) {
        ts_buf_add(out, lp->pending.p, lp->pending.len);
    }

    if (!st->finished && lp->calls > 1) {
        ts_loop_fail(lp, 1, &early, out);
        return TS_LOOP_DONE;
    }

    ts_chat_stream_end(lp, out);

    return TS_LOOP_DONE;
}


/*
 * A failed call's error for the client: the upstream's own error
 * document ({"error": {…}}) where it gave one, else one made from the
 * status; in a stream, a data: line with it, which ends the stream.
 */
static void
ts_chat_fail(ts_loop_t *lp, int sse, const ts_loop_error_t *e,
    ts_buf_t *out)
{
    ts_chat_loop_t  *st = lp->format;
    cJSON           *doc;

    ts_buf_reset(&lp->pending);
    lp->seen = 0;
    st->errored = 1;

    doc = ts_loop_openai_error(e);
    ts_loop_openai_print(out, sse ? "data: " : "", doc, sse ? "\n\n" : "");
    cJSON_Delete(doc);
}


static const ts_loop_dialect_t  ts_chat_dialect = {
    ts_chat_process, ts_chat_start, ts_chat_chunk, ts_chat_end, ts_chat_fail,
    ts_chat_free
};


ts_loop_t *
ts_chat_loop_create(const ts_input_t *in, const ts_request_t *rq)
{
    ts_loop_t       *lp;
    ts_chat_loop_t  *st;

    st = calloc(1, sizeof(ts_chat_loop_t));
    if (st == NULL) {
        return NULL;
    }

    lp = ts_loop_create_as(in, rq->ix.buf, rq->ix.len, &ts_chat_dialect,
                           rq->ix.ntools);
    if (lp == NULL) {
        free(st);
        return NULL;
    }

    ts_buf_init(&st->text, TS_LOOP_ANSWER_MAX);
    ts_buf_init(&st->said, TS_LOOP_ANSWER_MAX);
    lp->format = st;

    return lp;
}
