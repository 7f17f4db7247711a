/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/ts_rank_state.h"


#define TS_BM25_B    0.75


/* BM25F field weights, by TS_F_*: hybrid, and the plain baseline */
static const double  ts_hybrid_weights[] = { 3.0, 2.0, 1.0, 0.5 };
static const double  ts_plain_weights[] = { 1.0, 1.0, 1.0, 0.0 };


static double
ts_norm(double len, double avg)
{
    return avg > 0 ? 1 - TS_BM25_B + TS_BM25_B * len / avg : 1;
}


static void
ts_visit_begin(ts_rank_t *rk, ts_visit_t *v, uint32_t idx)
{
    const ts_catalog_t  *c;
    const ts_entry_t    *e;

    c = rk->c;
    e = &c->tools[idx];

    v->e = e;
    v->idx = idx;
    v->touched = 0;
    v->named = 0;
    v->server = 0;
    v->words = 0;
    v->others = 0;
    v->server_len = e->mcp && e->nparts > 1
                    ? c->parts[e->part_first].len : 0;

    v->norm[TS_F_NAME] = ts_norm(e->nparts, c->avg_words);
    v->norm[TS_F_HINT] = ts_norm(e->hint_words, c->avg_hint);
    v->norm[TS_F_DESC] = ts_norm(e->desc_words, c->avg_desc);
    v->norm[TS_F_SCHEMA] = ts_norm(e->schema_words, c->avg_schema);
}


static ts_mark_t *
ts_mark(ts_visit_t *v, size_t term)
{
    if (!(v->touched & TS_BIT(term))) {
        v->touched |= TS_BIT(term);
        memset(&v->marks[term], 0, sizeof(ts_mark_t));
    }

    return &v->marks[term];
}


/* what the names scan found in the tool at pool position k */
static void
ts_visit_names(ts_rank_t *rk, ts_visit_t *v, size_t k)
{
    const ts_named_t  *nm;
    ts_mark_t         *m;
    uint64_t           bits;
    size_t             i;

    nm = &rk->named[k];

    for (bits = nm->full; bits; bits &= bits - 1) {
        i = ts_ctz(bits);
        m = ts_mark(v, i);
        m->full = 1;
        m->part = nm->whole & TS_BIT(i) ? 2 : (nm->inside & TS_BIT(i)) != 0;
    }
}


/* terms are short: a loop beats a call to memcmp */
static int
ts_same(const char *a, const char *b, size_t n)
{
    size_t  i;

    for (i = 0; i < n && a[i] == b[i]; i++) { /* void */ }

    return i == n;
}


/*
 * The term's prefix searched for is at text[at], within [.., end); the
 * tables that chose the term matched its first two bytes already
 */
static int
ts_prefix_at(const char *text, size_t at, size_t end, const ts_term_t *t)
{
    size_t  known;

    known = t->scan < 2 ? t->scan : 2;

    return at + t->scan <= end
           && ts_same(text + at + known, t->p + known, t->scan - known);
}


/* the whole word, not only its prefix, is at text[at] */
static int
ts_word_at(const char *text, size_t at, size_t end, const ts_term_t *t)
{
    return at + t->len <= end
           && ts_same(text + at + t->scan, t->p + t->scan, t->len - t->scan);
}


/* BM25F: a prefix at a word start, which must end a word for whole words */
static double
ts_tf(const ts_rank_t *rk, const ts_visit_t *v, const char *text,
    size_t end, size_t at, const ts_term_t *t, int field)
{
    if ((rk->q->whole || t->whole) && !ts_word_end(text, end, at + t->scan)) {
        return 0;
    }

    return rk->w[field] / v->norm[field];
}


/*
 * A word of the name: counted (for the share of the name a query
 * covers), and noted for every term it starts
 */
