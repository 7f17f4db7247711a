/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

#include "loop/ts_cut.h"
#include "rewrite/ts_edit.h"
#include "scan/ts_json.h"
#include "scan/ts_str.h"
#include "loop/ts_sse.h"


#define TS_HOSTED_PREFIX  "tool_search_tool_"


void
ts_cut_init(ts_cut_t *a, const char *tool, int sse)
{
    memset(a, 0, sizeof(ts_cut_t));
    a->sse = sse;
    a->tool = tool;
    ts_buf_init(&a->in, sse ? TS_CUT_EVENT_MAX : TS_CUT_JSON_MAX);
}


void
ts_cut_free(ts_cut_t *a)
{
    ts_buf_free(&a->in);
}


long
ts_cut_removed(const ts_cut_t *a)
{
    return a->dropped;
}


/* a content block of tool search: the search call or its result */
static int
ts_cut_search_block(const ts_cut_t *a, const char *buf, const ts_val_t *b)
{
    char         tmp[64];
    const char  *name;
    ts_val_t     type, v;
    size_t       len;

    if (b->kind != TS_OBJECT
        || ts_object_member(buf, b, "type", &type) != TS_OK)
    {
        return 0;
    }

    if (ts_str_eq(buf, &type, "tool_search_tool_result")) {
        return 1;
    }

    if (!ts_str_eq(buf, &type, "server_tool_use")
        || ts_object_member(buf, b, "name", &v) != TS_OK)
    {
        return 0;
    }

    name = ts_str_view(buf, &v, tmp, sizeof(tmp), &len);

    return name != NULL
           && ((len > sizeof(TS_HOSTED_PREFIX) - 1
                && memcmp(name, TS_HOSTED_PREFIX,
                          sizeof(TS_HOSTED_PREFIX) - 1) == 0)
               || (a->tool != NULL && strlen(a->tool) == len
                   && memcmp(a->tool, name, len) == 0));
}


/* the blocks removed before index i */
static long
ts_dropped_before(const ts_cut_t *a, long i)
{
    long  k, n;

    if (i >= TS_CUT_BLOCKS_MAX) {
        return a->dropped;
    }

    for (k = 0, n = 0; k < i; k++) {
        n += a->drop[k];
    }

    return n;
}


/* one event: dropped, renumbered, or passed on as it came */
static int
ts_cut_event(ts_cut_t *a, const ts_sse_event_t *ev, ts_buf_t *out)
{
    ts_val_t  doc, idx, block;
    long      i, before;

    if (ev->data == NULL
        || ts_value_parse(ev->data, ev->data_len, &doc) != TS_OK
        || doc.kind != TS_OBJECT
        || ts_object_member(ev->data, &doc, "index", &idx) != TS_OK
        || idx.kind != TS_NUMBER)
    {
        return ts_buf_add(out, ev->raw, ev->raw_len);
    }

    i = strtol(ev->data + idx.off, NULL, 10);

    if (i >= 0 && i < TS_CUT_BLOCKS_MAX
        && ts_object_member(ev->data, &doc, "content_block", &block)
           == TS_OK
        && ts_cut_search_block(a, ev->data, &block))
    {
        a->drop[i] = 1;
        a->dropped++;
    }

    if (i >= 0 && i < TS_CUT_BLOCKS_MAX && a->drop[i]) {
        return 0;
    }

    before = i < 0 ? 0 : ts_dropped_before(a, i);

    return before ? ts_sse_reindex(ev, i - before, out)
                  : ts_buf_add(out, ev->raw, ev->raw_len);
}


static int
ts_cut_events(ts_cut_t *a, ts_buf_t *out)
{
    ts_sse_event_t  ev;
    size_t          used;

    for ( ;; ) {
        used = ts_sse_next(a->in.p, a->in.len, &a->seen, &ev);
        if (used == 0) {
            return 0;
        }

        if (ts_cut_event(a, &ev, out) != 0) {
            return -1;
        }

        ts_buf_consume(&a->in, used);
        a->seen = 0;
    }
}


int
ts_cut_feed(ts_cut_t *a, const char *p, size_t n, ts_buf_t *out)
{
    if (a->through) {
        return ts_buf_add(out, p, n);
    }

    if (ts_buf_add(&a->in, p, n) != 0) {
        if (a->in.len + n <= a->in.max) {
            return -1;
        }

        /* past the cap: what is held and the rest go on unchanged */
        a->through = 1;
        ts_buf_add(out, a->in.p, a->in.len);
        ts_buf_reset(&a->in);

        return ts_buf_add(out, p, n);
    }

    return a->sse ? ts_cut_events(a, out) : 0;
}


/* the JSON message without its search blocks, or as it came */
static int
ts_cut_json(ts_cut_t *a, ts_buf_t *out)
{
    ts_val_t        doc, content, *items;
    ts_edits_t      edits;
    unsigned char  *del;
    size_t          i, n;
    int             rc;

    if (ts_value_parse(a->in.p, a->in.len, &doc) != TS_OK
        || doc.kind != TS_OBJECT
        || ts_object_member(a->in.p, &doc, "content", &content) != TS_OK
        || content.kind != TS_ARRAY
        || ts_container_items(a->in.p, &content, &items, &n) != TS_OK)
    {
        return ts_buf_add(out, a->in.p, a->in.len);
    }

    del = calloc(n ? n : 1, 1);
    rc = del == NULL ? -1 : 0;

    for (i = 0; rc == 0 && i < n; i++) {
        del[i] = (unsigned char) ts_cut_search_block(a, a->in.p, &items[i]);
        a->dropped += del[i];
    }

    ts_edits_init(&edits);

    if (rc == 0 && a->dropped > 0) {
        rc = ts_edit_delete_items(&edits, items, n, del);

        if (rc == 0 && ts_buf_space(out, ts_edits_size(&edits, a->in.len))
                       == 0)
        {
            rc = ts_edits_render(&edits, a->in.p, a->in.len,
                                 out->p + out->len);
            out->len += ts_edits_size(&edits, a->in.len);
        }

    } else if (rc == 0) {
        rc = ts_buf_add(out, a->in.p, a->in.len);
    }

    ts_edits_free(&edits);
    free(del);
    free(items);

    return rc;
}


int
ts_cut_end(ts_cut_t *a, ts_buf_t *out)
{
    if (a->through) {
        return 0;
    }

    if (a->sse) {
        /* an unterminated last event goes on as it came */
        return ts_buf_add(out, a->in.p, a->in.len);
    }

    return ts_cut_json(a, out);
}
