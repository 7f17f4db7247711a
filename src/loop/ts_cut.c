/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

#include "loop/ts_cut.h"
#include "rewrite/ts_edit.h"
#include "scan/ts_json.h"
#include "scan/ts_str.h"
#include "loop/ts_sse.h"


#define TS_HOSTED_PREFIX  "tool_search_tool_"


/* where the JSON cut reads */
enum {
    TS_J_START = 0,         /* before the message */
    TS_J_OBJECT,            /* in it, outside its content array */
    TS_J_BEFORE,            /* in the array, before an item */
    TS_J_ITEM,              /* in an item */
    TS_J_AFTER,             /* in the array, after an item */
    TS_J_DONE               /* past the message */
};

/* an item's bytes */
enum { TS_J_HOLD = 0, TS_J_PASS };

/* the last item */
enum { TS_J_NONE = 0, TS_J_KEPT, TS_J_DROPPED };

/* what the string being read is */
enum { TS_J_NOTOK = 0, TS_J_KEY, TS_J_VALUE };

/* what a byte is to the reading */
enum {
    TS_J_EV_NONE = 0,
    TS_J_EV_OPEN,           /* a string begins */
    TS_J_EV_CLOSE,          /* ... ends */
    TS_J_EV_END,            /* the value read ends (depth 0) */
    TS_J_EV_COLON,          /* a member's value comes (depth 1) */
    TS_J_EV_OTHER           /* anything else but blanks */
};

/* the member whose value comes */
enum { TS_J_OTHER = 0, TS_J_TYPE, TS_J_NAME };


void
ts_cut_init(ts_cut_t *a, const char *tool, int sse)
{
    memset(a, 0, sizeof(ts_cut_t));
    a->sse = sse;
    a->tool = tool;
    ts_buf_init(&a->in, sse ? TS_CUT_EVENT_MAX : TS_CUT_ITEM_MAX);
    ts_buf_init(&a->j.gap, TS_CUT_ITEM_MAX);
    ts_buf_init(&a->j.keyb, TS_CUT_KEY_MAX);
}


void
ts_cut_free(ts_cut_t *a)
{
    ts_buf_free(&a->in);
    ts_buf_free(&a->j.gap);
    ts_buf_free(&a->j.keyb);
}


long
ts_cut_removed(const ts_cut_t *a)
{
    return a->dropped;
}


/* a server_tool_use's name that is a search tool's */
static int
ts_cut_search_name(const ts_cut_t *a, const char *buf, const ts_val_t *v)
{
    char         tmp[64];
    const char  *name;
    size_t       len;

    name = ts_str_view(buf, v, tmp, sizeof(tmp), &len);

    return name != NULL
           && ((len > sizeof(TS_HOSTED_PREFIX) - 1
                && memcmp(name, TS_HOSTED_PREFIX,
                          sizeof(TS_HOSTED_PREFIX) - 1) == 0)
               || (a->tool != NULL && strlen(a->tool) == len
                   && memcmp(a->tool, name, len) == 0));
}


/* a content block of tool search: the search call or its result */
static int
ts_cut_search_block(const ts_cut_t *a, const char *buf, const ts_val_t *b)
{
    ts_val_t  type, v;

    if (b->kind != TS_OBJECT
        || ts_object_member(buf, b, "type", &type) != TS_OK)
    {
        return 0;
    }

    if (ts_str_eq(buf, &type, "tool_search_tool_result")) {
        return 1;
    }

    return ts_str_eq(buf, &type, "server_tool_use")
           && ts_object_member(buf, b, "name", &v) == TS_OK
           && ts_cut_search_name(a, buf, &v);
}


/* the blocks removed before index i */
static long
ts_dropped_before(const ts_cut_t *a, long i)
{
    long  k, n;

    if (i >= TS_CUT_BLOCKS_MAX) {
        return a->dropped;
    }

    for (k = 0, n = 0; k < i; k++) {
        n += a->drop[k];
    }

    return n;
}


