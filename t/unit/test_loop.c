/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Gateway-executed search, response side: answers fed to the loop as an
 * upstream would send them, checked on what the client gets and on the
 * next call's body.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tst.h"
#include "tpol.h"
#include "loop/ts_loop.h"
#include "loop/ts_sse.h"
#include "rewrite/ts_counters.h"


#define LOOP_BODY                                                           \
    HEAD "'stream':true," HI ",'tools':[" TOOL("Read") ","                  \
    TOOL("mcp__z__last") "," TOOL("mcp__a__first") "]}"

#define EV(name, json)  "event: " name "\ndata: " json "\n\n"

#define START(in)                                                           \
    EV("message_start", "{\"type\":\"message_start\",\"message\":"         \
       "{\"id\":\"m1\",\"type\":\"message\",\"role\":\"assistant\","       \
       "\"content\":[],\"usage\":{\"input_tokens\":" in ","                \
       "\"output_tokens\":1}}}")

#define TEXT(i, s)                                                          \
    EV("content_block_start", "{\"type\":\"content_block_start\","         \
       "\"index\":" i ",\"content_block\":{\"type\":\"text\","             \
       "\"text\":\"\"}}")                                                   \
    EV("content_block_delta", "{\"type\":\"content_block_delta\","         \
       "\"index\":" i ",\"delta\":{\"type\":\"text_delta\",\"text\":\""    \
       s "\"}}")                                                            \
    EV("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":" \
       i "}")

#define CALL(i, id, name, input)                                            \
    EV("content_block_start", "{\"type\":\"content_block_start\","         \
       "\"index\":" i ",\"content_block\":{\"type\":\"tool_use\","         \
       "\"id\":\"" id "\",\"name\":\"" name "\",\"input\":{}}}")            \
    EV("content_block_delta", "{\"type\":\"content_block_delta\","         \
       "\"index\":" i ",\"delta\":{\"type\":\"input_json_delta\","         \
       "\"partial_json\":\"" input "\"}}")                                  \
    EV("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":" \
       i "}")

#define END(reason, out)                                                    \
    EV("message_delta", "{\"type\":\"message_delta\",\"delta\":"           \
       "{\"stop_reason\":\"" reason "\",\"stop_sequence\":null},"          \
       "\"usage\":{\"output_tokens\":" out "}}")                            \
    EV("message_stop", "{\"type\":\"message_stop\"}")

#define SELECT_FIRST  "{\\\"query\\\":\\\"select:mcp__a__first\\\"}"


typedef struct {
    tpol_t       t;
    char        *body;
    size_t       len;
    ts_loop_t   *lp;
    ts_buf_t     req;
    ts_buf_t     out;
} tloop_t;


/*
 * Vertex, toolsearch_found_tools tools: found tools load as ordinary
 * tools, results are text
 */
static void
tloop_init_at(tloop_t *l, const char *body, int upstream)
{
    memset(l, 0, sizeof(tloop_t));
    tpol_init(&l->t);
    l->t.p.search = TS_SEARCH_GATEWAY;
    l->t.p.found_tools = TS_FOUND_TOOLS;
    l->t.in.upstream = upstream;
    l->body = tst_quote(body, &l->len);
    l->lp = ts_loop_create(&l->t.in, l->body, l->len);
    ts_buf_init(&l->req, 0);
    ts_buf_init(&l->out, 0);
    CHECK(l->lp != NULL);
}


static void
tloop_init(tloop_t *l, const char *body)
{
    tloop_init_at(l, body, TS_UPSTREAM_VERTEX);
}


/* one call: its body, then the answer fed in pieces of 7 bytes */
static ts_loop_next_t
tloop_call(tloop_t *l, const char *answer, int sse)
{
    size_t  n, i;

    CHECK(ts_loop_request(l->lp, &l->req) == 0);
    ts_loop_start(l->lp, sse);

    n = strlen(answer);

    for (i = 0; i < n; i += 7) {
        CHECK(ts_loop_feed(l->lp, answer + i, n - i < 7 ? n - i : 7,
                           &l->out) == 0);
    }

    return ts_loop_end(l->lp, &l->out);
}


static int
out_has(const tloop_t *l, const char *s)
{
    return has_text(l->out.p, l->out.len, s);
}


static int
req_has(const tloop_t *l, const char *s)
{
    return has_text(l->req.p, l->req.len, s);
}


