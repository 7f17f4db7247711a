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

#include "messages/ts_index.h"
#include "rewrite/ts_request.h"


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


/*
 * A body as an object, its members of the keys given read into v in one
 * pass (the index's buffer set, no top-level member placed yet): NONE,
 * or the decision that lets it pass (MALFORMED, TOO_DEEP, PASSTHROUGH
 * when it is no object, ERROR without memory)
 */
ts_decision_t ts_format_object(ts_index_t *ix, const char *body, size_t len,
    const char *const *keys, size_t nkeys, ts_val_t *top, ts_val_t *v);

/* the same, one member's value read by rd (ts_scan.h), or NULL */
ts_decision_t ts_format_object_read(ts_index_t *ix, const char *body,
    size_t len, const char *const *keys, size_t nkeys, ts_val_t *top,
    ts_val_t *v, const ts_member_reader_t *rd);

/*
 * A format's tools arrays remembered by the worker (toolsearch_recall, one
 * memory of ts_index_mem_t per format: the same bytes index otherwise):
 * the memory, and the array of the body it holds, if any.
 */
typedef struct {
    ts_recall_t    *memory;
    ts_recalled_t  *recalled;
} ts_format_recall_t;

/*
 * Sets rc to kept, the memory of mem for the format (NULL: none; with
 * toolsearch_recall off, what it kept goes and rc has none), and rd to
 * read the member key, the tools array, from it when it holds the bytes
 */
void ts_format_recall_init(ts_format_recall_t *rc, ts_member_reader_t *rd,
    size_t key, ts_index_mem_t *mem, ts_recall_t *kept);

/* reads a tools array into the index's tools, in a format's shape */
typedef ts_status_t (*ts_format_tools_pt)(ts_index_t *ix,
    const ts_val_t *tools);

/*
 * The index's tools: those rc recalled, or read by read and kept for the
 * requests that send the array again
 */
ts_status_t ts_format_tools_of(ts_index_t *ix, const ts_format_recall_t *rc,
    const ts_val_t *tools, ts_format_tools_pt read);

/*
 * The two halves of it, for a format that reads more beside the tools:
 * the tools rc recalled (rc->recalled is set; its extra is what was kept
 * with them), and the tools read kept with extra_size bytes of extra
 * (NULL: none), whose offsets the format has moved to run from the
 * array's first byte.
 */
ts_status_t ts_format_tools_recall(ts_index_t *ix,
    const ts_format_recall_t *rc, const ts_val_t *tools);
void ts_format_tools_keep(ts_index_t *ix, const ts_format_recall_t *rc,
    const ts_val_t *tools, const void *extra, size_t extra_size);

/* reads one element of a tools array into t, in a format's shape */
typedef void (*ts_format_tool_pt)(const char *buf, const ts_val_t *item,
    ts_tool_t *t);

/*
 * The elements of a tools array, or of a conversation (each object's
 * role, content and type), into the shared index, for the formats whose
 * bodies the Messages scanner does not read
 */
ts_status_t ts_format_tools(ts_index_t *ix, const ts_val_t *tools,
    ts_format_tool_pt read);
ts_status_t ts_format_messages(ts_index_t *ix, const ts_val_t *items);

#endif /* TS_FORMAT_H */
