/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * One pass over the body: every byte is validated as JSON (RFC 8259
 * grammar, escapes included; UTF-8 inside strings is not decoded), and
 * only the members the policy reads are recorded.  Values the policy does
 * not read are skipped by an iterative loop, so depth costs no C stack.
 */

#include <stdlib.h>
#include <string.h>

#if (defined __SSE2__ && defined __GNUC__)
#include <emmintrin.h>
#define TS_HAVE_SSE2  1
#endif

#include "scan/ts_json.h"
#include "scan/ts_strmap.h"


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
    ts_index_t           *ix;
    ts_strmap_t          *map;      /* strings by their quotes, or NULL */
} ts_scan_t;


/* keys read inside objects, matched after escape decoding */
typedef struct {
    const char  *name;
    size_t       len;
    int          id;
} ts_key_t;

#define TS_KEY(name, id)  { name, sizeof(name) - 1, id }


enum {
    TS_K_NAME = 0, TS_K_TYPE, TS_K_DEFER, TS_K_CACHE, TS_K_ROLE,
    TS_K_CONTENT, TS_K_ID, TS_K_TOOL_USE_ID, TS_K_TOOL_NAME, TS_K_DESC,
    TS_K_SCHEMA, TS_K_CALLER
};


static const ts_key_t  ts_top_keys[] = {
    TS_KEY("model", TS_TOP_MODEL),
    TS_KEY("messages", TS_TOP_MESSAGES),
    TS_KEY("tools", TS_TOP_TOOLS),
    TS_KEY("system", TS_TOP_SYSTEM),
    TS_KEY("stream", TS_TOP_STREAM),
    TS_KEY("tool_choice", TS_TOP_TOOL_CHOICE),
    TS_KEY("anthropic_beta", TS_TOP_ANTHROPIC_BETA),
    TS_KEY("anthropic_version", TS_TOP_ANTHROPIC_VERSION),
    { NULL, 0, 0 }
};

static const ts_key_t  ts_tool_keys[] = {
    TS_KEY("name", TS_K_NAME),
    TS_KEY("type", TS_K_TYPE),
    TS_KEY("defer_loading", TS_K_DEFER),
    TS_KEY("cache_control", TS_K_CACHE),
    TS_KEY("description", TS_K_DESC),
    TS_KEY("input_schema", TS_K_SCHEMA),
    { NULL, 0, 0 }
};

static const ts_key_t  ts_message_keys[] = {
    TS_KEY("role", TS_K_ROLE),
    TS_KEY("content", TS_K_CONTENT),
    { NULL, 0, 0 }
};

static const ts_key_t  ts_block_keys[] = {
    TS_KEY("type", TS_K_TYPE),
    TS_KEY("name", TS_K_NAME),
    TS_KEY("tool_name", TS_K_TOOL_NAME),
    TS_KEY("id", TS_K_ID),
    TS_KEY("tool_use_id", TS_K_TOOL_USE_ID),
    TS_KEY("content", TS_K_CONTENT),
    TS_KEY("caller", TS_K_CALLER),
    { NULL, 0, 0 }
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


static int
ts_fail(ts_scan_t *s, ts_status_t st)
{
    if (s->err == TS_OK) {
        s->err = st;
    }

    return -1;
}


static void
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


static int
ts_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}


/*
 * The first byte from p on that ends the fast path, or end.  Strings are
 * most of a conversation's bytes, so with SSE2 sixteen bytes are tested
 * at once: a quote, a backslash, or a control byte (at most 0x1f).
 */
static const unsigned char *
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
static int
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


static int
ts_digits(ts_scan_t *s)
{
    const unsigned char  *p;

    p = s->p;

    while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
        s->p++;
    }

    return s->p > p ? 0 : ts_fail(s, TS_ERR_SYNTAX);
}


static int
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


static int
ts_literal(ts_scan_t *s, const char *lit, size_t n)
{
    if ((size_t) (s->end - s->p) < n || memcmp(s->p, lit, n) != 0) {
        return ts_fail(s, TS_ERR_SYNTAX);
    }

    s->p += n;
    return 0;
}


/* scalar at s->p; returns its kind or -1 */
static int
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
static int
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
 * Keys are compared by length and first byte before their bytes; an
 * escaped key is decoded first, its raw length tells nothing.
 */
static int
ts_key_id(const char *buf, const ts_val_t *key, const ts_key_t *keys)
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
            return keys->id;
        }
    }

    return -1;
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

    if (s->p >= s->end) {
        return ts_fail(s, TS_ERR_SYNTAX);
    }

    if (*s->p == ',') {
        s->p++;
        ts_ws(s);
        return 0;
    }

    if (*s->p == close) {
        s->p++;
        s->depth--;
        return 1;
    }

    return ts_fail(s, TS_ERR_SYNTAX);
}


/* a value for a read key: any JSON value, remembered */
static int
ts_member_value(ts_scan_t *s, ts_val_t *v)
{
    if (s->p < s->end && *s->p == '"') {
        return ts_string(s, v);
    }

    return ts_skip(s, v);
}


