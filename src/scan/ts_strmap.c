/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <string.h>

#include "scan/ts_strmap_kernel.h"


#define TS_EVEN   0x5555555555555555ULL
#define TS_ODD    0xaaaaaaaaaaaaaaaaULL

/* chunks whose masks are made in one go, before they are read */
#define TS_BATCH  64

/* an escape reads at most this far past its chunk: \u and four digits */
#define TS_REACH  4


static const unsigned char  ts_hex_digit[256] = {
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1,
    ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1, ['a'] = 1, ['b'] = 1,
    ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['A'] = 1, ['B'] = 1,
    ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1
};




/*
 * The bytes other than backslashes that a backslash escapes: the byte
 * after a run of backslashes of odd length.  Adding a run's first bit
 * to the run carries to the byte after it; a run that starts on an even
 * bit has odd length when it ends on an odd one, and the other way
 * round.  A run of odd length that starts on an odd bit and reaches the
 * chunk's end escapes the next chunk's first byte.
 */
static uint64_t
ts_escaped(uint64_t bslash, ts_strmap_carry_t *c)
{
    uint64_t  b, starts, even_ends, odd_sum, escaped;

    /* an escaped backslash at bit 0 escapes nothing */
    b = bslash & ~c->escaped;
    starts = b & ~(b << 1);

    even_ends = (b + (starts & TS_EVEN)) & ~b;
    odd_sum = b + (starts & TS_ODD);

    escaped = (even_ends & TS_ODD) | (odd_sum & ~b & TS_EVEN)
              | (c->escaped & ~bslash);

    c->escaped = odd_sum < b;

    return escaped;
}


/* bit i: the parity of the bits 0 .. i of x */
static uint64_t
ts_prefix_xor(uint64_t x)
{
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;

    return x;
}


/*
 * The \u escapes of a chunk at p (bits of their 'u') that four hex
 * digits do not follow; the TS_REACH bytes after the chunk can be read.
 * JSON text rarely has them: most escapes are checked by the masks.
 */
static uint64_t
ts_bad_unicode(const unsigned char *p, uint64_t u)
{
    const unsigned char  *e;
    uint64_t              bad;

    bad = 0;

    while (u) {
        e = p + __builtin_ctzll(u);
        u &= u - 1;

        bad |= (uint64_t) ((ts_hex_digit[e[1]] & ts_hex_digit[e[2]]
                            & ts_hex_digit[e[3]] & ts_hex_digit[e[4]]) ^ 1)
               << (e - p);
    }

    return bad;
}


#define TS_U8_2     { 2, 0x80, 0x3f, 0, 0, 0 }
#define TS_U8_3(lo, span)  { 3, lo, span, 0, 0xc0, 0x80 }
#define TS_U8_4(lo, span)  { 4, lo, span, 0, 0xc0c0, 0x8080 }

const ts_utf8_lead_t  ts_utf8_leads[256] = {
    [0xc2 ... 0xdf] = TS_U8_2,
    [0xe0] = TS_U8_3(0xa0, 0x1f),           /* no overlong form */
    [0xe1 ... 0xec] = TS_U8_3(0x80, 0x3f),
    [0xed] = TS_U8_3(0x80, 0x1f),           /* no surrogate */
    [0xee ... 0xef] = TS_U8_3(0x80, 0x3f),
    [0xf0] = TS_U8_4(0x90, 0x2f),           /* no overlong form */
    [0xf1 ... 0xf3] = TS_U8_4(0x80, 0x3f),
    [0xf4] = TS_U8_4(0x80, 0x0f)            /* up to U+10FFFF */
};


int
ts_utf8_valid(const char *p, size_t n)
{
    const unsigned char  *s, *end;
    unsigned              len;

    s = (const unsigned char *) p;
    end = s + n;

    while (s < end) {
        if (*s < 0x80) {
            s++;
            continue;
        }

        len = ts_utf8_seq(s, (size_t) (end - s));

        if (len == 0) {
            return 0;
        }

        s += len;
    }

    return 1;
}


/*
 * Checks the UTF-8 of a chunk at p: its bytes over 0x7f (high), less the
 * first *carried ones, which a sequence of the chunk before holds.  A
 * sequence is read whole, up to TS_REACH bytes past the chunk; how many
 * of the next chunk's bytes it holds is carried.  Returns the offset of
 * the first bad sequence's lead byte, which lies inside the string that
 * holds it, or 64 when there is none.
 */
