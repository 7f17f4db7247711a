/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Words for tool search: light stemming, stop words and a small
 * thesaurus of the verbs and nouns models use when they describe a task
 * (boundary matching, without regular expressions since query text is
 * untrusted, is with the string helpers in scan/ts_str.h).
 */

#ifndef TS_LEXICON_H
#define TS_LEXICON_H

#include <stddef.h>

#include "scan/ts_str.h"


int ts_stopword(const char *w, size_t len);
/* a word around a request rather than of it ("kindly", "provide") */
int ts_request_word(const char *w, size_t len);

/* the length of w's stem: w without a plural or verb suffix */
size_t ts_stem(const char *w, size_t len);

typedef struct {
    const char  *p;
    size_t       len;
} ts_word_t;


/*
 * the words the thesaurus relates to w (compared by stem), w excluded;
 * returns how many were written to out
 */
size_t ts_synonyms(const char *w, size_t len, ts_word_t *out, size_t max);

#endif /* TS_LEXICON_H */
