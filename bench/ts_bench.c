/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ts_bench.h"


double
ts_bench_now_us(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);

    return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}


static int
ts_bench_cmp(const void *a, const void *b)
{
    double  x, y;

    x = *(const double *) a;
    y = *(const double *) b;

    return (x > y) - (x < y);
}


double
ts_bench_median(double *v, size_t n)
{
    qsort(v, n, sizeof(double), ts_bench_cmp);

    return v[n / 2];
}


char *
ts_bench_load(const char *path, size_t *len)
{
    FILE  *f;
    char  *buf;
    long   n;

    f = fopen(path, "rb");
    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0) {
        perror(path);
        exit(2);
    }

    rewind(f);
    buf = malloc((size_t) n + 1);

    if (buf == NULL || fread(buf, 1, (size_t) n, f) != (size_t) n) {
        perror(path);
        exit(2);
    }

    fclose(f);
    *len = (size_t) n;

    return buf;
}


double
ts_bench_memcpy(const char *buf, char *dst, size_t len)
{
    double  t0;

    t0 = ts_bench_now_us();
    memcpy(dst, buf, len);

    /* keep the copy observable */
    if (len > 0 && dst[len / 2] != buf[len / 2]) {
        exit(3);
    }

    return ts_bench_now_us() - t0;
}


char *
ts_bench_output_chain(ts_request_t *rq, size_t *len)
{
    ts_pieces_t   it, walk;
    ts_piece_t    p;
    size_t        added;
    char         *block, *b;

    if (ts_request_pieces(rq, &it) != 0) {
        return NULL;
    }

    walk = it;
    added = 0;
    *len = 0;

    while (ts_pieces_next(&walk, &p)) {
        added += p.kept ? 0 : p.len;
        *len += p.len;
    }

    block = malloc(added ? added : 1);
    if (block == NULL) {
        return NULL;
    }

    for (b = block; ts_pieces_next(&it, &p); /* void */) {
        if (!p.kept) {
            memcpy(b, p.data, p.len);
            b += p.len;
        }
    }

    return block;
}
