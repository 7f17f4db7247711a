/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

#include "ts_catalog.h"
#include "ts_lexicon.h"
#include "ts_names.h"
#include "ts_policy.h"


#define TS_MCP_PREFIX  "mcp__"


/* ASCII lowercase in place; returns the number of words */
static uint32_t
ts_lower_count(char *p, size_t len)
{
    uint32_t  words;
    size_t    i;
    int       in, w;

    for (i = 0, words = 0, in = 0; i < len; i++) {
        p[i] = ts_ascii_lower(p[i]);
        w = ts_ascii_alnum((unsigned char) p[i]);
        words += (uint32_t) (w && !in);
        in = w;
    }

    return words;
}


typedef struct {
    ts_catalog_t   *c;
    size_t          text_cap;
    size_t          parts_cap;
} ts_builder_t;


static ts_span_t
ts_put(ts_builder_t *b, const char *p, size_t len)
{
    ts_span_t  s;

    s.off = (uint32_t) b->c->text_len;
    s.len = (uint32_t) len;
    memcpy(b->c->text + b->c->text_len, p, len);
    b->c->text_len += len;

    return s;
}


/*
 * "mcp__slack__send_message" -> "slack send message";
 * "NotebookEdit" -> "notebook edit": underscores and lower-to-upper
 * transitions separate parts (seed 000, parseToolName).
 */
static void
ts_put_parts(ts_builder_t *b, ts_entry_t *e, const char *s, size_t len)
{
    ts_catalog_t  *c;
    ts_span_t     *part;
    size_t         i;
    unsigned char  ch;
    int            open;

    c = b->c;
    e->words.off = (uint32_t) c->text_len;
    e->part_first = (uint32_t) c->nparts;
    part = NULL;
    open = 0;

    for (i = 0; i < len; i++) {
        ch = (unsigned char) s[i];

        if (ch == '_' || ch == ' ') {
            open = 0;
            continue;
        }

        if (open && ts_ascii_upper(ch) && s[i - 1] >= 'a' && s[i - 1] <= 'z')
        {
            open = 0;
        }

        if (!open) {
            if (c->nparts > e->part_first) {
                c->text[c->text_len++] = ' ';
            }

            part = &c->parts[c->nparts++];
            part->off = (uint32_t) c->text_len;
            part->len = 0;
            open = 1;
        }

        c->text[c->text_len++] = ts_ascii_lower((char) ch);
        part->len++;
    }

    e->nparts = (uint32_t) c->nparts - e->part_first;
    e->words.len = (uint32_t) c->text_len - e->words.off;
}


static int
ts_put_desc(ts_builder_t *b, ts_entry_t *e, const char *buf,
    const ts_val_t *v)
{
    ts_catalog_t  *c;
    size_t         n;

    c = b->c;
    e->desc.off = (uint32_t) c->text_len;

    if (v->kind != TS_STRING) {
        return 0;
    }

    n = ts_str_decode(buf, v, c->text + c->text_len,
                      b->text_cap - c->text_len);
    if (n == (size_t) -1) {
        return -1;
    }

    e->desc.len = (uint32_t) n;
    e->desc_words = ts_lower_count(c->text + c->text_len, n);
    c->text_len += n;

    return 0;
}


static void
ts_put_hint(ts_builder_t *b, ts_entry_t *e, const char *phrase)
{
    e->hint = ts_put(b, phrase, phrase ? strlen(phrase) : 0);
    e->hint_words = ts_lower_count(b->c->text + e->hint.off, e->hint.len);
}


