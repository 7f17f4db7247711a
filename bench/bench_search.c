/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Search cost per request: catalogue preparation plus one query, over a
 * request body given as a file, against memcpy of the same body measured
 * in the same run: the seed scorer and the hybrid one on the heap, and the
 * hybrid one in memory the caller lends and reuses (as a worker would).
 * Prints one JSON object.
 *
 *   bench_search FILE ROUNDS QUERY...
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_bench.h"
#include "search/ts_search.h"


/* memory lent to the catalogue, grown to what it asked for last time */
typedef struct {
    void    *p;
    size_t   size;
} ts_lent_t;


/*
 * one round: prepare the catalogue of an indexed body and run a query;
 * lent NULL: on the heap
 */
static double
ts_round(const ts_index_t *ix, const char *q, int scoring, ts_lent_t *lent,
    size_t *hits)
{
    ts_catalog_t  c;
    ts_result_t   r;
    double        t0, t1;

    t0 = ts_bench_now_us();

    if (ts_catalog_build_in(&c, ix, NULL, NULL,
                            scoring == TS_SCORING_HYBRID,
                            lent ? lent->p : NULL, lent ? lent->size : 0)
        != 0
        || ts_search_run(&c, q, strlen(q), scoring, 5, &r) != 0)
    {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }

    t1 = ts_bench_now_us();
    *hits = r.nhits;
    ts_result_free(&r);

    if (lent != NULL && c.heap != NULL) {
        free(lent->p);
        lent->p = malloc(c.need);
        lent->size = lent->p ? c.need : 0;
    }

    ts_catalog_free(&c);

    return t1 - t0;
}


int
main(int argc, char **argv)
{
    ts_index_t   ix;
    ts_lent_t    lent;
    char        *buf, *dst;
    double      *t[4], med[4];
    size_t       len, rounds, i, hits, q;
    int          s;

    if (argc < 4) {
        fprintf(stderr, "usage: bench_search FILE ROUNDS QUERY...\n");
        return 2;
    }

    buf = ts_bench_load(argv[1], &len);
    rounds = strtoul(argv[2], NULL, 10);
    dst = malloc(len);

    if (rounds == 0 || dst == NULL || ts_index_build(&ix, buf, len) != TS_OK)
    {
        fprintf(stderr, "bench_search: bad input\n");
        return 2;
    }

    printf("{\"bytes\":%zu,\"tools\":%zu,\"rounds\":%zu,\"queries\":[",
           len, ix.ntools, rounds);

    lent.p = NULL;
    lent.size = 0;

    for (i = 0; i < 4; i++) {
        t[i] = malloc(rounds * sizeof(double));
        if (t[i] == NULL) {
            return 2;
        }
    }

    for (q = 3; q < (size_t) argc; q++) {
        for (i = 0; i < rounds; i++) {
            t[0][i] = ts_bench_memcpy(buf, dst, len);

            for (s = 0; s < 3; s++) {
                t[s + 1][i] = ts_round(&ix, argv[q],
                                       s ? TS_SCORING_HYBRID : TS_SCORING_SEED,
                                       s == 2 ? &lent : NULL, &hits);
            }
        }

        for (i = 0; i < 4; i++) {
            med[i] = ts_bench_median(t[i], rounds);
        }

        printf("%s{\"query\":\"%s\",\"memcpy_us\":%.2f,\"seed_us\":%.2f,"
               "\"hybrid_us\":%.2f,\"lent_us\":%.2f,\"hits\":%zu}",
               q > 3 ? "," : "", argv[q], med[0], med[1], med[2], med[3],
               hits);
    }

    printf("]}\n");

    for (i = 0; i < 4; i++) {
        free(t[i]);
    }

    free(lent.p);
    ts_index_free(&ix);
    free(dst);
    free(buf);

    return 0;
}
