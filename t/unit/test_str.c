/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * String helpers and container item spans, against cJSON.
 */

#include <stdlib.h>
#include <string.h>

#include "tst.h"


/* JSON string literals and what cJSON decodes them to is the oracle */
static const char  *tst_strings[] = {
    "\"plain\"",
    "\"\"",
    "\"tab\\there\"",
    "\"q\\\"b\\\\s\\/\"",
    "\"\\b\\f\\n\\r\\t\"",
    "\"caf\\u00e9\"",
    "\"\\u20ac\\u0041\"",
    "\"\\ud83d\\ude00 emoji\"",
    "\"raw \xc3\xa9 utf8\"",
    "\"mcp__srv__do_thing\""
};


static ts_val_t
tst_str_val(const char *lit)
{
    ts_val_t  v;

    v.off = 0;
    v.len = strlen(lit);
    v.kind = TS_STRING;
    v.esc = strchr(lit, '\\') != NULL;

    return v;
}


static void
test_str_decode(void)
{
    char      out[64];
    size_t    i, n;
    cJSON    *node;
    ts_val_t  v;

    for (i = 0; i < sizeof(tst_strings) / sizeof(char *); i++) {
        tst_note("string %zu", i);
        v = tst_str_val(tst_strings[i]);
        node = tst_json(tst_strings[i], v.len);

        if (!CHECK(node != NULL && cJSON_IsString(node))) {
            cJSON_Delete(node);
            continue;
        }

        n = ts_str_decode(tst_strings[i], &v, out, sizeof(out));
        CHECK(n == strlen(node->valuestring));
        CHECK(n != (size_t) -1 && memcmp(out, node->valuestring, n) == 0);
        CHECK(ts_str_eq(tst_strings[i], &v, node->valuestring));

        cJSON_Delete(node);
    }
}


static void
test_str_eq_mismatch(void)
{
    ts_val_t  v;

    v = tst_str_val("\"caf\\u00e9\"");
    CHECK(!ts_str_eq("\"caf\\u00e9\"", &v, "cafe"));
    CHECK(!ts_str_eq("\"caf\\u00e9\"", &v, "caf\xc3\xa9x"));
    CHECK(!ts_str_eq("\"caf\\u00e9\"", &v, "caf"));

    v = tst_str_val("\"abc\"");
    CHECK(!ts_str_eq("\"abc\"", &v, "ab"));
    CHECK(!ts_str_eq("\"abc\"", &v, "abcd"));
    CHECK(ts_str_eq("\"abc\"", &v, "abc"));

    /* a value that is not a string never equals anything */
    v.kind = TS_NUMBER;
    CHECK(!ts_str_eq("\"abc\"", &v, "abc"));
}


static void
test_str_decode_capacity(void)
{
    char      out[4];
    ts_val_t  v;

    v = tst_str_val("\"abcd\"");
    CHECK(ts_str_decode("\"abcd\"", &v, out, 4) == 4);
    CHECK(ts_str_decode("\"abcd\"", &v, out, 3) == (size_t) -1);

    v = tst_str_val("\"\\u20ac\"");
    CHECK(ts_str_decode("\"\\u20ac\"", &v, out, 3) == 3);
    CHECK(ts_str_decode("\"\\u20ac\"", &v, out, 2) == (size_t) -1);
}


static void
tst_check_items(const char *body)
{
    cJSON     *root, *node;
    size_t     n, i;
    ts_val_t   v, *items;

    tst_note("items of %s", body);

    root = tst_json(body, strlen(body));
    if (!CHECK(root != NULL)) {
        return;
    }

    v.off = strspn(body, " \t\r\n");
    v.len = strlen(body) - v.off;
    while (v.len > 0 && strchr(" \t\r\n", body[v.off + v.len - 1])) {
        v.len--;
    }
    v.kind = cJSON_IsArray(root) ? TS_ARRAY : TS_OBJECT;
    v.esc = 0;

    items = NULL;
    CHECK(ts_container_items(body, &v, &items, &n) == TS_OK);
    CHECK(n == (size_t) cJSON_GetArraySize(root));

    for (i = 0, node = root->child; node && i < n; i++, node = node->next) {
        if (v.kind == TS_ARRAY) {
            CHECK(tst_span_is(body, &items[i], node));

        } else {
            CHECK(tst_member_is(body, items[i].off, items[i].len, node));
        }
    }

    free(items);
    cJSON_Delete(root);
}


static void
test_container_items(void)
{
    tst_check_items("[]");
    tst_check_items("[ ]");
    tst_check_items("[1]");
    tst_check_items("[ 1 , \"a,b\" , [2,[3]] , {\"k\":\"]\"} , null ]");
    tst_check_items("{}");
    tst_check_items("{\"a\":1}");
    tst_check_items("{ \"a\" : 1 ,\n\"b\\\"\":{\"c\":[1,2]}, \"d\":\"}\" }");
}


const tst_case_t  tst_str_tests[] = {
    { "str_decode", test_str_decode },
    { "str_eq_mismatch", test_str_eq_mismatch },
    { "str_decode_capacity", test_str_decode_capacity },
    { "container_items", test_container_items },
    { NULL, NULL }
};
