/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * A growable byte buffer for text the engine writes: JSON it composes,
 * SSE events it emits.  An allocation failure is sticky: every later
 * append is refused and the caller checks once at the end.  The growth
 * of the engine's other arrays is here too.
 */

#ifndef TS_BUF_H
#define TS_BUF_H

#include <stddef.h>


typedef struct {
    char       *p;
    size_t      len;
    size_t      cap;
    size_t      max;        /* 0: no limit */
    int         failed;     /* no memory, or past max */
} ts_buf_t;


void ts_buf_init(ts_buf_t *b, size_t max);
void ts_buf_free(ts_buf_t *b);
void ts_buf_reset(ts_buf_t *b);

/* room for n more bytes at p + len */
int ts_buf_space(ts_buf_t *b, size_t n);

int ts_buf_add(ts_buf_t *b, const void *p, size_t n);
int ts_buf_str(ts_buf_t *b, const char *s);

/*
 * p..p+n as the inside of a JSON string: quotes, backslashes, controls;
 * a lone surrogate, as the decoder leaves it, goes back to its \uXXXX
 */
int ts_buf_escaped(ts_buf_t *b, const char *p, size_t n);

/* a decimal number */
int ts_buf_num(ts_buf_t *b, unsigned long long n);

/* drops the first n bytes */
void ts_buf_consume(ts_buf_t *b, size_t n);

/*
 * A growable array's next allocation: room for need items of size bytes,
 * the capacity *cap doubled from first (when 0) until they fit.  Returns
 * the realloc'd items and sets *cap, or NULL without memory (items and
 * *cap untouched).
 */
void *ts_array_grow(void *items, size_t *cap, size_t need, size_t size,
    size_t first);

#endif /* TS_BUF_H */
