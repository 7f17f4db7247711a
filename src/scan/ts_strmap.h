/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The string map of a JSON text: one pass, 64 bytes at a time, finds
 * every quote that is not escaped and every backslash, and checks what
 * JSON forbids inside strings (control bytes, unknown escapes, \u
 * without four hex digits, bytes that are not UTF-8).  The scanner then
 * crosses a string by looking up its closing quote instead of reading
 * its bytes.
 *
 * Which bytes are inside strings is read from the parity of the quotes
 * before them.  In a valid document that is exactly the grammar's view;
 * in an invalid one the grammar fails no later than the first place
 * where the two views part, so a scanner that checks each string it
 * crosses against `bad` gives the byte-by-byte scanner's outcome.
 */

#ifndef TS_STRMAP_H
#define TS_STRMAP_H

#include <stddef.h>
#include <stdint.h>


/* the SIMD code that finds the bytes; every kernel gives the same map */
typedef enum {
    TS_STRMAP_BEST = 0,         /* AVX2 where the CPU has it */
    TS_STRMAP_BASELINE          /* SSE2 on x86-64, bytes elsewhere */
} ts_strmap_kernel_t;


/* what is carried from one 64-byte chunk to the next */
typedef struct {
    uint64_t  escaped;      /* 1: the chunk's first byte is escaped */
    uint64_t  in_string;    /* all ones: the chunk starts in a string */
    uint64_t  look;         /* 1: the chunk's first byte needs a look */
    uint64_t  quotes;       /* the xor of the quotes not yet counted */
    uint64_t  utf8;         /* bytes a UTF-8 sequence checked before */
} ts_strmap_carry_t;


/*
 * The map is made as the lookups need it, a batch of chunks ahead, so
 * that bytes a scan recalls instead of reading are skipped unmapped.
 */
typedef struct {
    uint64_t              *bits;    /* per 64 bytes: quotes, backslashes */
    size_t                 len;
    size_t                 chunks;
    size_t                 bad;     /* the first byte strings may not
                                       hold, mapped since the last skip,
                                       or len */
    size_t                 mapped;  /* chunks mapped or skipped */
    const unsigned char   *buf;
    ts_strmap_carry_t      carry;
    uint64_t               from;    /* the bits of the next chunk that
                                       count: all but after a skip */
    ts_strmap_kernel_t     kernel;
} ts_strmap_t;


/* 64-bit words the map of len bytes needs */
size_t ts_strmap_words(size_t len);

/* starts the map of buf in bits[ts_strmap_words(len)]; maps nothing */
void ts_strmap_start(ts_strmap_t *m, const char *buf, size_t len,
    uint64_t *bits, ts_strmap_kernel_t kernel);

/* maps the chunks up to chunk w, w included (w < m->chunks) */
void ts_strmap_more(ts_strmap_t *m, size_t w);

/*
 * No lookup will start before off, which lies outside strings (a value
 * the scan recalled ends there): the chunks before it are not mapped.
 */
void ts_strmap_skip(ts_strmap_t *m, size_t off);

/* maps all of buf into bits[ts_strmap_words(len)] */
void ts_strmap_build(ts_strmap_t *m, const char *buf, size_t len,
    uint64_t *bits, ts_strmap_kernel_t kernel);

/*
 * Lead bytes of UTF-8 (RFC 3629), by their value: the sequence's length,
 * the range of its second byte (overlong forms, surrogates and code
 * points past U+10FFFF are not UTF-8), and which of its third and fourth
 * bytes must be continuations; length 0: no sequence starts there.
 */
typedef struct {
    uint8_t   len;
    uint8_t   lo;         /* the second byte, lo .. lo + span */
    uint8_t   span;
    uint8_t   pad;
    uint16_t  mask;       /* of the third and fourth bytes, little end */
    uint16_t  cont;
} ts_utf8_lead_t;

extern const ts_utf8_lead_t  ts_utf8_leads[256];


/* the length of the UTF-8 sequence at p, of which avail bytes may be
 * read, or 0 when none starts there */
static inline unsigned
ts_utf8_seq(const unsigned char *p, size_t avail)
{
    const ts_utf8_lead_t  *l;
    unsigned               rest;

    l = &ts_utf8_leads[p[0]];

    if (avail < l->len || l->len == 0
        || (unsigned) (uint8_t) (p[1] - l->lo) > l->span)
    {
        return 0;
    }

    rest = l->len < 3 ? 0
           : l->len == 3 ? p[2] : (unsigned) p[2] | (unsigned) p[3] << 8;

    return (rest & l->mask) == l->cont ? l->len : 0;
}


/* 1 when the n bytes at p are UTF-8 */
int ts_utf8_valid(const char *p, size_t n);


/*
 * The lookups are inline: the scanner makes one or two per string, and
 * most strings are short.
 */

/* the first unescaped quote at or after off, or len */
static inline size_t
ts_strmap_quote(ts_strmap_t *m, size_t off)
{
    size_t    w;
    uint64_t  q;

    w = off / 64;

    if (w >= m->mapped) {
        if (w >= m->chunks) {
            return m->len;
        }

        ts_strmap_more(m, w);
    }

    q = m->bits[2 * w] & (~0ULL << (off & 63));

    while (q == 0) {
        if (++w == m->mapped) {
            if (w == m->chunks) {
                return m->len;
            }

            ts_strmap_more(m, w);
        }

        q = m->bits[2 * w];
    }

    return w * 64 + (size_t) __builtin_ctzll(q);
}


/* 1 when a backslash lies in [from, to), a range mapped already */
static inline int
ts_strmap_has_backslash(const ts_strmap_t *m, size_t from, size_t to)
{
    size_t    w, last;
    uint64_t  b;

    if (from >= to) {
        return 0;
    }

    w = from / 64;
    last = (to - 1) / 64;
    b = m->bits[2 * w + 1] & (~0ULL << (from & 63));

    while (w < last) {
        if (b) {
            return 1;
        }

        b = m->bits[2 * ++w + 1];
    }

    return (b & (~0ULL >> (63 - ((to - 1) & 63)))) != 0;
}

#endif /* TS_STRMAP_H */
