/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

/* memmem, as in ts_lexicon.c */
#define _GNU_SOURCE

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_lexicon.h"
#include "ts_search.h"


/* a query's terms: its words and their thesaurus relatives */
#define TS_TERMS_MAX         64
#define TS_SYNONYMS_MAX      16

#define TS_BM25_K1           1.2
#define TS_BM25_B            0.75

/* hybrid weights, tuned on the dev half of docs/search.md's evaluation */
#define TS_W_SYNONYM         0.5
#define TS_W_SEED            0.9
#define TS_W_SERVER          0.5
#define TS_W_COVER           0.25


/* BM25F field weights: hybrid, and the plain baseline */
enum { TS_F_NAME = 0, TS_F_HINT, TS_F_DESC, TS_F_SCHEMA };

static const double  ts_hybrid_weights[] = { 3.0, 2.0, 1.0, 0.5 };
static const double  ts_plain_weights[] = { 1.0, 1.0, 1.0 };


typedef struct {
    const char  *p;
    size_t       len;       /* the word */
    size_t       scan;      /* the prefix searched for: the word's stem */
    double       weight;    /* of its BM25 part; 0: none */
    unsigned     own:1;     /* from the query, not the thesaurus */
    unsigned     seed:1;    /* scored by seed 000's rules */
    unsigned     required:1;
} ts_term_t;


typedef struct {
    char         buf[TS_SEARCH_QUERY_MAX];   /* trimmed, lowercase */
    size_t       len;
    ts_term_t    terms[TS_TERMS_MAX];
    size_t       nterms;
    size_t       nwords;    /* terms from the query itself */
    size_t       nrequired;
    unsigned     whole:1;   /* BM25 counts whole words only */
    unsigned     truncated:1;
} ts_query_t;


/* what one term's scan found in one tool */
typedef struct {
    double       tf;        /* BM25F: weighted, length-normalised */
    double       tf_schema; /* the same in the schema, whose words have
                               a document frequency of their own */
    uint64_t     named;     /* the words of the name it starts */
    uint8_t      seen;
    uint8_t      part;      /* 2: a part is the word, 1: contains it */
    uint8_t      full;      /* the name contains the word */
    uint8_t      hint;      /* \b match in the hint */
    uint8_t      desc;      /* \b match in the description */
} ts_mark_t;


/* the state of a keyword query over the pool */
typedef struct {
    const ts_catalog_t  *c;
    const ts_query_t    *q;
    double              *seed;
    double              *bm;
    uint64_t            *named;     /* the name's words the query found */
    uint8_t             *req;
    ts_mark_t           *marks;
    uint32_t            *touched;
    size_t               ntouched;
    long                 explain;   /* a tool whose points are noted */
    char                *out;
    char                *end;
} ts_rank_t;


int
ts_search_parse_scoring(const char *s, size_t len)
{
    static const char *const  names[] = { "seed", "hybrid", "bm25" };
    size_t                    i;

    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strlen(names[i]) == len && memcmp(names[i], s, len) == 0) {
            return (int) i;
        }
    }

    return -1;
}


const char *
ts_search_scoring_name(int scoring)
{
    return scoring == TS_SCORING_HYBRID ? "hybrid"
           : scoring == TS_SCORING_BM25 ? "bm25" : "seed";
}


static int
ts_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}


static void
ts_trim(const char **s, size_t *len)
{
    while (*len > 0 && ts_space(**s)) {
        (*s)++;
        (*len)--;
    }

    while (*len > 0 && ts_space((*s)[*len - 1])) {
        (*len)--;
    }
}


/* the query trimmed, lowercased and cut to the limit */
static void
ts_query_text(ts_query_t *q, const char *s, size_t len)
{
    size_t  i;

    ts_trim(&s, &len);

    if (len > sizeof(q->buf)) {
        len = sizeof(q->buf);
        q->truncated = 1;
    }

    for (i = 0; i < len; i++) {
        q->buf[i] = ts_ascii_lower(s[i]);
    }

    q->len = len;
}


static ts_term_t *
ts_add_term(ts_query_t *q, const char *p, size_t len, size_t scan)
{
    size_t  i;

    for (i = 0; i < q->nterms; i++) {
        if (q->terms[i].scan == scan && q->terms[i].len == len
            && memcmp(q->terms[i].p, p, len) == 0)
        {
            return NULL;
        }
    }

    if (q->nterms == TS_TERMS_MAX) {
        return NULL;
    }

    memset(&q->terms[q->nterms], 0, sizeof(ts_term_t));
    q->terms[q->nterms].p = p;
    q->terms[q->nterms].len = len;
    q->terms[q->nterms].scan = scan;

    return &q->terms[q->nterms++];
}


