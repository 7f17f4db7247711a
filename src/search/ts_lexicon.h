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
