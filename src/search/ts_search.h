/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Tool search over a prepared catalogue (docs/spec/search.md): select:,
 * the mcp__ prefix fast path, keyword scoring with +required terms, and a
 * hybrid ranking for natural-language queries.
 * Query text comes from the model: nothing derived from it is compiled.
 */

#ifndef TS_SEARCH_H
#define TS_SEARCH_H

#include "rewrite/ts_policy.h"
#include "search/ts_catalog.h"


#define TS_SEARCH_QUERY_MAX    1024    /* bytes of a query that are read */
#define TS_SEARCH_TERMS_MAX    16      /* terms of a keyword query */
#define TS_SEARCH_WORDS_MAX    32      /* words of a hybrid query: a task
                                          sentence has more */
#define TS_SEARCH_SELECT_MAX   32      /* names of a select: query */
#define TS_SEARCH_DEFAULT      5       /* results when none are asked for */
#define TS_SEARCH_FALLBACK_MAX 4096    /* bytes of a no-match name list */


typedef enum {
    TS_QUERY_EMPTY = 0,
    TS_QUERY_SELECT,
    TS_QUERY_PREFIX,
    TS_QUERY_KEYWORDS
} ts_query_kind_t;


typedef struct {
    uint32_t    tool;       /* catalogue entry */
    double      score;
    double      seed;       /* the seed scorer's points */
    double      bm25;       /* the BM25 part */
    unsigned    getter:1;   /* in the getter's place, out of score order
                               (the hybrid scorer, docs/search.md) */
} ts_hit_t;


typedef struct {
    int         kind;       /* ts_query_kind_t */
    ts_hit_t   *hits;       /* best first */
    size_t      nhits;
    ts_span_t  *missing;    /* select: names not found, into the query */
    size_t      nmissing;
    unsigned    truncated:1;    /* the query was longer than the limits */
} ts_result_t;


/*
 * The scorers' words, in the order of ts_scoring_t: the configuration
 * offers those before TS_SCORING_BM25, the command line all.
 */
extern const char *const  ts_scoring_names[];
extern const ts_words_t   ts_scoring_words;

/*
 * Runs a query over the catalogue and returns at most max hits (select:
 * returns every name it finds).  -1 only without memory.
 */
int ts_search_run(const ts_catalog_t *c, const char *query, size_t len,
    int scoring, size_t max, ts_result_t *r);

void ts_result_free(ts_result_t *r);

/*
 * The fallback of a query that found nothing (docs/spec/search.md): the
 * names of the pool, comma-separated, cut at cap bytes with "and N more".
 * Returns the length written; out is NUL-terminated.
 */
size_t ts_search_fallback(const ts_catalog_t *c, char *out, size_t cap);

/*
 * Writes how the seed scorer scored a tool, term by term, into out
 * (NUL-terminated, truncated to cap).
 */
void ts_search_explain(const ts_catalog_t *c, uint32_t tool,
    const char *query, size_t len, int scoring, char *out, size_t cap);

#endif /* TS_SEARCH_H */
