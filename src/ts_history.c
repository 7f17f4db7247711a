/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

#include "ts_history.h"


#define TS_HOSTED_PREFIX  "tool_search_tool_"


static int
ts_str_prefix(const char *buf, const ts_val_t *v, const char *prefix)
{
    size_t  n;

    n = strlen(prefix);

    return v->kind == TS_STRING && v->len >= n + 2
           && memcmp(buf + v->off + 1, prefix, n) == 0;
}


int
ts_history_is_hosted(const ts_index_t *ix, const ts_block_t *b)
{
    if (ts_str_eq(ix->buf, &b->type, "tool_search_tool_result")) {
        return 1;
    }

    return ts_str_eq(ix->buf, &b->type, "server_tool_use")
           && ts_str_prefix(ix->buf, &b->name, TS_HOSTED_PREFIX);
}


int
ts_history_is_hosted_tool(const char *buf, const ts_tool_t *t)
{
    return ts_str_prefix(buf, &t->type, TS_HOSTED_PREFIX);
}


int
ts_history_hosted_refs(const ts_index_t *ix, const ts_block_t *b,
    ts_val_t **items, size_t *n)
{
    ts_val_t  refs;

    *items = NULL;
    *n = 0;

    if (ts_object_member(ix->buf, &b->content, "tool_references", &refs)
        != TS_OK || refs.kind != TS_ARRAY)
    {
        return 0;
    }

    return ts_container_items(ix->buf, &refs, items, n) == TS_OK ? 0 : -1;
}


ts_val_t
ts_history_ref_name(const ts_index_t *ix, const ts_val_t *ref)
{
    ts_val_t  name;

    if (ts_object_member(ix->buf, ref, "tool_name", &name) != TS_OK) {
        name.kind = TS_NONE;
    }

    return name;
}


static int
ts_history_hosted(ts_history_t *h, const ts_index_t *ix, const ts_block_t *b)
{
    ts_val_t  *refs, name;
    size_t     i, n;
    int        rc;

    h->hosted_blocks++;

    if (ts_history_hosted_refs(ix, b, &refs, &n) != 0) {
        return -1;
    }

    rc = 0;

    for (i = 0; i < n && rc == 0; i++) {
        name = ts_history_ref_name(ix, &refs[i]);
        rc = ts_names_add(&h->hosted, ix->buf, &name);
    }

    free(refs);

    return rc;
}


/* a result answering a call of the gateway's own search tool */
static int
ts_answers_gateway(const ts_index_t *ix, const ts_block_t *r,
    const char *tool)
{
    const ts_message_t  *m;
    const ts_block_t    *c;
    uint32_t             k;

    if (tool == NULL || r->message == 0) {
        return 0;
    }

    m = &ix->messages[r->message - 1];

    for (k = m->block_first; k < m->block_end; k++) {
        c = &ix->blocks[k];

        if (c->parent < 0 && ts_str_eq(ix->buf, &c->type, "tool_use")
            && ts_str_eq(ix->buf, &c->name, tool)
            && ts_str_same_raw(ix->buf, &c->id, &r->id))
        {
            return 1;
        }
    }

    return 0;
}


static int
ts_history_block(ts_history_t *h, const ts_index_t *ix, const ts_block_t *b,
    const char *tool)
{
    const char  *buf;

    buf = ix->buf;

    if (b->parent >= 0) {
        return ts_str_eq(buf, &b->type, "tool_reference")
               && !ts_answers_gateway(ix, &ix->blocks[b->parent], tool)
               ? ts_names_add(&h->client, buf, &b->name) : 0;
    }

    if (ts_history_is_hosted(ix, b)) {
        return ts_history_hosted(h, ix, b);
    }

    if (ts_str_eq(buf, &b->type, "tool_use")) {
        h->callers += b->caller.val.kind != TS_NONE;
        return ts_names_add(&h->called, buf, &b->name);
    }

    return 0;
}


int
ts_history_build(ts_history_t *h, const ts_index_t *ix, const char *tool)
{
    size_t  i;

    memset(h, 0, sizeof(ts_history_t));
    ts_names_init(&h->called);
    ts_names_init(&h->hosted);
    ts_names_init(&h->client);

    for (i = 0; i < ix->nblocks; i++) {
        if (ts_history_block(h, ix, &ix->blocks[i], tool) != 0) {
            return -1;
        }
    }

    ts_names_seal(&h->called);
    ts_names_seal(&h->hosted);
    ts_names_seal(&h->client);

    return 0;
}


void
ts_history_free(ts_history_t *h)
{
    ts_names_free(&h->called);
    ts_names_free(&h->hosted);
    ts_names_free(&h->client);
}
