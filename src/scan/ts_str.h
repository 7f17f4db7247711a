/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * JSON string values, read where the scanner found them: compared,
 * decoded, viewed in place; and the plain text helpers every floor
 * above uses: ASCII classes, substring search, word boundaries.
 */

#ifndef TS_STR_H
#define TS_STR_H

#include "scan/ts_json.h"


/* compares a string value with escapes, decoded, with len bytes at s */
int ts_str_eq_escaped(const char *buf, const ts_val_t *v, const char *s,
    size_t len);

/*
 * Compares a JSON string value, escapes decoded, with a C string.  Inline:
 * callers pass literals, whose length and comparison the compiler folds.
 */
static inline int
ts_str_eq(const char *buf, const ts_val_t *v, const char *s)
{
    size_t  len;

    len = strlen(s);

    if (v->kind != TS_STRING) {
        return 0;
    }

    if (v->esc) {
        return ts_str_eq_escaped(buf, v, s, len);
    }

    return v->len - 2 == len && memcmp(buf + v->off + 1, s, len) == 0;
}

/* 1 when two string values of buf are spelled the same, byte for byte */
int ts_str_same_raw(const char *buf, const ts_val_t *a, const ts_val_t *b);

/*
 * decodes a JSON string value into out (at most cap bytes);
 * returns the decoded length, or (size_t) -1 if it does not fit
 */
size_t ts_str_decode(const char *buf, const ts_val_t *v, char *out,
    size_t cap);


/*
 * the bytes of a string value: in place without escapes, else decoded
 * into tmp; NULL for a non-string or when cap is too small
 */
const char *ts_str_view(const char *buf, const ts_val_t *v, char *tmp,
    size_t cap, size_t *len);


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


/* bit i of a 64-bit set: of terms, of words of a name */
#define TS_BIT(i)  ((uint64_t) 1 << (i))


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


/* the first occurrence of needle in hay, or NULL (memmem) */
const char *ts_find(const char *hay, size_t n, const char *needle, size_t m);


/* 1 when s[0..m) is needle ignoring the case of s's ASCII letters */
static inline int
ts_same_icase(const char *s, const char *needle, size_t m)
{
    size_t  i;

    /* a capital and its small letter differ in 0x20 only */
    for (i = 0; i < m; i++) {
        if (s[i] != needle[i]
            && !(ts_ascii_upper((unsigned char) s[i])
                 && (s[i] | 0x20) == needle[i]))
        {
            return 0;
        }
    }

    return 1;
}


/* 1 when text[at, at + tlen) lies between \b boundaries ('_' a word byte) */
int ts_word_bounded(const char *text, size_t len, size_t at, size_t tlen);

/* 1 when text[at] starts an alphanumeric word */
static inline int
ts_word_start(const char *text, size_t at)
{
    return at == 0 || !ts_ascii_alnum((unsigned char) text[at - 1]);
}


/* 1 when text[end] ends an alphanumeric word */
static inline int
ts_word_end(const char *text, size_t len, size_t end)
{
    return end == len || !ts_ascii_alnum((unsigned char) text[end]);
}

#endif /* TS_STR_H */
