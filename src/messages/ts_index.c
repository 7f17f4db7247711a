/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The Messages index: one pass over a request body, every byte validated
 * as JSON by the scanner's steps, records the members the policy reads
 * (the top level's, each tool's, message's and content block's) as byte
 * spans.
 */

#include <stddef.h>

#include "messages/ts_index_scan.h"


enum {
    TS_K_NAME = 0, TS_K_TYPE, TS_K_DEFER, TS_K_CACHE, TS_K_ROLE,
    TS_K_CONTENT, TS_K_ID, TS_K_TOOL_USE_ID, TS_K_TOOL_NAME, TS_K_DESC,
    TS_K_SCHEMA, TS_K_CALLER
};


static const ts_key_t  ts_top_keys[] = {
    TS_KEY("model", TS_TOP_MODEL),
    TS_KEY("messages", TS_TOP_MESSAGES),
    TS_KEY("tools", TS_TOP_TOOLS),
    TS_KEY("system", TS_TOP_SYSTEM),
    TS_KEY("stream", TS_TOP_STREAM),
    TS_KEY("tool_choice", TS_TOP_TOOL_CHOICE),
    TS_KEY("anthropic_beta", TS_TOP_ANTHROPIC_BETA),
    TS_KEY("anthropic_version", TS_TOP_ANTHROPIC_VERSION),
    TS_KEY("thread", TS_TOP_THREAD),
    { NULL, 0, 0, 0, 0 }
};


/* a key of an item's object: the value, or the member, goes to field f */
#define TS_FIELD(name, id, type, f)                                         \
    { name, sizeof(name) - 1, id, offsetof(type, f), 0 }
#define TS_MEMBER(name, id, type, f)                                        \
    { name, sizeof(name) - 1, id, offsetof(type, f), 1 }

static const ts_key_t  ts_tool_keys[] = {
    TS_FIELD("name", TS_K_NAME, ts_tool_t, name),
    TS_FIELD("type", TS_K_TYPE, ts_tool_t, type),
    TS_MEMBER("defer_loading", TS_K_DEFER, ts_tool_t, defer_loading),
    TS_MEMBER("cache_control", TS_K_CACHE, ts_tool_t, cache_control),
    TS_FIELD("description", TS_K_DESC, ts_tool_t, description),
    TS_FIELD("input_schema", TS_K_SCHEMA, ts_tool_t, input_schema),
    { NULL, 0, 0, 0, 0 }
};


static const ts_key_t  ts_message_keys[] = {
    TS_FIELD("role", TS_K_ROLE, ts_message_t, role),
    TS_FIELD("content", TS_K_CONTENT, ts_message_t, content),
    { NULL, 0, 0, 0, 0 }
};


static const ts_key_t  ts_block_keys[] = {
    TS_FIELD("type", TS_K_TYPE, ts_block_t, type),
    TS_FIELD("name", TS_K_NAME, ts_block_t, name),
    TS_FIELD("tool_name", TS_K_TOOL_NAME, ts_block_t, name),
    TS_FIELD("id", TS_K_ID, ts_block_t, id),
    TS_FIELD("tool_use_id", TS_K_TOOL_USE_ID, ts_block_t, id),
    TS_FIELD("content", TS_K_CONTENT, ts_block_t, content),
    TS_MEMBER("caller", TS_K_CALLER, ts_block_t, caller),
    { NULL, 0, 0, 0, 0 }
};


/* records a read key once; a second occurrence is a duplicate */
static int
ts_seen(ts_scan_t *s, unsigned *mask, int id)
{
    if (*mask & (1u << id)) {
        return ts_fail(s, TS_ERR_DUPLICATE);
    }

    *mask |= 1u << id;
    return 0;
}


static int
ts_expect_kind(ts_scan_t *s, const ts_val_t *v, int kind)
{
    return (v->kind == TS_NONE || v->kind == kind)
           ? 0 : ts_fail(s, TS_ERR_TYPE);
}


