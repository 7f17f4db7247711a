/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

#include "scan/ts_buf.h"
#include "messages/ts_history.h"
#include "rewrite/ts_hygiene.h"




/* the inside of a JSON string value: already escaped, copied as is */
static void
ts_text_str(ts_buf_t *t, const char *buf, const ts_val_t *v)
{
    ts_buf_add(t, buf + v->off + 1, v->len - 2);
}


/*
 * Closes the text and the block, keeping the original block's cache
 * breakpoint, and puts the block in place of the original.
 */
static int
ts_text_put(ts_buf_t *t, const ts_hygiene_t *hy, const ts_val_t *elem)
{
    const char  *buf;
    ts_val_t     cache;
    int          rc;

    buf = hy->ix->buf;
    ts_buf_str(t, "\"");

    if (ts_object_member(buf, elem, "cache_control", &cache) == TS_OK
        && cache.kind != TS_NONE)
    {
        ts_buf_str(t, ",\"cache_control\":");
        ts_buf_add(t, buf + cache.off, cache.len);
    }

    ts_buf_str(t, "}");

    rc = t->failed ? -1 : ts_edit_replace(hy->edits, elem->off, elem->len,
                                          t->p, t->len);
    t->len = 0;

    return rc;
}


/*
 * A tool the client sent deferred that history never found nor called:
 * the model could not see it where tool search runs, so it goes rather
 * than become visible (Claude Code's DeferredToolPlaceholder, "never call
 * this tool").  Not while tool_choice may name it.
 */
static int
ts_undiscovered(const ts_index_t *ix, const ts_tool_t *t,
    const ts_history_t *h)
{
    return t->defer_loading.val.kind == TS_TRUE && t->name.kind == TS_STRING
           && ts_index_top(ix, TS_TOP_TOOL_CHOICE) == NULL
           && !ts_names_has_val(&h->called, ix->buf, &t->name)
           && !ts_names_has_val(&h->client, ix->buf, &t->name)
           && !ts_names_has_val(&h->hosted, ix->buf, &t->name);
}


/*
 * Hosted search tools and undiscovered deferred tools go, every other
 * tool loses defer_loading; one tool at least stays.
 */
static int
ts_strip_tools(const ts_hygiene_t *hy, const ts_history_t *h)
{
    const ts_index_t   *ix;
    const ts_member_t  *tools;
    unsigned char      *del, *gone;
    ts_val_t           *items;
    size_t              i, n, m;
    int                 rc;

    ix = hy->ix;
    tools = ts_index_top(ix, TS_TOP_TOOLS);

    if (tools == NULL || ix->ntools == 0) {
        return 0;
    }

    items = malloc(ix->ntools * sizeof(ts_val_t));
    del = calloc(ix->ntools, 1);
    gone = calloc(ix->ntools, 1);
    rc = (items == NULL || del == NULL || gone == NULL) ? -1 : 0;

    for (i = 0, n = 0, m = 0; rc == 0 && i < ix->ntools; i++) {
        items[i] = ix->tools[i].elem;
        del[i] = (unsigned char) ts_history_is_hosted_tool(ix->buf,
                                                           &ix->tools[i]);
        gone[i] = (unsigned char) (del[i]
                                   || ts_undiscovered(ix, &ix->tools[i], h));
        n += del[i];
        m += gone[i];
    }

    if (m < ix->ntools) {
        memcpy(del, gone, ix->ntools);
        n = m;
    }

    for (i = 0; rc == 0 && i < ix->ntools; i++) {
        if (!del[i] && ix->tools[i].defer_loading.val.kind != TS_NONE) {
            rc = ts_edit_delete_member(hy->edits, ix->buf,
                                       &ix->tools[i].defer_loading);
        }
    }

    if (rc == 0 && n > 0) {
        rc = ts_edit_delete_items(hy->edits, items, ix->ntools, del);
    }

    free(items);
    free(del);
    free(gone);

    return rc;
}


/* the tools a reference may name in the outgoing request */
typedef struct {
    ts_names_t  all;        /* every tool but the hosted search tools */
    ts_names_t  deferred;   /* those of them with defer_loading */
} ts_toolset_t;


static void
ts_toolset_free(ts_toolset_t *ts)
{
    ts_names_free(&ts->all);
    ts_names_free(&ts->deferred);
}


