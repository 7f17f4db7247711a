/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The string map against a byte-by-byte reference, and the index built
 * with the map against the index built reading every byte.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tst.h"
#include "scan/ts_strmap.h"


/* what the map must hold, found one byte at a time */
typedef struct {
    unsigned char  quote[512];
    unsigned char  bslash[512];
    size_t         bad;
} tst_ref_t;


static int
tst_hex(unsigned char c)
{
    return strchr("0123456789abcdefABCDEF", c) != NULL && c != '\0';
}


static int
tst_escape_ok(const unsigned char *p, size_t len, size_t i)
{
    size_t  k;

    if (p[i] != 'u') {
        return strchr("\"\\/bfnrt", p[i]) != NULL && p[i] != '\0';
    }

    for (k = 1; k <= 4; k++) {
        if (i + k >= len || !tst_hex(p[i + k])) {
            return 0;
        }
    }

    return 1;
}


static void
tst_reference(const unsigned char *p, size_t len, tst_ref_t *r)
{
    size_t  i;
    int     in, esc;

    memset(r, 0, sizeof(tst_ref_t));
    r->bad = len;
    in = 0;
    esc = 0;

    for (i = 0; i < len; i++) {
        r->bslash[i] = (p[i] == '\\');

        if (esc) {
            esc = 0;

            if (in && r->bad == len && !tst_escape_ok(p, len, i)) {
                r->bad = i;
            }

        } else if (p[i] == '\\') {
            esc = 1;

        } else if (p[i] == '"') {
            r->quote[i] = 1;
            in = !in;

        } else if (in && p[i] < 0x20 && r->bad == len) {
            r->bad = i;
        }
    }
}


static int
tst_bit(const uint64_t *bits, size_t i, int which)
{
    return (int) (bits[i / 64 * 2 + which] >> (i % 64) & 1);
}


/* the map of buf by either kernel agrees with the reference */
static int
tst_map_agrees(const unsigned char *buf, size_t len)
{
    ts_strmap_t   m;
    tst_ref_t     r;
    uint64_t      bits[32];
    size_t        i;
    int           k;

    tst_reference(buf, len, &r);

    for (k = TS_STRMAP_BEST; k <= TS_STRMAP_BASELINE; k++) {
        ts_strmap_build(&m, (const char *) buf, len, bits,
                        (ts_strmap_kernel_t) k);

        if (m.bad != r.bad) {
            return 0;
        }

        for (i = 0; i < len; i++) {
            if (tst_bit(bits, i, 0) != r.quote[i]
                || tst_bit(bits, i, 1) != r.bslash[i])
            {
                return 0;
            }
        }
    }

    return 1;
}


/* the next of a sequence of pseudo-random numbers */
static size_t
tst_next(unsigned long *seed, size_t below)
{
    *seed = *seed * 6364136223846793005UL + 1442695040888963407UL;

    return (size_t) (*seed >> 33) % below;
}


/*
 * Random texts of pieces, each with one of the bytes or escapes strings
 * may not hold planted at a random place when plant is set, against the
 * reference; returns the count that disagree.
 */
static size_t
tst_random_texts(const char *const *pieces, size_t npieces, int plant)
{
    static const char  *planted[] = { "\n", "\\q", "\\u0g", "\\u00e9" };
    unsigned char       buf[512];
    unsigned long       seed;
    const char         *pc;
    size_t              len, want, n, bad;

    seed = 12345;
    bad = 0;

    for (n = 0; n < 20000; n++) {
        want = tst_next(&seed, 500);

        for (len = 0; len < want; len += strlen(pc)) {
            pc = pieces[tst_next(&seed, npieces)];
            memcpy(buf + len, pc, strlen(pc));
        }

        if (plant && len > 8) {
            pc = planted[tst_next(&seed, 4)];
            memcpy(buf + tst_next(&seed, len - strlen(pc)), pc, strlen(pc));
        }

        if (!tst_map_agrees(buf, len)) {
            tst_note("random text %zu of length %zu", n, len);
            bad++;
        }
    }

    return bad;
}


/*
 * Random texts over the bytes that matter, with runs of backslashes
 * across the 64-byte chunks' edges, against the reference.
 */
