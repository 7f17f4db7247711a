/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Fuzz target: the model's search queries over the real catalogue of
 * t/search (its mcp__ tools deferred, hints on some).  The input's first
 * byte picks the scoring, the second the result count; the rest is the
 * query.  Properties: at most the results asked for, each a distinct
 * tool of the catalogue, keyword results from the deferred pool and best
 * first; the same query gives the same answer; the no-match list and
 * the explanation stay within their buffers.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fz.h"
#include "search/ts_search.h"


static ts_catalog_t    fz_cat;
static ts_index_t      fz_ix;


/* the catalogue file as the tools of a request body */
static void
fz_catalogue(void)
{
    static const char  head[] = "{\"model\":\"m\",\"messages\":[],\"tools\":";
    FILE              *f;
    char              *body;
    long               n;
    size_t             i;
    unsigned char     *pool;
    fz_policy_t        pol;
    ts_hints_t         hints;
    static const uint8_t  bytes[FZ_POLICY_BYTES] = { 0, 0, 0, 0, 0, 0, 0,
                                                     0x40 };

    f = fopen(FZ_CATALOGUE, "rb");
    fz_assert(f != NULL, "open " FZ_CATALOGUE " (run from the repository)");
    fz_assert(fseek(f, 0, SEEK_END) == 0, "seek");
    n = ftell(f);
    fz_assert(n > 0, "size");
    rewind(f);

    body = malloc(sizeof(head) + n + 1);
    fz_assert(body != NULL, "memory");
    memcpy(body, head, sizeof(head) - 1);
    fz_assert(fread(body + sizeof(head) - 1, 1, n, f) == (size_t) n, "read");
    body[sizeof(head) - 1 + n] = '}';
    fclose(f);

    fz_assert(ts_index_build(&fz_ix, body, sizeof(head) + n) == TS_OK,
              "the catalogue indexes");

    pool = calloc(fz_ix.ntools, 1);
    fz_assert(pool != NULL, "memory");

    for (i = 0; i < fz_ix.ntools; i++) {
        pool[i] = fz_ix.tools[i].name.kind == TS_STRING
                  && fz_ix.tools[i].name.len > 7
                  && memcmp(body + fz_ix.tools[i].name.off + 1, "mcp__", 5)
                     == 0;
    }

    /* the policy's hint list: "~^mcp__[a-m]" */
    fz_policy(&pol, bytes);
    hints.names = pol.p.hint_names;
    hints.phrases = pol.phrases;

    fz_assert(ts_catalog_build(&fz_cat, &fz_ix, pool, &hints, 1) == 0,
              "the catalogue builds");
    free(pool);
}


/*
 * Keyword results come best first, but for the one getter's place of the
 * hybrid scorer: the fifth, or the last of a shorter list
 */
static void
fz_check_result(const ts_result_t *r, size_t max)
{
    size_t  i, k, getters, prev;

    fz_assert(r->nhits <= (r->kind == TS_QUERY_SELECT ? TS_SEARCH_SELECT_MAX
                                                      : max),
              "more results than asked for");

    for (i = 0, getters = 0, prev = r->nhits; i < r->nhits; i++) {
        fz_assert(r->hits[i].tool < fz_cat.ntools, "a tool of the catalogue");

        for (k = 0; k < i; k++) {
            fz_assert(r->hits[k].tool != r->hits[i].tool, "a tool twice");
        }

        if (r->kind == TS_QUERY_KEYWORDS) {
            fz_assert(fz_cat.tools[r->hits[i].tool].pooled,
                      "a keyword result outside the deferred pool");

            if (r->hits[i].getter) {
                getters++;
                fz_assert(i == (max < TS_SEARCH_DEFAULT ? max
                                                        : TS_SEARCH_DEFAULT)
                               - 1,
                          "the getter's place");
                continue;
            }

            fz_assert(prev == r->nhits
                      || r->hits[prev].score >= r->hits[i].score,
                      "keyword results best first");
            prev = i;
        }
    }

    fz_assert(getters <= 1, "one getter's place");
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ts_result_t   r, again;
    const char   *q;
    char         *copy, text[512];
    size_t        n, max, len, i;
    int           scoring;

    if (size < 2) {
        return 0;
    }

    fz_init();

    if (fz_cat.ntools == 0) {
        fz_catalogue();
    }

    scoring = data[0] % 3;
    max = 1 + data[1] % 32;

    /* an exact copy: a read past the query is a read past the block */
    n = size - 2;
    copy = malloc(n ? n : 1);
    fz_assert(copy != NULL, "memory");
    memcpy(copy, data + 2, n);
    q = copy;

    fz_assert(ts_search_run(&fz_cat, q, n, scoring, max, &r) == 0, "search");
    fz_check_result(&r, max);

    fz_assert(ts_search_run(&fz_cat, q, n, scoring, max, &again) == 0
              && again.nhits == r.nhits && again.kind == r.kind,
              "the same query, another answer");

    for (i = 0; i < r.nhits; i++) {
        fz_assert(again.hits[i].tool == r.hits[i].tool
                  && again.hits[i].score == r.hits[i].score,
                  "the same query, another ranking");
    }

    len = ts_search_fallback(&fz_cat, text, sizeof(text));
    fz_assert(len < sizeof(text) && strlen(text) == len, "no-match list");

    if (r.nhits) {
        ts_search_explain(&fz_cat, r.hits[0].tool, q, n, scoring, text,
                          sizeof(text));
        fz_assert(memchr(text, '\0', sizeof(text)) != NULL, "explanation");
    }

    ts_result_free(&r);
    ts_result_free(&again);
    free(copy);

    return 0;
}
