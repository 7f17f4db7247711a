/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * JSON string values, read where the scanner found them: compared,
 * decoded, viewed in place.
 */

#ifndef TS_STR_H
#define TS_STR_H

#include "scan/ts_json.h"


/* compares a string value with escapes, decoded, with len bytes at s */
int ts_str_eq_escaped(const char *buf, const ts_val_t *v, const char *s,
    size_t len);

/*
 * Compares a JSON string value, escapes decoded, with a C string.  Inline:
 * callers pass literals, whose length and comparison the compiler folds.
 */
static inline int
ts_str_eq(const char *buf, const ts_val_t *v, const char *s)
{
    size_t  len;

    len = strlen(s);

    if (v->kind != TS_STRING) {
        return 0;
    }

    if (v->esc) {
        return ts_str_eq_escaped(buf, v, s, len);
    }

    return v->len - 2 == len && memcmp(buf + v->off + 1, s, len) == 0;
}

/* 1 when two string values of buf are spelled the same, byte for byte */
int ts_str_same_raw(const char *buf, const ts_val_t *a, const ts_val_t *b);

/*
 * decodes a JSON string value into out (at most cap bytes);
 * returns the decoded length, or (size_t) -1 if it does not fit
 */
size_t ts_str_decode(const char *buf, const ts_val_t *v, char *out,
    size_t cap);


/*
 * the bytes of a string value: in place without escapes, else decoded
 * into tmp; NULL for a non-string or when cap is too small
 */
const char *ts_str_view(const char *buf, const ts_val_t *v, char *tmp,
    size_t cap, size_t *len);


#endif /* TS_STR_H */
