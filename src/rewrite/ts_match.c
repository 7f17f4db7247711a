/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite/ts_match.h"


/* operator patterns are trusted, but matching is bounded all the same */
#define TS_MATCH_LIMIT  100000


/* the bounds every match of a list runs under */
static int
ts_match_bounds(ts_match_list_t *l, char *err, size_t errlen)
{
    if (l->ctx != NULL) {
        return 0;
    }

    l->ctx = pcre2_match_context_create(NULL);
    if (l->ctx == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }

    pcre2_set_match_limit(l->ctx, TS_MATCH_LIMIT);
    pcre2_set_depth_limit(l->ctx, TS_MATCH_LIMIT);

    return 0;
}


int
ts_match_add(ts_match_list_t *l, const char *pattern, size_t len,
    char *err, size_t errlen)
{
    static unsigned long   serial;
    ts_pattern_t          *p;
    PCRE2_SIZE             off;
    PCRE2_UCHAR            msg[256];
    int                    code;

    l->serial = ++serial;

    p = realloc(l->items, (l->n + 1) * sizeof(ts_pattern_t));
    if (p == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }

    l->items = p;
    p = &l->items[l->n];
    memset(p, 0, sizeof(ts_pattern_t));

    if (len > 0 && pattern[0] == '~') {
        if (ts_match_bounds(l, err, errlen) != 0) {
            return -1;
        }

        p->re = pcre2_compile((PCRE2_SPTR) pattern + 1, len - 1,
                              PCRE2_UTF | PCRE2_MATCH_INVALID_UTF,
                              &code, &off, NULL);
        if (p->re == NULL) {
            pcre2_get_error_message(code, msg, sizeof(msg));
            snprintf(err, errlen, "%s at offset %zu in \"%.*s\"",
                     (char *) msg, (size_t) off, (int) len, pattern);
            return -1;
        }

        l->n++;
        return 0;
    }

    p->name = malloc(len + 1);
    if (p->name == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }

    memcpy(p->name, pattern, len);
    p->name[len] = '\0';
    p->len = len;
    l->n++;

    return 0;
}


static int
ts_pattern_match(const ts_match_list_t *l, const ts_pattern_t *p,
    const char *s, size_t len)
{
    pcre2_match_data  *md;
    int                rc;

    if (p->name) {
        return p->len == len && memcmp(p->name, s, len) == 0;
    }

    md = pcre2_match_data_create(1, NULL);
    if (md == NULL) {
        return 0;
    }

    rc = pcre2_match(p->re, (PCRE2_SPTR) s, len, 0, 0, md, l->ctx);
    pcre2_match_data_free(md);

    /* errors (match limit, invalid UTF-8) count as no match */
    return rc >= 0;
}


int
ts_match_first(const ts_match_list_t *l, const char *s, size_t len)
{
    size_t  i;

    if (l == NULL) {
        return -1;
    }

    for (i = 0; i < l->n; i++) {
        if (ts_pattern_match(l, &l->items[i], s, len)) {
            return (int) i;
        }
    }

    return -1;
}


int
ts_match_any(const ts_match_list_t *l, const char *s, size_t len)
{
    return ts_match_first(l, s, len) >= 0;
}


int
ts_match_add_all(ts_match_list_t *l, const char *const *patterns, char *err,
    size_t errlen)
{
    for ( /* void */ ; *patterns; patterns++) {
        if (ts_match_add(l, *patterns, strlen(*patterns), err, errlen) != 0) {
            return -1;
        }
    }

    return 0;
}


void
ts_match_free(ts_match_list_t *l)
{
    size_t  i;

    for (i = 0; i < l->n; i++) {
        free(l->items[i].name);
        pcre2_code_free(l->items[i].re);
    }

    free(l->items);
    pcre2_match_context_free(l->ctx);
    l->items = NULL;
    l->ctx = NULL;
    l->n = 0;
}