static unsigned
ts_utf8_chunk(const unsigned char *p, uint64_t high, uint64_t *carried)
{
    unsigned  i, n;

    high &= ~0ULL << *carried;
    *carried = 0;

    while (high) {
        i = (unsigned) __builtin_ctzll(high);
        n = ts_utf8_seq(p + i, TS_REACH);

        if (n == 0) {
            return i;
        }

        if (i + n >= 64) {
            *carried = i + n - 64;
            break;
        }

        high &= ~0ULL << (i + n);
    }

    return 64;
}


/* what a batch's kernel made besides the bits */
typedef struct {
    ts_kinds_t  kinds[TS_BATCH];
    uint64_t    look[TS_BATCH];     /* when the kernel looks */
    uint64_t    utf8;               /* when it looks: chunks to check */
    int         checked;            /* the kernel checked UTF-8 */
} ts_batch_t;


/*
 * The bytes of the chunk at `at` that a sequence begun in the three bytes
 * before holds; a bad one is noted where it begins.
 */
static uint64_t
ts_utf8_entered(ts_strmap_t *m, size_t at)
{
    const unsigned char  *p;
    unsigned              back, n;

    for (back = 1; back <= 3 && back <= at; back++) {
        p = m->buf + at - back;

        if (*p < 0x80) {
            return 0;
        }

        if (*p >= 0xc0) {
            n = ts_utf8_seq(p, m->len - (at - back));

            if (n == 0 && at - back < m->bad) {
                m->bad = at - back;
            }

            return n > back ? n - back : 0;
        }
    }

    return 0;
}


/* the bytes over 0x7f of a chunk at p */
static uint64_t
ts_high_bytes(const unsigned char *p)
{
    uint64_t  high;
    unsigned  i;

    high = 0;

    for (i = 0; i < 64; i++) {
        high |= (uint64_t) (p[i] >> 7) << i;
    }

    return high;
}


/*
 * The UTF-8 of n chunks at p, the first `off` in the text, rarer in JSON
 * text than anything else the map checks: read byte-wise where the
 * kernel does not check it (the carry: how many of a chunk's bytes a
 * sequence of the chunk before holds), else where it saw an error.
 */
static void
ts_map_utf8(ts_strmap_t *m, const ts_batch_t *bt, const unsigned char *p,
    size_t n, size_t off, uint64_t from)
{
    uint64_t  todo, high;
    size_t    k;
    unsigned  bad;

    /* after a skip the first chunk is read from the place skipped to */
    todo = bt->checked ? bt->utf8 | (from != ~0ULL) : ~0ULL >> (64 - n);

    while (todo) {
        k = (size_t) __builtin_ctzll(todo);
        todo &= todo - 1;

        if (bt->checked) {
            high = ts_high_bytes(p + k * 64);

            if (k == 0 && from != ~0ULL) {
                high &= from;
                m->carry.utf8 = 0;

            } else {
                m->carry.utf8 = ts_utf8_entered(m, off + k * 64);
            }

        } else {
            high = bt->kinds[k].high;

            if (high == 0) {
                continue;
            }
        }

        bad = ts_utf8_chunk(p + k * 64, high, &m->carry.utf8);

        if (bad < 64 && off + k * 64 + bad < m->bad) {
            m->bad = off + k * 64 + bad;
        }
    }
}


/*
 * Reads the masks of n chunks at p, the next to map: escapes, strings,
 * errors.  A chunk the look kernel cleared only carries its quotes'
 * parity; the others get all their kinds and the whole check.  The
 * carries live in locals: through pointers the compiler would have to
 * reload them after every store to bits, which may alias them.
 */
