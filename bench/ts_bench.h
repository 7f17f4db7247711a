/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * What the C benchmarks share: a clock, medians, a body from a file,
 * the glue's output.
 */

#ifndef TS_BENCH_H
#define TS_BENCH_H

#include <stddef.h>

#include "rewrite/ts_request.h"


double ts_bench_now_us(void);

/* sorts v in place */
double ts_bench_median(double *v, size_t n);

/* the whole file in a malloc'd buffer; exits on failure */
char *ts_bench_load(const char *path, size_t *len);

/* memcpy of len bytes, the floor of any rewrite; returns µs */
double ts_bench_memcpy(const char *buf, char *dst, size_t len);

/*
 * What the glue makes of the output: kept pieces are sent where they
 * lie, the new bytes are copied together into one block (returned, the
 * caller frees it; NULL on failure); *len is the output's size.
 */
char *ts_bench_output_chain(ts_request_t *rq, size_t *len);

#endif /* TS_BENCH_H */