static void
ts_rank_name_word(ts_rank_t *rk, ts_visit_t *v, size_t at, uint64_t cand)
{
    const ts_entry_t  *e;
    const ts_term_t   *t;
    const char        *text;
    uint64_t           bit;
    size_t             i, end;

    e = v->e;
    text = rk->c->text;
    end = e->words.off + e->words.len;
    bit = v->words < 64 ? TS_BIT(v->words) : 0;
    v->words++;

    if (at - e->words.off < v->server_len) {
        v->server |= bit;

    } else {
        v->others += bit != 0;
    }

    for ( /* void */ ; cand; cand &= cand - 1) {
        i = ts_ctz(cand);
        t = &rk->q->terms[i];

        if (ts_prefix_at(text, at, end, t)) {
            ts_mark(v, i)->tf += ts_tf(rk, v, text, end, at, t, TS_F_NAME);
            v->named |= bit;
        }
    }
}


/* the terms starting at text[at] in the hint or the description */
static void
ts_rank_prose(ts_rank_t *rk, ts_visit_t *v, size_t at, uint64_t cand)
{
    const ts_term_t  *t;
    const char       *text;
    ts_span_t         f;
    ts_mark_t        *m;
    size_t            i, end;
    int               field, bounded;

    field = at < v->e->desc.off ? TS_F_HINT : TS_F_DESC;
    f = field == TS_F_HINT ? v->e->hint : v->e->desc;
    text = rk->c->text;
    end = f.off + f.len;

    for ( /* void */ ; cand; cand &= cand - 1) {
        i = ts_ctz(cand);
        t = &rk->q->terms[i];

        if (!ts_prefix_at(text, at, end, t)) {
            continue;
        }

        m = ts_mark(v, i);
        m->tf += ts_tf(rk, v, text, end, at, t, field);

        bounded = t->seed && ts_word_at(text, at, end, t)
                  && ts_word_bounded(text + f.off, f.len, at - f.off,
                                     t->len);

        if (field == TS_F_HINT) {
            m->hint |= bounded;

        } else {
            m->desc |= bounded;
        }
    }
}


/*
 * The places of the chunks from p of a text where a word of t may
 * begin, into places; returns the number of chunks
 */
static size_t
ts_places(const ts_rank_t *rk, const ts_prints_t *t, const char *p,
    const char *end, const char *limit, uint64_t *carry, uint64_t *places)
{
    /* without a kernel, the word starts are fewer than every place */
    if (rk->kernel == NULL) {
        places[0] = ts_word_starts(p, end, limit, carry);
        return 1;
    }

    return ts_prints_places(rk->kernel, t, p, end, limit, places);
}


/* a walk over the word starts of the name parts, all of them counted */
static void
ts_rank_name_words(ts_rank_t *rk, ts_visit_t *v)
{
    const ts_heads_t  *h;
    const char        *text, *p, *end, *limit;
    uint64_t           bits, carry;
    size_t             at;

    h = &rk->words;
    text = rk->c->text;
    end = text + v->e->words.off + v->e->words.len;
    limit = text + rk->c->text_len + TS_CHUNK;

    for (p = text + v->e->words.off, carry = 0; p < end; p += TS_CHUNK) {
        for (bits = ts_word_starts(p, end, limit, &carry); bits;
             bits &= bits - 1)
        {
            at = (size_t) (p - text) + ts_ctz(bits);
            ts_rank_name_word(rk, v, at,
                              h->first[(unsigned char) text[at]]
                              & h->second[(unsigned char) text[at + 1]]);
        }
    }
}


/* the terms at the places of a chunk of hint and description */
static void
ts_prose_chunk(ts_rank_t *rk, ts_visit_t *v, size_t base, uint64_t bits)
{
    const ts_heads_t  *h;
    const char        *text;
    uint64_t           cand;
    size_t             at;

    h = &rk->words;
    text = rk->c->text;

    for ( /* void */ ; bits; bits &= bits - 1) {
        at = base + ts_ctz(bits);
        cand = h->first[(unsigned char) text[at]]
               & h->second[(unsigned char) text[at + 1]];

        if (cand && ts_word_start(text, at)) {
            ts_rank_prose(rk, v, at, cand);
        }
    }
}


