/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The Messages index's steps that its two files share: ts_index.c reads
 * the body, ts_index_recall.c recalls and remembers its arrays.
 */

#ifndef TS_INDEX_SCAN_H
#define TS_INDEX_SCAN_H

#include "scan/ts_scan.h"
#include "messages/ts_index.h"


/* the elements of an array, after ts_open's or ts_more's rc */
static inline int
ts_index_elements(ts_scan_t *s, int rc, int (*each)(ts_scan_t *))
{
    while (rc == 0) {
        if (each(s) != 0) {
            return -1;
        }

        rc = ts_more(s, ']');
    }

    return rc < 0 ? -1 : 0;
}


static inline void
ts_index_set_array(ts_scan_t *s, ts_val_t *v, size_t off)
{
    v->off = off;
    v->len = s->p - s->start - off;
    v->kind = TS_ARRAY;
    v->esc = 0;
}


/* ts_index.c: one item of an array, and the arrays */
int ts_index_tool(ts_scan_t *s);
int ts_index_message(ts_scan_t *s);
int ts_index_array_of(ts_scan_t *s, ts_val_t *v, int (*each)(ts_scan_t *));

/* ts_index_recall.c: the top level's tools and messages arrays */
int ts_index_tools(ts_scan_t *s, ts_val_t *v);
int ts_index_messages(ts_scan_t *s, ts_val_t *v);
void ts_index_seen_free(ts_seen_t *seen);

#endif /* TS_INDEX_SCAN_H */
