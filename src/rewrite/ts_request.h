/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * One request through the engine: index, decide, edit.
 */

#ifndef TS_REQUEST_H
#define TS_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "messages/ts_index.h"
#include "rewrite/ts_edit.h"
#include "rewrite/ts_hygiene.h"
#include "messages/ts_names.h"
#include "rewrite/ts_policy.h"


/* what happened to a request; ts_decision_name() gives the word */
typedef enum {
    TS_DECISION_NONE = 0,
    TS_DECISION_PASSTHROUGH,
    TS_DECISION_MALFORMED,
    TS_DECISION_TOO_DEEP,
    TS_DECISION_DUPLICATE_KEY,
    TS_DECISION_WRONG_TYPE,
    TS_DECISION_LIMIT,
    TS_DECISION_ERROR,
    TS_DECISION_TOO_LARGE,
    TS_DECISION_NOT_JSON,
    TS_DECISION_ENCODED,
    TS_DECISION_METHOD,
    TS_DECISION_STANDARD_MODE,
    TS_DECISION_KILL_SWITCH,
    TS_DECISION_MODEL_UNSUPPORTED,
    TS_DECISION_UPSTREAM_UNSUPPORTED,
    TS_DECISION_NOTHING_TO_DEFER,
    TS_DECISION_BELOW_THRESHOLD,
    TS_DECISION_CLIENT_MANAGED,
    TS_DECISION_SERVER_STATE,
    TS_DECISION_DEFERRED_HOSTED,
    TS_DECISION_DEFERRED_GATEWAY,
    TS_DECISION_THREAD_CREATE,
    TS_DECISION_THREAD_CONTINUE,
    TS_DECISION_N
} ts_decision_t;


/* a deferrable tool the first user message names (ts_history_named) */
#define TS_NAMED   2

/*
 * a deferrable tool history calls, on the gateway path, where it is
 * loaded among the tools its searches found (ts_gateway_tools), or with
 * the call wrapper stays deferred, its search restored
 */
#define TS_CALLED  4

/* what loaded a tool: a search of history, or of the loop's calls */
#define TS_LOADED_HISTORY  1
#define TS_LOADED_LOOP     2


typedef struct {
    ts_index_t      ix;
    ts_edits_t      edits;
    ts_decision_t   decision;

    int             client;         /* ts_client_t */
    int             mode;           /* effective ts_defer_mode_t */
    unsigned        percent;
    int             upstream;
    unsigned char  *defer;          /* per tool: deferred in the output */
    unsigned char  *deferrable;     /* per tool: by the rules alone,
                                       whatever history says; with
                                       TS_NAMED, also named by the first
                                       user message; with TS_CALLED,
                                       called by history */
    int             defer_rule;     /* ts_shape_t the names fit */
    size_t          tools_deferred;
    size_t          tools_deferrable;
    size_t          defer_chars;    /* size of the deferrable tools */
    size_t          threshold_chars;

    /* hygiene */
    int             stripped;       /* tool-search artifacts removed */
    ts_hygiene_counts_t  hygiene;
    size_t          discovered;     /* tools history found or called */
    size_t          searches_restored;  /* hosted searches put back before
                                           the calls of what they found */

    /* gateway-executed search */
    char           *own;            /* the body rq->ix indexes, if not
                                       the caller's */
    char           *qualified;      /* the caller's body copied, with the
                                       names of namespace members after
                                       its end, which rq->ix indexes
                                       (Responses); not a change */
    ts_val_t       *tool_elems;     /* with it, the tools array's
                                       elements (ts_rs_tools_t) */
    size_t          ntool_elems;
    unsigned char  *loaded;         /* per tool: a search loaded it:
                                       TS_LOADED_HISTORY, TS_LOADED_LOOP */
    uint32_t       *called;         /* per tool: the rank of its first
                                       call in history, from 1; 0 when
                                       history does not call it (gateway
                                       search in the OpenAI formats) */
    uint32_t        ncalled;        /* the tools history calls */
    size_t          history_searches;   /* gateway searches in history */
    int             load_refs;      /* found tools load as references */
    int             load_wrapper;   /* found tools stay deferred, called
                                       through the call wrapper */
    ts_names_t      referenced;     /* tools sent with defer_loading */

    /* the outgoing anthropic-beta header when betas_changed is set */
    char           *betas;
    int             betas_changed;
} ts_request_t;


/*
 * Indexes the body and, with a policy in the input (may be NULL: index
 * only), decides and records the edits.  The body must outlive rq.
 */
ts_decision_t ts_request_process(ts_request_t *rq, const ts_input_t *in,
    const char *body, size_t len);

/* 1 when the body must be replaced by the rendered output */
int ts_request_changed(const ts_request_t *rq);
size_t ts_request_size(const ts_request_t *rq);
int ts_request_render(ts_request_t *rq, char *out);

/* the output as pieces (ts_edits_pieces): kept ranges lie in the body */
int ts_request_pieces(ts_request_t *rq, ts_pieces_t *it);

void ts_request_free(ts_request_t *rq);

/*
 * Tool i is loaded because history calls it; with rq->called, its first
 * call's rank is kept, so that the found tools keep the order in which
 * the conversation found them (ts_gateway_openai_tools).
 */
void ts_request_called(ts_request_t *rq, size_t i);
/* tool i loaded, as a call of history's (ranked) when called is set */
void ts_request_load(ts_request_t *rq, size_t i, int called);

const char *ts_decision_name(ts_decision_t d);

#endif /* TS_REQUEST_H */
