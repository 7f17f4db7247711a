/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Where words start in a text, a 64-byte chunk at a time: tool search
 * walks every word start of the catalogue once, whatever the number of
 * terms.  Where few words are looked for (the bulk of a catalogue, its
 * input schemas and descriptions), an AVX2 kernel chosen at run time
 * finds the places whose first three bytes may begin one of them
 * instead.
 */

#ifndef TS_STARTS_H
#define TS_STARTS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if (defined __SSE2__ && defined __GNUC__)
#include <emmintrin.h>
#endif

#include "scan/ts_str.h"


#define TS_CHUNK  64


/*
 * The alphanumeric bytes of p[0..64) as bits (ASCII letters of either
 * case and digits, as ts_ascii_alnum).  p[0..64) must be readable.
 */
static inline uint64_t
ts_alnum64(const char *p)
{
    uint64_t  bits;
    int       i;

#if (defined __SSE2__ && defined __GNUC__)
    __m128i   x, letter, digit;

    /* a byte in [lo, lo + n) is x + (128 - lo) < n - 128, signed */
    for (i = 0, bits = 0; i < TS_CHUNK; i += 16) {
        x = _mm_loadu_si128((const __m128i *) (const void *) (p + i));
        letter = _mm_cmplt_epi8(
                     _mm_add_epi8(_mm_or_si128(x, _mm_set1_epi8(0x20)),
                                  _mm_set1_epi8((char) (128 - 'a'))),
                     _mm_set1_epi8((char) (26 - 128)));
        digit = _mm_cmplt_epi8(
                    _mm_add_epi8(x, _mm_set1_epi8((char) (128 - '0'))),
                    _mm_set1_epi8((char) (10 - 128)));
        bits |= (uint64_t) (unsigned) _mm_movemask_epi8(
                    _mm_or_si128(letter, digit)) << i;
    }
#else
    for (i = 0, bits = 0; i < TS_CHUNK; i++) {
        bits |= (uint64_t) ts_ascii_alnum((unsigned char) p[i]) << i;
    }
#endif

    return bits;
}


/*
 * The chunk at p of a text [.., end) whose memory is readable up to
 * limit (>= end), in at least need bytes (TS_CHUNK or more): p itself,
 * or a copy in tail, zero-padded; *n tells the text's bytes in it.
 */
static inline const char *
ts_chunk_at(const char *p, const char *end, const char *limit, size_t need,
    char *tail, size_t *n)
{
    *n = (size_t) (end - p) < TS_CHUNK ? (size_t) (end - p) : TS_CHUNK;

    if ((size_t) (limit - p) >= need) {
        return p;
    }

    memset(tail, 0, need);
    memcpy(tail, p, (size_t) (limit - p) < need ? (size_t) (limit - p)
                                                : need);

    return tail;
}


/* the low n bits, n <= 64 */
static inline uint64_t
ts_low_bits(size_t n)
{
    return n < 64 ? ((uint64_t) 1 << n) - 1 : ~(uint64_t) 0;
}


/*
 * The word starts (alphanumeric bytes after one that is not) of the
 * chunk at p, as bits; carry holds whether the byte before p is
 * alphanumeric, and is updated for the next chunk.
 */
static inline uint64_t
ts_word_starts(const char *p, const char *end, const char *limit,
    uint64_t *carry)
{
    char      tail[TS_CHUNK];
    uint64_t  alnum, starts;
    size_t    n;

    alnum = ts_alnum64(ts_chunk_at(p, end, limit, TS_CHUNK, tail, &n))
            & ts_low_bits(n);
    starts = alnum & ~((alnum << 1) | *carry);
    *carry = alnum >> (TS_CHUNK - 1);

    return starts;
}


/* bytes of a word's fingerprint */
#define TS_PRINT  3


/*
 * Three-byte fingerprints of up to 8 groups of words (Teddy): nibble
 * tables of their first bytes (letters in either case), whose bit g is
 * set by the words of group g.  A place where all lookups share a bit
 * may begin a word of that group.
 */
typedef struct {
    uint8_t  lo[TS_PRINT][16];
    uint8_t  hi[TS_PRINT][16];
} ts_prints_t;


/* adds a word of at least one byte to group g (0..7) */
void ts_prints_add(ts_prints_t *t, const char *w, size_t len, unsigned g);


/* chunks a kernel covers in one call */
#define TS_RUN  16


/*
 * A fingerprints kernel: for n chunks from p (n <= TS_RUN), a superset
 * of the places where a word of t may begin, as bits, into bits[0..n).
 * p[0..64 n + TS_PRINT - 1) must be readable.
 */
typedef void (*ts_prints_pt)(const char *p, size_t n, const ts_prints_t *t,
    uint64_t *bits);

/* the kernel this CPU runs, or NULL */
ts_prints_pt ts_prints_kernel(void);


/*
 * The places of the chunks from p of a text [.., end), readable up to
 * limit, where a word of t may begin: the kernel's, or every place
 * without one; into bits, for as many chunks as the function returns
 * (at most TS_RUN).
 */
static inline size_t
ts_prints_places(ts_prints_pt kernel, const ts_prints_t *t, const char *p,
    const char *end, const char *limit, uint64_t *bits)
{
    char         tail[TS_CHUNK + TS_PRINT - 1];
    const char  *q;
    size_t       n, k, last;

    /* whole chunks whose print can be read past their end */
    n = (size_t) (end - p + TS_CHUNK - 1) / TS_CHUNK;
    n = n < TS_RUN ? n : TS_RUN;
    k = (size_t) (limit - p) >= TS_CHUNK + TS_PRINT - 1
        ? (size_t) (limit - p - (TS_PRINT - 1)) / TS_CHUNK : 0;
    n = n < k ? n : k;
    q = p;

    if (n == 0) {
        q = ts_chunk_at(p, end, limit, sizeof(tail), tail, &last);
        n = 1;
    }

    if (kernel != NULL) {
        kernel(q, n, t, bits);

    } else {
        for (k = 0; k < n; k++) {
            bits[k] = ~(uint64_t) 0;
        }
    }

    last = (size_t) (end - p) - (n - 1) * TS_CHUNK;
    bits[n - 1] &= ts_low_bits(last);

    return n;
}

#endif /* TS_STARTS_H */