static int
ts_toolset_build(ts_toolset_t *ts, const ts_hygiene_t *hy)
{
    const ts_index_t  *ix;
    const ts_tool_t   *t;
    size_t             i;

    ix = hy->ix;
    ts_names_init(&ts->all);
    ts_names_init(&ts->deferred);

    for (i = 0; i < ix->ntools; i++) {
        t = &ix->tools[i];

        if (ts_history_is_hosted_tool(ix->buf, t)) {
            continue;
        }

        if (ts_names_add(&ts->all, ix->buf, &t->name) != 0
            || ((t->defer_loading.val.kind == TS_TRUE
                 || (hy->defer && hy->defer[i]))
                && ts_names_add(&ts->deferred, ix->buf, &t->name) != 0))
        {
            return -1;
        }
    }

    ts_names_seal(&ts->all);
    ts_names_seal(&ts->deferred);

    return 0;
}


/*
 * A client-side search result the upstream cannot expand: the reference
 * becomes text naming its tool, or saying the tool is gone.
 */
static int
ts_text_reference(const ts_hygiene_t *hy, ts_buf_t *t, const ts_block_t *b,
    const ts_toolset_t *ts)
{
    const ts_index_t  *ix;

    ix = hy->ix;

    if (b->name.kind == TS_STRING
        && ts_names_has_val(&ts->all, ix->buf, &b->name))
    {
        ts_buf_str(t, TS_TEXT_BLOCK "Tool loaded: ");
        ts_text_str(t, ix->buf, &b->name);
        hy->counts->refs_converted++;

    } else if (b->name.kind == TS_STRING) {
        ts_buf_str(t, TS_TEXT_BLOCK "Tool ");
        ts_text_str(t, ix->buf, &b->name);
        ts_buf_str(t, " is no longer available.");
        hy->counts->refs_stale++;

    } else {
        ts_buf_str(t, TS_TEXT_BLOCK "Tool reference removed.");
        hy->counts->refs_stale++;
    }

    return ts_text_put(t, hy, &b->elem);
}


/* a hosted search call: the query it ran */
static int
ts_strip_search_call(const ts_hygiene_t *hy, ts_buf_t *t, const ts_block_t *b)
{
    const char  *buf;
    ts_val_t     input, query;

    buf = hy->ix->buf;
    ts_buf_str(t, TS_TEXT_BLOCK "Tool search");

    if (ts_object_member(buf, &b->elem, "input", &input) == TS_OK
        && ts_object_member(buf, &input, "query", &query) == TS_OK
        && query.kind == TS_STRING)
    {
        ts_buf_str(t, ": ");
        ts_text_str(t, buf, &query);
    }

    ts_buf_str(t, ".");

    return ts_text_put(t, hy, &b->elem);
}


/* a hosted search result: the names it found */
static int
ts_strip_search_result(const ts_hygiene_t *hy, ts_buf_t *t,
    const ts_block_t *b)
{
    const ts_index_t  *ix;
    ts_val_t          *refs, name;
    size_t             i, n, named;

    ix = hy->ix;

    if (ts_history_hosted_refs(ix, b, &refs, &n) != 0) {
        return -1;
    }

    ts_buf_str(t, TS_TEXT_BLOCK "Tools found: ");

    for (i = 0, named = 0; i < n; i++) {
        name = ts_history_ref_name(ix, &refs[i]);

        if (name.kind == TS_STRING) {
            ts_buf_str(t, named++ ? ", " : "");
            ts_text_str(t, ix->buf, &name);
        }
    }

    free(refs);

    if (named == 0) {
        t->len = 0;
        ts_buf_str(t, TS_TEXT_BLOCK "Tool search found no tools.");
    }

    hy->counts->refs_converted += named;

    return ts_text_put(t, hy, &b->elem);
}


static int
ts_is_reference(const char *buf, const ts_block_t *b)
{
    return b->parent >= 0 && ts_str_eq(buf, &b->type, "tool_reference");
}


/*
 * A tool_use block's "caller" (programmatic tool calling): on another
 * block it is no tool-search field, and the upstream judges the block.
 */
static int
ts_has_caller(const char *buf, const ts_block_t *b)
{
    return b->parent < 0 && b->caller.val.kind != TS_NONE
           && ts_str_eq(buf, &b->type, "tool_use");
}


