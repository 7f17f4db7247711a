/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * What a location's rules alone say of the tools of a tools array: which
 * are deferrable, under which MCP shape, whether the array already runs
 * its own tool search.  A function of the array's bytes and of the
 * policy's lists and search tool, nothing else: kept with the array in
 * a worker's memory (ts_recall_keep), it is made once per array and
 * policy, and a request whose array is recalled takes it instead of
 * asking the rules again for every tool.  What the conversation, the
 * model, the betas or the client's mode add is decided per request.
 */

#ifndef TS_FACTS_H
#define TS_FACTS_H

#include "messages/ts_names.h"
#include "messages/ts_recall.h"
#include "rewrite/ts_policy.h"


/* per tool: deferrable by the rules alone */
#define TS_FACT_DEFERRABLE  1

/*
 * per tool: the chain may defer it at all (ts_defer.c): its name can be
 * read, no always-load pattern matches it, it is not a server tool
 */
#define TS_FACT_ELIGIBLE    2

/* the policy's lists the facts depend on: always-load, defer, search */
#define TS_FACT_LISTS       3


typedef struct {
    ts_recall_memo_t        memo;       /* first: kept with the array */

    /*
     * What of the policy the facts depend on: the lists by address and
     * serial (a list freed with its configuration and another made at
     * its address are told apart), the search tool by its name.
     */
    const ts_match_list_t  *lists[TS_FACT_LISTS];
    unsigned long           serials[TS_FACT_LISTS];
    int                     own_search; /* the search tool's name counts */
    int                     client;     /* the client's profile */
    char                   *search_tool;

    unsigned char          *flags;      /* per tool: TS_FACT_* */
    int                     managed;    /* a tool runs or is searched by
                                           the client's own search */
    int                     rule;       /* ts_shape_t the names fit */
    size_t                  deferrable; /* tools deferrable */
    size_t                  chars;      /* their size */
    ts_names_t              names;      /* their names, sealed */
} ts_facts_t;


/* the hosted search tools' names, in the order of ts_hosted_t */
extern const char *const  ts_hosted_tool_names[];

/*
 * The facts of ix's tools under p for the client's profile: those kept
 * with ix's array when they were made under the same lists, search tool
 * and profile, else made now, and
 * kept when the memory can hold them.  *made is what the caller frees
 * (ts_facts_free), NULL when the memory keeps them.  NULL without
 * memory.  Kept facts are valid until the memory's next use.
 */
const ts_facts_t *ts_facts_get(const ts_index_t *ix, const ts_policy_t *p,
    int client, ts_facts_t **made);

void ts_facts_free(ts_facts_t *f);

#endif /* TS_FACTS_H */
