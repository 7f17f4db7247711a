/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The Messages index: a request body validated in one pass and the parts
 * the policy reads recorded as byte spans (the top level's members, each
 * tool, message and content block), without a tree of the conversation.
 * Memory a worker lends keeps the arrays, and what they held, across its
 * requests (ts_index_recall.c).
 */

#ifndef TS_INDEX_H
#define TS_INDEX_H

#include "scan/ts_json.h"
#include "scan/ts_str.h"
#include "messages/ts_recall.h"


/* more top-level members than this cannot be a Messages API request */
#define TS_MAX_TOP_MEMBERS   256



typedef struct {
    ts_val_t    elem;
    ts_val_t    name;
    ts_val_t    type;
    ts_val_t    description;
    ts_val_t    input_schema;
    ts_member_t defer_loading;
    ts_member_t cache_control;
} ts_tool_t;

/* the spans an indexed item holds, and the members among them */
#define TS_PARTS_VALS     9
#define TS_PARTS_MEMBERS  2

typedef struct {
    ts_val_t    *v[TS_PARTS_VALS];
    size_t       nv;
    ts_member_t *m[TS_PARTS_MEMBERS];
    size_t       nm;
} ts_parts_t;



typedef struct {
    ts_val_t    elem;
    ts_val_t    type;
    ts_val_t    name;       /* tool_use, server_tool_use; tool_reference */
    ts_val_t    id;         /* tool_use id; tool_use_id of results */
    ts_val_t    content;    /* tool_result, tool_search_tool_result */
    ts_member_t caller;     /* tool_use (programmatic tool calling) */
    uint32_t    message;
    int32_t     parent;     /* enclosing tool_result block, or -1 */
    uint32_t    child_first;
    uint32_t    child_count;
} ts_block_t;


typedef struct {
    ts_val_t    elem;
    ts_val_t    role;
    ts_val_t    content;
    uint32_t    block_first;    /* blocks of this message, nested included */
    uint32_t    block_end;
} ts_message_t;


void ts_tool_parts(ts_tool_t *t, ts_parts_t *p);
void ts_message_parts(ts_message_t *m, ts_parts_t *p);
void ts_block_parts(ts_block_t *b, ts_parts_t *p);

/* moves the spans of n tools from offsets from base from to base to */
void ts_tools_shift(ts_tool_t *tools, size_t n, size_t from, size_t to);


/* top-level members the engine reads */
typedef enum {
    TS_TOP_MODEL = 0,
    TS_TOP_MESSAGES,
    TS_TOP_TOOLS,
    TS_TOP_SYSTEM,
    TS_TOP_STREAM,
    TS_TOP_TOOL_CHOICE,
    TS_TOP_ANTHROPIC_BETA,
    TS_TOP_ANTHROPIC_VERSION,
    TS_TOP_THREAD,
    TS_TOP_N
} ts_top_key_t;


/*
 * The last messages array scanned in an index's memory: its bytes, and
 * how many items its reading left in the index's arrays, which the
 * memory keeps (messages and blocks), with the offsets of the body it
 * came in, where the array started at base.  A client sends the
 * messages of the last turn again, one or two added: a scan that finds
 * these bytes where the array starts takes the items, moved to where it
 * starts, instead of reading them.  Equal bytes are the same values: a
 * value's reading depends on its bytes alone.  Reading another array in
 * the memory overwrites the items, and the counts say so.
 */
#define TS_SEEN_LISTS  2

typedef struct {
    char           *bytes;
    size_t          len;            /* 0: none remembered */
    size_t          bytes_cap;      /* in bytes */
    size_t          base;
    size_t          n[TS_SEEN_LISTS];
} ts_seen_t;


/*
 * Memory an index may reuse, such as the arrays a worker keeps for all
 * its requests: an index built in it borrows the arrays and gives them
 * back, grown to what it needed, when it is freed, so that the next
 * request faults in no fresh pages, and so that the last index's
 * messages and blocks are still there to recall (ts_seen_t).  The tools
 * arrays read are remembered apart, several, within tools.size bytes
 * (ts_recall.h; zeroed, none).  One index at a time: an index built
 * while the memory is lent takes its own.
 */
typedef struct {
    void           *arrays[4];      /* as ts_index_t's, in caps order */
    size_t          caps[4];
    uint64_t       *map;            /* the string map of a scan */
    size_t          map_words;
    ts_recall_t     tools;
    ts_recall_t     chat_tools;     /* Chat Completions' tools arrays:
                                       the same bytes index otherwise */
    ts_recall_t     responses_tools;    /* Responses' tools arrays */
    ts_seen_t       messages_seen;
    int             forget;         /* 1: keep no request's bytes, and
                                       drop those kept */
    int             lent;
} ts_index_mem_t;


typedef struct ts_index_s {
    const char     *buf;
    size_t          len;

    ts_member_t    *members;
    size_t          nmembers;
    int32_t         top[TS_TOP_N];  /* index into members, or -1 */

    ts_tool_t      *tools;
    size_t          ntools;

    ts_message_t   *messages;
    size_t          nmessages;

    ts_block_t     *blocks;
    size_t          nblocks;

    ts_status_t     status;
    size_t          err_off;        /* where scanning stopped on error */
    size_t          tools_recalled; /* tools taken from memory */
    size_t          messages_recalled;  /* messages taken from memory */
    ts_recalled_t  *tools_kept;     /* the memory's copy of the tools
                                       array, until its next use */
    ts_recall_t    *kept_in;        /* the memory tools_kept is in, when
                                       not the lender's tools */

    size_t          caps[4];        /* tools, blocks, messages, members */
    ts_index_mem_t *mem;            /* the arrays' lender, or NULL */
} ts_index_t;


/*
 * Scans buf once and records what the policy reads.  Strings are crossed
 * by a string map (ts_strmap.h) of a quarter of len's size, made as the
 * scan goes.
 */
ts_status_t ts_index_build(ts_index_t *ix, const char *buf, size_t len);

/* the same in memory mem lends, if it is free (mem may be NULL) */
ts_status_t ts_index_build_in(ts_index_t *ix, const char *buf, size_t len,
    ts_index_mem_t *mem);

/*
 * The same scan reading every byte of every string: the fallback when
 * the map cannot have memory, and what tests compare the map's scan to.
 */
ts_status_t ts_index_build_plain(ts_index_t *ix, const char *buf,
    size_t len);

/* frees the index's arrays, or gives them back to their lender */
void ts_index_free(ts_index_t *ix);

void ts_index_mem_free(ts_index_mem_t *mem);

const ts_member_t *ts_index_top(const ts_index_t *ix, ts_top_key_t key);

#endif /* TS_INDEX_H */
