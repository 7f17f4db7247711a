/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

#include "ts_history.h"
#include "ts_hygiene.h"


#define TS_TEXT_BLOCK  "{\"type\":\"text\",\"text\":\""


/* a text block built from literal parts and raw JSON string contents */
typedef struct {
    char    *p;
    size_t   len;
    size_t   cap;
    int      failed;
} ts_text_t;


static void
ts_text_add(ts_text_t *t, const char *s, size_t n)
{
    char    *p;
    size_t   cap;

    if (t->failed) {
        return;
    }

    if (t->len + n > t->cap) {
        cap = (t->len + n) * 2 + 64;
        p = realloc(t->p, cap);
        if (p == NULL) {
            t->failed = 1;
            return;
        }

        t->p = p;
        t->cap = cap;
    }

    memcpy(t->p + t->len, s, n);
    t->len += n;
}


static void
ts_text_lit(ts_text_t *t, const char *s)
{
    ts_text_add(t, s, strlen(s));
}


/* the inside of a JSON string value: already escaped, copied as is */
static void
ts_text_str(ts_text_t *t, const char *buf, const ts_val_t *v)
{
    ts_text_add(t, buf + v->off + 1, v->len - 2);
}


/*
 * Closes the text and the block, keeping the original block's cache
 * breakpoint, and puts the block in place of the original.
 */
static int
ts_text_put(ts_text_t *t, ts_request_t *rq, const ts_val_t *elem)
{
    const char  *buf;
    ts_val_t     cache;
    int          rc;

    buf = rq->ix.buf;
    ts_text_lit(t, "\"");

    if (ts_object_member(buf, elem, "cache_control", &cache) == TS_OK
        && cache.kind != TS_NONE)
    {
        ts_text_lit(t, ",\"cache_control\":");
        ts_text_add(t, buf + cache.off, cache.len);
    }

    ts_text_lit(t, "}");

    rc = t->failed ? -1 : ts_edit_replace(&rq->edits, elem->off, elem->len,
                                          t->p, t->len);
    t->len = 0;

    return rc;
}


/* hosted search tools go, every other tool loses defer_loading */
static int
ts_strip_tools(ts_request_t *rq)
{
    const ts_index_t   *ix;
    const ts_member_t  *tools;
    unsigned char      *del;
    ts_val_t           *items;
    size_t              i, n;
    int                 rc;

    ix = &rq->ix;
    tools = ts_index_top(ix, TS_TOP_TOOLS);

    if (tools == NULL || ix->ntools == 0) {
        return 0;
    }

    items = malloc(ix->ntools * sizeof(ts_val_t));
    del = calloc(ix->ntools, 1);
    rc = (items == NULL || del == NULL) ? -1 : 0;

    for (i = 0, n = 0; rc == 0 && i < ix->ntools; i++) {
        items[i] = ix->tools[i].elem;
        del[i] = (unsigned char) ts_history_is_hosted_tool(ix->buf, &ix->tools[i]);
        n += del[i];

        if (!del[i] && ix->tools[i].defer_loading.val.kind != TS_NONE) {
            rc = ts_edit_delete_member(&rq->edits, ix->buf,
                                       &ix->tools[i].defer_loading);
        }
    }

    if (rc == 0 && n > 0) {
        rc = ts_edit_delete_items(&rq->edits, items, ix->ntools, del);
    }

    free(items);
    free(del);

    return rc;
}


static int
ts_tool_present(const ts_index_t *ix, const ts_val_t *name)
{
    size_t  i;

    for (i = 0; i < ix->ntools; i++) {
        if (!ts_history_is_hosted_tool(ix->buf, &ix->tools[i])
            && ix->tools[i].name.len == name->len
            && memcmp(ix->buf + ix->tools[i].name.off, ix->buf + name->off,
                      name->len) == 0)
        {
            return 1;
        }
    }

    return 0;
}