/* the hint and the description, which are NUL-separated */
static void
ts_rank_text(ts_rank_t *rk, ts_visit_t *v)
{
    const char  *text, *p, *end, *limit;
    uint64_t     places[TS_RUN], carry;
    size_t       i, n;

    text = rk->c->text;
    end = text + v->e->desc.off + v->e->desc.len;
    limit = text + rk->c->text_len + TS_CHUNK;

    for (p = text + v->e->hint.off, carry = 0; p < end; p += n * TS_CHUNK) {
        n = ts_places(rk, &rk->word_prints, p, end, limit, &carry, places);

        for (i = 0; i < n; i++) {
            ts_prose_chunk(rk, v, (size_t) (p - text) + i * TS_CHUNK,
                           places[i]);
        }
    }
}


/* seed terms that start with no letter or digit, in hint and description */
static void
ts_rank_odd(ts_rank_t *rk, ts_visit_t *v)
{
    const ts_term_t  *t;
    const char       *s, *p;
    ts_span_t         f;
    uint64_t          bits;
    size_t            i, at;
    int               field;

    for (bits = rk->odd; bits; bits &= bits - 1) {
        i = ts_ctz(bits);
        t = &rk->q->terms[i];

        for (field = TS_F_HINT; field <= TS_F_DESC; field++) {
            f = field == TS_F_HINT ? v->e->hint : v->e->desc;
            s = ts_catalog_str(rk->c, f);

            for (p = s;
                 (p = ts_find(p, f.len - (size_t) (p - s), t->p, t->len));
                 p++)
            {
                at = (size_t) (p - s);

                if (ts_word_bounded(s, f.len, at, t->len)) {
                    *(field == TS_F_HINT ? &ts_mark(v, i)->hint
                                         : &ts_mark(v, i)->desc) = 1;
                }
            }
        }
    }
}


/* the terms starting at s[0] in an input schema, ignoring case */
static void
ts_rank_schema_word(ts_rank_t *rk, ts_visit_t *v, const char *s,
    const char *end, uint64_t cand)
{
    const ts_term_t  *t;
    size_t            i;

    for ( /* void */ ; cand; cand &= cand - 1) {
        i = ts_ctz(cand);
        t = &rk->q->terms[i];

        if ((size_t) (end - s) >= t->scan && ts_same_icase(s, t->p, t->scan)) {
            ts_mark(v, i)->tf_schema += rk->w[TS_F_SCHEMA]
                                        / v->norm[TS_F_SCHEMA];
        }
    }
}


/* the terms at the places of a schema's chunk at p */
static void
ts_schema_chunk(ts_rank_t *rk, ts_visit_t *v, const char *p,
    const char *end, uint64_t bits)
{
    const char  *body, *s;
    uint64_t     cand;

    body = rk->c->schemas;

    for ( /* void */ ; bits; bits &= bits - 1) {
        s = p + ts_ctz(bits);

        if (!ts_word_start(body, (size_t) (s - body))) {
            continue;
        }

        cand = rk->words.first[(unsigned char) s[0]] & rk->schema;

        /* the second byte is read only where it can be */
        if (cand && s + 1 < end) {
            ts_rank_schema_word(rk, v, s, end,
                                cand & rk->words.second[(unsigned char) s[1]]);
        }
    }
}