static void
test_map_random(void)
{
    static const char  *bytes[] = {
        "\"", "\\", "\\", "\\", "a", "u", "0", "F", "n", "/", "x", " ",
        "\n", "{"
    };

    CHECK(tst_random_texts(bytes, sizeof(bytes) / sizeof(bytes[0]), 0)
          == 0);
}


/*
 * Compact JSON has no control bytes and its escapes are valid: most
 * chunks only carry the quotes' parity, which a control byte or a bad
 * escape far behind them must meet.
 */
static void
test_map_quiet_chunks(void)
{
    static const char  *pieces[] = {
        "\"", "abc", " ", "\\\"", "\\\\", "\\n", "\\/", "x", "{", ":"
    };

    CHECK(tst_random_texts(pieces, sizeof(pieces) / sizeof(pieces[0]), 1)
          == 0);
}


/* every length of backslash run ending on every place of a chunk */
static void
test_map_runs(void)
{
    unsigned char  buf[200];
    size_t         run, end, bad;

    bad = 0;

    for (run = 1; run <= 130; run++) {
        for (end = run; end + 2 < sizeof(buf); end++) {
            memset(buf, 'a', sizeof(buf));
            buf[0] = '"';
            memset(buf + end - run + 1, '\\', run);
            buf[end + 1] = '"';
            buf[end + 2] = '"';

            if (!tst_map_agrees(buf, end + 3)) {
                tst_note("run of %zu ending at %zu", run, end);
                bad++;
            }
        }
    }

    CHECK(bad == 0);
}


/*
 * Every byte after a backslash, at every place of a chunk, then as the
 * first of the four a \u needs: the masks classify each byte value.
 */
static void
test_map_escapes(void)
{
    unsigned char  buf[80];
    size_t         at, bad;
    unsigned       c;

    bad = 0;

    for (c = 0; c < 256; c++) {
        for (at = 1; at < 70; at++) {
            memset(buf, 'a', sizeof(buf));
            buf[0] = '"';
            buf[at] = '\\';
            buf[at + 1] = (unsigned char) c;
            buf[at + 2] = '"';

            if (!tst_map_agrees(buf, at + 3)) {
                tst_note("byte %u escaped at %zu", c, at);
                bad++;
            }

            buf[at + 1] = 'u';
            memcpy(buf + at + 2, "0a0", 3);
            buf[at + 5] = (unsigned char) c;
            buf[at + 6] = '"';

            if (!tst_map_agrees(buf, at + 7)) {
                tst_note("byte %u in a \\u at %zu", c, at);
                bad++;
            }
        }
    }

    CHECK(bad == 0);
}


static void
test_map_lookups(void)
{
    static const char  s[] = "{\"a\\\"b\":\"c\",\"d\":\"\\\\\"}";
    ts_strmap_t        m;
    uint64_t           bits[2];
    size_t             len;

    len = sizeof(s) - 1;
    ts_strmap_build(&m, s, len, bits, TS_STRMAP_BEST);

    CHECK(m.bad == len);
    CHECK(ts_strmap_quote(&m, 0) == 1);
    CHECK(ts_strmap_quote(&m, 2) == 6);
    CHECK(ts_strmap_quote(&m, 7) == 8);
    CHECK(ts_strmap_quote(&m, 21) == len);
    CHECK(ts_strmap_quote(&m, len) == len);
    CHECK(ts_strmap_has_backslash(&m, 2, 6));
    CHECK(!ts_strmap_has_backslash(&m, 9, 10));
    CHECK(ts_strmap_has_backslash(&m, 17, 20));
    CHECK(!ts_strmap_has_backslash(&m, 5, 5));
}


/*
 * A scan's first lookup maps a batch; then it skips to at, and its
 * lookups from at on map the rest.  Where the batch reached at, the map
 * runs on unbroken and holds the map of the whole text.  Past it, at is
 * taken to be outside strings and the bytes before it are not read: the
 * map from at is that of the bytes from at alone.
 */
