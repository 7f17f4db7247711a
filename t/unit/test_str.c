/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * String helpers and container item spans, against cJSON.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tst.h"
#include "messages/ts_names.h"


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


/* the names of the set: literals with escapes, a prefix, duplicates */
static const char  *tst_names[] = {
    "\"a\"", "\"ab\"", "\"mcp__srv__do_thing\"", "\"caf\\u00e9\"",
    "\"a\"", "\"q\\\"b\"", "\"\"", "\"mcp__srv__do_thing\""
};

/* what the set must not hold */
static const char  *tst_not_names[] = {
    "b", "abc", "mcp__srv__do_thin", "mcp__srv__do_thing_", "caf",
    "caf\\u00e9", "q\"", "tool_400"
};

#define TST_MANY  400


/* every member is found by its decoded bytes, nothing else is */
static void
tst_names_agree(const ts_names_t *set, char many[][16])
{
    char      out[64];
    size_t    i, n;
    ts_val_t  v;

    for (i = 0; i < sizeof(tst_names) / sizeof(char *); i++) {
        v = tst_str_val(tst_names[i]);
        n = ts_str_decode(tst_names[i], &v, out, sizeof(out));
        tst_note("name %zu", i);
        CHECK(ts_names_has(set, out, n));
        CHECK(ts_names_has_val(set, tst_names[i], &v));
    }

    for (i = 0; i < sizeof(tst_not_names) / sizeof(char *); i++) {
        tst_note("not a name %zu", i);
        CHECK(!ts_names_has(set, tst_not_names[i], strlen(tst_not_names[i])));
    }

    for (i = 0; i < TST_MANY; i++) {
        tst_note("tool_%zu", i);
        CHECK(ts_names_has(set, many[i] + 1, strlen(many[i]) - 2));
    }
}


static void
test_names_set(void)
{
    static char  many[TST_MANY][16];
    ts_names_t   set, empty;
    ts_val_t     v;
    size_t       i;
    int          rc;

    ts_names_init(&set);
    ts_names_init(&empty);

    for (i = 0; i < sizeof(tst_names) / sizeof(char *); i++) {
        v = tst_str_val(tst_names[i]);
        CHECK(ts_names_add(&set, tst_names[i], &v) == 0);
    }

    /* enough names that slots are shared and the table grows */
    for (i = 0; i < TST_MANY; i++) {
        snprintf(many[i], sizeof(many[i]), "\"tool_%zu\"", i);
        v = tst_str_val(many[i]);
        CHECK(ts_names_add(&set, many[i], &v) == 0);
    }

    tst_note("not sealed");
    tst_names_agree(&set, many);
    ts_names_seal(&set);
    CHECK(set.slots != NULL);
    tst_names_agree(&set, many);

    ts_names_sort(&set);
    CHECK(set.slots == NULL);
    tst_names_agree(&set, many);

    /* by bytes, then by length: a prefix first */
    for (i = 1; i < set.n; i++) {
        tst_note("sorted %zu", i);
        rc = memcmp(set.items[i - 1].p, set.items[i].p,
                    set.items[i - 1].len < set.items[i].len
                    ? set.items[i - 1].len : set.items[i].len);
        CHECK(rc < 0 || (rc == 0 && set.items[i - 1].len <= set.items[i].len));
    }

    ts_names_seal(&empty);
    CHECK(!ts_names_has(&empty, "a", 1));

    ts_names_free(&set);
    ts_names_free(&empty);
}


const tst_case_t  tst_str_tests[] = {
    { "str_decode", test_str_decode },
    { "str_eq_mismatch", test_str_eq_mismatch },
    { "str_decode_capacity", test_str_decode_capacity },
    { "container_items", test_container_items },
    { "names_set", test_names_set },
    { NULL, NULL }
};