/* a word of the query itself; past the limit it is dropped */
static ts_term_t *
ts_add_word(ts_query_t *q, const char *p, size_t len, size_t scan)
{
    ts_term_t  *t;

    if (q->nwords == TS_SEARCH_TERMS_MAX) {
        q->truncated = 1;
        return NULL;
    }

    t = ts_add_term(q, p, len, scan);
    q->nwords += t != NULL;

    return t;
}


/* seed 000: whitespace-separated terms, "+" marks a required one */
static void
ts_seed_terms(ts_query_t *q)
{
    ts_term_t  *t;
    size_t      i, start;
    int         req;

    for (i = 0; i < q->len; i = start) {
        while (i < q->len && ts_space(q->buf[i])) {
            i++;
        }

        for (start = i; start < q->len && !ts_space(q->buf[start]);
             start++)
        { /* void */ }

        req = i < start && q->buf[i] == '+';
        i += req;

        if (i < start && (t = ts_add_word(q, q->buf + i, start - i,
                                          start - i)))
        {
            t->seed = 1;
            t->required = req;
            q->nrequired += req;
        }
    }
}


static void
ts_add_synonyms(ts_query_t *q, const char *w, size_t len)
{
    ts_word_t   syn[TS_SYNONYMS_MAX];
    ts_term_t  *t;
    size_t      n, k, stem;

    n = ts_synonyms(w, len, syn, TS_SYNONYMS_MAX);

    for (k = 0; k < n; k++) {
        stem = ts_stem(syn[k].p, syn[k].len);
        t = ts_add_term(q, syn[k].p, stem, stem);

        if (t != NULL) {
            t->weight = TS_W_SYNONYM;
        }
    }
}


/*
 * Content words: alphanumeric runs without stop words.  The hybrid
 * scorer scores them by the seed's rules too, searches their stems as
 * word prefixes and adds their thesaurus relatives; plain BM25 counts
 * whole words.
 */
static void
ts_content_terms(ts_query_t *q, int hybrid)
{
    ts_term_t   *t;
    const char  *w;
    size_t       i, start, len;

    q->whole = !hybrid;

    for (i = 0; i < q->len; i = start) {
        while (i < q->len && !ts_ascii_alnum((unsigned char) q->buf[i])) {
            i++;
        }

        for (start = i;
             start < q->len && ts_ascii_alnum((unsigned char) q->buf[start]);
             start++)
        { /* void */ }

        w = q->buf + i;
        len = start - i;

        if (len < 2 || ts_stopword(w, len)) {
            continue;
        }

        t = ts_add_word(q, w, len, hybrid ? ts_stem(w, len) : len);

        if (t != NULL) {
            t->weight = 1;
            t->own = 1;
            t->seed = hybrid;

            if (hybrid) {
                ts_add_synonyms(q, w, len);
            }
        }
    }
}


static double
ts_norm(double len, double avg)
{
    return avg > 0 ? 1 - TS_BM25_B + TS_BM25_B * len / avg : 1;
}


/* the whole word, not only its stem, is at text[at] within [s, end) */
static int
ts_word_at(const char *text, size_t at, size_t end, const ts_term_t *t)
{
    return at + t->len <= end
           && memcmp(text + at + t->scan, t->p + t->scan,
                     t->len - t->scan) == 0;
}


/* BM25F: a hit that starts a word (and ends one, for whole words) */
static double
ts_tf(const ts_rank_t *rk, const char *text, const ts_term_t *t, ts_span_t f,
    size_t at, double weight, double norm)
{
    if (!ts_word_start(text, at)
        || (rk->q->whole && !ts_word_end(text, f.off + f.len, at + t->scan)))
    {
        return 0;
    }

    return weight / norm;
}


/* the bit of the alphanumeric word of s that starts at s[at] */
static uint64_t
ts_word_bit(const char *s, size_t at)
{
    size_t  i, k;

    for (i = 1, k = 0; i <= at; i++) {
        k += ts_word_start(s, i) && ts_ascii_alnum((unsigned char) s[i]);
    }

    return k < 64 ? (uint64_t) 1 << k : 0;
}