static void
ts_set_member(ts_member_t *m, const ts_val_t *key, const ts_val_t *v)
{
    m->key = *key;
    m->val = *v;
    m->off = key->off;
    m->len = v->off + v->len - key->off;
}


/*
 * The members of an item's object: one loop for every kind of item.  The
 * value of a key of the table goes where the table says in the item, self
 * of arr; the value of the key whose id is nested goes to read first,
 * which reads it itself (1) or leaves it to the table (0).  Other keys
 * are skipped; a key twice is a duplicate.  Inlined into each kind's
 * reader, with its table and read.
 */
static TS_HOT int
ts_members(ts_scan_t *s, const ts_key_t *keys, void **arr, size_t size,
    size_t self, int nested, int (*read)(ts_scan_t *s, size_t self,
    int *done), int *done)
{
    const ts_key_t  *k;
    ts_val_t         key, v;
    unsigned         seen;
    char            *item;
    int              rc;

    seen = 0;
    item = (char *) *arr + self * size;
    rc = ts_open(s, '{');

    while (rc == 0) {
        if (ts_key(s, &key) != 0) {
            return -1;
        }

        k = ts_key_find(s->ix->buf, &key, keys);

        if (k == NULL) {
            rc = ts_skip(s, NULL);

        } else if (ts_seen(s, &seen, k->id) != 0) {
            return -1;

        } else if (read == NULL || k->id != nested
                   || (rc = read(s, self, done)) == 0)
        {
            rc = ts_member_value(s, &v);

            if (k->member) {
                ts_set_member((ts_member_t *) (void *) (item + k->at), &key,
                              &v);

            } else {
                *(ts_val_t *) (void *) (item + k->at) = v;
            }

        } else {
            /* what read read may have grown the array: it may have moved */
            item = (char *) *arr + self * size;
            rc = rc < 0 ? -1 : 0;
        }

        if (rc != 0) {
            return -1;
        }

        rc = ts_more(s, '}');
    }

    return rc < 0 ? -1 : 0;
}


/*
 * A new item of one of the index's arrays, about to be read from the
 * object at s->p: its place, self, is counted at once, as the items read
 * inside it come after it.
 */
static TS_HOT void *
ts_item_begin(ts_scan_t *s, void **arr, size_t *n, size_t *cap, size_t size,
    size_t *self)
{
    void  *item;

    item = ts_grow(s, arr, *n, cap, size);

    if (item != NULL) {
        *self = (*n)++;
    }

    return item;
}


/* an item's span: its object, from off to where s is */
static TS_HOT void
ts_item_end(ts_scan_t *s, ts_val_t *elem, size_t off)
{
    elem->off = off;
    elem->len = s->p - s->start - off;
    elem->kind = TS_OBJECT;
}


int
ts_index_tool(ts_scan_t *s)
{
    ts_index_t  *ix;
    ts_tool_t   *t;
    size_t       off, self;

    ix = s->ix;
    off = s->p - s->start;

    if (ts_item_begin(s, (void **) &ix->tools, &ix->ntools, &ix->caps[0],
                      sizeof(ts_tool_t), &self) == NULL
        || ts_members(s, ts_tool_keys, (void **) &ix->tools,
                      sizeof(ts_tool_t), self, -1, NULL, NULL) != 0)
    {
        return -1;
    }

    t = &ix->tools[self];
    ts_item_end(s, &t->elem, off);

    return ts_expect_kind(s, &t->name, TS_STRING) != 0
           || ts_expect_kind(s, &t->type, TS_STRING) != 0 ? -1 : 0;
}


static int ts_blocks(ts_scan_t *s, uint32_t msg, int32_t parent);


/* tool_result content blocks are indexed too, one level deep */
static int
ts_children(ts_scan_t *s, size_t self)
{
    ts_index_t  *ix;
    ts_block_t  *b;

    ix = s->ix;
    ix->blocks[self].child_first = (uint32_t) ix->nblocks;

    if (ts_blocks(s, ix->blocks[self].message, (int32_t) self) != 0) {
        return -1;
    }

    b = &ix->blocks[self];
    b->child_count = (uint32_t) (ix->nblocks - b->child_first);

    return 0;
}


