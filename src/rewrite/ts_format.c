/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

#include "scan/ts_scan.h"
#include "rewrite/ts_format.h"


static const char  *ts_format_names[TS_FORMAT_N] = {
    "messages", "chat_completions", "responses"
};


/* 1 when the path ends with suffix, which starts with a slash */
static int
ts_ends_with(const char *uri, size_t len, const char *suffix)
{
    size_t  n;

    n = strlen(suffix);

    return len >= n && memcmp(uri + len - n, suffix, n) == 0;
}


int
ts_format_of_uri(const char *uri, size_t len)
{
    /* a trailing slash names the same endpoint */
    if (len > 1 && uri[len - 1] == '/') {
        len--;
    }

    if (ts_ends_with(uri, len, "/chat/completions")) {
        return TS_FORMAT_CHAT;
    }

    if (ts_ends_with(uri, len, "/responses")) {
        return TS_FORMAT_RESPONSES;
    }

    return TS_FORMAT_MESSAGES;
}


const char *
ts_format_name(int format)
{
    return (unsigned) format < TS_FORMAT_N ? ts_format_names[format]
                                           : "messages";
}


ts_status_t
ts_format_tools(ts_index_t *ix, const ts_val_t *tools,
    ts_format_tool_pt read)
{
    ts_val_t  *items;
    size_t     i, n;

    if (ts_container_items(ix->buf, tools, &items, &n) != TS_OK) {
        return TS_ERR_NOMEM;
    }

    ix->tools = calloc(n ? n : 1, sizeof(ts_tool_t));

    if (ix->tools == NULL) {
        free(items);
        return TS_ERR_NOMEM;
    }

    for (i = 0; i < n; i++) {
        read(ix->buf, &items[i], &ix->tools[i]);
    }

    ix->ntools = n;
    free(items);

    return TS_OK;
}


ts_status_t
ts_format_messages(ts_index_t *ix, const ts_val_t *items)
{
    static const char *const  keys[] = { "role", "content", "type" };
    ts_val_t                 *v, *m;
    ts_message_t             *msg;
    ts_status_t               st;
    size_t                    i, n;

    /* the items and their members in one pass over the array */
    st = ts_items_members(ix->buf, items, keys, 3, &v, &m, &n);
    if (st != TS_OK) {
        return TS_ERR_NOMEM;
    }

    ix->messages = calloc(n ? n : 1, sizeof(ts_message_t));

    if (ix->messages == NULL) {
        free(v);
        free(m);
        return TS_ERR_NOMEM;
    }

    for (i = 0; i < n; i++) {
        msg = &ix->messages[i];
        msg->elem = v[i];
        msg->role = m[i * 3];
        msg->content = m[i * 3 + 1];
        msg->type = m[i * 3 + 2];
    }

    ix->nmessages = n;
    free(v);
    free(m);

    return TS_OK;
}


ts_decision_t
ts_format_object(ts_index_t *ix, const char *body, size_t len,
    const char *const *keys, size_t nkeys, ts_val_t *top, ts_val_t *v)
{
    return ts_format_object_read(ix, body, len, keys, nkeys, top, v, NULL);
}


ts_decision_t
ts_format_object_read(ts_index_t *ix, const char *body, size_t len,
    const char *const *keys, size_t nkeys, ts_val_t *top, ts_val_t *v,
    const ts_member_reader_t *rd)
{
    size_t  i;

    ix->buf = body;
    ix->len = len;

    for (i = 0; i < TS_TOP_N; i++) {
        ix->top[i] = -1;
    }

    /* validated, and the members read, in one pass */
    switch (ts_document_read(body, len, keys, nkeys, v, top, rd)) {

    case TS_OK:
        return TS_DECISION_NONE;

    case TS_ERR_SYNTAX:
        return TS_DECISION_MALFORMED;

    case TS_ERR_DEPTH:
        return TS_DECISION_TOO_DEEP;

    case TS_ERR_TYPE:
        /* not an object: not a request of this API */
        return TS_DECISION_PASSTHROUGH;

    default:
        return TS_DECISION_ERROR;
    }
}


