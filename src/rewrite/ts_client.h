/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Client profiles: the clients whose behaviour is known, recognised from
 * the request alone (its User-Agent and its tools), and what pays for
 * each (docs/clients.md#client-profiles).
 */

#ifndef TS_CLIENT_H
#define TS_CLIENT_H

#include <stddef.h>

#include "messages/ts_index.h"


typedef enum {
    TS_CLIENT_DEFAULT = 0,      /* not recognised: the location's rules */
    TS_CLIENT_CLAUDE_CODE,      /* the Claude Code CLI, the Agent SDK */
    TS_CLIENT_ANTHROPIC_SDK,    /* Anthropic's TypeScript SDK */
    TS_CLIENT_N
} ts_client_t;


/*
 * The profile of a request's client, from its User-Agent (ua, NULL:
 * none) and its tools
 */
int ts_client_of(const ts_index_t *ix, const char *ua, size_t ua_len);

/* $toolsearch_client: "default", "claude_code", "anthropic_sdk" */
const char *ts_client_name(int client);

/*
 * 1 when the client carries a hosted search's blocks back as it got
 * them, so that a found tool stays deferred behind its reference
 */
int ts_client_keeps_blocks(int client);

/* 1 when the client defers a tool of this name itself */
int ts_client_defers(int client, const char *name, size_t len);

#endif /* TS_CLIENT_H */