static void
tloop_free(tloop_t *l)
{
    ts_loop_free(l->lp);
    ts_buf_free(&l->req);
    ts_buf_free(&l->out);
    free(l->body);
    tpol_free(&l->t);
}


static void
test_loop_sse_search_then_answer(void)
{
    tloop_t  l;
    trun_t   r;
    size_t   count[TS_COUNTER_N];

    tloop_init(&l, LOOP_BODY);

    CHECK(tloop_call(&l, START("100") TEXT("0", "Looking.")
                     CALL("1", "toolu_s", "tool_search", SELECT_FIRST)
                     END("tool_use", "20"), 1) == TS_LOOP_AGAIN);
    CHECK(!req_has(&l, "mcp__a__first\",\"description"));

    /* the text streamed; the call shows as the hosted search's blocks */
    CHECK(out_has(&l, "\"index\":0,\"delta\":{\"type\":\"text_delta\""));
    CHECK(!out_has(&l, "\"tool_use\""));
    CHECK(out_has(&l, "\"index\":1,\"content_block\":{\"type\":"
                  "\"server_tool_use\",\"id\":\"toolu_s\",\"name\":"
                  "\"tool_search\",\"input\":{}}"));
    CHECK(out_has(&l, "\"index\":2,\"content_block\":{\"type\":"
                  "\"tool_search_tool_result\",\"tool_use_id\":\"toolu_s\","
                  "\"content\":{\"type\":\"tool_search_tool_search_result\","
                  "\"tool_references\":[{\"type\":\"tool_reference\","
                  "\"tool_name\":\"mcp__a__first\"}]}}"));
    CHECK(!out_has(&l, "message_delta") && !out_has(&l, "message_stop"));

    /* call 2 carries the found tool and the exchange */
    l.out.len = 0;
    CHECK(tloop_call(&l, START("300") TEXT("0", "Done.")
                     END("end_turn", "5"), 1) == TS_LOOP_DONE);
    CHECK(req_has(&l, "{\"name\":\"mcp__a__first\",\"description\""));
    CHECK(!req_has(&l, "{\"name\":\"mcp__z__last\""));
    CHECK(req_has(&l, "{\"role\":\"assistant\",\"content\":[{\"type\":"
                  "\"text\",\"text\":\"Looking.\"},{\"type\":\"tool_use\","
                  "\"id\":\"toolu_s\",\"name\":\"tool_search\",\"input\":"
                  "{\"query\":\"select:mcp__a__first\"}}]},{\"role\":"
                  "\"user\",\"content\":[{\"type\":\"tool_result\","
                  "\"tool_use_id\":\"toolu_s\",\"content\":\"Loaded: "
                  "mcp__a__first."));

    /* one message: no second start, later blocks renumbered, sums */
    CHECK(!out_has(&l, "message_start"));
    CHECK(out_has(&l, "{\"type\":\"content_block_start\",\"index\":3,"));
    CHECK(out_has(&l, "\"stop_reason\":\"end_turn\""));
    CHECK(out_has(&l, "\"input_tokens\":400"));
    CHECK(out_has(&l, "\"output_tokens\":25"));
    CHECK(out_has(&l, "\"tool_search_requests\":1"));
    CHECK(out_has(&l, "event: message_stop"));

    CHECK(ts_loop_calls(l.lp) == 2 && ts_loop_searches(l.lp) == 1
          && ts_loop_loaded(l.lp) == 1 && !ts_loop_paused(l.lp));

    /* ts_loop_counters() sets the table's LOOP counters, and only those */
    memset(count, 0xff, sizeof(count));
    ts_loop_counters(count, l.lp);
    CHECK(counters_filled(count, "LOOP"));
    CHECK(count[TS_COUNTER_searches] == 1
          && count[TS_COUNTER_loop_iterations] == 2);

    /* ts_counters_from_request() sets the ENGINE ones, and only those */
    memset(count, 0xff, sizeof(count));
    CHECK(trun(&r, &l.t, LOOP_BODY) == TS_DECISION_DEFERRED_GATEWAY);
    ts_counters_from_request(count, &r.rq);
    CHECK(counters_filled(count, "ENGINE"));
    CHECK(count[TS_COUNTER_tools_total] == 3
          && count[TS_COUNTER_tools_deferred] == 2);
    trun_free(&r);

    tloop_free(&l);
}


