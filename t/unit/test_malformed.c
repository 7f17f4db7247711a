/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Bodies the index must refuse, each with the status of its class.
 */

#include <stdlib.h>
#include <string.h>

#include "tst.h"


#define TST_MSG(blocks)                                                      \
    "{\"messages\":[{\"role\":\"user\",\"content\":[" blocks "]}]}"


const tst_body_t  tst_bad_bodies[] = {

    /* syntax */
    { "empty body", "", TS_ERR_SYNTAX },
    { "whitespace only", " \t\r\n ", TS_ERR_SYNTAX },
    { "trailing garbage", "{} x", TS_ERR_SYNTAX },
    { "second value", "{}{}", TS_ERR_SYNTAX },
    { "top-level array, garbage", "[] x", TS_ERR_SYNTAX },
    { "invalid literal", "{\"a\":tru}", TS_ERR_SYNTAX },
    { "literal cut at end", "{\"a\":tru", TS_ERR_SYNTAX },
    { "capital literal", "{\"a\":True}", TS_ERR_SYNTAX },
    { "literal in read value", "{\"stream\":nul}", TS_ERR_SYNTAX },
    { "number 01", "{\"a\":01}", TS_ERR_SYNTAX },
    { "number 1.", "{\"a\":1.}", TS_ERR_SYNTAX },
    { "number -", "{\"a\":-}", TS_ERR_SYNTAX },
    { "number - at end", "{\"a\":-", TS_ERR_SYNTAX },
    { "number 1e", "{\"a\":1e}", TS_ERR_SYNTAX },
    { "number +1", "{\"a\":+1}", TS_ERR_SYNTAX },
    { "number .5", "{\"a\":.5}", TS_ERR_SYNTAX },
    { "number -01 in array", "{\"a\":[-01]}", TS_ERR_SYNTAX },
    { "invalid escape", "{\"a\":\"\\x\"}", TS_ERR_SYNTAX },
    { "invalid escape, read value", "{\"model\":\"\\x\"}", TS_ERR_SYNTAX },
    { "invalid escape in key", "{\"\\x\":1}", TS_ERR_SYNTAX },
    { "short \\u", "{\"a\":\"\\u12\"}", TS_ERR_SYNTAX },
    { "short \\u, read value", "{\"model\":\"\\u004\"}", TS_ERR_SYNTAX },
    { "short \\u at end", "{\"a\":\"\\u00", TS_ERR_SYNTAX },
    { "non-hex \\u", "{\"a\":\"\\u00g1\"}", TS_ERR_SYNTAX },
    { "raw control char", "{\"a\":\"x\001y\"}", TS_ERR_SYNTAX },
    { "raw newline, read value", "{\"model\":\"a\nb\"}", TS_ERR_SYNTAX },
    { "raw tab in tool name", "{\"tools\":[{\"name\":\"a\tb\"}]}",
      TS_ERR_SYNTAX },
    { "missing comma", "{\"a\":1 \"b\":2}", TS_ERR_SYNTAX },
    { "missing comma in array", "{\"a\":[1 2]}", TS_ERR_SYNTAX },
    { "missing comma between tools",
      "{\"tools\":[{\"name\":\"a\"} {\"name\":\"b\"}]}", TS_ERR_SYNTAX },
    { "missing comma between blocks",
      TST_MSG("{\"type\":\"text\"} {\"type\":\"text\"}"), TS_ERR_SYNTAX },
    { "missing colon", "{\"a\" 1}", TS_ERR_SYNTAX },
    { "missing colon in tool", "{\"tools\":[{\"name\" \"a\"}]}",
      TS_ERR_SYNTAX },
    { "trailing comma in object", "{\"a\":1,}", TS_ERR_SYNTAX },
    { "trailing comma in array", "{\"a\":[1,]}", TS_ERR_SYNTAX },
    { "trailing comma in tools", "{\"tools\":[{\"name\":\"a\"},]}",
      TS_ERR_SYNTAX },
    { "unterminated string", "{\"a\":\"abc", TS_ERR_SYNTAX },
    { "unterminated string, brace", "{\"a\":\"abc}", TS_ERR_SYNTAX },
    { "unterminated key", "{\"a", TS_ERR_SYNTAX },
    { "unterminated object", "{\"a\":1", TS_ERR_SYNTAX },
    { "bare key", "{a:1}", TS_ERR_SYNTAX },
    { "single quotes", "{'a':1}", TS_ERR_SYNTAX },
    { "missing value", "{\"a\":}", TS_ERR_SYNTAX },

    /* type */
    { "top-level array", "[]", TS_ERR_TYPE },
    { "top-level string", "\"abc\"", TS_ERR_TYPE },
    { "top-level number", " 1 ", TS_ERR_TYPE },
    { "tools object", "{\"tools\":{}}", TS_ERR_TYPE },
    { "messages string", "{\"messages\":\"x\"}", TS_ERR_TYPE },
    { "tool not an object", "{\"tools\":[1]}", TS_ERR_TYPE },
    { "second tool a string", "{\"tools\":[{\"name\":\"a\"},\"b\"]}",
      TS_ERR_TYPE },
    { "tool name a number", "{\"tools\":[{\"name\":1}]}", TS_ERR_TYPE },
    { "model a number", "{\"model\":1}", TS_ERR_TYPE },
    { "model null", "{\"model\":null}", TS_ERR_TYPE },
    { "message not an object", "{\"messages\":[[]]}", TS_ERR_TYPE },
    { "message role a number", "{\"messages\":[{\"role\":1}]}",
      TS_ERR_TYPE },
    { "message content a number",
      "{\"messages\":[{\"role\":\"user\",\"content\":1}]}", TS_ERR_TYPE },
    { "block not an object", TST_MSG("\"text\""), TS_ERR_TYPE },
    { "block without type", TST_MSG("{\"text\":\"a\"}"), TS_ERR_TYPE },
    { "block type a number", TST_MSG("{\"type\":1}"), TS_ERR_TYPE },
    { "result child without type",
      TST_MSG("{\"type\":\"tool_result\",\"content\":[{\"text\":\"a\"}]}"),
      TS_ERR_TYPE },

    /* duplicate */
    { "tools twice", "{\"tools\":[],\"tools\":[]}", TS_ERR_DUPLICATE },
    { "tool description twice",
      "{\"tools\":[{\"name\":\"a\",\"description\":\"x\","
      "\"description\":\"y\"}]}", TS_ERR_DUPLICATE },
    { "model twice", "{\"model\":\"a\",\"model\":\"b\"}", TS_ERR_DUPLICATE },
    { "model twice, escaped",
      "{\"model\":\"a\",\"mod\\u0065l\":\"b\"}", TS_ERR_DUPLICATE },
    { "messages twice, escaped first",
      "{\"m\\u0065ssages\":[],\"messages\":[]}", TS_ERR_DUPLICATE },
    { "tool name twice", "{\"tools\":[{\"name\":\"a\",\"name\":\"b\"}]}",
      TS_ERR_DUPLICATE },
    { "tool name twice, escaped",
      "{\"tools\":[{\"name\":\"a\",\"n\\u0061me\":\"b\"}]}",
      TS_ERR_DUPLICATE },
    { "message role twice",
      "{\"messages\":[{\"role\":\"user\",\"role\":\"user\"}]}",
      TS_ERR_DUPLICATE },
    { "block type twice", TST_MSG("{\"type\":\"text\",\"type\":\"text\"}"),
      TS_ERR_DUPLICATE },

    { NULL, NULL, TS_OK }
};


