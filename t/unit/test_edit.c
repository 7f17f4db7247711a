/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The edit list: rendered output equals the same change made on the
 * cJSON tree, and every byte outside the edits is the original byte.
 */

#include <stdlib.h>
#include <string.h>

#include "tst.h"


/* renders e over the document; caller frees */
static char *
tst_render(ts_edits_t *e, const tst_doc_t *d, size_t *len)
{
    char  *out;

    *len = ts_edits_size(e, d->len);
    out = tst_alloc(*len + 1);

    if (ts_edits_render(e, d->buf, d->len, out) != 0) {
        free(out);
        return NULL;
    }

    return out;
}


/* out equals the expected tree, and keeps the document's first bytes */
static void
tst_check_out(const tst_doc_t *d, const char *out, size_t len,
    const cJSON *want, size_t same_prefix)
{
    cJSON  *got;

    got = tst_json(out, len);
    CHECK(got != NULL && cJSON_Compare(got, want, 1));
    CHECK(len >= same_prefix && memcmp(out, d->buf, same_prefix) == 0);
    cJSON_Delete(got);
}


static void
test_edit_basic(void)
{
    ts_edits_t  e;
    char        out[32];

    ts_edits_init(&e);
    CHECK(ts_edit_replace(&e, 1, 3, "XY", 2) == 0);
    CHECK(ts_edit_replace(&e, 6, 0, "+", 1) == 0);
    CHECK(ts_edit_replace(&e, 6, 0, "-", 1) == 0);
    CHECK(ts_edits_size(&e, 8) == 9);
    CHECK(ts_edits_render(&e, "abcdefgh", 8, out) == 0);
    CHECK(memcmp(out, "aXYef+-gh", 9) == 0);
    ts_edits_free(&e);

    /* overlapping and out-of-range edits are refused at render time */
    ts_edits_init(&e);
    CHECK(ts_edit_replace(&e, 1, 3, "", 0) == 0);
    CHECK(ts_edit_replace(&e, 2, 1, "", 0) == 0);
    CHECK(ts_edits_render(&e, "abcdefgh", 8, out) == -1);
    ts_edits_free(&e);

    ts_edits_init(&e);
    CHECK(ts_edit_replace(&e, 7, 2, "", 0) == 0);
    CHECK(ts_edits_render(&e, "abcdefgh", 8, out) == -1);
    ts_edits_free(&e);
}


/*
 * The pieces: kept ranges point into the input, empty ones are left
 * out, and edits at one offset come in insertion order.
 */
static void
test_edit_pieces(void)
{
    static const char  in[] = "abcdefgh";
    static const struct {
        const char  *bytes;
        int          kept;
    }                  want[] = {
        { "X", 0 }, { "bc", 1 }, { "+", 0 }, { "-", 0 }, { "gh", 1 }
    };
    ts_edits_t   e;
    ts_pieces_t  it;
    ts_piece_t   p;
    size_t       n;

    ts_edits_init(&e);
    CHECK(ts_edit_replace(&e, 3, 3, "", 0) == 0);
    CHECK(ts_edit_replace(&e, 6, 0, "+", 1) == 0);
    CHECK(ts_edit_replace(&e, 0, 1, "X", 1) == 0);
    CHECK(ts_edit_replace(&e, 6, 0, "-", 1) == 0);
    CHECK(ts_edits_pieces(&e, in, 8, &it) == 0);

    for (n = 0; ts_pieces_next(&it, &p); n++) {
        if (!CHECK(n < sizeof(want) / sizeof(want[0]))) {
            break;
        }

        CHECK(p.kept == want[n].kept && p.len == strlen(want[n].bytes)
              && memcmp(p.data, want[n].bytes, p.len) == 0);
        CHECK(!p.kept || (p.data >= in && p.data + p.len <= in + 8));
    }

    CHECK(n == sizeof(want) / sizeof(want[0]));
    ts_edits_free(&e);

    /* no edit: the input in one piece */
    ts_edits_init(&e);
    CHECK(ts_edits_pieces(&e, in, 8, &it) == 0);
    CHECK(ts_pieces_next(&it, &p) == 1 && p.kept && p.data == in
          && p.len == 8);
    CHECK(ts_pieces_next(&it, &p) == 0);
    ts_edits_free(&e);
}


