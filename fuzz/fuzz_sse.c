/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Fuzz target: upstream answers through the gateway search loop, as an
 * event stream or one JSON message.  The input's first byte picks the
 * mode, the search budget and how the answer is cut into pieces; the
 * rest is the answer each call gets.  Properties: the client's bytes do
 * not depend on where the answer was cut (byte by byte included); valid
 * events stay valid events, a valid JSON answer stays valid JSON; every
 * next call's body is valid JSON with no dangling tool_reference and the
 * client's other members untouched; renumbering an event changes its
 * index only; an answer without its search blocks (ts_cut) does not
 * depend on the cuts either, and stays valid events or valid JSON.
 */

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fz.h"
#include "loop/ts_cut.h"
#include "loop/ts_loop.h"
#include "loop/ts_sse.h"


#define FZ_TOOL(name)                                                       \
    "{\"name\":\"" name "\",\"description\":\"Creates entities in the "    \
    "memory graph.\",\"input_schema\":{\"type\":\"object\"}}"

static const char  fz_body[] =
    "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":64,\"stream\":true,"
    "\"metadata\":{\"user_id\":\"u\"},"
    "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
    "\"tools\":[" FZ_TOOL("Bash") "," FZ_TOOL("mcp__memory__create_entities")
    "," FZ_TOOL("mcp__memory__read_graph") "]}";


/* renumbering replaces the top-level index and nothing else */
static void
fz_check_reindex(const char *p, size_t n)
{
    ts_sse_event_t  ev;
    ts_val_t        doc, idx;
    ts_buf_t        out, want;
    size_t          used, seen, at;

    seen = 0;
    ts_buf_init(&out, 0);
    ts_buf_init(&want, 0);

    while ((used = ts_sse_next(p, n, &seen, &ev)) > 0) {
        ts_buf_reset(&out);
        ts_buf_reset(&want);
        fz_assert(ts_sse_reindex(&ev, 7, &out) == 0, "reindex");

        if (ev.data != NULL
            && ts_value_parse(ev.data, ev.data_len, &doc) == TS_OK
            && ts_object_member(ev.data, &doc, "index", &idx) == TS_OK
            && idx.kind == TS_NUMBER)
        {
            at = (size_t) (ev.data - ev.raw) + idx.off;
            ts_buf_add(&want, ev.raw, at);
            ts_buf_add(&want, "7", 1);
            ts_buf_add(&want, ev.raw + at + idx.len,
                       ev.raw_len - at - idx.len);

        } else {
            ts_buf_add(&want, ev.raw, ev.raw_len);
        }

        fz_assert(out.len == want.len
                  && memcmp(out.p, want.p, want.len) == 0,
                  "renumbering changed more than the index");

        p += used;
        n -= used;
    }

    ts_buf_free(&out);
    ts_buf_free(&want);
}


/* how an answer is cut: whole, in pieces of 1 byte (step 0), or of
 * sizes drawn from the seed */
typedef struct {
    unsigned    seed;
    unsigned    step;
    size_t      whole;
} fz_cut_t;


static size_t
fz_piece(void *arg)
{
    fz_cut_t  *c = arg;

    if (c->step == (unsigned) -1) {
        return c->whole;
    }

    if (c->step == 0) {
        return 1;
    }

    c->seed = c->seed * 1103515245 + 12345;

    return 1 + (c->seed >> 16) % (c->step * 16);
}


/* a call's body keeps its references and the client's other members */
static void
fz_check_call(const char *p, size_t n)
{
    fz_check_references(p, n);
    fz_check_untouched(fz_body, sizeof(fz_body) - 1, p, n);
}


/* the whole exchange; the client's bytes in out */
static void
fz_run(const fz_policy_t *f, int sse, const char *answer, size_t n,
    unsigned step, ts_buf_t *out)
{
    ts_loop_t  *lp;
    fz_cut_t    cut;

    lp = ts_loop_create(&f->in, fz_body, sizeof(fz_body) - 1);
    fz_assert(lp != NULL, "memory");
    cut.seed = (unsigned) n;
    cut.step = step;
    cut.whole = n;

    fz_exchange(lp, sse, answer, n, fz_piece, &cut, fz_check_call, out);
    ts_loop_free(lp);
}


