/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/ts_lexicon.h"
#include "search/ts_prereq.h"
#include "search/ts_rank.h"


/* relatives a word of the query brings */
#define TS_SYNONYMS_MAX      16

/* hybrid weights, tuned on the dev half of docs/search.md's evaluation */
#define TS_W_SYNONYM         0.6
#define TS_W_SEED            1.2
#define TS_W_SERVER          0.5
#define TS_W_COVER           0.25
/*
 * the share of the query's words (by IDF) a tool has: BM25 saturates
 * per word, so a tool that repeats one word can outweigh one that has
 * every word of the request once
 */
#define TS_W_FOUND           0.2

/*
 * a shorter word of the query is found as a whole word only: as the
 * start of words, two letters ("la", "pr") match whatever begins so
 * (label, private)
 */
#define TS_PREFIX_MIN        3

/*
 * a query of more words brings no thesaurus relatives: a task sentence
 * that long carries its own vocabulary, and the relatives of each of
 * its words only blur it (measured on the public sets' dev halves,
 * docs/search.md)
 */
#define TS_RELATIVES_WORDS_MAX  16

/*
 * a query of this many words or more describes a task, whose first step
 * it may not name: it gets the getter the best tool needs (below); a
 * search of a few words keeps its list (measured on the dev halves,
 * docs/search.md)
 */
#define TS_GETTER_WORDS_MIN     7


const char *const  ts_scoring_names[] = { "seed", "hybrid", "bm25" };

const ts_words_t  ts_scoring_words = TS_WORDS(ts_scoring_names);

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

    if (q->nwords == q->maxwords) {
        q->truncated = 1;
        return NULL;
    }

    t = ts_add_term(q, p, len, scan);
    q->nwords += t != NULL;

    return t;
}


/* whitespace-separated terms, "+" a required one (docs/spec/search.md) */
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


/* relatives leave room for the words of the query that may follow */
static void
ts_add_synonyms(ts_query_t *q, const char *w, size_t len)
{
    ts_word_t   syn[TS_SYNONYMS_MAX];
    ts_term_t  *t;
    size_t      n, k, stem, room;

    n = ts_synonyms(w, len, syn, TS_SYNONYMS_MAX);
    room = TS_TERMS_MAX - (q->maxwords - q->nwords);

    for (k = 0; k < n && q->nterms < room; k++) {
        stem = ts_stem(syn[k].p, syn[k].len);
        t = ts_add_term(q, syn[k].p, stem, stem);

        if (t != NULL) {
            t->weight = TS_W_SYNONYM;
        }
    }
}


/*
 * The next content word of the query from *at: an alphanumeric run of
 * two bytes or more that is no stop word and, with skip, no word around
 * a request.  NULL past the end.
 */
static const char *
ts_content_word(const ts_query_t *q, size_t *at, int skip, size_t *len)
{
    const char  *w;
    size_t       i, start;

    for (i = *at; i < q->len; i = start) {
        while (i < q->len && !ts_ascii_alnum((unsigned char) q->buf[i])) {
            i++;
        }

        for (start = i;
             start < q->len && ts_ascii_alnum((unsigned char) q->buf[start]);
             start++)
        { /* void */ }

        w = q->buf + i;
        *len = start - i;

        if (*len >= 2 && !ts_stopword(w, *len)
            && !(skip && ts_request_word(w, *len)))
        {
            *at = start;
            return w;
        }
    }

    *at = q->len;

    return NULL;
}


/* 1 when the query has more than max content words */
static int
ts_words_over(const ts_query_t *q, int skip, size_t max)
{
    size_t  at, len, n;

    for (at = 0, n = 0; ts_content_word(q, &at, skip, &len); n++) {
        if (n == max) {
            return 1;
        }
    }

    return 0;
}


/*
 * Content words: alphanumeric runs without stop words.  The hybrid
 * scorer leaves out the words around a request too (with skip), takes
 * up to TS_SEARCH_WORDS_MAX of them, scores them by the seed's rules
 * too, searches their stems as word prefixes and adds their thesaurus
 * relatives (to a query of up to TS_RELATIVES_WORDS_MAX words); plain
 * BM25 counts whole words.
 */
