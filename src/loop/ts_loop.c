/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

#include "search/ts_catalog.h"
#include "rewrite/ts_gateway.h"
#include "rewrite/ts_wrapper.h"
#include "loop/ts_loop_state.h"
#include "rewrite/ts_counters.h"
#include "search/ts_search.h"


const char  *ts_loop_usage_keys[TS_USAGE_N] = {
    "input_tokens", "output_tokens", "cache_creation_input_tokens",
    "cache_read_input_tokens"
};


ts_loop_t *
ts_loop_create(const ts_input_t *in, const char *body, size_t len)
{
    ts_index_t  ix;
    size_t      ntools;

    ntools = 0;

    if (ts_index_build(&ix, body, len) == TS_OK) {
        ntools = ix.ntools;
    }

    ts_index_free(&ix);

    return ts_loop_create_as(in, body, len, NULL, ntools);
}


ts_loop_t *
ts_loop_create_as(const ts_input_t *in, const char *body, size_t len,
    const ts_loop_dialect_t *dialect, size_t ntools)
{
    ts_loop_t  *lp;

    lp = calloc(1, sizeof(ts_loop_t));
    if (lp == NULL) {
        return NULL;
    }

    lp->in = *in;

    /* the loop's request lives between calls: its index has own memory */
    lp->in.index_mem = NULL;
    lp->body = body;
    lp->len = len;
    lp->tool = in->policy->search_tool;
    ts_buf_init(&lp->turns, TS_LOOP_TURNS_MAX);
    ts_buf_init(&lp->content, TS_LOOP_ANSWER_MAX);
    ts_buf_init(&lp->pending, TS_LOOP_ANSWER_MAX);
    lp->dialect = dialect;
    lp->ntools = ntools;

    lp->loaded = calloc(lp->ntools ? lp->ntools : 1, 1);
    if (lp->loaded == NULL) {
        free(lp);
        return NULL;
    }

    return lp;
}


/* what the answer's blocks hold; the answer itself is left as it is */
static void
ts_loop_release(ts_loop_t *lp)
{
    size_t        i;
    ts_lblock_t  *b;

    for (i = 0; i < lp->ans.nblocks; i++) {
        b = &lp->ans.blocks[i];
        cJSON_Delete(b->block);
        ts_buf_free(&b->text);
        ts_buf_free(&b->sig);
        free(b->id);
        free(b->input);
        free(b->error);
    }

    cJSON_Delete(lp->ans.delta);
}


static void
ts_loop_reset(ts_loop_t *lp)
{
    ts_loop_release(lp);
    memset(&lp->ans, 0, sizeof(ts_loop_answer_t));
    ts_buf_reset(&lp->pending);
    lp->seen = 0;
}


