/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Gateway-executed search, request side: what the upstream receives for
 * a deferred request, and how earlier searches in history are rebuilt.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tst.h"
#include "tpol.h"
#include "rewrite/ts_beta.h"
#include "rewrite/ts_gateway.h"
#include "rewrite/ts_wrapper.h"


#define GW_TOOLS                                                            \
    "'tools':[" TOOL("Read") ",{'name':'mcp__z__last','input_schema':{},"   \
    "'cache_control':{'type':'ephemeral'}}," TOOL("mcp__a__first") ","      \
    TOOL("Edit") "]"


/*
 * Vertex, toolsearch_found_tools tools: found tools load as ordinary
 * tools, results are text
 */
static void
tgw_init(tpol_t *t)
{
    tpol_init(t);
    t->p.search = TS_SEARCH_GATEWAY;
    t->p.found_tools = TS_FOUND_TOOLS;
    t->in.upstream = TS_UPSTREAM_VERTEX;
}


static const char *
system_text(const trun_t *r)
{
    cJSON  *sys, *last;

    sys = cJSON_GetObjectItem(r->json, "system");

    if (cJSON_IsString(sys)) {
        return sys->valuestring;
    }

    last = cJSON_GetArrayItem(sys, cJSON_GetArraySize(sys) - 1);

    return cJSON_GetStringValue(cJSON_GetObjectItem(last, "text"));
}