static void
ts_content_terms(ts_query_t *q, int hybrid, int skip)
{
    ts_term_t   *t;
    const char  *w;
    size_t       at, len;
    int          relatives;

    q->whole = !hybrid;
    q->maxwords = hybrid ? TS_SEARCH_WORDS_MAX : TS_SEARCH_TERMS_MAX;
    relatives = hybrid && !ts_words_over(q, skip, TS_RELATIVES_WORDS_MAX);

    for (at = 0; (w = ts_content_word(q, &at, skip, &len)); /* void */ ) {
        t = ts_add_word(q, w, len, hybrid ? ts_stem(w, len) : len);

        if (t != NULL) {
            t->weight = 1;
            t->own = 1;
            t->seed = hybrid;
            t->whole = hybrid && len < TS_PREFIX_MIN;

            if (relatives) {
                ts_add_synonyms(q, w, len);
            }
        }
    }
}


static int
ts_hit_cmp(const void *a, const void *b)
{
    const ts_hit_t  *x, *y;

    x = a;
    y = b;

    /* the best first; a tie goes to the tool listed first */
    if (x->score == y->score) {
        return x->tool < y->tool ? -1 : (x->tool > y->tool);
    }

    return x->score < y->score ? 1 : -1;
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

    full = ts_catalog_str(c, e->full);

    for (i = 0; e->mcp && i < q->nterms; i++) {
        t = &q->terms[i];

        /* a word naming the server begins the name: most do not */
        if (!t->own || t->len > e->full.len
            || memcmp(t->p, full, t->len) != 0)
        {
            continue;
        }

        sep = ts_find(full, e->full.len, "__", 2);
        n = sep ? (size_t) (sep - full) : 0;
        dash = memchr(full, '-', n);
        first = dash ? (size_t) (dash - full) : n;

        if (t->len == n || t->len == first
            || (t->len >= TS_SERVER_PREFIX_MIN && t->len < first))
        {
            return 1;
        }
    }

    return 0;
}


/* keeps the max best hits, best first, in ts_hit_cmp's order */
static void
ts_keep_hit(ts_result_t *r, size_t max, const ts_hit_t *h)
{
    size_t  lo, hi, mid, keep;

    if (r->nhits == max && ts_hit_cmp(h, &r->hits[max - 1]) >= 0) {
        return;
    }

    for (lo = 0, hi = r->nhits; lo < hi; /* void */ ) {
        mid = lo + (hi - lo) / 2;

        if (ts_hit_cmp(&r->hits[mid], h) <= 0) {
            lo = mid + 1;

        } else {
            hi = mid;
        }
    }

    keep = r->nhits < max ? r->nhits : max - 1;
    memmove(&r->hits[lo + 1], &r->hits[lo], (keep - lo) * sizeof(ts_hit_t));
    r->hits[lo] = *h;
    r->nhits = keep + 1;
}


/* one tool's score under the scorer; sm and bmax as ts_keywords() has them */
static inline double
ts_score(const ts_catalog_t *c, const ts_query_t *q, const ts_ranking_t *rk,
    int scoring, size_t i, double sm, double bmax)
{
    double  score;

    score = scoring == TS_SCORING_SEED ? rk->seed[i]
            : scoring == TS_SCORING_BM25 ? rk->bm[i]
            : (bmax > 0 ? rk->bm[i] / bmax : 0)
              + TS_W_SEED * rk->seed_idf[i] / sm;

    if (scoring == TS_SCORING_HYBRID && score > 0) {
        score += TS_W_SERVER * ts_server_named(c, q, &c->tools[i])
                 + TS_W_COVER * rk->cover[i]
                 + TS_W_FOUND * rk->found[i];
    }

    return score;
}


/* puts h at place at of the list, moving it there if it is further down */
static void
ts_put_hit(ts_result_t *r, size_t max, size_t at, const ts_hit_t *h)
{
    size_t  i;

    for (i = at; i < r->nhits && r->hits[i].tool != h->tool; i++) {
        /* void */
    }

    if (i == r->nhits && r->nhits < max) {
        r->nhits++;
    }

    if (i == r->nhits) {
        i--;
    }

    memmove(&r->hits[at + 1], &r->hits[at], (i - at) * sizeof(ts_hit_t));
    r->hits[at] = *h;
}


/*
 * The hybrid scorer's fifth place (the last of a default list) goes to
 * a getter the best tool needs first (ts_prereq.h), the best scored of
 * those not above it: a turn that asks for the distance between two
 * cities needs their zip codes, and says nothing of them.  The tools
 * from there on move down one place.  Without memory the list stays as
 * it is.
 */