/* what a hit at text[at] means for its tool, field by field */
static void
ts_mark(const ts_rank_t *rk, const ts_entry_t *e, const ts_term_t *t,
    size_t at, ts_mark_t *m)
{
    const ts_catalog_t  *c;
    const double        *w;
    const char          *text;
    size_t               end;
    int                  word;

    c = rk->c;
    text = c->text;
    w = rk->q->whole ? ts_plain_weights : ts_hybrid_weights;

    if (at < e->words.off) {
        m->full |= ts_word_at(text, at, e->full.off + e->full.len, t);
        return;
    }

    if (at < e->hint.off) {
        end = e->words.off + e->words.len;

        if (ts_word_at(text, at, end, t)) {
            word = (at == e->words.off || text[at - 1] == ' ')
                   && (at + t->len == end || text[at + t->len] == ' ');
            m->part = m->part > 1 + word ? m->part : (uint8_t) (1 + word);
        }

        m->tf += ts_tf(rk, c->text, t, e->words, at, w[TS_F_NAME],
                       ts_norm(e->nparts, c->avg_words));

        if (ts_word_start(text, at)) {
            m->named |= ts_word_bit(text + e->words.off, at - e->words.off);
        }

        return;
    }

    if (at < e->desc.off) {
        m->hint |= ts_word_at(text, at, e->hint.off + e->hint.len, t)
                   && ts_word_bounded(text + e->hint.off, e->hint.len,
                                      at - e->hint.off, t->len);
        m->tf += ts_tf(rk, c->text, t, e->hint, at, w[TS_F_HINT],
                       ts_norm(e->hint_words, c->avg_hint));
        return;
    }

    m->desc |= ts_word_at(text, at, e->desc.off + e->desc.len, t)
               && ts_word_bounded(text + e->desc.off, e->desc.len,
                                  at - e->desc.off, t->len);
    m->tf += ts_tf(rk, c->text, t, e->desc, at, w[TS_F_DESC],
                   ts_norm(e->desc_words, c->avg_desc));
}


/* the hybrid scorer's BM25 part only */
static void
ts_mark_schema(const ts_rank_t *rk, const ts_entry_t *e, const ts_term_t *t,
    size_t at, ts_mark_t *m)
{
    m->tf_schema += ts_tf(rk, rk->c->schemas, t, e->schema, at,
                          ts_hybrid_weights[TS_F_SCHEMA],
                          ts_norm(e->schema_words, rk->c->avg_schema));
}


static ts_mark_t *
ts_touch(ts_rank_t *rk, uint32_t idx)
{
    if (!rk->marks[idx].seen) {
        rk->marks[idx].seen = 1;
        rk->touched[rk->ntouched++] = idx;
    }

    return &rk->marks[idx];
}


/*
 * One pass over the text finds a term in every tool: hits come in text
 * order, and so do the tools they belong to.
 */
static void
ts_scan_text(ts_rank_t *rk, const ts_term_t *t)
{
    const ts_catalog_t  *c;
    const char          *p, *end;
    uint32_t             idx;
    size_t               k, at;

    c = rk->c;
    end = c->text + c->text_len;
    k = 0;

    for (p = c->text;
         p < end && (p = ts_find(p, (size_t) (end - p), t->p, t->scan));
         p++)
    {
        at = (size_t) (p - c->text);

        while (k + 1 < c->npooled && c->tools[c->pool[k + 1]].full.off <= at)
        {
            k++;
        }

        idx = c->pool[k];
        ts_mark(rk, &c->tools[idx], t, at, ts_touch(rk, idx));
    }
}


/* the schemas, where the request body has them, one tool at a time */
static void
ts_scan_schemas(ts_rank_t *rk, const ts_term_t *t)
{
    const ts_catalog_t  *c;
    const ts_entry_t    *e;
    const char          *p, *end;
    size_t               k;

    c = rk->c;

    for (k = 0; k < c->npooled; k++) {
        e = &c->tools[c->pool[k]];
        p = c->schemas + e->schema.off;
        end = p + e->schema.len;

        for ( /* void */ ;
             p < end
             && (p = ts_find_icase(p, (size_t) (end - p), t->p, t->scan));
             p++)
        {
            ts_mark_schema(rk, e, t, (size_t) (p - c->schemas),
                           ts_touch(rk, c->pool[k]));
        }
    }
}


