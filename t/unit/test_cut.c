/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Answers without tool-search blocks: an event stream in the Messages
 * API's shape (fed whole and byte by byte) and a JSON message, with the
 * hosted search's blocks and the gateway's, renumbered, usage kept.
 */

#include <stdio.h>
#include <string.h>

#include "tst.h"
#include "loop/ts_cut.h"


#define EV(name, data)  "event: " name "\ndata: " data "\n\n"

#define START(i, block) \
    EV("content_block_start", "{\"type\":\"content_block_start\"," \
       "\"index\":" #i ",\"content_block\":" block "}")
#define DELTA(i, delta) \
    EV("content_block_delta", "{\"type\":\"content_block_delta\"," \
       "\"index\":" #i ",\"delta\":" delta "}")
#define STOP(i) \
    EV("content_block_stop", "{\"type\":\"content_block_stop\"," \
       "\"index\":" #i "}")

#define TEXT_D   "{\"type\":\"text_delta\",\"text\":\"Searching.\"}"
#define JSON_D   "{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}"
#define HEADS \
    EV("message_start", "{\"type\":\"message_start\",\"message\":{}}") \
    EV("ping", "{\"type\":\"ping\"}")
#define TAIL \
    EV("message_delta", "{\"type\":\"message_delta\",\"usage\":" \
       "{\"output_tokens\":10,\"server_tool_use\":" \
       "{\"tool_search_requests\":1}}}") \
    EV("message_stop", "{\"type\":\"message_stop\"}")

#define USE(name) \
    "{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\",\"name\":\"" \
    name "\",\"input\":{}}"
#define RESULT \
    "{\"type\":\"tool_search_tool_result\",\"tool_use_id\":\"srvtoolu_1\"," \
    "\"content\":{\"type\":\"tool_search_tool_search_result\"," \
    "\"tool_references\":[]}}"
#define CALL \
    "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"create_entities\"," \
    "\"input\":{}}"
#define WEB  USE("web_search")

#define STREAM(search) \
    HEADS START(0, "{\"type\":\"text\",\"text\":\"\"}") DELTA(0, TEXT_D) \
    STOP(0) START(1, search) DELTA(1, JSON_D) STOP(1) \
    START(2, RESULT) STOP(2) START(3, CALL) DELTA(3, JSON_D) STOP(3) TAIL

#define STRIPPED \
    HEADS START(0, "{\"type\":\"text\",\"text\":\"\"}") DELTA(0, TEXT_D) \
    STOP(0) START(1, CALL) DELTA(1, JSON_D) STOP(1) TAIL


/* the answer through the filter, fed in pieces of step bytes */
static void
strip(const char *in, const char *tool, int sse, size_t step, ts_buf_t *out,
    long *removed)
{
    ts_cut_t     a;
    size_t       i, n, len;

    len = strlen(in);
    ts_cut_init(&a, tool, sse);
    ts_buf_init(out, 0);

    for (i = 0; i < len; i += n) {
        n = len - i < step ? len - i : step;
        CHECK(ts_cut_feed(&a, in + i, n, out) == 0);
    }

    CHECK(ts_cut_end(&a, out) == 0);

    /* a C string for strstr() */
    CHECK(ts_buf_add(out, "", 1) == 0);
    out->len--;

    *removed = ts_cut_removed(&a);
    ts_cut_free(&a);
}


static int
same(const ts_buf_t *b, const char *s)
{
    return b->len == strlen(s) && memcmp(b->p, s, b->len) == 0;
}


static void
test_cut_stream(void)
{
    ts_buf_t  out;
    long      removed;
    size_t    step;

    /* hosted search, whole and byte by byte */
    for (step = 1; step < 100000; step *= 99999) {
        strip(STREAM(USE("tool_search_tool_bm25")), NULL, 1, step, &out,
              &removed);
        CHECK(same(&out, STRIPPED));
        CHECK(removed == 2);
        ts_buf_free(&out);
    }

    /* the gateway's own search tool, by its name */
    strip(STREAM(USE("find_tools")), "find_tools", 1, 7, &out, &removed);
    CHECK(same(&out, STRIPPED));
    ts_buf_free(&out);

    /* another server tool is not a search: only the result goes */
    strip(STREAM(WEB), "find_tools", 1, 4096, &out, &removed);
    CHECK(removed == 1);
    CHECK(strstr(out.p, "web_search") != NULL);
    CHECK(strstr(out.p, "tool_search_tool_result") == NULL);
    CHECK(strstr(out.p, "\"index\":2,\"content_block\":" CALL) != NULL);
    ts_buf_free(&out);

    /* nothing to remove: byte for byte, an unterminated tail included */
    strip(HEADS TAIL "event: x", NULL, 1, 3, &out, &removed);
    CHECK(same(&out, HEADS TAIL "event: x"));
    CHECK(removed == 0);
    ts_buf_free(&out);
}


static void
test_cut_json(void)
{
    ts_buf_t  out;
    long      removed;

    strip("{\"type\":\"message\",\"content\":[{\"type\":\"text\",\"text\":"
          "\"S\"}," USE("tool_search_tool_regex") "," RESULT "," CALL "],"
          "\"usage\":{\"input_tokens\":5,\"server_tool_use\":"
          "{\"tool_search_requests\":1}}}", NULL, 0, 5, &out, &removed);
    CHECK(same(&out, "{\"type\":\"message\",\"content\":[{\"type\":\"text\","
               "\"text\":\"S\"}," CALL "],\"usage\":{\"input_tokens\":5,"
               "\"server_tool_use\":{\"tool_search_requests\":1}}}"));
    CHECK(removed == 2);
    ts_buf_free(&out);

    /* an error, or what is not JSON, goes on as it came */
    strip("{\"type\":\"error\"}", NULL, 0, 1, &out, &removed);
    CHECK(same(&out, "{\"type\":\"error\"}"));
    ts_buf_free(&out);

    /* a message cut short: what was decided, never a search block */
    strip("{\"content\":[" CALL "," RESULT ", {\"type\":\"server_",
          NULL, 0, 100, &out, &removed);
    CHECK(same(&out, "{\"content\":[" CALL));
    CHECK(removed == 1);
    ts_buf_free(&out);

    strip("{\"content\":[" USE("tool_search_tool_bm25"), NULL, 0, 3, &out,
          &removed);
    CHECK(same(&out, "{\"content\":["));
    ts_buf_free(&out);
}


#define TEXT  "{\"type\":\"text\",\"text\":\"a \\\"quoted\\\" ]}, text\"}"
#define BM25  USE("tool_search_tool_bm25")

/* answers the streaming cut must cut as the whole message's cut does */
static const char  *json_answers[] = {
    "{\"type\":\"message\",\"content\":[" TEXT "," BM25 "," RESULT ","
        CALL "],\"stop_reason\":\"tool_use\"}",
    /* dropped first, kept after */
    "{\"content\":[" BM25 "," RESULT "," TEXT "," CALL "]}",
    /* dropped last, and all dropped, with blanks around */
    "{\"content\": [ " TEXT " ,\n " BM25 " , " RESULT " ] ,\"role\":\"x\"}",
    "{\"content\":[ " BM25 " , " RESULT " ]}",
    "{\"content\":[" RESULT "]}",
    "{\"content\":[]}",
    "{\"content\":[ ]}",
    /* interleaved, pretty-printed, content after type and usage */
    "{\n  \"type\": \"message\",\n  \"usage\": {\"content\": [1]},\n"
        "  \"content\": [\n    " TEXT ",\n    " BM25 ",\n    " CALL ",\n"
        "    " RESULT ",\n    " TEXT "\n  ],\n  \"stop_reason\": null\n}\n",
    /* name before type, type last, escapes in keys and values */
    "{\"content\":[{\"name\":\"tool_search_tool_regex\",\"input\":"
        "{\"q\":\"}]\"},\"id\":\"s\",\"type\":\"server_tool_use\"}," CALL "]}",
    "{\"cont\\u0065nt\":[{\"t\\u0079pe\":\"tool_search_tool_result\","
        "\"content\":[{\"type\":\"tool_reference\"}]}," TEXT "]}",
    "{\"content\":[{\"type\":\"server_tool_use\",\"name\":"
        "\"tool_search_tool_\\u0062m25\",\"input\":{}}," CALL "]}",
    /* not search blocks: another server tool, a name too short, odd
     * types, a type twice, items that are no objects */
    "{\"content\":[" WEB "," USE("tool_search_tool_") "," RESULT "]}",
    "{\"content\":[{\"type\":1},{\"type\":[\"tool_search_tool_result\"]},"
        "{\"type\":\"server_tool_use\",\"name\":{\"a\":1}}," BM25 "]}",
    "{\"content\":[{\"type\":\"tool_search_tool_result\",\"type\":\"x\"},"
        "{\"type\":\"server_tool_use\",\"name\":\"tool_search_tool_bm25\","
        "\"name\":\"x\"}," RESULT "]}",
    "{\"content\":[1, \"tool_search_tool_result\" ,true,null,[" RESULT "],"
        "-2.5e3 ," RESULT "]}",
    /* nested results, the gateway's tool */
    "{\"content\":[{\"type\":\"tool_result\",\"content\":[" RESULT "]},"
        USE("find_tools") "," RESULT "]}",
    /* what the cut leaves alone */
    "{\"content\":\"text\",\"x\":[" RESULT "]}",
    "{\"type\":\"error\",\"error\":{\"content\":[" RESULT "]}}",
    "[" RESULT "]",
    "  ",
    "",
    NULL
};


/* the whole message's cut and the streaming one, fed in pieces */
static void
compare_json(const char *in, size_t len, const char *tool)
{
    static const size_t  steps[] = { 1, 7, 64, 4096, (size_t) -1 };
    ts_buf_t             whole, out;
    ts_cut_t             a;
    long                 removed;
    size_t               i, k, n, step;

    ts_buf_init(&whole, 0);
    CHECK(ts_cut_whole(tool, in, len, &whole, &removed) == 0);

    for (k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
        step = steps[k];
        ts_cut_init(&a, tool, 0);
        ts_buf_init(&out, 0);

        for (i = 0; i < len; i += n) {
            n = len - i < step ? len - i : step;
            CHECK(ts_cut_feed(&a, in + i, n, &out) == 0);
        }

        CHECK(ts_cut_end(&a, &out) == 0);

        if (!CHECK(out.len == whole.len
                   && (out.len == 0
                       || memcmp(out.p, whole.p, out.len) == 0))
            || !CHECK(ts_cut_removed(&a) == removed))
        {
            fprintf(stderr, "  answer %.60s..., step %zu\n", in, step);
        }

        ts_cut_free(&a);
        ts_buf_free(&out);
    }

    ts_buf_free(&whole);
}


static void
test_cut_json_stream(void)
{
    tst_doc_t  d;
    size_t     i;

    for (i = 0; json_answers[i] != NULL; i++) {
        compare_json(json_answers[i], strlen(json_answers[i]), NULL);
        compare_json(json_answers[i], strlen(json_answers[i]), "find_tools");
    }

    /* a large message without a content array of its own */
    if (CHECK(tst_doc_load(&d, TST_BIG) == 0)) {
        compare_json(d.buf, d.len, NULL);
        tst_doc_free(&d);
    }
}


const tst_case_t  tst_cut_tests[] = {
    { "cut_stream", test_cut_stream },
    { "cut_json", test_cut_json },
    { "cut_json_stream", test_cut_json_stream },
    { NULL, NULL }
};