static int
ts_strip_block(const ts_hygiene_t *hy, ts_buf_t *t, const ts_block_t *b,
    const ts_toolset_t *ts)
{
    const char  *buf;

    buf = hy->ix->buf;

    if (b->parent >= 0) {
        if (!ts_is_reference(buf, b)) {
            return 0;
        }

        if (ts_names_has_val(hy->referenced, buf, &b->name)) {
            hy->counts->refs_kept++;
            return 0;
        }

        return ts_text_reference(hy, t, b, ts);
    }

    if (ts_str_eq(buf, &b->type, "tool_search_tool_result")) {
        return ts_strip_search_result(hy, t, b);
    }

    if (ts_history_is_hosted(hy->ix, b)) {
        return ts_strip_search_call(hy, t, b);
    }

    if (ts_has_caller(buf, b)) {
        return ts_edit_delete_member(hy->edits, buf, &b->caller);
    }

    return 0;
}


int
ts_hygiene_strip(const ts_hygiene_t *hy, const ts_history_t *h)
{
    ts_buf_t     t;
    ts_toolset_t  ts;
    size_t        i;
    int           rc;

    ts_buf_init(&t, 0);

    rc = ts_toolset_build(&ts, hy) == 0 ? ts_strip_tools(hy, h) : -1;

    for (i = 0; rc == 0 && i < hy->ix->nblocks; i++) {
        rc = ts_strip_block(hy, &t, &hy->ix->blocks[i], &ts);
    }

    ts_toolset_free(&ts);
    ts_buf_free(&t);

    return rc;
}


int
ts_hygiene_has_artifacts(const ts_index_t *ix, int refs)
{
    const ts_block_t  *b;
    size_t             i;

    for (i = 0; i < ix->ntools; i++) {
        if (ix->tools[i].defer_loading.val.kind != TS_NONE
            || ts_history_is_hosted_tool(ix->buf, &ix->tools[i]))
        {
            return 1;
        }
    }

    for (i = 0; i < ix->nblocks; i++) {
        b = &ix->blocks[i];

        if ((refs && ts_is_reference(ix->buf, b))
            || (b->parent < 0 && ts_history_is_hosted(ix, b))
            || ts_has_caller(ix->buf, b))
        {
            return 1;
        }
    }

    return 0;
}


/* hosted results keep only references the upstream can expand */
static int
ts_repair_hosted(const ts_hygiene_t *hy, const ts_block_t *b,
    const ts_toolset_t *ts)
{
    const ts_index_t  *ix;
    ts_val_t          *refs, name;
    unsigned char     *del;
    size_t             i, n, stale;
    int                rc;

    ix = hy->ix;

    if (ts_history_hosted_refs(ix, b, &refs, &n) != 0) {
        return -1;
    }

    del = calloc(n ? n : 1, 1);
    rc = del ? 0 : -1;

    for (i = 0, stale = 0; rc == 0 && i < n; i++) {
        name = ts_history_ref_name(ix, &refs[i]);
        del[i] = !ts_names_has_val(&ts->deferred, ix->buf, &name);
        stale += del[i];
    }

    if (rc == 0 && stale > 0) {
        hy->counts->refs_stale += stale;
        rc = ts_edit_delete_items(hy->edits, refs, n, del);
    }

    free(del);
    free(refs);

    return rc;
}


/*
 * References the upstream cannot expand become text; kept[] marks the
 * messages that still carry a reference afterwards.
 */
static int
ts_repair_references(const ts_hygiene_t *hy, const ts_toolset_t *ts,
    unsigned char *kept, ts_buf_t *t)
{
    const ts_index_t  *ix;
    const ts_block_t  *b;
    size_t             i;
    int                rc;

    ix = hy->ix;
    rc = 0;

    for (i = 0; rc == 0 && i < ix->nblocks; i++) {
        b = &ix->blocks[i];

        if (ts_is_reference(ix->buf, b)) {
            if (b->name.kind == TS_STRING
                && ts_names_has_val(&ts->deferred, ix->buf, &b->name))
            {
                kept[b->message] = 1;
                hy->counts->refs_kept++;

            } else {
                rc = ts_text_reference(hy, t, b, ts);
            }

        } else if (b->parent < 0
                   && ts_str_eq(ix->buf, &b->type, "tool_search_tool_result"))
        {
            rc = ts_repair_hosted(hy, b, ts);
        }
    }

    return rc;
}