/* records a read key once; a second occurrence is a duplicate */
static int
ts_seen(ts_scan_t *s, unsigned *mask, int id)
{
    if (*mask & (1u << id)) {
        return ts_fail(s, TS_ERR_DUPLICATE);
    }

    *mask |= 1u << id;
    return 0;
}


/*
 * Element n of a growing array, zeroed.  Only the element handed out is
 * cleared: the spare capacity stays untouched, so its pages are never
 * faulted in when the array ends up shorter.
 */
static void *
ts_grow(ts_scan_t *s, void **arr, size_t n, size_t *cap, size_t size)
{
    size_t   ncap;
    void    *p;

    if (n >= *cap) {
        ncap = *cap ? *cap * 2 : 16;
        p = realloc(*arr, ncap * size);
        if (p == NULL) {
            ts_fail(s, TS_ERR_NOMEM);
            return NULL;
        }

        *arr = p;
        *cap = ncap;
    }

    p = (char *) *arr + n * size;
    memset(p, 0, size);

    return p;
}


static int
ts_expect_kind(ts_scan_t *s, const ts_val_t *v, int kind)
{
    return (v->kind == TS_NONE || v->kind == kind)
           ? 0 : ts_fail(s, TS_ERR_TYPE);
}


static void
ts_set_member(ts_member_t *m, const ts_val_t *key, const ts_val_t *v)
{
    m->key = *key;
    m->val = *v;
    m->off = key->off;
    m->len = v->off + v->len - key->off;
}


static int
ts_tool(ts_scan_t *s)
{
    ts_index_t  *ix;
    ts_tool_t   *t;
    ts_val_t     key, v;
    unsigned     seen;
    size_t       off;
    int          rc, id;

    ix = s->ix;
    t = ts_grow(s, (void **) &ix->tools, ix->ntools, &ix->caps[0],
                sizeof(ts_tool_t));
    if (t == NULL) {
        return -1;
    }

    off = s->p - s->start;
    seen = 0;

    rc = ts_open(s, '{');

    while (rc == 0) {
        if (ts_key(s, &key) != 0) {
            return -1;
        }

        id = ts_key_id(ix->buf, &key, ts_tool_keys);

        if (id < 0) {
            if (ts_skip(s, NULL) != 0) {
                return -1;
            }

        } else {
            if (ts_seen(s, &seen, id) != 0 || ts_member_value(s, &v) != 0) {
                return -1;
            }

            switch (id) {
            case TS_K_NAME:
                t->name = v;
                break;
            case TS_K_TYPE:
                t->type = v;
                break;
            case TS_K_DESC:
                t->description = v;
                break;
            case TS_K_SCHEMA:
                t->input_schema = v;
                break;
            case TS_K_DEFER:
                ts_set_member(&t->defer_loading, &key, &v);
                break;
            default:
                ts_set_member(&t->cache_control, &key, &v);
            }
        }

        rc = ts_more(s, '}');
    }

    if (rc < 0) {
        return -1;
    }

    if (ts_expect_kind(s, &t->name, TS_STRING) != 0
        || ts_expect_kind(s, &t->type, TS_STRING) != 0)
    {
        return -1;
    }

    t->elem.off = off;
    t->elem.len = s->p - s->start - off;
    t->elem.kind = TS_OBJECT;
    ix->ntools++;

    return 0;
}


static int ts_blocks(ts_scan_t *s, uint32_t msg, int32_t parent);


/* tool_result content blocks are indexed too, one level deep */
static int
ts_children(ts_scan_t *s, size_t self)
{
    ts_index_t  *ix;
    ts_block_t  *b;

    ix = s->ix;
    ix->blocks[self].child_first = (uint32_t) ix->nblocks;

    if (ts_blocks(s, ix->blocks[self].message, (int32_t) self) != 0) {
        return -1;
    }

    b = &ix->blocks[self];
    b->child_count = (uint32_t) (ix->nblocks - b->child_first);

    return 0;
}


static int
ts_is_result(const ts_index_t *ix, const ts_block_t *b)
{
    return b->parent < 0 && ts_str_eq(ix->buf, &b->type, "tool_result");
}


static int
ts_block_member(ts_scan_t *s, size_t self, const ts_val_t *key, int id,
    int *inline_children)
{
    ts_index_t  *ix;
    ts_block_t  *b;
    ts_val_t     v;

    ix = s->ix;
    b = &ix->blocks[self];

    /* "type" usually comes first: then children are read in place */
    if (id == TS_K_CONTENT && ts_is_result(ix, b)
        && s->p < s->end && *s->p == '[')
    {
        v.off = s->p - s->start;
        if (ts_children(s, self) != 0) {
            return -1;
        }

        v.len = s->p - s->start - v.off;
        v.kind = TS_ARRAY;
        v.esc = 0;
        ix->blocks[self].content = v;
        *inline_children = 1;

        return 0;
    }

    if (ts_member_value(s, &v) != 0) {
        return -1;
    }

    switch (id) {
    case TS_K_TYPE:
        b->type = v;
        break;
    case TS_K_NAME:
    case TS_K_TOOL_NAME:
        b->name = v;
        break;
    case TS_K_ID:
    case TS_K_TOOL_USE_ID:
        b->id = v;
        break;
    case TS_K_CALLER:
        ts_set_member(&b->caller, key, &v);
        break;
    default:
        b->content = v;
    }

    return 0;
}


