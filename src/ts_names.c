/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

#include "ts_names.h"


void
ts_names_init(ts_names_t *s)
{
    memset(s, 0, sizeof(ts_names_t));
}


void
ts_names_free(ts_names_t *s)
{
    size_t  i;

    for (i = 0; i < s->ncopies; i++) {
        free(s->copies[i]);
    }

    free(s->copies);
    free(s->items);
    ts_names_init(s);
}


static char *
ts_names_copy(ts_names_t *s, const char *buf, const ts_val_t *v, size_t *len)
{
    char  **c, *p;

    c = realloc(s->copies, (s->ncopies + 1) * sizeof(char *));
    if (c == NULL) {
        return NULL;
    }

    s->copies = c;

    /* decoding never makes a string longer than its quoted span */
    p = malloc(v->len);
    if (p == NULL) {
        return NULL;
    }

    *len = ts_str_decode(buf, v, p, v->len);
    s->copies[s->ncopies++] = p;

    return p;
}


int
ts_names_add(ts_names_t *s, const char *buf, const ts_val_t *v)
{
    ts_name_t  *items;
    const char *p;
    size_t      len, ncap;

    if (v->kind != TS_STRING || s->failed) {
        return s->failed ? -1 : 0;
    }

    if (s->n == s->cap) {
        ncap = s->cap ? s->cap * 2 : 32;
        items = realloc(s->items, ncap * sizeof(ts_name_t));
        if (items == NULL) {
            s->failed = 1;
            return -1;
        }

        s->items = items;
        s->cap = ncap;
    }

    if (v->esc) {
        p = ts_names_copy(s, buf, v, &len);
        if (p == NULL) {
            s->failed = 1;
            return -1;
        }

    } else {
        p = buf + v->off + 1;
        len = v->len - 2;
    }

    s->items[s->n].p = p;
    s->items[s->n].len = len;
    s->n++;

    return 0;
}


static int
ts_name_cmp(const void *a, const void *b)
{
    const ts_name_t  *x = a, *y = b;
    int               rc;

    rc = memcmp(x->p, y->p, x->len < y->len ? x->len : y->len);

    if (rc != 0) {
        return rc;
    }

    return (x->len > y->len) - (x->len < y->len);
}


void
ts_names_sort(ts_names_t *s)
{
    if (s->n > 1) {
        qsort(s->items, s->n, sizeof(ts_name_t), ts_name_cmp);
    }
}


int
ts_names_has(const ts_names_t *s, const char *p, size_t len)
{
    ts_name_t  key;

    if (s->n == 0) {
        return 0;
    }

    key.p = p;
    key.len = len;

    return bsearch(&key, s->items, s->n, sizeof(ts_name_t), ts_name_cmp)
           != NULL;
}


int
ts_name_is_mcp(const char *p, size_t len)
{
    return len > 5 && memcmp(p, "mcp__", 5) == 0;
}


int
ts_names_has_val(const ts_names_t *s, const char *buf, const ts_val_t *v)
{
    char         tmp[TS_NAMES_MAX];
    const char  *p;
    size_t       len;

    p = ts_str_view(buf, v, tmp, sizeof(tmp), &len);

    return p != NULL && ts_names_has(s, p, len);
}
