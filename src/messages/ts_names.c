/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

#include "scan/ts_buf.h"
#include "messages/ts_names.h"


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
    free(s->slots);
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


/* its address differs from one process to the next: the hash's seed */
static const char  ts_names_anchor;


/* a word at a time: names are short, most under 40 bytes */
static uint64_t
ts_name_hash(const char *p, size_t len)
{
    uint64_t  h, w;

    h = ((uint64_t) (uintptr_t) &ts_names_anchor ^ len)
        * 0x9e3779b97f4a7c15ULL;

    for ( /* void */ ; len >= 8; p += 8, len -= 8) {
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }

    for (w = 0; len > 0; len--) {
        w = w << 8 | (unsigned char) p[len - 1];
    }

    h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;

    return h ^ (h >> 29);
}


static void
ts_names_unseal(ts_names_t *s)
{
    if (s->slots == NULL) {
        return;
    }

    free(s->slots);
    s->slots = NULL;
    s->mask = 0;
}


/* adds v, a copy of it when copy is set */
static int
ts_names_put(ts_names_t *s, const char *buf, const ts_val_t *v, int copy)
{
    ts_name_t  *items;
    const char *p;
    size_t      len;

    if (v->kind != TS_STRING || s->failed) {
        return s->failed ? -1 : 0;
    }

    if (s->n == s->cap) {
        items = ts_array_grow(s->items, &s->cap, s->n + 1, sizeof(ts_name_t),
                              32);
        if (items == NULL) {
            s->failed = 1;
            return -1;
        }

        s->items = items;
    }

    if (copy || v->esc) {
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
    ts_names_unseal(s);

    return 0;
}


int
ts_names_add(ts_names_t *s, const char *buf, const ts_val_t *v)
{
    return ts_names_put(s, buf, v, 0);
}


int
ts_names_add_copy(ts_names_t *s, const char *buf, const ts_val_t *v)
{
    return ts_names_put(s, buf, v, 1);
}


/* by bytes, then by length: a prefix sorts first */
static int
ts_name_cmp_sort(const void *a, const void *b)
{
    const ts_name_t  *x = a, *y = b;
    int               rc;

    rc = memcmp(x->p, y->p, x->len < y->len ? x->len : y->len);

    if (rc != 0) {
        return rc;
    }

    return (x->len > y->len) - (x->len < y->len);
}


/*
 * A stable merge sort in the order of ts_name_cmp_sort(), as glibc's
 * qsort() sorts when it has the memory: the same order, without a call
 * through a pointer and a copy by memcpy() for each name moved (a
 * request sorts its deferred tools' names for the announcement).
 */
static void
ts_names_merge_sort(ts_name_t *a, ts_name_t *tmp, size_t n)
{
    size_t  h, i, j, k;

    if (n < 2) {
        return;
    }

    h = n / 2;
    ts_names_merge_sort(a, tmp, h);
    ts_names_merge_sort(a + h, tmp, n - h);

    /* the halves are in order already: nothing to merge */
    if (ts_name_cmp_sort(&a[h - 1], &a[h]) <= 0) {
        return;
    }

    for (i = 0, j = h, k = 0; i < h && j < n; k++) {
        tmp[k] = ts_name_cmp_sort(&a[j], &a[i]) < 0 ? a[j++] : a[i++];
    }

    while (i < h) {
        tmp[k++] = a[i++];
    }

    /* what is left of the second half is in place already */
    memcpy(a, tmp, k * sizeof(ts_name_t));
}


static int
ts_name_eq(const ts_name_t *x, const ts_name_t *y)
{
    return x->len == y->len && memcmp(x->p, y->p, x->len) == 0;
}


/* 1 when the taken slot j holds key; the hash spares most memcmp calls */
static int
ts_names_holds(const ts_names_t *s, size_t j, const ts_name_t *key)
{
    const ts_name_t  *it;

    it = &s->items[s->slots[j] - 1];

    return it->hash == key->hash && ts_name_eq(key, it);
}


/* the slot that holds the name, or the empty one where it would go */
static size_t
ts_names_slot(const ts_names_t *s, const ts_name_t *key)
{
    size_t  j;

    j = key->hash & s->mask;

    while (s->slots[j] != 0 && !ts_names_holds(s, j, key)) {
        j = (j + 1) & s->mask;
    }

    return j;
}


void
ts_names_seal(ts_names_t *s)
{
    size_t  nslots, i, j;

    ts_names_unseal(s);

    /* at most half full: probes stay short */
    for (nslots = 16; nslots < 2 * s->n; nslots *= 2) {
        /* void */
    }

    if (s->n >= UINT32_MAX
        || (s->slots = calloc(nslots, sizeof(uint32_t))) == NULL)
    {
        return;
    }

    s->mask = nslots - 1;

    for (i = 0; i < s->n; i++) {
        s->items[i].hash = ts_name_hash(s->items[i].p, s->items[i].len);
        j = ts_names_slot(s, &s->items[i]);

        if (s->slots[j] == 0) {
            s->slots[j] = (uint32_t) (i + 1);
        }
    }
}


void
ts_names_sort(ts_names_t *s)
{
    ts_name_t  *tmp;

    if (s->n > 1) {
        tmp = malloc(s->n * sizeof(ts_name_t));

        if (tmp != NULL) {
            ts_names_merge_sort(s->items, tmp, s->n);
            free(tmp);

        } else {
            qsort(s->items, s->n, sizeof(ts_name_t), ts_name_cmp_sort);
        }
    }

    ts_names_unseal(s);
}


int
ts_names_has(const ts_names_t *s, const char *p, size_t len)
{
    ts_name_t  key;
    size_t     i;

    if (s->n == 0) {
        return 0;
    }

    key.p = p;
    key.len = len;

    if (s->slots != NULL) {
        key.hash = ts_name_hash(p, len);
        return s->slots[ts_names_slot(s, &key)] != 0;
    }

    for (i = 0; i < s->n; i++) {
        if (ts_name_eq(&key, &s->items[i])) {
            return 1;
        }
    }

    return 0;
}


int
ts_name_is_mcp(const char *p, size_t len)
{
    /* asked of every tool: the first byte before a call to memcmp */
    return len > 5 && p[0] == 'm' && memcmp(p, "mcp__", 5) == 0;
}


int
ts_names_has_val(const ts_names_t *s, const char *buf, const ts_val_t *v)
{
    char         tmp[TS_NAMES_MAX];
    const char  *p;
    size_t       len;

    /* asked of every tool, often of an empty set: no decoding then */
    if (s->n == 0) {
        return 0;
    }

    p = ts_str_view(buf, v, tmp, sizeof(tmp), &len);

    return p != NULL && ts_names_has(s, p, len);
}
