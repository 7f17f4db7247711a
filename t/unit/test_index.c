/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The request index against cJSON: every recorded span must parse to the
 * node cJSON finds at the same place.
 */

#include <stdlib.h>
#include <string.h>

#include "tst.h"


typedef void (*tst_doc_check_pt)(const tst_doc_t *d);


static const struct {
    ts_top_key_t   key;
    const char    *name;
} tst_top_keys[] = {
    { TS_TOP_MODEL, "model" },
    { TS_TOP_MESSAGES, "messages" },
    { TS_TOP_TOOLS, "tools" },
    { TS_TOP_SYSTEM, "system" },
    { TS_TOP_STREAM, "stream" },
    { TS_TOP_TOOL_CHOICE, "tool_choice" },
    { TS_TOP_ANTHROPIC_BETA, "anthropic_beta" },
    { TS_TOP_ANTHROPIC_VERSION, "anthropic_version" }
};


/* bodies that reach index paths the recorded requests do not */
static const char  *tst_handwritten[] = {

    /* "content" before "type": tool_result children read afterwards */
    "{\"messages\":[{\"role\":\"user\",\"content\":[{\"content\":["
    "{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"tool_reference\","
    "\"tool_name\":\"t\"}],\"type\":\"tool_result\",\"tool_use_id\":\"x\"}"
    "]}]}",

    /* results with string, empty and nested content; a nested result */
    "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\""
    ",\"tool_use_id\":\"a\",\"content\":\"s\"},{\"type\":\"tool_result\","
    "\"tool_use_id\":\"b\",\"content\":[]},{\"type\":\"tool_result\","
    "\"content\":[{\"type\":\"tool_result\",\"content\":[{\"type\":\"t\"}]}"
    "]}]}]}",

    /* escaped keys, odd whitespace, every top-level key the engine reads */
    " \r\n{ \"mod\\u0065l\" : \"m\" ,\t\"system\":[{\"type\":\"text\"}],"
    "\"stream\":true,\"tool_choice\":{\"type\":\"auto\"},"
    "\"anthropic_beta\":[\"b\"],\"anthropic_version\":\"v\","
    "\"tools\" : [ { \"n\\u0061me\" : \"caf\\u00e9\\ud83d\\ude00\" ,"
    " \"type\":\"custom\", \"defer_loading\" : false ,"
    " \"cache_control\":{\"type\":\"ephemeral\"} } ] ,"
    "\"messages\":[ {\"content\":\"c\",\"role\":\"assistant\"},"
    "{\"role\":\"user\"},{\"role\":\"user\",\"content\":[]},"
    "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\","
    "\"id\":\"i\",\"name\":\"n\",\"input\":{\"type\":[1,{}]}}]} ] }\n",

    "{}",

    "{\"tools\":[],\"messages\":[]}"
};


static const cJSON *
tst_get(const cJSON *obj, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}


static const cJSON *
tst_either(const cJSON *obj, const char *a, const char *b)
{
    return tst_get(obj, a) ? tst_get(obj, a) : tst_get(obj, b);
}


static int
tst_is_type(const cJSON *node, const char *type)
{
    const char  *s;

    s = cJSON_GetStringValue(tst_get(node, "type"));

    return s != NULL && strcmp(s, type) == 0;
}


static void
tst_check_members(const tst_doc_t *d)
{
    const ts_member_t  *m;
    const cJSON        *node;
    size_t              i;

    CHECK(d->ix.nmembers == (size_t) cJSON_GetArraySize(d->root));

    i = 0;

    cJSON_ArrayForEach(node, d->root) {
        tst_note("%s: member %zu \"%s\"", d->name, i, node->string);

        if (!CHECK(i < d->ix.nmembers)) {
            return;
        }

        m = &d->ix.members[i++];

        CHECK(tst_str_is(d->buf, &m->key, node->string));
        CHECK(m->off == m->key.off);
        CHECK(tst_member_is(d->buf, m->off, m->len, node));
        CHECK(tst_span_is(d->buf, &m->val, node));
    }
}


static void
tst_check_top(const tst_doc_t *d)
{
    const ts_member_t  *m;
    const cJSON        *node;
    size_t              i;

    for (i = 0; i < sizeof(tst_top_keys) / sizeof(tst_top_keys[0]); i++) {
        tst_note("%s: top-level \"%s\"", d->name, tst_top_keys[i].name);

        m = ts_index_top(&d->ix, tst_top_keys[i].key);
        node = tst_get(d->root, tst_top_keys[i].name);

        if (CHECK((m == NULL) == (node == NULL)) && m != NULL) {
            CHECK(tst_str_is(d->buf, &m->key, tst_top_keys[i].name));
            CHECK(tst_span_is(d->buf, &m->val, node));
        }
    }
}


static void
tst_check_opt_member(const char *buf, const ts_member_t *m,
    const cJSON *node)
{
    if (node == NULL) {
        CHECK(m->val.kind == TS_NONE);
        return;
    }

    CHECK(tst_member_is(buf, m->off, m->len, node));
    CHECK(tst_span_is(buf, &m->val, node));
}


