/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Responses in the gateway loop: the answer's searches run and the next
 * call's input.  The answer's items and a function_call_output per search
 * go after the input (or after the stored response the next call goes on
 * from); searches past the budget in a stored exchange are answered as
 * spent.
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
 * Searches past the budget in a stored exchange are answered, not left
 * open in the response the client goes on from, this many times
 */
#define TS_RS_SPENT_MAX  2

static const char  ts_rs_spent_output[] =
    "No more tool searches are available for this answer: answer with "
    "the tools loaded.";


/* 1 when the answer asks only for searches, which may run */
int
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
int
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