/* deletes the tools whose position matches pick, on the tree as well */
static void
tst_delete_tools(const char *path, size_t (*pick)(size_t i, size_t n))
{
    tst_doc_t       d;
    ts_edits_t      e;
    ts_val_t       *items;
    unsigned char  *del;
    cJSON          *tools;
    size_t          i, n, len;
    char           *out;
    int             k;

    if (!CHECK(tst_doc_load(&d, path) == 0) || !CHECK(d.ix.ntools > 2)) {
        tst_doc_free(&d);
        return;
    }

    n = d.ix.ntools;
    items = tst_alloc(n * sizeof(ts_val_t));
    del = tst_alloc(n);
    tools = cJSON_GetObjectItemCaseSensitive(d.root, "tools");

    for (i = 0; i < n; i++) {
        items[i] = d.ix.tools[i].elem;
        del[i] = pick(i, n) != 0;
    }

    for (k = (int) n - 1; k >= 0; k--) {
        if (del[k]) {
            cJSON_DeleteItemFromArray(tools, k);
        }
    }

    ts_edits_init(&e);
    CHECK(ts_edit_delete_items(&e, items, n, del) == 0);

    out = tst_render(&e, &d, &len);
    if (CHECK(out != NULL)) {
        tst_check_out(&d, out, len, d.root, d.ix.tools[0].elem.off);
        free(out);
    }

    ts_edits_free(&e);
    free(items);
    free(del);
    tst_doc_free(&d);
}


static size_t tst_pick_odd(size_t i, size_t n) { (void) n; return i & 1; }
static size_t tst_pick_first(size_t i, size_t n) { (void) n; return i < 3; }
static size_t tst_pick_last(size_t i, size_t n) { return i + 3 >= n; }
static size_t tst_pick_all_but_one(size_t i, size_t n)
{
    return i != n / 2;
}


static void
test_edit_delete_items(void)
{
    tst_note("odd");
    tst_delete_tools(TST_BIG, tst_pick_odd);
    tst_note("first");
    tst_delete_tools(TST_BIG, tst_pick_first);
    tst_note("last");
    tst_delete_tools(TST_BIG, tst_pick_last);
    tst_note("all but one");
    tst_delete_tools(TST_BIG, tst_pick_all_but_one);
}


static void
test_edit_append_item(void)
{
    static const char   tool[] = "{\"name\":\"new\",\"input_schema\":{}}";
    tst_doc_t           d;
    ts_edits_t          e;
    ts_val_t            tools_v;
    cJSON              *tools;
    size_t              n, len;
    char               *out;

    if (!CHECK(tst_doc_load(&d, TST_BIG) == 0)) {
        tst_doc_free(&d);
        return;
    }

    n = d.ix.ntools;
    tools = cJSON_GetObjectItemCaseSensitive(d.root, "tools");
    cJSON_AddItemToArray(tools, cJSON_Parse(tool));

    tools_v = ts_index_top(&d.ix, TS_TOP_TOOLS)->val;

    ts_edits_init(&e);
    CHECK(n > 0 && ts_edit_append_item(&e, &tools_v,
                                       &d.ix.tools[n - 1].elem, tool,
                                       sizeof(tool) - 1) == 0);

    out = tst_render(&e, &d, &len);
    if (CHECK(out != NULL)) {
        tst_check_out(&d, out, len, d.root, tools_v.off);
        free(out);
    }

    ts_edits_free(&e);
    tst_doc_free(&d);
}


static void
test_edit_append_empty(void)
{
    static const char  body[] = "{\"tools\":[ ],\"messages\":[]}";
    tst_doc_t          d;
    ts_edits_t         e;
    const ts_member_t *m;
    size_t             len;
    char              *out;

    tst_doc_set(&d, body, sizeof(body) - 1);
    m = ts_index_top(&d.ix, TS_TOP_TOOLS);

    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(d.root, "tools"),
                         cJSON_CreateNumber(1));

    ts_edits_init(&e);
    if (CHECK(m != NULL)) {
        CHECK(ts_edit_append_item(&e, &m->val, NULL, "1", 1) == 0);
    }

    out = tst_render(&e, &d, &len);
    if (CHECK(out != NULL)) {
        tst_check_out(&d, out, len, d.root, 10);
        free(out);
    }

    ts_edits_free(&e);
    tst_doc_free(&d);
}