static int
ts_block(ts_scan_t *s, uint32_t msg, int32_t parent)
{
    ts_index_t  *ix;
    ts_block_t  *b;
    ts_val_t     key;
    unsigned     seen;
    size_t       off, self;
    int          rc, id, done;

    ix = s->ix;
    b = ts_grow(s, (void **) &ix->blocks, ix->nblocks, &ix->caps[1],
                sizeof(ts_block_t));
    if (b == NULL) {
        return -1;
    }

    self = ix->nblocks++;
    b->message = msg;
    b->parent = parent;
    off = s->p - s->start;
    seen = 0;
    done = 0;

    rc = ts_open(s, '{');

    while (rc == 0) {
        if (ts_key(s, &key) != 0) {
            return -1;
        }

        id = ts_key_id(ix->buf, &key, ts_block_keys);

        if (id < 0) {
            rc = ts_skip(s, NULL);

        } else if (ts_seen(s, &seen, id) != 0) {
            return -1;

        } else {
            rc = ts_block_member(s, self, &key, id, &done);
        }

        if (rc != 0) {
            return -1;
        }

        rc = ts_more(s, '}');
    }

    if (rc < 0) {
        return -1;
    }

    b = &ix->blocks[self];
    b->elem.off = off;
    b->elem.len = s->p - s->start - off;
    b->elem.kind = TS_OBJECT;

    if (b->type.kind != TS_STRING) {
        return ts_fail(s, TS_ERR_TYPE);
    }

    /* "content" came before "type": read the children now */
    if (!done && b->content.kind == TS_ARRAY && ts_is_result(ix, b)) {
        const unsigned char  *save;

        save = s->p;
        s->p = s->start + b->content.off;
        s->depth++;

        if (ts_children(s, self) != 0) {
            return -1;
        }

        s->p = save;
        s->depth--;
    }

    return 0;
}


/* s->p at '[' of a content array */
static int
ts_blocks(ts_scan_t *s, uint32_t msg, int32_t parent)
{
    int  rc;

    rc = ts_open(s, '[');

    while (rc == 0) {
        if (ts_block(s, msg, parent) != 0) {
            return -1;
        }

        rc = ts_more(s, ']');
    }

    return rc < 0 ? -1 : 0;
}


static int
ts_message(ts_scan_t *s)
{
    ts_index_t    *ix;
    ts_message_t  *m;
    ts_val_t       key, v;
    unsigned       seen;
    size_t         self, off;
    int            rc, id;

    ix = s->ix;
    m = ts_grow(s, (void **) &ix->messages, ix->nmessages, &ix->caps[2],
                sizeof(ts_message_t));
    if (m == NULL) {
        return -1;
    }

    self = ix->nmessages++;
    off = s->p - s->start;
    seen = 0;

    rc = ts_open(s, '{');

    while (rc == 0) {
        if (ts_key(s, &key) != 0) {
            return -1;
        }

        id = ts_key_id(ix->buf, &key, ts_message_keys);

        if (id < 0) {
            rc = ts_skip(s, NULL);

        } else if (ts_seen(s, &seen, id) != 0) {
            return -1;

        } else if (id == TS_K_ROLE) {
            rc = ts_member_value(s, &v);
            ix->messages[self].role = v;

        } else if (s->p < s->end && *s->p == '[') {
            v.off = s->p - s->start;
            ix->messages[self].block_first = (uint32_t) ix->nblocks;
            rc = ts_blocks(s, (uint32_t) self, -1);
            v.len = s->p - s->start - v.off;
            v.kind = TS_ARRAY;
            v.esc = 0;
            ix->messages[self].content = v;

        } else {
            rc = ts_member_value(s, &v);
            ix->messages[self].content = v;
        }

        if (rc != 0) {
            return -1;
        }

        rc = ts_more(s, '}');
    }

    if (rc < 0) {
        return -1;
    }

    m = &ix->messages[self];
    m->elem.off = off;
    m->elem.len = s->p - s->start - off;
    m->elem.kind = TS_OBJECT;
    m->block_end = (uint32_t) ix->nblocks;
    if (m->content.kind != TS_ARRAY) {
        m->block_first = m->block_end;
    }

    if (ts_expect_kind(s, &m->role, TS_STRING) != 0
        || (m->content.kind != TS_NONE && m->content.kind != TS_STRING
            && m->content.kind != TS_ARRAY))
    {
        return ts_fail(s, TS_ERR_TYPE);
    }

    return 0;
}


/* the elements of an array, after ts_open's or ts_more's rc */
static int
ts_elements(ts_scan_t *s, int rc, int (*each)(ts_scan_t *))
{
    while (rc == 0) {
        if (each(s) != 0) {
            return -1;
        }

        rc = ts_more(s, ']');
    }

    return rc < 0 ? -1 : 0;
}


static void
ts_set_array(ts_scan_t *s, ts_val_t *v, size_t off)
{
    v->off = off;
    v->len = s->p - s->start - off;
    v->kind = TS_ARRAY;
    v->esc = 0;
}


