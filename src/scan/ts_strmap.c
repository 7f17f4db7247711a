/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <string.h>

#if (defined __GNUC__ && defined __x86_64__)
#include <immintrin.h>
#define TS_HAVE_X86  1
#endif

#include "scan/ts_strmap.h"


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
    uint64_t  high;         /* bytes over 0x7f: UTF-8 is checked there */
} ts_kinds_t;


/*
 * Makes the masks of n 64-byte blocks: bits[2k] the quotes of block k,
 * bits[2k + 1] its backslashes, kinds[k] the rest.
 */
typedef void (*ts_masks_pt)(const unsigned char *p, size_t n,
    uint64_t *bits, ts_kinds_t *kinds);


/*
 * The look kernel makes, of the kinds, only the control bytes and the
 * bytes over 0x7f, and a mask of the backslashes followed by anything
 * but "/bfnrt or a backslash.  A block where no such byte is escaped and
 * no control byte lies holds nothing strings may not hold: compact JSON
 * is checked by these two masks, and a block with a \u or a bad escape
 * gets all kinds.  It checks UTF-8 too, after the 32 bytes at prev
 * (NULL: the text's start): bit k of *utf8 marks block k as one where
 * the byte-wise check must find the bad sequence.
 */
typedef void (*ts_look_pt)(const unsigned char *p, size_t n,
    const unsigned char *prev, uint64_t *bits, ts_kinds_t *kinds,
    uint64_t *look, uint64_t *utf8);


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
            kinds[k].high |= (uint64_t) (unsigned) _mm_movemask_epi8(x)
                             << i;
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


/* what both AVX2 kernels make of a block: quotes, backslashes, ctl
 * (high is the look's to check) */
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


/*
 * UTF-8 by table lookups (Keiser and Lemire, "Validating UTF-8 in less
 * than one instruction per byte", 2021): the nibbles of each byte and of
 * the one before it select the errors the pair may be; what the three
 * lookups share is an error, but for the continuations that the third
 * and fourth bytes of a sequence must be.
 */
#define TS_U8_SHORT      0x01   /* a lead without its continuation */
#define TS_U8_LONG       0x02   /* a continuation after ASCII */
#define TS_U8_OVER3      0x04   /* E0 80..9F */
#define TS_U8_LARGE      0x08   /* past U+10FFFF */
#define TS_U8_SURROGATE  0x10   /* ED A0..BF */
#define TS_U8_OVER2      0x20   /* C0, C1 */
#define TS_U8_OVER4      0x40   /* F0 80..8F; F5..FF 80..8F */
#define TS_U8_CONTS      0x80   /* a continuation after a continuation */
#define TS_U8_CARRY      (TS_U8_SHORT | TS_U8_LONG | TS_U8_CONTS)
#define TS_U8_HIGH       (TS_U8_CARRY | TS_U8_LARGE | TS_U8_OVER4)

#define TS_U8_ROW(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, q)          \
    (char) (a), (char) (b), (char) (c), (char) (d), (char) (e), (char) (f),  \
    (char) (g), (char) (h), (char) (i), (char) (j), (char) (k), (char) (l),  \
    (char) (m), (char) (n), (char) (o), (char) (q)
#define TS_U8_TABLE(...)                                                    \
    _mm256_setr_epi8(TS_U8_ROW(__VA_ARGS__), TS_U8_ROW(__VA_ARGS__))


typedef struct {
    __m256i  b1h;           /* by the high nibble of the byte before */
    __m256i  b1l;           /* by its low nibble */
    __m256i  b2h;           /* by the byte's high nibble */
} ts_u8_tables_t;


