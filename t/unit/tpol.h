/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Policy test helpers: a policy from ts_policy_init(), and one
 * request run through the engine with its output parsed by cJSON.
 */

#ifndef TPOL_H
#define TPOL_H

#include <cjson/cJSON.h>

#include "rewrite/ts_policy.h"
#include "rewrite/ts_request.h"


typedef struct {
    ts_policy_lists_t  l;
    ts_policy_t        p;
    ts_input_t         in;
} tpol_t;


typedef struct {
    ts_request_t     rq;
    ts_decision_t    d;
    char            *out;
    size_t           len;
    cJSON           *json;
    char            *body;
} trun_t;


void tpol_init(tpol_t *t);
void tpol_add(ts_match_list_t *l, const char *pattern);
void tpol_window(tpol_t *t, const char *re, unsigned long tokens);
void tpol_free(tpol_t *t);
/* a format's request side: ts_request_process, ts_chat_process */
typedef ts_decision_t (*tprocess_pt)(ts_request_t *rq, const ts_input_t *in,
    const char *body, size_t len);

ts_decision_t trun(trun_t *r, tpol_t *t, const char *body);
ts_decision_t trun_with(trun_t *r, tpol_t *t, const char *body,
    tprocess_pt process);
void trun_free(trun_t *r);
cJSON *tool_named(const trun_t *r, const char *name);
int deferred(const trun_t *r, const char *name);
int has_text(const char *hay, size_t len, const char *needle);

/*
 * Of a count array filled with 0xff bytes before one fill: the counters
 * set are those whose from in rewrite/ts_counters.h's table is from.
 */
int counters_filled(const size_t *count, const char *from);


#define TOOL(n)  "{'name':'" n "','description':'D " n "'," \
                 "'input_schema':{'type':'object'}}"
#define HEAD     "{'model':'claude-sonnet-4-5','max_tokens':9,"
#define HI       "'messages':[{'role':'user','content':'hi'}]"

#endif /* TPOL_H */