static void
tst_check_tools(const tst_doc_t *d)
{
    const ts_tool_t  *t;
    const cJSON      *tools, *node;
    size_t            i;

    tools = tst_get(d->root, "tools");

    CHECK(d->ix.ntools == (size_t) cJSON_GetArraySize(tools));

    i = 0;

    cJSON_ArrayForEach(node, tools) {
        tst_note("%s: tool %zu", d->name, i);

        if (!CHECK(i < d->ix.ntools)) {
            return;
        }

        t = &d->ix.tools[i++];

        CHECK(tst_span_is(d->buf, &t->elem, node));
        CHECK(tst_str_is(d->buf, &t->name,
                         cJSON_GetStringValue(tst_get(node, "name"))));
        CHECK(tst_span_is(d->buf, &t->name, tst_get(node, "name")));
        CHECK(tst_span_is(d->buf, &t->type, tst_get(node, "type")));
        tst_check_opt_member(d->buf, &t->defer_loading,
                             tst_get(node, "defer_loading"));
        tst_check_opt_member(d->buf, &t->cache_control,
                             tst_get(node, "cache_control"));
    }
}


/* the fields every indexed block shares with its cJSON node */
static void
tst_check_block(const tst_doc_t *d, const ts_block_t *b, size_t msg,
    const cJSON *node)
{
    CHECK(b->message == msg);
    CHECK(tst_str_is(d->buf, &b->type,
                     cJSON_GetStringValue(tst_get(node, "type"))));
    CHECK(tst_span_is(d->buf, &b->elem, node));
}


static void
tst_check_children(const tst_doc_t *d, size_t self, const cJSON *node)
{
    const ts_block_t  *b, *ch;
    const cJSON       *content, *c;
    size_t             j;

    b = &d->ix.blocks[self];
    content = tst_get(node, "content");

    if (!cJSON_IsArray(content) || !tst_is_type(node, "tool_result")) {
        CHECK(b->child_count == 0);
        return;
    }

    CHECK(b->child_count == (size_t) cJSON_GetArraySize(content));
    CHECK(b->child_first + b->child_count <= d->ix.nblocks);

    j = b->child_first;

    cJSON_ArrayForEach(c, content) {
        if (!CHECK(j < b->child_first + b->child_count)
            || !CHECK(j < d->ix.nblocks))
        {
            return;
        }

        ch = &d->ix.blocks[j++];

        CHECK(ch->parent == (int32_t) self);
        tst_check_block(d, ch, b->message, c);
    }
}


/* the next top-level block of message m at or after k */
static size_t
tst_next_top(const tst_doc_t *d, const ts_message_t *m, size_t k)
{
    while (k < m->block_end && d->ix.blocks[k].parent != -1) {
        k++;
    }

    return k;
}


static void
tst_check_blocks(const tst_doc_t *d, size_t msg, const cJSON *content)
{
    const ts_message_t  *m;
    const ts_block_t    *b;
    const cJSON         *node;
    size_t               k, n, seen;

    m = &d->ix.messages[msg];
    n = 0;
    seen = 0;

    if (!CHECK(m->block_first <= m->block_end)
        || !CHECK(m->block_end <= d->ix.nblocks))
    {
        return;
    }

    k = m->block_first;

    cJSON_ArrayForEach(node, content) {
        tst_note("%s: message %zu block %zu", d->name, msg, n++);

        k = tst_next_top(d, m, k);
        if (!CHECK(k < m->block_end)) {
            return;
        }

        b = &d->ix.blocks[k];

        tst_check_block(d, b, msg, node);
        CHECK(tst_span_is(d->buf, &b->name,
                          tst_either(node, "name", "tool_name")));
        CHECK(tst_span_is(d->buf, &b->id,
                          tst_either(node, "id", "tool_use_id")));
        CHECK(tst_span_is(d->buf, &b->content, tst_get(node, "content")));
        tst_check_children(d, k, node);

        seen += 1 + b->child_count;
        k++;
    }

    tst_note("%s: message %zu", d->name, msg);
    CHECK(tst_next_top(d, m, k) == m->block_end);
    CHECK(seen == m->block_end - m->block_first);
}


static void
tst_check_messages(const tst_doc_t *d)
{
    const ts_message_t  *m;
    const cJSON         *msgs, *node, *content;
    size_t               i;

    msgs = tst_get(d->root, "messages");

    CHECK(d->ix.nmessages == (size_t) cJSON_GetArraySize(msgs));

    i = 0;

    cJSON_ArrayForEach(node, msgs) {
        tst_note("%s: message %zu", d->name, i);

        if (!CHECK(i < d->ix.nmessages)) {
            return;
        }

        m = &d->ix.messages[i];
        content = tst_get(node, "content");

        CHECK(tst_span_is(d->buf, &m->elem, node));
        CHECK(tst_str_is(d->buf, &m->role,
                         cJSON_GetStringValue(tst_get(node, "role"))));
        CHECK(tst_span_is(d->buf, &m->content, content));

        if (cJSON_IsArray(content)) {
            tst_check_blocks(d, i, content);

        } else {
            CHECK(m->block_first == m->block_end);
        }

        i++;
    }
}