static int
tst_skip_agrees(const unsigned char *buf, size_t len, size_t at,
    ts_strmap_kernel_t k)
{
    ts_strmap_t   m, r;
    uint64_t     *bits, *rbits;
    size_t        i, q, from;
    int           same;

    bits = malloc((ts_strmap_words(len) + 1) * sizeof(uint64_t));
    rbits = malloc((ts_strmap_words(len) + 1) * sizeof(uint64_t));
    CHECK(bits != NULL && rbits != NULL);

    ts_strmap_start(&m, (const char *) buf, len, bits, k);
    (void) ts_strmap_quote(&m, 0);
    from = at / 64 < m.mapped ? 0 : at;

    ts_strmap_build(&r, (const char *) buf + from, len - from, rbits, k);
    ts_strmap_skip(&m, at);
    q = at;

    do {
        q = ts_strmap_quote(&m, q) + 1;
    } while (q < len);

    same = m.mapped == m.chunks && m.bad == from + r.bad;

    for (i = at; same && i < len; i++) {
        same = tst_bit(bits, i, 0) == tst_bit(rbits, i - from, 0)
               && tst_bit(bits, i, 1) == tst_bit(rbits, i - from, 1);
    }

    free(bits);
    free(rbits);

    return same;
}


/*
 * Skips anywhere in a fixture, a chunk's and a batch's edges included,
 * with bytes strings may not hold and backslashes planted in it.
 */
static void
test_map_skip(void)
{
    static const char  junk[] = "\\\\\001\"";
    tst_doc_t          d;
    char             **paths, *buf;
    size_t             n, at, bad;
    int                k, planted;

    n = tst_fixtures(&paths);
    CHECK(n > 0 && tst_doc_load(&d, paths[0]) == 0 && d.len > 8192);
    buf = tst_dup(d.buf, d.len);
    bad = 0;

    for (planted = 0; planted < 2; planted++) {
        for (k = TS_STRMAP_BEST; k <= TS_STRMAP_BASELINE; k++) {
            for (at = 0; at <= d.len; at += at < 300 || at > d.len - 300
                                            ? 1 : 61)
            {
                if (!tst_skip_agrees((const unsigned char *) buf, d.len, at,
                                     (ts_strmap_kernel_t) k))
                {
                    tst_note("skip to %zu, kernel %d, planted %d", at, k,
                             planted);
                    bad++;
                }
            }
        }

        for (at = 1000; at < d.len; at += 4093) {
            memcpy(buf + at, junk, sizeof(junk) - 1);
        }
    }

    CHECK(bad == 0);
    free(buf);
    tst_doc_free(&d);
    tst_free_list(paths, n);
}


static int
tst_val_eq(const ts_val_t *a, const ts_val_t *b)
{
    return a->off == b->off && a->len == b->len && a->kind == b->kind
           && a->esc == b->esc;
}


static int
tst_member_eq(const ts_member_t *a, const ts_member_t *b)
{
    return a->off == b->off && a->len == b->len
           && tst_val_eq(&a->key, &b->key) && tst_val_eq(&a->val, &b->val);
}


static int
tst_tool_eq(const ts_tool_t *a, const ts_tool_t *b)
{
    return tst_val_eq(&a->elem, &b->elem) && tst_val_eq(&a->name, &b->name)
           && tst_val_eq(&a->type, &b->type)
           && tst_val_eq(&a->description, &b->description)
           && tst_val_eq(&a->input_schema, &b->input_schema)
           && tst_member_eq(&a->defer_loading, &b->defer_loading)
           && tst_member_eq(&a->cache_control, &b->cache_control);
}


static int
tst_block_eq(const ts_block_t *a, const ts_block_t *b)
{
    return tst_val_eq(&a->elem, &b->elem) && tst_val_eq(&a->type, &b->type)
           && tst_val_eq(&a->name, &b->name) && tst_val_eq(&a->id, &b->id)
           && tst_val_eq(&a->content, &b->content)
           && tst_member_eq(&a->caller, &b->caller)
           && a->message == b->message && a->parent == b->parent
           && a->child_first == b->child_first
           && a->child_count == b->child_count;
}


static int
tst_message_eq(const ts_message_t *a, const ts_message_t *b)
{
    return tst_val_eq(&a->elem, &b->elem) && tst_val_eq(&a->role, &b->role)
           && tst_val_eq(&a->content, &b->content)
           && a->block_first == b->block_first
           && a->block_end == b->block_end;
}