/* an array member whose elements are parsed by each() */
static int
ts_array_of(ts_scan_t *s, ts_val_t *v, int (*each)(ts_scan_t *))
{
    size_t  off;

    off = s->p - s->start;

    if (ts_elements(s, ts_open(s, '['), each) != 0) {
        return -1;
    }

    ts_set_array(s, v, off);

    return 0;
}


void
ts_tool_parts(ts_tool_t *t, ts_parts_t *p)
{
    p->v[0] = &t->elem;
    p->v[1] = &t->name;
    p->v[2] = &t->type;
    p->v[3] = &t->description;
    p->v[4] = &t->input_schema;
    p->v[5] = &t->defer_loading.key;
    p->v[6] = &t->defer_loading.val;
    p->v[7] = &t->cache_control.key;
    p->v[8] = &t->cache_control.val;
    p->nv = 9;
    p->m[0] = &t->defer_loading;
    p->m[1] = &t->cache_control;
    p->nm = 2;
}


void
ts_message_parts(ts_message_t *m, ts_parts_t *p)
{
    p->v[0] = &m->elem;
    p->v[1] = &m->role;
    p->v[2] = &m->content;
    p->nv = 3;
    p->nm = 0;
}


void
ts_block_parts(ts_block_t *b, ts_parts_t *p)
{
    p->v[0] = &b->elem;
    p->v[1] = &b->type;
    p->v[2] = &b->name;
    p->v[3] = &b->id;
    p->v[4] = &b->content;
    p->v[5] = &b->caller.key;
    p->v[6] = &b->caller.val;
    p->nv = 7;
    p->m[0] = &b->caller;
    p->nm = 1;
}


static void
ts_tool_parts_of(void *item, ts_parts_t *p)
{
    ts_tool_parts(item, p);
}


static void
ts_message_parts_of(void *item, ts_parts_t *p)
{
    ts_message_parts(item, p);
}


static void
ts_block_parts_of(void *item, ts_parts_t *p)
{
    ts_block_parts(item, p);
}


/* an array of the index: its items' size and spans */
typedef struct {
    size_t    size;
    void    (*parts)(void *item, ts_parts_t *p);
} ts_list_kind_t;

static const ts_list_kind_t  ts_tools_list = {
    sizeof(ts_tool_t), ts_tool_parts_of
};

static const ts_list_kind_t  ts_messages_list = {
    sizeof(ts_message_t), ts_message_parts_of
};

static const ts_list_kind_t  ts_blocks_list = {
    sizeof(ts_block_t), ts_block_parts_of
};


/* moves the offsets n items hold from base from to base to */
static void
ts_items_shift(const ts_list_kind_t *k, void *items, size_t n, size_t from,
    size_t to)
{
    ts_parts_t  p;
    size_t      i, j;

    /* clients send an array where they sent it: nothing moves */
    if (from == to) {
        return;
    }

    for (i = 0; i < n; i++) {
        k->parts((char *) items + i * k->size, &p);

        for (j = 0; j < p.nv; j++) {
            if (p.v[j]->kind != TS_NONE) {
                p.v[j]->off = p.v[j]->off - from + to;
            }
        }

        for (j = 0; j < p.nm; j++) {
            if (p.m[j]->key.kind != TS_NONE) {
                p.m[j]->off = p.m[j]->off - from + to;
            }
        }
    }
}


/* the memory the scan recalls from and remembers in, NULL when none */
static ts_index_mem_t *
ts_memory(ts_scan_t *s)
{
    ts_index_mem_t  *mem;

    mem = s->ix->mem;

    return mem == NULL || mem->forget ? NULL : mem;
}


/* the memory of the last messages array, NULL when none */
static ts_seen_t *
ts_remembered(ts_scan_t *s)
{
    ts_index_mem_t  *mem;

    mem = ts_memory(s);

    return mem ? &mem->messages_seen : NULL;
}


/*
 * At the tools array: the tools of a remembered array, when all its
 * bytes come next, copied into the index and moved to where the array
 * starts.  1 when recalled, 0 when not, -1 without memory for them.
 */
static int
ts_tools_recall(ts_scan_t *s, ts_val_t *v)
{
    ts_index_mem_t       *mem;
    ts_index_t           *ix;
    const ts_recalled_t  *e;
    ts_tool_t            *tools;
    size_t                off;

    mem = ts_memory(s);

    if (mem == NULL) {
        return 0;
    }

    e = ts_recall_find(&mem->tools, (const char *) s->p, s->end - s->p);

    if (e == NULL) {
        return 0;
    }

    ix = s->ix;

    if (ix->caps[0] < e->n) {
        tools = realloc(ix->tools, e->n * sizeof(ts_tool_t));
        if (tools == NULL) {
            return ts_fail(s, TS_ERR_NOMEM);
        }

        ix->tools = tools;
        ix->caps[0] = e->n;
    }

    off = s->p - s->start;

    if (e->n > 0) {
        memcpy(ix->tools, e->items, e->n * sizeof(ts_tool_t));
        ts_items_shift(&ts_tools_list, ix->tools, e->n, 0, off);
    }

    ix->ntools = e->n;
    ix->tools_recalled = e->n;
    s->p += e->len;
    ts_set_array(s, v, off);

    return 1;
}