void
ts_loop_free(ts_loop_t *lp)
{
    if (lp == NULL) {
        return;
    }

    if (lp->dialect != NULL) {
        lp->dialect->free(lp);
    }

    /* freed next: the answer (some KB) needs no clearing */
    ts_loop_release(lp);

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

    /* the first call's request, as the caller decided it */
    if (lp->kept) {
        lp->kept = 0;
        goto render;
    }

    if (lp->have_rq) {
        ts_request_free(&lp->rq);
        lp->have_rq = 0;
    }

    in = lp->in;
    in.loaded = lp->loaded;
    in.tail = lp->turns.p;
    in.tail_len = lp->turns.len;

    lp->have_rq = 1;

    if ((lp->dialect ? lp->dialect->process : ts_request_process)(
            &lp->rq, &in, lp->body, lp->len)
        != TS_DECISION_DEFERRED_GATEWAY)
    {
        return -1;
    }

render:

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


void
ts_loop_keep(ts_loop_t *lp, ts_request_t *rq)
{
    /* an index in memory the worker lends lives no longer than rq */
    if (lp->calls != 0 || lp->have_rq || rq->ix.mem != NULL
        || rq->decision != TS_DECISION_DEFERRED_GATEWAY)
    {
        return;
    }

    lp->rq = *rq;
    lp->have_rq = 1;
    lp->kept = 1;

    memset(rq, 0, sizeof(ts_request_t));
    ts_edits_init(&rq->edits);
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
    ts_loop_reset(lp);
    lp->sse = sse;

    if (lp->dialect != NULL) {
        lp->dialect->start(lp);
    }
}


void
ts_loop_totals_add(ts_loop_t *lp)
{
    int  i;

    for (i = 0; i < TS_USAGE_N; i++) {
        lp->total[i] += lp->ans.usage[i];
    }

    memset(lp->ans.usage, 0, sizeof(lp->ans.usage));
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


long
ts_loop_unloaded(const ts_loop_t *lp, const char *name)
{
    const ts_index_t  *ix;
    size_t             i;

    ix = &lp->rq.ix;

    for (i = 0; lp->rq.defer && i < ix->ntools; i++) {
        if (lp->rq.defer[i] && !lp->loaded[i]
            && ts_str_eq(ix->buf, &ix->tools[i].name, name))
        {
            return (long) i;
        }
    }

    return -1;
}


/*
 * A deferred tool the model calls as if loaded: with the call wrapper, a
 * tool found stays deferred, and a direct call of it reaches the client
 * as a call of a loaded tool does
 */
static int
ts_loop_implicit(const ts_loop_t *lp, const char *name)
{
    long  i;

    i = ts_deferred_tool(lp, name);

    return i >= 0
           && !(lp->rq.load_wrapper
                && (lp->loaded[i] || (lp->rq.loaded && lp->rq.loaded[i])));
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
 * of a tool that is deferred and not loaded (its schema was never sent:
 * docs/spec/deferral.md), which becomes an implicit select: of that tool.
 * A call of the call wrapper waits for its end (ts_loop_wrapper_end).
 */
void
ts_loop_classify(ts_loop_t *lp, ts_lblock_t *b, const char *id,
    const char *name)
{
    ts_buf_t  q;

    if (strcmp(name, lp->tool) == 0) {
        b->search = 1;

    } else if (lp->rq.load_wrapper && strcmp(name, TS_WRAPPER_NAME) == 0) {
        b->wrapper = 1;
        b->id = ts_quoted(id);
        lp->ans.broken |= (b->id == NULL);
        return;

    } else if (ts_loop_implicit(lp, name)) {
        b->search = 1;
        b->implicit = 1;
        ts_buf_init(&q, 0);
        ts_buf_str(&q, "{\"query\":\"select:");
        ts_buf_escaped(&q, name, strlen(name));
        ts_buf_add(&q, "\"}", 3);
        b->input = q.failed ? NULL : q.p;
        lp->ans.broken |= q.failed;

    } else {
        lp->ans.client_tool = 1;
        return;
    }

    b->id = ts_quoted(id);
    lp->ans.broken |= (b->id == NULL);
    lp->ans.held++;
}


ts_lblock_t *
ts_loop_block_add(ts_loop_t *lp, long index)
{
    ts_lblock_t  *b;

    if (lp->ans.nblocks == TS_LOOP_BLOCKS_MAX) {
        lp->ans.broken = 1;
        return NULL;
    }

    b = &lp->ans.blocks[lp->ans.nblocks++];
    memset(b, 0, sizeof(ts_lblock_t));
    b->index = index;
    b->client = -1;
    ts_buf_init(&b->text, TS_LOOP_EVENT_MAX);
    ts_buf_init(&b->sig, TS_LOOP_EVENT_MAX);

    return b;
}


int
ts_loop_feed(ts_loop_t *lp, const char *p, size_t n, ts_buf_t *out)
{
    ts_sse_event_t  ev;
    size_t          used, at;

    /* an answer the gateway could not read has ended for the client */
    if (lp->ans.unread) {
        return 0;
    }

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
        /* the same whether the event comes whole or in pieces (below) */
        if (ev.raw_len > TS_LOOP_EVENT_MAX) {
            ts_loop_unreadable(lp, out);

        } else if ((lp->dialect ? lp->dialect->event(lp, &ev, out)
                                : ts_loop_event(lp, &ev, out)) != 0)
        {
            return -1;
        }

        /* ts_loop_unreadable() emptied pending */
        if (lp->ans.unread) {
            return out->failed ? -1 : 0;
        }

        at += used;
    }

    ts_buf_consume(&lp->pending, at);

    /*
     * An event longer than the limit is not an event of this API, and
     * passing its bytes would give the client a part of an event it
     * cannot place: the answer ends with an error event.
     */
    if (lp->pending.len > TS_LOOP_EVENT_MAX) {
        ts_loop_unreadable(lp, out);
    }

    return out->failed ? -1 : 0;
}


static size_t
ts_call_max(const ts_loop_t *lp, const char *buf, const ts_val_t *in)
{
    unsigned  cap;
    ts_val_t  n;
    double    d;

    cap = lp->in.policy->max_results;

    (void) ts_object_member(buf, in, "max_results", &n);

    if (!ts_loop_num(buf, &n, &d) || d < 1) {
        return TS_SEARCH_DEFAULT < cap ? TS_SEARCH_DEFAULT : cap;
    }

    return d < cap ? (size_t) d : cap;
}


int
ts_loop_search(ts_loop_t *lp, const char *input, ts_loop_found_pt found,
    void *arg)
{
    const ts_policy_t  *p;
    ts_catalog_t        cat;
    ts_result_t         res;
    ts_buf_t            servers;
    ts_hints_t          hints;
    ts_name_t          *names;
    const ts_entry_t   *e;
    ts_val_t            in;
    char               *q;
    size_t              i, n;
    int                 rc;

    p = lp->in.policy;

    /* the input is an object: the caller made sure of it */
    if (ts_value_parse(input, strlen(input), &in) != TS_OK) {
        in.kind = TS_NONE;
    }

    q = ts_loop_query(input, &in);

    hints.names = p->hint_names;
    hints.phrases = p->hint_phrases;
    memset(&res, 0, sizeof(ts_result_t));
    names = NULL;
    n = 0;

    rc = lp->rq.defer == NULL ? 0
         : ts_catalog_build(&cat, &lp->rq.ix, lp->rq.defer, &hints,
                            p->scoring == TS_SCORING_HYBRID);

    if (rc == 0 && lp->rq.defer != NULL) {
        rc = ts_search_run(&cat, q ? q : "", q ? strlen(q) : 0,
                           p->scoring, ts_call_max(lp, input, &in), &res);
        names = calloc(res.nhits ? res.nhits : 1, sizeof(ts_name_t));
        rc = (rc == 0 && names != NULL) ? 0 : -1;

        for (i = 0; rc == 0 && i < res.nhits; i++, n++) {
            e = &cat.tools[res.hits[i].tool];
            names[n].p = ts_catalog_name(&cat, e);
            names[n].len = e->name.len;

            lp->nloaded += !lp->loaded[e->at];
            lp->loaded[e->at] = 1;
        }
    }

    ts_buf_init(&servers, 0);

    if (rc == 0 && n == 0) {
        rc = ts_gateway_servers(&servers, &lp->rq.ix);
    }

    if (rc == 0) {
        rc = found(arg, names, n, &servers);
    }

    ts_buf_free(&servers);

    lp->searches++;
    lp->misses += (n == 0);

    free(names);
    ts_result_free(&res);

    if (lp->rq.defer != NULL) {
        ts_catalog_free(&cat);
    }

    free(q);

    return rc;
}


/* a Messages search call's result, and references to what it found */
typedef struct {
    ts_loop_t          *lp;
    const ts_lblock_t  *b;
    ts_buf_t           *refs;
    ts_buf_t           *result;
} ts_loop_result_t;


static int
ts_loop_result_add(void *arg, const ts_name_t *names, size_t n,
    const ts_buf_t *servers)
{
    ts_loop_result_t  *f = arg;

    ts_gateway_references(f->refs, names, n);

    if (f->result->len) {
        ts_buf_str(f->result, ",");
    }

    return ts_gateway_result(f->result, f->b->id, strlen(f->b->id), names, n,
                             1, f->lp->rq.load_refs, servers,
                             f->lp->rq.load_wrapper ? &f->lp->rq.ix : NULL);
}


/* runs one search; the found tools are marked loaded and listed */
static int
ts_loop_search_call(ts_loop_t *lp, const ts_lblock_t *b, ts_buf_t *refs,
    ts_buf_t *result)
{
    ts_loop_result_t  f;

    f.lp = lp;
    f.b = b;
    f.refs = refs;
    f.result = result;

    return ts_loop_search(lp, b->input, ts_loop_result_add, &f);
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
    max = lp->in.policy->max_searches;

    for (i = 0; i < lp->ans.nblocks; i++) {
        b = &lp->ans.blocks[i];

        /* the call wrapper's are answered below */
        if (!b->search || b->wrapper) {
            continue;
        }

        ts_loop_call_input(lp, b, b->text.p, b->text.len);
        ts_buf_reset(&refs);
        ts_buf_reset(&content);

        if (b->input == NULL) {
            lp->ans.broken = 1;
            break;
        }

        if (b->invalid) {
            /* shown with its error; no further call: pause_turn */
            ts_loop_refused(lp, &content);
            lp->ans.broken = 1;

        } else if (lp->searches >= max) {
            ts_loop_spent(lp, b, max, &content);

        } else if (ts_loop_search_call(lp, b, &refs, &results) == 0) {
            ts_loop_found(&content, &refs);
            referenced |= lp->rq.load_refs && refs.len > 0;

        } else {
            lp->ans.broken = 1;
            break;
        }

        ts_loop_client_search(lp, b, &content, out);
    }

    go = !lp->ans.broken && !lp->ans.client_tool && lp->searches < max
         && lp->refusals < max;

    /* a wrapper call the loop cannot answer goes to the client */
    lp->ans.client_tool |= ts_loop_wrapper_results(lp, go, &results, out);

    go = go && !lp->ans.broken && !lp->ans.client_tool
         && ts_loop_add_turns(lp, &results, referenced) == 0;

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

    if (lp->dialect != NULL) {
        return lp->dialect->end(lp, out);
    }

    if (!lp->sse && ts_loop_json_answer(lp) != 0) {
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
        && (lp->ans.errored
            || (lp->ans.held == 0 && (lp->ans.stopped || lp->calls == 1))))
    {
        ts_buf_add(out, lp->pending.p, lp->pending.len);
    }

    if (lp->ans.errored) {
        ts_loop_totals_add(lp);
        return TS_LOOP_DONE;
    }

    if (lp->ans.held == 0 || strcmp(lp->ans.stop_reason, "tool_use") != 0) {
        if (lp->sse && lp->ans.held == 0) {
            if (!lp->ans.stopped && lp->calls > 1) {
                ts_loop_fail(lp, 1, &early, out);
            }

            ts_loop_totals_add(lp);
            return TS_LOOP_DONE;
        }

        /* calls cut off before the end cannot run */
        return ts_loop_final(lp, NULL, out);
    }

    if (ts_run_searches(lp, out)) {
        ts_loop_totals_add(lp);
        return TS_LOOP_AGAIN;
    }

    lp->paused = !lp->ans.client_tool;

    return ts_loop_final(lp, lp->ans.client_tool ? "tool_use" : "pause_turn",
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


/* the counters of ts_counters.h whose from is LOOP */
void
ts_loop_counters(size_t *count, const ts_loop_t *lp)
{
    count[TS_COUNTER_searches] = ts_loop_searches(lp);
    count[TS_COUNTER_search_misses] = ts_loop_misses(lp);
    count[TS_COUNTER_loop_iterations] = ts_loop_calls(lp);
    count[TS_COUNTER_pause_turns] = ts_loop_paused(lp);
    count[TS_COUNTER_loaded] = ts_loop_loaded(lp);
}
