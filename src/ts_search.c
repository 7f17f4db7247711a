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


/* BM25 terms of a hybrid query: its words and their thesaurus relatives */
#define TS_BM25_TERMS_MAX    64
#define TS_SYNONYMS_MAX      16

#define TS_BM25_K1           1.2
#define TS_BM25_B            0.75

/* hybrid weights, chosen on docs/search.md's evaluation */
#define TS_W_NAME            3.0
#define TS_W_DESC            1.0
#define TS_W_HINT            2.0
#define TS_W_SYNONYM         0.5
#define TS_W_SEED            0.6


typedef struct {
    const char  *p;
    size_t       len;
    double       weight;
    unsigned     required:1;
} ts_term_t;


typedef struct {
    char         buf[TS_SEARCH_QUERY_MAX];   /* trimmed, lowercase */
    size_t       len;
    ts_term_t    seed[TS_SEARCH_TERMS_MAX];
    size_t       nseed;
    size_t       nrequired;
    ts_term_t    bm[TS_BM25_TERMS_MAX];
    size_t       nbm;
    unsigned     truncated:1;
} ts_query_t;


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


static void
ts_add_seed_term(ts_query_t *q, const char *p, size_t len, int required)
{
    if (len == 0) {
        return;
    }

    if (q->nseed == TS_SEARCH_TERMS_MAX) {
        q->truncated = 1;
        return;
    }

    q->seed[q->nseed].p = p;
    q->seed[q->nseed].len = len;
    q->seed[q->nseed].weight = 1;
    q->seed[q->nseed++].required = required;
    q->nrequired += required;
}


/* seed 000: whitespace-separated terms, "+" marks a required one */
static void
ts_seed_terms(ts_query_t *q)
{
    size_t  i, start;

    for (i = 0; i < q->len; i = start) {
        while (i < q->len && ts_space(q->buf[i])) {
            i++;
        }

        for (start = i; start < q->len && !ts_space(q->buf[start]);
             start++)
        { /* void */ }

        if (i < start && q->buf[i] == '+') {
            ts_add_seed_term(q, q->buf + i + 1, start - i - 1, 1);

        } else {
            ts_add_seed_term(q, q->buf + i, start - i, 0);
        }
    }
}


static void
ts_add_bm_term(ts_query_t *q, const char *p, size_t len, double weight)
{
    size_t  i;

    for (i = 0; i < q->nbm; i++) {
        if (q->bm[i].len == len && memcmp(q->bm[i].p, p, len) == 0) {
            if (q->bm[i].weight < weight) {
                q->bm[i].weight = weight;
            }

            return;
        }
    }

    if (q->nbm < TS_BM25_TERMS_MAX) {
        q->bm[q->nbm].p = p;
        q->bm[q->nbm].len = len;
        q->bm[q->nbm++].weight = weight;
    }
}


/*
 * Content words: alphanumeric runs without stop words.  The hybrid
 * scorer also stems them and adds their thesaurus relatives, and the
 * seed part of its score reads them unstemmed.
 */
static void
ts_content_terms(ts_query_t *q, int hybrid)
{
    ts_word_t    syn[TS_SYNONYMS_MAX];
    const char  *w;
    size_t       i, start, len, n, k;

    for (i = 0; i < q->len; i = start) {
        while (i < q->len && !ts_ascii_alnum((unsigned char) q->buf[i])) {
            i++;
        }

        for (start = i; start < q->len && ts_ascii_alnum((unsigned char) q->buf[start]); start++) {
            /* void */
        }

        w = q->buf + i;
        len = start - i;

        if (len < 2 || ts_stopword(w, len)) {
            continue;
        }

        if (!hybrid) {
            ts_add_bm_term(q, w, len, 1);
            continue;
        }

        ts_add_seed_term(q, w, len, 0);
        ts_add_bm_term(q, w, ts_stem(w, len), 1);

        n = ts_synonyms(w, len, syn, TS_SYNONYMS_MAX);

        for (k = 0; k < n; k++) {
            ts_add_bm_term(q, syn[k].p, ts_stem(syn[k].p, syn[k].len),
                           TS_W_SYNONYM);
        }
    }
}


static int
ts_span_has(const ts_catalog_t *c, ts_span_t s, const ts_term_t *t)
{
    return t->len <= s.len
           && memmem(ts_catalog_str(c, s), s.len, t->p, t->len) != NULL;
}


static int
ts_word_in(const ts_catalog_t *c, ts_span_t s, const ts_term_t *t)
{
    return ts_word_match(ts_catalog_str(c, s), s.len, t->p, t->len);
}


/* 2: a part equals the term, 1: a part contains it, 0: neither */
static int
ts_part_match(const ts_catalog_t *c, const ts_entry_t *e, const ts_term_t *t)
{
    const ts_span_t  *part;
    uint32_t          k;
    int               sub;

    sub = 0;

    for (k = 0; k < e->nparts; k++) {
        part = &c->parts[e->part_first + k];

        if (part->len == t->len
            && memcmp(ts_catalog_str(c, *part), t->p, t->len) == 0)
        {
            return 2;
        }

        sub = sub || ts_span_has(c, *part, t);
    }

    return sub;
}


static int
ts_required_ok(const ts_catalog_t *c, const ts_entry_t *e,
    const ts_query_t *q)
{
    const ts_term_t  *t;
    size_t            i;

    for (i = 0; i < q->nseed; i++) {
        t = &q->seed[i];

        if (t->required && !ts_span_has(c, e->full, t)
            && !ts_word_in(c, e->desc, t) && !ts_word_in(c, e->hint, t))
        {
            return 0;
        }
    }

    return 1;
}


