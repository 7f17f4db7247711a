/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The scanner's steps (RFC 8259 grammar, escapes included; UTF-8 inside
 * strings is not decoded), shared by the schema-free scanner
 * (ts_json.c) and the Messages index (messages/ts_index.c), which read
 * a body through them: each includes them, so that they inline into
 * their callers as before.  Values a caller does not read are skipped by
 * an iterative loop, so depth costs no C stack.
 */

#ifndef TS_SCAN_H
#define TS_SCAN_H

#include <stdlib.h>
#include <string.h>

#if (defined __SSE2__ && defined __GNUC__)
#include <emmintrin.h>
#define TS_HAVE_SSE2  1
#endif

#include "scan/ts_buf.h"
#include "scan/ts_json.h"
#include "scan/ts_str.h"
#include "scan/ts_strmap.h"


/* a step that a file including these may not call */
#define TS_STEP  __attribute__((unused))


/*
 * The steps the scanner takes at every token: inlined into each caller,
 * which gcc does not do by itself for functions called from several
 * places (12 % fewer instructions on the recorded request).
 */
#define TS_HOT  inline __attribute__((always_inline))


typedef struct {
    const unsigned char  *start;
    const unsigned char  *p;
    const unsigned char  *end;
    unsigned              depth;
    ts_status_t           err;
    struct ts_index_s    *ix;       /* the index a scan builds */
    ts_strmap_t          *map;      /* strings by their quotes, or NULL */
} ts_scan_t;


/*
 * Keys read inside objects, matched after escape decoding; where a table
 * reads an object into an item, at is where the value goes in the item,
 * a ts_val_t, or a ts_member_t (key and value) when member is set.
 */
typedef struct {
    const char  *name;
    size_t       len;
    int          id;
    size_t       at;
    int          member;
} ts_key_t;

#define TS_KEY(name, id)  { name, sizeof(name) - 1, id, 0, 0 }


/*
 * A reader of one member's value in ts_document_read(): key is its index
 * in the keys; read leaves s after the value it read into v (1), leaves
 * it to the scan (0), or fails (-1).  A dialect reads its tools array so:
 * recalled from memory instead of crossed byte by byte.
 */
struct ts_member_reader_s {
    size_t    key;
    int     (*read)(ts_scan_t *s, ts_val_t *v, void *data);
    void     *data;
};


/* 1 for bytes that end the fast path inside a string */
static const unsigned char  ts_str_stop[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,     /* '"' */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0      /* '\\' */
};


static TS_STEP int
ts_fail(ts_scan_t *s, ts_status_t st)
{
    if (s->err == TS_OK) {
        s->err = st;
    }

    return -1;
}


static TS_STEP void
ts_ws_run(ts_scan_t *s)
{
    while (s->p < s->end
           && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r'
               || *s->p == '\t'))
    {
        s->p++;
    }
}


/* compact JSON has no blanks: a byte above ' ' ends the test inline */
static inline void
ts_ws(ts_scan_t *s)
{
    if (s->p < s->end && *s->p > ' ') {
        return;
    }

    ts_ws_run(s);
}


static TS_STEP int
ts_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}


/*
 * The first byte from p on that ends the fast path, or end.  Strings are
 * most of a conversation's bytes, so with SSE2 sixteen bytes are tested
 * at once: a quote, a backslash, or a control byte (at most 0x1f).
 */
static TS_STEP const unsigned char *
ts_str_run(const unsigned char *p, const unsigned char *end)
{
#ifdef TS_HAVE_SSE2
    __m128i   x, quote, bslash, ctl;
    unsigned  mask;

    quote = _mm_set1_epi8('"');
    bslash = _mm_set1_epi8('\\');
    ctl = _mm_set1_epi8(0x1f);

    while (end - p >= 16) {
        x = _mm_loadu_si128((const __m128i *) p);
        /* quotes, backslashes, control bytes and bytes over 0x7f */
        mask = (unsigned) _mm_movemask_epi8(
                   _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote),
                                             _mm_cmpeq_epi8(x, bslash)),
                                _mm_or_si128(_mm_cmpeq_epi8(
                                                 _mm_max_epu8(x, ctl), ctl),
                                             x)));

        if (mask) {
            return p + __builtin_ctz(mask);
        }

        p += 16;
    }
#endif

    while (p < end && !ts_str_stop[*p] && *p < 0x80) {
        p++;
    }

    return p;
}


/* a string crossed by the map: its bytes were checked when it was made */
static TS_HOT int
ts_string_mapped(ts_scan_t *s, ts_val_t *v)
{
    size_t  open, close;

    open = s->p - s->start;
    close = ts_strmap_quote(s->map, open + 1);

    if (close == s->map->len
        || (s->map->bad > open && s->map->bad < close))
    {
        return ts_fail(s, TS_ERR_SYNTAX);
    }

    if (v) {
        v->off = open;
        v->len = close + 1 - open;
        v->kind = TS_STRING;
        v->esc = ts_strmap_has_backslash(s->map, open + 1, close);
    }

    s->p = s->start + close + 1;
    return 0;
}