static void
ts_scan(ts_rank_t *rk, const ts_term_t *t)
{
    rk->ntouched = 0;
    ts_scan_text(rk, t);

    /* schemas are long: the query's own words only */
    if (t->own && !rk->q->whole && rk->c->schemas != NULL) {
        ts_scan_schemas(rk, t);
    }
}


/* appends to an explanation, never past its end */
static void
ts_note(ts_rank_t *rk, uint32_t idx, const ts_term_t *t, const char *what,
    int pts)
{
    int  n;

    if ((long) idx != rk->explain || rk->out >= rk->end) {
        return;
    }

    n = snprintf(rk->out, (size_t) (rk->end - rk->out), " %.*s:%s+%d",
                 (int) t->len, t->p, what, pts);

    rk->out += n > 0 ? (size_t) n : 0;

    if (rk->out > rk->end) {
        rk->out = rk->end;
    }
}


/* seed 000, scoreToolForQuery, one term over the tools it touched */
static void
ts_seed_points(ts_rank_t *rk, const ts_term_t *t)
{
    const ts_mark_t  *m;
    uint32_t          idx;
    size_t            i;
    int               mcp, pts;

    for (i = 0; i < rk->ntouched; i++) {
        idx = rk->touched[i];
        m = &rk->marks[idx];
        mcp = rk->c->tools[idx].mcp;
        pts = 0;

        if (m->part) {
            pts = m->part == 2 ? (mcp ? 12 : 10) : (mcp ? 6 : 5);
            ts_note(rk, idx, t, m->part == 2 ? "part" : "in-part", pts);

        } else if (m->full && rk->seed[idx] == 0) {
            pts = 3;
            ts_note(rk, idx, t, "in-name", 3);
        }

        if (m->hint) {
            pts += 4;
            ts_note(rk, idx, t, "hint", 4);
        }

        if (m->desc) {
            pts += 2;
            ts_note(rk, idx, t, "description", 2);
        }

        rk->seed[idx] += pts;
        rk->req[idx] += t->required && (m->full || m->hint || m->desc);
    }
}


static double
ts_idf(size_t n, size_t df)
{
    return log(1 + ((double) n - (double) df + 0.5) / ((double) df + 0.5));
}


static double
ts_saturate(double tf)
{
    return tf * (TS_BM25_K1 + 1) / (tf + TS_BM25_K1);
}


/*
 * A word every schema has ("type", "string") says nothing about a tool
 * even when few descriptions have it: the schema field is weighted by
 * its own document frequency.
 */
static void
ts_bm25_points(ts_rank_t *rk, const ts_term_t *t)
{
    const ts_mark_t  *m;
    double            idf, idf_schema;
    size_t            i, df, df_schema;

    for (i = 0, df = 0, df_schema = 0; i < rk->ntouched; i++) {
        m = &rk->marks[rk->touched[i]];
        df += m->tf > 0;
        df_schema += m->tf_schema > 0;
    }

    idf = ts_idf(rk->c->npooled, df);
    idf_schema = ts_idf(rk->c->npooled, df_schema);

    for (i = 0; i < rk->ntouched; i++) {
        m = &rk->marks[rk->touched[i]];
        rk->bm[rk->touched[i]] += t->weight
                                  * (idf * ts_saturate(m->tf)
                                     + idf_schema * ts_saturate(m->tf_schema));
    }
}


static int
ts_rank_init(ts_rank_t *rk, const ts_catalog_t *c, const ts_query_t *q)
{
    size_t  n;

    memset(rk, 0, sizeof(ts_rank_t));
    rk->c = c;
    rk->q = q;
    rk->explain = -1;
    n = c->ntools ? c->ntools : 1;

    rk->seed = calloc(2 * n, sizeof(double));
    rk->named = calloc(n, sizeof(uint64_t));
    rk->req = calloc(n, 1);
    rk->marks = calloc(n, sizeof(ts_mark_t));
    rk->touched = malloc(n * sizeof(uint32_t));

    if (rk->seed == NULL || rk->named == NULL || rk->req == NULL
        || rk->marks == NULL
        || rk->touched == NULL)
    {
        return -1;
    }

    rk->bm = rk->seed + n;

    return 0;
}


static void
ts_rank_free(ts_rank_t *rk)
{
    free(rk->seed);
    free(rk->named);
    free(rk->req);
    free(rk->marks);
    free(rk->touched);
}