/* the arrays of two indexes of the same counts are equal */
static int
tst_arrays_eq(const ts_index_t *a, const ts_index_t *b)
{
    size_t  i;

    for (i = 0; i < a->nmembers; i++) {
        if (!tst_member_eq(&a->members[i], &b->members[i])) {
            return 0;
        }
    }

    for (i = 0; i < a->ntools; i++) {
        if (!tst_tool_eq(&a->tools[i], &b->tools[i])) {
            return 0;
        }
    }

    for (i = 0; i < a->nmessages; i++) {
        if (!tst_message_eq(&a->messages[i], &b->messages[i])) {
            return 0;
        }
    }

    for (i = 0; i < a->nblocks; i++) {
        if (!tst_block_eq(&a->blocks[i], &b->blocks[i])) {
            return 0;
        }
    }

    return 1;
}


int
tst_index_eq(const ts_index_t *a, const ts_index_t *b)
{
    return a->status == b->status && a->err_off == b->err_off
           && a->nmembers == b->nmembers && a->ntools == b->ntools
           && a->nmessages == b->nmessages && a->nblocks == b->nblocks
           && memcmp(a->top, b->top, sizeof(a->top)) == 0
           && (a->status != TS_OK || tst_arrays_eq(a, b));
}


/*
 * The scans of one body give the same index: by the map, by every byte,
 * and by the map in memory that recalls the last tools array it read
 * (kept from one call to the next, as a worker's).
 */
static int
tst_scans_agree(const char *body, size_t len)
{
    static ts_index_mem_t  mem;
    ts_index_t             a, b, c;
    char                  *buf;
    int                    same;

    buf = tst_dup(body, len);
    mem.tools.size = TS_RECALL_SIZE;

    (void) ts_index_build(&a, buf, len);
    (void) ts_index_build_plain(&b, buf, len);
    (void) ts_index_build_in(&c, buf, len, &mem);

    same = tst_index_eq(&a, &b) && tst_index_eq(&c, &b);

    ts_index_free(&a);
    ts_index_free(&b);
    ts_index_free(&c);
    free(buf);

    return same;
}


static const char  tst_pad[] =
    "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmn"
    "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmn"
    "abcdefghijklmnopqrstuvwxyz";


static void
test_scans_bad_bodies(void)
{
    const tst_body_t  *t;

    for (t = tst_bad_bodies; t->name; t++) {
        tst_note("%s", t->name);
        CHECK(tst_scans_agree(t->body, strlen(t->body)));
    }
}


/*
 * UTF-8 in a string at every place around two chunk boundaries: what
 * RFC 3629 calls UTF-8 is read, the rest is not JSON text, by both scans.
 */
static void
test_scans_utf8(void)
{
    static const struct {
        const char  *bytes;
        int          valid;
    } seqs[] = {
        { "\xc3\xa9", 1 },                  /* U+00E9 */
        { "\xe2\x82\xac", 1 },              /* U+20AC */
        { "\xed\x9f\xbf", 1 },              /* U+D7FF */
        { "\xf0\x9f\x98\x80", 1 },          /* U+1F600 */
        { "\xf4\x8f\xbf\xbf", 1 },          /* U+10FFFF */
        { "\x80", 0 },                      /* a continuation alone */
        { "\xc0\xaf", 0 },                  /* overlong '/' */
        { "\xc1\xbf", 0 },                  /* overlong */
        { "\xe0\x80\xaf", 0 },              /* overlong */
        { "\xf0\x80\x80\xaf", 0 },          /* overlong */
        { "\xed\xa0\x80", 0 },              /* surrogate U+D800 */
        { "\xed\xbf\xbf", 0 },              /* surrogate U+DFFF */
        { "\xf4\x90\x80\x80", 0 },          /* past U+10FFFF */
        { "\xf5\x80\x80\x80", 0 },          /* no such lead */
        { "\xff", 0 },
        { "\xc3", 0 },                      /* cut by the quote */
        { "\xe2\x82", 0 },
        { "\xf0\x9f\x98", 0 },
        { "\xc3\xa9\xa9", 0 },              /* one byte too many */
        { NULL, 0 }
    };
    char        body[512];
    ts_index_t  ix;
    size_t      i, pad, len;
    int         ok, bad;

    bad = 0;

    for (i = 0; seqs[i].bytes; i++) {
        for (pad = 40; pad < 140; pad++) {
            len = (size_t) snprintf(body, sizeof(body),
                                    "{\"model\":\"%.*s%s\",\"max_tokens\":1}",
                                    (int) pad, tst_pad, seqs[i].bytes);

            (void) ts_index_build(&ix, body, len);
            ok = ix.status == TS_OK;
            ts_index_free(&ix);

            if (ok != seqs[i].valid || !tst_scans_agree(body, len)) {
                tst_note("sequence %zu at %zu", i, pad);
                bad++;
            }
        }
    }

    CHECK(bad == 0);
}


