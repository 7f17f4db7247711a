/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

#include "scan/ts_buf.h"
#include "rewrite/ts_edit.h"


void
ts_edits_init(ts_edits_t *e)
{
    memset(e, 0, sizeof(ts_edits_t));
}


void
ts_edits_free(ts_edits_t *e)
{
    free(e->edits);
    free(e->arena);
    ts_edits_init(e);
}


/*
 * Room for n more edits and bytes more bytes in the arena, which the
 * callers have found missing: the rare path, out of their line
 */
static int
ts_edits_grow(ts_edits_t *e, size_t n, size_t bytes)
{
    ts_edit_t  *ed;
    char       *p;

    if (e->n + n > e->cap) {
        ed = ts_array_grow(e->edits, &e->cap, e->n + n, sizeof(ts_edit_t),
                           16);
        if (ed == NULL) {
            goto failed;
        }

        e->edits = ed;
    }

    if (e->alen + bytes > e->acap) {
        p = ts_array_grow(e->arena, &e->acap, e->alen + bytes, 1, 256);
        if (p == NULL) {
            goto failed;
        }

        e->arena = p;
    }

    return 0;

failed:

    e->failed = 1;
    return -1;
}


int
ts_edits_reserve(ts_edits_t *e, size_t n, size_t bytes)
{
    if (e->failed) {
        return -1;
    }

    return ts_edits_grow(e, n, bytes);
}


static int
ts_arena_put(ts_edits_t *e, const void *data, size_t len)
{
    /* a deletion puts nothing, and the arena may not exist yet */
    if (len == 0) {
        return 0;
    }

    if (e->alen + len > e->acap && ts_edits_grow(e, 0, len) != 0) {
        return -1;
    }

    memcpy(e->arena + e->alen, data, len);
    e->alen += len;

    return 0;
}


int
ts_edit_put(ts_edits_t *e, size_t off, size_t del, const void *a,
    size_t alen, const void *b, size_t blen)
{
    ts_edit_t  *ed;

    if (e->failed || (e->n == e->cap && ts_edits_grow(e, 1, 0) != 0)) {
        return -1;
    }

    ed = &e->edits[e->n];
    ed->off = off;
    ed->del = del;
    ed->data = e->alen;
    ed->len = alen + blen;
    ed->seq = (uint32_t) e->n;

    if (ts_arena_put(e, a, alen) != 0 || ts_arena_put(e, b, blen) != 0) {
        return -1;
    }

    e->n++;

    return 0;
}


int
ts_edit_replace(ts_edits_t *e, size_t off, size_t del, const void *data,
    size_t len)
{
    return ts_edit_put(e, off, del, data, len, "", 0);
}


size_t
ts_edits_size(const ts_edits_t *e, size_t inlen)
{
    size_t  i, n;

    n = inlen;

    for (i = 0; i < e->n; i++) {
        n = n - e->edits[i].del + e->edits[i].len;
    }

    return n;
}


static int
ts_edit_cmp(const void *a, const void *b)
{
    const ts_edit_t  *x, *y;

    x = a;
    y = b;

    if (x->off != y->off) {
        return x->off < y->off ? -1 : 1;
    }

    return x->seq < y->seq ? -1 : (x->seq > y->seq);
}


/* 1 when the edits are in order already, as a deferral adds them */
static int
ts_edits_sorted(const ts_edits_t *e)
{
    size_t  i;

    for (i = 1; i < e->n; i++) {
        if (ts_edit_cmp(&e->edits[i - 1], &e->edits[i]) > 0) {
            return 0;
        }
    }

    return 1;
}


int
ts_edits_pieces(ts_edits_t *e, const char *in, size_t inlen,
    ts_pieces_t *it)
{
    ts_edit_t  *ed;
    size_t      i, pos;

    if (e->failed) {
        return -1;
    }

    /* qsort() and memcpy() take no NULL, even for zero items */
    if (e->n > 1 && !ts_edits_sorted(e)) {
        qsort(e->edits, e->n, sizeof(ts_edit_t), ts_edit_cmp);
    }

    pos = 0;

    for (i = 0; i < e->n; i++) {
        ed = &e->edits[i];

        if (ed->off < pos || ed->off + ed->del > inlen) {
            return -1;
        }

        pos = ed->off + ed->del;
    }

    it->e = e;
    it->in = in;
    it->inlen = inlen;
    it->i = 0;
    it->pos = 0;
    it->added = 0;

    return 0;
}


