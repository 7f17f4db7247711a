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
 * The built-ins the newest Claude Code defers itself (2.1.332, the names
 * after "The following deferred tools are now available via ToolSearch"
 * in t/fixtures/clients/claude-code), besides its MCP tools.
 */
static const char *const  ts_claude_code_deferred[] = {
    "CronCreate", "CronDelete", "CronList", "DesignSync", "EnterWorktree",
    "ExitWorktree",
    "ListMcpResourcesTool", "ReadMcpResourceDirTool", "ReadMcpResourceTool",
    "Monitor", "NotebookEdit", "SendMessage", "TaskCreate", "TaskGet",
    "TaskList", "TaskStop", "TaskUpdate", "WebFetch", "WebSearch"
};

static const ts_words_t  ts_claude_code_words =
    TS_WORDS(ts_claude_code_deferred);


/*
 * Tools of Claude Code's own besides those it defers: qwen-code sends
 * Claude Code's User-Agent with tools of its own, and a request of Claude
 * Code names one of these or of its list (count_tokens carries only the
 * deferrable ones)
 */
static const char *const  ts_claude_code_own[] = { "Bash", "Edit" };

static const ts_words_t  ts_claude_code_tools = TS_WORDS(ts_claude_code_own);


static int
ts_ua_starts(const char *ua, size_t len, const char *prefix)
{
    size_t  n;

    n = strlen(prefix);

    return ua != NULL && len >= n && memcmp(ua, prefix, n) == 0;
}


/* 1 when a tool of the request has one of the names */
static int
ts_has_tool(const ts_index_t *ix, const ts_words_t *names)
{
    char         tmp[TS_NAME_MAX];
    const char  *name;
    size_t       i, len;

    for (i = 0; i < ix->ntools; i++) {
        name = ts_str_view(ix->buf, &ix->tools[i].name, tmp, sizeof(tmp),
                           &len);

        if (name != NULL && ts_words_parse(names, name, len) >= 0) {
            return 1;
        }
    }

    return 0;
}


int
ts_client_of(const ts_index_t *ix, const char *ua, size_t ua_len)
{
    if (ts_ua_starts(ua, ua_len, "claude-cli/")
        && (ts_has_tool(ix, &ts_claude_code_tools)
            || ts_has_tool(ix, &ts_claude_code_words)))
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


/*
 * Claude Code carries the blocks back too, but costs less without them:
 * a kept search result loads every tool it found on every later turn, a
 * restored one only the tool called (docs/benchmarks.md, "Session cost").
 */
int
ts_client_keeps_blocks(int client)
{
    return client == TS_CLIENT_ANTHROPIC_SDK;
}


int
ts_client_defers(int client, const char *name, size_t len)
{
    return client == TS_CLIENT_CLAUDE_CODE
           && ts_words_parse(&ts_claude_code_words, name, len) >= 0;
}
