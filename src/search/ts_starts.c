/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include "search/ts_starts.h"

#if (defined __GNUC__ && defined __x86_64__)
#include <immintrin.h>
#define TS_HAVE_AVX2  1
#endif


/*
 * A byte's bit in a pair of nibble tables; a small letter's capital
 * shares its low nibble, and gets the bit in its high nibble too
 */
static void
ts_nibbles_add(uint8_t *lo, uint8_t *hi, unsigned char c, uint8_t bit)
{
    lo[c & 15] |= bit;
    hi[c >> 4] |= bit;

    if (c >= 'a' && c <= 'z') {
        hi[(c - 'a' + 'A') >> 4] |= bit;
    }
}


/* the byte at place i of a word; past its end, any byte */
static void
ts_nibbles_at(uint8_t *lo, uint8_t *hi, const char *w, size_t len, size_t i,
    uint8_t bit)
{
    unsigned  k;

    if (i < len) {
        ts_nibbles_add(lo, hi, (unsigned char) w[i], bit);
        return;
    }

    for (k = 0; k < 16; k++) {
        lo[k] |= bit;
        hi[k] |= bit;
    }
}


void
ts_prints_add(ts_prints_t *t, const char *w, size_t len, unsigned g)
{
    uint8_t  bit;
    size_t   i;

    bit = (uint8_t) (1u << (g & 7));

    for (i = 0; i < TS_PRINT; i++) {
        ts_nibbles_at(t->lo[i], t->hi[i], w, len, i, bit);
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
    x = _mm256_loadu_si256((const __m256i *) (const void *) p);

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
ts_prints_avx2(const char *p, size_t n, const ts_prints_t *t, uint64_t *bits)
{
    __m256i  lo[TS_PRINT], hi[TS_PRINT], m;
    size_t   k, j;
    int      i;

    for (j = 0; j < TS_PRINT; j++) {
        lo[j] = ts_table256(t->lo[j]);
        hi[j] = ts_table256(t->hi[j]);
    }

    for (k = 0; k < n; k++, p += TS_CHUNK) {
        for (i = 0, bits[k] = 0; i < TS_CHUNK; i += 32) {
            m = ts_lookup256(p + i, lo[0], hi[0]);

            for (j = 1; j < TS_PRINT; j++) {
                m = _mm256_and_si256(m, ts_lookup256(p + i + j, lo[j],
                                                     hi[j]));
            }

            bits[k] |= (uint64_t) (uint32_t) ~_mm256_movemask_epi8(
                           _mm256_cmpeq_epi8(m, _mm256_setzero_si256())) << i;
        }
    }
}

#endif


ts_prints_pt
ts_prints_kernel(void)
{
#ifdef TS_HAVE_AVX2
    if (__builtin_cpu_supports("avx2")) {
        return ts_prints_avx2;
    }
#endif

    return NULL;
}
