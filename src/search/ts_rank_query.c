/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/ts_rank_state.h"


#define TS_BM25_K1   1.2


/* a term's bit for a byte and, with fold, for a letter's capital too */
static void
ts_head_set(uint64_t *table, unsigned char c, uint64_t bit, int fold)
{
    table[c] |= bit;

    if (fold && c >= 'a' && c <= 'z') {
        table[c - 'a' + 'A'] |= bit;
    }
}


static void
ts_heads_add(ts_heads_t *h, const ts_term_t *t, uint64_t bit, int fold)
{
    size_t  k;

    ts_head_set(h->first, (unsigned char) t->p[0], bit, fold);

    for (k = 0; t->scan < 2 && k < 256; k++) {
        h->second[k] |= bit;
    }

    if (t->scan >= 2) {
        ts_head_set(h->second, (unsigned char) t->p[1], bit, fold);
    }
}


/*
 * Terms are found where a word starts, by their first two bytes in
 * either case (the text is lowercase, schemas are not); seed terms are
 * found anywhere in names (lowercase too), and a seed term that starts
 * with no letter or digit ("(a", "-x") anywhere in hints and
 * descriptions, on its own.
 */
void
ts_rank_tables(ts_rank_t *rk)
{
    const ts_term_t  *t;
    uint64_t          bit;
    size_t            i;

    for (i = 0; i < rk->q->nterms; i++) {
        t = &rk->q->terms[i];
        bit = TS_BIT(i);

        if (t->seed) {
            ts_heads_add(&rk->heads, t, bit, 0);
            ts_prints_add(&rk->name_prints, t->p, t->len, i);
        }

        if (!ts_ascii_alnum((unsigned char) t->p[0])) {
            rk->odd |= bit;
            continue;
        }

        ts_heads_add(&rk->words, t, bit, 1);
        ts_prints_add(&rk->word_prints, t->p, t->scan, i);

        if (t->own && !rk->q->whole && rk->c->schemas) {
            ts_prints_add(&rk->prints, t->p, t->scan,
                          ts_count(rk->schema));
            rk->schema |= bit;
        }
    }
}


/* the part of the name a seed term is: a whole part, or inside one */
static void
ts_name_part(const ts_catalog_t *c, const ts_entry_t *e, const ts_term_t *t,
    uint64_t bit, ts_named_t *nm)
{
    const char  *s, *p;
    size_t       n, at;

    s = ts_catalog_str(c, e->words);
    n = e->words.len;

    for (p = s; (p = ts_find(p, n - (size_t) (p - s), t->p, t->len)); p++) {
        at = (size_t) (p - s);

        if ((at == 0 || s[at - 1] == ' ')
            && (at + t->len == n || s[at + t->len] == ' '))
        {
            nm->whole |= bit;
            return;
        }

        nm->inside |= bit;
    }
}


/* the seed terms cand that begin at text[at], in the name of pool[k] */
static void
ts_name_hits(ts_rank_t *rk, size_t k, size_t at, uint64_t cand)
{
    const ts_catalog_t  *c;
    const ts_entry_t    *e;
    const ts_term_t     *t;
    ts_named_t          *nm;
    size_t               i;

    c = rk->c;
    e = &c->tools[c->pool[k]];
    nm = &rk->named[k];

    for (cand &= ~nm->full; cand; cand &= cand - 1) {
        i = ts_ctz(cand);
        t = &rk->q->terms[i];

        if (at + t->len <= e->full.off + e->full.len
            && memcmp(c->text + at, t->p, t->len) == 0)
        {
            nm->full |= TS_BIT(i);
            ts_name_part(c, e, t, TS_BIT(i), nm);
        }
    }
}