static void
ts_map_chunks(ts_strmap_t *m, const ts_kernel_t *kn, const unsigned char *p,
    size_t n, uint64_t *bits, ts_batch_t *bt, uint64_t from)
{
    ts_strmap_carry_t   c;
    ts_kinds_t         *kd;
    const uint64_t     *look;
    uint64_t            escaped, quotes, in, bad, u, raw[2];
    size_t              k, off, at;

    c = m->carry;
    off = m->mapped * 64;
    look = kn->look != NULL ? bt->look : NULL;

    for (k = 0; k < n; k++) {
        at = off + k * 64;

        escaped = (bits[2 * k + 1] | c.escaped)
                  ? ts_escaped(bits[2 * k + 1], &c) : 0;
        quotes = bits[2 * k] & ~escaped;
        bits[2 * k] = quotes;
        kd = &bt->kinds[k];

        if (look != NULL) {
            /* a byte after a backslash, when that backslash escapes it */
            u = escaped & (look[k] << 1 | c.look);
            c.look = look[k] >> 63;

            /* the quotes' parity is taken when a chunk needs it */
            if ((u | kd->ctl) == 0) {
                c.quotes ^= quotes;
                continue;
            }

            kn->masks(p + k * 64, 1, raw, kd);
        }

        if (c.quotes != 0) {
            c.in_string ^= 0 - (uint64_t) __builtin_parityll(c.quotes);
            c.quotes = 0;
        }

        in = ts_prefix_xor(quotes) ^ c.in_string;
        c.in_string = (uint64_t) ((int64_t) in >> 63);

        escaped &= in;
        u = escaped & kd->u;
        bad = (kd->ctl & in) | (escaped & ~(kd->escape | kd->u));

        /* rare: a \u, or a byte strings may not hold */
        if ((bad | u) != 0 && m->bad > at) {
            bad |= u ? ts_bad_unicode(p + k * 64, u) : 0;

            if (bad && at + (size_t) __builtin_ctzll(bad) < m->bad) {
                m->bad = at + (size_t) __builtin_ctzll(bad);
            }
        }
    }

    m->carry = c;
    ts_map_utf8(m, bt, p, n, off, from);
    m->mapped += n;
}


/*
 * The masks of the next n chunks, at p, then their map.  The first
 * chunk after a skip loses the bits before the place skipped to: what
 * lies there is not read, and the place is outside strings.
 */
static void
ts_map_batch(ts_strmap_t *m, const ts_kernel_t *kn, const unsigned char *p,
    size_t n, ts_batch_t *bt)
{
    uint64_t  *bits, from;

    bits = m->bits + 2 * m->mapped;

    bt->checked = kn->look != NULL;

    if (kn->look != NULL) {
        kn->look(p, n, m->mapped ? m->buf + m->mapped * 64 - 32 : NULL,
                 bits, bt->kinds, bt->look, &bt->utf8);

    } else {
        kn->masks(p, n, bits, bt->kinds);
    }

    from = m->from;
    bits[0] &= from;
    bits[1] &= from;
    bt->kinds[0].high &= from;      /* unused where the kernel checked */
    m->from = ~0ULL;

    ts_map_chunks(m, kn, p, n, bits, bt, from);
}


size_t
ts_strmap_words(size_t len)
{
    return (len + 63) / 64 * 2;
}


void
ts_strmap_start(ts_strmap_t *m, const char *buf, size_t len,
    uint64_t *bits, ts_strmap_kernel_t kernel)
{
    memset(m, 0, sizeof(ts_strmap_t));

    m->bits = bits;
    m->len = len;
    m->chunks = (len + 63) / 64;
    m->bad = len;
    m->buf = (const unsigned char *) buf;
    m->from = ~0ULL;
    m->kernel = kernel;
}


/*
 * Chunks with TS_REACH bytes after them are read in place, in batches;
 * the last one or two are copied behind blanks, which change nothing.
 */
void
ts_strmap_more(ts_strmap_t *m, size_t w)
{
    unsigned char  tail[2 * 64 + TS_REACH];
    ts_batch_t     bt;
    ts_kernel_t    kn;
    size_t         in_place, n, off;

    kn = ts_strmap_kernel(m->kernel);
    in_place = m->len < 64 + TS_REACH ? 0 : (m->len - TS_REACH) / 64;

    while (m->mapped <= w && m->mapped < in_place) {
        n = in_place - m->mapped < TS_BATCH ? in_place - m->mapped : TS_BATCH;
        ts_map_batch(m, &kn, m->buf + m->mapped * 64, n, &bt);
    }

    if (m->mapped <= w && m->mapped < m->chunks) {
        off = m->mapped * 64;
        memset(tail, ' ', sizeof(tail));
        memcpy(tail, m->buf + off, m->len - off);
        ts_map_batch(m, &kn, tail, m->chunks - m->mapped, &bt);
    }
}


void
ts_strmap_skip(ts_strmap_t *m, size_t off)
{
    /* a batch mapped ahead reached it: the map runs on unbroken */
    if (off / 64 < m->mapped) {
        return;
    }

    /* a string before off is not crossed again: its bad byte is moot */
    m->mapped = off / 64;
    m->from = ~0ULL << (off & 63);
    m->bad = m->len;
    memset(&m->carry, 0, sizeof(ts_strmap_carry_t));
}


void
ts_strmap_build(ts_strmap_t *m, const char *buf, size_t len,
    uint64_t *bits, ts_strmap_kernel_t kernel)
{
    ts_strmap_start(m, buf, len, bits, kernel);

    if (m->chunks > 0) {
        ts_strmap_more(m, m->chunks - 1);
    }
}