/* one event: dropped, renumbered, or passed on as it came */
static int
ts_cut_event(ts_cut_t *a, const ts_sse_event_t *ev, ts_buf_t *out)
{
    ts_val_t  doc, idx, block;
    long      i, before;

    if (ev->data == NULL
        || ts_value_parse(ev->data, ev->data_len, &doc) != TS_OK
        || doc.kind != TS_OBJECT
        || ts_object_member(ev->data, &doc, "index", &idx) != TS_OK
        || idx.kind != TS_NUMBER)
    {
        return ts_buf_add(out, ev->raw, ev->raw_len);
    }

    i = strtol(ev->data + idx.off, NULL, 10);

    if (i >= 0 && i < TS_CUT_BLOCKS_MAX
        && ts_object_member(ev->data, &doc, "content_block", &block)
           == TS_OK
        && ts_cut_search_block(a, ev->data, &block))
    {
        a->drop[i] = 1;
        a->dropped++;
    }

    if (i >= 0 && i < TS_CUT_BLOCKS_MAX && a->drop[i]) {
        return 0;
    }

    before = i < 0 ? 0 : ts_dropped_before(a, i);

    return before ? ts_sse_reindex(ev, i - before, out)
                  : ts_buf_add(out, ev->raw, ev->raw_len);
}


static int
ts_cut_events(ts_cut_t *a, ts_buf_t *out)
{
    ts_sse_event_t  ev;
    size_t          used;

    for ( ;; ) {
        used = ts_sse_next(a->in.p, a->in.len, &a->seen, &ev);
        if (used == 0) {
            return 0;
        }

        if (ts_cut_event(a, &ev, out) != 0) {
            return -1;
        }

        ts_buf_consume(&a->in, used);
        a->seen = 0;
    }
}


static int
ts_j_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}


/*
 * An item goes on: the separators held before it, what is held of it,
 * and from now on its bytes as they come.
 */
static int
ts_j_keep(ts_cut_t *a, ts_buf_t *out)
{
    ts_cut_json_t  *j = &a->j;

    if (ts_buf_add(out, j->gap.p, j->gap.len) != 0
        || ts_buf_add(out, a->in.p, a->in.len) != 0)
    {
        return -1;
    }

    ts_buf_reset(&j->gap);
    ts_buf_reset(&a->in);
    j->keep = 0;
    j->mode = TS_J_PASS;
    j->prev = TS_J_KEPT;

    return 0;
}


/* past a cap, or what the cut cannot read: the rest as it comes */
static int
ts_j_through(ts_cut_t *a, const char *c, ts_buf_t *out)
{
    a->through = 1;

    return ts_j_keep(a, out) != 0 ? -1 : ts_buf_add(out, c, 1);
}


/*
 * An item whose first bytes say it is no search block goes on at once (a
 * second type or name would only keep it too); a search block is held
 * to its end and judged whole, as the whole message's cut judges it.
 */
static int
ts_j_decide(ts_cut_t *a, ts_buf_t *out)
{
    ts_cut_json_t  *j = &a->j;

    if (j->type.kind == TS_NONE
        || ts_str_eq(a->in.p, &j->type, "tool_search_tool_result"))
    {
        return 0;
    }

    if (!ts_str_eq(a->in.p, &j->type, "server_tool_use")) {
        return ts_j_keep(a, out);
    }

    if (j->name.kind == TS_NONE || ts_cut_search_name(a, a->in.p, &j->name))
    {
        return 0;
    }

    return ts_j_keep(a, out);
}


/* a held item's member name or string value was read */
static int
ts_j_token(ts_cut_t *a, ts_buf_t *out)
{
    ts_cut_json_t  *j = &a->j;
    const char     *in = a->in.p;

    if (j->tok == TS_J_VALUE) {
        j->tok = TS_J_NOTOK;

        if (j->field == TS_J_TYPE) {
            j->type = j->tokv;

        } else if (j->field == TS_J_NAME) {
            j->name = j->tokv;
        }

        j->field = TS_J_OTHER;

        return ts_j_decide(a, out);
    }

    j->tok = TS_J_NOTOK;
    j->field = TS_J_OTHER;

    /* only the first of each counts: the whole cut keeps an item that
     * has two */
    if (ts_str_eq(in, &j->tokv, "type") && !j->ntype) {
        j->ntype = 1;
        j->field = TS_J_TYPE;

    } else if (ts_str_eq(in, &j->tokv, "name") && !j->nname) {
        j->nname = 1;
        j->field = TS_J_NAME;
    }

    return 0;
}


/* the item ended: a held one is judged whole */
static int
ts_j_item_end(ts_cut_t *a, ts_buf_t *out)
{
    ts_cut_json_t  *j = &a->j;
    ts_val_t        v;

    j->state = TS_J_AFTER;

    if (j->mode != TS_J_HOLD) {
        return 0;
    }

    if (ts_value_parse(a->in.p, a->in.len, &v) == TS_OK
        && ts_cut_search_block(a, a->in.p, &v))
    {
        ts_buf_reset(&a->in);
        a->dropped++;
        j->prev = TS_J_DROPPED;
        return 0;
    }

    return ts_j_keep(a, out);
}


