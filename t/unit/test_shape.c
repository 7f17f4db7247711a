/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * MCP tools told by the shapes of their names: each client's naming, the
 * request's rule, the compound rule's weight floor, and requests whose
 * every tool is an MCP tool.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tst.h"
#include "tpol.h"
#include "rewrite/ts_shape.h"


#define SHAPE(s)  ts_shape_of(s, strlen(s))

/* a tool whose description makes it weigh about 1 KB */
#define HEAVY(n)  "{'name':'" n "','description':'" KB "'," \
                  "'input_schema':{'type':'object'}}"
#define KB64      "0123456789abcdef0123456789abcdef" \
                  "0123456789abcdef0123456789abcdef"
#define KB        KB64 KB64 KB64 KB64 KB64 KB64 KB64 KB64 \
                  KB64 KB64 KB64 KB64 KB64 KB64 KB64 KB64


static void
test_shape_names(void)
{
    /* Claude Code, qwen-code, the Claude Agent SDK */
    CHECK(SHAPE("mcp__memory__create_entities") == TS_SHAPE_MCP);
    /* cline */
    CHECK(SHAPE("memory__create_entities") == TS_SHAPE_SERVER);
    CHECK(SHAPE("sequential-thinking__sequentialthinking")
          == TS_SHAPE_SERVER);
    /* opencode, kilo, Mastra; bare MCP names */
    CHECK(SHAPE("memory_create_entities") == TS_SHAPE_COMPOUND);
    CHECK(SHAPE("create_entities") == TS_SHAPE_COMPOUND);
    CHECK(SHAPE("get-tiny-image") == TS_SHAPE_COMPOUND);
    /* core tools, and what cannot be told from them */
    CHECK(SHAPE("Bash") == TS_SHAPE_NONE);
    CHECK(SHAPE("todowrite") == TS_SHAPE_NONE);
    CHECK(SHAPE("sequentialthinking") == TS_SHAPE_NONE);
    /* separators at an end join no words */
    CHECK(SHAPE("_x") == TS_SHAPE_NONE);
    CHECK(SHAPE("x_") == TS_SHAPE_NONE);
    CHECK(SHAPE("__x") == TS_SHAPE_COMPOUND);
    CHECK(SHAPE("mcp__") == TS_SHAPE_COMPOUND);
    CHECK(SHAPE("x__") == TS_SHAPE_COMPOUND);

    CHECK(strcmp(ts_shape_name(TS_SHAPE_SERVER), "server_prefix") == 0);
    CHECK(strcmp(ts_shape_name(TS_SHAPE_N), "none") == 0);
}


/* every tool an MCP tool: all deferred, the search tool the loaded one */
static void
test_shape_all_mcp_deferred(void)
{
    tpol_t  t;
    trun_t  r;

    tpol_init(&t);

    CHECK(trun(&r, &t, HEAD HI ",'tools':[" TOOL("mcp__a__b") ","
               TOOL("mcp__a__c") "]}") == TS_DECISION_DEFERRED_HOSTED);
    CHECK(deferred(&r, "mcp__a__b"));
    CHECK(deferred(&r, "mcp__a__c"));
    CHECK(tool_named(&r, "tool_search_tool_bm25") != NULL);
    CHECK(!deferred(&r, "tool_search_tool_bm25"));
    CHECK(r.rq.defer_rule == TS_SHAPE_MCP);
    trun_free(&r);

    /* the gateway's own search tool on a compatible upstream */
    t.in.upstream = TS_UPSTREAM_COMPATIBLE;
    CHECK(trun(&r, &t, HEAD HI ",'tools':[" TOOL("mcp__a__b") "]}")
          == TS_DECISION_DEFERRED_GATEWAY);
    CHECK(r.rq.tools_deferred == 1);
    trun_free(&r);

    tpol_free(&t);
}


/* cline: its own snake_case tools stay, server__tool names are deferred */
static void
test_shape_server_prefix(void)
{
    tpol_t  t;
    trun_t  r;

    tpol_init(&t);

    CHECK(trun(&r, &t, HEAD HI ",'tools':[" HEAVY("execute_command") ","
               HEAVY("read_file") "," TOOL("memory__create_entities") ","
               TOOL("github__create_issue") "]}")
          == TS_DECISION_DEFERRED_HOSTED);
    CHECK(r.rq.defer_rule == TS_SHAPE_SERVER);
    CHECK(!deferred(&r, "execute_command"));
    CHECK(!deferred(&r, "read_file"));
    CHECK(deferred(&r, "memory__create_entities"));
    CHECK(deferred(&r, "github__create_issue"));
    trun_free(&r);

    /* mcp__ and server__ names together: the strongest names the rule */
    CHECK(trun(&r, &t, HEAD HI ",'tools':[" TOOL("Read") ","
               TOOL("mcp__a__b") "," TOOL("x__y") "]}")
          == TS_DECISION_DEFERRED_HOSTED);
    CHECK(r.rq.defer_rule == TS_SHAPE_MCP);
    CHECK(r.rq.tools_deferred == 2);
    trun_free(&r);

    tpol_free(&t);
}


