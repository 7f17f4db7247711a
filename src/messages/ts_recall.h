/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Arrays remembered by their bytes: a worker's memory of the tools
 * arrays it read, with the items reading each gave, so that a request
 * whose array has the bytes of one remembered takes its items instead of
 * reading them.  Many sessions of a team send byte-identical tools
 * arrays, one after another's on the same worker.
 */

#ifndef TS_RECALL_H
#define TS_RECALL_H

#include <stddef.h>
#include <stdint.h>


/* a gateway's default: some 80 tools arrays of Claude Code's size */
#define TS_RECALL_SIZE        (16 * 1024 * 1024)

/* arrays at most, whatever their size: bounds the work of a lookup */
#define TS_RECALL_MAX_ARRAYS  1024

/*
 * arrays whose hash is the bytes' compared in vain, at most, before a
 * lookup gives up: what colliding hashes can cost
 */
#define TS_RECALL_MAX_COMPARES  2


typedef struct ts_recalled_s     ts_recalled_t;
typedef struct ts_recall_memo_s  ts_recall_memo_t;


/*
 * What a later step derived from an array's bytes alone (and from what
 * it keys itself on), kept with the array: its first member.  Its bytes
 * count within the memory's bound; it is freed with the array.
 */
struct ts_recall_memo_s {
    void          (*free)(ts_recall_memo_t *m);
    size_t          size;           /* bytes it holds */
};

/*
 * One array: its bytes, and its items with offsets from the array's
 * first byte.  One allocation holds them all.
 */
struct ts_recalled_s {
    ts_recalled_t  *prev;           /* the more recently used */
    ts_recalled_t  *next;
    uint64_t        hash;           /* of the bytes */
    uint64_t        sample;         /* of spans of them: candidates */
    size_t          len;            /* bytes of the array */
    size_t          n;              /* items */
    size_t          size;           /* bytes the entry holds */
    const void     *items;
    const void     *extra;          /* after the items, or NULL */
    size_t          extra_size;
    const char     *bytes;
    ts_recall_memo_t  *memo;        /* or NULL */
};


/*
 * The arrays, most recently used first, and by length for lookups.
 * Zeroed, it holds none; size bounds the bytes its entries hold.
 */
typedef struct {
    ts_recalled_t  *mru;
    ts_recalled_t  *lru;
    ts_recalled_t **by_len;         /* ascending length */
    size_t          n;
    size_t          used;           /* bytes the entries hold */
    size_t          size;           /* bytes at most; 0: none kept */
    size_t          split;          /* where a lookup last saw the bytes
                                       differ from an array's */
    int             same_hash;      /* tests: every array hashes the
                                       same, so bytes alone tell them
                                       apart */
} ts_recall_t;


/*
 * The remembered array whose bytes start at p, with avail bytes there,
 * made the most recent; NULL when none is.  A hash of a few spans of
 * p's bytes picks the candidates, memcmp confirms; where arrays share
 * that hash, a hash of the bytes whole picks among them.
 */
ts_recalled_t *ts_recall_find(ts_recall_t *rc, const char *p,
    size_t avail);

/*
 * Remembers the array of len bytes and a copy of its n items of
 * item_size bytes, and of extra_size bytes of extra (what a format read
 * with the items; NULL: none), evicting the least recently used arrays
 * to stay within size; returns the copy of the items, the extra's copy
 * right after them, whose offsets the caller moves to run from the
 * array's first byte.  NULL when the array is not remembered: it cannot
 * fit, or there is no memory.
 */
void *ts_recall_add(ts_recall_t *rc, const char *bytes, size_t len,
    const void *items, size_t n, size_t item_size, const void *extra,
    size_t extra_size);

/*
 * Keeps memo with e, the most recent array, in place of the one it had,
 * evicting other arrays to stay within size.  -1 when e with it cannot
 * fit: nothing is evicted, and memo stays the caller's.
 */
int ts_recall_keep(ts_recall_t *rc, ts_recalled_t *e, ts_recall_memo_t *memo);

/* evicts the least recently used arrays until the entries fit in size */
void ts_recall_trim(ts_recall_t *rc);

/* drops every array; size stays */
void ts_recall_free(ts_recall_t *rc);

#endif /* TS_RECALL_H */
