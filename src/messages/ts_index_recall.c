/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The index's memory of earlier requests (ts_index_mem_t): the tools
 * arrays and the last messages array a worker read, recalled where their
 * bytes come again instead of being read, and remembered after reading.
 */

#include "messages/ts_index_scan.h"


void
ts_tool_parts(ts_tool_t *t, ts_parts_t *p)
{
    *p = (ts_parts_t) {
        { &t->elem, &t->name, &t->type, &t->description, &t->input_schema,
          &t->defer_loading.key, &t->defer_loading.val,
          &t->cache_control.key, &t->cache_control.val }, 9,
        { &t->defer_loading, &t->cache_control }, 2
    };
}


void
ts_message_parts(ts_message_t *m, ts_parts_t *p)
{
    *p = (ts_parts_t) { { &m->elem, &m->role, &m->content }, 3, { NULL }, 0 };
}


void
ts_block_parts(ts_block_t *b, ts_parts_t *p)
{
    *p = (ts_parts_t) {
        { &b->elem, &b->type, &b->name, &b->id, &b->content, &b->caller.key,
          &b->caller.val }, 7,
        { &b->caller }, 1
    };
}


static void
ts_tool_parts_of(void *item, ts_parts_t *p)
{
    ts_tool_parts(item, p);
}


static void
ts_message_parts_of(void *item, ts_parts_t *p)
{
    ts_message_parts(item, p);
}


static void
ts_block_parts_of(void *item, ts_parts_t *p)
{
    ts_block_parts(item, p);
}


/* an array of the index: its items' size and spans */
typedef struct {
    size_t    size;
    void    (*parts)(void *item, ts_parts_t *p);
} ts_list_kind_t;


static const ts_list_kind_t  ts_tools_list = {
    sizeof(ts_tool_t), ts_tool_parts_of
};


static const ts_list_kind_t  ts_messages_list = {
    sizeof(ts_message_t), ts_message_parts_of
};


static const ts_list_kind_t  ts_blocks_list = {
    sizeof(ts_block_t), ts_block_parts_of
};


/* moves the offsets n items hold from base from to base to */
static void
ts_items_shift(const ts_list_kind_t *k, void *items, size_t n, size_t from,
    size_t to)
{
    ts_parts_t  p;
    size_t      i, j;

    /* clients send an array where they sent it: nothing moves */
    if (from == to) {
        return;
    }

    for (i = 0; i < n; i++) {
        k->parts((char *) items + i * k->size, &p);

        for (j = 0; j < p.nv; j++) {
            if (p.v[j]->kind != TS_NONE) {
                p.v[j]->off = p.v[j]->off - from + to;
            }
        }

        for (j = 0; j < p.nm; j++) {
            if (p.m[j]->key.kind != TS_NONE) {
                p.m[j]->off = p.m[j]->off - from + to;
            }
        }
    }
}


void
ts_tools_shift(ts_tool_t *tools, size_t n, size_t from, size_t to)
{
    ts_items_shift(&ts_tools_list, tools, n, from, to);
}


/* the memory the scan recalls from and remembers in, NULL when none */
static ts_index_mem_t *
ts_memory(ts_scan_t *s)
{
    ts_index_mem_t  *mem;

    mem = s->ix->mem;

    return mem == NULL || mem->forget ? NULL : mem;
}


/* the memory of the last messages array, NULL when none */
static ts_seen_t *
ts_remembered(ts_scan_t *s)
{
    ts_index_mem_t  *mem;

    mem = ts_memory(s);

    return mem ? &mem->messages_seen : NULL;
}


/*
 * At the tools array: the tools of a remembered array, when all its
 * bytes come next, copied into the index and moved to where the array
 * starts.  1 when recalled, 0 when not, -1 without memory for them.
 */
static int
ts_tools_recall(ts_scan_t *s, ts_val_t *v)
{
    ts_index_mem_t       *mem;
    ts_index_t           *ix;
    ts_recalled_t        *e;
    ts_tool_t            *tools;
    size_t                off;

    mem = ts_memory(s);

    if (mem == NULL) {
        return 0;
    }

    e = ts_recall_find(&mem->tools, (const char *) s->p, s->end - s->p);

    if (e == NULL) {
        return 0;
    }

    ix = s->ix;

    if (ix->caps[0] < e->n) {
        tools = realloc(ix->tools, e->n * sizeof(ts_tool_t));
        if (tools == NULL) {
            return ts_fail(s, TS_ERR_NOMEM);
        }

        ix->tools = tools;
        ix->caps[0] = e->n;
    }

    off = s->p - s->start;

    if (e->n > 0) {
        memcpy(ix->tools, e->items, e->n * sizeof(ts_tool_t));
        ts_items_shift(&ts_tools_list, ix->tools, e->n, 0, off);
    }

    ix->ntools = e->n;
    ix->tools_recalled = e->n;
    ix->tools_kept = e;
    s->p += e->len;
    ts_index_set_array(s, v, off);

    return 1;
}


/*
 * At the messages array: the messages of the array last read, as far as
 * their bytes come again, with their blocks; like the tools, they are
 * still in the index's arrays.  The scan goes on after the last one
 * recalled, inside the array.  1 when some are recalled.
 */