/*
 * One byte of JSON read: strings, nesting, and member names where a
 * member's name may come (key, at depth 1)
 */
static int
ts_j_lex(ts_cut_json_t *j, char c)
{
    if (j->str) {
        if (j->esc) {
            j->esc = 0;

        } else if (c == '\\') {
            j->esc = 1;
            j->tokv.esc = 1;

        } else if (c == '"') {
            j->str = 0;
            return TS_J_EV_CLOSE;
        }

        return TS_J_EV_NONE;
    }

    switch (c) {

    case '"':
        j->str = 1;
        return TS_J_EV_OPEN;

    case '{':
    case '[':
        j->depth++;
        return TS_J_EV_OTHER;

    case '}':
    case ']':
        return --j->depth == 0 ? TS_J_EV_END : TS_J_EV_OTHER;

    case ',':
        j->key = j->depth == 1;
        return TS_J_EV_NONE;

    case ':':
        if (j->depth != 1) {
            return TS_J_EV_NONE;
        }

        j->key = 0;
        return TS_J_EV_COLON;

    default:
        return ts_j_ws(c) ? TS_J_EV_NONE : TS_J_EV_OTHER;
    }
}


/* the structure of an item's byte, already where its mode puts it */
static int
ts_j_item_byte(ts_cut_t *a, char c, ts_buf_t *out)
{
    ts_cut_json_t  *j = &a->j;
    int             hold;

    hold = j->mode == TS_J_HOLD;

    switch (ts_j_lex(j, c)) {

    case TS_J_EV_OPEN:
        if (hold && j->depth == 1 && (j->key || j->field != TS_J_OTHER)) {
            j->tok = j->key ? TS_J_KEY : TS_J_VALUE;
            j->tokv.off = a->in.len - 1;
            j->tokv.kind = TS_STRING;
            j->tokv.esc = 0;
        }

        return 0;

    case TS_J_EV_CLOSE:
        if (j->depth == 0) {
            return ts_j_item_end(a, out);
        }

        if (hold && j->tok != TS_J_NOTOK) {
            j->tokv.len = a->in.len - j->tokv.off;
            return ts_j_token(a, out);
        }

        return 0;

    case TS_J_EV_END:
        return ts_j_item_end(a, out);

    case TS_J_EV_OTHER:
        /* a type or name that is not a string: judged whole at the end */
        j->field = TS_J_OTHER;
        return 0;

    default:
        return 0;
    }
}


static int
ts_j_item(ts_cut_t *a, const char *c, ts_buf_t *out);
static int
ts_j_after(ts_cut_t *a, const char *c, ts_buf_t *out);


/* an item begins: an object is held until its type is known */
static int
ts_j_item_start(ts_cut_t *a, const char *c, ts_buf_t *out)
{
    ts_cut_json_t  *j = &a->j;

    j->state = TS_J_ITEM;
    j->str = 0;
    j->esc = 0;
    j->scalar = 0;
    j->depth = 0;

    if (*c == '{') {
        j->mode = TS_J_HOLD;
        j->key = 1;
        j->field = TS_J_OTHER;
        j->tok = TS_J_NOTOK;
        j->ntype = 0;
        j->nname = 0;
        j->type.kind = TS_NONE;
        j->name.kind = TS_NONE;
        ts_buf_reset(&a->in);

        return ts_j_item(a, c, out);
    }

    if (ts_j_keep(a, out) != 0) {
        return -1;
    }

    if (*c != '"' && *c != '[') {
        j->scalar = 1;
    }

    return ts_j_item(a, c, out);
}


static int
ts_j_item(ts_cut_t *a, const char *c, ts_buf_t *out)
{
    ts_cut_json_t  *j = &a->j;

    if (j->scalar && (*c == ',' || *c == ']' || ts_j_ws(*c))) {
        j->scalar = 0;
        j->state = TS_J_AFTER;
        return ts_j_after(a, c, out);
    }

    if (j->mode == TS_J_HOLD && ts_buf_add(&a->in, c, 1) != 0) {
        /* an item whose type is not in its first TS_CUT_ITEM_MAX bytes
         * goes on */
        if (ts_j_keep(a, out) != 0) {
            return -1;
        }
    }

    if (j->mode == TS_J_PASS && ts_buf_add(out, c, 1) != 0) {
        return -1;
    }

    return ts_j_item_byte(a, *c, out);
}


