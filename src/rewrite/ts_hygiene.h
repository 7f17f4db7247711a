/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Conversation hygiene (docs/spec/hygiene.md): a request that may not
 * carry tool-search artifacts loses them, with every reference turned
 * into text the model can read.
 */

#ifndef TS_HYGIENE_H
#define TS_HYGIENE_H

#include "messages/ts_history.h"
#include "rewrite/ts_edit.h"


/* what hygiene did, the request's counters of the same names */
typedef struct {
    size_t  refs_converted; /* references turned into text */
    size_t  refs_stale;     /* references to tools not loadable */
    size_t  refs_kept;      /* references the upstream expands */
    size_t  siblings_moved;
    size_t  boundaries_added;
} ts_hygiene_counts_t;


/* what hygiene reads (the request's index and decisions) and writes */
typedef struct {
    const ts_index_t     *ix;
    ts_edits_t           *edits;
    const unsigned char  *defer;        /* per tool: deferred in the
                                           output, or NULL */
    const ts_names_t     *referenced;   /* tools the gateway's search
                                           sends deferred */
    ts_hygiene_counts_t  *counts;
} ts_hygiene_t;


/*
 * Records the edits that remove defer_loading, caller, hosted search
 * tools, deferred tools history never found (h), and hosted search
 * blocks, and turn every tool_reference into a text block naming the
 * tool, but those to the tools the gateway's search sends deferred
 * (hy->referenced).
 */
int ts_hygiene_strip(const ts_hygiene_t *hy, const ts_history_t *h);

/*
 * For a request that keeps tool search: references the upstream cannot
 * expand become text (stale) or leave hosted results, and with
 * turn_boundary the messages around expanded references are repaired.
 */
int ts_hygiene_repair(const ts_hygiene_t *hy, int turn_boundary);

/*
 * 1 when the request as it came carries a field of the tool-search beta;
 * tool_reference blocks count only with refs set
 */
int ts_hygiene_has_artifacts(const ts_index_t *ix, int refs);

#endif /* TS_HYGIENE_H */