static int
ts_is_result(const ts_index_t *ix, const ts_block_t *b)
{
    return b->parent < 0 && ts_str_eq(ix->buf, &b->type, "tool_result");
}


/* a tool_result's content array, read in place: "type" usually came */
static int
ts_block_content(ts_scan_t *s, size_t self, int *done)
{
    ts_index_t  *ix;
    ts_val_t     v;
    size_t       off;

    ix = s->ix;

    if (!ts_is_result(ix, &ix->blocks[self]) || s->p >= s->end
        || *s->p != '[')
    {
        return 0;
    }

    off = s->p - s->start;
    if (ts_children(s, self) != 0) {
        return -1;
    }

    ts_index_set_array(s, &v, off);
    ix->blocks[self].content = v;
    *done = 1;

    return 1;
}


static int
ts_block(ts_scan_t *s, uint32_t msg, int32_t parent)
{
    ts_index_t  *ix;
    ts_block_t  *b;
    size_t       off, self;
    int          done;

    off = s->p - s->start;
    ix = s->ix;
    done = 0;

    b = ts_item_begin(s, (void **) &ix->blocks, &ix->nblocks, &ix->caps[1],
                      sizeof(ts_block_t), &self);
    if (b == NULL) {
        return -1;
    }

    /* what its members' readers need first */
    b->message = msg;
    b->parent = parent;

    if (ts_members(s, ts_block_keys, (void **) &ix->blocks, sizeof(ts_block_t),
                   self, TS_K_CONTENT, ts_block_content, &done)
        != 0)
    {
        return -1;
    }

    b = &ix->blocks[self];
    ts_item_end(s, &b->elem, off);

    if (b->type.kind != TS_STRING) {
        return ts_fail(s, TS_ERR_TYPE);
    }

    /* "content" came before "type": read the children now */
    if (!done && b->content.kind == TS_ARRAY && ts_is_result(ix, b)) {
        const unsigned char  *save;

        save = s->p;
        s->p = s->start + b->content.off;
        s->depth++;

        if (ts_children(s, self) != 0) {
            return -1;
        }

        s->p = save;
        s->depth--;
    }

    return 0;
}


/* s->p at '[' of a content array */
static int
ts_blocks(ts_scan_t *s, uint32_t msg, int32_t parent)
{
    int  rc;

    rc = ts_open(s, '[');

    while (rc == 0) {
        if (ts_block(s, msg, parent) != 0) {
            return -1;
        }

        rc = ts_more(s, ']');
    }

    return rc < 0 ? -1 : 0;
}


/* a message's content array, its blocks read */
static int
ts_message_content(ts_scan_t *s, size_t self, int *done)
{
    ts_index_t  *ix;
    ts_val_t     v;
    size_t       off;

    (void) done;
    ix = s->ix;

    if (s->p >= s->end || *s->p != '[') {
        return 0;
    }

    off = s->p - s->start;
    ix->messages[self].block_first = (uint32_t) ix->nblocks;

    if (ts_blocks(s, (uint32_t) self, -1) != 0) {
        return -1;
    }

    ts_index_set_array(s, &v, off);
    ix->messages[self].content = v;

    return 1;
}


int
ts_index_message(ts_scan_t *s)
{
    ts_index_t    *ix;
    ts_message_t  *m;
    size_t         self, off;

    ix = s->ix;
    off = s->p - s->start;

    if (ts_item_begin(s, (void **) &ix->messages, &ix->nmessages,
                      &ix->caps[2], sizeof(ts_message_t), &self) == NULL
        || ts_members(s, ts_message_keys, (void **) &ix->messages,
                      sizeof(ts_message_t), self, TS_K_CONTENT,
                      ts_message_content, NULL)
           != 0)
    {
        return -1;
    }

    m = &ix->messages[self];
    ts_item_end(s, &m->elem, off);
    m->block_end = (uint32_t) ix->nblocks;
    if (m->content.kind != TS_ARRAY) {
        m->block_first = m->block_end;
    }

    if (ts_expect_kind(s, &m->role, TS_STRING) != 0
        || (m->content.kind != TS_NONE && m->content.kind != TS_STRING
            && m->content.kind != TS_ARRAY))
    {
        return ts_fail(s, TS_ERR_TYPE);
    }

    return 0;
}


