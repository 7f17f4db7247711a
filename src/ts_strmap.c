/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <string.h>

#if (defined __GNUC__ && defined __x86_64__)
#include <immintrin.h>
#define TS_HAVE_X86  1
#endif

#include "ts_strmap.h"


#define TS_EVEN   0x5555555555555555ULL
#define TS_ODD    0xaaaaaaaaaaaaaaaaULL

/* blocks whose masks are made in one go, before they are read */
#define TS_BATCH  64

/* an escape reads at most this far past its block: \u and four digits */
#define TS_REACH  4


/* what a block's bytes may be, besides quotes and backslashes */
typedef struct {
    uint64_t  ctl;          /* control bytes, which strings may not hold */
    uint64_t  escape;       /* what may follow a backslash: "/bfnrt */
    uint64_t  u;            /* 'u', which four hex digits must follow */
} ts_kinds_t;


/*
 * Makes the masks of n 64-byte blocks: bits[2k] the quotes of block k,
 * bits[2k + 1] its backslashes, kinds[k] the rest.
 */
typedef void (*ts_masks_pt)(const unsigned char *p, size_t n,
    uint64_t *bits, ts_kinds_t *kinds);


/*
 * The look kernel makes, of the kinds, only the control bytes, and a
 * mask of the backslashes followed by anything but "/bfnrt or a
 * backslash.  A block where no such byte is escaped and no control byte
 * lies holds nothing strings may not hold: compact JSON is checked by
 * these two masks, and a block with a \u or a bad escape gets all kinds.
 */
typedef void (*ts_look_pt)(const unsigned char *p, size_t n,
    uint64_t *bits, ts_kinds_t *kinds, uint64_t *look);


/* the kernels of a map: masks always, look where the CPU has one */
typedef struct {
    ts_masks_pt  masks;
    ts_look_pt   look;
} ts_kernel_t;


static const unsigned char  ts_hex_digit[256] = {
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1,
    ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1, ['a'] = 1, ['b'] = 1,
    ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['A'] = 1, ['B'] = 1,
    ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1
};


/* the kernels that OR bits in start from blank masks */
static void
ts_masks_clear(uint64_t *bits, ts_kinds_t *kinds, size_t n)
{
    memset(bits, 0, 2 * n * sizeof(uint64_t));
    memset(kinds, 0, n * sizeof(ts_kinds_t));
}


#ifdef TS_HAVE_X86

/* the bits of 16 bytes equal to c, or at most 0x1f when c is 0x1f */
static uint64_t
ts_sse2_bits(__m128i x, __m128i c, int ctl)
{
    if (ctl) {
        x = _mm_max_epu8(x, c);
    }

    return (uint64_t) (unsigned) _mm_movemask_epi8(_mm_cmpeq_epi8(x, c));
}


/* the bits of 16 bytes that may follow a backslash, 'u' aside */
static uint64_t
ts_sse2_escapes(__m128i x)
{
    static const char  simple[] = "\"/bfnrt";
    __m128i            eq;
    unsigned           i;

    eq = _mm_setzero_si128();

    for (i = 0; i < sizeof(simple) - 1; i++) {
        eq = _mm_or_si128(eq, _mm_cmpeq_epi8(x, _mm_set1_epi8(simple[i])));
    }

    return (uint64_t) (unsigned) _mm_movemask_epi8(eq);
}


static void
ts_masks_sse2(const unsigned char *p, size_t n, uint64_t *bits,
    ts_kinds_t *kinds)
{
    __m128i   q, b, c, u, x;
    size_t    k;
    unsigned  i;

    q = _mm_set1_epi8('"');
    b = _mm_set1_epi8('\\');
    c = _mm_set1_epi8(0x1f);
    u = _mm_set1_epi8('u');
    ts_masks_clear(bits, kinds, n);

    for (k = 0; k < n; k++, p += 64, bits += 2) {
        for (i = 0; i < 64; i += 16) {
            x = _mm_loadu_si128((const __m128i *) (const void *) (p + i));
            bits[0] |= ts_sse2_bits(x, q, 0) << i;
            bits[1] |= ts_sse2_bits(x, b, 0) << i;
            kinds[k].ctl |= ts_sse2_bits(x, c, 1) << i;
            kinds[k].escape |= ts_sse2_escapes(x) << i;
            kinds[k].u |= ts_sse2_bits(x, u, 0) << i;
        }
    }
}


