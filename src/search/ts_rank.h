/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The keyword scorers' pass over a catalogue: one walk over each pooled
 * tool's text finds every term of a query at once, and gives each tool
 * its seed points, its BM25 score and the share of its name the query
 * covers.  Query text is untrusted: terms are compared as bytes.
 */

#ifndef TS_RANK_H
#define TS_RANK_H

#include "search/ts_catalog.h"
#include "search/ts_search.h"


/* a query's terms: its words and their thesaurus relatives */
#define TS_TERMS_MAX  64


typedef struct {
    const char  *p;
    size_t       len;       /* the word */
    size_t       scan;      /* the prefix searched for: the word's stem */
    double       weight;    /* of its BM25 part; 0: none */
    unsigned     own:1;     /* from the query, not the thesaurus */
    unsigned     whole:1;   /* found as a whole word only, and in a name
                               as a whole part */
    unsigned     seed:1;    /* scored by the seed scorer's rules */
    unsigned     required:1;
} ts_term_t;


typedef struct {
    char         buf[TS_SEARCH_QUERY_MAX];   /* trimmed, lowercase */
    size_t       len;
    ts_term_t    terms[TS_TERMS_MAX];
    size_t       nterms;
    size_t       nwords;    /* terms from the query itself */
    size_t       maxwords;  /* their limit */
    size_t       nrequired;
    unsigned     whole:1;   /* BM25 counts whole words only */
    unsigned     truncated:1;
} ts_query_t;


/* what a query found, per catalogue entry */
typedef struct {
    double      *seed;      /* the seed scorer's points */
    double      *bm;        /* BM25 */
    double      *cover;     /* the share of the name (its MCP server left
                               out) whose words the terms start */
    double      *seed_idf;  /* the seed's points, each term's weighted by
                               its IDF relative to the query's rarest
                               word (the hybrid scorer's) */
    double      *found;     /* the share of the query's own words the
                               tool has where BM25 or the seed counts
                               them, each word weighted by its IDF */
    uint8_t     *req;       /* required terms found */
} ts_ranking_t;


/*
 * Scores every pooled tool.  With out set, the seed's points for the
 * tool explain are written there term by term (NUL-terminated, cut to
 * cap bytes).  -1 without memory.
 */
int ts_rank(ts_ranking_t *r, const ts_catalog_t *c, const ts_query_t *q,
    long explain, char *out, size_t cap);

void ts_ranking_free(ts_ranking_t *r);

#endif /* TS_RANK_H */
