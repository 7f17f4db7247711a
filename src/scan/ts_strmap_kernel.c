/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <string.h>

#if (defined __GNUC__ && defined __x86_64__)
#include <immintrin.h>
#define TS_HAVE_X86  1
#endif

#include "scan/ts_strmap_kernel.h"


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


/* what both AVX2 kernels make of a chunk: quotes, backslashes, ctl
 * (high is the look's to check) */
__attribute__((target("avx2")))
static inline void
ts_avx2_chunk(__m256i lo, __m256i hi, uint64_t *bits, ts_kinds_t *kind)
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

        ts_avx2_chunk(lo, hi, bits, &kinds[k]);
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
 * 1 when the UTF-8 of the chunk lo, hi after the 32 bytes at prev may be
 * bad; *open: the chunk's last three bytes hold a byte over 0x7f.
 */
__attribute__((target("avx2"), always_inline))
static inline uint64_t
ts_avx2_utf8_chunk(const ts_u8_tables_t *t, __m256i lo, __m256i hi,
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
 * The UTF-8 of the chunks at p marked in todo, in order; a chunk whose
 * last three bytes hold a byte over 0x7f marks the next one: a sequence
 * it begins goes on there.
 */
__attribute__((target("avx2")))
static uint64_t
ts_avx2_utf8_chunks(const unsigned char *p, size_t n,
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
        bad |= ts_avx2_utf8_chunk(&t, lo, hi, k ? p + k * 64 - 32 : prev,
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

    /* a sequence the bytes before began goes on in the first chunk */
    todo = prev != NULL
           && _mm256_movemask_epi8(_mm256_loadu_si256(
                  (const __m256i *) (const void *) prev)) >> 29 != 0;

    for (k = 0; k < n; k++, bits += 2) {
        lo = _mm256_loadu_si256((const __m256i *) (const void *)
                                (p + k * 64));
        hi = _mm256_loadu_si256((const __m256i *) (const void *)
                                (p + k * 64 + 32));

        ts_avx2_chunk(lo, hi, bits, &kinds[k]);

        /* most chunks hold no backslash: nothing to classify there */
        look[k] = bits[1] == 0
                  ? 0
                  : ts_avx2_mask(ts_avx2_look(lo, p + k * 64),
                                 ts_avx2_look(hi, p + k * 64 + 32));

        /* nor a byte over 0x7f: its UTF-8 is checked after the loop */
        todo |= (uint64_t) !_mm256_testz_si256(_mm256_or_si256(lo, hi),
                                               _mm256_set1_epi8((char) 0x80))
                << k;
    }

    *utf8 = todo ? ts_avx2_utf8_chunks(p, n, prev, todo) : 0;
}


ts_kernel_t
ts_strmap_kernel(ts_strmap_kernel_t k)
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


ts_kernel_t
ts_strmap_kernel(ts_strmap_kernel_t k)
{
    ts_kernel_t  kn;

    (void) k;
    kn.masks = ts_masks_bytes;
    kn.look = NULL;

    return kn;
}

#endif