__attribute__((target("avx2")))
static uint64_t
ts_avx2_mask(__m256i lo, __m256i hi)
{
    return (uint64_t) (uint32_t) _mm256_movemask_epi8(lo)
           | (uint64_t) (uint32_t) _mm256_movemask_epi8(hi) << 32;
}


/*
 * The bytes that may follow a backslash, 'u' aside, by their nibbles: a
 * byte is one when the classes of its low and high nibble share a bit
 * (bit 0: '"' and '/', bit 1: 'b' 'f' 'n', bit 2: 'r' 't', bit 3: the
 * backslash, which an escaped byte never is: the masks path is the same
 * with it, and the look path needs it).
 */
__attribute__((target("avx2")))
static __m256i
ts_avx2_escapes(__m256i x)
{
    __m256i  lo, hi, nib;

    lo = _mm256_setr_epi8(0, 0, 7, 0, 4, 0, 2, 0, 0, 0, 0, 0, 8, 0, 2, 1,
                          0, 0, 7, 0, 4, 0, 2, 0, 0, 0, 0, 0, 8, 0, 2, 1);
    hi = _mm256_setr_epi8(0, 0, 1, 0, 0, 0, 2, 4, 0, 0, 0, 0, 0, 0, 0, 0,
                          0, 0, 1, 0, 0, 8, 2, 4, 0, 0, 0, 0, 0, 0, 0, 0);
    nib = _mm256_set1_epi8(0x0f);

    lo = _mm256_shuffle_epi8(lo, _mm256_and_si256(x, nib));
    hi = _mm256_shuffle_epi8(hi,
                             _mm256_and_si256(_mm256_srli_epi16(x, 4), nib));

    /* all ones where the classes share no bit */
    return _mm256_cmpeq_epi8(_mm256_and_si256(lo, hi),
                             _mm256_setzero_si256());
}


/* what both AVX2 kernels make of a block: quotes, backslashes, ctl */
__attribute__((target("avx2")))
static inline void
ts_avx2_block(__m256i lo, __m256i hi, uint64_t *bits, ts_kinds_t *kind)
{
    __m256i  q, b, c;

    q = _mm256_set1_epi8('"');
    b = _mm256_set1_epi8('\\');
    c = _mm256_set1_epi8(0x1f);

    bits[0] = ts_avx2_mask(_mm256_cmpeq_epi8(lo, q),
                           _mm256_cmpeq_epi8(hi, q));
    bits[1] = ts_avx2_mask(_mm256_cmpeq_epi8(lo, b),
                           _mm256_cmpeq_epi8(hi, b));
    kind->ctl = ts_avx2_mask(_mm256_cmpeq_epi8(_mm256_max_epu8(lo, c), c),
                             _mm256_cmpeq_epi8(_mm256_max_epu8(hi, c), c));
}


__attribute__((target("avx2")))
static void
ts_masks_avx2(const unsigned char *p, size_t n, uint64_t *bits,
    ts_kinds_t *kinds)
{
    __m256i  u, lo, hi;
    size_t   k;

    u = _mm256_set1_epi8('u');

    for (k = 0; k < n; k++, p += 64, bits += 2) {
        lo = _mm256_loadu_si256((const __m256i *) (const void *) p);
        hi = _mm256_loadu_si256((const __m256i *) (const void *) (p + 32));

        ts_avx2_block(lo, hi, bits, &kinds[k]);
        kinds[k].escape = ~ts_avx2_mask(ts_avx2_escapes(lo),
                                        ts_avx2_escapes(hi));
        kinds[k].u = ts_avx2_mask(_mm256_cmpeq_epi8(lo, u),
                                  _mm256_cmpeq_epi8(hi, u));
    }
}