/* duplicates of keys the engine does not read are not its business */
static const tst_body_t  tst_good_bodies[] = {
    { "metadata twice", "{\"metadata\":{},\"metadata\":{\"a\":1}}", TS_OK },
    { "tool title twice",
      "{\"tools\":[{\"name\":\"a\",\"title\":\"x\","
      "\"title\":\"y\"}]}", TS_OK },
    { "block text twice", TST_MSG("{\"type\":\"text\",\"text\":\"a\","
      "\"text\":\"b\"}"), TS_OK },
    { "valid numbers", "{\"a\":[0,-0,1.5,-2e10,3E+2,4e-1,0.0]}", TS_OK },
    { "valid escapes", "{\"model\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00aF\"}",
      TS_OK },
    { NULL, NULL, TS_OK }
};


static const struct {
    const char   *name;
    tst_nest_t    spec;
    ts_status_t   at_limit;     /* status at exactly TS_MAX_DEPTH */
} tst_depths[] = {

    { "top-level member",
      { "{\"x\":", "[", "", "]", "}" }, TS_OK },
    { "nested objects",
      { "{\"x\":", "{\"a\":", "0", "}", "}" }, TS_OK },
    { "read top-level member",
      { "{\"system\":", "[", "", "]", "}" }, TS_OK },
    { "tool member",
      { "{\"tools\":[{\"name\":\"t\",\"input_schema\":", "[", "", "]",
        "}]}" }, TS_OK },
    { "message member",
      { "{\"messages\":[{\"role\":\"user\",\"x\":", "[", "", "]", "}]}" },
      TS_OK },
    { "block member",
      { "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":"
        "\"text\",\"x\":", "[", "", "]", "}]}]}" },
      TS_OK },
    { "result child, type first",
      { "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":"
        "\"tool_result\",\"content\":[{\"type\":\"text\",\"x\":",
        "[", "", "]", "}]}]}]}" }, TS_OK },
    { "result child, content first",
      { "{\"messages\":[{\"role\":\"user\",\"content\":[{\"content\":["
        "{\"type\":\"text\",\"x\":", "[", "", "]",
        "}],\"type\":\"tool_result\"}]}]}" }, TS_OK },
    { "top-level array",
      { "", "[", "", "]", "" }, TS_ERR_TYPE }
};


