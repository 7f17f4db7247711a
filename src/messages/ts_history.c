/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

#include "messages/ts_history.h"


#define TS_HOSTED_PREFIX  "tool_search_tool_"


static int
ts_history_prefix(const char *buf, const ts_val_t *v, const char *prefix)
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
           && ts_history_prefix(ix->buf, &b->name, TS_HOSTED_PREFIX);
}


int
ts_history_is_hosted_tool(const char *buf, const ts_tool_t *t)
{
    return ts_history_prefix(buf, &t->type, TS_HOSTED_PREFIX);
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
static const unsigned char  ts_name_chars[256] = {
    ['-'] = 1, ['_'] = 1,
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1,
    ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
    ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1,
    ['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1,
    ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1,
    ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
    ['Y'] = 1, ['Z'] = 1,
    ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
    ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1,
    ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1,
    ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
    ['y'] = 1, ['z'] = 1
};


/* the lengths of the wanted names: most words of a text are shorter */
typedef struct {
    const ts_names_t  *wanted;
    ts_names_t        *named;
    size_t             min;
    size_t             max;
} ts_wanted_t;


/* 1 when the byte before p (not before base) starts an escape */
static int
ts_after_escape(const unsigned char *base, const unsigned char *p)
{
    size_t  n;

    for (n = 0; p > base && p[-1] == '\\'; p--) {
        n++;
    }

    return n & 1;
}


/*
 * The words of a span of a JSON string, runs of name characters, that
 * are wanted names.  Only words as long as the shortest wanted name
 * count, so the scan looks at one byte in min where the text has no long
 * words.  An escape ends a word (a name written with escapes is not
 * recognised): "\nmcp__a__b" holds mcp__a__b.
 */
static int
ts_history_words(ts_wanted_t *w, const char *buf, const char *from,
    const char *to)
{
    const unsigned char  *base, *p, *q, *start, *end;
    ts_val_t              word;

    base = (const unsigned char *) from;
    end = (const unsigned char *) to;
    word.kind = TS_STRING;
    word.esc = 0;

    /* p follows a byte that is not a name character, or starts the text */
    for (p = base; (size_t) (end - p) >= w->min; /* void */ ) {
        q = p + w->min - 1;

        if (!ts_name_chars[*q]) {
            p = q + 1;
            continue;
        }

        for (start = q; start > p && ts_name_chars[start[-1]]; start--) {
            /* void */
        }

        if (ts_after_escape(base, start)) {
            start += (*start == 'u') ? 5 : 1;
        }

        for (p = q + 1; p < end && ts_name_chars[*p]; p++) {
            /* void */
        }

        if (start >= p || (size_t) (p - start) < w->min
            || (size_t) (p - start) > w->max
            || !ts_names_has(w->wanted, (const char *) start, p - start))
        {
            continue;
        }

        /* the word as a string value: the bytes between its "quotes" */
        word.off = (size_t) (start - (const unsigned char *) buf) - 1;
        word.len = (size_t) (p - start) + 2;

        if (ts_names_add(w->named, buf, &word) != 0) {
            return -1;
        }
    }

    return 0;
}


/*
 * The text of a JSON string outside its <system-reminder> sections: a
 * client injects those on every turn (Claude Code's list of the tools it
 * could defer, its agent types), and they record nothing the
 * conversation found.
 */
static int
ts_history_text(ts_wanted_t *w, const char *buf, const ts_val_t *s)
{
    static const char   open[] = "<system-reminder>";
    static const char   close[] = "</system-reminder>";
    const char         *p, *end, *tag;

    p = buf + s->off + 1;
    end = buf + s->off + s->len - 1;

    while (p < end) {
        tag = ts_find(p, end - p, open, sizeof(open) - 1);

        if (ts_history_words(w, buf, p, tag ? tag : end) != 0) {
            return -1;
        }

        tag = tag ? ts_find(tag, end - tag, close, sizeof(close) - 1)
                  : NULL;
        if (tag == NULL) {
            break;
        }

        p = tag + sizeof(close) - 1;
    }

    return 0;
}


/*
 * A compaction leaves no search result behind, only the summary, which
 * names the tools found before.  The first message does not change
 * between compactions, so neither does what it names.
 */
int
ts_history_named(const ts_index_t *ix, const ts_names_t *wanted,
    ts_names_t *named)
{
    const ts_message_t  *m;
    const ts_block_t    *b;
    ts_val_t             text;
    ts_wanted_t           w;
    size_t               i;

    if (ix->nmessages == 0 || wanted->n == 0) {
        return 0;
    }

    m = &ix->messages[0];

    if (!ts_str_eq(ix->buf, &m->role, "user")) {
        return 0;
    }

    w.wanted = wanted;
    w.named = named;
    w.min = (size_t) -1;
    w.max = 0;

    for (i = 0; i < wanted->n; i++) {
        w.min = wanted->items[i].len < w.min ? wanted->items[i].len : w.min;
        w.max = wanted->items[i].len > w.max ? wanted->items[i].len : w.max;
    }

    if (m->content.kind == TS_STRING) {
        return ts_history_text(&w, ix->buf, &m->content);
    }

    for (i = m->block_first; i < m->block_end; i++) {
        b = &ix->blocks[i];

        if (b->parent < 0 && ts_str_eq(ix->buf, &b->type, "text")
            && ts_object_member(ix->buf, &b->elem, "text", &text) == TS_OK
            && text.kind == TS_STRING
            && ts_history_text(&w, ix->buf, &text) != 0)
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

    for (i = 0; i < ix->nblocks; i++) {
        if (ts_history_block(h, ix, &ix->blocks[i], tool) != 0) {
            return -1;
        }
    }

    ts_names_seal(&h->called);
    ts_names_seal(&h->hosted);
    ts_names_seal(&h->client);

    return 0;
}


size_t
ts_history_hosted_searches(const ts_index_t *ix)
{
    size_t               i, n;
    const ts_block_t    *b;
    const ts_message_t  *m;

    for (i = ix->nmessages; i > 0; i--) {
        m = &ix->messages[i - 1];

        if (ts_str_eq(ix->buf, &m->role, "assistant")) {
            break;
        }
    }

    if (i == 0) {
        return 0;
    }

    n = 0;

    for (i = m->block_first; i < m->block_end; i++) {
        b = &ix->blocks[i];

        if (ts_str_eq(ix->buf, &b->type, "server_tool_use")
            && ts_history_is_hosted(ix, b))
        {
            n++;
        }
    }

    return n;
}


void
ts_history_free(ts_history_t *h)
{
    ts_names_free(&h->called);
    ts_names_free(&h->hosted);
    ts_names_free(&h->client);
}
