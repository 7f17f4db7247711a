/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * JSON scanner and request index: validates a Messages API request body
 * and records byte spans of the parts the policy reads, without building
 * a tree of the conversation.
 */

#ifndef TS_JSON_H
#define TS_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "messages/ts_recall.h"


/* nesting deeper than this is not analysed (the body passes untouched) */
#define TS_MAX_DEPTH         512

/* more top-level members than this cannot be a Messages API request */
#define TS_MAX_TOP_MEMBERS   256


typedef enum {
    TS_OK = 0,
    TS_ERR_SYNTAX,          /* not JSON, or truncated */
    TS_ERR_DEPTH,           /* nesting beyond TS_MAX_DEPTH */
    TS_ERR_DUPLICATE,       /* a key the engine reads appears twice */
    TS_ERR_TYPE,            /* a member the engine reads has a wrong type */
    TS_ERR_LIMIT,           /* an engine limit other than depth */
    TS_ERR_NOMEM
} ts_status_t;


typedef enum {
    TS_NONE = 0,            /* absent */
    TS_STRING,
    TS_NUMBER,
    TS_OBJECT,
    TS_ARRAY,
    TS_TRUE,
    TS_FALSE,
    TS_NULL
} ts_kind_t;


typedef struct {
    size_t      off;        /* first byte of the value (quote included) */
    size_t      len;
    uint8_t     kind;       /* ts_kind_t */
    uint8_t     esc;        /* string with backslash escapes */
} ts_val_t;


/* an object member: span runs from the key's quote to the value's end */
typedef struct {
    size_t      off;
    size_t      len;
    ts_val_t    key;
    ts_val_t    val;
} ts_member_t;


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
    ts_seen_t       messages_seen;
    int             forget;         /* 1: keep no request's bytes, and
                                       drop those kept */
    int             lent;
} ts_index_mem_t;


typedef struct {
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

/* validates a whole document holding one JSON value of any kind */
ts_status_t ts_value_parse(const char *buf, size_t len, ts_val_t *v);

const ts_member_t *ts_index_top(const ts_index_t *ix, ts_top_key_t key);

/* compares a string value with escapes, decoded, with len bytes at s */
int ts_str_eq_escaped(const char *buf, const ts_val_t *v, const char *s,
    size_t len);

/*
 * Compares a JSON string value, escapes decoded, with a C string.  Inline:
 * callers pass literals, whose length and comparison the compiler folds.
 */
static inline int
ts_str_eq(const char *buf, const ts_val_t *v, const char *s)
{
    size_t  len;

    len = strlen(s);

    if (v->kind != TS_STRING) {
        return 0;
    }

    if (v->esc) {
        return ts_str_eq_escaped(buf, v, s, len);
    }

    return v->len - 2 == len && memcmp(buf + v->off + 1, s, len) == 0;
}

/* 1 when two string values of buf are spelled the same, byte for byte */
int ts_str_same_raw(const char *buf, const ts_val_t *a, const ts_val_t *b);

/*
 * decodes a JSON string value into out (at most cap bytes);
 * returns the decoded length, or (size_t) -1 if it does not fit
 */
size_t ts_str_decode(const char *buf, const ts_val_t *v, char *out,
    size_t cap);

/* lists the item spans of a valid array or object value; caller frees */
ts_status_t ts_container_items(const char *buf, const ts_val_t *v,
    ts_val_t **items, size_t *n);

/*
 * The first members named keys[0..n) of a valid object value, found in
 * one pass: out[i] is the one named keys[i]; an absent member is kind
 * NONE with an empty span at offset 0
 */
ts_status_t ts_object_members(const char *buf, const ts_val_t *obj,
    const char *const *keys, size_t n, ts_val_t *out);

static inline ts_status_t
ts_object_member(const char *buf, const ts_val_t *obj, const char *key,
    ts_val_t *out)
{
    return ts_object_members(buf, obj, &key, 1, out);
}

/*
 * the bytes of a string value: in place without escapes, else decoded
 * into tmp; NULL for a non-string or when cap is too small
 */
const char *ts_str_view(const char *buf, const ts_val_t *v, char *tmp,
    size_t cap, size_t *len);

const char *ts_status_name(ts_status_t st);

#endif /* TS_JSON_H */