/* the containers a prefix leaves open (prefixes hold no quoted brackets) */
static size_t
tst_open_depth(const char *s)
{
    size_t  d;

    for (d = 0; *s; s++) {
        if (*s == '{' || *s == '[') {
            d++;

        } else if (*s == '}' || *s == ']') {
            d--;
        }
    }

    return d;
}


static void
tst_run_bodies(const tst_body_t *t, ts_status_t st)
{
    size_t  n;

    for (n = 0; t->name; t++) {
        if (t->st == st) {
            tst_note("%s: %s", t->name, t->body);
            CHECK(tst_status(t->body, strlen(t->body)) == st);
            n++;
        }
    }

    tst_note("class %s", ts_status_name(st));
    CHECK(n > 0);
}


static void
test_malformed_syntax(void)
{
    tst_run_bodies(tst_bad_bodies, TS_ERR_SYNTAX);
}


static void
test_malformed_type(void)
{
    tst_run_bodies(tst_bad_bodies, TS_ERR_TYPE);
}


static void
test_malformed_duplicate(void)
{
    tst_run_bodies(tst_bad_bodies, TS_ERR_DUPLICATE);
}


static void
test_malformed_unread_duplicate(void)
{
    tst_run_bodies(tst_good_bodies, TS_OK);
}


/* cut a real request at spread offsets: each prefix is truncated JSON */
static void
test_malformed_truncated(void)
{
    tst_doc_t  d;
    size_t     k, cut;

    if (!CHECK(tst_doc_load(&d, TST_BIG) == 0)) {
        return;
    }

    CHECK(d.st == TS_OK);

    for (k = 0; k <= 11; k++) {
        cut = k == 0 ? 1 : k == 11 ? d.len - 1 : d.len * k / 11;
        tst_note("cut at %zu of %zu", cut, d.len);
        CHECK(tst_status(d.buf, cut) == TS_ERR_SYNTAX);
    }

    tst_doc_free(&d);
}


static void
tst_check_depth(size_t i, size_t n, ts_status_t st)
{
    char    *body;
    size_t   len;

    body = tst_nested(&tst_depths[i].spec, n, &len);

    tst_note("%s: %zu more levels", tst_depths[i].name, n);
    CHECK(tst_status(body, len) == st);

    free(body);
}


/* exactly TS_MAX_DEPTH levels pass, one more does not, on every path */
static void
test_depth_limit(void)
{
    size_t  i, n;

    for (i = 0; i < sizeof(tst_depths) / sizeof(tst_depths[0]); i++) {
        n = TS_MAX_DEPTH - tst_open_depth(tst_depths[i].spec.prefix);

        tst_check_depth(i, n, tst_depths[i].at_limit);
        tst_check_depth(i, n + 1, TS_ERR_DEPTH);
    }
}


/* far too deep: refused without recursion */
static void
test_depth_huge(void)
{
    size_t  i;

    for (i = 0; i < sizeof(tst_depths) / sizeof(tst_depths[0]); i++) {
        tst_check_depth(i, 100000, TS_ERR_DEPTH);
    }
}


static void
tst_check_members_limit(size_t n, ts_status_t st)
{
    char    *body;
    size_t   len;

    body = tst_members(n, &len);

    tst_note("%zu top-level members", n);
    CHECK(tst_status(body, len) == st);

    free(body);
}


static void
test_top_members_limit(void)
{
    tst_check_members_limit(TS_MAX_TOP_MEMBERS, TS_OK);
    tst_check_members_limit(TS_MAX_TOP_MEMBERS + 1, TS_ERR_LIMIT);
}


const tst_case_t  tst_malformed_tests[] = {
    { "malformed_syntax", test_malformed_syntax },
    { "malformed_type", test_malformed_type },
    { "malformed_duplicate", test_malformed_duplicate },
    { "malformed_unread_duplicate", test_malformed_unread_duplicate },
    { "malformed_truncated", test_malformed_truncated },
    { "depth_limit", test_depth_limit },
    { "depth_huge", test_depth_huge },
    { "top_members_limit", test_top_members_limit },
    { NULL, NULL }
};