__attribute__((target("avx2")))
static void
ts_u8_tables(ts_u8_tables_t *t)
{
    t->b1h = TS_U8_TABLE(TS_U8_LONG, TS_U8_LONG, TS_U8_LONG, TS_U8_LONG,
                         TS_U8_LONG, TS_U8_LONG, TS_U8_LONG, TS_U8_LONG,
                         TS_U8_CONTS, TS_U8_CONTS, TS_U8_CONTS, TS_U8_CONTS,
                         TS_U8_SHORT | TS_U8_OVER2, TS_U8_SHORT,
                         TS_U8_SHORT | TS_U8_OVER3 | TS_U8_SURROGATE,
                         TS_U8_SHORT | TS_U8_LARGE | TS_U8_OVER4);
    t->b1l = TS_U8_TABLE(TS_U8_CARRY | TS_U8_OVER3 | TS_U8_OVER2
                         | TS_U8_OVER4,
                         TS_U8_CARRY | TS_U8_OVER2, TS_U8_CARRY, TS_U8_CARRY,
                         TS_U8_CARRY | TS_U8_LARGE, TS_U8_HIGH, TS_U8_HIGH,
                         TS_U8_HIGH, TS_U8_HIGH, TS_U8_HIGH, TS_U8_HIGH,
                         TS_U8_HIGH, TS_U8_HIGH,
                         TS_U8_HIGH | TS_U8_SURROGATE, TS_U8_HIGH,
                         TS_U8_HIGH);
    t->b2h = TS_U8_TABLE(TS_U8_SHORT, TS_U8_SHORT, TS_U8_SHORT, TS_U8_SHORT,
                         TS_U8_SHORT, TS_U8_SHORT, TS_U8_SHORT, TS_U8_SHORT,
                         TS_U8_LONG | TS_U8_OVER2 | TS_U8_CONTS
                         | TS_U8_OVER3 | TS_U8_OVER4,
                         TS_U8_LONG | TS_U8_OVER2 | TS_U8_CONTS
                         | TS_U8_OVER3 | TS_U8_LARGE,
                         TS_U8_LONG | TS_U8_OVER2 | TS_U8_CONTS
                         | TS_U8_SURROGATE | TS_U8_LARGE,
                         TS_U8_LONG | TS_U8_OVER2 | TS_U8_CONTS
                         | TS_U8_SURROGATE | TS_U8_LARGE,
                         TS_U8_SHORT, TS_U8_SHORT, TS_U8_SHORT, TS_U8_SHORT);
}


/* the UTF-8 errors of 32 bytes x after the 32 bytes before */
__attribute__((target("avx2"), always_inline))
static inline __m256i
ts_avx2_utf8(const ts_u8_tables_t *t, __m256i x, __m256i before)
{
    __m256i  nib, p1, p2, p3, e, must;

    nib = _mm256_set1_epi8(0x0f);

    /* the bytes one, two and three places before each byte */
    before = _mm256_permute2x128_si256(before, x, 0x21);
    p1 = _mm256_alignr_epi8(x, before, 15);
    p2 = _mm256_alignr_epi8(x, before, 14);
    p3 = _mm256_alignr_epi8(x, before, 13);

    e = _mm256_and_si256(
            _mm256_and_si256(
                _mm256_shuffle_epi8(t->b1h, _mm256_and_si256(
                                        _mm256_srli_epi16(p1, 4), nib)),
                _mm256_shuffle_epi8(t->b1l, _mm256_and_si256(p1, nib))),
            _mm256_shuffle_epi8(t->b2h, _mm256_and_si256(
                                    _mm256_srli_epi16(x, 4), nib)));

    /* 0x80 where a byte must be a third or fourth byte's continuation */
    must = _mm256_or_si256(_mm256_subs_epu8(p2, _mm256_set1_epi8(0x60)),
                           _mm256_subs_epu8(p3, _mm256_set1_epi8(0x70)));
    must = _mm256_and_si256(must, _mm256_set1_epi8((char) 0x80));

    return _mm256_xor_si256(e, must);
}


/*
 * 1 when the UTF-8 of the block lo, hi after the 32 bytes at prev may be
 * bad; *open: the block's last three bytes hold a byte over 0x7f.
 */
__attribute__((target("avx2"), always_inline))
static inline uint64_t
ts_avx2_utf8_block(const ts_u8_tables_t *t, __m256i lo, __m256i hi,
    const unsigned char *prev, uint64_t *open)
{
    __m256i  before, e;

    before = prev ? _mm256_loadu_si256((const __m256i *) (const void *) prev)
                  : _mm256_setzero_si256();
    e = _mm256_or_si256(ts_avx2_utf8(t, lo, before),
                        ts_avx2_utf8(t, hi, lo));
    *open = (uint32_t) _mm256_movemask_epi8(hi) >> 29;

    return !_mm256_testz_si256(e, e);
}


/*
 * The UTF-8 of the blocks at p marked in todo, in order; a block whose
 * last three bytes hold a byte over 0x7f marks the next one: a sequence
 * it begins goes on there.
 */