static int
ts_messages_recall(ts_scan_t *s)
{
    ts_index_t          *ix;
    ts_seen_t           *seen;
    const ts_message_t  *m;
    size_t               k, end, e, avail, off, nblocks;

    seen = ts_remembered(s);

    if (seen == NULL) {
        return 0;
    }

    ix = s->ix;
    m = ix->messages;
    avail = s->end - s->p;
    end = 0;

    for (k = 0; k < seen->n[0]; k++) {
        e = m[k].elem.off + m[k].elem.len - seen->base;

        if (e > avail || memcmp(s->p + end, seen->bytes + end, e - end) != 0) {
            break;
        }

        end = e;
    }

    nblocks = k > 0 ? m[k - 1].block_end : 0;
    off = s->p - s->start;

    ts_items_shift(&ts_messages_list, ix->messages, k, seen->base, off);
    ts_items_shift(&ts_blocks_list, ix->blocks, nblocks, seen->base, off);

    /* what is read next takes the place of the others */
    seen->n[0] = k;
    seen->n[1] = nblocks;
    seen->base = off;

    if (k == 0) {
        return 0;
    }

    ix->nmessages = k;
    ix->nblocks = nblocks;
    ix->messages_recalled = k;

    /* inside the array, as ts_open leaves it */
    s->depth++;
    s->p += end;

    return 1;
}


/*
 * A buffer of at least n bytes, its bytes kept when it grows.  It grows
 * by a quarter more than asked: a conversation grows by a turn's bytes
 * on every turn, and each growth copies all it holds.
 */
static void *
ts_reserve(void **buf, size_t *cap, size_t n)
{
    size_t   ncap;
    void    *p;

    if (*cap < n) {
        ncap = n + n / 4;
        p = realloc(*buf, ncap);
        if (p == NULL) {
            return NULL;
        }

        *buf = p;
        *cap = ncap;
    }

    return *buf;
}


/*
 * The array just read, at base in the body, becomes the one remembered:
 * its first len bytes, of which the first kept were recalled and are in
 * memory already, and the counts of its items in the index's arrays.
 * Without memory for the bytes, nothing is remembered.
 */
static void
ts_remember(ts_seen_t *seen, const char *array, size_t len, size_t base,
    size_t kept, size_t n0, size_t n1)
{
    seen->len = 0;
    seen->n[0] = 0;
    seen->n[1] = 0;

    if (ts_reserve((void **) &seen->bytes, &seen->bytes_cap, len) == NULL) {
        return;
    }

    memcpy(seen->bytes + kept, array + kept, len - kept);

    seen->len = len;
    seen->base = base;
    seen->n[0] = n0;
    seen->n[1] = n1;
}


/* the top level's tools array: recalled, or read and remembered */
int
ts_index_tools(ts_scan_t *s, ts_val_t *v)
{
    ts_index_mem_t  *mem;
    ts_index_t      *ix;
    void            *kept;
    int              rc;

    rc = ts_tools_recall(s, v);
    mem = ts_memory(s);
    ix = s->ix;

    if (rc == 0) {
        if (ts_index_array_of(s, v, ts_index_tool) != 0) {
            return -1;
        }

        kept = mem ? ts_recall_add(&mem->tools, ix->buf + v->off, v->len,
                                   ix->tools, ix->ntools, sizeof(ts_tool_t),
                                   NULL, 0)
                   : NULL;

        if (kept != NULL) {
            ts_items_shift(&ts_tools_list, kept, ix->ntools, v->off, 0);
            ix->tools_kept = mem->tools.mru;
        }
    }

    if (rc == 1 && s->map != NULL) {
        ts_strmap_skip(s->map, v->off + v->len);
    }

    return rc < 0 ? -1 : 0;
}


/* the bytes of a messages array that tell its conversation */
#define TS_MESSAGES_SIGN  4096


/*
 * A conversation's messages are remembered whole when it comes again:
 * some were recalled, or the array starts with the bytes remembered of
 * the last one.  Else only those first bytes are, TS_MESSAGES_SIGN at
 * most: a worker that serves many conversations in turn copies each
 * array's start, not the whole array, to find nothing to recall.
 */
static int
ts_messages_again(const ts_seen_t *seen, const char *array, size_t len,
    size_t kept)
{
    size_t  n;

    n = len < TS_MESSAGES_SIGN ? len : TS_MESSAGES_SIGN;

    return kept > 0
           || (seen->len >= n && memcmp(array, seen->bytes, n) == 0);
}


/*
 * The top level's messages: those of the last array read as far as
 * their bytes come again, then the others read; remembered.
 */
int
ts_index_messages(ts_scan_t *s, ts_val_t *v)
{
    ts_index_t  *ix;
    ts_seen_t   *seen;
    size_t       off, kept;
    int          rc;

    ix = s->ix;
    off = s->p - s->start;

    rc = ts_messages_recall(s);
    kept = s->p - s->start - off;

    if (rc == 1 && s->map != NULL) {
        ts_strmap_skip(s->map, off + kept);
    }

    rc = rc == 1 ? ts_more(s, ']') : ts_open(s, '[');

    if (ts_index_elements(s, rc, ts_index_message) != 0) {
        return -1;
    }

    ts_index_set_array(s, v, off);
    seen = ts_remembered(s);

    if (seen == NULL) {
        return 0;
    }

    if (ts_messages_again(seen, ix->buf + off, v->len, kept)) {
        ts_remember(seen, ix->buf + off, v->len, off, kept, ix->nmessages,
                    ix->nblocks);

    } else {
        ts_remember(seen, ix->buf + off,
                    v->len < TS_MESSAGES_SIGN ? v->len : TS_MESSAGES_SIGN,
                    off, 0, 0, 0);
    }

    return 0;
}


void
ts_index_seen_free(ts_seen_t *seen)
{
    free(seen->bytes);
    memset(seen, 0, sizeof(ts_seen_t));
}