/* every term, scanned once */
static void
ts_rank(ts_rank_t *rk)
{
    const ts_term_t  *t;
    size_t            i, k;

    for (i = 0; i < rk->q->nterms; i++) {
        t = &rk->q->terms[i];
        ts_scan(rk, t);

        if (t->seed) {
            ts_seed_points(rk, t);
        }

        if (t->weight > 0) {
            ts_bm25_points(rk, t);
        }

        for (k = 0; k < rk->ntouched; k++) {
            rk->named[rk->touched[k]] |= rk->marks[rk->touched[k]].named;
            memset(&rk->marks[rk->touched[k]], 0, sizeof(ts_mark_t));
        }
    }
}


static int
ts_hit_cmp(const void *a, const void *b)
{
    const ts_hit_t  *x, *y;

    x = a;
    y = b;

    if (x->score != y->score) {
        return x->score < y->score ? 1 : -1;
    }

    return x->tool < y->tool ? -1 : (x->tool > y->tool);
}


static double
ts_max_of(const double *v, size_t n)
{
    double  m;
    size_t  i;

    for (i = 0, m = 0; i < n; i++) {
        m = v[i] > m ? v[i] : m;
    }

    return m;
}


/* a server name shortened no further than this is still its name */
#define TS_SERVER_PREFIX_MIN  5


/*
 * 1 when a word of the query names the tool's MCP server: the server's
 * name, its first dash-separated part ("azure" for "azure-devops"), or a
 * prefix of that part of 5 letters or more ("mongo" for "mongodb").  A
 * product named in a task is the strongest hint of where the tool lives.
 */
static int
ts_server_named(const ts_catalog_t *c, const ts_query_t *q,
    const ts_entry_t *e)
{
    const ts_term_t  *t;
    const char       *full, *sep, *dash;
    size_t            i, n, first;

    if (!e->mcp) {
        return 0;
    }

    full = ts_catalog_str(c, e->full);
    sep = ts_find(full, e->full.len, "__", 2);
    n = sep ? (size_t) (sep - full) : 0;
    dash = memchr(full, '-', n);
    first = dash ? (size_t) (dash - full) : n;

    for (i = 0; i < q->nterms; i++) {
        t = &q->terms[i];

        if (t->own && (t->len == n || t->len == first
                       || (t->len >= TS_SERVER_PREFIX_MIN && t->len < first))
            && memcmp(t->p, full, t->len) == 0)
        {
            return 1;
        }
    }

    return 0;
}


/*
 * The share of a tool's name the query covers, its MCP server left out:
 * "find my emails" covers all of search_emails (through the thesaurus)
 * and half of send_email or find_releases.
 */
static double
ts_coverage(const ts_catalog_t *c, const ts_entry_t *e, uint64_t named)
{
    const char  *s;
    size_t       i, k, words, server;

    s = ts_catalog_str(c, e->words);
    server = e->mcp && e->nparts > 1 ? c->parts[e->part_first].len : 0;

    for (i = 0, k = 0, words = 0; i < e->words.len && k < 64; i++) {
        if (ts_word_start(s, i) && ts_ascii_alnum((unsigned char) s[i])) {
            named &= i < server ? ~((uint64_t) 1 << k) : ~(uint64_t) 0;
            words += i >= server;
            k++;
        }
    }

    for (k = 0; named; k++) {
        named &= named - 1;
    }

    return words ? (double) k / (double) words : 0;
}


