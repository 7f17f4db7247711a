/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * JSON string values: compared, decoded, viewed.
 */

#include "scan/ts_scan.h"
#include "scan/ts_str.h"


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


/* terms and names are short: a first-byte check beats memmem's set-up */
static const char *
ts_find_bytes(const char *hay, size_t n, const char *needle, size_t m)
{
    size_t  i;

    for (i = 0; m <= n && i <= n - m; i++) {
        if (hay[i] == needle[0] && memcmp(hay + i + 1, needle + 1, m - 1) == 0)
        {
            return hay + i;
        }
    }

    return NULL;
}


#ifdef TS_HAVE_SSE2

/*
 * Where the haystack is long (odd seed terms in descriptions), compare
 * the first and the last byte of the needle at 16 positions at a time,
 * and the rest only where both agree
 */
const char *
ts_find(const char *hay, size_t n, const char *needle, size_t m)
{
    __m128i   first, last;
    unsigned  mask, bit;
    size_t    i;

    if (m < 2 || n < m + 16) {
        return ts_find_bytes(hay, n, needle, m);
    }

    first = _mm_set1_epi8(needle[0]);
    last = _mm_set1_epi8(needle[m - 1]);

    for (i = 0; i + m - 1 + 16 <= n; i += 16) {
        mask = (unsigned) _mm_movemask_epi8(_mm_and_si128(
                   _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)
                                                  (hay + i)), first),
                   _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)
                                                  (hay + i + m - 1)), last)));

        for ( /* void */ ; mask; mask &= mask - 1) {
            bit = ts_ctz(mask);

            if (memcmp(hay + i + bit, needle, m) == 0) {
                return hay + i + bit;
            }
        }
    }

    return ts_find_bytes(hay + i, n - i, needle, m);
}

#else

const char *
ts_find(const char *hay, size_t n, const char *needle, size_t m)
{
    return ts_find_bytes(hay, n, needle, m);
}

#endif


static int
ts_wordc(unsigned char c)
{
    return ts_ascii_alnum(c) || c == '_';
}


/* \b at position i: a word byte on exactly one side */
static int
ts_boundary(const char *text, size_t len, size_t i)
{
    int  before, after;

    before = i > 0 && ts_wordc((unsigned char) text[i - 1]);
    after = i < len && ts_wordc((unsigned char) text[i]);

    return before != after;
}


int
ts_word_bounded(const char *text, size_t len, size_t at, size_t tlen)
{
    return ts_boundary(text, len, at) && ts_boundary(text, len, at + tlen);
}