/* an array member whose elements are parsed by each() */
int
ts_index_array_of(ts_scan_t *s, ts_val_t *v, int (*each)(ts_scan_t *))
{
    size_t  off;

    off = s->p - s->start;

    if (ts_index_elements(s, ts_open(s, '['), each) != 0) {
        return -1;
    }

    ts_index_set_array(s, v, off);

    return 0;
}


static int
ts_top_member(ts_scan_t *s, ts_member_t *m)
{
    ts_index_t      *ix;
    const ts_key_t  *k;
    int              id;

    ix = s->ix;

    if (ts_key(s, &m->key) != 0) {
        return -1;
    }

    k = ts_key_find(ix->buf, &m->key, ts_top_keys);
    id = k ? k->id : -1;

    if (id >= 0) {
        if (ix->top[id] >= 0) {
            return ts_fail(s, TS_ERR_DUPLICATE);
        }
        ix->top[id] = (int32_t) ix->nmembers;
    }

    if (id == TS_TOP_TOOLS) {
        if (ts_index_tools(s, &m->val) != 0) {
            return -1;
        }

    } else if (id == TS_TOP_MESSAGES) {
        if (ts_index_messages(s, &m->val) != 0) {
            return -1;
        }

    } else if (ts_member_value(s, &m->val) != 0) {
        return -1;
    }

    m->off = m->key.off;
    m->len = m->val.off + m->val.len - m->key.off;

    if (id == TS_TOP_MODEL && m->val.kind != TS_STRING) {
        return ts_fail(s, TS_ERR_TYPE);
    }

    return 0;
}


static int
ts_top(ts_scan_t *s)
{
    ts_index_t   *ix;
    ts_member_t  *m;
    int           rc;

    ix = s->ix;

    ts_ws(s);

    rc = ts_open(s, '{');

    while (rc == 0) {
        if (ix->nmembers == TS_MAX_TOP_MEMBERS) {
            return ts_fail(s, TS_ERR_LIMIT);
        }

        m = ts_grow(s, (void **) &ix->members, ix->nmembers, &ix->caps[3],
                    sizeof(ts_member_t));
        if (m == NULL) {
            return -1;
        }

        if (ts_top_member(s, m) != 0) {
            return -1;
        }

        ix->nmembers++;
        rc = ts_more(s, '}');
    }

    if (rc < 0) {
        return -1;
    }

    ts_ws(s);

    return s->p == s->end ? 0 : ts_fail(s, TS_ERR_SYNTAX);
}


ts_status_t
ts_index_build(ts_index_t *ix, const char *buf, size_t len)
{
    return ts_index_build_in(ix, buf, len, NULL);
}


/* the index's arrays in the order of caps[] */
static void **
ts_index_array(ts_index_t *ix, int i)
{
    switch (i) {
    case 0:
        return (void **) &ix->tools;
    case 1:
        return (void **) &ix->blocks;
    case 2:
        return (void **) &ix->messages;
    default:
        return (void **) &ix->members;
    }
}


static void
ts_index_borrow(ts_index_t *ix, ts_index_mem_t *mem)
{
    int  i;

    if (mem == NULL || mem->lent) {
        return;
    }

    if (mem->forget) {
        ts_recall_free(&mem->tools);
        ts_index_seen_free(&mem->messages_seen);
    }

    /* the bound may have shrunk since the last request */
    ts_recall_trim(&mem->tools);

    for (i = 0; i < 4; i++) {
        *ts_index_array(ix, i) = mem->arrays[i];
        ix->caps[i] = mem->caps[i];
    }

    mem->lent = 1;
    ix->mem = mem;
}