/* the array ends: separators after the last item go, the blank does not */
static int
ts_j_close(ts_cut_t *a, const char *c, ts_buf_t *out)
{
    ts_cut_json_t  *j = &a->j;

    if ((j->gap.len > j->keep
         && ts_buf_add(out, j->gap.p + j->keep, j->gap.len - j->keep) != 0)
        || ts_buf_add(out, c, 1) != 0)
    {
        return -1;
    }

    ts_buf_reset(&j->gap);
    j->keep = 0;
    j->field = TS_J_OTHER;
    j->state = TS_J_OBJECT;
    j->depth = 1;
    j->key = 0;

    return 0;
}


/*
 * Between items: what precedes the first goes on; a separator after a
 * kept item is held until a kept item follows (the array's end drops
 * it); one after a dropped item goes.
 */
static int
ts_j_before(ts_cut_t *a, const char *c, ts_buf_t *out)
{
    ts_cut_json_t  *j = &a->j;

    if (ts_j_ws(*c)) {
        if (j->prev == TS_J_NONE) {
            return ts_buf_add(out, c, 1);
        }

        if (j->prev == TS_J_KEPT) {
            if (ts_buf_add(&j->gap, c, 1) != 0) {
                return ts_j_through(a, c, out);
            }

            j->keep = j->gap.len;
        }

        return 0;
    }

    if (*c == ']') {
        return ts_j_close(a, c, out);
    }

    if (*c == ',') {
        return ts_j_through(a, c, out);
    }

    return ts_j_item_start(a, c, out);
}


static int
ts_j_after(ts_cut_t *a, const char *c, ts_buf_t *out)
{
    ts_cut_json_t  *j = &a->j;

    if (ts_j_ws(*c)) {
        return ts_buf_add(&j->gap, c, 1) != 0 ? ts_j_through(a, c, out) : 0;
    }

    if (*c == ',') {
        if (j->prev == TS_J_KEPT) {
            if (ts_buf_add(&j->gap, c, 1) != 0) {
                return ts_j_through(a, c, out);
            }

            j->keep = j->gap.len;

        } else {
            j->gap.len = j->keep;
        }

        j->state = TS_J_BEFORE;
        return 0;
    }

    if (*c == ']') {
        return ts_j_close(a, c, out);
    }

    return ts_j_through(a, c, out);
}


/* a member name of the message was read: is it the content array's? */
static void
ts_j_message_key(ts_cut_t *a)
{
    ts_cut_json_t  *j = &a->j;
    ts_val_t        v;

    j->tok = TS_J_NOTOK;
    v.off = 0;
    v.len = j->keyb.len;
    v.kind = TS_STRING;
    v.esc = j->tokv.esc;

    j->field = TS_J_OTHER;

    /* the first: the whole cut leaves a message with two as it came */
    if (!j->content && ts_str_eq(j->keyb.p, &v, "content")) {
        j->content = 1;
        j->field = TS_J_TYPE;
    }
}


/* the message outside its content array goes on as it comes */
static int
ts_j_object(ts_cut_t *a, const char *c, ts_buf_t *out)
{
    ts_cut_json_t  *j = &a->j;

    if (j->want && !ts_j_ws(*c)) {
        j->want = 0;

        if (*c == '[') {
            j->state = TS_J_BEFORE;
            j->prev = TS_J_NONE;
            return ts_buf_add(out, c, 1);
        }
    }

    if (ts_buf_add(out, c, 1) != 0) {
        return -1;
    }

    if (j->tok != TS_J_NOTOK && ts_buf_add(&j->keyb, c, 1) != 0) {
        /* too long for "content", however escaped */
        j->tok = TS_J_NOTOK;
    }

    switch (ts_j_lex(j, *c)) {

    case TS_J_EV_OPEN:
        if (j->depth == 1 && j->key) {
            j->tok = TS_J_KEY;
            j->tokv.esc = 0;
            ts_buf_reset(&j->keyb);
            (void) ts_buf_add(&j->keyb, c, 1);
        }

        break;

    case TS_J_EV_CLOSE:
        if (j->tok != TS_J_NOTOK) {
            ts_j_message_key(a);
        }

        break;

    case TS_J_EV_END:
        j->state = TS_J_DONE;
        break;

    case TS_J_EV_COLON:
        j->want = j->field == TS_J_TYPE;
        j->field = TS_J_OTHER;
        break;
    }

    return 0;
}