/* the backslashes of 32 bytes x at p followed by anything but "/bfnrt\\ */
__attribute__((target("avx2")))
static __m256i
ts_avx2_look(__m256i x, const unsigned char *p)
{
    __m256i  next;

    next = _mm256_loadu_si256((const __m256i *) (const void *) (p + 1));

    return _mm256_and_si256(_mm256_cmpeq_epi8(x, _mm256_set1_epi8('\\')),
                            ts_avx2_escapes(next));
}


__attribute__((target("avx2")))
static void
ts_look_avx2(const unsigned char *p, size_t n, uint64_t *bits,
    ts_kinds_t *kinds, uint64_t *look)
{
    __m256i  lo, hi;
    size_t   k;

    for (k = 0; k < n; k++, p += 64, bits += 2) {
        lo = _mm256_loadu_si256((const __m256i *) (const void *) p);
        hi = _mm256_loadu_si256((const __m256i *) (const void *) (p + 32));

        ts_avx2_block(lo, hi, bits, &kinds[k]);

        /* most blocks hold no backslash: nothing to classify there */
        look[k] = bits[1] == 0
                  ? 0
                  : ts_avx2_mask(ts_avx2_look(lo, p),
                                 ts_avx2_look(hi, p + 32));
    }
}


static ts_kernel_t
ts_kernel(ts_strmap_kernel_t k)
{
    ts_kernel_t  kn;

    if (k == TS_STRMAP_BEST && __builtin_cpu_supports("avx2")) {
        kn.masks = ts_masks_avx2;
        kn.look = ts_look_avx2;

    } else {
        kn.masks = ts_masks_sse2;
        kn.look = NULL;
    }

    return kn;
}

#else

/* 1: what may follow a backslash, 'u' aside; 2: 'u' */
static const unsigned char  ts_escape_class[256] = {
    ['"'] = 1, ['\\'] = 1, ['/'] = 1, ['b'] = 1, ['f'] = 1, ['n'] = 1,
    ['r'] = 1, ['t'] = 1, ['u'] = 2
};


static void
ts_masks_bytes(const unsigned char *p, size_t n, uint64_t *bits,
    ts_kinds_t *kinds)
{
    size_t    k;
    unsigned  i;

    ts_masks_clear(bits, kinds, n);

    for (k = 0; k < n; k++, p += 64, bits += 2) {
        for (i = 0; i < 64; i++) {
            bits[0] |= (uint64_t) (p[i] == '"') << i;
            bits[1] |= (uint64_t) (p[i] == '\\') << i;
            kinds[k].ctl |= (uint64_t) (p[i] < 0x20) << i;
            kinds[k].escape |= (uint64_t) (ts_escape_class[p[i]] == 1) << i;
            kinds[k].u |= (uint64_t) (ts_escape_class[p[i]] == 2) << i;
        }
    }
}


static ts_kernel_t
ts_kernel(ts_strmap_kernel_t k)
{
    ts_kernel_t  kn;

    (void) k;
    kn.masks = ts_masks_bytes;
    kn.look = NULL;

    return kn;
}

#endif


/*
 * The bytes other than backslashes that a backslash escapes: the byte
 * after a run of backslashes of odd length.  Adding a run's first bit
 * to the run carries to the byte after it; a run that starts on an even
 * bit has odd length when it ends on an odd one, and the other way
 * round.  A run of odd length that starts on an odd bit and reaches the
 * block's end escapes the next block's first byte.
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
 * The \u escapes of a block at p (bits of their 'u') that four hex
 * digits do not follow; the TS_REACH bytes after the block can be read.
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


/* what a batch's kernel made besides the bits */
typedef struct {
    ts_kinds_t  kinds[TS_BATCH];
    uint64_t    look[TS_BATCH];     /* when the kernel looks */
} ts_batch_t;