static void
test_gateway_request(void)
{
    tpol_t       t;
    trun_t       r;
    cJSON       *tools, *st;
    const char  *text;

    tgw_init(&t);

    CHECK(trun(&r, &t, HEAD HI "," GW_TOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);

    /* loaded tools byte for byte, deferred ones gone, search tool last */
    tools = cJSON_GetObjectItem(r.json, "tools");
    CHECK(cJSON_GetArraySize(tools) == 3);
    CHECK(tool_named(&r, "mcp__z__last") == NULL);
    CHECK(tool_named(&r, "mcp__a__first") == NULL);
    CHECK(has_text(r.out, r.len, "\"tools\":[{\"name\":\"Read\","
                   "\"description\":\"D Read\",\"input_schema\":"
                   "{\"type\":\"object\"}},{\"name\":\"Edit\""));

    st = cJSON_GetArrayItem(tools, 2);
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(st, "name")),
                 "tool_search") == 0);
    CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(
              cJSON_GetObjectItem(st, "input_schema"), "properties"),
              "max_results"), "maximum")->valueint
          == (int) t.p.max_results);

    /* the left-out tool's cache breakpoint moves to the search tool */
    CHECK(cJSON_GetObjectItem(st, "cache_control") != NULL);

    /* the deferred names, sorted, in a system prompt of its own */
    text = system_text(&r);
    CHECK(text != NULL && strstr(text, "Call tool_search (select:")
          && strstr(text, "conversation: mcp__a__first, mcp__z__last."));

    CHECK(r.rq.tools_deferred == 2 && !r.rq.betas_changed);
    trun_free(&r);

    /* a named search tool; the client's system string is extended */
    t.p.search_tool = "find_tools";
    CHECK(trun(&r, &t, HEAD "'system':'Be brief.'," HI "," GW_TOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    CHECK(tool_named(&r, "find_tools") != NULL);
    text = system_text(&r);
    CHECK(text && strncmp(text, "Be brief.\n\nCall find_tools (select:",
                          33) == 0);
    trun_free(&r);

    /* system blocks get one more text block, the others stay */
    CHECK(trun(&r, &t, HEAD "'system':[{'type':'text','text':'S',"
               "'cache_control':{'type':'ephemeral'}}]," HI "," GW_TOOLS
               "}") == TS_DECISION_DEFERRED_GATEWAY);
    CHECK(has_text(r.out, r.len, "\"system\":[{\"type\":\"text\",\"text\":"
                   "\"S\",\"cache_control\":{\"type\":\"ephemeral\"}},"
                   "{\"type\":\"text\",\"text\":\"Call find_tools"));
    trun_free(&r);

    tpol_free(&t);
}


/* an assistant turn of an earlier request, as the gateway answered it */
#define GW_HISTORY(result)                                                  \
    "'messages':[{'role':'user','content':'post it'},"                     \
    "{'role':'assistant','content':[{'type':'text','text':'Looking.'},"    \
    "{'type':'server_tool_use','id':'toolu_1','name':'tool_search',"       \
    "'input':{'query':'mcp__z','max_results':2}}," result                  \
    "{'type':'tool_use','id':'toolu_2','name':'mcp__z__last',"             \
    "'input':{'n':12345678901234567890}}]},"                               \
    "{'role':'user','content':[{'type':'tool_result',"                     \
    "'tool_use_id':'toolu_2','content':'ok'}]}]"

#define GW_RESULT                                                           \
    "{'type':'tool_search_tool_result','tool_use_id':'toolu_1','content':" \
    "{'type':'tool_search_tool_search_result','tool_references':"         \
    "[{'type':'tool_reference','tool_name':'mcp__z__last'}]}},"


static void
test_gateway_history(void)
{
    tpol_t  t;
    trun_t  r;
    cJSON  *msgs;

    tgw_init(&t);

    CHECK(trun(&r, &t, HEAD GW_HISTORY(GW_RESULT) "," GW_TOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);

    /* the search became a tool_use and a tool_result turn */
    msgs = cJSON_GetObjectItem(r.json, "messages");
    CHECK(cJSON_GetArraySize(msgs) == 5);
    CHECK(has_text(r.out, r.len, "{\"role\":\"assistant\",\"content\":["
                   "{\"type\":\"text\",\"text\":\"Looking.\"},"
                   "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":"
                   "\"tool_search\",\"input\":{\"query\":\"mcp__z\","
                   "\"max_results\":2}}]},{\"role\":\"user\",\"content\":["
                   "{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_1\","
                   "\"content\":\"Loaded: mcp__z__last. "));

    /* the rest of the turn follows, its numbers untouched */
    CHECK(has_text(r.out, r.len, "]},{\"role\":\"assistant\",\"content\":["
                   "{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":"
                   "\"mcp__z__last\",\"input\":{\"n\":12345678901234567890}}"
                   "]},{\"role\":\"user\""));
    CHECK(!has_text(r.out, r.len, "server_tool_use")
          && !has_text(r.out, r.len, "tool_search_tool_result"));

    /* the tool it found is loaded, the other stays deferred */
    CHECK(tool_named(&r, "mcp__z__last") != NULL);
    CHECK(tool_named(&r, "mcp__a__first") == NULL);
    CHECK(r.rq.history_searches == 1 && r.rq.discovered == 1);
    trun_free(&r);

    /* a call without its result is answered "did not run" */
    CHECK(trun(&r, &t, HEAD GW_HISTORY("") "," GW_TOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    CHECK(has_text(r.out, r.len, "\"tool_use_id\":\"toolu_1\",\"content\":"
                   "\"This search did not run. Search again.\"}"));
    trun_free(&r);

    /* any decision: the upstream never sees the gateway's blocks */
    t.p.defer_mode = TS_DEFER_OFF;
    CHECK(trun(&r, &t, HEAD GW_HISTORY(GW_RESULT) "," GW_TOOLS "}")
          == TS_DECISION_STANDARD_MODE);
    CHECK(ts_request_changed(&r.rq));
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "messages")) == 5);
    CHECK(!has_text(r.out, r.len, "server_tool_use"));
    trun_free(&r);

    tpol_free(&t);
}


/* where the upstream expands references, found tools load deferred */
static void
test_gateway_references(void)
{
    tpol_t       t;
    trun_t       r;
    cJSON       *z;
    const char  *stale;

    tgw_init(&t);
    t.in.upstream = TS_UPSTREAM_ANTHROPIC;

    CHECK(trun(&r, &t, HEAD GW_HISTORY(GW_RESULT) "," GW_TOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    CHECK(has_text(r.out, r.len, "{\"role\":\"user\",\"content\":["
                   "{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_1\","
                   "\"content\":[{\"type\":\"tool_reference\",\"tool_name\":"
                   "\"mcp__z__last\"}]},{\"type\":\"text\",\"text\":"
                   "\"Tool loaded.\"}]}"));

    /* the found tool travels deferred, its breakpoint on the search tool */
    CHECK(has_text(r.out, r.len, "{\"name\":\"mcp__z__last\","
                   "\"input_schema\":{},\"defer_loading\":true}"));
    CHECK(cJSON_GetObjectItem(tool_named(&r, "tool_search"),
                              "cache_control") != NULL);
    CHECK(tool_named(&r, "mcp__a__first") == NULL);

    /* with the beta, and it is not client-side search */
    CHECK(r.rq.betas_changed && strstr(r.rq.betas, TS_BETA_FIRST_PARTY));
    CHECK(r.rq.hygiene.refs_kept == 1 && r.rq.history_searches == 1);
    trun_free(&r);

    /* a reference to a tool no longer sent becomes text */
    stale = HEAD GW_HISTORY(
        "{'type':'tool_search_tool_result','tool_use_id':'toolu_1',"
        "'content':{'type':'tool_search_tool_search_result',"
        "'tool_references':[{'type':'tool_reference','tool_name':"
        "'mcp__z__last'},{'type':'tool_reference','tool_name':"
        "'mcp__gone__x'}]}},") "," GW_TOOLS "}";
    CHECK(trun(&r, &t, stale) == TS_DECISION_DEFERRED_GATEWAY);
    CHECK(!has_text(r.out, r.len, "\"tool_name\":\"mcp__gone__x\""));
    CHECK(has_text(r.out, r.len, "mcp__gone__x"));
    z = tool_named(&r, "mcp__z__last");
    CHECK(z != NULL && cJSON_IsTrue(cJSON_GetObjectItem(z, "defer_loading")));
    CHECK(r.rq.hygiene.refs_kept == 1);
    trun_free(&r);

    /* Bedrock is not known to expand them: ordinary tools, text */
    t.in.upstream = TS_UPSTREAM_BEDROCK;
    CHECK(trun(&r, &t, HEAD GW_HISTORY(GW_RESULT) "," GW_TOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    CHECK(!has_text(r.out, r.len, "tool_reference")
          && !has_text(r.out, r.len, "defer_loading"));
    trun_free(&r);

    tpol_free(&t);
}


/*
 * A found tool's call without its search (the client dropped the blocks):
 * with references, the search is restored before the message's first
 * call, and the tool stays deferred; without an id to derive the
 * search's from, the tool is loaded as before.
 */
#define GW_CALLED(id)                                                       \
    "'messages':[{'role':'user','content':'post it'},"                     \
    "{'role':'assistant','content':[{'type':'text','text':'Posting.'},"    \
    "{'type':'tool_use'," id "'name':'Read','input':{}},"                  \
    "{'type':'tool_use','id':'toolu_2','name':'mcp__z__last',"             \
    "'input':{}}]},{'role':'user','content':[{'type':'tool_result',"       \
    "'tool_use_id':'toolu_01-x','content':'r'},{'type':'tool_result',"     \
    "'tool_use_id':'toolu_2','content':'ok'}]}],"

static void
test_gateway_restored(void)
{
    tpol_t  t;
    trun_t  r;
    cJSON  *z;

    tgw_init(&t);
    t.in.upstream = TS_UPSTREAM_ANTHROPIC;

    CHECK(trun(&r, &t, HEAD GW_CALLED("'id':'toolu_01-x',") GW_TOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    CHECK(has_text(r.out, r.len, "{\"type\":\"text\",\"text\":\"Posting.\"},"
                   "{\"type\":\"tool_use\",\"id\":\"toolu_search_01_x\","
                   "\"name\":\"tool_search\",\"input\":{\"query\":"
                   "\"select:mcp__z__last\"}}]},{\"role\":\"user\","
                   "\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":"
                   "\"toolu_search_01_x\",\"content\":[{\"type\":"
                   "\"tool_reference\",\"tool_name\":\"mcp__z__last\"}]},"
                   "{\"type\":\"text\",\"text\":\"Tool loaded.\"}]},"
                   "{\"role\":\"assistant\",\"content\":[{\"type\":"
                   "\"tool_use\",\"id\":\"toolu_01-x\""));
    z = tool_named(&r, "mcp__z__last");
    CHECK(z != NULL && cJSON_IsTrue(cJSON_GetObjectItem(z, "defer_loading")));
    CHECK(r.rq.searches_restored == 1);
    CHECK(r.rq.betas_changed && strstr(r.rq.betas, TS_BETA_FIRST_PARTY));
    trun_free(&r);

    CHECK(trun(&r, &t, HEAD GW_CALLED("'id':7,") GW_TOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    CHECK(!has_text(r.out, r.len, "toolu_search_"));
    z = tool_named(&r, "mcp__z__last");
    CHECK(z != NULL && cJSON_GetObjectItem(z, "defer_loading") == NULL);
    CHECK(r.rq.searches_restored == 0);
    trun_free(&r);

    /* found tools that load as plain tools: nothing to restore */
    t.in.upstream = TS_UPSTREAM_VERTEX;
    CHECK(trun(&r, &t, HEAD GW_CALLED("'id':'toolu_01-x',") GW_TOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    CHECK(!has_text(r.out, r.len, "toolu_search_")
          && r.rq.searches_restored == 0);
    trun_free(&r);

    tpol_free(&t);
}


/*
 * A search call without an id is not one the gateway wrote: it stays as
 * it is, in any profile (found by fuzzing: it crashed the engine).
 */
static void
test_gateway_call_without_id(void)
{
    static const int  upstreams[] = { TS_UPSTREAM_ANTHROPIC,
                                      TS_UPSTREAM_VERTEX,
                                      TS_UPSTREAM_COMPATIBLE };
    tpol_t  t;
    trun_t  r;
    size_t  i;

    tgw_init(&t);
    t.p.search = TS_SEARCH_AUTO;

    for (i = 0; i < sizeof(upstreams) / sizeof(upstreams[0]); i++) {
        t.in.upstream = upstreams[i];
        tst_note("upstream %d", upstreams[i]);

        CHECK(trun(&r, &t, HEAD "'messages':[{'role':'user','content':'x'},"
                   "{'role':'assistant','content':[{'type':'server_tool_use',"
                   "'i':'toolu_1','name':'tool_search','input':{}}]},"
                   "{'role':'user','content':'go'}]," GW_TOOLS "}")
              != TS_DECISION_ERROR);
        CHECK(r.rq.history_searches == 0);
        CHECK(has_text(r.out, r.len, "{\"type\":\"server_tool_use\","
                       "\"i\":\"toolu_1\""));
        trun_free(&r);
    }

    tpol_free(&t);
}


/*
 * The gateway's output through a second gateway, or a client with a tool
 * of the search tool's name: no second search tool (found by fuzzing).
 */
static void
test_gateway_twice(void)
{
    tpol_t  t;
    trun_t  r;
    char   *again;
    size_t  len;

    tgw_init(&t);

    CHECK(trun(&r, &t, HEAD HI "," GW_TOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    len = r.len;
    again = malloc(len);
    CHECK(again != NULL);
    memcpy(again, r.out, len);
    trun_free(&r);

    CHECK(ts_request_process(&r.rq, &t.in, again, len)
          == TS_DECISION_CLIENT_MANAGED);
    CHECK(!ts_request_changed(&r.rq) && !r.rq.betas_changed);
    ts_request_free(&r.rq);
    free(again);

    /* a name of the operator's: the same, but not for hosted search */
    t.p.search_tool = "find_tools";
    CHECK(trun(&r, &t, HEAD HI ",'tools':[" TOOL("find_tools") ","
               TOOL("mcp__a__first") "," TOOL("Read") "]}")
          == TS_DECISION_CLIENT_MANAGED);
    trun_free(&r);

    t.p.search = TS_SEARCH_HOSTED;
    CHECK(trun(&r, &t, HEAD HI ",'tools':[" TOOL("find_tools") ","
               TOOL("mcp__a__first") "," TOOL("Read") "]}")
          == TS_DECISION_DEFERRED_HOSTED);
    trun_free(&r);

    tpol_free(&t);
}


static void
test_gateway_loop_input(void)
{
    static const char    tail[] = "{\"role\":\"assistant\",\"content\":[]}";
    static unsigned char loaded[4] = { 0, 0, 1, 0 };
    tpol_t               t;
    trun_t               r;
    cJSON               *msgs;

    tgw_init(&t);
    t.in.loaded = loaded;
    t.in.tail = tail;
    t.in.tail_len = sizeof(tail) - 1;

    CHECK(trun(&r, &t, HEAD HI "," GW_TOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);

    msgs = cJSON_GetObjectItem(r.json, "messages");
    CHECK(cJSON_GetArraySize(msgs) == 2);
    CHECK(has_text(r.out, r.len, "\"content\":\"hi\"},{\"role\":"
                   "\"assistant\",\"content\":[]}]"));
    CHECK(tool_named(&r, "mcp__a__first") != NULL);
    CHECK(tool_named(&r, "mcp__z__last") == NULL);
    CHECK(r.rq.tools_deferred == 1);
    trun_free(&r);

    tpol_free(&t);
}


/* a body of n servers s00..s(n-1), server i with i % 3 + 1 tools, the
   last server first, and tools of no server */
static char *
servers_body(int n)
{
    char  *body, *p;
    int    i, k;

    body = malloc(64 + (size_t) n * 3 * 40);
    p = body + sprintf(body, "{\"tools\":[{\"name\":\"Read\"},"
                       "{\"name\":\"mcp__nosep\"}");

    for (i = n - 1; i >= 0; i--) {
        for (k = 0; k <= i % 3; k++) {
            p += sprintf(p, ",{\"name\":\"mcp__s%02d__t%d\"}", i, k);
        }
    }

    strcpy(p, "]}");

    return body;
}


static int
servers_text(int n, const char *want_start, const char *want_end)
{
    ts_index_t   ix;
    ts_buf_t     b;
    char        *body;
    size_t       len;
    int          ok;

    body = servers_body(n);
    ts_buf_init(&b, 0);
    ok = ts_index_build(&ix, body, strlen(body)) == TS_OK
         && ts_gateway_servers(&b, &ix) == 0;
    len = strlen(want_end);

    /* an empty buffer may have no memory at all */
    ok = ok && (b.len == 0
                ? *want_start == '\0' && len == 0
                : b.len >= strlen(want_start) && b.len >= len
                  && memcmp(b.p, want_start, strlen(want_start)) == 0
                  && memcmp(b.p + b.len - len, want_end, len) == 0);

    if (!ok) {
        fprintf(stderr, "    servers: %.*s\n", (int) b.len,
                b.len ? b.p : "");
    }

    ts_index_free(&ix);
    ts_buf_free(&b);
    free(body);

    return ok;
}


/* a search that finds nothing lists the MCP servers, by name, bounded */
static void
test_gateway_servers(void)
{
    CHECK(servers_text(3, "s00 (1 tool), s01 (2 tools), s02 (3 tools)",
                       "s02 (3 tools)"));
    CHECK(servers_text(TS_GATEWAY_SERVERS_MAX + 5, "s00 (1 tool), ",
                       ", s31 (2 tools), and 5 more servers"));
    CHECK(servers_text(0, "", ""));
}


/* a name in the first user message (a compaction summary) stays loaded */
static void
test_gateway_named(void)
{
    tpol_t       t;
    trun_t       r;
    cJSON       *tools;
    const char  *text;

    tgw_init(&t);

    CHECK(trun(&r, &t, HEAD "'messages':[{'role':'user','content':["
               "{'type':'text','text':'Summary:\\nmcp__z__last did it; "
               "xmcp__a__first \\\\nmcp__a__first'}]},"
               "{'role':'assistant','content':'ok'},"
               "{'role':'user','content':'now mcp__a__first'}],"
               GW_TOOLS "}") == TS_DECISION_DEFERRED_GATEWAY);

    /*
     * in place, before the search tool; a name inside a longer word does
     * not count, nor after an escaped backslash (the word is "n...")
     */
    tools = cJSON_GetObjectItem(r.json, "tools");
    CHECK(cJSON_GetArraySize(tools) == 4);
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(
              cJSON_GetArrayItem(tools, 1), "name")), "mcp__z__last") == 0);
    CHECK(tool_named(&r, "mcp__a__first") == NULL);
    CHECK(r.rq.tools_deferred == 1 && r.rq.tools_deferrable == 2);

    /* the announcement is the same as without the name */
    text = system_text(&r);
    CHECK(text && strstr(text, ": mcp__a__first, mcp__z__last."));
    trun_free(&r);

    /* what a client's system reminders list is not a record of finds */
    CHECK(trun(&r, &t, HEAD "'messages':[{'role':'user','content':"
               "'<system-reminder>Deferred: mcp__a__first, mcp__z__last"
               "</system-reminder>Go on with mcp__z__last. "
               "<system-reminder>mcp__a__first'}]," GW_TOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    CHECK(tool_named(&r, "mcp__z__last") != NULL);
    CHECK(tool_named(&r, "mcp__a__first") == NULL);
    trun_free(&r);

    tpol_free(&t);
}


/*
 * Every deferrable tool found: the conversation stays gateway search, the
 * found tools after the search tool, without their breakpoints
 */
static void
test_gateway_all_found(void)
{
    tpol_t  t;
    trun_t  r;
    cJSON  *tools, *st;

    tgw_init(&t);

    CHECK(trun(&r, &t, HEAD GW_HISTORY(
               "{'type':'tool_search_tool_result','tool_use_id':'toolu_1',"
               "'content':{'type':'tool_search_tool_search_result',"
               "'tool_references':[{'type':'tool_reference','tool_name':"
               "'mcp__z__last'},{'type':'tool_reference','tool_name':"
               "'mcp__a__first'}]}},") "," GW_TOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);

    tools = cJSON_GetObjectItem(r.json, "tools");
    CHECK(cJSON_GetArraySize(tools) == 5);
    st = cJSON_GetArrayItem(tools, 2);
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(st, "name")),
                 "tool_search") == 0);
    CHECK(cJSON_GetObjectItem(st, "cache_control") != NULL);
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(
              cJSON_GetArrayItem(tools, 3), "name")), "mcp__z__last") == 0);
    CHECK(cJSON_GetObjectItem(cJSON_GetArrayItem(tools, 3), "cache_control")
          == NULL);
    CHECK(r.rq.tools_deferred == 0 && r.rq.tools_deferrable == 2);
    trun_free(&r);

    tpol_free(&t);
}


/* the call wrapper's check of a call against the tool's input schema */
static int
wrapper_valid(const ts_index_t *ix, const char *call)
{
    ts_wrapper_call_t  c;
    ts_buf_t           err;
    char              *q;
    size_t             len;
    int                rc;

    ts_buf_init(&err, 0);
    q = tst_quote(call, &len);
    rc = ts_wrapper_check(ix, q, len, &c, &err);
    CHECK(rc == 0 ? err.len == 0 : err.len > 0);
    free(q);
    ts_buf_free(&err);

    return rc == 0;
}


static void
test_gateway_wrapper_check(void)
{
    ts_index_t   ix;
    char        *body;
    size_t       len;

    body = tst_quote("{'model':'m','messages':[],'tools':["
        "{'name':'strict','input_schema':{'type':'object','properties':{"
        "'n':{'type':'integer'},'s':{'type':['string','null']},"
        "'b':{'type':'boolean'}},'required':['n'],"
        "'additionalProperties':false}},"
        "{'name':'ref','input_schema':{'$ref':'#/defs/x'}},"
        "{'name':'open','input_schema':{'type':'object'}}]}", &len);
    CHECK(ts_index_build(&ix, body, len) == TS_OK);

    CHECK(wrapper_valid(&ix, "{'name':'strict','arguments':{'n':2}}"));
    CHECK(wrapper_valid(&ix, "{'name':'strict','arguments':{'n':2.0,"
                             "'s':null,'b':false}}"));
    CHECK(!wrapper_valid(&ix, "{'name':'strict','arguments':{}}"));
    CHECK(!wrapper_valid(&ix, "{'name':'strict','arguments':{'n':2.5}}"));
    CHECK(!wrapper_valid(&ix, "{'name':'strict','arguments':{'n':'2'}}"));
    CHECK(!wrapper_valid(&ix, "{'name':'strict','arguments':{'n':1,"
                              "'x':1}}"));
    CHECK(!wrapper_valid(&ix, "{'name':'strict','arguments':{'n':1,"
                              "'b':'yes'}}"));
    CHECK(!wrapper_valid(&ix, "{'name':'nope','arguments':{}}"));
    CHECK(!wrapper_valid(&ix, "{'name':'strict','arguments':'{}'}"));
    CHECK(!wrapper_valid(&ix, "{'name':'strict'}"));
    CHECK(!wrapper_valid(&ix, "[]"));

    /* a schema it cannot judge plainly is not judged */
    CHECK(wrapper_valid(&ix, "{'name':'ref','arguments':{'any':1}}"));
    CHECK(wrapper_valid(&ix, "{'name':'open','arguments':{'x':[1]}}"));

    ts_index_free(&ix);
    free(body);
}


const tst_case_t  tst_gateway_tests[] = {
    { "gateway_request", test_gateway_request },
    { "gateway_history", test_gateway_history },
    { "gateway_references", test_gateway_references },
    { "gateway_twice", test_gateway_twice },
    { "gateway_loop_input", test_gateway_loop_input },
    { "gateway_call_without_id", test_gateway_call_without_id },
    { "gateway_restored", test_gateway_restored },
    { "gateway_servers", test_gateway_servers },
    { "gateway_named", test_gateway_named },
    { "gateway_all_found", test_gateway_all_found },
    { "gateway_wrapper_check", test_gateway_wrapper_check },
    { NULL, NULL }
};