static void
tst_each_fixture(tst_doc_check_pt check)
{
    tst_doc_t   d;
    char      **paths;
    size_t      n, i;

    n = tst_fixtures(&paths);
    CHECK(n > 0);

    for (i = 0; i < n; i++) {
        tst_note("%s", paths[i]);

        if (CHECK(tst_doc_load(&d, paths[i]) == 0)
            && CHECK(d.root != NULL) && CHECK(d.st == TS_OK))
        {
            check(&d);
        }

        tst_doc_free(&d);
    }

    tst_free_list(paths, n);
}


/* every run folder holds at least one request, all of them listed */
static void
test_index_fixture_list(void)
{
    static const char  *runs[] = {
        "ts-unset/", "ts-true/", "ts-true-haiku45/", "ts-false-caller/",
        "ts-true-nonstream/"
    };

    char    **paths;
    size_t    n, i, r, found;

    n = tst_fixtures(&paths);

    for (r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
        found = 0;

        for (i = 0; i < n; i++) {
            found += strstr(paths[i], runs[r]) != NULL;
        }

        tst_note("run %s", runs[r]);
        CHECK(found > 0);
    }

    tst_free_list(paths, n);
}


static void
tst_check_status(const tst_doc_t *d)
{
    CHECK(d->ix.status == TS_OK);
    CHECK(d->ix.buf == d->buf && d->ix.len == d->len);
}


static void
test_index_fixture_status(void)
{
    tst_each_fixture(tst_check_status);
}


static void
test_index_fixture_members(void)
{
    tst_each_fixture(tst_check_members);
}


static void
test_index_fixture_top(void)
{
    tst_each_fixture(tst_check_top);
}


static void
test_index_fixture_tools(void)
{
    tst_each_fixture(tst_check_tools);
}


static void
test_index_fixture_messages(void)
{
    tst_each_fixture(tst_check_messages);
}


static void
test_index_handwritten(void)
{
    tst_doc_t  d;
    size_t     i;

    for (i = 0; i < sizeof(tst_handwritten) / sizeof(char *); i++) {
        tst_note("handwritten %zu", i);
        tst_doc_set(&d, tst_handwritten[i], strlen(tst_handwritten[i]));

        if (CHECK(d.root != NULL) && CHECK(d.st == TS_OK)) {
            tst_check_members(&d);
            tst_check_top(&d);
            tst_check_tools(&d);
            tst_check_messages(&d);
        }

        tst_doc_free(&d);
    }
}


/*
 * Lent memory: an index reads the same in it, gives the arrays back
 * grown, and one built while they are lent takes its own.
 */
static void
test_index_lent_memory(void)
{
    tst_doc_t       d;
    ts_index_t      ix, other;
    ts_index_mem_t  mem;
    void           *tools;
    size_t          i;

    if (!CHECK(tst_doc_load(&d, TS_FIXTURES "/claude-code/ts-unset/002.json")
               == 0))
    {
        return;
    }

    memset(&mem, 0, sizeof(ts_index_mem_t));

    CHECK(ts_index_build_in(&ix, d.buf, d.len, &mem) == TS_OK);
    CHECK(ix.ntools == d.ix.ntools && ix.nmessages == d.ix.nmessages
          && ix.nblocks == d.ix.nblocks && ix.nmembers == d.ix.nmembers);

    for (i = 0; i < ix.ntools; i++) {
        CHECK(ix.tools[i].name.off == d.ix.tools[i].name.off
              && ix.tools[i].elem.len == d.ix.tools[i].elem.len);
    }

    CHECK(mem.lent);

    CHECK(ts_index_build_in(&other, d.buf, d.len, &mem) == TS_OK);
    CHECK(other.mem == NULL && other.tools != ix.tools);
    ts_index_free(&other);

    tools = ix.tools;
    ts_index_free(&ix);
    CHECK(!mem.lent && mem.arrays[0] == tools && mem.caps[0] >= d.ix.ntools);

    /* the next index reuses them */
    CHECK(ts_index_build_in(&ix, d.buf, d.len, &mem) == TS_OK);
    CHECK(ix.tools == tools && ix.ntools == d.ix.ntools);
    ts_index_free(&ix);

    ts_index_mem_free(&mem);
    tst_doc_free(&d);
}


const tst_case_t  tst_index_tests[] = {
    { "index_lent_memory", test_index_lent_memory },
    { "index_fixture_list", test_index_fixture_list },
    { "index_fixture_status", test_index_fixture_status },
    { "index_fixture_members", test_index_fixture_members },
    { "index_fixture_top", test_index_fixture_top },
    { "index_fixture_tools", test_index_fixture_tools },
    { "index_fixture_messages", test_index_fixture_messages },
    { "index_handwritten", test_index_handwritten },
    { NULL, NULL }
};