/* a client-side search result: the reference becomes its tool's name */
static int
ts_strip_reference(ts_request_t *rq, ts_text_t *t, const ts_block_t *b)
{
    const ts_index_t  *ix;

    ix = &rq->ix;

    if (b->name.kind != TS_STRING) {
        ts_text_lit(t, TS_TEXT_BLOCK "Tool reference removed.");

    } else if (ts_tool_present(ix, &b->name)) {
        ts_text_lit(t, TS_TEXT_BLOCK "Tool loaded: ");
        ts_text_str(t, ix->buf, &b->name);

    } else {
        ts_text_lit(t, TS_TEXT_BLOCK "Tool ");
        ts_text_str(t, ix->buf, &b->name);
        ts_text_lit(t, " is no longer available.");
    }

    rq->refs_converted++;

    return ts_text_put(t, rq, &b->elem);
}


/* a hosted search call: the query it ran */
static int
ts_strip_search_call(ts_request_t *rq, ts_text_t *t, const ts_block_t *b)
{
    const char  *buf;
    ts_val_t     input, query;

    buf = rq->ix.buf;
    ts_text_lit(t, TS_TEXT_BLOCK "Tool search");

    if (ts_object_member(buf, &b->elem, "input", &input) == TS_OK
        && ts_object_member(buf, &input, "query", &query) == TS_OK
        && query.kind == TS_STRING)
    {
        ts_text_lit(t, ": ");
        ts_text_str(t, buf, &query);
    }

    ts_text_lit(t, ".");

    return ts_text_put(t, rq, &b->elem);
}


/* a hosted search result: the names it found */
static int
ts_strip_search_result(ts_request_t *rq, ts_text_t *t, const ts_block_t *b)
{
    const ts_index_t  *ix;
    ts_val_t          *refs, name;
    size_t             i, n, named;

    ix = &rq->ix;

    if (ts_history_hosted_refs(ix, b, &refs, &n) != 0) {
        return -1;
    }

    ts_text_lit(t, TS_TEXT_BLOCK "Tools found: ");

    for (i = 0, named = 0; i < n; i++) {
        name = ts_history_ref_name(ix, &refs[i]);

        if (name.kind == TS_STRING) {
            ts_text_lit(t, named++ ? ", " : "");
            ts_text_str(t, ix->buf, &name);
        }
    }

    free(refs);

    if (named == 0) {
        t->len = 0;
        ts_text_lit(t, TS_TEXT_BLOCK "Tool search found no tools.");
    }

    rq->refs_converted += named;

    return ts_text_put(t, rq, &b->elem);
}


static int
ts_strip_block(ts_request_t *rq, ts_text_t *t, const ts_block_t *b)
{
    const char  *buf;

    buf = rq->ix.buf;

    if (b->parent >= 0) {
        return ts_str_eq(buf, &b->type, "tool_reference")
               ? ts_strip_reference(rq, t, b) : 0;
    }

    if (ts_str_eq(buf, &b->type, "tool_search_tool_result")) {
        return ts_strip_search_result(rq, t, b);
    }

    if (ts_history_is_hosted(&rq->ix, b)) {
        return ts_strip_search_call(rq, t, b);
    }

    if (b->caller.val.kind != TS_NONE
        && ts_str_eq(buf, &b->type, "tool_use"))
    {
        return ts_edit_delete_member(&rq->edits, buf, &b->caller);
    }

    return 0;
}


int
ts_hygiene_strip(ts_request_t *rq)
{
    ts_text_t  t;
    size_t     i;
    int        rc;

    memset(&t, 0, sizeof(ts_text_t));

    rc = ts_strip_tools(rq);

    for (i = 0; rc == 0 && i < rq->ix.nblocks; i++) {
        rc = ts_strip_block(rq, &t, &rq->ix.blocks[i]);
    }

    free(t.p);

    return rc;
}


int
ts_hygiene_has_artifacts(const ts_request_t *rq)
{
    const ts_index_t  *ix;
    const ts_block_t  *b;
    size_t             i;

    ix = &rq->ix;

    for (i = 0; i < ix->ntools; i++) {
        if (ix->tools[i].defer_loading.val.kind != TS_NONE
            || ts_history_is_hosted_tool(ix->buf, &ix->tools[i]))
        {
            return 1;
        }
    }

    for (i = 0; i < ix->nblocks; i++) {
        b = &ix->blocks[i];

        if ((b->parent >= 0 && ts_str_eq(ix->buf, &b->type, "tool_reference"))
            || (b->parent < 0 && ts_history_is_hosted(ix, b))
            || b->caller.val.kind != TS_NONE)
        {
            return 1;
        }
    }

    return 0;
}