/*
 * The fixtures whole, and each cut at every 97th byte and with a byte
 * changed there: valid, cut and broken bodies of real shape.
 */
static void
test_scans_fixtures(void)
{
    static const char  junk[] = "\"\\\001x}]";
    tst_doc_t          d;
    char             **paths, *buf;
    size_t             n, i, off, bad;

    n = tst_fixtures(&paths);
    CHECK(n > 0);
    bad = 0;

    for (i = 0; i < n; i++) {
        if (tst_doc_load(&d, paths[i]) != 0) {
            continue;
        }

        bad += !tst_scans_agree(d.buf, d.len);
        buf = tst_dup(d.buf, d.len);

        for (off = 0; off < d.len; off += 97) {
            bad += !tst_scans_agree(buf, off);
            buf[off] = junk[off % (sizeof(junk) - 1)];
            bad += !tst_scans_agree(buf, d.len);
            buf[off] = d.buf[off];
        }

        free(buf);
        tst_doc_free(&d);

        if (bad) {
            tst_note("%s", paths[i]);
            break;
        }
    }

    CHECK(bad == 0);
    tst_free_list(paths, n);
}


char *
tst_find(const char *p, size_t len, const char *s)
{
    size_t  n;

    for (n = strlen(s); len >= n; p++, len--) {
        if (memcmp(p, s, n) == 0) {
            return (char *) p;
        }
    }

    return NULL;
}


/*
 * How many tools, or messages, a scan of buf in mem recalled; -1 when
 * its index differs from the byte scan's.
 */
static long
tst_recalled_of(ts_index_mem_t *mem, const char *buf, size_t len,
    int messages)
{
    ts_index_t  a, b;
    long        n;

    (void) ts_index_build_in(&a, buf, len, mem);
    (void) ts_index_build_plain(&b, buf, len);

    n = !tst_index_eq(&a, &b) ? -1
        : (long) (messages ? a.messages_recalled : a.tools_recalled);

    ts_index_free(&a);
    ts_index_free(&b);

    return n;
}


long
tst_recalled(ts_index_mem_t *mem, const char *buf, size_t len)
{
    return tst_recalled_of(mem, buf, len, 0);
}


static long
tst_messages_recalled(ts_index_mem_t *mem, const char *buf, size_t len)
{
    return tst_recalled_of(mem, buf, len, 1);
}


/*
 * A tools array is recalled where its bytes come again, wherever they
 * start; a byte changed in it is read anew, and remembered as well.
 */