static void
ts_keep_getter(const ts_catalog_t *c, const ts_query_t *q,
    const ts_ranking_t *rk, size_t max, double sm, double bmax,
    ts_result_t *r)
{
    unsigned char  *mark;
    ts_hit_t        h;
    size_t          i, at;
    double          score;
    int             best;

    at = (max < TS_SEARCH_DEFAULT ? max : TS_SEARCH_DEFAULT) - 1;

    if (at == 0 || r->nhits <= at) {
        return;
    }

    mark = calloc(c->ntools, 1);

    if (mark == NULL) {
        return;
    }

    if (ts_prereq_getters(c, r->hits[0].tool, mark) > 0) {
        for (i = 0; i < at; i++) {
            mark[r->hits[i].tool] = 0;
        }

        for (i = 0, best = -1, score = 0; i < c->ntools; i++) {
            if (!mark[i]) {
                continue;
            }

            h.score = ts_score(c, q, rk, TS_SCORING_HYBRID, i, sm, bmax);

            if (best < 0 || h.score > score) {
                best = (int) i;
                score = h.score;
            }
        }

        if (best >= 0) {
            h.tool = (uint32_t) best;
            h.seed = rk->seed[best];
            h.bm25 = rk->bm[best];
            h.score = score;
            h.getter = 1;
            ts_put_hit(r, max, at, &h);
        }
    }

    free(mark);
}


/* the pool's best max tools for a keyword query */
static int
ts_keywords(const ts_catalog_t *c, const ts_query_t *q, int scoring,
    size_t max, ts_result_t *r)
{
    ts_ranking_t  rk;
    ts_hit_t      h;
    double        sm, bmax;
    size_t        i;

    if (ts_rank(&rk, c, q, -1, NULL, 0) != 0) {
        return -1;
    }

    /*
     * BM25 relative to the best tool, seed points (weighted by IDF)
     * relative to an exact part match of every word: a lone description
     * match adds little
     */
    sm = 12.0 * (double) (q->nwords ? q->nwords : 1);
    bmax = ts_max_of(rk.bm, c->ntools);

    for (i = 0; i < c->ntools; i++) {
        if (rk.req[i] < q->nrequired) {
            continue;
        }

        h.tool = (uint32_t) i;
        h.getter = 0;
        h.seed = rk.seed[i];
        h.bm25 = rk.bm[i];
        h.score = ts_score(c, q, &rk, scoring, i, sm, bmax);

        if (h.score > 0) {
            ts_keep_hit(r, max, &h);
        }
    }

    if (scoring == TS_SCORING_HYBRID && q->nwords >= TS_GETTER_WORDS_MIN) {
        ts_keep_getter(c, q, &rk, max, sm, bmax, r);
    }

    ts_ranking_free(&rk);
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
 * direct selection (docs/spec/search.md): the deferred pool first, then
 * every tool (selecting a loaded tool succeeds, so the model does not
 * retry); exact spelling before case-insensitive
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


/*
 * +required terms keep the seed's exact behaviour.  A query of nothing
 * but the words around a request keeps them: they are all it has.
 */
static void
ts_query_terms(ts_query_t *q, int scoring)
{
    unsigned  cut;
    int       hybrid, skip;

    cut = q->truncated;
    q->maxwords = TS_SEARCH_TERMS_MAX;
    ts_seed_terms(q);
    hybrid = scoring == TS_SCORING_HYBRID;

    for (skip = hybrid;
         scoring != TS_SCORING_SEED && q->nrequired == 0 && skip >= 0;
         skip--)
    {
        q->nterms = 0;
        q->nwords = 0;
        q->truncated = cut;
        ts_content_terms(q, hybrid, skip);

        if (q->nwords > 0) {
            break;
        }
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
    ts_query_t    q;
    ts_ranking_t  rk;

    if (cap == 0) {
        return;
    }

    out[0] = '\0';
    memset(&q, 0, sizeof(ts_query_t));
    ts_query_text(&q, query, len);
    ts_query_terms(&q, scoring);

    if (tool < c->ntools && ts_rank(&rk, c, &q, tool, out, cap) == 0) {
        ts_ranking_free(&rk);
    }
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