/* the pool's scores for a keyword query; hits past max are dropped */
static int
ts_keywords(const ts_catalog_t *c, const ts_query_t *q, int scoring,
    size_t max, ts_result_t *r)
{
    ts_rank_t  rk;
    double     sm, bmax, s;
    size_t     i;

    if (ts_rank_init(&rk, c, q) != 0) {
        ts_rank_free(&rk);
        return -1;
    }

    ts_rank(&rk);

    /*
     * BM25 relative to the best tool, seed points relative to an exact
     * part match of every word: a lone description match adds little
     */
    sm = 12.0 * (double) (q->nwords ? q->nwords : 1);
    bmax = ts_max_of(rk.bm, c->ntools);

    for (i = 0; i < c->ntools; i++) {
        if (rk.req[i] < q->nrequired) {
            continue;
        }

        s = scoring == TS_SCORING_SEED ? rk.seed[i]
            : scoring == TS_SCORING_BM25 ? rk.bm[i]
            : (bmax > 0 ? rk.bm[i] / bmax : 0) + TS_W_SEED * rk.seed[i] / sm;

        if (scoring == TS_SCORING_HYBRID && s > 0) {
            s += TS_W_SERVER * ts_server_named(c, q, &c->tools[i])
                 + TS_W_COVER * ts_coverage(c, &c->tools[i], rk.named[i]);
        }

        if (s > 0) {
            r->hits[r->nhits].tool = (uint32_t) i;
            r->hits[r->nhits].score = s;
            r->hits[r->nhits].seed = rk.seed[i];
            r->hits[r->nhits++].bm25 = rk.bm[i];
        }
    }

    ts_rank_free(&rk);

    qsort(r->hits, r->nhits, sizeof(ts_hit_t), ts_hit_cmp);

    if (r->nhits > max) {
        r->nhits = max;
    }

    r->kind = TS_QUERY_KEYWORDS;

    return 0;
}


static void
ts_add_hit(ts_result_t *r, size_t tool)
{
    size_t  i;

    for (i = 0; i < r->nhits; i++) {
        if (r->hits[i].tool == tool) {
            return;
        }
    }

    memset(&r->hits[r->nhits], 0, sizeof(ts_hit_t));
    r->hits[r->nhits++].tool = (uint32_t) tool;
}


/* "mcp__server__" lists that server's deferred tools, in order */
static int
ts_prefix(const ts_catalog_t *c, const ts_query_t *q, size_t max,
    ts_result_t *r)
{
    const ts_entry_t  *e;
    const char        *bare;
    size_t             i, blen;

    bare = q->buf + sizeof("mcp__") - 1;
    blen = q->len - (sizeof("mcp__") - 1);

    for (i = 0; i < c->ntools && r->nhits < max; i++) {
        e = &c->tools[i];

        if (e->pooled && e->mcp && e->full.len >= blen
            && memcmp(ts_catalog_str(c, e->full), bare, blen) == 0)
        {
            ts_add_hit(r, i);
        }
    }

    r->kind = TS_QUERY_PREFIX;

    return r->nhits > 0;
}


static int
ts_name_eq(const ts_catalog_t *c, const ts_entry_t *e, const char *s,
    size_t len, int fold)
{
    const char  *name;
    size_t       i;

    if (e->name.len != len) {
        return 0;
    }

    name = ts_catalog_name(c, e);

    for (i = 0; i < len; i++) {
        if (name[i] != s[i]
            && !(fold && ts_ascii_lower(name[i]) == ts_ascii_lower(s[i])))
        {
            return 0;
        }
    }

    return 1;
}


/*
 * seed 000, direct selection: the deferred pool first, then every tool
 * (selecting a loaded tool succeeds, so the model does not retry); exact
 * spelling before case-insensitive
 */
static long
ts_select_one(const ts_catalog_t *c, const char *s, size_t len)
{
    size_t  i;
    int     pass;

    for (pass = 0; pass < 4; pass++) {
        for (i = 0; i < c->ntools; i++) {
            if ((pass & 1 || c->tools[i].pooled)
                && ts_name_eq(c, &c->tools[i], s, len, pass >= 2))
            {
                return (long) i;
            }
        }
    }

    return -1;
}


static void
ts_select(const ts_catalog_t *c, const char *query, size_t len,
    ts_result_t *r)
{
    const char  *p, *end, *e;
    size_t       n, names;
    long         k;

    p = query;
    ts_trim(&p, &len);
    end = p + (len < TS_SEARCH_QUERY_MAX ? len : TS_SEARCH_QUERY_MAX);
    p += sizeof("select:") - 1;

    for (names = 0; p < end; p = e + 1) {
        for (e = p; e < end && *e != ','; e++) { /* void */ }

        while (p < e && ts_space(*p)) {
            p++;
        }

        for (n = (size_t) (e - p); n > 0 && ts_space(p[n - 1]); n--) {
            /* void */
        }

        if (n == 0) {
            continue;
        }

        if (names++ == TS_SEARCH_SELECT_MAX) {
            r->truncated = 1;
            break;
        }

        k = ts_select_one(c, p, n);

        if (k >= 0) {
            ts_add_hit(r, (size_t) k);

        } else {
            r->missing[r->nmissing].off = (uint32_t) (p - query);
            r->missing[r->nmissing++].len = (uint32_t) n;
        }
    }

    r->kind = TS_QUERY_SELECT;
}


