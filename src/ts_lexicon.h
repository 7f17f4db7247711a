/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Words for tool search: boundary matching without regular expressions
 * (query text is untrusted), light stemming, stop words and a small
 * thesaurus of the verbs and nouns models use when they describe a task.
 */

#ifndef TS_LEXICON_H
#define TS_LEXICON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if (defined __SSE2__ && defined __GNUC__)
#include <emmintrin.h>
#endif


static inline int
ts_ascii_upper(unsigned char c)
{
    return c >= 'A' && c <= 'Z';
}


static inline int
ts_ascii_alnum(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
           || ts_ascii_upper(c);
}


static inline char
ts_ascii_lower(char c)
{
    return ts_ascii_upper((unsigned char) c) ? (char) (c + 'a' - 'A') : c;
}


/* the lowest set bit of x, which is not 0 */
static inline unsigned
ts_ctz(uint64_t x)
{
#ifdef __GNUC__
    return (unsigned) __builtin_ctzll(x);
#else
    unsigned  i;

    for (i = 0; !(x & 1); i++) {
        x >>= 1;
    }

    return i;
#endif
}


/* word starts are found this many bytes at a time */
#define TS_CHUNK  64


/*
 * The alphanumeric bytes of p[0..64) as bits (ASCII letters of either
 * case and digits, as ts_ascii_alnum).  p[0..64) must be readable.
 */
static inline uint64_t
ts_alnum64(const char *p)
{
#if (defined __SSE2__ && defined __GNUC__)
    __m128i   x, letter, digit;
    uint64_t  bits;
    int       i;

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

    return bits;
#else
    uint64_t  bits;
    int       i;

    for (i = 0, bits = 0; i < TS_CHUNK; i++) {
        bits |= (uint64_t) ts_ascii_alnum((unsigned char) p[i]) << i;
    }

    return bits;
#endif
}


/*
 * The word starts (alphanumeric bytes after one that is not) of the
 * chunk at p, as bits, for a walk over a text [.., end) whose memory is
 * readable up to limit (>= end); carry holds whether the byte before p
 * is alphanumeric, and is updated for the next chunk.
 */
static inline uint64_t
ts_word_starts(const char *p, const char *end, const char *limit,
    uint64_t *carry)
{
    char      tail[TS_CHUNK];
    uint64_t  alnum, starts;
    size_t    n;

    n = (size_t) (end - p);

    if (limit - p >= TS_CHUNK) {
        alnum = ts_alnum64(p);

    } else {
        memset(tail, 0, sizeof(tail));
        memcpy(tail, p, n);
        alnum = ts_alnum64(tail);
    }

    if (n < TS_CHUNK) {
        alnum &= ((uint64_t) 1 << n) - 1;
    }

    starts = alnum & ~((alnum << 1) | *carry);
    *carry = alnum >> (TS_CHUNK - 1);

    return starts;
}


/* the first occurrence of needle in hay, or NULL (memmem) */
const char *ts_find(const char *hay, size_t n, const char *needle, size_t m);

/* the same ignoring the case of hay's ASCII letters; needle is lowercase */
const char *ts_find_icase(const char *hay, size_t n, const char *needle,
    size_t m);

/* 1 when s[0..m) is needle ignoring the case of s's ASCII letters */
int ts_same_icase(const char *s, const char *needle, size_t m);


/* 1 when text[at, at + tlen) lies between \b boundaries ('_' a word byte) */
int ts_word_bounded(const char *text, size_t len, size_t at, size_t tlen);

/* 1 when text[at] starts an alphanumeric word */
int ts_word_start(const char *text, size_t at);

/* 1 when text[end] ends an alphanumeric word */
int ts_word_end(const char *text, size_t len, size_t end);

int ts_stopword(const char *w, size_t len);

/* the length of w's stem: w without a plural or verb suffix */
size_t ts_stem(const char *w, size_t len);

typedef struct {
    const char  *p;
    size_t       len;
} ts_word_t;


/*
 * the words the thesaurus relates to w (compared by stem), w excluded;
 * returns how many were written to out
 */
size_t ts_synonyms(const char *w, size_t len, ts_word_t *out, size_t max);

#endif /* TS_LEXICON_H */