/* the seed terms at the places of a chunk of the names, text[base..] */
static void
ts_name_chunk(ts_rank_t *rk, size_t base, uint64_t bits, size_t *k)
{
    const ts_catalog_t  *c;
    const char          *text;
    uint64_t             cand;
    size_t               at;

    c = rk->c;
    text = c->text;

    for ( /* void */ ; bits; bits &= bits - 1) {
        at = base + ts_ctz(bits);
        cand = rk->heads.first[(unsigned char) text[at]]
               & rk->heads.second[(unsigned char) text[at + 1]];

        if (cand == 0) {
            continue;
        }

        while (*k + 1 < c->npooled && c->tools[c->pool[*k + 1]].full.off <= at)
        {
            (*k)++;
        }

        ts_name_hits(rk, *k, at, cand);
    }
}


/*
 * The names containing a seed term, and their parts (docs/spec/search.md).
 * The names lie one after the other at the start of the text, in pool
 * order: one walk finds every seed term in every name.
 */
void
ts_rank_names(ts_rank_t *rk)
{
    const char  *text, *p, *end, *limit;
    uint64_t     places[TS_RUN];
    size_t       i, n, k;

    text = rk->c->text;
    end = text + rk->c->full_len;
    limit = text + rk->c->text_len + TS_CHUNK;

    for (p = text, k = 0; p < end; p += n * TS_CHUNK) {
        n = ts_prints_places(rk->kernel, &rk->name_prints, p, end, limit,
                            places);

        for (i = 0; i < n; i++) {
            ts_name_chunk(rk, (size_t) (p - text) + i * TS_CHUNK, places[i],
                          &k);
        }
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
 * The parts of a score that need the terms' IDF.  BM25: a word every
 * schema has ("type", "string") says nothing about a tool even when few
 * descriptions have it, so the schema field is weighted by its own
 * document frequency.  The seed's points, for the hybrid scorer: each
 * term's scaled by its IDF relative to the rarest of the query's words,
 * so that a common word that is a part of dozens of names ("test",
 * "find") counts less than the rare one that tells the tools apart.
 * And the share of the query's own words a tool has, weighted the same
 * way, for the hybrid scorer.
 */
void
ts_rank_idf(ts_rank_t *rk)
{
    const ts_term_t  *t;
    const ts_freq_t  *f;
    double            idf[TS_TERMS_MAX], idf_schema[TS_TERMS_MAX], top, own;
    size_t            i;

    for (i = 0, top = 0, own = 0; i < rk->q->nterms; i++) {
        idf[i] = ts_idf(rk->c->npooled, rk->df[i]);
        idf_schema[i] = ts_idf(rk->c->npooled, rk->df_schema[i]);
        top = rk->q->terms[i].seed && idf[i] > top ? idf[i] : top;
        own += rk->q->terms[i].own ? idf[i] : 0;
    }

    for (i = 0; i < rk->nfreqs; i++) {
        f = &rk->freqs[i];
        t = &rk->q->terms[f->term];

        if (t->weight > 0) {
            rk->r->bm[f->tool] += t->weight
                                  * (idf[f->term] * ts_saturate(f->tf)
                                     + idf_schema[f->term]
                                       * ts_saturate(f->tf_schema));
        }

        rk->r->seed_idf[f->tool] += top > 0 ? f->pts * idf[f->term] / top
                                            : 0;
        rk->r->found[f->tool] += t->own && own > 0 ? idf[f->term] / own : 0;
    }
}


int
ts_ranking_init(ts_ranking_t *r, size_t n)
{
    n = n ? n : 1;
    r->seed = calloc(5 * n, sizeof(double));
    r->req = calloc(n, 1);

    if (r->seed == NULL || r->req == NULL) {
        ts_ranking_free(r);
        return -1;
    }

    r->bm = r->seed + n;
    r->cover = r->bm + n;
    r->seed_idf = r->cover + n;
    r->found = r->seed_idf + n;

    return 0;
}


void
ts_ranking_free(ts_ranking_t *r)
{
    free(r->seed);
    free(r->req);
    memset(r, 0, sizeof(ts_ranking_t));
}
