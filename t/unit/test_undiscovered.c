/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * A client's own deferred tools on an upstream without tool search: those
 * history found become visible, those it never found are left out (Claude
 * Code's DeferredToolPlaceholder), while tool_choice may name one and
 * while one tool at least stays.
 */

#include <string.h>

#include "tst.h"
#include "tpol.h"


#define DEFERRED(n)  "{'name':'" n "','description':'D'," \
                     "'input_schema':{'type':'object'},'defer_loading':true}"

/* the client's search found mcp__a__b */
#define FOUND \
    "'messages':[{'role':'user','content':'hi'}," \
    "{'role':'assistant','content':[{'type':'tool_use','id':'t1'," \
    "'name':'ToolSearch','input':{'query':'a'}}]}," \
    "{'role':'user','content':[{'type':'tool_result','tool_use_id':'t1'," \
    "'content':[{'type':'tool_reference','tool_name':'mcp__a__b'}]}]}]"


static void
test_undiscovered_left_out(void)
{
    tpol_t  t;
    trun_t  r;

    tpol_init(&t);
    t.in.upstream = TS_UPSTREAM_COMPATIBLE;

    CHECK(trun(&r, &t, HEAD FOUND ",'tools':[" TOOL("Read") ","
               TOOL("ToolSearch") "," DEFERRED("mcp__a__b") ","
               DEFERRED("DeferredToolPlaceholder") "]}")
          == TS_DECISION_CLIENT_MANAGED);
    CHECK(tool_named(&r, "DeferredToolPlaceholder") == NULL);
    CHECK(tool_named(&r, "mcp__a__b") != NULL);
    CHECK(!deferred(&r, "mcp__a__b"));
    CHECK(tool_named(&r, "Read") != NULL);
    trun_free(&r);

    /* tool_choice may name it: every tool stays, made visible */
    CHECK(trun(&r, &t, HEAD FOUND ",'tool_choice':{'type':'any'},"
               "'tools':[" TOOL("ToolSearch") ","
               DEFERRED("DeferredToolPlaceholder") "]}")
          == TS_DECISION_CLIENT_MANAGED);
    CHECK(tool_named(&r, "DeferredToolPlaceholder") != NULL);
    CHECK(!deferred(&r, "DeferredToolPlaceholder"));
    trun_free(&r);

    /* nothing but undiscovered deferred tools: none is left out */
    CHECK(trun(&r, &t, HEAD HI ",'tools':[" DEFERRED("x") "]}")
          == TS_DECISION_CLIENT_MANAGED);
    CHECK(tool_named(&r, "x") != NULL);
    CHECK(!deferred(&r, "x"));
    trun_free(&r);

    /* Anthropic runs the search: the client's deferred tools stay so */
    t.in.upstream = TS_UPSTREAM_ANTHROPIC;
    CHECK(trun(&r, &t, HEAD FOUND ",'tools':[" TOOL("ToolSearch") ","
               DEFERRED("mcp__a__b") "," DEFERRED("DeferredToolPlaceholder")
               "]}") == TS_DECISION_CLIENT_MANAGED);
    CHECK(deferred(&r, "DeferredToolPlaceholder"));
    CHECK(deferred(&r, "mcp__a__b"));
    trun_free(&r);

    tpol_free(&t);
}


const tst_case_t  tst_undiscovered_tests[] = {
    { "undiscovered_left_out", test_undiscovered_left_out },
    { NULL, NULL }
};
