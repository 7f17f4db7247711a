/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

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
