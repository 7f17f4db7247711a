/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Name lists from the configuration: exact names and "~regex" patterns
 * (PCRE2), compiled once at configuration time.
 */

#ifndef TS_MATCH_H
#define TS_MATCH_H

#include <stddef.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>


typedef struct {
    char        *name;      /* exact name, or NULL for a regex */
    size_t       len;
    pcre2_code  *re;
} ts_pattern_t;


typedef struct {
    ts_pattern_t         *items;
    size_t                n;
    pcre2_match_context  *ctx;      /* bounds for the regexes, or NULL */
    unsigned long         serial;   /* new with every pattern added: a
                                       list told from one that lay at
                                       its address before (ts_facts.h) */
} ts_match_list_t;


/*
 * adds "name" or "~regex" to the list; on a bad regex returns -1 and
 * writes PCRE2's message and the offset into err
 */
int ts_match_add(ts_match_list_t *l, const char *pattern, size_t len,
    char *err, size_t errlen);

/* adds every pattern of a NULL-terminated array */
int ts_match_add_all(ts_match_list_t *l, const char *const *patterns,
    char *err, size_t errlen);

/* 1 when the subject equals a name or matches a regex of the list */
int ts_match_any(const ts_match_list_t *l, const char *s, size_t len);

/* the index of the first pattern that matches, or -1 (l may be NULL) */
int ts_match_first(const ts_match_list_t *l, const char *s, size_t len);

void ts_match_free(ts_match_list_t *l);

#endif /* TS_MATCH_H */
