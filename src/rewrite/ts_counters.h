/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The counters of one request, in one table: the engine fills them from
 * a processed request, the gateway loop from its calls, the glue from
 * the body it read, each by name (from below says where); the glue
 * expands the same table into the $toolsearch_* variables, the status
 * zone's metrics and the info log line, and scripts/counters-doc.py into
 * the lists of docs/directives.md.  Rows of the table:
 *
 * X(name, var, metric, when, log, from, help)
 *
 *   name    the counter, TS_COUNTER_<name>
 *   var     VAR: the variable $toolsearch_<name>; NOVAR: none
 *   metric  the status zone's name: the JSON key, and the Prometheus
 *           metric toolsearch_<metric>_total; "" for none
 *   when    what the zone adds: ANALYSED, each decided request's value;
 *           DEFERRED, only when the tools were deferred; LOOP, once the
 *           gateway loop has ended; NONE, nothing
 *   log     the key of the info log line; "" for none
 *   from    who fills it: ENGINE, ts_counters_from_request(); LOOP,
 *           ts_loop_counters(); GLUE, the glue's files
 *   help    what it counts, as the metric's HELP text says it
 *
 * The order is the metrics' order, and the log line's.
 */

#ifndef TS_COUNTERS_H
#define TS_COUNTERS_H

#include <stddef.h>

#include "rewrite/ts_request.h"


#define TS_COUNTERS(X)                                                        \
    X(bytes_in, VAR, "", NONE, "in", GLUE,                                    \
      "Body size as received from the client, in bytes.")                     \
    X(bytes_out, VAR, "", NONE, "out", GLUE,                                  \
      "Body size as sent to the upstream, in bytes.")                         \
    X(tools_total, VAR, "tools_seen", ANALYSED, "tools", ENGINE,              \
      "Tool definitions in the requests the module analysed.")                \
    X(tools_recalled, VAR, "tools_recalled", ANALYSED, "", ENGINE,            \
      "Of those, tools a worker recalled from the last tools array it read.") \
    X(messages_recalled, VAR, "messages_recalled", ANALYSED, "", ENGINE,      \
      "Messages a worker recalled from the last conversation it served.")     \
    X(tools_deferred, VAR, "tools_deferred", DEFERRED, "deferred", ENGINE,    \
      "Tool definitions deferred (deferred_hosted, deferred_gateway).")       \
    X(defer_chars, VAR, "tool_bytes_removed", DEFERRED, "chars", ENGINE,      \
      "Bytes of deferred tool definitions kept out of the model's context.")  \
    X(threshold_chars, VAR, "", NONE, "", ENGINE,                             \
      "The auto threshold the deferrable tools' size was compared with.")     \
    X(hosted_searches, NOVAR, "hosted_searches", ANALYSED, "hosted_searches", \
      ENGINE,                                                                 \
      "Hosted tool searches the upstream ran, seen in the last turn.")        \
    X(searches, VAR, "gateway_searches", LOOP, "", LOOP,                      \
      "Tool searches the gateway executed itself.")                           \
    X(search_misses, NOVAR, "search_misses", LOOP, "", LOOP,                  \
      "Gateway-executed searches that found no tool.")                        \
    X(loop_iterations, NOVAR, "loop_iterations", LOOP, "", LOOP,              \
      "Upstream calls made by gateway-executed search loops.")                \
    X(pause_turns, NOVAR, "pause_turns", LOOP, "", LOOP,                      \
      "Responses that ended with stop_reason pause_turn.")                    \
    X(loaded, VAR, "", NONE, "", LOOP,                                        \
      "Tools the gateway's searches loaded for the first time.")              \
    X(refs_converted, VAR, "refs_converted", ANALYSED, "converted", ENGINE,   \
      "Tool references converted to text.")                                   \
    X(refs_stale, VAR, "refs_stale", ANALYSED, "stale", ENGINE,               \
      "Tool references to tools the upstream could not expand.")              \
    X(siblings_moved, VAR, "siblings_moved", ANALYSED, "moved", ENGINE,       \
      "Text blocks moved away from a tool reference.")                        \
    X(boundaries_added, VAR, "boundaries_added", ANALYSED, "boundaries",      \
      ENGINE,                                                                 \
      "Turn boundaries (Tool loaded.) appended.")                             \
    X(searches_restored, VAR, "searches_restored", ANALYSED, "restored",      \
      ENGINE,                                                                 \
      "Hosted searches restored before the calls of the tools they found.")   \
    X(discovered, VAR, "", NONE, "discovered", ENGINE,                        \
      "Tools of the request the conversation loaded on demand.")              \
    X(internal_errors, NOVAR, "internal_errors", ANALYSED, "", GLUE,          \
      "Errors inside the module; requests were forwarded as they came.")      \



/*
 * Estimated tokens of a counter's bytes (ts_policy_tokens(), 2.5 a token):
 * X(name, counter, help), the variable $toolsearch_<name> (the request's
 * value when its counter is added) and the metric <name> (the tokens of
 * the counter's metric).
 */
#define TS_COUNTERS_TOKENS(X)                                              \
    X(tokens_saved, defer_chars,                                           \
      "Estimated tokens saved: tool_bytes_removed / 2.5.")


typedef enum {
#define TS_COUNTER_ENUM(name, var, metric, when, log, from, help)          \
    TS_COUNTER_##name,
    TS_COUNTERS(TS_COUNTER_ENUM)
#undef TS_COUNTER_ENUM
    TS_COUNTER_N
} ts_counter_t;


/* sets the counters the engine fills (ENGINE) of a processed request */
void ts_counters_from_request(size_t *count, const ts_request_t *rq);

/* hosted searches the previous response ran: those of the last turn */
size_t ts_counters_hosted_searches(const ts_request_t *rq);

#endif /* TS_COUNTERS_H */
