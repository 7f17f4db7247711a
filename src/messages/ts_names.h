/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * A set of tool names taken from a request body: names from history
 * are matched against tools[] and back.  Sealed, the set is a hash
 * table with open addressing, which holds each name once however often
 * a conversation calls it.  The hash is seeded by where the code is
 * loaded (ASLR), so a client cannot craft names that share a slot;
 * names are told apart by their bytes, so a collision costs a probe,
 * never a wrong answer.
 */

#ifndef TS_NAMES_H
#define TS_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "messages/ts_index.h"


/* longest escaped name ts_names_has_val() decodes for a lookup */
#define TS_NAMES_MAX  1024


typedef struct {
    const char  *p;
    size_t       len;
    uint64_t     hash;      /* made when the set is sealed */
} ts_name_t;


typedef struct {
    ts_name_t   *items;
    size_t       n;
    size_t       cap;
    char       **copies;    /* decoded names with escapes */
    size_t       ncopies;
    uint32_t    *slots;     /* sealed: 1 + an item's index, or 0 */
    size_t       mask;      /* slots - 1, a power of two less one */
    int          failed;    /* an allocation failed */
} ts_names_t;


void ts_names_init(ts_names_t *s);
void ts_names_free(ts_names_t *s);

/* adds a string value of buf (decoded when it has escapes) */
int ts_names_add(ts_names_t *s, const char *buf, const ts_val_t *v);

/* the same, the set holding a copy: buf may go before the set does */
int ts_names_add_copy(ts_names_t *s, const char *buf, const ts_val_t *v);

/*
 * Makes the table for lookups; call after the last add.  A set that is
 * not sealed (or whose table could not be allocated) is looked up name
 * by name: slower, the same answers.
 */
void ts_names_seal(ts_names_t *s);

/* orders the items by their bytes, for listing; unseals */
void ts_names_sort(ts_names_t *s);

int ts_names_has(const ts_names_t *s, const char *p, size_t len);

/* 1 for an MCP tool name: mcp__<server>__<tool> */
int ts_name_is_mcp(const char *p, size_t len);

/* 1 when the set holds the string value v of buf */
int ts_names_has_val(const ts_names_t *s, const char *buf,
    const ts_val_t *v);

#endif /* TS_NAMES_H */
