/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <string.h>

#include "messages/ts_names.h"
#include "rewrite/ts_shape.h"


static const char  *ts_shape_names[TS_SHAPE_N] = {
    "none", "compound_name", "server_prefix", "mcp_prefix"
};


/*
 * The built-ins qwen-code 0.24.4 defers itself when its own tool search is
 * on (shouldDefer in its source): with it off, they are 26 KB of its
 * 62 KB of own tools.
 */
static const char  *ts_shape_builtins[] = {
    "cron_create", "cron_delete", "cron_list", "enter_worktree",
    "exit_worktree", "loop_wakeup", "monitor", "read_mcp_resource",
    "record_artifact", "report_findings", "send_message", "task_stop",
    "web_fetch", "web_search", "zoom_image", NULL
};


static int
ts_is_builtin(const char *name, size_t len)
{
    const char *const  *b;

    /* every tool of every request asks: the first byte rules most out */
    for (b = ts_shape_builtins; *b != NULL; b++) {
        if (len > 0 && (*b)[0] == name[0] && strlen(*b) == len
            && memcmp(*b, name, len) == 0)
        {
            return 1;
        }
    }

    return 0;
}


static int
ts_is_separator(char c)
{
    return c == '_' || c == '-' || c == '.';
}


/* "__" with a name on both sides */
static int
ts_has_server_prefix(const char *name, size_t len)
{
    size_t  i;

    for (i = 1; i + 2 < len; i++) {
        if (name[i] == '_' && name[i + 1] == '_' && name[i - 1] != '_') {
            return 1;
        }
    }

    return 0;
}


int
ts_shape_of(const char *name, size_t len)
{
    size_t  i;

    if (ts_name_is_mcp(name, len)) {
        return TS_SHAPE_MCP;
    }

    if (ts_has_server_prefix(name, len)) {
        return TS_SHAPE_SERVER;
    }

    for (i = 1; i + 1 < len; i++) {
        if (ts_is_separator(name[i])) {
            return TS_SHAPE_COMPOUND;
        }
    }

    return TS_SHAPE_NONE;
}


int
ts_shape_defers(int rule, const char *name, size_t len)
{
    int  shape;

    if (rule != TS_SHAPE_NONE && ts_is_builtin(name, len)) {
        return 1;
    }

    shape = ts_shape_of(name, len);

    if (rule >= TS_SHAPE_SERVER) {
        return shape >= TS_SHAPE_SERVER;
    }

    return rule == TS_SHAPE_COMPOUND && shape == TS_SHAPE_COMPOUND;
}


const char *
ts_shape_name(int rule)
{
    return (unsigned) rule < TS_SHAPE_N ? ts_shape_names[rule] : "none";
}
