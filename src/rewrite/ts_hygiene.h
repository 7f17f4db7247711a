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
#include "rewrite/ts_request.h"


/*
 * Records the edits that remove defer_loading, caller, hosted search
 * tools, deferred tools history never found (h), and hosted search
 * blocks, and turn every tool_reference into a text block naming the
 * tool, but those to the tools the gateway's search sends deferred
 * (rq->referenced).
 */
int ts_hygiene_strip(ts_request_t *rq, const ts_history_t *h);

/*
 * For a request that keeps tool search: references the upstream cannot
 * expand become text (stale) or leave hosted results, and with
 * turn_boundary the messages around expanded references are repaired.
 */
int ts_hygiene_repair(ts_request_t *rq, int turn_boundary);

/*
 * 1 when the request as it came carries a field of the tool-search beta;
 * tool_reference blocks count only with refs set
 */
int ts_hygiene_has_artifacts(const ts_request_t *rq, int refs);

#endif /* TS_HYGIENE_H */
