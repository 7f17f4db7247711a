/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <string.h>

#include "scan/ts_json.h"
#include "scan/ts_str.h"
#include "loop/ts_sse.h"


/*
 * The end of the event at p: just past its blank line, or NULL.  The
 * first seen bytes hold no complete blank line, but the last two of them
 * may begin one.
 */
static const char *
ts_sse_end(const char *p, const char *end, size_t seen)
{
    const char  *nl;

    p += seen > 2 ? seen - 2 : 0;

    for ( ;; ) {
        nl = memchr(p, '\n', end - p);
        if (nl == NULL || nl + 1 >= end) {
            return NULL;
        }

        if (nl[1] == '\n') {
            return nl + 2;
        }

        if (nl[1] == '\r' && nl + 2 < end && nl[2] == '\n') {
            return nl + 3;
        }

        p = nl + 1;
    }
}


/* a field line: "name: value" (one optional blank after the colon) */
static int
ts_sse_field(const char *line, const char *eol, const char *field,
    const char **value, size_t *len)
{
    size_t  n;

    n = strlen(field);

    if ((size_t) (eol - line) <= n || memcmp(line, field, n) != 0
        || line[n] != ':')
    {
        return 0;
    }

    line += n + 1;

    if (line < eol && *line == ' ') {
        line++;
    }

    *value = line;
    *len = eol - line;

    return 1;
}


size_t
ts_sse_next(const char *p, size_t n, size_t *seen, ts_sse_event_t *ev)
{
    const char  *end, *line, *eol, *next;

    /* the shortest event is a blank line; an empty buffer has no address */
    end = n < 2 ? NULL : ts_sse_end(p, p + n, *seen);
    if (end == NULL) {
        *seen = n;
        return 0;
    }

    *seen = 0;

    memset(ev, 0, sizeof(ts_sse_event_t));
    ev->raw = p;
    ev->raw_len = end - p;

    for (line = p; line < end; line = next) {
        eol = memchr(line, '\n', end - line);
        next = eol + 1;

        if (eol > line && eol[-1] == '\r') {
            eol--;
        }

        if (ev->name == NULL) {
            (void) ts_sse_field(line, eol, "event", &ev->name,
                                &ev->name_len);
        }

        if (ev->data == NULL) {
            (void) ts_sse_field(line, eol, "data", &ev->data, &ev->data_len);
        }
    }

    return ev->raw_len;
}


int
ts_sse_reindex(const ts_sse_event_t *ev, long index, ts_buf_t *out)
{
    ts_val_t     doc, idx;
    const char  *d;
    size_t       at;

    if (ev->data == NULL
        || ts_value_parse(ev->data, ev->data_len, &doc) != TS_OK
        || ts_object_member(ev->data, &doc, "index", &idx) != TS_OK
        || idx.kind != TS_NUMBER)
    {
        return ts_buf_add(out, ev->raw, ev->raw_len);
    }

    d = ev->data;
    at = (size_t) (d - ev->raw) + idx.off;

    ts_buf_add(out, ev->raw, at);
    ts_buf_num(out, (unsigned long long) index);

    return ts_buf_add(out, ev->raw + at + idx.len,
                      ev->raw_len - at - idx.len);
}


int
ts_sse_emit(ts_buf_t *out, const char *name, const char *json, size_t len)
{
    ts_buf_str(out, "event: ");
    ts_buf_str(out, name);
    ts_buf_str(out, "\ndata: ");
    ts_buf_add(out, json, len);

    return ts_buf_str(out, "\n\n");
}