static int
ts_starts(const char *s, size_t len, const char *prefix)
{
    size_t  n, i;

    n = strlen(prefix);

    if (len < n) {
        return 0;
    }

    for (i = 0; i < n; i++) {
        if (ts_ascii_lower(s[i]) != prefix[i]) {
            return 0;
        }
    }

    return 1;
}


/* +required terms keep the seed's exact behaviour */
static void
ts_query_terms(ts_query_t *q, int scoring)
{
    ts_seed_terms(q);

    if (scoring != TS_SCORING_SEED && q->nrequired == 0) {
        q->nterms = 0;
        q->nwords = 0;
        ts_content_terms(q, scoring == TS_SCORING_HYBRID);
    }
}


int
ts_search_run(const ts_catalog_t *c, const char *query, size_t len,
    int scoring, size_t max, ts_result_t *r)
{
    ts_query_t  q;
    size_t      cap;

    memset(r, 0, sizeof(ts_result_t));
    memset(&q, 0, sizeof(ts_query_t));

    max = max ? max : TS_SEARCH_DEFAULT;
    cap = c->ntools > TS_SEARCH_SELECT_MAX ? c->ntools : TS_SEARCH_SELECT_MAX;

    r->hits = malloc(cap * sizeof(ts_hit_t));
    r->missing = malloc(TS_SEARCH_SELECT_MAX * sizeof(ts_span_t));

    if (r->hits == NULL || r->missing == NULL) {
        ts_result_free(r);
        return -1;
    }

    ts_query_text(&q, query, len);
    r->truncated = q.truncated;

    if (q.len == 0) {
        r->kind = TS_QUERY_EMPTY;
        return 0;
    }

    if (ts_starts(q.buf, q.len, "select:")) {
        /* names keep their case: the original text is read */
        ts_select(c, query, len, r);
        return 0;
    }

    if (ts_starts(q.buf, q.len, "mcp__") && ts_prefix(c, &q, max, r)) {
        return 0;
    }

    ts_query_terms(&q, scoring);

    if (ts_keywords(c, &q, q.nrequired ? TS_SCORING_SEED : scoring, max, r)
        != 0)
    {
        ts_result_free(r);
        return -1;
    }

    r->truncated |= q.truncated;

    return 0;
}


void
ts_result_free(ts_result_t *r)
{
    free(r->hits);
    free(r->missing);
    r->hits = NULL;
    r->missing = NULL;
    r->nhits = 0;
    r->nmissing = 0;
}


void
ts_search_explain(const ts_catalog_t *c, uint32_t tool, const char *query,
    size_t len, int scoring, char *out, size_t cap)
{
    ts_query_t  q;
    ts_rank_t   rk;

    if (cap == 0) {
        return;
    }

    out[0] = '\0';
    memset(&q, 0, sizeof(ts_query_t));
    ts_query_text(&q, query, len);
    ts_query_terms(&q, scoring);

    if (tool >= c->ntools) {
        return;
    }

    if (ts_rank_init(&rk, c, &q) == 0) {
        rk.explain = tool;
        rk.out = out;
        rk.end = out + cap - 1;
        ts_rank(&rk);
        out[cap - 1] = '\0';
    }

    ts_rank_free(&rk);
}


size_t
ts_search_fallback(const ts_catalog_t *c, char *out, size_t cap)
{
    const ts_entry_t  *e;
    size_t             i, len, left, room;
    int                n;

    /* room for ", and 4294967295 more" */
    if (cap < 32) {
        if (cap > 0) {
            out[0] = '\0';
        }

        return 0;
    }

    room = cap - 24;
    left = c->npooled;

    for (i = 0, len = 0; i < c->ntools; i++) {
        e = &c->tools[i];

        if (!e->pooled) {
            continue;
        }

        if (len + 2 + e->name.len >= room) {
            break;
        }

        if (len > 0) {
            memcpy(out + len, ", ", 2);
            len += 2;
        }

        memcpy(out + len, ts_catalog_name(c, e), e->name.len);
        len += e->name.len;
        left--;
    }

    out[len] = '\0';

    if (left > 0) {
        n = snprintf(out + len, cap - len, "%sand %zu more",
                     len ? ", " : "", left);
        len += n > 0 ? (size_t) n : 0;
    }

    return len;
}
