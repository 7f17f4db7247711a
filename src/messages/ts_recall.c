/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Arrays remembered by their bytes (ts_recall.h).  A lookup does not
 * know where the array at p ends: at each length an array is remembered
 * with, where p holds the closing bracket there, it hashes a few spans
 * of that prefix (and the length) and compares with theirs; a hash that
 * matches is confirmed by memcmp.  A hit costs the spans and one memcmp,
 * not a hash of every byte.  Arrays of one length that differ only
 * between the spans (a user's path in a description) share that hash:
 * after one compared in vain, the prefix's hash whole, made in one pass
 * over the bytes however many lengths it serves, picks among the rest.
 * At most TS_RECALL_MAX_COMPARES arrays are compared in vain besides the
 * most recent.
 */

#include <stdlib.h>
#include <string.h>

#include "messages/ts_recall.h"


#define TS_K1  0x9e3779b97f4a7c15ULL
#define TS_K2  0xff51afd7ed558ccdULL
#define TS_K3  0xc4ceb9fe1a85ec53ULL

/* bytes a round of the hash takes: four lanes of two words */
#define TS_HASH_ROUND  64

/* bytes of a remembered array compared at a few places before memcmp */
#define TS_SAMPLES      8
#define TS_SAMPLE_LEN  32

/* the window where arrays were seen to differ, compared first */
#define TS_SPLIT_LEN    64

/* bytes ts_recall_diff() compares at a time before it narrows down */
#define TS_DIFF_PAGE    4096


/* its address differs from one process to the next: the hash's seed */
static const char  ts_recall_anchor;


/*
 * A hash of a growing prefix, seeded: four lanes, each adding two words
 * folded by one 64 x 64 -> 128-bit multiplication with seeded keys, the
 * lane rotated first so that where a word lies counts.  No lane waits
 * for a multiplication to end: the hash keeps up with memcmp.
 */
typedef struct {
    uint64_t  lane[4];
    uint64_t  key[8];
    size_t    done;                 /* bytes in the lanes, whole rounds */
} ts_hash_t;


/* the 128-bit product of a and b, its halves folded */
static uint64_t
ts_hash_fold(uint64_t a, uint64_t b)
{
#ifdef __SIZEOF_INT128__
    unsigned __int128  m;

    m = (unsigned __int128) a * b;

    return (uint64_t) m ^ (uint64_t) (m >> 64);
#else
    /* 32-bit targets: the same product from its four 32-bit parts */
    uint64_t  lo, hi, mid1, mid2, a0, a1, b0, b1;

    a0 = a & 0xffffffff;
    a1 = a >> 32;
    b0 = b & 0xffffffff;
    b1 = b >> 32;

    lo = a0 * b0;
    mid1 = a1 * b0 + (lo >> 32);
    mid2 = a0 * b1 + (mid1 & 0xffffffff);
    hi = a1 * b1 + (mid1 >> 32) + (mid2 >> 32);
    lo = (mid2 << 32) | (lo & 0xffffffff);

    return lo ^ hi;
#endif
}


static void
ts_hash_start(ts_hash_t *h)
{
    uint64_t  seed;
    int       i;

    seed = (uint64_t) (uintptr_t) &ts_recall_anchor;

    for (i = 0; i < 4; i++) {
        h->lane[i] = ts_hash_fold(seed ^ TS_K1, TS_K3 + (uint64_t) i);
    }

    for (i = 0; i < 8; i++) {
        h->key[i] = ts_hash_fold(seed ^ TS_K2, TS_K1 + (uint64_t) i);
    }

    h->done = 0;
}


/* takes p's whole rounds up to byte len into the lanes */
static void
ts_hash_to(ts_hash_t *h, const char *p, size_t len)
{
    uint64_t  w[8];
    int       i;

    while (h->done + TS_HASH_ROUND <= len) {
        memcpy(w, p + h->done, TS_HASH_ROUND);

        for (i = 0; i < 4; i++) {
            h->lane[i] = (h->lane[i] << 23 | h->lane[i] >> 41)
                         + ts_hash_fold(w[2 * i] ^ h->key[2 * i],
                                        w[2 * i + 1] ^ h->key[2 * i + 1]);
        }

        h->done += TS_HASH_ROUND;
    }
}


/* the hash of p's first len bytes, the lanes taken up to them */
static uint64_t
ts_hash_end(const ts_recall_t *rc, const ts_hash_t *h, const char *p,
    size_t len)
{
    uint64_t  w[8], r;
    int       i;

    if (rc->same_hash) {
        return 0;
    }

    /* the tail, zero-padded: the length tells it from real zeros */
    memset(w, 0, sizeof(w));
    memcpy(w, p + h->done, len - h->done);
    r = (uint64_t) len * TS_K1;

    for (i = 0; i < 4; i++) {
        r = ts_hash_fold(r ^ h->lane[i] ^ w[2 * i],
                         TS_K2 ^ h->key[2 * i] ^ w[2 * i + 1]);
    }

    return ts_hash_fold(r ^ TS_K3, h->key[1]);
}


/*
 * The hash of the spans ts_recall_same() compares first, and of len: what
 * picks the candidates of a lookup.  An array shorter than the spans is
 * hashed whole.  Arrays of one length that differ only between the
 * spans share it; a lookup then hashes the bytes whole (ts_recall_find).
 */
static uint64_t
ts_recall_sample(const ts_recall_t *rc, const char *p, size_t len)
{
    ts_hash_t  h;
    char       spans[TS_SAMPLES * TS_SAMPLE_LEN + sizeof(uint64_t)];
    uint64_t   n;
    size_t     i;

    ts_hash_start(&h);

    if (len < TS_SAMPLES * TS_SAMPLE_LEN) {
        ts_hash_to(&h, p, len);
        return ts_hash_end(rc, &h, p, len);
    }

    for (i = 0; i < TS_SAMPLES; i++) {
        memcpy(spans + i * TS_SAMPLE_LEN,
               p + (len - TS_SAMPLE_LEN) / (TS_SAMPLES - 1) * i,
               TS_SAMPLE_LEN);
    }

    n = (uint64_t) len;
    memcpy(spans + TS_SAMPLES * TS_SAMPLE_LEN, &n, sizeof(n));
    ts_hash_to(&h, spans, sizeof(spans));

    return ts_hash_end(rc, &h, spans, sizeof(spans));
}


/*
 * Where p and q first differ, to the TS_SPLIT_LEN bytes that hold it; len
 * when they do not.  memcmp by pages, then by windows in the page.
 */
static size_t
ts_recall_diff(const char *p, const char *q, size_t len)
{
    size_t  at, n;

    for (at = 0; at < len; at += n) {
        n = len - at < TS_DIFF_PAGE ? len - at : TS_DIFF_PAGE;

        if (memcmp(p + at, q + at, n) != 0) {
            break;
        }
    }

    if (at == len) {
        return len;
    }

    for ( /* void */ ; at + TS_SPLIT_LEN < len; at += TS_SPLIT_LEN) {
        if (memcmp(p + at, q + at, TS_SPLIT_LEN) != 0) {
            break;
        }
    }

    return at;
}


/*
 * 1 when e's bytes start at p.  The window where the last array
 * compared in vain differed is compared first: a team's arrays differ
 * in one place (a version, a path, a server of one member's), which
 * memcmp could find last.  Then a few spans spread over the array, then
 * all of it; where that finds a difference becomes the window.  0 when
 * the window or a span differs, -1 when the array was compared in vain.
 */
static int
ts_recall_same(ts_recall_t *rc, const ts_recalled_t *e, const char *p)
{
    size_t  i, at;

    at = rc->split;

    if (at + TS_SPLIT_LEN <= e->len
        && memcmp(p + at, e->bytes + at, TS_SPLIT_LEN) != 0)
    {
        return 0;
    }

    if (e->len >= TS_SAMPLES * TS_SAMPLE_LEN) {
        for (i = TS_SAMPLES; i > 0; i--) {
            at = (e->len - TS_SAMPLE_LEN) / (TS_SAMPLES - 1) * (i - 1);

            if (memcmp(p + at, e->bytes + at, TS_SAMPLE_LEN) != 0) {
                return 0;
            }
        }
    }

    at = ts_recall_diff(p, e->bytes, e->len);

    if (at == e->len) {
        return 1;
    }

    rc->split = at;

    return -1;
}


static void
ts_recall_unlink(ts_recall_t *rc, ts_recalled_t *e)
{
    if (e->prev) {
        e->prev->next = e->next;
    } else {
        rc->mru = e->next;
    }

    if (e->next) {
        e->next->prev = e->prev;
    } else {
        rc->lru = e->prev;
    }

    e->prev = NULL;
    e->next = NULL;
}


static void
ts_recall_front(ts_recall_t *rc, ts_recalled_t *e)
{
    e->next = rc->mru;

    if (rc->mru) {
        rc->mru->prev = e;
    } else {
        rc->lru = e;
    }

    rc->mru = e;
}


/* the first position in by_len whose array is len bytes or longer */
static size_t
ts_recall_seek(const ts_recall_t *rc, size_t len)
{
    size_t  lo, hi, mid;

    lo = 0;
    hi = rc->n;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;

        if (rc->by_len[mid]->len < len) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }

    return lo;
}