static void
test_tools_recalled(void)
{
    ts_index_mem_t  mem;
    tst_doc_t       d;
    ts_index_t      ix;
    char           *moved, *changed, *p;
    size_t          off;
    long            all;

    CHECK(tst_doc_load(&d, TST_BIG) == 0);
    memset(&mem, 0, sizeof(mem));
    mem.tools.size = TS_RECALL_SIZE;

    CHECK(ts_index_build(&ix, d.buf, d.len) == TS_OK);
    all = (long) ix.ntools;
    ts_index_free(&ix);
    CHECK(all > 100);

    /* the same array further on: a longer model name comes first */
    p = tst_find(d.buf, d.len, "\"model\":\"");
    CHECK(p != NULL);
    off = (size_t) (p - d.buf) + strlen("\"model\":\"");
    moved = tst_alloc(d.len + 8);
    memcpy(moved, d.buf, off);
    memcpy(moved + off, "longer--", 8);
    memcpy(moved + off + 8, d.buf + off, d.len - off);

    /* a letter of the first tool's description changes case */
    changed = tst_dup(d.buf, d.len);
    p = tst_find(changed, d.len, "\"tools\":[");
    CHECK(p != NULL);
    p = tst_find(p, d.len - (size_t) (p - changed), "\"description\":\"");
    CHECK(p != NULL);
    p[strlen("\"description\":\"")] ^= 0x20;

    CHECK(tst_recalled(&mem, d.buf, d.len) == 0);
    CHECK(tst_recalled(&mem, d.buf, d.len) == all);
    CHECK(tst_recalled(&mem, moved, d.len + 8) == all);
    CHECK(tst_recalled(&mem, changed, d.len) == 0);
    CHECK(tst_recalled(&mem, d.buf, d.len) == all);
    CHECK(tst_recalled(&mem, changed, d.len) == all);

    /* cut inside the array: read, and the arrays kept stay */
    CHECK(tst_recalled(&mem, d.buf, d.len / 2) == 0);
    CHECK(tst_recalled(&mem, d.buf, d.len) == all);
    CHECK(mem.tools.n == 2);

    free(moved);
    free(changed);
    tst_doc_free(&d);
    ts_index_mem_free(&mem);
}


/*
 * A message after a recalled one nests arrays n deep in a block: the
 * index is the byte scan's, the limit of nesting included.  The first
 * message is recalled from a flat array seen three times before.
 */
static int
tst_nested_agree(ts_index_mem_t *mem, size_t n)
{
    static const char  head[] = "{\"messages\":[{\"role\":\"user\","
                                "\"content\":\"hi\"},{\"role\":\"user\","
                                "\"content\":[{\"type\":\"x\",\"v\":";
    static const char  tail[] = "}]}]}";
    char              *flat, *deep;
    size_t             h, t, len, i;
    int                ok;

    h = sizeof(head) - 1;
    t = sizeof(tail) - 1;
    flat = tst_alloc(h + 1 + t);
    memcpy(flat, head, h);
    flat[h] = '0';
    memcpy(flat + h + 1, tail, t);

    len = h + 2 * n + t;
    deep = tst_alloc(len);
    memcpy(deep, head, h);
    memset(deep + h, '[', n);
    memset(deep + h + n, ']', n);
    memcpy(deep + h + 2 * n, tail, t);

    ok = 1;

    for (i = 0; i < 3; i++) {
        ok &= tst_messages_recalled(mem, flat, h + 1 + t) >= 0;
    }

    ok &= tst_messages_recalled(mem, deep, len) == 1;

    free(flat);
    free(deep);

    return ok;
}


/*
 * A session's turns: turn 4 repeats turn 3's messages but the last,
 * whose cache_control moved, and adds two.  Messages are remembered
 * whole when their conversation comes a second time running, recalled
 * from the third, as far as their bytes come again.
 */
