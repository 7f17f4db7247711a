/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

#if (defined __SSE2__ && defined __GNUC__)
#include <emmintrin.h>
#define TS_HAVE_SSE2  1
#endif

#include "search/ts_catalog.h"
#include "scan/ts_str.h"
#include "messages/ts_names.h"
#include "rewrite/ts_policy.h"
#include "search/ts_starts.h"


#define TS_MCP_PREFIX  "mcp__"


#ifdef TS_HAVE_SSE2

/* 16 bytes loaded from ts_last + k are 1 in their last k, 0 before */
static const unsigned char  ts_last[32] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1
};


/*
 * ASCII capitals of 16 bytes get 0x20; returns the spaces among those
 * whose byte of count is 1, summed in two 64-bit halves (psadbw)
 */
static __m128i
ts_lower16(char *dst, const char *src, __m128i count)
{
    __m128i  x, up;

    x = _mm_loadu_si128((const __m128i *) (const void *) src);
    up = _mm_cmplt_epi8(_mm_add_epi8(x, _mm_set1_epi8((char) (128 - 'A'))),
                        _mm_set1_epi8((char) (26 - 128)));
    _mm_storeu_si128((__m128i *) (void *) dst,
                     _mm_or_si128(x, _mm_and_si128(up, _mm_set1_epi8(0x20))));

    return _mm_sad_epu8(_mm_and_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(' ')),
                                      count),
                        _mm_setzero_si128());
}

#endif


/*
 * Copies src[0..len) to dst ASCII-lowercased (dst may be src); returns
 * the number of words, counted as spaces plus one (BM25 only needs
 * lengths in proportion)
 */
static uint32_t
ts_lower_copy(char *dst, const char *src, size_t len)
{
    uint32_t  spaces;
    size_t    i;
#ifdef TS_HAVE_SSE2
    __m128i   sum;
#endif

    spaces = 0;
    i = 0;

#ifdef TS_HAVE_SSE2
    sum = _mm_setzero_si128();

    for ( /* void */ ; i + 16 <= len; i += 16) {
        sum = _mm_add_epi64(sum, ts_lower16(dst + i, src + i,
                                            _mm_set1_epi8(1)));
    }

    /* the last 16 bytes again: lowercasing twice changes nothing */
    if (len >= 16 && i < len) {
        sum = _mm_add_epi64(sum, ts_lower16(dst + len - 16, src + len - 16,
                                 _mm_loadu_si128((const __m128i *)
                                     (const void *) (ts_last + (len - i)))));
        i = len;
    }

    spaces = (uint32_t) (_mm_cvtsi128_si32(sum)
                         + _mm_cvtsi128_si32(_mm_srli_si128(sum, 8)));
#endif

    for ( /* void */ ; i < len; i++) {
        spaces += src[i] == ' ';
        dst[i] = ts_ascii_lower(src[i]);
    }

    return len ? spaces + 1 : 0;
}


typedef struct {
    ts_catalog_t   *c;
    size_t          text_cap;
} ts_builder_t;


/* a field of the searchable text at *end, closed by a NUL */
static ts_span_t
ts_put_field(ts_builder_t *b, size_t *end, const char *p, size_t len,
    uint32_t *words)
{
    ts_span_t  s;

    s.off = (uint32_t) *end;
    s.len = (uint32_t) len;
    *words = ts_lower_copy(b->c->text + s.off, p, len);
    *end += len;
    b->c->text[(*end)++] = '\0';

    return s;
}


/* the separators, capitals and small letters of a name's bytes, as bits */
typedef struct {
    uint64_t  sep;
    uint64_t  upper;
    uint64_t  lower;
} ts_classes_t;


#ifdef TS_HAVE_SSE2

/* 1 for the bytes of x in [lo, lo + n): x + (128 - lo) < n - 128, signed */
static __m128i
ts_in_range(__m128i x, char lo, int n)
{
    return _mm_cmplt_epi8(_mm_add_epi8(x, _mm_set1_epi8((char) (128 - lo))),
                          _mm_set1_epi8((char) (n - 128)));
}

#endif