__attribute__((target("avx2")))
static uint64_t
ts_avx2_utf8_blocks(const unsigned char *p, size_t n,
    const unsigned char *prev, uint64_t todo)
{
    ts_u8_tables_t  t;
    __m256i         lo, hi;
    uint64_t        bad, open;
    size_t          k;

    ts_u8_tables(&t);
    bad = 0;

    while (todo) {
        k = (size_t) __builtin_ctzll(todo);
        todo &= todo - 1;

        lo = _mm256_loadu_si256((const __m256i *) (const void *) (p + k * 64));
        hi = _mm256_loadu_si256((const __m256i *) (const void *)
                                (p + k * 64 + 32));
        bad |= ts_avx2_utf8_block(&t, lo, hi, k ? p + k * 64 - 32 : prev,
                                  &open)
               << k;

        if (open && k + 1 < n) {
            todo |= 1ULL << (k + 1);
        }
    }

    return bad;
}


__attribute__((target("avx2")))
static void
ts_look_avx2(const unsigned char *p, size_t n, const unsigned char *prev,
    uint64_t *bits, ts_kinds_t *kinds, uint64_t *look, uint64_t *utf8)
{
    __m256i   lo, hi;
    uint64_t  todo;
    size_t    k;

    /* a sequence the bytes before began goes on in the first block */
    todo = prev != NULL
           && _mm256_movemask_epi8(_mm256_loadu_si256(
                  (const __m256i *) (const void *) prev)) >> 29 != 0;

    for (k = 0; k < n; k++, bits += 2) {
        lo = _mm256_loadu_si256((const __m256i *) (const void *)
                                (p + k * 64));
        hi = _mm256_loadu_si256((const __m256i *) (const void *)
                                (p + k * 64 + 32));

        ts_avx2_block(lo, hi, bits, &kinds[k]);

        /* most blocks hold no backslash: nothing to classify there */
        look[k] = bits[1] == 0
                  ? 0
                  : ts_avx2_mask(ts_avx2_look(lo, p + k * 64),
                                 ts_avx2_look(hi, p + k * 64 + 32));

        /* nor a byte over 0x7f: its UTF-8 is checked after the loop */
        todo |= (uint64_t) !_mm256_testz_si256(_mm256_or_si256(lo, hi),
                                               _mm256_set1_epi8((char) 0x80))
                << k;
    }

    *utf8 = todo ? ts_avx2_utf8_blocks(p, n, prev, todo) : 0;
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
            kinds[k].high |= (uint64_t) (p[i] >> 7) << i;
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
 * Checks the UTF-8 of a block at p: its bytes over 0x7f (high), less the
 * first *carried ones, which a sequence of the block before holds.  A
 * sequence is read whole, up to TS_REACH bytes past the block; how many
 * of the next block's bytes it holds is carried.  Returns the offset of
 * the first bad sequence's lead byte, which lies inside the string that
 * holds it, or 64 when there is none.
 */
static unsigned
ts_utf8_block(const unsigned char *p, uint64_t high, uint64_t *carried)
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
    uint64_t    utf8;               /* when it looks: blocks to check */
    int         checked;            /* the kernel checked UTF-8 */
} ts_batch_t;


/*
 * The bytes of the block at `at` that a sequence begun in the three bytes
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


/* the bytes over 0x7f of a block at p */
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
 * The UTF-8 of n blocks at p, the first `off` in the text, rarer in JSON
 * text than anything else the map checks: read byte-wise where the
 * kernel does not check it (the carry: how many of a block's bytes a
 * sequence of the block before holds), else where it saw an error.
 */
static void
ts_map_utf8(ts_strmap_t *m, const ts_batch_t *bt, const unsigned char *p,
    size_t n, size_t off, uint64_t from)
{
    uint64_t  todo, high;
    size_t    k;
    unsigned  bad;

    /* after a skip the first block is read from the place skipped to */
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

        bad = ts_utf8_block(p + k * 64, high, &m->carry.utf8);

        if (bad < 64 && off + k * 64 + bad < m->bad) {
            m->bad = off + k * 64 + bad;
        }
    }
}


/*
 * Reads the masks of n blocks at p, the next to map: escapes, strings,
 * errors.  A block the look kernel cleared only carries its quotes'
 * parity; the others get all their kinds and the whole check.  The
 * carries live in locals: through pointers the compiler would have to
 * reload them after every store to bits, which may alias them.
 */
static void
ts_map_blocks(ts_strmap_t *m, const ts_kernel_t *kn, const unsigned char *p,
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
 * The masks of the next n blocks, at p, then their map.  The first
 * block after a skip loses the bits before the place skipped to: what
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

    ts_map_blocks(m, kn, p, n, bits, bt, from);
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