/* appends a text block to each message of a body; cJSON does the same */
static void
tst_append_each(const char *body)
{
    static const char  block[] = "{\"type\":\"text\",\"text\":\"added\"}";
    tst_doc_t          d;
    ts_edits_t         e;
    cJSON             *msgs, *msg, *content, *arr;
    size_t             i, len;
    char              *out;

    tst_doc_set(&d, body, strlen(body));
    msgs = cJSON_GetObjectItemCaseSensitive(d.root, "messages");

    ts_edits_init(&e);

    for (i = 0; i < d.ix.nmessages; i++) {
        CHECK(ts_edit_append_block(&e, &d.ix, i, block, sizeof(block) - 1)
              == 0);

        msg = cJSON_GetArrayItem(msgs, (int) i);
        content = cJSON_GetObjectItemCaseSensitive(msg, "content");

        if (cJSON_IsString(content)) {
            arr = cJSON_CreateArray();
            cJSON_AddItemToArray(arr, cJSON_Parse(
                "{\"type\":\"text\",\"text\":\"\"}"));
            cJSON_ReplaceItemInObject(arr->child, "text",
                                      cJSON_Duplicate(content, 1));
            cJSON_ReplaceItemInObject(msg, "content", arr);
            content = arr;
        }

        cJSON_AddItemToArray(content, cJSON_Parse(block));
    }

    out = tst_render(&e, &d, &len);
    if (CHECK(out != NULL)) {
        tst_check_out(&d, out, len, d.root, d.ix.messages[0].elem.off);
        free(out);
    }

    ts_edits_free(&e);
    tst_doc_free(&d);
}


static void
test_edit_append_block(void)
{
    tst_note("string, empty and block contents");
    tst_append_each("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
                    "{\"role\":\"assistant\",\"content\":[]},"
                    "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\""
                    ",\"tool_use_id\":\"x\",\"content\":[{\"type\":\"text\","
                    "\"text\":\"r\"}]}]}]}");

    tst_note("escaped string content");
    tst_append_each("{\"messages\":[{\"role\":\"user\",\"content\":"
                    "\"a\\\"b\\u00e9\\n\"}]}");
}


/* large integers and odd number forms survive a nearby edit exactly */
static void
test_edit_keeps_numbers(void)
{
    static const char  body[] =
        "{\"model\":\"m\",\"metadata\":{\"id\":12345678901234567890123,"
        "\"f\":1.0000000000000000001e-400,\"n\":-0.0},\"tools\":["
        "{\"name\":\"a\",\"x\":18446744073709551617},{\"name\":\"b\"}],"
        "\"messages\":[]}";
    static const char  want[] =
        "{\"model\":\"m\",\"metadata\":{\"id\":12345678901234567890123,"
        "\"f\":1.0000000000000000001e-400,\"n\":-0.0},\"tools\":["
        "{\"name\":\"a\",\"x\":18446744073709551617}],"
        "\"messages\":[]}";
    static const unsigned char  del[] = { 0, 1 };
    tst_doc_t          d;
    ts_edits_t         e;
    ts_val_t           items[2];
    size_t             len;
    char              *out;

    tst_doc_set(&d, body, sizeof(body) - 1);
    if (!CHECK(d.st == TS_OK && d.ix.ntools == 2)) {
        tst_doc_free(&d);
        return;
    }

    items[0] = d.ix.tools[0].elem;
    items[1] = d.ix.tools[1].elem;

    ts_edits_init(&e);
    CHECK(ts_edit_delete_items(&e, items, 2, del) == 0);

    out = tst_render(&e, &d, &len);
    if (CHECK(out != NULL)) {
        CHECK(len == sizeof(want) - 1 && memcmp(out, want, len) == 0);
        free(out);
    }

    ts_edits_free(&e);
    tst_doc_free(&d);
}


const tst_case_t  tst_edit_tests[] = {
    { "edit_basic", test_edit_basic },
    { "edit_pieces", test_edit_pieces },
    { "edit_delete_items", test_edit_delete_items },
    { "edit_append_item", test_edit_append_item },
    { "edit_append_empty", test_edit_append_empty },
    { "edit_append_block", test_edit_append_block },
    { "edit_keeps_numbers", test_edit_keeps_numbers },
    { NULL, NULL }
};
