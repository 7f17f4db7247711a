/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The keyword scorers' pass, shared by its two files: ts_rank.c walks
 * each pooled tool's text and marks the terms it finds there;
 * ts_rank_query.c turns a tool's marks into its seed points, BM25 and
 * coverage.
 */

#ifndef TS_RANK_STATE_H
#define TS_RANK_STATE_H

#include "scan/ts_str.h"
#include "search/ts_rank.h"
#include "search/ts_starts.h"


/* the fields of BM25F */
enum { TS_F_NAME = 0, TS_F_HINT, TS_F_DESC, TS_F_SCHEMA, TS_F_N };


/* what the walk found of one term in the tool under way */
typedef struct {
    double       tf;        /* BM25F: weighted, length-normalised */
    double       tf_schema; /* the same in the schema, whose words have
                               a document frequency of their own */
    uint8_t      part;      /* 2: a part is the word, 1: contains it */
    uint8_t      full;      /* the name contains the word */
    uint8_t      hint;      /* \b match in the hint */
    uint8_t      desc;      /* \b match in the description */
} ts_mark_t;


/* the seed terms in a tool's name */
typedef struct {
    uint64_t     full;      /* the name has them */
    uint64_t     whole;     /* a part is one */
    uint64_t     inside;    /* a part has one */
} ts_named_t;


/* a term's frequencies and seed points in a tool, kept until its IDF
   is known */
typedef struct {
    uint32_t     tool;
    uint32_t     term;
    double       tf;
    double       tf_schema;
    int          pts;
} ts_freq_t;


/* the tool under way */
typedef struct {
    const ts_entry_t  *e;
    uint32_t           idx;
    uint64_t           touched;     /* terms with a mark */
    uint64_t           named;       /* the words of its name terms start */
    uint64_t           server;      /* the words of its MCP server */
    uint32_t           server_len;  /* the bytes of its MCP server's part */
    uint32_t           words;       /* words of its name */
    uint32_t           others;      /* the first 64 without the server's */
    double             norm[TS_F_N];
    ts_mark_t          marks[TS_TERMS_MAX];
} ts_visit_t;


/* terms by their first two bytes: bit i of first[b] for term i, etc. */
typedef struct {
    uint64_t     first[256];
    uint64_t     second[256];
} ts_heads_t;


typedef struct {
    const ts_catalog_t  *c;
    const ts_query_t    *q;
    ts_ranking_t        *r;
    const double        *w;
    ts_heads_t           words;     /* terms found where words start */
    ts_prints_t          word_prints;
    ts_heads_t           heads;     /* seed terms, found in names */
    ts_prints_t          name_prints;
    uint64_t             odd;       /* seed terms no word start begins */
    uint64_t             schema;    /* terms looked for in schemas */
    ts_prints_t          prints;    /* their fingerprints */
    ts_prints_pt         kernel;    /* where prints may be, or NULL */
    ts_named_t          *named;     /* by pool position */
    ts_freq_t           *freqs;
    size_t               nfreqs;
    size_t               cap;
    uint32_t             df[TS_TERMS_MAX];
    uint32_t             df_schema[TS_TERMS_MAX];
    long                 explain;   /* a tool whose points are noted */
    char                *out;
    char                *end;
    unsigned             failed:1;
} ts_rank_t;


/* the set bits of x */
static inline unsigned
ts_count(uint64_t x)
{
    unsigned  n;

    for (n = 0; x; n++) {
        x &= x - 1;
    }

    return n;
}


void ts_rank_tables(ts_rank_t *rk);
void ts_rank_names(ts_rank_t *rk);
void ts_rank_idf(ts_rank_t *rk);
int ts_ranking_init(ts_ranking_t *r, size_t n);

#endif /* TS_RANK_STATE_H */