/* Anthropic: the found tool goes deferred, the result references it */
static void
test_loop_references(void)
{
    tloop_t  l;

    tloop_init_at(&l, LOOP_BODY, TS_UPSTREAM_ANTHROPIC);

    CHECK(tloop_call(&l, START("100")
                     CALL("0", "toolu_s", "tool_search", SELECT_FIRST)
                     END("tool_use", "20"), 1) == TS_LOOP_AGAIN);
    CHECK(tloop_call(&l, START("300") TEXT("0", "Done.")
                     END("end_turn", "5"), 1) == TS_LOOP_DONE);

    CHECK(req_has(&l, "\"name\":\"mcp__a__first\",\"description\":"
                  "\"D mcp__a__first\",\"input_schema\":{\"type\":"
                  "\"object\"},\"defer_loading\":true}"));
    CHECK(req_has(&l, "{\"role\":\"user\",\"content\":[{\"type\":"
                  "\"tool_result\",\"tool_use_id\":\"toolu_s\","
                  "\"content\":[{\"type\":\"tool_reference\","
                  "\"tool_name\":\"mcp__a__first\"}]},{\"type\":\"text\","
                  "\"text\":\"Tool loaded.\"}]}"));
    CHECK(l.lp != NULL && ts_loop_loaded(l.lp) == 1);
    tloop_free(&l);
}


static void
test_loop_json(void)
{
    tloop_t  l;
    cJSON   *json;

    tloop_init(&l, LOOP_BODY);

    CHECK(tloop_call(&l, "{\"id\":\"m1\",\"type\":\"message\",\"content\":"
                     "[{\"type\":\"tool_use\",\"id\":\"toolu_s\",\"name\":"
                     "\"tool_search\",\"input\":{\"query\":\"first\"}}],"
                     "\"stop_reason\":\"tool_use\",\"usage\":"
                     "{\"input_tokens\":10,\"output_tokens\":2}}", 0)
          == TS_LOOP_AGAIN);
    CHECK(l.out.len == 0);

    CHECK(tloop_call(&l, "{\"id\":\"m2\",\"type\":\"message\",\"content\":"
                     "[{\"type\":\"text\",\"text\":\"ok\"}],\"stop_reason\":"
                     "\"end_turn\",\"n\":12345678901234567890,\"usage\":"
                     "{\"input_tokens\":30,\"output_tokens\":3}}", 0)
          == TS_LOOP_DONE);

    CHECK(out_has(&l, "{\"id\":\"m2\",\"type\":\"message\",\"content\":["
                  "{\"type\":\"server_tool_use\",\"id\":\"toolu_s\","
                  "\"name\":\"tool_search\",\"input\":{\"query\":"
                  "\"first\"}},{\"type\":\"tool_search_tool_result\","));
    CHECK(out_has(&l, "\"tool_name\":\"mcp__a__first\"}]}},{\"type\":"
                  "\"text\",\"text\":\"ok\"}],\"stop_reason\":\"end_turn\","
                  "\"n\":12345678901234567890,"));
    CHECK(out_has(&l, "\"input_tokens\":40,\"output_tokens\":5"));
    json = tst_json(l.out.p, l.out.len);
    CHECK(json != NULL);
    cJSON_Delete(json);
    tloop_free(&l);
}


