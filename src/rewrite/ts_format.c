/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

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
    ts_val_t      *v;
    ts_message_t  *m;
    size_t         i, n;

    if (ts_container_items(ix->buf, items, &v, &n) != TS_OK) {
        return TS_ERR_NOMEM;
    }

    ix->messages = calloc(n ? n : 1, sizeof(ts_message_t));

    if (ix->messages == NULL) {
        free(v);
        return TS_ERR_NOMEM;
    }

    for (i = 0; i < n; i++) {
        m = &ix->messages[i];
        m->elem = v[i];

        if (v[i].kind == TS_OBJECT) {
            (void) ts_object_member(ix->buf, &v[i], "role", &m->role);
            (void) ts_object_member(ix->buf, &v[i], "content", &m->content);
        }
    }

    ix->nmessages = n;
    free(v);

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