/* the classes of p[0..64), which must be readable */
static void
ts_classes64(const char *p, ts_classes_t *k)
{
#ifdef TS_HAVE_SSE2
    __m128i  x, sep;
    int      i;

    memset(k, 0, sizeof(ts_classes_t));

    for (i = 0; i < TS_CHUNK; i += 16) {
        x = _mm_loadu_si128((const __m128i *) (const void *) (p + i));
        sep = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('_')),
                                        _mm_cmpeq_epi8(x, _mm_set1_epi8(' '))),
                           _mm_cmpeq_epi8(x, _mm_setzero_si128()));
        k->sep |= (uint64_t) (unsigned) _mm_movemask_epi8(sep) << i;
        k->upper |= (uint64_t) (unsigned) _mm_movemask_epi8(
                        ts_in_range(x, 'A', 26)) << i;
        k->lower |= (uint64_t) (unsigned) _mm_movemask_epi8(
                        ts_in_range(x, 'a', 26)) << i;
    }
#else
    unsigned char  c;
    int            i;

    memset(k, 0, sizeof(ts_classes_t));

    for (i = 0; i < TS_CHUNK; i++) {
        c = (unsigned char) p[i];
        k->sep |= (uint64_t) (c == '_' || c == ' ' || c == '\0') << i;
        k->upper |= (uint64_t) (c >= 'A' && c <= 'Z') << i;
        k->lower |= (uint64_t) (c >= 'a' && c <= 'z') << i;
    }
#endif
}


/* a part of the name, copied from its lowercase spelling */
static void
ts_put_part(ts_builder_t *b, ts_entry_t *e, const char *low, size_t len)
{
    ts_catalog_t  *c;
    ts_span_t     *part;

    c = b->c;

    if (c->nparts > e->part_first) {
        c->text[c->text_len++] = ' ';
    }

    part = &c->parts[c->nparts++];
    part->off = (uint32_t) c->text_len;
    part->len = (uint32_t) len;
    memcpy(c->text + c->text_len, low, len);
    c->text_len += len;
}


/*
 * "mcp__slack__send_message" -> "slack send message";
 * "NotebookEdit" -> "notebook edit": underscores and lower-to-upper
 * transitions separate parts (docs/spec/search.md).  A part starts
 * after a separator or at a capital after a small letter, and ends at
 * the next start or separator; its bytes come from low, the name
 * lowercased.
 */
static void
ts_put_parts(ts_builder_t *b, ts_entry_t *e, const char *s, const char *low,
    size_t len)
{
    ts_classes_t  k;
    const char   *p;
    char          tail[TS_CHUNK];
    uint64_t      starts, ends, valid, after_sep, after_lower;
    size_t        base, n, at, open;

    e->words.off = (uint32_t) b->c->text_len;
    e->part_first = (uint32_t) b->c->nparts;
    after_sep = 1;
    after_lower = 0;
    open = len;

    for (base = 0; base < len; base += TS_CHUNK) {
        n = len - base;
        p = s + base;

        if (n < TS_CHUNK) {
            memset(tail, 0, sizeof(tail));
            memcpy(tail, p, n);
            p = tail;
        }

        ts_classes64(p, &k);
        valid = n < TS_CHUNK ? ((uint64_t) 1 << n) - 1 : ~(uint64_t) 0;

        starts = (~k.sep & ((k.sep << 1) | after_sep))
                 | (k.upper & ((k.lower << 1) | after_lower));
        ends = k.sep & ~((k.sep << 1) | after_sep);
        after_sep = k.sep >> (TS_CHUNK - 1);
        after_lower = k.lower >> (TS_CHUNK - 1);

        for (ends = (starts | ends) & valid; ends; ends &= ends - 1) {
            at = base + ts_ctz(ends);

            if (open < len) {
                ts_put_part(b, e, low + open, at - open);
            }

            open = starts & TS_BIT(at - base) ? at : len;
        }
    }

    if (open < len) {
        ts_put_part(b, e, low + open, len - open);
    }

    e->nparts = (uint32_t) b->c->nparts - e->part_first;
    e->words.len = (uint32_t) b->c->text_len - e->words.off;
    b->c->text[b->c->text_len++] = '\0';
}