/* Claude Code's own boundary text, which stays where it is */
static int
ts_is_boundary_text(const char *buf, const ts_block_t *b)
{
    static const char  loaded[] = TS_BOUNDARY_TEXT;
    ts_val_t           text;

    return ts_object_member(buf, &b->elem, "text", &text) == TS_OK
           && text.kind == TS_STRING && text.len >= sizeof(loaded) + 1
           && memcmp(buf + text.off + 1, loaded, sizeof(loaded) - 1) == 0;
}


static int
ts_has_result(const ts_index_t *ix, const ts_message_t *m)
{
    uint32_t  k;

    for (k = m->block_first; k < m->block_end; k++) {
        if (ix->blocks[k].parent < 0
            && ts_str_eq(ix->buf, &ix->blocks[k].type, "tool_result"))
        {
            return 1;
        }
    }

    return 0;
}


/* the next user message with tool results and no reference, or -1 */
static long
ts_sibling_target(const ts_index_t *ix, size_t from,
    const unsigned char *kept)
{
    size_t  j;

    for (j = from + 1; j < ix->nmessages; j++) {
        if (!kept[j] && ts_str_eq(ix->buf, &ix->messages[j].role, "user")
            && ts_has_result(ix, &ix->messages[j]))
        {
            return (long) j;
        }
    }

    return -1;
}


/*
 * Turn boundaries (docs/spec/hygiene.md): text next to an expanded
 * reference moves to the next plain tool result, and a reference
 * message without text gets "Tool loaded." as its boundary.
 */
static int
ts_boundary(const ts_hygiene_t *hy, size_t i, long target)
{
    static const char   marker[] = TS_BOUNDARY_BLOCK;
    const ts_index_t   *ix;
    const ts_message_t *m;
    const ts_block_t   *b;
    ts_val_t           *items;
    unsigned char      *del;
    size_t              n, moved;
    uint32_t            k;
    int                 rc, boundary;

    ix = hy->ix;
    m = &ix->messages[i];
    n = m->block_end - m->block_first;

    items = malloc((n ? n : 1) * sizeof(ts_val_t));
    del = calloc(n ? n : 1, 1);
    rc = (items && del) ? 0 : -1;
    boundary = 0;

    for (k = m->block_first, n = 0, moved = 0; rc == 0 && k < m->block_end;
         k++)
    {
        b = &ix->blocks[k];

        if (b->parent >= 0) {
            continue;
        }

        items[n] = b->elem;

        if (ts_str_eq(ix->buf, &b->type, "text")) {
            if (ts_is_boundary_text(ix->buf, b)) {
                boundary = 1;

            } else if (target >= 0) {
                del[n] = 1;
                moved++;
                rc = ts_edit_append_block(hy->edits, ix, (size_t) target,
                                          ix->buf + b->elem.off,
                                          b->elem.len);
            } else {
                boundary = 1;
            }
        }

        n++;
    }

    if (rc == 0 && moved > 0) {
        hy->counts->siblings_moved += moved;
        rc = ts_edit_delete_items(hy->edits, items, n, del);
    }

    if (rc == 0 && !boundary) {
        hy->counts->boundaries_added++;
        rc = ts_edit_append_block(hy->edits, ix, i, marker,
                                  sizeof(marker) - 1);
    }

    free(items);
    free(del);

    return rc;
}


int
ts_hygiene_repair(const ts_hygiene_t *hy, int turn_boundary)
{
    ts_buf_t        t;
    ts_toolset_t    ts;
    unsigned char  *kept;
    size_t          i;
    int             rc;

    kept = calloc(hy->ix->nmessages ? hy->ix->nmessages : 1, 1);
    if (kept == NULL) {
        return -1;
    }

    ts_buf_init(&t, 0);
    rc = ts_toolset_build(&ts, hy);

    if (rc == 0) {
        rc = ts_repair_references(hy, &ts, kept, &t);
    }

    for (i = 0; rc == 0 && turn_boundary && i < hy->ix->nmessages; i++) {
        if (kept[i]) {
            rc = ts_boundary(hy, i, ts_sibling_target(hy->ix, i, kept));
        }
    }

    ts_toolset_free(&ts);
    ts_buf_free(&t);
    free(kept);

    return rc;
}