/*
 * The tools array at the scan, when the memory holds its bytes: the scan
 * goes past it (1), and ts_format_tools_of() takes its tools from memory
 * once the document is read whole.  Else the scan crosses it (0), and
 * the array is read and kept.
 */
static int
ts_format_recall(ts_scan_t *s, ts_val_t *v, void *data)
{
    ts_format_recall_t  *rc;
    ts_recalled_t       *e;

    rc = data;
    e = ts_recall_find(rc->memory, (const char *) s->p, s->end - s->p);

    if (e == NULL) {
        return 0;
    }

    rc->recalled = e;
    v->off = s->p - s->start;
    v->len = e->len;
    v->kind = TS_ARRAY;
    v->esc = 0;
    s->p += e->len;

    if (s->map != NULL) {
        ts_strmap_skip(s->map, v->off + v->len);
    }

    return 1;
}


void
ts_format_recall_init(ts_format_recall_t *rc, ts_member_reader_t *rd,
    size_t key, ts_index_mem_t *mem, ts_recall_t *kept)
{
    rc->memory = NULL;
    rc->recalled = NULL;
    rd->key = key;
    rd->read = ts_format_recall;
    rd->data = rc;

    if (mem == NULL || kept == NULL) {
        return;
    }

    /* toolsearch_recall off: what was kept goes, nothing is kept */
    if (mem->forget) {
        ts_recall_free(kept);
        return;
    }

    /* the bound may have shrunk since the last request */
    ts_recall_trim(kept);

    rc->memory = kept;
}


/* the tools of the array recalled, moved to where it is in the body */
static ts_status_t
ts_format_tools_recalled(ts_index_t *ix, const ts_recalled_t *e,
    const ts_val_t *tools)
{
    ix->tools = malloc((e->n ? e->n : 1) * sizeof(ts_tool_t));
    if (ix->tools == NULL) {
        return TS_ERR_NOMEM;
    }

    memcpy(ix->tools, e->items, e->n * sizeof(ts_tool_t));
    ts_tools_shift(ix->tools, e->n, 0, tools->off);
    ix->ntools = e->n;
    ix->tools_recalled = e->n;

    return TS_OK;
}


ts_status_t
ts_format_tools_recall(ts_index_t *ix, const ts_format_recall_t *rc,
    const ts_val_t *tools)
{
    /*
     * The memory's copy, with which the rules' facts of its tools are
     * kept (ts_facts_get): nothing else is kept in it until the request
     * is decided.
     */
    ix->kept_in = rc->memory;
    ix->tools_kept = rc->recalled;

    return ts_format_tools_recalled(ix, rc->recalled, tools);
}


void
ts_format_tools_keep(ts_index_t *ix, const ts_format_recall_t *rc,
    const ts_val_t *tools, const void *extra, size_t extra_size)
{
    ts_tool_t  *kept;

    ix->kept_in = rc->memory;

    if (rc->memory == NULL) {
        return;
    }

    kept = ts_recall_add(rc->memory, ix->buf + tools->off, tools->len,
                         ix->tools, ix->ntools, sizeof(ts_tool_t), extra,
                         extra_size);

    if (kept != NULL) {
        ts_tools_shift(kept, ix->ntools, tools->off, 0);
        ix->tools_kept = rc->memory->mru;
    }
}


ts_status_t
ts_format_tools_of(ts_index_t *ix, const ts_format_recall_t *rc,
    const ts_val_t *tools, ts_format_tools_pt read)
{
    ts_status_t  st;

    if (rc->recalled != NULL) {
        return ts_format_tools_recall(ix, rc, tools);
    }

    st = read(ix, tools);

    if (st == TS_OK) {
        ts_format_tools_keep(ix, rc, tools, NULL, 0);
    }

    return st;
}
