/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

#include "ts_history.h"


#define TS_HOSTED_PREFIX  "tool_search_tool_"


static int
ts_str_prefix(const char *buf, const ts_val_t *v, const char *prefix)
{
    size_t  n;

    n = strlen(prefix);

    return v->kind == TS_STRING && v->len >= n + 2
           && memcmp(buf + v->off + 1, prefix, n) == 0;
}


int
ts_history_is_hosted(const ts_index_t *ix, const ts_block_t *b)
{
    if (ts_str_eq(ix->buf, &b->type, "tool_search_tool_result")) {
        return 1;
    }

    return ts_str_eq(ix->buf, &b->type, "server_tool_use")
           && ts_str_prefix(ix->buf, &b->name, TS_HOSTED_PREFIX);
}


int
ts_history_is_hosted_tool(const char *buf, const ts_tool_t *t)
{
    return ts_str_prefix(buf, &t->type, TS_HOSTED_PREFIX);
}


int
ts_history_hosted_refs(const ts_index_t *ix, const ts_block_t *b,
    ts_val_t **items, size_t *n)
{
    ts_val_t  refs;

    *items = NULL;
    *n = 0;

    if (ts_object_member(ix->buf, &b->content, "tool_references", &refs)
        != TS_OK || refs.kind != TS_ARRAY)
    {
        return 0;
    }

    return ts_container_items(ix->buf, &refs, items, n) == TS_OK ? 0 : -1;
}


ts_val_t
ts_history_ref_name(const ts_index_t *ix, const ts_val_t *ref)
{
    ts_val_t  name;

    if (ts_object_member(ix->buf, ref, "tool_name", &name) != TS_OK) {
        name.kind = TS_NONE;
    }

    return name;
}


static int
ts_history_hosted(ts_history_t *h, const ts_index_t *ix, const ts_block_t *b)
{
    ts_val_t  *refs, name;
    size_t     i, n;
    int        rc;

    h->hosted_blocks++;

    if (ts_history_hosted_refs(ix, b, &refs, &n) != 0) {
        return -1;
    }

    rc = 0;

    for (i = 0; i < n && rc == 0; i++) {
        name = ts_history_ref_name(ix, &refs[i]);
        rc = ts_names_add(&h->hosted, ix->buf, &name);
    }

    free(refs);

    return rc;
}


/* a result answering a call of the gateway's own search tool */
static int
ts_answers_gateway(const ts_index_t *ix, const ts_block_t *r,
    const char *tool)
{
    const ts_message_t  *m;
    const ts_block_t    *c;
    uint32_t             k;

    if (tool == NULL || r->message == 0) {
        return 0;
    }

    m = &ix->messages[r->message - 1];

    for (k = m->block_first; k < m->block_end; k++) {
        c = &ix->blocks[k];

        if (c->parent < 0 && ts_str_eq(ix->buf, &c->type, "tool_use")
            && ts_str_eq(ix->buf, &c->name, tool)
            && ts_str_same_raw(ix->buf, &c->id, &r->id))
        {
            return 1;
        }
    }

    return 0;
}


static int
ts_history_block(ts_history_t *h, const ts_index_t *ix, const ts_block_t *b,
    const char *tool)
{
    const char  *buf;

    buf = ix->buf;

    if (b->parent >= 0) {
        return ts_str_eq(buf, &b->type, "tool_reference")
               && !ts_answers_gateway(ix, &ix->blocks[b->parent], tool)
               ? ts_names_add(&h->client, buf, &b->name) : 0;
    }

    if (ts_history_is_hosted(ix, b)) {
        return ts_history_hosted(h, ix, b);
    }

    if (ts_str_eq(buf, &b->type, "tool_use")) {
        h->callers += b->caller.val.kind != TS_NONE;
        return ts_names_add(&h->called, buf, &b->name);
    }

    return 0;
}


/* the characters of a Messages API tool name: [a-zA-Z0-9_-] */
static int
ts_name_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
           || (c >= '0' && c <= '9') || c == '_' || c == '-';
}


/*
 * The words of a JSON string that could be tool names: runs of name
 * characters.  An escape ends a word (a name written with escapes is
 * not recognised), so "\nmcp__a__b" holds mcp__a__b.
 */
static int
ts_history_words(ts_history_t *h, const char *buf, const ts_val_t *s)
{
    const char  *p, *end, *start;
    ts_val_t     w;

    p = buf + s->off + 1;
    end = buf + s->off + s->len - 1;
    w.kind = TS_STRING;
    w.esc = 0;

    while (p < end) {
        if (*p == '\\') {
            p += (p + 1 < end && p[1] == 'u') ? 6 : 2;
            continue;
        }

        if (!ts_name_char((unsigned char) *p)) {
            p++;
            continue;
        }

        for (start = p; p < end && ts_name_char((unsigned char) *p); p++) {
            /* void */
        }

        /* the word as a string value: the bytes between its "quotes" */
        w.off = (size_t) (start - buf) - 1;
        w.len = (size_t) (p - start) + 2;

        if (ts_names_add(&h->named, buf, &w) != 0) {
            return -1;
        }
    }

    return 0;
}


/*
 * Tool names in the text of the first user message.  A client that
 * compacts its history puts the summary there: the tools found before
 * are named in it, and those names are all that remains of them.  The
 * first message does not change between compactions, so neither does
 * what it names.
 */
static int
ts_history_named(ts_history_t *h, const ts_index_t *ix)
{
    const ts_message_t  *m;
    const ts_block_t    *b;
    ts_val_t             text;
    size_t               i;

    if (ix->nmessages == 0) {
        return 0;
    }

    m = &ix->messages[0];

    if (!ts_str_eq(ix->buf, &m->role, "user")) {
        return 0;
    }

    if (m->content.kind == TS_STRING) {
        return ts_history_words(h, ix->buf, &m->content);
    }

    for (i = m->block_first; i < m->block_end; i++) {
        b = &ix->blocks[i];

        if (b->parent < 0 && ts_str_eq(ix->buf, &b->type, "text")
            && ts_object_member(ix->buf, &b->elem, "text", &text) == TS_OK
            && text.kind == TS_STRING
            && ts_history_words(h, ix->buf, &text) != 0)
        {
            return -1;
        }
    }

    return 0;
}


int
ts_history_build(ts_history_t *h, const ts_index_t *ix, const char *tool)
{
    size_t  i;

    memset(h, 0, sizeof(ts_history_t));
    ts_names_init(&h->called);
    ts_names_init(&h->hosted);
    ts_names_init(&h->client);
    ts_names_init(&h->named);

    for (i = 0; i < ix->nblocks; i++) {
        if (ts_history_block(h, ix, &ix->blocks[i], tool) != 0) {
            return -1;
        }
    }

    if (ts_history_named(h, ix) != 0) {
        return -1;
    }

    ts_names_seal(&h->called);
    ts_names_seal(&h->hosted);
    ts_names_seal(&h->client);
    ts_names_seal(&h->named);

    return 0;
}


void
ts_history_free(ts_history_t *h)
{
    ts_names_free(&h->called);
    ts_names_free(&h->hosted);
    ts_names_free(&h->client);
    ts_names_free(&h->named);
}
