/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <string.h>

#include "rewrite/ts_client.h"
#include "rewrite/ts_policy.h"


static const char  *ts_client_names[TS_CLIENT_N] = {
    "default", "claude_code", "anthropic_sdk"
};


/*
 * The built-ins the newest Claude Code defers itself (2.1.331, the names
 * after "The following deferred tools are now available via ToolSearch"
 * in t/fixtures/clients/claude-code), besides its MCP tools.
 */
static const char *const  ts_claude_code_deferred[] = {
    "CronCreate", "CronDelete", "CronList", "EnterWorktree", "ExitWorktree",
    "ListMcpResourcesTool", "ReadMcpResourceDirTool", "ReadMcpResourceTool",
    "Monitor", "NotebookEdit", "SendMessage", "TaskCreate", "TaskGet",
    "TaskList", "TaskStop", "TaskUpdate", "WebFetch", "WebSearch"
};

static const ts_words_t  ts_claude_code_words =
    TS_WORDS(ts_claude_code_deferred);


/*
 * Claude Code's own tools, two of which every request of it carries:
 * qwen-code sends Claude Code's User-Agent with tools of its own
 */
static const char *const  ts_claude_code_signature[] = { "Bash", "Edit" };


static int
ts_ua_starts(const char *ua, size_t len, const char *prefix)
{
    size_t  n;

    n = strlen(prefix);

    return ua != NULL && len >= n && memcmp(ua, prefix, n) == 0;
}


static int
ts_has_tool(const ts_index_t *ix, const char *name)
{
    size_t  i;

    for (i = 0; i < ix->ntools; i++) {
        if (ts_str_eq(ix->buf, &ix->tools[i].name, name)) {
            return 1;
        }
    }

    return 0;
}


int
ts_client_of(const ts_index_t *ix, const char *ua, size_t ua_len)
{
    if (ts_ua_starts(ua, ua_len, "claude-cli/")
        && ts_has_tool(ix, ts_claude_code_signature[0])
        && ts_has_tool(ix, ts_claude_code_signature[1]))
    {
        return TS_CLIENT_CLAUDE_CODE;
    }

    /* Stainless's TypeScript SDK; other languages are not verified */
    if (ts_ua_starts(ua, ua_len, "Anthropic/JS ")) {
        return TS_CLIENT_ANTHROPIC_SDK;
    }

    return TS_CLIENT_DEFAULT;
}


const char *
ts_client_name(int client)
{
    return (unsigned) client < TS_CLIENT_N ? ts_client_names[client]
                                           : "default";
}


int
ts_client_keeps_blocks(int client)
{
    return client == TS_CLIENT_CLAUDE_CODE
           || client == TS_CLIENT_ANTHROPIC_SDK;
}


int
ts_client_defers(int client, const char *name, size_t len)
{
    return client == TS_CLIENT_CLAUDE_CODE
           && ts_words_parse(&ts_claude_code_words, name, len) >= 0;
}
