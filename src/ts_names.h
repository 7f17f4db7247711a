/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * A set of tool names taken from a request body, for lookups in
 * O(log n): names from history are matched against tools[] and back.
 */

#ifndef TS_NAMES_H
#define TS_NAMES_H

#include <stddef.h>

#include "ts_json.h"


/* longest escaped name ts_names_has_val() decodes for a lookup */
#define TS_NAMES_MAX  1024


typedef struct {
    const char  *p;
    size_t       len;
} ts_name_t;


typedef struct {
    ts_name_t   *items;
    size_t       n;
    size_t       cap;
    char       **copies;    /* decoded names with escapes */
    size_t       ncopies;
    int          failed;    /* an allocation failed */
} ts_names_t;


void ts_names_init(ts_names_t *s);
void ts_names_free(ts_names_t *s);

/* adds a string value of buf (decoded when it has escapes) */
int ts_names_add(ts_names_t *s, const char *buf, const ts_val_t *v);

/* sorts; call once after the last add and before the first lookup */
void ts_names_sort(ts_names_t *s);

int ts_names_has(const ts_names_t *s, const char *p, size_t len);

/* 1 for an MCP tool name: mcp__<server>__<tool> */
int ts_name_is_mcp(const char *p, size_t len);

/* 1 when the set holds the string value v of buf */
int ts_names_has_val(const ts_names_t *s, const char *buf,
    const ts_val_t *v);

#endif /* TS_NAMES_H */
