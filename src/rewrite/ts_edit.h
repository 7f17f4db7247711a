/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Edit list: the output is the original body with a set of
 * non-overlapping byte ranges replaced.  Everything outside an edit is
 * copied, never re-serialised.
 */

#ifndef TS_EDIT_H
#define TS_EDIT_H

#include <stddef.h>
#include <stdint.h>

#include "messages/ts_index.h"


typedef struct {
    size_t      off;        /* where in the original */
    size_t      del;        /* bytes of the original dropped */
    size_t      data;       /* offset of the new bytes in the arena */
    size_t      len;        /* new bytes */
    uint32_t    seq;        /* insertion order, for edits at one offset */
} ts_edit_t;


typedef struct {
    ts_edit_t  *edits;
    size_t      n;
    size_t      cap;
    char       *arena;
    size_t      alen;
    size_t      acap;
    int         failed;     /* an allocation failed: render refuses */
} ts_edits_t;


void ts_edits_init(ts_edits_t *e);
void ts_edits_free(ts_edits_t *e);

/*
 * room for n more edits and bytes more new bytes, so that a step that
 * knows how many it adds grows the list once; -1 on failure
 */
int ts_edits_reserve(ts_edits_t *e, size_t n, size_t bytes);

/* replaces [off, off + del) with data; del 0 inserts */
int ts_edit_replace(ts_edits_t *e, size_t off, size_t del, const void *data,
    size_t len);

/* one edit whose new bytes are the concatenation of a and b */
int ts_edit_put(ts_edits_t *e, size_t off, size_t del, const void *a,
    size_t alen, const void *b, size_t blen);

/* size of the rendered output for an input of inlen bytes */
size_t ts_edits_size(const ts_edits_t *e, size_t inlen);

/*
 * The output as pieces in order: ranges of the input left as they are,
 * and the new bytes of each edit.  A caller that can send pieces where
 * they lie (a chain of buffers) needs no rendered copy of the input.
 */
typedef struct {
    const char  *data;      /* in the input, or in the edits' arena */
    size_t       len;       /* never 0 */
    int          kept;      /* 1: a range of the input */
} ts_piece_t;


typedef struct {
    const ts_edits_t  *e;
    const char        *in;
    size_t             inlen;
    size_t             i;       /* the next edit */
    size_t             pos;     /* input bytes passed */
    int                added;   /* edit i's new bytes come next */
} ts_pieces_t;


/*
 * sorts the edits (insertion order breaks ties at one offset) and starts
 * the walk; returns -1 when edits overlap or fall outside the input, or
 * after an allocation failure
 */
int ts_edits_pieces(ts_edits_t *e, const char *in, size_t inlen,
    ts_pieces_t *it);

/* the next piece; 0 after the last */
int ts_pieces_next(ts_pieces_t *it, ts_piece_t *p);

/* writes the output into out (ts_edits_size() bytes); -1 as above */
int ts_edits_render(ts_edits_t *e, const char *in, size_t inlen, char *out);


/*
 * Container helpers: items are the spans of every element (or member) of
 * one array (or object), in order.
 */

/* deletes the items whose del[] is set, with their separators */
int ts_edit_delete_items(ts_edits_t *e, const ts_val_t *items, size_t n,
    const unsigned char *del);

/* the bytes of an object member with one adjacent comma */
void ts_member_span(const char *buf, const ts_member_t *m, size_t *from,
    size_t *to);

/* deletes an object member with one adjacent comma */
int ts_edit_delete_member(ts_edits_t *e, const char *buf,
    const ts_member_t *m);

/* appends an item to an array after its last item (NULL: it is empty) */
int ts_edit_append_item(ts_edits_t *e, const ts_val_t *container,
    const ts_val_t *last, const char *data, size_t len);

/* appends a content block (JSON object) to message i of the index */
int ts_edit_append_block(ts_edits_t *e, const ts_index_t *ix, size_t i,
    const char *block, size_t len);

#endif /* TS_EDIT_H */