int
ts_pieces_next(ts_pieces_t *it, ts_piece_t *p)
{
    const ts_edit_t  *ed;

    for ( ;; ) {
        if (it->i == it->e->n) {
            if (it->pos == it->inlen) {
                return 0;
            }

            p->data = it->in + it->pos;
            p->len = it->inlen - it->pos;
            p->kept = 1;
            it->pos = it->inlen;

            return 1;
        }

        ed = &it->e->edits[it->i];

        if (it->added) {
            it->added = 0;
            it->i++;
            it->pos = ed->off + ed->del;

            if (ed->len == 0) {
                continue;
            }

            p->data = it->e->arena + ed->data;
            p->len = ed->len;
            p->kept = 0;

            return 1;
        }

        it->added = 1;

        if (ed->off > it->pos) {
            p->data = it->in + it->pos;
            p->len = ed->off - it->pos;
            p->kept = 1;

            return 1;
        }
    }
}


int
ts_edits_render(ts_edits_t *e, const char *in, size_t inlen, char *out)
{
    ts_pieces_t  it;
    ts_piece_t   p;

    if (ts_edits_pieces(e, in, inlen, &it) != 0) {
        return -1;
    }

    while (ts_pieces_next(&it, &p)) {
        memcpy(out, p.data, p.len);
        out += p.len;
    }

    return 0;
}


static size_t
ts_end(const ts_val_t *v)
{
    return v->off + v->len;
}


int
ts_edit_delete_items(ts_edits_t *e, const ts_val_t *items, size_t n,
    const unsigned char *del)
{
    size_t  a, b, from, to;

    for (a = 0; a < n; a = b) {
        if (!del[a]) {
            b = a + 1;
            continue;
        }

        for (b = a; b < n && del[b]; b++) {
            /* void */
        }

        /*
         * A run followed by a kept item takes the separator after it;
         * a trailing run takes the separator before it.
         */
        if (b < n) {
            from = items[a].off;
            to = items[b].off;

        } else if (a > 0) {
            from = ts_end(&items[a - 1]);
            to = ts_end(&items[n - 1]);

        } else {
            from = items[0].off;
            to = ts_end(&items[n - 1]);
        }

        if (ts_edit_replace(e, from, to - from, "", 0) != 0) {
            return -1;
        }
    }

    return 0;
}


static int
ts_edit_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}


void
ts_member_span(const char *buf, const ts_member_t *m, size_t *from,
    size_t *to)
{
    size_t  f, t;

    f = m->off;
    t = m->off + m->len;

    while (f > 0 && ts_edit_ws(buf[f - 1])) {
        f--;
    }

    /* not the first member: the comma before it goes with it */
    if (f > 0 && buf[f - 1] == ',') {
        *from = f - 1;
        *to = t;
        return;
    }

    while (ts_edit_ws(buf[t])) {
        t++;
    }

    *from = m->off;
    *to = (buf[t] == ',') ? t + 1 : t;
}


int
ts_edit_delete_member(ts_edits_t *e, const char *buf, const ts_member_t *m)
{
    size_t  from, to;

    ts_member_span(buf, m, &from, &to);

    return ts_edit_replace(e, from, to - from, "", 0);
}


int
ts_edit_append_item(ts_edits_t *e, const ts_val_t *container,
    const ts_val_t *last, const char *data, size_t len)
{
    if (last == NULL) {
        return ts_edit_replace(e, container->off + 1, 0, data, len);
    }

    return ts_edit_put(e, ts_end(last), 0, ",", 1, data, len);
}


int
ts_edit_append_block(ts_edits_t *e, const ts_index_t *ix, size_t i,
    const char *block, size_t len)
{
    static const char    wrap[] = "[{\"type\":\"text\",\"text\":";
    const ts_message_t  *m;
    const ts_val_t      *last;
    uint32_t             k;

    m = &ix->messages[i];

    /* string content becomes a text block; its bytes stay in place */
    if (m->content.kind == TS_STRING) {
        if (ts_edit_replace(e, m->content.off, 0, wrap, sizeof(wrap) - 1)
            != 0)
        {
            return -1;
        }

        if (ts_edit_put(e, ts_end(&m->content), 0, "},", 2, block, len)
            != 0)
        {
            return -1;
        }

        return ts_edit_replace(e, ts_end(&m->content), 0, "]", 1);
    }

    if (m->content.kind != TS_ARRAY) {
        return -1;
    }

    last = NULL;

    for (k = m->block_first; k < m->block_end; k++) {
        if (ix->blocks[k].parent < 0) {
            last = &ix->blocks[k].elem;
        }
    }

    if (last == NULL) {
        return ts_edit_replace(e, m->content.off + 1, 0, block, len);
    }

    return ts_edit_put(e, ts_end(last), 0, ",", 1, block, len);
}
