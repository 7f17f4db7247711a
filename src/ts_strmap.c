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


/* what is carried from one 64-byte block to the next */
typedef struct {
    uint64_t  escaped;      /* 1: the block's first byte is escaped */
    uint64_t  in_string;    /* all ones: the block starts in a string */
} ts_carry_t;


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
 * (bit 0: '"' and '/', bit 1: 'b' 'f' 'n', bit 2: 'r' 't').
 */
__attribute__((target("avx2")))
static __m256i
ts_avx2_escapes(__m256i x)
{
    __m256i  lo, hi, nib;

    lo = _mm256_setr_epi8(0, 0, 7, 0, 4, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2, 1,
                          0, 0, 7, 0, 4, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2, 1);
    hi = _mm256_setr_epi8(0, 0, 1, 0, 0, 0, 2, 4, 0, 0, 0, 0, 0, 0, 0, 0,
                          0, 0, 1, 0, 0, 0, 2, 4, 0, 0, 0, 0, 0, 0, 0, 0);
    nib = _mm256_set1_epi8(0x0f);

    lo = _mm256_shuffle_epi8(lo, _mm256_and_si256(x, nib));
    hi = _mm256_shuffle_epi8(hi,
                             _mm256_and_si256(_mm256_srli_epi16(x, 4), nib));

    /* all ones where the classes share no bit */
    return _mm256_cmpeq_epi8(_mm256_and_si256(lo, hi),
                             _mm256_setzero_si256());
}


__attribute__((target("avx2")))
static void
ts_masks_avx2(const unsigned char *p, size_t n, uint64_t *bits,
    ts_kinds_t *kinds)
{
    __m256i  q, b, c, u, lo, hi;
    size_t   k;

    q = _mm256_set1_epi8('"');
    b = _mm256_set1_epi8('\\');
    c = _mm256_set1_epi8(0x1f);
    u = _mm256_set1_epi8('u');

    for (k = 0; k < n; k++, p += 64, bits += 2) {
        lo = _mm256_loadu_si256((const __m256i *) (const void *) p);
        hi = _mm256_loadu_si256((const __m256i *) (const void *) (p + 32));

        bits[0] = ts_avx2_mask(_mm256_cmpeq_epi8(lo, q),
                               _mm256_cmpeq_epi8(hi, q));
        bits[1] = ts_avx2_mask(_mm256_cmpeq_epi8(lo, b),
                               _mm256_cmpeq_epi8(hi, b));
        kinds[k].ctl = ts_avx2_mask(
                           _mm256_cmpeq_epi8(_mm256_max_epu8(lo, c), c),
                           _mm256_cmpeq_epi8(_mm256_max_epu8(hi, c), c));
        kinds[k].escape = ~ts_avx2_mask(ts_avx2_escapes(lo),
                                        ts_avx2_escapes(hi));
        kinds[k].u = ts_avx2_mask(_mm256_cmpeq_epi8(lo, u),
                                  _mm256_cmpeq_epi8(hi, u));
    }
}


static ts_masks_pt
ts_masks_kernel(ts_strmap_kernel_t k)
{
    return k == TS_STRMAP_BEST && __builtin_cpu_supports("avx2")
           ? ts_masks_avx2 : ts_masks_sse2;
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


static ts_masks_pt
ts_masks_kernel(ts_strmap_kernel_t k)
{
    (void) k;

    return ts_masks_bytes;
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
ts_escaped(uint64_t bslash, ts_carry_t *c)
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


/*
 * Reads the masks of n blocks at p: escapes, strings, errors.  The
 * carries live in locals: through pointers the compiler would have to
 * reload them after every store to bits, which may alias them.
 */
static void
ts_map_blocks(ts_strmap_t *m, const unsigned char *p, size_t off, size_t n,
    uint64_t *bits, const ts_kinds_t *kinds, ts_carry_t *carry)
{
    ts_carry_t  c;
    uint64_t    escaped, quotes, in, bad, u;
    size_t      k;

    c = *carry;

    for (k = 0; k < n; k++) {
        escaped = (bits[2 * k + 1] | c.escaped)
                  ? ts_escaped(bits[2 * k + 1], &c) : 0;
        quotes = bits[2 * k] & ~escaped;
        bits[2 * k] = quotes;

        in = ts_prefix_xor(quotes) ^ c.in_string;
        c.in_string = (uint64_t) ((int64_t) in >> 63);

        escaped &= in;
        u = escaped & kinds[k].u;
        bad = (kinds[k].ctl & in)
              | (escaped & ~(kinds[k].escape | kinds[k].u));

        /* rare: a \u, or a byte strings may not hold */
        if ((bad | u) != 0 && m->bad == m->len) {
            bad |= u ? ts_bad_unicode(p + k * 64, u) : 0;

            if (bad) {
                m->bad = off + k * 64 + (size_t) __builtin_ctzll(bad);
            }
        }
    }

    *carry = c;
}


size_t
ts_strmap_words(size_t len)
{
    return (len + 63) / 64 * 2;
}


/*
 * Blocks with TS_REACH bytes after them are read in place, in batches;
 * the last one or two are copied behind blanks, which change nothing.
 */
void
ts_strmap_build(ts_strmap_t *m, const char *buf, size_t len,
    uint64_t *bits, ts_strmap_kernel_t kernel)
{
    const unsigned char  *b;
    unsigned char         tail[2 * 64 + TS_REACH];
    ts_kinds_t            kinds[TS_BATCH];
    ts_masks_pt           masks;
    ts_carry_t            c;
    size_t                off, n, rest;

    m->bits = bits;
    m->len = len;
    m->blocks = (len + 63) / 64;
    m->bad = len;

    b = (const unsigned char *) buf;
    masks = ts_masks_kernel(kernel);
    c.escaped = 0;
    c.in_string = 0;

    n = len < 64 + TS_REACH ? 0 : (len - TS_REACH) / 64;

    for (off = 0; n > 0; off += rest * 64, n -= rest) {
        rest = n < TS_BATCH ? n : TS_BATCH;
        masks(b + off, rest, bits + off / 32, kinds);
        ts_map_blocks(m, b + off, off, rest, bits + off / 32, kinds, &c);
    }

    if (off < len) {
        rest = (len - off + 63) / 64;
        memset(tail, ' ', sizeof(tail));
        memcpy(tail, b + off, len - off);
        masks(tail, rest, bits + off / 32, kinds);
        ts_map_blocks(m, tail, off, rest, bits + off / 32, kinds, &c);
    }
}