/*
 * At the messages array: the messages of the array last read, as far as
 * their bytes come again, with their blocks; like the tools, they are
 * still in the index's arrays.  The scan goes on after the last one
 * recalled, inside the array.  1 when some are recalled.
 */
static int
ts_messages_recall(ts_scan_t *s)
{
    ts_index_t          *ix;
    ts_seen_t           *seen;
    const ts_message_t  *m;
    size_t               k, end, e, avail, off, nblocks;

    seen = ts_remembered(s);

    if (seen == NULL) {
        return 0;
    }

    ix = s->ix;
    m = ix->messages;
    avail = s->end - s->p;
    end = 0;

    for (k = 0; k < seen->n[0]; k++) {
        e = m[k].elem.off + m[k].elem.len - seen->base;

        if (e > avail || memcmp(s->p + end, seen->bytes + end, e - end) != 0) {
            break;
        }

        end = e;
    }

    nblocks = k > 0 ? m[k - 1].block_end : 0;
    off = s->p - s->start;

    ts_items_shift(&ts_messages_list, ix->messages, k, seen->base, off);
    ts_items_shift(&ts_blocks_list, ix->blocks, nblocks, seen->base, off);

    /* what is read next takes the place of the others */
    seen->n[0] = k;
    seen->n[1] = nblocks;
    seen->base = off;

    if (k == 0) {
        return 0;
    }

    ix->nmessages = k;
    ix->nblocks = nblocks;
    ix->messages_recalled = k;

    /* inside the array, as ts_open leaves it */
    s->depth++;
    s->p += end;

    return 1;
}


/*
 * A buffer of at least n bytes, its bytes kept when it grows.  It grows
 * by a quarter more than asked: a conversation grows by a turn's bytes
 * on every turn, and each growth copies all it holds.
 */
static void *
ts_reserve(void **buf, size_t *cap, size_t n)
{
    size_t   ncap;
    void    *p;

    if (*cap < n) {
        ncap = n + n / 4;
        p = realloc(*buf, ncap);
        if (p == NULL) {
            return NULL;
        }

        *buf = p;
        *cap = ncap;
    }

    return *buf;
}


/*
 * The array just read, at base in the body, becomes the one remembered:
 * its first len bytes, of which the first kept were recalled and are in
 * memory already, and the counts of its items in the index's arrays.
 * Without memory for the bytes, nothing is remembered.
 */
static void
ts_remember(ts_seen_t *seen, const char *array, size_t len, size_t base,
    size_t kept, size_t n0, size_t n1)
{
    seen->len = 0;
    seen->n[0] = 0;
    seen->n[1] = 0;

    if (ts_reserve((void **) &seen->bytes, &seen->bytes_cap, len) == NULL) {
        return;
    }

    memcpy(seen->bytes + kept, array + kept, len - kept);

    seen->len = len;
    seen->base = base;
    seen->n[0] = n0;
    seen->n[1] = n1;
}


/* the top level's tools array: recalled, or read and remembered */
static int
ts_tools(ts_scan_t *s, ts_val_t *v)
{
    ts_index_mem_t  *mem;
    ts_index_t      *ix;
    void            *kept;
    int              rc;

    rc = ts_tools_recall(s, v);
    mem = ts_memory(s);
    ix = s->ix;

    if (rc == 0) {
        if (ts_array_of(s, v, ts_tool) != 0) {
            return -1;
        }

        kept = mem ? ts_recall_add(&mem->tools, ix->buf + v->off, v->len,
                                   ix->tools, ix->ntools, sizeof(ts_tool_t))
                   : NULL;

        if (kept != NULL) {
            ts_items_shift(&ts_tools_list, kept, ix->ntools, v->off, 0);
        }
    }

    if (rc == 1 && s->map != NULL) {
        ts_strmap_skip(s->map, v->off + v->len);
    }

    return rc < 0 ? -1 : 0;
}


/* the bytes of a messages array that tell its conversation */
#define TS_MESSAGES_SIGN  4096


/*
 * A conversation's messages are remembered whole when it comes again:
 * some were recalled, or the array starts with the bytes remembered of
 * the last one.  Else only those first bytes are, TS_MESSAGES_SIGN at
 * most: a worker that serves many conversations in turn copies each
 * array's start, not the whole array, to find nothing to recall.
 */
static int
ts_messages_again(const ts_seen_t *seen, const char *array, size_t len,
    size_t kept)
{
    size_t  n;

    n = len < TS_MESSAGES_SIGN ? len : TS_MESSAGES_SIGN;

    return kept > 0
           || (seen->len >= n && memcmp(array, seen->bytes, n) == 0);
}


/*
 * The top level's messages: those of the last array read as far as
 * their bytes come again, then the others read; remembered.
 */
