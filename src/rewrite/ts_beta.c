/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

#include "rewrite/ts_beta.h"


typedef struct {
    const char  *p;
    const char  *end;
} ts_beta_iter_t;


/* the next trimmed, non-empty value; 0 at the end */
static int
ts_beta_next(ts_beta_iter_t *it, const char **v, size_t *n)
{
    const char  *s, *e;

    while (it->p < it->end) {
        s = it->p;
        e = memchr(s, ',', it->end - s);
        if (e == NULL) {
            e = it->end;
        }

        it->p = e + 1;

        while (s < e && (*s == ' ' || *s == '\t')) {
            s++;
        }

        while (e > s && (e[-1] == ' ' || e[-1] == '\t')) {
            e--;
        }

        if (e > s) {
            *v = s;
            *n = e - s;
            return 1;
        }
    }

    return 0;
}


/* value is vlen bytes; prefix: a value that starts with it counts */
static int
ts_beta_find(const char *list, size_t len, const char *value, size_t vlen,
    int prefix)
{
    ts_beta_iter_t   it;
    const char      *v;
    size_t           n;

    it.p = list;
    it.end = list + len;

    while (ts_beta_next(&it, &v, &n)) {
        if ((prefix ? n >= vlen : n == vlen) && memcmp(v, value, vlen) == 0)
        {
            return 1;
        }
    }

    return 0;
}


int
ts_beta_has(const char *list, size_t len, const char *value)
{
    return ts_beta_find(list, len, value, strlen(value), 0);
}


int
ts_beta_has_prefix(const char *list, size_t len, const char *prefix)
{
    return ts_beta_find(list, len, prefix, strlen(prefix), 1);
}


static int
ts_beta_dropped(const char *v, size_t n, const char *const *drop)
{
    for ( /* void */ ; drop && *drop; drop++) {
        if (strlen(*drop) == n && memcmp(*drop, v, n) == 0) {
            return 1;
        }
    }

    return 0;
}


char *
ts_beta_edit(const char *list, size_t len, const char *const *drop,
    const char *add)
{
    ts_beta_iter_t   it;
    const char      *v;
    char            *out, *p;
    size_t           n;

    out = malloc(len + (add ? strlen(add) : 0) + 2);
    if (out == NULL) {
        return NULL;
    }

    p = out;
    it.p = list;
    it.end = list + len;

    /* a value repeated (on two header lines, say) is kept once */
    while (ts_beta_next(&it, &v, &n)) {
        if (ts_beta_dropped(v, n, drop) || ts_beta_find(out, p - out, v, n, 0))
        {
            continue;
        }

        if (p > out) {
            *p++ = ',';
        }

        memcpy(p, v, n);
        p += n;
    }

    if (add && !ts_beta_has(out, p - out, add)) {
        if (p > out) {
            *p++ = ',';
        }

        n = strlen(add);
        memcpy(p, add, n);
        p += n;
    }

    *p = '\0';

    return out;
}
