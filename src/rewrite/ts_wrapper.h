/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The call wrapper of gateway search (toolsearch_found_tools wrapper):
 * where found tools would load as plain tools, tools[] holds one more
 * tool instead, call_tool {name, arguments}, and never changes in a
 * session.  A search's result gives the found definitions as text; the
 * loop turns the model's calls of the wrapper into the client's tool_use
 * of the tool, and the next turn's history turns them back.
 */

#ifndef TS_WRAPPER_H
#define TS_WRAPPER_H

#include "scan/ts_buf.h"
#include "messages/ts_names.h"
#include "rewrite/ts_request.h"


#define TS_WRAPPER_NAME  "call_tool"


/* 1 when no tool of the request is named like the wrapper */
int ts_wrapper_free(const ts_index_t *ix);

/*
 * The wrapper tool's members (name, description, and its input schema
 * under the key schema: input_schema, parameters), without the braces of
 * the object the format wraps them in; in tools[] after the search tool
 */
void ts_wrapper_tool(ts_buf_t *b, const ts_policy_t *p, const char *schema);

/*
 * What a search's result says of the tools it found, JSON-escaped: their
 * names, how to call them, and each one's description and input schema
 * as the client wrote them (definitions from ix)
 */
void ts_wrapper_found_text(ts_buf_t *b, const ts_index_t *ix,
    const ts_name_t *names, size_t n);

/* a call of the wrapper, read from its input */
typedef struct {
    const char  *buf;       /* the input */
    ts_val_t     name;      /* the tool's name, a JSON string */
    ts_val_t     args;      /* its arguments, an object */
    long         tool;      /* the tool of the request, or -1 */
} ts_wrapper_call_t;

/*
 * Reads and checks a call of the wrapper (input: its JSON text) against
 * the named tool of ix: 0 when the call is valid, else -1 and why, as
 * JSON-escaped text for the model, in err.  Only what the schema says
 * plainly is judged (an object, required members, the JSON types of the
 * top-level members, additionalProperties false); a schema with $ref,
 * anyOf, oneOf, allOf or not at its top is not judged: the call passes.
 */
int ts_wrapper_check(const ts_index_t *ix, const char *input, size_t len,
    ts_wrapper_call_t *call, ts_buf_t *err);

/*
 * The next turn: every tool_use in history of a tool deferred here
 * becomes the wrapper's call the upstream made (the same id, its input
 * the arguments)
 */
int ts_wrapper_history(ts_request_t *rq);

/*
 * Formats whose calls carry their arguments as a JSON string (Chat
 * Completions, Responses): 1 when history's call of the deferred tool k,
 * its arguments args, can go back as the wrapper's call (the arguments
 * decode to an object; a select: can carry the name), else its tool
 * loads as without the wrapper
 */
int ts_wrapper_turn_fits(const ts_index_t *ix, size_t k,
    const ts_val_t *args);

/*
 * The edits of such a call: its name (the value name) becomes the
 * wrapper's, its arguments the string of {"name": …, "arguments": the
 * decoded object}; t is scratch
 */
int ts_wrapper_turn_call(ts_request_t *rq, const ts_val_t *name,
    const ts_val_t *args, ts_buf_t *t);

/* the deferred tool of rq named by a string value of its body, or -1 */
long ts_wrapper_deferred(const ts_request_t *rq, const ts_val_t *name);

/* the deferred tool k declared after all, as without the wrapper */
void ts_wrapper_declare(ts_request_t *rq, size_t k);

/*
 * The next turn of a format whose calls carry JSON-string arguments: turn
 * runs once for each message or item of the conversation, in order, with
 * done (per tool: its search restored already) and t (scratch)
 */
typedef int (*ts_wrapper_turn_pt)(ts_request_t *rq, const ts_policy_t *p,
    size_t msg, unsigned char *done, ts_buf_t *t);

int ts_wrapper_turns(ts_request_t *rq, const ts_policy_t *p,
    ts_wrapper_turn_pt turn);

#endif /* TS_WRAPPER_H */