static int
ts_put_tool(ts_builder_t *b, const ts_index_t *ix, const ts_tool_t *t,
    int pooled, const char *phrase)
{
    ts_entry_t   *e;
    const char   *name, *bare;
    char          tmp[TS_NAME_MAX];
    size_t        len, blen;

    name = ts_str_view(ix->buf, &t->name, tmp, sizeof(tmp), &len);
    if (name == NULL) {
        return 0;
    }

    e = &b->c->tools[b->c->ntools++];
    memset(e, 0, sizeof(ts_entry_t));
    e->mcp = ts_name_is_mcp(name, len);
    e->pooled = pooled;

    bare = e->mcp ? name + sizeof(TS_MCP_PREFIX) - 1 : name;
    blen = len - (size_t) (bare - name);

    e->name = ts_put(b, name, len);
    e->full = ts_put(b, bare, blen);
    ts_lower_count(b->c->text + e->full.off, blen);
    ts_put_parts(b, e, bare, blen);
    ts_put_hint(b, e, phrase);

    if (ts_put_desc(b, e, ix->buf, &t->description) != 0) {
        return -1;
    }

    b->c->npooled += pooled;

    return 0;
}


static void
ts_catalog_averages(ts_catalog_t *c)
{
    double   words, desc, hint;
    size_t   i;

    words = desc = hint = 0;

    for (i = 0; i < c->ntools; i++) {
        if (c->tools[i].pooled) {
            words += c->tools[i].nparts;
            desc += c->tools[i].desc_words;
            hint += c->tools[i].hint_words;
        }
    }

    if (c->npooled > 0) {
        c->avg_words = words / (double) c->npooled;
        c->avg_desc = desc / (double) c->npooled;
        c->avg_hint = hint / (double) c->npooled;
    }
}


/* the hint phrase of a tool, or NULL */
static const char *
ts_hint_of(const ts_index_t *ix, const ts_tool_t *t, const ts_hints_t *h)
{
    char         tmp[TS_NAME_MAX];
    const char  *name;
    size_t       len;
    int          k;

    if (h == NULL || h->names == NULL) {
        return NULL;
    }

    name = ts_str_view(ix->buf, &t->name, tmp, sizeof(tmp), &len);
    k = name ? ts_match_first(h->names, name, len) : -1;

    return k >= 0 ? h->phrases[k] : NULL;
}


int
ts_catalog_build(ts_catalog_t *c, const ts_index_t *ix,
    const unsigned char *pool, const ts_hints_t *hints)
{
    ts_builder_t   b;
    const char   **phrase;
    size_t         i, n;

    memset(c, 0, sizeof(ts_catalog_t));
    b.c = c;
    b.text_cap = 0;
    b.parts_cap = 0;
    n = ix->ntools;

    phrase = calloc(n ? n : 1, sizeof(char *));
    if (phrase == NULL) {
        return -1;
    }

    /* decoding never lengthens a string: the raw sizes bound the text */
    for (i = 0; i < n; i++) {
        phrase[i] = ts_hint_of(ix, &ix->tools[i], hints);
        b.text_cap += 4 * ix->tools[i].name.len + ix->tools[i].description.len
                      + (phrase[i] ? strlen(phrase[i]) : 0);
        b.parts_cap += ix->tools[i].name.len;
    }

    c->text = malloc(b.text_cap ? b.text_cap : 1);
    c->parts = malloc((b.parts_cap ? b.parts_cap : 1) * sizeof(ts_span_t));
    c->tools = malloc((n ? n : 1) * sizeof(ts_entry_t));

    if (c->text == NULL || c->parts == NULL || c->tools == NULL) {
        free(phrase);
        ts_catalog_free(c);
        return -1;
    }

    for (i = 0; i < n; i++) {
        if (ix->tools[i].name.kind == TS_STRING
            && ts_put_tool(&b, ix, &ix->tools[i], pool ? pool[i] : 1,
                           phrase[i]) != 0)
        {
            free(phrase);
            ts_catalog_free(c);
            return -1;
        }
    }

    free(phrase);
    ts_catalog_averages(c);

    return 0;
}


void
ts_catalog_free(ts_catalog_t *c)
{
    free(c->text);
    free(c->parts);
    free(c->tools);
    memset(c, 0, sizeof(ts_catalog_t));
}