/* appends to an explanation, never past its end */
static void
ts_note(char **out, char *end, const char *what, const ts_term_t *t,
    int pts)
{
    int  n;

    if (*out == NULL || *out >= end) {
        return;
    }

    n = snprintf(*out, (size_t) (end - *out), " %.*s:%s+%d",
                 (int) t->len, t->p, what, pts);

    *out += n > 0 ? (size_t) n : 0;

    if (*out > end) {
        *out = end;
    }
}


/* seed 000, scoreToolForQuery; explains itself when out is set */
static double
ts_seed_score(const ts_catalog_t *c, const ts_entry_t *e, const ts_query_t *q,
    char *out, char *end)
{
    const ts_term_t  *t;
    size_t            i;
    int               score, part;

    score = 0;

    for (i = 0; i < q->nseed; i++) {
        t = &q->seed[i];
        part = ts_part_match(c, e, t);

        if (part == 2) {
            score += e->mcp ? 12 : 10;
            ts_note(&out, end, "part", t, e->mcp ? 12 : 10);

        } else if (part == 1) {
            score += e->mcp ? 6 : 5;
            ts_note(&out, end, "in-part", t, e->mcp ? 6 : 5);

        } else if (score == 0 && ts_span_has(c, e->full, t)) {
            score += 3;
            ts_note(&out, end, "in-name", t, 3);
        }

        if (ts_word_in(c, e->hint, t)) {
            score += 4;
            ts_note(&out, end, "hint", t, 4);
        }

        if (ts_word_in(c, e->desc, t)) {
            score += 2;
            ts_note(&out, end, "description", t, 2);
        }
    }

    return score;
}


static double
ts_norm(double len, double avg)
{
    return avg > 0 ? 1 - TS_BM25_B + TS_BM25_B * len / avg : 1;
}


/* one term's BM25F contribution to every tool of the pool */
static void
ts_bm25_term(const ts_catalog_t *c, const ts_term_t *t, int hybrid,
    double *tf, double *acc)
{
    const ts_entry_t  *e;
    double             idf, n, wn, wh;
    size_t             i, df;
    int                whole;

    whole = !hybrid;
    wn = hybrid ? TS_W_NAME : 1;
    wh = hybrid ? TS_W_HINT : 1;

    for (i = 0, df = 0; i < c->ntools; i++) {
        e = &c->tools[i];
        tf[i] = 0;

        if (!e->pooled) {
            continue;
        }

        n = wn * ts_word_count(ts_catalog_str(c, e->words), e->words.len,
                               t->p, t->len, whole)
            / ts_norm(e->nparts, c->avg_words);
        n += TS_W_DESC * ts_word_count(ts_catalog_str(c, e->desc),
                                       e->desc.len, t->p, t->len, whole)
             / ts_norm(e->desc_words, c->avg_desc);
        n += wh * ts_word_count(ts_catalog_str(c, e->hint), e->hint.len,
                                t->p, t->len, whole)
             / ts_norm(e->hint_words, c->avg_hint);

        tf[i] = n;
        df += n > 0;
    }

    idf = log(1 + ((double) c->npooled - (double) df + 0.5)
                  / ((double) df + 0.5));

    for (i = 0; i < c->ntools; i++) {
        if (tf[i] > 0) {
            acc[i] += t->weight * idf * tf[i] * (TS_BM25_K1 + 1)
                      / (tf[i] + TS_BM25_K1);
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


/* the pool's scores for a keyword query; hits past max are dropped */
static int
ts_keywords(const ts_catalog_t *c, const ts_query_t *q, int scoring,
    size_t max, ts_result_t *r)
{
    double  *seed, *bm, *tf, sm, bmax, s;
    size_t   i;

    seed = calloc(3 * (c->ntools ? c->ntools : 1), sizeof(double));
    if (seed == NULL) {
        return -1;
    }

    bm = seed + c->ntools;
    tf = bm + c->ntools;

    for (i = 0; i < c->ntools; i++) {
        if (c->tools[i].pooled && scoring != TS_SCORING_BM25
            && ts_required_ok(c, &c->tools[i], q))
        {
            seed[i] = ts_seed_score(c, &c->tools[i], q, NULL, NULL);
        }
    }

    for (i = 0; i < q->nbm; i++) {
        ts_bm25_term(c, &q->bm[i], scoring == TS_SCORING_HYBRID, tf, bm);
    }

    /* BM25 relative to the best tool, seed points to an exact part match
     * of every term: a lone description match adds little */
    sm = 12.0 * (double) (q->nseed ? q->nseed : 1);
    bmax = ts_max_of(bm, c->ntools);

    for (i = 0; i < c->ntools; i++) {
        s = scoring == TS_SCORING_SEED ? seed[i]
            : scoring == TS_SCORING_BM25 ? bm[i]
            : (bmax > 0 ? bm[i] / bmax : 0) + TS_W_SEED * seed[i] / sm;

        if (s > 0) {
            r->hits[r->nhits].tool = (uint32_t) i;
            r->hits[r->nhits].score = s;
            r->hits[r->nhits].seed = seed[i];
            r->hits[r->nhits++].bm25 = bm[i];
        }
    }

    free(seed);

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

    name = ts_catalog_str(c, e->name);

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
        q->nseed = 0;
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

    if (cap == 0 || tool >= c->ntools) {
        return;
    }

    memset(&q, 0, sizeof(ts_query_t));
    out[0] = '\0';

    ts_query_text(&q, query, len);
    ts_query_terms(&q, scoring);
    ts_seed_score(c, &c->tools[tool], &q, out, out + cap - 1);
    out[cap - 1] = '\0';
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

        memcpy(out + len, ts_catalog_str(c, e->name), e->name.len);
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