/* the input schema, where the request body has it */
static void
ts_rank_schema(ts_rank_t *rk, ts_visit_t *v)
{
    const char  *body, *start, *end, *limit, *p;
    uint64_t     places[TS_RUN], carry;
    size_t       i, n;

    body = rk->c->schemas;
    start = body + v->e->schema.off;
    end = start + v->e->schema.len;
    limit = body + rk->c->schemas_len;
    carry = !ts_word_start(body, v->e->schema.off);

    for (p = start; p < end; p += n * TS_CHUNK) {
        n = ts_places(rk, &rk->prints, p, end, limit, &carry, places);

        for (i = 0; i < n; i++) {
            ts_schema_chunk(rk, v, p + i * TS_CHUNK, end, places[i]);
        }
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


/* the seed scorer's points of one term (docs/spec/search.md) */
static int
ts_seed_points(ts_rank_t *rk, uint32_t idx, const ts_term_t *t,
    const ts_mark_t *m)
{
    double  *seed;
    int      mcp, pts;

    seed = &rk->r->seed[idx];
    mcp = rk->c->tools[idx].mcp;
    pts = 0;

    if (t->whole && m->part != 2) {
        /* inside a part or a name: a short word is no evidence */

    } else if (m->part) {
        pts = m->part == 2 ? (mcp ? 12 : 10) : (mcp ? 6 : 5);
        ts_note(rk, idx, t, m->part == 2 ? "part" : "in-part", pts);

    } else if (m->full && *seed == 0) {
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

    *seed += pts;
    rk->r->req[idx] += t->required && (m->full || m->hint || m->desc);

    return pts;
}


static void
ts_keep_freq(ts_rank_t *rk, uint32_t idx, size_t term, const ts_mark_t *m,
    int pts)
{
    ts_freq_t  *f;
    size_t      cap;

    if (rk->nfreqs == rk->cap) {
        cap = rk->cap ? 2 * rk->cap : 64 + rk->c->npooled;
        f = realloc(rk->freqs, cap * sizeof(ts_freq_t));

        if (f == NULL) {
            rk->failed = 1;
            return;
        }

        rk->freqs = f;
        rk->cap = cap;
    }

    f = &rk->freqs[rk->nfreqs++];
    f->tool = idx;
    f->term = (uint32_t) term;
    f->tf = m->tf;
    f->tf_schema = m->tf_schema;
    f->pts = pts;

    rk->df[term] += m->tf > 0;
    rk->df_schema[term] += m->tf_schema > 0;
}


/*
 * The share of a tool's name the query covers, its MCP server left out:
 * "find my emails" covers all of search_emails (through the thesaurus)
 * and half of send_email or find_releases.
 */
static double
ts_coverage(const ts_visit_t *v)
{
    return v->others ? (double) ts_count(v->named & ~v->server)
                       / (double) v->others
                     : 0;
}


/* the tool's marks, term by term in query order, become its scores */
static void
ts_visit_end(ts_rank_t *rk, ts_visit_t *v)
{
    const ts_term_t  *t;
    const ts_mark_t  *m;
    uint64_t          bits;
    size_t            i;
    int               pts;

    for (bits = v->touched; bits; bits &= bits - 1) {
        i = ts_ctz(bits);
        t = &rk->q->terms[i];
        m = &v->marks[i];
        pts = t->seed ? ts_seed_points(rk, v->idx, t, m) : 0;

        if ((t->weight > 0 && (m->tf > 0 || m->tf_schema > 0)) || pts > 0) {
            ts_keep_freq(rk, v->idx, i, m, pts);
        }
    }

    rk->r->cover[v->idx] = ts_coverage(v);
}


int
ts_rank(ts_ranking_t *r, const ts_catalog_t *c, const ts_query_t *q,
    long explain, char *out, size_t cap)
{
    ts_rank_t   rk;
    ts_visit_t  v;
    size_t      k;

    memset(r, 0, sizeof(ts_ranking_t));

    if (ts_ranking_init(r, c->ntools) != 0) {
        return -1;
    }

    memset(&rk, 0, sizeof(ts_rank_t));
    rk.c = c;
    rk.q = q;
    rk.r = r;
    rk.w = q->whole ? ts_plain_weights : ts_hybrid_weights;
    rk.explain = explain;
    rk.kernel = ts_prints_kernel();
    rk.out = out;
    rk.end = out ? out + cap - 1 : NULL;
    ts_rank_tables(&rk);

    rk.named = calloc(c->npooled ? c->npooled : 1, sizeof(ts_named_t));
    if (rk.named == NULL) {
        ts_ranking_free(r);
        return -1;
    }

    ts_rank_names(&rk);

    for (k = 0; q->nterms > 0 && k < c->npooled; k++) {
        ts_visit_begin(&rk, &v, c->pool[k]);
        ts_visit_names(&rk, &v, k);
        ts_rank_name_words(&rk, &v);
        ts_rank_text(&rk, &v);
        ts_rank_odd(&rk, &v);

        if (rk.schema) {
            ts_rank_schema(&rk, &v);
        }

        ts_visit_end(&rk, &v);
    }

    ts_rank_idf(&rk);
    free(rk.freqs);
    free(rk.named);

    if (out != NULL) {
        out[cap - 1] = '\0';
    }

    if (rk.failed) {
        ts_ranking_free(r);
        return -1;
    }

    return 0;
}