/* a string read byte by byte, where there is no map */
static TS_STEP int
ts_string_bytes(ts_scan_t *s, ts_val_t *v)
{
    const unsigned char  *p, *end;
    unsigned char         esc;
    size_t                n;

    p = s->p + 1;
    end = s->end;
    esc = 0;

    for ( ;; ) {
        p = ts_str_run(p, end);

        if (p >= end || *p < 0x20) {
            return ts_fail(s, TS_ERR_SYNTAX);
        }

        if (*p == '"') {
            break;
        }

        if (*p >= 0x80) {
            n = ts_utf8_seq(p, (size_t) (end - p));

            if (n == 0) {
                return ts_fail(s, TS_ERR_SYNTAX);
            }

            p += n;
            continue;
        }

        /* backslash */
        esc = 1;
        if (end - p < 2) {
            return ts_fail(s, TS_ERR_SYNTAX);
        }

        switch (p[1]) {
        case '"': case '\\': case '/': case 'b':
        case 'f': case 'n': case 'r': case 't':
            p += 2;
            break;

        case 'u':
            if (end - p < 6 || !ts_hex(p[2]) || !ts_hex(p[3])
                || !ts_hex(p[4]) || !ts_hex(p[5]))
            {
                return ts_fail(s, TS_ERR_SYNTAX);
            }
            p += 6;
            break;

        default:
            return ts_fail(s, TS_ERR_SYNTAX);
        }
    }

    if (v) {
        v->off = s->p - s->start;
        v->len = p + 1 - s->p;
        v->kind = TS_STRING;
        v->esc = esc;
    }

    s->p = p + 1;
    return 0;
}


/*
 * s->p at the opening quote; on success s->p is past the closing quote.
 * Inline: the scanner crosses a string at nearly every token.
 */
static TS_HOT int
ts_string(ts_scan_t *s, ts_val_t *v)
{
    return s->map ? ts_string_mapped(s, v) : ts_string_bytes(s, v);
}


static TS_STEP int
ts_digits(ts_scan_t *s)
{
    const unsigned char  *p;

    p = s->p;

    while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
        s->p++;
    }

    return s->p > p ? 0 : ts_fail(s, TS_ERR_SYNTAX);
}


static TS_STEP int
ts_number(ts_scan_t *s)
{
    if (*s->p == '-') {
        s->p++;
    }

    if (s->p < s->end && *s->p == '0') {
        s->p++;

    } else if (ts_digits(s) != 0) {
        return -1;
    }

    if (s->p < s->end && *s->p == '.') {
        s->p++;
        if (ts_digits(s) != 0) {
            return -1;
        }
    }

    if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
        s->p++;
        if (s->p < s->end && (*s->p == '+' || *s->p == '-')) {
            s->p++;
        }
        if (ts_digits(s) != 0) {
            return -1;
        }
    }

    return 0;
}


static TS_STEP int
ts_literal(ts_scan_t *s, const char *lit, size_t n)
{
    if ((size_t) (s->end - s->p) < n || memcmp(s->p, lit, n) != 0) {
        return ts_fail(s, TS_ERR_SYNTAX);
    }

    s->p += n;
    return 0;
}


/* scalar at s->p; returns its kind or -1 */
static TS_STEP int
ts_scalar(ts_scan_t *s)
{
    switch (*s->p) {
    case '"':
        return ts_string(s, NULL) == 0 ? TS_STRING : -1;
    case 't':
        return ts_literal(s, "true", 4) == 0 ? TS_TRUE : -1;
    case 'f':
        return ts_literal(s, "false", 5) == 0 ? TS_FALSE : -1;
    case 'n':
        return ts_literal(s, "null", 4) == 0 ? TS_NULL : -1;
    default:
        if (*s->p == '-' || (*s->p >= '0' && *s->p <= '9')) {
            return ts_number(s) == 0 ? TS_NUMBER : -1;
        }
        return ts_fail(s, TS_ERR_SYNTAX);
    }
}


/* ws, a key string, ws, ':' and ws */
static TS_HOT int
ts_key(ts_scan_t *s, ts_val_t *key)
{
    ts_ws(s);

    if (s->p >= s->end || *s->p != '"' || ts_string(s, key) != 0) {
        return ts_fail(s, TS_ERR_SYNTAX);
    }

    ts_ws(s);

    if (s->p >= s->end || *s->p != ':') {
        return ts_fail(s, TS_ERR_SYNTAX);
    }

    s->p++;
    ts_ws(s);

    return 0;
}


/*
 * Skips any value at s->p.  Open containers are counted, not stacked:
 * the kind of each open container is kept in a bit array.
 */