static void
ts_recall_evict(ts_recall_t *rc, ts_recalled_t *e)
{
    size_t  i;

    /* arrays of one length lie together: e is among them */
    for (i = ts_recall_seek(rc, e->len); rc->by_len[i] != e; i++) {
        /* void */
    }

    memmove(&rc->by_len[i], &rc->by_len[i + 1],
            (rc->n - i - 1) * sizeof(ts_recalled_t *));
    rc->n--;

    ts_recall_unlink(rc, e);
    rc->used -= e->size;

    if (e->memo != NULL) {
        e->memo->free(e->memo);
    }

    free(e);
}


/* e without its memo */
static void
ts_recall_forget_memo(ts_recall_t *rc, ts_recalled_t *e)
{
    if (e->memo != NULL) {
        rc->used -= e->memo->size;
        e->size -= e->memo->size;
        e->memo->free(e->memo);
        e->memo = NULL;
    }
}


int
ts_recall_keep(ts_recall_t *rc, ts_recalled_t *e, ts_recall_memo_t *memo)
{
    ts_recall_forget_memo(rc, e);

    /* e with it cannot fit whatever goes: the other arrays stay */
    if (e->size + memo->size > rc->size) {
        return -1;
    }

    /* the arrays used less recently than e go first */
    while (rc->used + memo->size > rc->size && rc->lru != e) {
        ts_recall_evict(rc, rc->lru);
    }

    e->memo = memo;
    e->size += memo->size;
    rc->used += memo->size;

    return 0;
}