static void
ts_index_start(ts_index_t *ix, const char *buf, size_t len,
    ts_index_mem_t *mem)
{
    int  i;

    memset(ix, 0, sizeof(ts_index_t));
    ts_index_borrow(ix, mem);
    ix->buf = buf;
    ix->len = len;

    for (i = 0; i < TS_TOP_N; i++) {
        ix->top[i] = -1;
    }
}


static ts_status_t
ts_index_scan(ts_index_t *ix, ts_strmap_t *map)
{
    ts_scan_t  s;

    s.start = (const unsigned char *) ix->buf;
    s.p = s.start;
    s.end = s.start + ix->len;
    s.depth = 0;
    s.err = TS_OK;
    s.ix = ix;
    s.map = map;

    /* a top level that is not an object is a type error, not syntax */
    ts_ws(&s);
    if (s.p < s.end && *s.p != '{') {
        if (ts_skip(&s, NULL) == 0) {
            ts_ws(&s);
            s.err = (s.p == s.end) ? TS_ERR_TYPE : TS_ERR_SYNTAX;
        }

    } else {
        (void) ts_top(&s);
    }

    ix->status = s.err;
    ix->err_off = s.p - s.start;

    return s.err;
}


/*
 * The string map's memory: the lender's, grown when too small, or the
 * scan's own.  NULL when there is none to have: the scan reads bytes.
 */
static uint64_t *
ts_map_bits(ts_index_mem_t *mem, size_t words)
{
    if (words == 0) {
        return NULL;
    }

    if (mem == NULL) {
        return malloc(words * sizeof(uint64_t));
    }

    if (mem->map_words < words) {
        free(mem->map);
        mem->map = malloc(words * sizeof(uint64_t));
        mem->map_words = mem->map ? words : 0;
    }

    return mem->map;
}


ts_status_t
ts_index_build_in(ts_index_t *ix, const char *buf, size_t len,
    ts_index_mem_t *mem)
{
    ts_strmap_t   map;
    ts_status_t   st;
    uint64_t     *bits;

    ts_index_start(ix, buf, len, mem);

    bits = ts_map_bits(ix->mem, ts_strmap_words(len));
    if (bits == NULL) {
        return ts_index_scan(ix, NULL);
    }

    ts_strmap_start(&map, buf, len, bits, TS_STRMAP_BEST);
    st = ts_index_scan(ix, &map);

    if (ix->mem == NULL) {
        free(bits);
    }

    return st;
}


ts_status_t
ts_index_build_plain(ts_index_t *ix, const char *buf, size_t len)
{
    ts_index_start(ix, buf, len, NULL);

    return ts_index_scan(ix, NULL);
}


void
ts_index_free(ts_index_t *ix)
{
    void  **a;
    int     i;

    for (i = 0; i < 4; i++) {
        a = ts_index_array(ix, i);

        if (ix->mem) {
            ix->mem->arrays[i] = *a;
            ix->mem->caps[i] = ix->caps[i];

        } else {
            free(*a);
        }

        *a = NULL;
        ix->caps[i] = 0;
    }

    if (ix->mem) {
        ix->mem->lent = 0;
        ix->mem = NULL;
    }
}


void
ts_index_mem_free(ts_index_mem_t *mem)
{
    int  i;

    for (i = 0; i < 4; i++) {
        free(mem->arrays[i]);
    }

    free(mem->map);
    ts_recall_free(&mem->tools);
    ts_recall_free(&mem->chat_tools);
    ts_recall_free(&mem->responses_tools);
    ts_index_seen_free(&mem->messages_seen);
    memset(mem, 0, sizeof(ts_index_mem_t));
}


const ts_member_t *
ts_index_top(const ts_index_t *ix, ts_top_key_t key)
{
    return ix->top[key] >= 0 ? &ix->members[ix->top[key]] : NULL;
}
