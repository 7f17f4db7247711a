/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Which tools of a request come from MCP servers, told from the shapes of
 * their names alone, the way each agent client names them: no
 * configuration (docs/decisions.md, "MCP tools by the shape of their
 * names").
 */

#ifndef TS_SHAPE_H
#define TS_SHAPE_H

#include <stddef.h>


/* the shape of one name; a request's rule is the strongest it holds */
typedef enum {
    TS_SHAPE_NONE = 0,      /* one word: Bash, read, todowrite, echo */
    TS_SHAPE_COMPOUND,      /* words joined by _ - .: memory_read_graph,
                               create_entities, get-sum */
    TS_SHAPE_SERVER,        /* server__tool (cline) */
    TS_SHAPE_MCP,           /* mcp__server__tool (Claude Code, qwen-code) */
    TS_SHAPE_N
} ts_shape_t;

/*
 * Compound names are deferred only when there are at least this many and
 * they weigh at least this much (name, description, schema): a client's
 * own few snake_case tools (qwen-code's memory agent: 6 tools, 4 of them
 * compound, 13.6 KB) stay loaded, MCP servers' dozens do not; below the
 * weight a search costs the model more than the definitions it saves
 */
#define TS_SHAPE_COMPOUND_MIN_TOOLS  16
#define TS_SHAPE_COMPOUND_MIN_CHARS  10000

int ts_shape_of(const char *name, size_t len);

/*
 * 1 when a tool of that name is deferred under the request's rule: with
 * a server__ name in the request only such names, else compound names;
 * under any rule, the built-ins clients defer themselves
 */
int ts_shape_defers(int rule, const char *name, size_t len);

/* "none", "compound_name", "server_prefix", "mcp_prefix" */
const char *ts_shape_name(int rule);

#endif /* TS_SHAPE_H */