static int
ts_messages(ts_scan_t *s, ts_val_t *v)
{
    ts_index_t  *ix;
    ts_seen_t   *seen;
    size_t       off, kept;
    int          rc;

    ix = s->ix;
    off = s->p - s->start;

    rc = ts_messages_recall(s);
    kept = s->p - s->start - off;

    if (rc == 1 && s->map != NULL) {
        ts_strmap_skip(s->map, off + kept);
    }

    rc = rc == 1 ? ts_more(s, ']') : ts_open(s, '[');

    if (ts_elements(s, rc, ts_message) != 0) {
        return -1;
    }

    ts_set_array(s, v, off);
    seen = ts_remembered(s);

    if (seen == NULL) {
        return 0;
    }

    if (ts_messages_again(seen, ix->buf + off, v->len, kept)) {
        ts_remember(seen, ix->buf + off, v->len, off, kept, ix->nmessages,
                    ix->nblocks);

    } else {
        ts_remember(seen, ix->buf + off,
                    v->len < TS_MESSAGES_SIGN ? v->len : TS_MESSAGES_SIGN,
                    off, 0, 0, 0);
    }

    return 0;
}


static int
ts_top_member(ts_scan_t *s, ts_member_t *m)
{
    ts_index_t  *ix;
    int          id;

    ix = s->ix;

    if (ts_key(s, &m->key) != 0) {
        return -1;
    }

    id = ts_key_id(ix->buf, &m->key, ts_top_keys);

    if (id >= 0) {
        if (ix->top[id] >= 0) {
            return ts_fail(s, TS_ERR_DUPLICATE);
        }
        ix->top[id] = (int32_t) ix->nmembers;
    }

    if (id == TS_TOP_TOOLS) {
        if (ts_tools(s, &m->val) != 0) {
            return -1;
        }

    } else if (id == TS_TOP_MESSAGES) {
        if (ts_messages(s, &m->val) != 0) {
            return -1;
        }

    } else if (ts_member_value(s, &m->val) != 0) {
        return -1;
    }

    m->off = m->key.off;
    m->len = m->val.off + m->val.len - m->key.off;

    if (id == TS_TOP_MODEL && m->val.kind != TS_STRING) {
        return ts_fail(s, TS_ERR_TYPE);
    }

    return 0;
}


static int
ts_top(ts_scan_t *s)
{
    ts_index_t   *ix;
    ts_member_t  *m;
    int           rc;

    ix = s->ix;

    ts_ws(s);

    rc = ts_open(s, '{');

    while (rc == 0) {
        if (ix->nmembers == TS_MAX_TOP_MEMBERS) {
            return ts_fail(s, TS_ERR_LIMIT);
        }

        m = ts_grow(s, (void **) &ix->members, ix->nmembers, &ix->caps[3],
                    sizeof(ts_member_t));
        if (m == NULL) {
            return -1;
        }

        if (ts_top_member(s, m) != 0) {
            return -1;
        }

        ix->nmembers++;
        rc = ts_more(s, '}');
    }

    if (rc < 0) {
        return -1;
    }

    ts_ws(s);

    return s->p == s->end ? 0 : ts_fail(s, TS_ERR_SYNTAX);
}


ts_status_t
ts_index_build(ts_index_t *ix, const char *buf, size_t len)
{
    return ts_index_build_in(ix, buf, len, NULL);
}


/* the index's arrays in the order of caps[] */
static void **
ts_index_array(ts_index_t *ix, int i)
{
    switch (i) {
    case 0:
        return (void **) &ix->tools;
    case 1:
        return (void **) &ix->blocks;
    case 2:
        return (void **) &ix->messages;
    default:
        return (void **) &ix->members;
    }
}


static void
ts_seen_free(ts_seen_t *seen)
{
    free(seen->bytes);
    memset(seen, 0, sizeof(ts_seen_t));
}


static void
ts_index_borrow(ts_index_t *ix, ts_index_mem_t *mem)
{
    int  i;

    if (mem == NULL || mem->lent) {
        return;
    }

    if (mem->forget) {
        ts_recall_free(&mem->tools);
        ts_seen_free(&mem->messages_seen);
    }

    /* the bound may have shrunk since the last request */
    ts_recall_trim(&mem->tools);

    for (i = 0; i < 4; i++) {
        *ts_index_array(ix, i) = mem->arrays[i];
        ix->caps[i] = mem->caps[i];
    }

    mem->lent = 1;
    ix->mem = mem;
}


static void
ts_index_start(ts_index_t *ix, const char *buf, size_t len,
    ts_index_mem_t *mem)
{
    int  i;

    memset(ix, 0, sizeof(ts_index_t));
    ts_index_borrow(ix, mem);
    ix->buf = buf;
    ix->len = len;

    for (i = 0; i < TS_TOP_N; i++) {
        ix->top[i] = -1;
    }
}


static ts_status_t
ts_index_scan(ts_index_t *ix, ts_strmap_t *map)
{
    ts_scan_t  s;

    s.start = (const unsigned char *) ix->buf;
    s.p = s.start;
    s.end = s.start + ix->len;
    s.depth = 0;
    s.err = TS_OK;
    s.ix = ix;
    s.map = map;

    /* a top level that is not an object is a type error, not syntax */
    ts_ws(&s);
    if (s.p < s.end && *s.p != '{') {
        if (ts_skip(&s, NULL) == 0) {
            ts_ws(&s);
            s.err = (s.p == s.end) ? TS_ERR_TYPE : TS_ERR_SYNTAX;
        }

    } else {
        (void) ts_top(&s);
    }

    ix->status = s.err;
    ix->err_off = s.p - s.start;

    return s.err;
}