/* the answer without its search blocks, fed in pieces of step bytes */
static void
fz_strip(const char *p, size_t n, int sse, size_t step, ts_buf_t *out)
{
    ts_cut_t     a;
    size_t       at, k;

    ts_cut_init(&a, "tool_search", sse);

    for (at = 0; at < n; at += k) {
        k = step < n - at ? step : n - at;
        fz_assert(ts_cut_feed(&a, p + at, k, out) == 0, "answer feed");
    }

    fz_assert(ts_cut_end(&a, out) == 0, "answer end");
    ts_cut_free(&a);
}


/*
 * A message the engine reads, with one content member at most: the cut as
 * it comes is the whole message's cut (a second content member, what the
 * whole cut leaves as it came, is cut at its first by the streaming one)
 */
static void
fz_check_whole(const char *p, size_t n, const ts_buf_t *streamed)
{
    ts_buf_t  whole;
    ts_val_t  doc, content;
    long      removed;

    if (ts_value_parse(p, n, &doc) != TS_OK || doc.kind != TS_OBJECT
        || ts_object_member(p, &doc, "content", &content)
           == TS_ERR_DUPLICATE)
    {
        return;
    }

    ts_buf_init(&whole, 0);
    fz_assert(ts_cut_whole("tool_search", p, n, &whole, &removed) == 0,
              "whole cut");
    fz_assert(whole.len == streamed->len
              && (whole.len == 0
                  || memcmp(whole.p, streamed->p, whole.len) == 0),
              "the streaming cut differs from the whole message's");
    ts_buf_free(&whole);
}


static void
fz_check_answer(const char *p, size_t n, int sse, size_t step)
{
    ts_buf_t  whole, cut;

    ts_buf_init(&whole, 0);
    ts_buf_init(&cut, 0);

    fz_strip(p, n, sse, n ? n : 1, &whole);
    fz_strip(p, n, sse, step, &cut);

    fz_assert(whole.len == cut.len
              && (cut.len == 0 || memcmp(whole.p, cut.p, cut.len) == 0),
              "the answer without search blocks depends on the cuts");

    if (sse) {
        fz_assert(!fz_events_valid(p, n, 0)
                  || fz_events_valid(whole.p, whole.len, 0),
                  "valid events in, invalid events without search blocks");

    } else {
        fz_assert(!fz_valid_json(p, n) || fz_valid_json(whole.p, whole.len),
                  "valid JSON in, invalid JSON without search blocks");
        fz_check_whole(p, n, &whole);
    }

    ts_buf_free(&whole);
    ts_buf_free(&cut);
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* gateway search on a compatible upstream, with the call wrapper */
    static const uint8_t  policy[FZ_POLICY_BYTES] = {
        1, 0, 0x8b, 2, 2, 0x64, 0, 0x0a
    };
    fz_policy_t  f;
    ts_buf_t     whole, cut;
    const char  *answer;
    size_t       n;
    int          sse;

    if (size < 1) {
        return 0;
    }

    fz_init();
    fz_policy(&f, policy);
    f.p.max_searches = 1 + (data[0] >> 2 & 3);

    sse = !(data[0] & 1);
    answer = (const char *) data + 1;
    n = size - 1;

    ts_buf_init(&whole, 0);
    ts_buf_init(&cut, 0);

    fz_run(&f, sse, answer, n, (unsigned) -1, &whole);
    fz_run(&f, sse, answer, n, data[0] >> 4, &cut);

    fz_assert(whole.len == cut.len
              && (cut.len == 0 || memcmp(whole.p, cut.p, cut.len) == 0),
              "the client's bytes depend on how the answer was cut");

    if (sse) {
        fz_check_reindex(answer, n);
        fz_assert(!fz_events_valid(answer, n, 0)
                  || fz_events_valid(whole.p, whole.len, 0),
                  "valid events in, an invalid event out");

    } else {
        fz_assert(!fz_valid_json(answer, n)
                  || fz_valid_json(whole.p, whole.len),
                  "a valid JSON answer, an invalid JSON message out");
    }

    /* the upstream's answer (hosted path), the loop's (gateway path) */
    fz_check_answer(answer, n, sse, 1 + (data[0] >> 4));
    fz_check_answer(whole.p, whole.len, sse, 1 + (data[0] >> 4));

    ts_buf_free(&whole);
    ts_buf_free(&cut);

    return 0;
}