ts_recalled_t *
ts_recall_find(ts_recall_t *rc, const char *p, size_t avail)
{
    ts_recalled_t  *e;
    ts_hash_t       h;
    uint64_t        sample, v;
    size_t          i, last, whole, hashed, compares;
    int             same;

    e = rc->mru;

    /* a worker serving one session sees its array again: no hash */
    if (e != NULL && e->len <= avail && ts_recall_same(rc, e, p) == 1) {
        return e;
    }

    ts_hash_start(&h);
    last = 0;
    whole = 0;
    hashed = 0;
    sample = 0;
    v = 0;
    compares = 0;

    for (i = 0; i < rc->n; i++) {
        e = rc->by_len[i];

        if (e->len > avail) {
            break;
        }

        if (e == rc->mru || p[e->len - 1] != ']') {
            continue;
        }

        if (e->len != last) {
            sample = ts_recall_sample(rc, p, e->len);
            last = e->len;
        }

        if (e->sample != sample) {
            continue;
        }

        /*
         * Once arrays of this length compared in vain, the hash of the
         * bytes whole picks among the others: arrays that differ only
         * between the spans cost one memcmp, not one each.
         */
        if (whole == e->len) {
            if (hashed != e->len) {
                ts_hash_to(&h, p, e->len);
                v = ts_hash_end(rc, &h, p, e->len);
                hashed = e->len;
            }

            if (e->hash != v) {
                continue;
            }
        }

        same = ts_recall_same(rc, e, p);

        if (same == 1) {
            ts_recall_unlink(rc, e);
            ts_recall_front(rc, e);
            return e;
        }

        if (same == 0) {
            continue;
        }

        /*
         * the spans and the window agree, the bytes do not (arrays that
         * differ elsewhere, or aimed at): after a few, read whole
         */
        if (++compares == TS_RECALL_MAX_COMPARES) {
            return NULL;
        }

        whole = e->len;
    }

    return NULL;
}