/*
 * The string map's memory: the lender's, grown when too small, or the
 * scan's own.  NULL when there is none to have: the scan reads bytes.
 */
static uint64_t *
ts_map_bits(ts_index_mem_t *mem, size_t words)
{
    if (words == 0) {
        return NULL;
    }

    if (mem == NULL) {
        return malloc(words * sizeof(uint64_t));
    }

    if (mem->map_words < words) {
        free(mem->map);
        mem->map = malloc(words * sizeof(uint64_t));
        mem->map_words = mem->map ? words : 0;
    }

    return mem->map;
}


ts_status_t
ts_index_build_in(ts_index_t *ix, const char *buf, size_t len,
    ts_index_mem_t *mem)
{
    ts_strmap_t   map;
    ts_status_t   st;
    uint64_t     *bits;

    ts_index_start(ix, buf, len, mem);

    bits = ts_map_bits(ix->mem, ts_strmap_words(len));
    if (bits == NULL) {
        return ts_index_scan(ix, NULL);
    }

    ts_strmap_start(&map, buf, len, bits, TS_STRMAP_BEST);
    st = ts_index_scan(ix, &map);

    if (ix->mem == NULL) {
        free(bits);
    }

    return st;
}


ts_status_t
ts_index_build_plain(ts_index_t *ix, const char *buf, size_t len)
{
    ts_index_start(ix, buf, len, NULL);

    return ts_index_scan(ix, NULL);
}


ts_status_t
ts_value_parse(const char *buf, size_t len, ts_val_t *v)
{
    ts_scan_t  s;

    /* nothing is no value, and an empty buffer may have no address */
    if (len == 0) {
        v->kind = TS_NONE;
        return TS_ERR_SYNTAX;
    }

    memset(&s, 0, sizeof(ts_scan_t));
    s.start = (const unsigned char *) buf;
    s.p = s.start;
    s.end = s.start + len;

    ts_ws(&s);

    if (ts_member_value(&s, v) == 0) {
        ts_ws(&s);

        if (s.p != s.end) {
            (void) ts_fail(&s, TS_ERR_SYNTAX);
        }
    }

    return s.err;
}

void
ts_index_free(ts_index_t *ix)
{
    void  **a;
    int     i;

    for (i = 0; i < 4; i++) {
        a = ts_index_array(ix, i);

        if (ix->mem) {
            ix->mem->arrays[i] = *a;
            ix->mem->caps[i] = ix->caps[i];

        } else {
            free(*a);
        }

        *a = NULL;
        ix->caps[i] = 0;
    }

    if (ix->mem) {
        ix->mem->lent = 0;
        ix->mem = NULL;
    }
}


void
ts_index_mem_free(ts_index_mem_t *mem)
{
    int  i;

    for (i = 0; i < 4; i++) {
        free(mem->arrays[i]);
    }

    free(mem->map);
    ts_recall_free(&mem->tools);
    ts_seen_free(&mem->messages_seen);
    memset(mem, 0, sizeof(ts_index_mem_t));
}


const ts_member_t *
ts_index_top(const ts_index_t *ix, ts_top_key_t key)
{
    return ix->top[key] >= 0 ? &ix->members[ix->top[key]] : NULL;
}


/* decodes one unit of a JSON string at *pp into out[]; returns its size */
static size_t
ts_str_unit(const unsigned char **pp, unsigned char *out)
{
    const unsigned char  *p;
    unsigned long         cp, lo;
    char                  hex[5];

    p = *pp;

    if (*p != '\\') {
        out[0] = *p;
        *pp = p + 1;
        return 1;
    }

    *pp = p + 2;

    switch (p[1]) {
    case 'b': out[0] = '\b'; return 1;
    case 'f': out[0] = '\f'; return 1;
    case 'n': out[0] = '\n'; return 1;
    case 'r': out[0] = '\r'; return 1;
    case 't': out[0] = '\t'; return 1;
    case 'u': break;
    default: out[0] = p[1]; return 1;
    }

    memcpy(hex, p + 2, 4);
    hex[4] = '\0';
    cp = strtoul(hex, NULL, 16);
    *pp = p + 6;

    /* a high surrogate followed by a low one is a single code point */
    if (cp >= 0xd800 && cp < 0xdc00 && p[6] == '\\' && p[7] == 'u') {
        memcpy(hex, p + 8, 4);
        lo = strtoul(hex, NULL, 16);
        if (lo >= 0xdc00 && lo < 0xe000) {
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            *pp = p + 12;
        }
    }

    if (cp < 0x80) {
        out[0] = (unsigned char) cp;
        return 1;
    }

    if (cp < 0x800) {
        out[0] = (unsigned char) (0xc0 | (cp >> 6));
        out[1] = (unsigned char) (0x80 | (cp & 0x3f));
        return 2;
    }

    if (cp < 0x10000) {
        out[0] = (unsigned char) (0xe0 | (cp >> 12));
        out[1] = (unsigned char) (0x80 | ((cp >> 6) & 0x3f));
        out[2] = (unsigned char) (0x80 | (cp & 0x3f));
        return 3;
    }

    out[0] = (unsigned char) (0xf0 | (cp >> 18));
    out[1] = (unsigned char) (0x80 | ((cp >> 12) & 0x3f));
    out[2] = (unsigned char) (0x80 | ((cp >> 6) & 0x3f));
    out[3] = (unsigned char) (0x80 | (cp & 0x3f));
    return 4;
}