/*
 * Reads the masks of n blocks at p, the next to map: escapes, strings,
 * errors.  A block the look kernel cleared only carries its quotes'
 * parity; the others get all their kinds and the whole check.  The
 * carries live in locals: through pointers the compiler would have to
 * reload them after every store to bits, which may alias them.
 */
static void
ts_map_blocks(ts_strmap_t *m, const ts_kernel_t *kn, const unsigned char *p,
    size_t n, uint64_t *bits, ts_batch_t *bt)
{
    ts_strmap_carry_t   c;
    ts_kinds_t         *kd;
    const uint64_t     *look;
    uint64_t            escaped, quotes, in, bad, u, raw[2];
    size_t              k, off;

    c = m->carry;
    off = m->mapped * 64;
    look = kn->look != NULL ? bt->look : NULL;

    for (k = 0; k < n; k++) {
        escaped = (bits[2 * k + 1] | c.escaped)
                  ? ts_escaped(bits[2 * k + 1], &c) : 0;
        quotes = bits[2 * k] & ~escaped;
        bits[2 * k] = quotes;
        kd = &bt->kinds[k];

        if (look != NULL) {
            /* a byte after a backslash, when that backslash escapes it */
            u = escaped & (look[k] << 1 | c.look);
            c.look = look[k] >> 63;

            /* the quotes' parity is taken when a block needs it */
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
        if ((bad | u) != 0 && m->bad == m->len) {
            bad |= u ? ts_bad_unicode(p + k * 64, u) : 0;

            if (bad) {
                m->bad = off + k * 64 + (size_t) __builtin_ctzll(bad);
            }
        }
    }

    m->carry = c;
    m->mapped += n;
}


/*
 * The masks of the next n blocks, at p, then their map.  The first
 * block after a skip loses the bits before the place skipped to: what
 * lies there is not read, and the place is outside strings.
 */
static void
ts_map_batch(ts_strmap_t *m, const ts_kernel_t *kn, const unsigned char *p,
    size_t n, ts_batch_t *bt)
{
    uint64_t  *bits;

    bits = m->bits + 2 * m->mapped;

    if (kn->look != NULL) {
        kn->look(p, n, bits, bt->kinds, bt->look);

    } else {
        kn->masks(p, n, bits, bt->kinds);
    }

    bits[0] &= m->from;
    bits[1] &= m->from;
    m->from = ~0ULL;

    ts_map_blocks(m, kn, p, n, bits, bt);
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
    m->blocks = (len + 63) / 64;
    m->bad = len;
    m->buf = (const unsigned char *) buf;
    m->from = ~0ULL;
    m->kernel = kernel;
}


/*
 * Blocks with TS_REACH bytes after them are read in place, in batches;
 * the last one or two are copied behind blanks, which change nothing.
 */
void
ts_strmap_more(ts_strmap_t *m, size_t w)
{
    unsigned char  tail[2 * 64 + TS_REACH];
    ts_batch_t     bt;
    ts_kernel_t    kn;
    size_t         in_place, n, off;

    kn = ts_kernel(m->kernel);
    in_place = m->len < 64 + TS_REACH ? 0 : (m->len - TS_REACH) / 64;

    while (m->mapped <= w && m->mapped < in_place) {
        n = in_place - m->mapped < TS_BATCH ? in_place - m->mapped : TS_BATCH;
        ts_map_batch(m, &kn, m->buf + m->mapped * 64, n, &bt);
    }

    if (m->mapped <= w && m->mapped < m->blocks) {
        off = m->mapped * 64;
        memset(tail, ' ', sizeof(tail));
        memcpy(tail, m->buf + off, m->len - off);
        ts_map_batch(m, &kn, tail, m->blocks - m->mapped, &bt);
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

    if (m->blocks > 0) {
        ts_strmap_more(m, m->blocks - 1);
    }
}
