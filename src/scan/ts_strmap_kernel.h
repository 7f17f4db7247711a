/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The kernels of the string map (ts_strmap.c): the SIMD code, chosen
 * once per map, that makes the masks of a batch of 64-byte chunks (the
 * quotes, the backslashes, what else a string's bytes may be) and, with
 * AVX2, looks whether a chunk needs them all and checks its UTF-8.
 */

#ifndef TS_STRMAP_KERNEL_H
#define TS_STRMAP_KERNEL_H

#include "scan/ts_strmap.h"


/* what a chunk's bytes may be, besides quotes and backslashes */
typedef struct {
    uint64_t  ctl;          /* control bytes, which strings may not hold */
    uint64_t  escape;       /* what may follow a backslash: "/bfnrt */
    uint64_t  u;            /* 'u', which four hex digits must follow */
    uint64_t  high;         /* bytes over 0x7f: UTF-8 is checked there */
} ts_kinds_t;


/*
 * Makes the masks of n 64-byte chunks: bits[2k] the quotes of chunk k,
 * bits[2k + 1] its backslashes, kinds[k] the rest.
 */
typedef void (*ts_masks_pt)(const unsigned char *p, size_t n,
    uint64_t *bits, ts_kinds_t *kinds);


/*
 * The look kernel makes, of the kinds, only the control bytes and the
 * bytes over 0x7f, and a mask of the backslashes followed by anything
 * but "/bfnrt or a backslash.  A chunk where no such byte is escaped and
 * no control byte lies holds nothing strings may not hold: compact JSON
 * is checked by these two masks, and a chunk with a \u or a bad escape
 * gets all kinds.  It checks UTF-8 too, after the 32 bytes at prev
 * (NULL: the text's start): bit k of *utf8 marks chunk k as one where
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


ts_kernel_t ts_strmap_kernel(ts_strmap_kernel_t k);

#endif /* TS_STRMAP_KERNEL_H */