int
ts_str_eq_escaped(const char *buf, const ts_val_t *v, const char *s,
    size_t len)
{
    const unsigned char  *p, *end;
    unsigned char         unit[4];
    size_t                n;

    p = (const unsigned char *) buf + v->off + 1;
    end = (const unsigned char *) buf + v->off + v->len - 1;

    while (p < end) {
        n = ts_str_unit(&p, unit);
        if (n > len || memcmp(unit, s, n) != 0) {
            return 0;
        }
        s += n;
        len -= n;
    }

    return len == 0;
}


int
ts_str_same_raw(const char *buf, const ts_val_t *a, const ts_val_t *b)
{
    return a->kind == TS_STRING && b->kind == TS_STRING && a->len == b->len
           && memcmp(buf + a->off, buf + b->off, a->len) == 0;
}


size_t
ts_str_decode(const char *buf, const ts_val_t *v, char *out, size_t cap)
{
    const unsigned char  *p, *q, *end;
    unsigned char         unit[4];
    size_t                n, len;

    p = (const unsigned char *) buf + v->off + 1;
    end = (const unsigned char *) buf + v->off + v->len - 1;
    len = 0;

    while (p < end) {
        /* runs without escapes, the bulk of any text, go in one copy */
        q = memchr(p, '\\', (size_t) (end - p));
        n = (size_t) ((q ? q : end) - p);

        if (len + n > cap) {
            return (size_t) -1;
        }

        memcpy(out + len, p, n);
        len += n;
        p += n;

        if (p == end) {
            break;
        }

        n = ts_str_unit(&p, unit);
        if (len + n > cap) {
            return (size_t) -1;
        }
        memcpy(out + len, unit, n);
        len += n;
    }

    return len;
}


ts_status_t
ts_container_items(const char *buf, const ts_val_t *v, ts_val_t **items,
    size_t *n)
{
    ts_scan_t    s;
    ts_val_t    *it, val;
    size_t       cap, from;
    int          rc, obj;

    *items = NULL;
    *n = 0;
    cap = 0;
    obj = (v->kind == TS_OBJECT);

    memset(&s, 0, sizeof(ts_scan_t));
    s.start = (const unsigned char *) buf;
    s.p = s.start + v->off;
    s.end = s.start + v->off + v->len;

    rc = ts_open(&s, obj ? '{' : '[');

    while (rc == 0) {
        from = s.p - s.start;

        if ((obj && ts_key(&s, NULL) != 0) || ts_member_value(&s, &val) != 0) {
            break;
        }

        it = ts_grow(&s, (void **) items, *n, &cap, sizeof(ts_val_t));
        if (it == NULL) {
            break;
        }

        it->off = from;
        it->len = s.p - s.start - from;
        it->kind = obj ? TS_NONE : val.kind;
        it->esc = obj ? 0 : val.esc;
        (*n)++;

        rc = ts_more(&s, obj ? '}' : ']');
    }

    if (s.err != TS_OK) {
        free(*items);
        *items = NULL;
        *n = 0;
    }

    return s.err;
}


ts_status_t
ts_object_members(const char *buf, const ts_val_t *obj,
    const char *const *keys, size_t n, ts_val_t *out)
{
    ts_scan_t  s;
    ts_val_t   k, v;
    size_t     i;
    int        rc;

    /* an absent member is an empty span: callers may read it unchecked */
    for (i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof(ts_val_t));
    }

    if (obj->kind != TS_OBJECT) {
        return TS_ERR_TYPE;
    }

    memset(&s, 0, sizeof(ts_scan_t));
    s.start = (const unsigned char *) buf;
    s.p = s.start + obj->off;
    s.end = s.start + obj->off + obj->len;

    rc = ts_open(&s, '{');

    while (rc == 0) {
        if (ts_key(&s, &k) != 0 || ts_member_value(&s, &v) != 0) {
            break;
        }

        for (i = 0; i < n; i++) {
            if (out[i].kind == TS_NONE && ts_str_eq(buf, &k, keys[i])) {
                out[i] = v;
                break;
            }
        }

        rc = ts_more(&s, '}');
    }

    return s.err;
}


const char *
ts_str_view(const char *buf, const ts_val_t *v, char *tmp, size_t cap,
    size_t *len)
{
    if (v->kind != TS_STRING) {
        return NULL;
    }

    if (!v->esc) {
        *len = v->len - 2;
        return buf + v->off + 1;
    }

    *len = ts_str_decode(buf, v, tmp, cap);

    return *len == (size_t) -1 ? NULL : tmp;
}


const char *
ts_status_name(ts_status_t st)
{
    static const char  *names[] = {
        "ok", "malformed", "too_deep", "duplicate_key", "wrong_type",
        "limit", "no_memory"
    };

    return (unsigned) st < sizeof(names) / sizeof(names[0])
           ? names[st] : "unknown";
}
