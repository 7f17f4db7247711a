/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Gateway-executed search, request side: the upstream sees the loaded
 * tools and the gateway's own search tool, the deferred names in the
 * system prompt, and the searches of earlier turns as ordinary tool_use
 * and tool_result turns.
 */

#ifndef TS_GATEWAY_H
#define TS_GATEWAY_H

#include "scan/ts_buf.h"
#include "messages/ts_names.h"
#include "rewrite/ts_request.h"


/* bytes of deferred names the system prompt lists; the rest are counted */
#define TS_GATEWAY_ANNOUNCE_MAX  16384

/* MCP servers a search that found nothing lists; the rest are counted */
#define TS_GATEWAY_SERVERS_MAX   32


/*
 * Turns the gateway's server_tool_use / tool_search_tool_result pairs
 * in history into tool_use / tool_result turns and marks the tools they
 * found as loaded.  When there are any, rq->ix then indexes a new body
 * owned by rq.
 */
int ts_gateway_normalize(ts_request_t *rq, const ts_policy_t *p);

/*
 * How a request's found tools load ($toolsearch_found_tools): "tools",
 * "references", "wrapper"; "none" when the gateway does not search
 */
const char *ts_gateway_found_name(const ts_request_t *rq);

/* the edits of a DEFERRED_GATEWAY decision */
int ts_gateway_apply(ts_request_t *rq, const ts_input_t *in);

/*
 * Where a format puts gateway search's parts: tools[] written into b (the
 * loaded tools, the search tool, the tools found), which replaces the
 * client's, and the
 * announcement text placed after the client's system prompt (b for its
 * bytes).  The turns of the loop go after the messages in every format.
 */
typedef struct {
    int  (*tools)(ts_request_t *rq, const ts_policy_t *p, ts_buf_t *b);
    int  (*system)(ts_request_t *rq, const ts_buf_t *text, ts_buf_t *b);
} ts_gateway_form_t;

/* the same edits in a format's form */
int ts_gateway_apply_as(ts_request_t *rq, const ts_input_t *in,
    const ts_gateway_form_t *form);

/*
 * 1 when found tools load as tool_reference + defer_loading: the
 * upstream expands references in a tool_result.  Otherwise they load as
 * ordinary tools and the result is text.
 */
int ts_gateway_refs(const ts_index_t *ix, int mode, int upstream,
    const ts_policy_t *p);

/*
 * The tool_result block answering a search call: the names found, none
 * (n == 0: servers, from ts_gateway_servers(), tells what exists), or a
 * search that never ran (ran == 0); with refs, found names as
 * tool_reference blocks, and the caller adds TS_BOUNDARY_BLOCK after the
 * turn's results; with defs (the call wrapper, rewrite/ts_wrapper.h),
 * the found tools' definitions from defs as text.  id is the raw JSON
 * string of the call's id.
 */
int ts_gateway_result(ts_buf_t *b, const char *id, size_t id_len,
    const ts_name_t *names, size_t n, int ran, int refs,
    const ts_buf_t *servers, const ts_index_t *defs);

/*
 * What a search that found nothing tells the model, JSON-escaped: the
 * MCP servers of the request's tools[] and their numbers of tools,
 * ordered by name, at most TS_GATEWAY_SERVERS_MAX of them ("github (26
 * tools), slack (8 tools), and 3 more servers"); empty without MCP
 * tools.  It depends on tools[] only, so that a turn's result reads the
 * same when later turns replay it.
 */
int ts_gateway_servers(ts_buf_t *b, const ts_index_t *ix);

/* the text of a search's result, JSON-escaped (as ts_gateway_result) */
void ts_gateway_result_text(ts_buf_t *b, const ts_name_t *names, size_t n,
    int ran, const ts_buf_t *servers);

/*
 * The query of a restored search: select: of names, which
 * ts_defer_restorable() allows in a JSON string as they are
 */
void ts_gateway_select(ts_buf_t *b, const ts_name_t *names, size_t n);

/*
 * The same, or with the call wrapper (defs: the request's index) the
 * found tools' definitions as text (ts_wrapper_found_text)
 */
void ts_gateway_found_text(ts_buf_t *b, const ts_name_t *names, size_t n,
    int ran, const ts_buf_t *servers, const ts_index_t *defs);

/*
 * The search tool's name, description and schema as object members, the
 * schema under the format's key ("input_schema", "parameters")
 */
void ts_gateway_search_fields(ts_buf_t *b, const ts_policy_t *p,
    const char *schema);

/*
 * An OpenAI dialect's tools[] for gateway search: the tools that stay,
 * byte for byte and in place, then the search function (its fields
 * between open and close, the dialect's wrapping), then the deferrable
 * tools loaded on demand in the client's order: what a turn adds comes
 * after what the last one sent
 */
int ts_gateway_openai_tools(ts_request_t *rq, const ts_policy_t *p,
    const char *open, const char *close, ts_buf_t *b);

/*
 * What the search tool can load: the names of the deferrable tools,
 * sorted, as JSON-escaped text for the system prompt; the same on every
 * turn of a conversation whatever its searches found
 */
int ts_gateway_announcement(const ts_index_t *ix,
    const unsigned char *deferrable, const ts_policy_t *p, ts_buf_t *b);

/* tool_reference blocks naming the tools, comma-separated */
void ts_gateway_references(ts_buf_t *b, const ts_name_t *names, size_t n);

#endif /* TS_GATEWAY_H */
