/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * What the conversation history says about tools: which the assistant
 * called, and which a search (hosted or client-side) has referenced.
 */

#ifndef TS_HISTORY_H
#define TS_HISTORY_H

#include "messages/ts_index.h"
#include "messages/ts_names.h"


/* the start of a text block, its text left open */
#define TS_TEXT_BLOCK     "{\"type\":\"text\",\"text\":\""

/* Claude Code's turn boundary next to a message's references */
#define TS_BOUNDARY_TEXT  "Tool loaded."
#define TS_BOUNDARY_BLOCK TS_TEXT_BLOCK TS_BOUNDARY_TEXT "\"}"


typedef struct {
    ts_names_t  called;     /* tool_use names, assistant messages */
    ts_names_t  hosted;     /* tool_reference names, hosted results */
    ts_names_t  client;     /* tool_reference names, tool_result content */
    size_t      hosted_blocks;  /* server_tool_use + hosted results */
    size_t      callers;        /* tool_use blocks with "caller" */
} ts_history_t;


/*
 * References that answer a call of the gateway's search tool (may be
 * NULL) are the gateway's own work, not the client's.
 */
int ts_history_build(ts_history_t *h, const ts_index_t *ix,
    const char *tool);
void ts_history_free(ts_history_t *h);

/*
 * Adds to named the names of wanted (sealed) that are words of the first
 * user message's text: where a client puts the summary that replaced a
 * compacted history, which names the tools found before.
 */
int ts_history_named(const ts_index_t *ix, const ts_names_t *wanted,
    ts_names_t *named);

/* the reference spans of a tool_search_tool_result block; caller frees */
int ts_history_hosted_refs(const ts_index_t *ix, const ts_block_t *b,
    ts_val_t **items, size_t *n);

/* the tool_name of one reference object, or a value of kind NONE */
ts_val_t ts_history_ref_name(const ts_index_t *ix, const ts_val_t *ref);

/* 1 for tool_search_tool_result and hosted-search server_tool_use */
int ts_history_is_hosted(const ts_index_t *ix, const ts_block_t *b);

/*
 * Hosted searches of the last assistant message (the previous response):
 * every request repeats the whole conversation, so a search counts once,
 * in the request that carries it in its last assistant turn.
 */
size_t ts_history_hosted_searches(const ts_index_t *ix);

/* 1 for a hosted search tool definition (tool_search_tool_*) */
int ts_history_is_hosted_tool(const char *buf, const ts_tool_t *t);

#endif /* TS_HISTORY_H */
