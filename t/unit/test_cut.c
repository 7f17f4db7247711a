/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Answers without tool-search blocks: an event stream in the Messages
 * API's shape (fed whole and byte by byte) and a JSON message, with the
 * hosted search's blocks and the gateway's, renumbered, usage kept.
 */

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

    strip("{\"content\":[" RESULT, NULL, 0, 100, &out, &removed);
    CHECK(same(&out, "{\"content\":[" RESULT));
    CHECK(removed == 0);
    ts_buf_free(&out);
}


const tst_case_t  tst_cut_tests[] = {
    { "cut_stream", test_cut_stream },
    { "cut_json", test_cut_json },
    { NULL, NULL }
};