void *
ts_recall_add(ts_recall_t *rc, const char *bytes, size_t len,
    const void *items, size_t n, size_t item_size, const void *extra,
    size_t extra_size)
{
    ts_recalled_t  *e;
    ts_hash_t       h;
    size_t          size, room, i;
    char           *items_copy, *extra_copy, *bytes_copy;

    /* the extra's room stays a multiple of 8: the bytes need no more */
    extra_size = extra ? extra_size : 0;
    room = (extra_size + 7) & ~(size_t) 7;
    size = sizeof(ts_recalled_t) + n * item_size + room + len;

    if (len == 0 || size > rc->size) {
        return NULL;
    }

    while (rc->n > 0
           && (rc->used + size > rc->size || rc->n == TS_RECALL_MAX_ARRAYS))
    {
        ts_recall_evict(rc, rc->lru);
    }

    if (rc->by_len == NULL) {
        rc->by_len = malloc(TS_RECALL_MAX_ARRAYS * sizeof(ts_recalled_t *));
        if (rc->by_len == NULL) {
            return NULL;
        }
    }

    e = malloc(size);
    if (e == NULL) {
        return NULL;
    }

    /* items first: the header's size keeps them aligned */
    items_copy = (char *) (e + 1);
    extra_copy = items_copy + n * item_size;
    bytes_copy = extra_copy + room;
    if (n > 0) {
        memcpy(items_copy, items, n * item_size);
    }

    if (extra_size > 0) {
        memcpy(extra_copy, extra, extra_size);
    }

    memcpy(bytes_copy, bytes, len);

    ts_hash_start(&h);
    ts_hash_to(&h, bytes, len);

    e->prev = NULL;
    e->next = NULL;
    e->hash = ts_hash_end(rc, &h, bytes, len);
    e->sample = ts_recall_sample(rc, bytes, len);
    e->len = len;
    e->n = n;
    e->size = size;
    e->memo = NULL;
    e->items = items_copy;
    e->extra = extra_size > 0 ? extra_copy : NULL;
    e->extra_size = extra_size;
    e->bytes = bytes_copy;

    i = ts_recall_seek(rc, len);
    memmove(&rc->by_len[i + 1], &rc->by_len[i],
            (rc->n - i) * sizeof(ts_recalled_t *));
    rc->by_len[i] = e;
    rc->n++;

    ts_recall_front(rc, e);
    rc->used += size;

    return items_copy;
}


void
ts_recall_trim(ts_recall_t *rc)
{
    while (rc->n > 0 && rc->used > rc->size) {
        ts_recall_evict(rc, rc->lru);
    }
}


void
ts_recall_free(ts_recall_t *rc)
{
    while (rc->n > 0) {
        ts_recall_evict(rc, rc->lru);
    }

    free(rc->by_len);
    rc->by_len = NULL;
}
