/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Server-sent events of the Messages API: cutting a byte stream into
 * events, and renumbering an event's content block index in place.
 */

#ifndef TS_SSE_H
#define TS_SSE_H

#include <stddef.h>

#include "scan/ts_buf.h"


typedef struct {
    const char  *raw;       /* the whole event, blank line included */
    size_t       raw_len;
    const char  *name;      /* the event: field, or NULL */
    size_t       name_len;
    const char  *data;      /* the first data: field's value */
    size_t       data_len;
} ts_sse_event_t;


/*
 * The next complete event in p..p+n (blank-line terminated, LF or CRLF);
 * returns the bytes it takes, 0 when no event is complete yet.  *seen
 * (0 to start) keeps how many bytes at p the last call found incomplete,
 * so that an event arriving byte by byte is scanned once, not once per
 * byte.
 */
size_t ts_sse_next(const char *p, size_t n, size_t *seen,
    ts_sse_event_t *ev);

/*
 * Appends the event to out with the top-level "index" of its data set
 * to index; an event without one is appended unchanged.
 */
int ts_sse_reindex(const ts_sse_event_t *ev, long index, ts_buf_t *out);

/* appends "event: name\ndata: json\n\n" */
int ts_sse_emit(ts_buf_t *out, const char *name, const char *json,
    size_t len);

#endif /* TS_SSE_H */