static void
test_loop_bounds(void)
{
    tloop_t  l;

    /*
     * The budget: the last search runs and the model reads it; a search
     * past it is shown with its error, and the turn pauses
     */
    tloop_init(&l, LOOP_BODY);
    l.t.p.max_searches = 1;
    CHECK(tloop_call(&l, START("1") CALL("0", "toolu_s", "tool_search",
                                         "{\\\"query\\\":\\\"zzz\\\"}")
                     END("tool_use", "2"), 1) == TS_LOOP_AGAIN);
    CHECK(out_has(&l, "\"tool_references\":[]"));
    CHECK(tloop_call(&l, START("2") CALL("0", "toolu_t", "tool_search",
                                         "{\\\"query\\\":\\\"zzz\\\"}")
                     END("tool_use", "2"), 1) == TS_LOOP_DONE);
    CHECK(req_has(&l, "\"tool_use_id\":\"toolu_s\""));
    CHECK(out_has(&l, "\"error_code\":\"too_many_requests\""));
    CHECK(out_has(&l, "\"stop_reason\":\"pause_turn\""));
    CHECK(ts_loop_paused(l.lp) && ts_loop_misses(l.lp) == 1);
    tloop_free(&l);

    /* a client tool in the same answer: it goes to the client */
    tloop_init(&l, LOOP_BODY);
    CHECK(tloop_call(&l, START("1") CALL("0", "toolu_r", "Read", "{}")
                     CALL("1", "toolu_s", "tool_search", SELECT_FIRST)
                     END("tool_use", "2"), 1) == TS_LOOP_DONE);
    CHECK(out_has(&l, "\"index\":0,\"content_block\":{\"type\":\"tool_use\","
                  "\"id\":\"toolu_r\""));
    CHECK(out_has(&l, "\"index\":1,\"content_block\":{\"type\":"
                  "\"server_tool_use\""));
    CHECK(out_has(&l, "\"stop_reason\":\"tool_use\""));
    CHECK(!ts_loop_paused(l.lp));
    tloop_free(&l);

    /* a call of a deferred tool never loaded: an implicit select: */
    tloop_init(&l, LOOP_BODY);
    CHECK(tloop_call(&l, START("1") CALL("0", "toolu_z", "mcp__z__last",
                                         "{\\\"a\\\":1}")
                     END("tool_use", "2"), 1) == TS_LOOP_AGAIN);
    CHECK(out_has(&l, "\"partial_json\":\"{\\\"query\\\":\\\"select:"
                  "mcp__z__last\\\"}\""));
    CHECK(!out_has(&l, "\"type\":\"tool_use\""));
    CHECK(tloop_call(&l, START("1") CALL("0", "toolu_y", "mcp__z__last",
                                         "{\\\"a\\\":1}")
                     END("tool_use", "2"), 1) == TS_LOOP_DONE);
    CHECK(req_has(&l, "{\"name\":\"mcp__z__last\""));
    CHECK(out_has(&l, "\"index\":2,\"content_block\":{\"type\":\"tool_use\","
                  "\"id\":\"toolu_y\""));
    tloop_free(&l);
}


/*
 * A search that loads every deferred tool: the loop goes on (found by
 * fuzzing: the next call could not be built, the client got a 500), in
 * auto mode too, where the tools left deferred fall below the threshold.
 */
static void
test_loop_loads_every_tool(void)
{
    static const int  modes[] = { TS_DEFER_ON, TS_DEFER_AUTO };
    tloop_t           l;
    size_t            i;

    for (i = 0; i < 2; i++) {
        tloop_init(&l, LOOP_BODY);
        l.t.p.defer_mode = modes[i];
        tst_note("mode %d", modes[i]);

        CHECK(tloop_call(&l, START("1") CALL("0", "toolu_s", "tool_search",
                         "{\\\"query\\\":\\\"select:mcp__a__first,"
                         "mcp__z__last\\\"}") END("tool_use", "2"), 1)
              == TS_LOOP_AGAIN);
        CHECK(ts_loop_loaded(l.lp) == 2);
        CHECK(tloop_call(&l, START("1") TEXT("0", "done")
                         END("end_turn", "2"), 1) == TS_LOOP_DONE);
        CHECK(req_has(&l, "{\"name\":\"mcp__z__last\""));
        CHECK(req_has(&l, "\"tool_use_id\":\"toolu_s\""));
        tloop_free(&l);
    }
}


/*
 * A streamed block whose input is not JSON cannot go back upstream: no
 * further call, the turn pauses (found by fuzzing: the next call's body
 * was not JSON).
 */
static void
test_loop_broken_input(void)
{
    tloop_t  l;

    tloop_init(&l, LOOP_BODY);
    CHECK(tloop_call(&l, START("1") EV("content_block_start",
                     "{\"type\":\"content_block_start\",\"index\":0,"
                     "\"content_block\":{\"type\":\"server_tool_use\","
                     "\"id\":\"srv1\",\"name\":\"web_search\","
                     "\"input\":{}}}")
                     EV("content_block_delta", "{\"type\":"
                     "\"content_block_delta\",\"index\":0,\"delta\":"
                     "{\"type\":\"input_json_delta\",\"partial_json\":"
                     "\"{\\\"q\\\": \"}}")
                     EV("content_block_stop", "{\"type\":"
                     "\"content_block_stop\",\"index\":0}")
                     CALL("1", "toolu_s", "tool_search", SELECT_FIRST)
                     END("tool_use", "2"), 1) == TS_LOOP_DONE);
    CHECK(out_has(&l, "\"stop_reason\":\"pause_turn\""));
    CHECK(ts_loop_calls(l.lp) == 1);
    tloop_free(&l);
}