static TS_STEP int
ts_skip(ts_scan_t *s, ts_val_t *v)
{
    unsigned char         stack[TS_MAX_DEPTH / 8 + 1];
    unsigned              d, base, obj;
    const unsigned char  *from;
    int                   kind, rc;

    base = s->depth;
    d = 0;
    from = s->p;
    kind = TS_NONE;

value:

    if (s->p >= s->end) {
        return ts_fail(s, TS_ERR_SYNTAX);
    }

    if (*s->p == '{' || *s->p == '[') {
        if (base + d + 1 > TS_MAX_DEPTH) {
            return ts_fail(s, TS_ERR_DEPTH);
        }

        obj = (*s->p == '{');
        if (d == 0) {
            kind = obj ? TS_OBJECT : TS_ARRAY;
        }

        if (obj) {
            stack[d >> 3] |= (unsigned char) (1u << (d & 7));
        } else {
            stack[d >> 3] &= (unsigned char) ~(1u << (d & 7));
        }

        d++;
        s->p++;
        ts_ws(s);

        if (s->p < s->end && *s->p == (obj ? '}' : ']')) {
            s->p++;
            d--;
            goto next;
        }

        if (obj && ts_key(s, NULL) != 0) {
            return -1;
        }

        goto value;
    }

    rc = ts_scalar(s);
    if (rc < 0) {
        return -1;
    }

    if (d == 0) {
        kind = rc;
    }

next:

    if (d == 0) {
        if (v) {
            v->off = from - s->start;
            v->len = s->p - from;
            v->kind = (uint8_t) kind;
            v->esc = 0;
        }
        return 0;
    }

    obj = stack[(d - 1) >> 3] & (1u << ((d - 1) & 7));
    ts_ws(s);

    if (s->p >= s->end) {
        return ts_fail(s, TS_ERR_SYNTAX);
    }

    if (*s->p == ',') {
        s->p++;
        ts_ws(s);

        if (obj && ts_key(s, NULL) != 0) {
            return -1;
        }

        goto value;
    }

    if (*s->p != (obj ? '}' : ']')) {
        return ts_fail(s, TS_ERR_SYNTAX);
    }

    s->p++;
    d--;
    goto next;
}


/*
 * The entry of keys for key, or NULL.  Keys are compared by length and
 * first byte before their bytes; an escaped key is decoded first, its raw
 * length tells nothing.
 */
static TS_STEP const ts_key_t *
ts_key_find(const char *buf, const ts_val_t *key, const ts_key_t *keys)
{
    const char  *p;
    size_t       len;

    p = buf + key->off + 1;
    len = key->len - 2;

    for ( /* void */ ; keys->name; keys++) {
        if (key->esc ? ts_str_eq(buf, key, keys->name)
                     : len == keys->len && *p == *keys->name
                       && memcmp(p, keys->name, len) == 0)
        {
            return keys;
        }
    }

    return NULL;
}


/*
 * Container iteration used by the structured parse: open, then a
 * member or element, then "more or end".  Return 1 at the end.
 */
static TS_HOT int
ts_open(ts_scan_t *s, unsigned char open)
{
    if (s->p >= s->end) {
        return ts_fail(s, TS_ERR_SYNTAX);
    }

    /* another valid value is a type error; an invalid one, syntax */
    if (*s->p != open) {
        return ts_skip(s, NULL) == 0 ? ts_fail(s, TS_ERR_TYPE) : -1;
    }

    if (++s->depth > TS_MAX_DEPTH) {
        return ts_fail(s, TS_ERR_DEPTH);
    }

    s->p++;
    ts_ws(s);

    if (s->p < s->end && *s->p == (open == '{' ? '}' : ']')) {
        s->p++;
        s->depth--;
        return 1;
    }

    return 0;
}


static TS_HOT int
ts_more(ts_scan_t *s, unsigned char close)
{
    ts_ws(s);

    if (s->p < s->end && *s->p == ',') {
        s->p++;
        ts_ws(s);
        return 0;
    }

    if (s->p < s->end && *s->p == close) {
        s->p++;
        s->depth--;
        return 1;
    }

    return ts_fail(s, TS_ERR_SYNTAX);
}


/* a value for a read key: any JSON value, remembered */
static TS_STEP int
ts_member_value(ts_scan_t *s, ts_val_t *v)
{
    if (s->p < s->end && *s->p == '"') {
        return ts_string(s, v);
    }

    return ts_skip(s, v);
}


/*
 * Element n of a growing array, zeroed.  Only the element handed out is
 * cleared: the spare capacity stays untouched, so its pages are never
 * faulted in when the array ends up shorter.
 */
static TS_STEP void *
ts_grow(ts_scan_t *s, void **arr, size_t n, size_t *cap, size_t size)
{
    void  *p;

    if (n >= *cap) {
        p = ts_array_grow(*arr, cap, n + 1, size, 16);
        if (p == NULL) {
            ts_fail(s, TS_ERR_NOMEM);
            return NULL;
        }

        *arr = p;
    }

    p = (char *) *arr + n * size;
    memset(p, 0, size);

    return p;
}

#endif /* TS_SCAN_H */
