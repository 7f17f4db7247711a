/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * anthropic-beta values: comma-separated lists, merged from every header
 * line, edited value by value.
 */

#ifndef TS_BETA_H
#define TS_BETA_H

#include <stddef.h>


#define TS_BETA_FIRST_PARTY  "advanced-tool-use-2025-11-20"
#define TS_BETA_THIRD_PARTY  "tool-search-tool-2025-10-19"


/* 1 when the list holds the value (surrounding blanks ignored) */
int ts_beta_has(const char *list, size_t len, const char *value);

/* 1 when the list holds a value starting with prefix */
int ts_beta_has_prefix(const char *list, size_t len, const char *prefix);

/*
 * The list without the values in drop[] (NULL-terminated), each value
 * once, and with add appended when absent (add may be NULL); values are
 * trimmed and comma-joined.  Returns a malloc'd string, or NULL without
 * memory.
 */
char *ts_beta_edit(const char *list, size_t len, const char *const *drop,
    const char *add);

#endif /* TS_BETA_H */