static void
ts_put_desc(ts_builder_t *b, ts_entry_t *e, const char *buf,
    const ts_val_t *v)
{
    ts_catalog_t  *c;
    size_t         n;

    c = b->c;
    e->desc.off = (uint32_t) c->text_len;
    n = 0;

    if (v->kind == TS_STRING && !v->esc) {
        n = v->len - 2;
        e->desc_words = ts_lower_copy(c->text + c->text_len,
                                      buf + v->off + 1, n);

    } else if (v->kind == TS_STRING) {
        /* fits: decoding never lengthens a string */
        n = ts_str_decode(buf, v, c->text + c->text_len,
                          b->text_cap - c->text_len);
        e->desc_words = ts_lower_copy(c->text + c->text_len,
                                      c->text + c->text_len, n);
    }

    e->desc.len = (uint32_t) n;
    c->text_len += n;
    c->text[c->text_len++] = '\0';
}


/*
 * The input schema is read where it is, in the request body, ignoring
 * case: it is the bulk of a catalogue and only BM25 reads it.  Its
 * length, for BM25's normalisation, is counted in bytes.
 */
static void
ts_put_schema(ts_entry_t *e, const ts_val_t *v)
{
    e->schema.off = (uint32_t) v->off;
    e->schema.len = (uint32_t) v->len;
    e->schema_words = (uint32_t) v->len;
}


static void
ts_put_name(ts_catalog_t *c, ts_entry_t *e, const char *name, size_t len)
{
    e->name.off = (uint32_t) c->names_len;
    e->name.len = (uint32_t) len;
    memcpy(c->names + c->names_len, name, len);
    c->names_len += len;
}


static void
ts_put_tool(ts_builder_t *b, const ts_index_t *ix, const ts_tool_t *t,
    int pooled, const char *phrase, int schemas)
{
    ts_catalog_t  *c;
    ts_entry_t    *e;
    const char    *name, *bare;
    char           tmp[TS_NAME_MAX];
    size_t         len, blen;
    uint32_t       words;

    name = ts_str_view(ix->buf, &t->name, tmp, sizeof(tmp), &len);
    if (name == NULL) {
        return;
    }

    c = b->c;
    e = &c->tools[c->ntools];
    memset(e, 0, sizeof(ts_entry_t));
    e->at = (uint32_t) (t - ix->tools);
    e->mcp = ts_name_is_mcp(name, len);
    ts_put_name(c, e, name, len);

    if (pooled) {
        e->pooled = 1;
        c->pool[c->npooled++] = (uint32_t) c->ntools;

        bare = e->mcp ? name + sizeof(TS_MCP_PREFIX) - 1 : name;
        blen = len - (size_t) (bare - name);

        e->full = ts_put_field(b, &c->full_len, bare, blen, &words);
        ts_put_parts(b, e, bare, ts_catalog_str(c, e->full), blen);
        e->hint = ts_put_field(b, &c->text_len, phrase ? phrase : "",
                               phrase ? strlen(phrase) : 0, &e->hint_words);
        ts_put_desc(b, e, ix->buf, &t->description);

        if (schemas) {
            ts_put_schema(e, &t->input_schema);
        }
    }

    c->ntools++;
}


