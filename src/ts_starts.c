/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include "ts_starts.h"

#if (defined __GNUC__ && defined __x86_64__)
#include <immintrin.h>
#define TS_HAVE_AVX2  1
#endif


/* a letter's small form; digits and most punctuation have 0x20 already */
static unsigned char
ts_fold(char c)
{
    return (unsigned char) (c | 0x20);
}


static void
ts_nibbles_add(uint8_t *lo, uint8_t *hi, unsigned char c, uint8_t bit)
{
    lo[c & 15] |= bit;
    hi[c >> 4] |= bit;
}


void
ts_pairs_add(ts_pairs_t *t, const char *w, size_t len, unsigned g)
{
    uint8_t   bit;
    unsigned  k;

    bit = (uint8_t) (1u << (g & 7));
    ts_nibbles_add(t->lo0, t->hi0, ts_fold(w[0]), bit);

    if (len >= 2) {
        ts_nibbles_add(t->lo1, t->hi1, ts_fold(w[1]), bit);
        return;
    }

    /* any second byte */
    for (k = 0; k < 16; k++) {
        t->lo1[k] |= bit;
        t->hi1[k] |= bit;
    }
}


#ifdef TS_HAVE_AVX2

/* the group bits of the 32 bytes at p, looked up in a pair of tables */
__attribute__((target("avx2")))
static __m256i
ts_lookup256(const char *p, __m256i lo, __m256i hi)
{
    __m256i  x, nib;

    nib = _mm256_set1_epi8(0x0f);
    x = _mm256_or_si256(_mm256_loadu_si256((const __m256i *) (const void *) p),
                        _mm256_set1_epi8(0x20));

    return _mm256_and_si256(
               _mm256_shuffle_epi8(lo, _mm256_and_si256(x, nib)),
               _mm256_shuffle_epi8(hi, _mm256_and_si256(
                                           _mm256_srli_epi16(x, 4), nib)));
}


__attribute__((target("avx2")))
static __m256i
ts_table256(const uint8_t *table)
{
    return _mm256_broadcastsi128_si256(
               _mm_loadu_si128((const __m128i *) (const void *) table));
}


__attribute__((target("avx2")))
static void
ts_pairs_avx2(const char *p, size_t n, const ts_pairs_t *t, uint64_t *bits)
{
    __m256i  lo0, hi0, lo1, hi1, m;
    size_t   k;
    int      i;

    lo0 = ts_table256(t->lo0);
    hi0 = ts_table256(t->hi0);
    lo1 = ts_table256(t->lo1);
    hi1 = ts_table256(t->hi1);

    for (k = 0; k < n; k++, p += TS_CHUNK) {
        for (i = 0, bits[k] = 0; i < TS_CHUNK; i += 32) {
            m = _mm256_and_si256(ts_lookup256(p + i, lo0, hi0),
                                 ts_lookup256(p + i + 1, lo1, hi1));
            bits[k] |= (uint64_t) (uint32_t) ~_mm256_movemask_epi8(
                           _mm256_cmpeq_epi8(m, _mm256_setzero_si256())) << i;
        }
    }
}

#endif


ts_pairs_pt
ts_pairs_kernel(void)
{
#ifdef TS_HAVE_AVX2
    if (__builtin_cpu_supports("avx2")) {
        return ts_pairs_avx2;
    }
#endif

    return NULL;
}
