/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * What the C benchmarks share: a clock, medians, a body from a file.
 */

#ifndef TS_BENCH_H
#define TS_BENCH_H

#include <stddef.h>


double ts_bench_now_us(void);

/* sorts v in place */
double ts_bench_median(double *v, size_t n);

/* the whole file in a malloc'd buffer; exits on failure */
char *ts_bench_load(const char *path, size_t *len);

/* memcpy of len bytes, the floor of any rewrite; returns µs */
double ts_bench_memcpy(const char *buf, char *dst, size_t len);

#endif /* TS_BENCH_H */