static void
ts_catalog_averages(ts_catalog_t *c)
{
    double      words, desc, hint, schema;
    ts_entry_t *e;
    size_t      i;

    words = desc = hint = schema = 0;

    for (i = 0; i < c->npooled; i++) {
        e = &c->tools[c->pool[i]];
        words += e->nparts;
        desc += e->desc_words;
        hint += e->hint_words;
        schema += e->schema_words;
    }

    if (c->npooled > 0) {
        c->avg_words = words / (double) c->npooled;
        c->avg_desc = desc / (double) c->npooled;
        c->avg_hint = hint / (double) c->npooled;
        c->avg_schema = schema / (double) c->npooled;
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


/* what the catalogue's memory holds, each part aligned for its type */
typedef struct {
    size_t  text, names, parts, tools, pool, total;
} ts_layout_t;


static size_t
ts_align(size_t n)
{
    return (n + 7) & ~(size_t) 7;
}


static void
ts_layout(ts_layout_t *l, size_t text, size_t names, size_t parts, size_t n)
{
    l->tools = 0;
    l->parts = ts_align(n * sizeof(ts_entry_t));
    l->pool = l->parts + ts_align(parts * sizeof(ts_span_t));
    l->text = l->pool + ts_align(n * sizeof(uint32_t));
    /* word starts are found a chunk at a time */
    l->names = l->text + ts_align(text + TS_CHUNK);
    l->total = l->names + ts_align(names) + 8;
}


int
ts_catalog_build(ts_catalog_t *c, const ts_index_t *ix,
    const unsigned char *pool, const ts_hints_t *hints, int schemas)
{
    return ts_catalog_build_in(c, ix, pool, hints, schemas, NULL, 0);
}


int
ts_catalog_build_in(ts_catalog_t *c, const ts_index_t *ix,
    const unsigned char *pool, const ts_hints_t *hints, int schemas,
    void *mem, size_t size)
{
    ts_builder_t   b;
    ts_layout_t    l;
    const char   **phrase;
    char          *base;
    size_t         i, n, names_cap, parts_cap, full_cap;

    memset(c, 0, sizeof(ts_catalog_t));
    b.c = c;
    b.text_cap = 0;
    names_cap = 0;
    parts_cap = 0;
    full_cap = 0;
    n = ix->ntools;

    phrase = calloc(n ? n : 1, sizeof(char *));
    if (phrase == NULL) {
        return -1;
    }

    /*
     * decoding never lengthens a string: raw sizes bound the text (the
     * names region takes a name and a NUL, words at most twice a name,
     * and 3 NULs close the other fields); a name of len bytes has at
     * most len / 2 + 1 parts
     */
    for (i = 0; i < n; i++) {
        names_cap += ix->tools[i].name.len;

        if (pool == NULL || pool[i]) {
            phrase[i] = ts_hint_of(ix, &ix->tools[i], hints);
            parts_cap += ix->tools[i].name.len / 2 + 1;
            full_cap += ix->tools[i].name.len + 1;
            b.text_cap += 2 * ix->tools[i].name.len + 3
                          + ix->tools[i].description.len
                          + (phrase[i] ? strlen(phrase[i]) : 0);
        }
    }

    b.text_cap += full_cap;

    /* spans are 32-bit: far above any body the gateway reads */
    if (b.text_cap > UINT32_MAX || names_cap > UINT32_MAX
        || (schemas && ix->len > UINT32_MAX))
    {
        free(phrase);
        return -1;
    }

    ts_layout(&l, b.text_cap, names_cap, parts_cap, n);
    c->need = l.total;
    base = mem != NULL && size >= l.total ? mem : malloc(l.total);

    if (base == NULL) {
        free(phrase);
        return -1;
    }

    c->heap = base == mem ? NULL : base;
    c->tools = (ts_entry_t *) (void *) (base + l.tools);
    c->parts = (ts_span_t *) (void *) (base + l.parts);
    c->pool = (uint32_t *) (void *) (base + l.pool);
    c->text = base + l.text;
    c->names = base + l.names;
    c->schemas = schemas ? ix->buf : NULL;
    c->schemas_len = schemas ? ix->len : 0;
    c->text_len = full_cap;

    for (i = 0; i < n; i++) {
        if (ix->tools[i].name.kind == TS_STRING) {
            ts_put_tool(&b, ix, &ix->tools[i], pool == NULL || pool[i],
                        phrase[i], schemas);
        }
    }

    /* walks read a chunk at a time, past the names and the text */
    free(phrase);
    memset(c->text + c->full_len, 0, full_cap - c->full_len);
    memset(c->text + c->text_len, 0, TS_CHUNK);
    ts_catalog_averages(c);

    return 0;
}


void
ts_catalog_free(ts_catalog_t *c)
{
    free(c->heap);
    memset(c, 0, sizeof(ts_catalog_t));
}