/* a search call without a query does not run: its error, pause_turn */
static void
test_loop_invalid_search_input(void)
{
    tloop_t  l;

    tloop_init(&l, LOOP_BODY);
    CHECK(tloop_call(&l, START("1")
                     CALL("0", "toolu_s", "tool_search",
                          "{\\\"q\\\":\\\"memory\\\"}")
                     END("tool_use", "2"), 1) == TS_LOOP_DONE);
    CHECK(out_has(&l, "\"error_code\":\"invalid_tool_input\""));
    CHECK(out_has(&l, "\"stop_reason\":\"pause_turn\""));
    CHECK(ts_loop_calls(l.lp) == 1);
    CHECK(ts_loop_searches(l.lp) == 0);
    tloop_free(&l);
}


/*
 * An event over the limit ends the answer with an error event: no part
 * of it reaches the client, nor anything after it, and no call follows.
 */
static void
test_loop_event_over_limit(void)
{
    static const char  head[] = START("1")
        EV("content_block_start", "{\"type\":\"content_block_start\","
           "\"index\":0,\"content_block\":{\"type\":\"tool_use\","
           "\"id\":\"toolu_s\",\"name\":\"tool_search\","
           "\"input\":{}}}")
        "event: content_block_delta\ndata: {\"type\":"
        "\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
        "\"input_json_delta\",\"partial_json\":\"";
    static const char  tail[] = "\"}}\n\n" END("tool_use", "2");
    tloop_t            l, whole;
    char              *x, *w;
    size_t             n, i;

    n = TS_LOOP_EVENT_MAX + 1;
    x = malloc(n);
    CHECK(x != NULL);
    memset(x, 'x', n);

    tloop_init(&l, LOOP_BODY);
    CHECK(ts_loop_request(l.lp, &l.req) == 0);
    ts_loop_start(l.lp, 1);
    CHECK(ts_loop_feed(l.lp, head, sizeof(head) - 1, &l.out) == 0);

    for (i = 0; i < n; i += 65536) {
        CHECK(ts_loop_feed(l.lp, x + i, n - i < 65536 ? n - i : 65536,
                           &l.out) == 0);
    }

    CHECK(ts_loop_feed(l.lp, tail, sizeof(tail) - 1, &l.out) == 0);
    CHECK(ts_loop_end(l.lp, &l.out) == TS_LOOP_DONE);
    CHECK(out_has(&l, "event: error"));
    CHECK(out_has(&l, TS_LOOP_UNREADABLE));
    CHECK(!out_has(&l, "content_block_delta"));
    CHECK(!out_has(&l, "message_stop"));
    CHECK(!out_has(&l, "pause_turn"));
    CHECK(l.out.len < 4096);
    CHECK(ts_loop_calls(l.lp) == 1);

    /* the same when the event comes whole */
    w = malloc(sizeof(head) + n + sizeof(tail));
    CHECK(w != NULL);
    memcpy(w, head, sizeof(head) - 1);
    memcpy(w + sizeof(head) - 1, x, n);
    memcpy(w + sizeof(head) - 1 + n, tail, sizeof(tail));
    tloop_init(&whole, LOOP_BODY);
    CHECK(ts_loop_request(whole.lp, &whole.req) == 0);
    ts_loop_start(whole.lp, 1);
    CHECK(ts_loop_feed(whole.lp, w, strlen(w), &whole.out) == 0);
    CHECK(ts_loop_end(whole.lp, &whole.out) == TS_LOOP_DONE);
    CHECK(whole.out.len == l.out.len
          && memcmp(whole.out.p, l.out.p, l.out.len) == 0);

    free(w);
    free(x);
    tloop_free(&whole);
    tloop_free(&l);
}


/*
 * An event that arrives one byte at a time is scanned once: the parser
 * resumes where it stopped (rescanning what was pending before each byte
 * cost a 1 MB event seconds of a worker's time), and the client gets the
 * same bytes as when the answer comes whole.
 */
