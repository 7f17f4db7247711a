/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan/ts_buf.h"


void
ts_buf_init(ts_buf_t *b, size_t max)
{
    memset(b, 0, sizeof(ts_buf_t));
    b->max = max;
}


void
ts_buf_free(ts_buf_t *b)
{
    free(b->p);
    ts_buf_init(b, b->max);
}


void
ts_buf_reset(ts_buf_t *b)
{
    b->len = 0;
    b->failed = 0;
}


int
ts_buf_space(ts_buf_t *b, size_t n)
{
    char  *p;

    if (b->failed) {
        return -1;
    }

    if (n <= b->cap - b->len) {
        return 0;
    }

    if (b->max && n > b->max - b->len) {
        b->failed = 1;
        return -1;
    }

    p = ts_array_grow(b->p, &b->cap, b->len + n, 1, 256);
    if (p == NULL) {
        b->failed = 1;
        return -1;
    }

    b->p = p;

    return 0;
}


void *
ts_array_grow(void *items, size_t *cap, size_t need, size_t size,
    size_t first)
{
    size_t   ncap;
    void    *p;

    ncap = *cap ? *cap : first;

    while (ncap < need) {
        ncap *= 2;
    }

    p = realloc(items, ncap * size);

    if (p != NULL) {
        *cap = ncap;
    }

    return p;
}


int
ts_buf_add(ts_buf_t *b, const void *p, size_t n)
{
    if (ts_buf_space(b, n) != 0) {
        return -1;
    }

    if (n) {
        memcpy(b->p + b->len, p, n);
        b->len += n;
    }

    return 0;
}


int
ts_buf_str(ts_buf_t *b, const char *s)
{
    return ts_buf_add(b, s, strlen(s));
}


/*
 * The bytes ts_buf_escaped() looks at twice: controls, quote, backslash
 * and the lead byte of an encoded surrogate.
 */
static const unsigned char  ts_buf_special[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    ['"'] = 1, ['\\'] = 1, [0xed] = 1
};


/*
 * A lone surrogate escape (\udc00) decodes to the three bytes ED B0 80,
 * which are not UTF-8: it is written back as the escape it came from.
 */
static size_t
ts_surrogate(const unsigned char *p, const unsigned char *end,
    unsigned *cp)
{
    if (end - p < 3 || p[0] != 0xed || p[1] < 0xa0 || p[1] > 0xbf
        || (p[2] & 0xc0) != 0x80)
    {
        return 0;
    }

    *cp = 0xd000 | ((unsigned) (p[1] & 0x3f) << 6) | (p[2] & 0x3f);

    return 3;
}


int
ts_buf_escaped(ts_buf_t *b, const char *p, size_t n)
{
    static const char   hex[] = "0123456789abcdef";
    const char         *end, *run;
    char                esc[6];
    unsigned char       c;
    unsigned            cp;
    size_t              skip;

    end = p + n;
    run = p;

    for ( /* void */ ; p < end; p++) {
        c = (unsigned char) *p;

        /* most bytes go as they are: one look-up decides */
        if (!ts_buf_special[c]) {
            continue;
        }

        skip = (c == 0xed) ? ts_surrogate((const unsigned char *) p,
                                          (const unsigned char *) end, &cp)
                           : 0;

        if (skip == 0 && c >= 0x20 && c != '"' && c != '\\') {
            continue;
        }

        if (ts_buf_add(b, run, p - run) != 0) {
            return -1;
        }

        esc[0] = '\\';

        if (skip) {
            esc[1] = 'u';
            esc[2] = hex[cp >> 12];
            esc[3] = hex[(cp >> 8) & 15];
            esc[4] = hex[(cp >> 4) & 15];
            esc[5] = hex[cp & 15];
            n = 6;
            p += skip - 1;

        } else if (c == '"' || c == '\\') {
            esc[1] = (char) c;
            n = 2;

        } else if (c == '\n') {
            esc[1] = 'n';
            n = 2;

        } else {
            memcpy(esc + 1, "u00", 3);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            n = 6;
        }

        if (ts_buf_add(b, esc, n) != 0) {
            return -1;
        }

        run = p + 1;
    }

    return ts_buf_add(b, run, end - run);
}


int
ts_buf_num(ts_buf_t *b, unsigned long long n)
{
    char  tmp[24];
    int   len;

    len = snprintf(tmp, sizeof(tmp), "%llu", n);

    return ts_buf_add(b, tmp, (size_t) len);
}


void
ts_buf_consume(ts_buf_t *b, size_t n)
{
    if (n >= b->len) {
        b->len = 0;
        return;
    }

    memmove(b->p, b->p + n, b->len - n);
    b->len -= n;
}