static int
ts_j_byte(ts_cut_t *a, const char *c, ts_buf_t *out)
{
    ts_cut_json_t  *j = &a->j;

    switch (j->state) {

    case TS_J_START:
        if (*c == '{') {
            j->state = TS_J_OBJECT;
            j->depth = 1;
            j->key = 1;

        } else if (!ts_j_ws(*c)) {
            a->through = 1;
        }

        return ts_buf_add(out, c, 1);

    case TS_J_OBJECT:
        return ts_j_object(a, c, out);

    case TS_J_BEFORE:
        return ts_j_before(a, c, out);

    case TS_J_ITEM:
        return ts_j_item(a, c, out);

    case TS_J_AFTER:
        return ts_j_after(a, c, out);

    default:
        return ts_buf_add(out, c, 1);
    }
}


/* bytes of a string that go on as they are, up to its next quote or
 * backslash */
static size_t
ts_j_plain(const ts_cut_t *a, const char *p, size_t n)
{
    const ts_cut_json_t  *j = &a->j;
    size_t                k;

    if (!j->str || j->esc || j->tok != TS_J_NOTOK
        || !(j->state == TS_J_OBJECT
             || (j->state == TS_J_ITEM && j->mode == TS_J_PASS)))
    {
        return 0;
    }

    for (k = 0; k < n && p[k] != '"' && p[k] != '\\'; k++) {
        /* void */
    }

    return k;
}


/*
 * A JSON message as it comes: everything outside its content array goes
 * on at once, an item as soon as its type says it stays; a search block
 * is held to its end and goes.
 */
static int
ts_cut_json_feed(ts_cut_t *a, const char *p, size_t n, ts_buf_t *out)
{
    size_t  i, k;

    for (i = 0; i < n; i++) {
        if (a->through || a->j.state == TS_J_DONE) {
            return ts_buf_add(out, p + i, n - i);
        }

        k = ts_j_plain(a, p + i, n - i);

        if (k) {
            if (ts_buf_add(out, p + i, k) != 0) {
                return -1;
            }

            i += k - 1;
            continue;
        }

        if (ts_j_byte(a, p + i, out) != 0) {
            return -1;
        }
    }

    return 0;
}


int
ts_cut_feed(ts_cut_t *a, const char *p, size_t n, ts_buf_t *out)
{
    if (a->through) {
        return ts_buf_add(out, p, n);
    }

    if (!a->sse) {
        return ts_cut_json_feed(a, p, n, out);
    }

    if (ts_buf_add(&a->in, p, n) != 0) {
        if (a->in.len + n <= a->in.max) {
            return -1;
        }

        /* past the cap: what is held and the rest go on unchanged */
        a->through = 1;
        ts_buf_add(out, a->in.p, a->in.len);
        ts_buf_reset(&a->in);

        return ts_buf_add(out, p, n);
    }

    return ts_cut_events(a, out);
}


int
ts_cut_whole(const char *tool, const char *p, size_t n, ts_buf_t *out,
    long *removed)
{
    ts_val_t        doc, content, *items;
    ts_edits_t      edits;
    ts_cut_t        a;
    unsigned char  *del;
    size_t          i, k;
    int             rc;

    memset(&a, 0, sizeof(ts_cut_t));
    a.tool = tool;
    *removed = 0;

    if (ts_value_parse(p, n, &doc) != TS_OK
        || doc.kind != TS_OBJECT
        || ts_object_member(p, &doc, "content", &content) != TS_OK
        || content.kind != TS_ARRAY
        || ts_container_items(p, &content, &items, &k) != TS_OK)
    {
        return ts_buf_add(out, p, n);
    }

    del = calloc(k ? k : 1, 1);
    rc = del == NULL ? -1 : 0;

    for (i = 0; rc == 0 && i < k; i++) {
        del[i] = (unsigned char) ts_cut_search_block(&a, p, &items[i]);
        *removed += del[i];
    }

    ts_edits_init(&edits);

    if (rc == 0 && *removed > 0) {
        rc = ts_edit_delete_items(&edits, items, k, del);

        if (rc == 0 && ts_buf_space(out, ts_edits_size(&edits, n)) == 0) {
            rc = ts_edits_render(&edits, p, n, out->p + out->len);
            out->len += ts_edits_size(&edits, n);
        }

    } else if (rc == 0) {
        rc = ts_buf_add(out, p, n);
    }

    ts_edits_free(&edits);
    free(del);
    free(items);

    return rc;
}


/*
 * An event stream's unterminated last event goes on as it came.  A JSON
 * message that ended early has had what was decided: an item whose kind
 * was not known yet, or a search block not yet complete, never reaches
 * the client, nor do separators held after the last kept item.
 */
int
ts_cut_end(ts_cut_t *a, ts_buf_t *out)
{
    if (a->through || !a->sse) {
        return 0;
    }

    return ts_buf_add(out, a->in.p, a->in.len);
}