static void
test_messages_recalled(void)
{
    ts_index_mem_t  mem;
    tst_doc_t       t3, t4, other;
    const char     *p;
    char           *moved;
    size_t          off;

    CHECK(tst_doc_load(&t3, TST_CLAUDE "/ts-true/003.json") == 0);
    CHECK(tst_doc_load(&t4, TST_CLAUDE "/ts-true/004.json") == 0);
    CHECK(tst_doc_load(&other, TST_BIG) == 0);
    memset(&mem, 0, sizeof(mem));
    mem.tools.size = TS_RECALL_SIZE;

    CHECK(tst_messages_recalled(&mem, t3.buf, t3.len) == 0);
    CHECK(mem.messages_seen.n[0] == 0);
    CHECK(tst_messages_recalled(&mem, t3.buf, t3.len) == 0);
    CHECK(mem.messages_seen.n[0] == 4);
    CHECK(tst_messages_recalled(&mem, t3.buf, t3.len) == 4);
    CHECK(tst_messages_recalled(&mem, t4.buf, t4.len) == 3);
    CHECK(tst_messages_recalled(&mem, t4.buf, t4.len) == 6);

    /* the array further on: a longer model name comes first */
    p = tst_find(t4.buf, t4.len, "\"model\":\"");
    CHECK(p != NULL);
    off = (size_t) (p - t4.buf) + strlen("\"model\":\"");
    moved = tst_alloc(t4.len + 8);
    memcpy(moved, t4.buf, off);
    memcpy(moved + off, "longer--", 8);
    memcpy(moved + off + 8, t4.buf + off, t4.len - off);
    CHECK(tst_messages_recalled(&mem, moved, t4.len + 8) == 6);
    free(moved);

    /* cut in the fifth message: four recalled, and only those kept */
    p = tst_find(t4.buf, t4.len, "toolu_mockmwro3wpj0004");
    CHECK(p != NULL);
    CHECK(tst_messages_recalled(&mem, t4.buf, (size_t) (p - t4.buf)) == 4);
    CHECK(tst_messages_recalled(&mem, t4.buf, t4.len) == 4);
    CHECK(tst_messages_recalled(&mem, t4.buf, t4.len) == 6);

    /*
     * Another fifth message read, then a cut in the sixth: the fifth it
     * left in the index's arrays is not the one of the bytes kept.
     */
    off = (size_t) (p - t4.buf) + strlen("toolu_mockmwro3wpj0004");
    moved = tst_alloc(t4.len + 1);
    memcpy(moved, t4.buf, off);
    moved[off] = '4';
    memcpy(moved + off + 1, t4.buf + off, t4.len - off);
    p = tst_find(moved + off, t4.len + 1 - off, "toolu_mockmwro3wpj0004");
    CHECK(p != NULL);
    CHECK(tst_messages_recalled(&mem, moved, (size_t) (p - moved)) == 4);
    CHECK(tst_messages_recalled(&mem, t4.buf, t4.len) == 4);
    CHECK(tst_messages_recalled(&mem, t4.buf, t4.len) == 6);
    free(moved);

    /* another conversation in between: its start only is kept */
    CHECK(tst_messages_recalled(&mem, other.buf, other.len) == 0);
    CHECK(mem.messages_seen.n[0] == 0 && mem.messages_seen.len == 4096);
    CHECK(tst_messages_recalled(&mem, t4.buf, t4.len) == 0);
    CHECK(tst_messages_recalled(&mem, t4.buf, t4.len) == 0);
    CHECK(tst_messages_recalled(&mem, t4.buf, t4.len) == 6);

    /* after recalled messages, nesting is counted from where they end */
    CHECK(tst_nested_agree(&mem, TS_MAX_DEPTH - 5));
    CHECK(tst_nested_agree(&mem, TS_MAX_DEPTH - 4));

    /* forgetting drops what is kept, and keeps nothing more */
    mem.forget = 1;
    CHECK(tst_messages_recalled(&mem, t4.buf, t4.len) == 0);
    CHECK(tst_recalled(&mem, t4.buf, t4.len) == 0);
    CHECK(mem.messages_seen.len == 0 && mem.tools.n == 0);
    CHECK(mem.messages_seen.bytes == NULL && mem.tools.by_len == NULL);

    tst_doc_free(&t3);
    tst_doc_free(&t4);
    tst_doc_free(&other);
    ts_index_mem_free(&mem);
}


const tst_case_t  tst_strmap_tests[] = {
    { "string map: random texts against the reference", test_map_random },
    { "string map: control bytes and escapes after quiet chunks",
      test_map_quiet_chunks },
    { "string map: backslash runs across chunks", test_map_runs },
    { "string map: every byte after a backslash", test_map_escapes },
    { "string map: quote and backslash lookups", test_map_lookups },
    { "string map: made on after a skip", test_map_skip },
    { "index: map scan equals byte scan, bad bodies",
      test_scans_bad_bodies },
    { "index: map scan equals byte scan, fixtures cut and broken",
      test_scans_fixtures },
    { "index: UTF-8 in strings across chunks, by both scans",
      test_scans_utf8 },
    { "index: a tools array read before is recalled by its bytes",
      test_tools_recalled },
    { "index: a session's messages are recalled by their bytes",
      test_messages_recalled },
    { NULL, NULL }
};