/* opencode: one-word core tools stay, server_tool names are deferred */
static void
test_shape_compound(void)
{
    tpol_t  t;
    trun_t  r;
    char    body[60000];
    int     i, n;

    tpol_init(&t);

    n = snprintf(body, sizeof(body), HEAD HI ",'tools':[" TOOL("bash") ","
                 TOOL("todowrite") "," TOOL("read"));
    for (i = 0; i < TS_SHAPE_COMPOUND_MIN_TOOLS; i++) {
        n += snprintf(body + n, sizeof(body) - n,
                      ",{'name':'memory_tool_%d','description':'" KB "',"
                      "'input_schema':{'type':'object'}}", i);
    }
    snprintf(body + n, sizeof(body) - n, "]}");

    CHECK(trun(&r, &t, body) == TS_DECISION_DEFERRED_HOSTED);
    CHECK(r.rq.defer_rule == TS_SHAPE_COMPOUND);
    CHECK(!deferred(&r, "bash"));
    CHECK(!deferred(&r, "todowrite"));
    CHECK(deferred(&r, "memory_tool_0"));
    CHECK(r.rq.tools_deferred == TS_SHAPE_COMPOUND_MIN_TOOLS);
    trun_free(&r);

    /* always_load takes a tool out of the rule and of its count */
    tpol_add(&t.l.always_load, "memory_tool_9");
    CHECK(trun(&r, &t, body) == TS_DECISION_NOTHING_TO_DEFER);
    CHECK(r.rq.defer_rule == TS_SHAPE_NONE);
    CHECK(!ts_request_changed(&r.rq));
    trun_free(&r);

    tpol_free(&t);
}


/* a small application's few tools are not worth a search */
static void
test_shape_compound_floor(void)
{
    tpol_t  t;
    trun_t  r;

    tpol_init(&t);

    /* qwen-code's memory agent: four heavy snake_case tools of its own */
    CHECK(trun(&r, &t, HEAD HI ",'tools':[" HEAVY("read_file") ","
               HEAVY("grep_search") "," HEAVY("run_shell_command") ","
               HEAVY("write_file") "," HEAVY("glob") "," HEAVY("edit") "]}")
          == TS_DECISION_NOTHING_TO_DEFER);
    trun_free(&r);

    CHECK(trun(&r, &t, HEAD HI ",'tools':[" TOOL("get_weather") ","
               TOOL("get_time") "]}") == TS_DECISION_NOTHING_TO_DEFER);
    CHECK(r.rq.defer_rule == TS_SHAPE_NONE);
    CHECK(!ts_request_changed(&r.rq));
    trun_free(&r);

    /* toolsearch_defer_tools still defers what it lists */
    tpol_add(&t.l.defer_tools, "get_time");
    CHECK(trun(&r, &t, HEAD HI ",'tools':[" TOOL("get_weather") ","
               TOOL("get_time") "]}") == TS_DECISION_DEFERRED_HOSTED);
    CHECK(deferred(&r, "get_time"));
    CHECK(!deferred(&r, "get_weather"));
    trun_free(&r);

    tpol_free(&t);
}


/* qwen-code: the built-ins it defers itself go with its MCP tools */
static void
test_shape_builtins(void)
{
    tpol_t  t;
    trun_t  r;

    tpol_init(&t);

    CHECK(trun(&r, &t, HEAD HI ",'tools':[" TOOL("agent") ","
               TOOL("cron_create") "," TOOL("monitor") ","
               TOOL("mcp__a__b") "]}") == TS_DECISION_DEFERRED_HOSTED);
    CHECK(!deferred(&r, "agent"));
    CHECK(deferred(&r, "cron_create"));
    CHECK(deferred(&r, "monitor"));
    CHECK(deferred(&r, "mcp__a__b"));
    trun_free(&r);

    /* without MCP tools, nothing says the client is one that defers */
    CHECK(trun(&r, &t, HEAD HI ",'tools':[" TOOL("agent") ","
               TOOL("monitor") "]}") == TS_DECISION_NOTHING_TO_DEFER);
    trun_free(&r);

    tpol_free(&t);
}


const tst_case_t  tst_shape_tests[] = {
    { "shape_builtins", test_shape_builtins },
    { "shape_names", test_shape_names },
    { "shape_all_mcp_deferred", test_shape_all_mcp_deferred },
    { "shape_server_prefix", test_shape_server_prefix },
    { "shape_compound", test_shape_compound },
    { "shape_compound_floor", test_shape_compound_floor },
    { NULL, NULL }
};