static void
test_loop_event_byte_by_byte(void)
{
    static const char  ev[] = START("1") TEXT("0", "one byte at a time")
                              END("end_turn", "2");
    ts_sse_event_t     e;
    tloop_t            l;
    size_t             i, seen;

    /* bytes already seen are not looked at again: this fake end is */
    seen = 6;
    CHECK(ts_sse_next("xx\n\nyyyy", 8, &seen, &e) == 0 && seen == 8);
    seen = 7;
    CHECK(ts_sse_next("xxxxx\n\n", 7, &seen, &e) == 7 && seen == 0);

    tloop_init(&l, LOOP_BODY);
    CHECK(ts_loop_request(l.lp, &l.req) == 0);
    ts_loop_start(l.lp, 1);

    for (i = 0; i < sizeof(ev) - 1; i++) {
        CHECK(ts_loop_feed(l.lp, ev + i, 1, &l.out) == 0);
    }

    CHECK(ts_loop_end(l.lp, &l.out) == TS_LOOP_DONE);
    CHECK(l.out.len == sizeof(ev) - 1 && memcmp(l.out.p, ev, l.out.len) == 0);

    tloop_free(&l);
}


/*
 * The call wrapper (the default): the search's result gives the
 * definition as text, tools[] keeps its bytes, an invalid call is
 * answered with an error, a valid one reaches the client as a call of
 * its tool under the next index, its deltas held until it ends
 */
static void
test_loop_sse_wrapper(void)
{
    tloop_t  l;

    tloop_init(&l, LOOP_BODY);
    l.t.p.found_tools = TS_FOUND_WRAPPER;

    CHECK(tloop_call(&l, START("100") TEXT("0", "Looking.")
                     CALL("1", "toolu_s", "tool_search", SELECT_FIRST)
                     END("tool_use", "20"), 1) == TS_LOOP_AGAIN);
    CHECK(req_has(&l, "{\"name\":\"call_tool\",\"description\""));

    /* call 2: the definition as text, no found tool in tools[] */
    l.out.len = 0;
    CHECK(tloop_call(&l, START("200")
                     CALL("0", "toolu_bad", "call_tool",
                          "{\\\"name\\\":\\\"mcp__a__first\\\","
                          "\\\"arguments\\\":[]}")
                     END("tool_use", "5"), 1) == TS_LOOP_AGAIN);
    CHECK(req_has(&l, "\"content\":\"Loaded: mcp__a__first. They are not "
                  "in your tool list: call each through call_tool"));
    CHECK(req_has(&l, "\\n\\nTool: mcp__a__first\\nDescription: D "
                  "mcp__a__first\\nInput schema: {"));
    CHECK(!req_has(&l, "{\"name\":\"mcp__a__first\",\"description\""));
    CHECK(!out_has(&l, "toolu_bad"));

    /* call 3: the invalid call answered; then a valid one */
    l.out.len = 0;
    CHECK(tloop_call(&l, START("300") TEXT("0", "Again.")
                     CALL("1", "toolu_ok", "call_tool",
                          "{\\\"name\\\":\\\"mcp__a__first\\\","
                          "\\\"arguments\\\":{\\\"n\\\":1}}")
                     END("tool_use", "5"), 1) == TS_LOOP_DONE);
    CHECK(req_has(&l, "{\"type\":\"tool_result\",\"tool_use_id\":"
                  "\"toolu_bad\",\"content\":\"The call did not run: the "
                  "input of call_tool is an object"));
    CHECK(req_has(&l, "\"is_error\":true}"));
    CHECK(out_has(&l, "{\"type\":\"content_block_start\",\"index\":4,"
                  "\"content_block\":{\"type\":\"tool_use\",\"id\":"
                  "\"toolu_ok\",\"name\":\"mcp__a__first\",\"input\":{}}}"));
    CHECK(out_has(&l, "{\"type\":\"content_block_delta\",\"index\":4,"
                  "\"delta\":{\"type\":\"input_json_delta\","
                  "\"partial_json\":\"{\\\"n\\\":1}\"}}"));
    CHECK(out_has(&l, "{\"type\":\"content_block_stop\",\"index\":4}"));
    CHECK(!out_has(&l, "call_tool"));
    CHECK(out_has(&l, "\"stop_reason\":\"tool_use\""));

    tloop_free(&l);
}


const tst_case_t  tst_loop_tests[] = {
    { "loop_sse_search_then_answer", test_loop_sse_search_then_answer },
    { "loop_references", test_loop_references },
    { "loop_json", test_loop_json },
    { "loop_bounds", test_loop_bounds },
    { "loop_loads_every_tool", test_loop_loads_every_tool },
    { "loop_broken_input", test_loop_broken_input },
    { "loop_invalid_search_input", test_loop_invalid_search_input },
    { "loop_event_over_limit", test_loop_event_over_limit },
    { "loop_event_byte_by_byte", test_loop_event_byte_by_byte },
    { "loop_sse_wrapper", test_loop_sse_wrapper },
    { NULL, NULL }
};
