/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The JSON scanner, schema-free: values as byte spans of the text they
 * were read from, without building a tree.  Its steps are in ts_scan.h,
 * string values' helpers in ts_str.h, and the Messages index built with
 * them in messages/ts_index.h.
 */

#ifndef TS_JSON_H
#define TS_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>


/* nesting deeper than this is not analysed (the body passes untouched) */
#define TS_MAX_DEPTH         512


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


/* validates a whole document holding one JSON value of any kind */
ts_status_t ts_value_parse(const char *buf, size_t len, ts_val_t *v);


/* lists the item spans of a valid array or object value; caller frees */
ts_status_t ts_container_items(const char *buf, const ts_val_t *v,
    ts_val_t **items, size_t *n);

/*
 * The first member named key of a valid object value; an absent member is
 * kind NONE with an empty span at offset 0
 */
ts_status_t ts_object_member(const char *buf, const ts_val_t *obj,
    const char *key, ts_val_t *out);

/* the same for n keys in one pass: out[i] is the one named keys[i] */
ts_status_t ts_object_members(const char *buf, const ts_val_t *obj,
    const char *const *keys, size_t n, ts_val_t *out);

/*
 * A whole document that must be one object, validated, and its members
 * named keys, in one pass; doc is the object's span
 */
ts_status_t ts_document_members(const char *buf, size_t len,
    const char *const *keys, size_t n, ts_val_t *out, ts_val_t *doc);

/* a reader of one member's value, for ts_document_read() (ts_scan.h) */
typedef struct ts_member_reader_s  ts_member_reader_t;

/* ts_document_members() with a reader of one member's value (or NULL) */
ts_status_t ts_document_read(const char *buf, size_t len,
    const char *const *keys, size_t n, ts_val_t *out, ts_val_t *doc,
    const ts_member_reader_t *rd);

/*
 * The items of a valid array value and, for each item that is an
 * object, its members named keys, in one pass: (*out)[i * n + k] is item
 * i's member keys[k] (kind NONE for other items).  The caller frees
 * *items and *out.
 */
ts_status_t ts_items_members(const char *buf, const ts_val_t *arr,
    const char *const *keys, size_t n, ts_val_t **items, ts_val_t **out,
    size_t *count);


const char *ts_status_name(ts_status_t st);

#endif /* TS_JSON_H */
