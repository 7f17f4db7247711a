/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The API formats a request may speak, told from the URI the client
 * used; the body's shape confirms it (each format's index).  What is
 * shared by every format (policy, MCP naming shapes, search, the
 * announcement, counters) lives below; what differs (scanning, edits,
 * the answer's grammar, errors) is each format's dialect.
 */

#ifndef TS_FORMAT_H
#define TS_FORMAT_H

#include <stddef.h>


typedef enum {
    TS_FORMAT_MESSAGES = 0,     /* …/messages, and every other URI */
    TS_FORMAT_CHAT,             /* …/chat/completions */
    TS_FORMAT_RESPONSES,        /* …/responses */
    TS_FORMAT_N
} ts_format_t;


/* the format a request path names (without its arguments) */
int ts_format_of_uri(const char *uri, size_t len);

/* "messages", "chat_completions", "responses" */
const char *ts_format_name(int format);

#endif /* TS_FORMAT_H */
