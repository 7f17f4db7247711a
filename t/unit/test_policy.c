/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The deferral policy and the strip of tool-search artifacts: every rule
 * alone and at its boundaries, checked on the rendered output with cJSON.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tst.h"
#include "rewrite/ts_beta.h"


#include "tpol.h"




static void
test_policy_priority_chain(void)
{
    tpol_t  t;
    trun_t  r;

    tpol_init(&t);
    tpol_add(&t.l.always_load, "mcp__db__query");
    tpol_add(&t.l.defer_tools, "~^Cron");
    tpol_add(&t.l.defer_tools, "WebFetch");

    CHECK(trun(&r, &t, HEAD HI ",'tools':[" TOOL("Read") ","
               TOOL("mcp__db__query") "," TOOL("mcp__gh__create_issue") ","
               TOOL("CronCreate") "," TOOL("WebFetch") ","
               "{'type':'web_search_20250305','name':'web_search'},"
               "{'type':'bash_20250124','name':'mcp__x__bash'}]}")
          == TS_DECISION_DEFERRED_HOSTED);

    CHECK(!deferred(&r, "Read"));
    CHECK(!deferred(&r, "mcp__db__query"));     /* always_load first */
    CHECK(deferred(&r, "mcp__gh__create_issue"));
    CHECK(deferred(&r, "CronCreate"));          /* ~regex */
    CHECK(deferred(&r, "WebFetch"));            /* exact name */
    CHECK(!deferred(&r, "web_search"));         /* server tools never */
    CHECK(!deferred(&r, "mcp__x__bash"));
    CHECK(r.rq.tools_deferred == 3);
    CHECK(tool_named(&r, "tool_search_tool_bm25") != NULL);
    CHECK(strcmp(r.rq.betas, TS_BETA_FIRST_PARTY) == 0);

    trun_free(&r);
    tpol_free(&t);
}


static void
test_policy_untouched_tools_keep_bytes(void)
{
    tpol_t  t;
    trun_t  r;

    tpol_init(&t);
    trun(&r, &t, HEAD HI ",'tools':[{'name':'Read','description':"
         "'caf\\u00e9','input_schema':{'n':12345678901234567890}},"
         TOOL("mcp__a__b") "]}");

    /* the big integer and the escape would not survive a re-print */
    CHECK(has_text(r.out, r.len, "\"input_schema\":{\"n\":"
                   "12345678901234567890}}"));
    CHECK(has_text(r.out, r.len, "caf\\u00e9"));
    CHECK(has_text(r.out, r.len, "{\"type\":\"object\"},"
                   "\"defer_loading\":true}"));

    trun_free(&r);
    tpol_free(&t);
}


static void
test_policy_client_managed(void)
{
    static const char  *bodies[] = {
        HEAD HI ",'tools':[" TOOL("ToolSearch") "," TOOL("mcp__a__b") "]}",
        HEAD HI ",'tools':[" TOOL("MCPSearch") "," TOOL("mcp__a__b") "]}",
        HEAD HI ",'tools':[" TOOL("Read") ",{'name':'mcp__a__b',"
        "'input_schema':{},'defer_loading':true}]}",
        HEAD HI ",'tools':[" TOOL("mcp__a__b") ",{'type':"
        "'tool_search_tool_regex_20251119','name':'tool_search_tool_regex'}"
        "]}",
        HEAD "'messages':[{'role':'user','content':'x'},{'role':'assistant',"
        "'content':[{'type':'tool_use','id':'t1','name':'S','input':{}}]},"
        "{'role':'user','content':[{'type':'tool_result','tool_use_id':"
        "'t1','content':[{'type':'tool_reference','tool_name':'mcp__a__b'}"
        "]},{'type':'text','text':'Tool loaded.'}]}],'tools':["
        TOOL("S") ",{'name':'mcp__a__b','input_schema':"
        "{},'defer_loading':true}]}"
    };
    tpol_t  t;
    trun_t  r;
    size_t  i;

    tpol_init(&t);

    for (i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        tst_note("body %zu", i);
        CHECK(trun(&r, &t, bodies[i]) == TS_DECISION_CLIENT_MANAGED);
        CHECK(r.len == strlen(bodies[i]));
        CHECK(memcmp(r.out, r.body, r.len) == 0);
        trun_free(&r);
    }

    tpol_free(&t);
}


static void
test_policy_never_all_deferred(void)
{
    tpol_t  t;
    trun_t  r;

    tpol_init(&t);

    CHECK(trun(&r, &t, HEAD HI ",'tools':[" TOOL("Read") "]}")
          == TS_DECISION_NOTHING_TO_DEFER);
    trun_free(&r);

    CHECK(trun(&r, &t, HEAD HI "}") == TS_DECISION_NOTHING_TO_DEFER);
    trun_free(&r);

    tpol_free(&t);
}


static void
test_policy_forced_tool_stays(void)
{
    tpol_t  t;
    trun_t  r;

    tpol_init(&t);
    trun(&r, &t, HEAD HI ",'tool_choice':{'type':'tool','name':'mcp__a__b'},"
         "'tools':[" TOOL("Read") "," TOOL("mcp__a__b") ","
         TOOL("mcp__a__c") "]}");

    CHECK(r.d == TS_DECISION_DEFERRED_HOSTED);
    CHECK(!deferred(&r, "mcp__a__b"));
    CHECK(deferred(&r, "mcp__a__c"));

    trun_free(&r);
    tpol_free(&t);
}


static void
test_policy_cache_control_moves(void)
{
    tpol_t   t;
    trun_t   r;
    cJSON   *cc;

    tpol_init(&t);
    trun(&r, &t, HEAD HI ",'tools':[" TOOL("Read") "," TOOL("Edit") ","
         "{'name':'mcp__a__b','input_schema':{},"
         "'cache_control':{'type':'ephemeral','ttl':'1h'}}]}");

    CHECK(r.d == TS_DECISION_DEFERRED_HOSTED);
    CHECK(deferred(&r, "mcp__a__b"));
    CHECK(cJSON_GetObjectItem(tool_named(&r, "mcp__a__b"), "cache_control")
          == NULL);
    CHECK(cJSON_GetObjectItem(tool_named(&r, "Read"), "cache_control")
          == NULL);

    cc = cJSON_GetObjectItem(tool_named(&r, "Edit"), "cache_control");
    CHECK(cc != NULL
          && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(cc, "ttl")),
                    "1h") == 0);

    trun_free(&r);

    /* the last loaded tool has its own breakpoint: it keeps it */
    trun(&r, &t, HEAD HI ",'tools':[{'name':'Read','input_schema':{},"
         "'cache_control':{'type':'ephemeral'}},{'name':'mcp__a__b',"
         "'input_schema':{},'cache_control':{'type':'ephemeral'}}]}");
    CHECK(has_text(r.out, r.len, "{\"name\":\"Read\",\"input_schema\":{},"
                   "\"cache_control\":{\"type\":\"ephemeral\"}}"));
    CHECK(cJSON_GetObjectItem(tool_named(&r, "mcp__a__b"), "cache_control")
          == NULL);

    trun_free(&r);
    tpol_free(&t);
}


/* one deferred tool of exactly chars characters (name + desc + schema) */
static char *
sized_body(size_t chars)
{
    static const char   name[] = "mcp__a__b";
    static const char   schema[] = "{}";
    tst_sb_t            sb;
    size_t              desc;

    desc = chars - (sizeof(name) - 1) - (sizeof(schema) - 1);

    memset(&sb, 0, sizeof(sb));
    tst_sb_str(&sb, HEAD HI ",'tools':[" TOOL("Read") ",{'name':'");
    tst_sb_str(&sb, name);
    tst_sb_str(&sb, "','description':'");
    tst_sb_rep(&sb, "d", desc);
    tst_sb_str(&sb, "','input_schema':");
    tst_sb_str(&sb, schema);
    tst_sb_str(&sb, "}]}");
    tst_sb_add(&sb, "", 1);

    return sb.p;
}


static void
test_policy_threshold_boundary(void)
{
    tpol_t   t;
    trun_t   r;
    char    *body;
    size_t   chars[] = { 4999, 5000, 5001 };
    ts_decision_t  want[] = { TS_DECISION_BELOW_THRESHOLD,
                              TS_DECISION_DEFERRED_HOSTED,
                              TS_DECISION_DEFERRED_HOSTED };
    size_t   i;

    /* auto:1 of 200000 tokens: 2000 tokens, 5000 characters */
    tpol_init(&t);
    t.p.defer_mode = TS_DEFER_AUTO;
    t.p.defer_percent = 1;

    for (i = 0; i < 3; i++) {
        tst_note("%zu characters", chars[i]);
        body = sized_body(chars[i]);
        CHECK(trun(&r, &t, body) == want[i]);
        CHECK(r.rq.defer_chars == chars[i]);
        CHECK(r.rq.threshold_chars == 5000);
        CHECK(ts_request_changed(&r.rq)
              == (want[i] != TS_DECISION_BELOW_THRESHOLD));
        trun_free(&r);
        free(body);
    }

    tpol_free(&t);
}


static void
test_policy_windows(void)
{
    tpol_t   t;
    trun_t   r;
    char    *body;

    tpol_init(&t);
    t.p.defer_mode = TS_DEFER_AUTO;
    t.p.defer_percent = 10;
    tpol_window(&t, "~sonnet-4-5", 1000);
    tpol_window(&t, "~sonnet", 900000);
    body = sized_body(250);

    /* the first matching pattern wins: 1000 tokens, 250 characters */
    CHECK(trun(&r, &t, body) == TS_DECISION_DEFERRED_HOSTED);
    CHECK(r.rq.threshold_chars == 250);
    trun_free(&r);

    /* a context-1m beta is a 1,000,000-token window */
    t.in.betas = "claude-code-20250219, context-1m-2025-08-07";
    t.in.betas_len = strlen(t.in.betas);
    CHECK(trun(&r, &t, body) == TS_DECISION_BELOW_THRESHOLD);
    CHECK(r.rq.threshold_chars == 250000);
    CHECK(!r.rq.betas_changed);
    trun_free(&r);

    /* no pattern matches: the default 200000 */
    t.in.betas = "";
    t.in.betas_len = 0;
    ts_match_free(&t.l.windows);
    memset(&t.l.windows, 0, sizeof(t.l.windows));
    tpol_window(&t, "~opus", 1000);
    CHECK(trun(&r, &t, body) == TS_DECISION_BELOW_THRESHOLD);
    CHECK(r.rq.threshold_chars == 50000);
    trun_free(&r);

    /* 100 percent of 200000 */
    t.p.defer_percent = 100;
    CHECK(trun(&r, &t, body) == TS_DECISION_BELOW_THRESHOLD);
    CHECK(r.rq.threshold_chars == 500000);
    trun_free(&r);

    free(body);
    tpol_free(&t);
}


static void
test_policy_modes_and_models(void)
{
    static const struct {
        const char     *model;
        int             mode;
        int             search;
        ts_decision_t   d;
    } cases[] = {
        { "claude-sonnet-4-5", TS_DEFER_ON, TS_SEARCH_AUTO,
          TS_DECISION_DEFERRED_HOSTED },
        { "claude-sonnet-4-5", TS_DEFER_OFF, TS_SEARCH_AUTO,
          TS_DECISION_STANDARD_MODE },
        { "claude-sonnet-4-5", TS_DEFER_ON, TS_SEARCH_GATEWAY,
          TS_DECISION_DEFERRED_GATEWAY },
        { "claude-haiku-4-5", TS_DEFER_ON, TS_SEARCH_HOSTED,
          TS_DECISION_DEFERRED_HOSTED },
        { "claude-3-5-haiku-20241022", TS_DEFER_ON, TS_SEARCH_HOSTED,
          TS_DECISION_MODEL_UNSUPPORTED },
        { "claude-3-5-haiku-20241022", TS_DEFER_ON, TS_SEARCH_AUTO,
          TS_DECISION_DEFERRED_GATEWAY },
        { "Claude-3-Haiku-20240307", TS_DEFER_ON, TS_SEARCH_HOSTED,
          TS_DECISION_MODEL_UNSUPPORTED },
    };
    tpol_t  t;
    trun_t  r;
    char    body[512];
    size_t  i;

    tpol_init(&t);

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tst_note("%s", cases[i].model);
        t.p.defer_mode = cases[i].mode;
        t.p.search = cases[i].search;
        snprintf(body, sizeof(body), "{'model':'%s','max_tokens':9," HI
                 ",'tools':[" TOOL("Read") "," TOOL("mcp__a__b") "]}",
                 cases[i].model);
        CHECK(trun(&r, &t, body) == cases[i].d);
        CHECK(ts_request_changed(&r.rq)
              == (cases[i].d == TS_DECISION_DEFERRED_HOSTED
                  || cases[i].d == TS_DECISION_DEFERRED_GATEWAY));
        trun_free(&r);
    }

    /* a trusted client's mode overrides the location's */
    t.p.search = TS_SEARCH_AUTO;
    t.p.defer_mode = TS_DEFER_ON;
    t.in.defer_mode = TS_DEFER_OFF;
    CHECK(trun(&r, &t, HEAD HI ",'tools':[" TOOL("Read") ","
               TOOL("mcp__a__b") "]}") == TS_DECISION_STANDARD_MODE);
    trun_free(&r);

    tpol_free(&t);
}


/*
 * A thread that the request creates keeps its tools undeferred; a later
 * turn of it goes on as sent, betas included, whatever it carries.
 */
static void
test_policy_threads(void)
{
    static const char  create[] = HEAD HI ",'thread':{'type':'create'},"
                                  "'tools':[" TOOL("Read") ","
                                  TOOL("mcp__a__b") "]}";
    static const char  cont[] = HEAD "'messages':[{'role':'user','content':"
                                "[{'type':'tool_result','tool_use_id':'t1',"
                                "'content':[{'type':'tool_reference',"
                                "'tool_name':'mcp__a__b'}]}]}],'thread':{"
                                "'type':'continue','previous_message_id':"
                                "'msg_1'}}";
    tpol_t  t;
    trun_t  r;

    tpol_init(&t);
    t.in.betas = "message-threads-2026-08-12";
    t.in.betas_len = strlen(t.in.betas);

    CHECK(trun(&r, &t, create) == TS_DECISION_THREAD_CREATE);
    CHECK(!ts_request_changed(&r.rq) && !r.rq.betas_changed);
    trun_free(&r);

    /* gateway search could load nothing into the thread either */
    t.p.search = TS_SEARCH_GATEWAY;
    CHECK(trun(&r, &t, create) == TS_DECISION_THREAD_CREATE);
    CHECK(!ts_request_changed(&r.rq) && !r.rq.betas_changed);
    trun_free(&r);

    /* a reference to a tool only the thread holds is left alone */
    CHECK(trun(&r, &t, cont) == TS_DECISION_THREAD_CONTINUE);
    CHECK(!ts_request_changed(&r.rq) && !r.rq.betas_changed);
    trun_free(&r);

    t.p.search = TS_SEARCH_AUTO;
    t.p.disable_betas = 1;
    t.in.betas = "advanced-tool-use-2025-11-20";
    t.in.betas_len = strlen(t.in.betas);
    CHECK(trun(&r, &t, cont) == TS_DECISION_THREAD_CONTINUE);
    CHECK(!ts_request_changed(&r.rq) && !r.rq.betas_changed);
    trun_free(&r);
    t.p.disable_betas = 0;

    /* a thread of unknown form is the server's; null is no thread */
    CHECK(trun(&r, &t, HEAD HI ",'thread':{'type':'fork'},'tools':["
               TOOL("Read") "," TOOL("mcp__a__b") "]}")
          == TS_DECISION_THREAD_CONTINUE);
    trun_free(&r);
    CHECK(trun(&r, &t, HEAD HI ",'thread':null,'tools':[" TOOL("Read") ","
               TOOL("mcp__a__b") "]}") == TS_DECISION_DEFERRED_HOSTED);
    trun_free(&r);

    /* a client that searches itself keeps its own deferral in the thread */
    CHECK(trun(&r, &t, HEAD HI ",'thread':{'type':'create'},'tools':["
               TOOL("ToolSearch") "," TOOL("mcp__a__b") "]}")
          == TS_DECISION_CLIENT_MANAGED);
    trun_free(&r);

    tpol_free(&t);
}


static void
test_policy_profiles(void)
{
    static const char  body[] = HEAD HI ",'tools':[" TOOL("Read") ","
                                TOOL("mcp__a__b") "]}";
    tpol_t  t;
    trun_t  r;

    tpol_init(&t);

    /* vertex: the third-party spelling, translated from the first */
    t.in.upstream = TS_UPSTREAM_VERTEX;
    t.in.betas = "a-1,advanced-tool-use-2025-11-20, a-1";
    t.in.betas_len = strlen(t.in.betas);
    CHECK(trun(&r, &t, body) == TS_DECISION_DEFERRED_HOSTED);
    CHECK(strcmp(r.rq.betas, "a-1," TS_BETA_THIRD_PARTY) == 0);
    trun_free(&r);

    /* bedrock without anthropic_version: the header */
    t.in.upstream = TS_UPSTREAM_BEDROCK;
    CHECK(trun(&r, &t, body) == TS_DECISION_DEFERRED_HOSTED);
    CHECK(strcmp(r.rq.betas, "a-1," TS_BETA_THIRD_PARTY) == 0);
    trun_free(&r);

    /* bedrock InvokeModel: the body field, and the header loses it */
    CHECK(trun(&r, &t, "{'anthropic_version':'bedrock-2023-05-31',"
               "'max_tokens':9," HI ",'tools':[" TOOL("Read") ","
               TOOL("mcp__a__b") "]}") == TS_DECISION_DEFERRED_HOSTED);
    CHECK(strcmp(r.rq.betas, "a-1") == 0);
    CHECK(has_text(r.out, r.len, "{\"anthropic_beta\":[\""
                   TS_BETA_THIRD_PARTY "\"],\"anthropic_version\""));
    trun_free(&r);

    CHECK(trun(&r, &t, "{'anthropic_version':'bedrock-2023-05-31',"
               "'anthropic_beta':['x-1','advanced-tool-use-2025-11-20'],"
               "'max_tokens':9," HI ",'tools':[" TOOL("Read") ","
               TOOL("mcp__a__b") "]}") == TS_DECISION_DEFERRED_HOSTED);
    CHECK(has_text(r.out, r.len, "\"anthropic_beta\":[\"x-1\",\""
                   TS_BETA_THIRD_PARTY "\"]"));
    trun_free(&r);

    /* compatible: no hosted search unless it forwards tool_reference */
    t.in.upstream = TS_UPSTREAM_COMPATIBLE;
    t.in.betas = "";
    t.in.betas_len = 0;
    t.p.search = TS_SEARCH_HOSTED;
    CHECK(trun(&r, &t, body) == TS_DECISION_UPSTREAM_UNSUPPORTED);
    CHECK(!ts_request_changed(&r.rq) && !r.rq.betas_changed);
    trun_free(&r);

    /* ... so the gateway searches, without any beta */
    t.p.search = TS_SEARCH_AUTO;
    CHECK(trun(&r, &t, body) == TS_DECISION_DEFERRED_GATEWAY);
    CHECK(ts_request_changed(&r.rq) && !r.rq.betas_changed);
    trun_free(&r);

    t.p.upstream_tool_reference = 1;
    CHECK(trun(&r, &t, body) == TS_DECISION_DEFERRED_HOSTED);
    CHECK(strcmp(r.rq.betas, TS_BETA_FIRST_PARTY) == 0);
    trun_free(&r);

    tpol_free(&t);
}


/* a conversation carrying every tool-search artifact */
#define ARTIFACTS                                                           \
    "{'model':'claude-sonnet-4-5','max_tokens':9,'messages':["             \
    "{'role':'user','content':'find'},"                                    \
    "{'role':'assistant','content':[{'type':'server_tool_use','id':'s1',"  \
    "'name':'tool_search_tool_bm25','input':{'query':'slack \\\"send'}},"  \
    "{'type':'tool_search_tool_result','tool_use_id':'s1','content':"      \
    "{'type':'tool_search_tool_search_result','tool_references':["        \
    "{'type':'tool_reference','tool_name':'mcp__s__send'}]}},"             \
    "{'type':'tool_use','id':'t1','name':'ToolSearch','input':{},"         \
    "'caller':{'type':'direct'}}]},"                                       \
    "{'role':'user','content':[{'type':'tool_result','tool_use_id':'t1',"  \
    "'content':[{'type':'tool_reference','tool_name':'mcp__g__get'},"      \
    "{'type':'tool_reference','tool_name':'mcp__gone__x',"                 \
    "'cache_control':{'type':'ephemeral'}}]},"                             \
    "{'type':'text','text':'Tool loaded.'}]}],"                            \
    "'tools':[" TOOL("ToolSearch") ",{'name':'mcp__s__send',"              \
    "'input_schema':{},'defer_loading':true},{'name':'mcp__g__get',"       \
    "'input_schema':{},'defer_loading' : true },"                          \
    "{'type':'tool_search_tool_bm25_20251119',"                            \
    "'name':'tool_search_tool_bm25'}]}"


/*
 * "caller" belongs to tool_use blocks: on a block of another type it
 * needs no beta, and stripping leaves it, so both agree that it is no
 * tool-search field (else a second pass would add the beta back).
 */
static void
test_policy_caller_off_tool_use(void)
{
    tpol_t  t;
    trun_t  r;

    tpol_init(&t);

    CHECK(trun(&r, &t,
               "{'model':'claude-sonnet-4-5','max_tokens':9,'messages':["
               "{'role':'user','content':[{'type':'text','text':'hi',"
               "'caller':{'type':'direct'}}]}],"
               "'tools':[" TOOL("Read") "]}") >= TS_DECISION_STANDARD_MODE);
    CHECK(!r.rq.betas_changed);
    CHECK(has_text(r.out, r.len, "caller"));

    trun_free(&r);
    tpol_free(&t);
}


static void
test_policy_kill_switch_strips(void)
{
    tpol_t   t;
    trun_t   r;
    cJSON   *m, *b;

    tpol_init(&t);
    t.p.disable_betas = 1;
    t.in.betas = "x-1, advanced-tool-use-2025-11-20 ,"
                 "tool-search-tool-2025-10-19";
    t.in.betas_len = strlen(t.in.betas);

    CHECK(trun(&r, &t, ARTIFACTS) == TS_DECISION_KILL_SWITCH);
    CHECK(r.rq.mode == TS_DEFER_OFF);
    CHECK(r.rq.stripped && r.rq.hygiene.refs_converted == 2
          && r.rq.hygiene.refs_stale == 1);
    CHECK(strcmp(r.rq.betas, "x-1") == 0);

    CHECK(!has_text(r.out, r.len, "defer_loading"));
    CHECK(!has_text(r.out, r.len, "tool_reference"));
    CHECK(!has_text(r.out, r.len, "caller"));
    CHECK(!has_text(r.out, r.len, "tool_search_tool"));
    CHECK(!has_text(r.out, r.len, "server_tool_use"));
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "tools")) == 3);

    m = cJSON_GetArrayItem(cJSON_GetObjectItem(r.json, "messages"), 1);
    b = cJSON_GetObjectItem(m, "content");
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(
              cJSON_GetArrayItem(b, 0), "text")),
              "Tool search: slack \"send.") == 0);
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(
              cJSON_GetArrayItem(b, 1), "text")),
              "Tools found: mcp__s__send") == 0);

    m = cJSON_GetArrayItem(cJSON_GetObjectItem(r.json, "messages"), 2);
    b = cJSON_GetObjectItem(cJSON_GetArrayItem(
            cJSON_GetObjectItem(m, "content"), 0), "content");
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(
              cJSON_GetArrayItem(b, 0), "text")),
              "Tool loaded: mcp__g__get") == 0);
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(
              cJSON_GetArrayItem(b, 1), "text")),
              "Tool mcp__gone__x is no longer available.") == 0);
    CHECK(cJSON_GetObjectItem(cJSON_GetArrayItem(b, 1), "cache_control")
          != NULL);

    trun_free(&r);
    tpol_free(&t);
}


static void
test_policy_strip_triggers(void)
{
    tpol_t  t;
    trun_t  r;

    tpol_init(&t);

    /* first party, search allowed: only the stale reference goes */
    CHECK(trun(&r, &t, ARTIFACTS) == TS_DECISION_CLIENT_MANAGED);
    CHECK(!r.rq.stripped && r.rq.hygiene.refs_stale == 1
          && r.rq.hygiene.refs_kept == 1);
    CHECK(r.rq.hygiene.refs_converted == 0
          && r.rq.hygiene.boundaries_added == 0);
    CHECK(has_text(r.out, r.len, "\"tool_name\":\"mcp__g__get\""));
    CHECK(has_text(r.out, r.len, "mcp__gone__x is no longer available"));
    CHECK(has_text(r.out, r.len, "'tool_name':'mcp__s__send'") == 0);
    CHECK(strcmp(r.rq.betas, TS_BETA_FIRST_PARTY) == 0);
    CHECK(r.rq.discovered == 2);
    trun_free(&r);

    t.in.upstream = TS_UPSTREAM_COMPATIBLE;
    CHECK(trun(&r, &t, ARTIFACTS) == TS_DECISION_CLIENT_MANAGED);
    CHECK(r.rq.stripped && !r.rq.betas_changed);
    trun_free(&r);

    t.in.upstream = TS_UPSTREAM_ANTHROPIC;
    t.p.defer_mode = TS_DEFER_OFF;
    CHECK(trun(&r, &t, ARTIFACTS) == TS_DECISION_CLIENT_MANAGED);
    CHECK(r.rq.stripped);
    trun_free(&r);

    tpol_free(&t);
}


/* a second pass over the output changes nothing (chained gateways) */
static void
check_idempotent(tpol_t *t, const trun_t *r)
{
    ts_request_t   rq;
    char          *out;

    ts_request_process(&rq, &t->in, r->out, r->len);
    out = tst_alloc(ts_request_size(&rq) + 1);
    CHECK(ts_request_render(&rq, out) == 0);
    CHECK(ts_request_size(&rq) == r->len && memcmp(out, r->out, r->len) == 0);
    free(out);
    ts_request_free(&rq);
}


#define SEARCH(id)                                                          \
    "{'role':'assistant','content':[{'type':'tool_use','id':'" id "',"     \
    "'name':'ToolSearch','input':{}}]}"
#define FOUND(id, name, siblings)                                           \
    "{'role':'user','content':[{'type':'tool_result','tool_use_id':'" id   \
    "','content':[{'type':'tool_reference','tool_name':'" name "'}]}"      \
    siblings "]}"
#define CALL(id, name)                                                      \
    "{'role':'assistant','content':[{'type':'tool_use','id':'" id "',"     \
    "'name':'" name "','input':{}}]}"
#define RESULT(id)                                                          \
    "{'role':'user','content':[{'type':'tool_result','tool_use_id':'" id   \
    "','content':'ok'}]}"
#define DEFERRED_TOOLS                                                      \
    "'tools':[" TOOL("ToolSearch") ",{'name':'mcp__a__b','input_schema':{}," \
    "'defer_loading':true}]}"


static cJSON *
message(const trun_t *r, int i)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItem(r->json, "messages"), i);
}


/* the text of block k of message i, or NULL */
static const char *
block_text(const trun_t *r, int i, int k)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(
               cJSON_GetObjectItem(message(r, i), "content"), k), "text"));
}


static int
blocks(const trun_t *r, int i)
{
    return cJSON_GetArraySize(cJSON_GetObjectItem(message(r, i), "content"));
}


static void
test_hygiene_boundary_added(void)
{
    tpol_t  t;
    trun_t  r;

    tpol_init(&t);
    CHECK(trun(&r, &t, HEAD "'messages':[{'role':'user','content':'x'},"
               SEARCH("t1") "," FOUND("t1", "mcp__a__b", "") "],"
               DEFERRED_TOOLS) == TS_DECISION_CLIENT_MANAGED);
    CHECK(r.rq.hygiene.boundaries_added == 1 && r.rq.hygiene.refs_kept == 1);
    CHECK(blocks(&r, 2) == 2);
    CHECK(block_text(&r, 2, 1) && strcmp(block_text(&r, 2, 1),
                                         "Tool loaded.") == 0);
    check_idempotent(&t, &r);
    trun_free(&r);

    /* off: nothing added */
    t.p.turn_boundary = 0;
    trun(&r, &t, HEAD "'messages':[{'role':'user','content':'x'},"
         SEARCH("t1") "," FOUND("t1", "mcp__a__b", "") "]," DEFERRED_TOOLS);
    CHECK(!ts_request_changed(&r.rq) && r.rq.hygiene.boundaries_added == 0);
    trun_free(&r);

    tpol_free(&t);
}


static void
test_hygiene_claude_code_marker_stays(void)
{
    tpol_t  t;
    trun_t  r;

    tpol_init(&t);
    trun(&r, &t, HEAD "'messages':[{'role':'user','content':'x'},"
         SEARCH("t1") "," FOUND("t1", "mcp__a__b", ",{'type':'text',"
         "'text':'Tool loaded.','cache_control':{'type':'ephemeral'}}") ","
         CALL("t2", "mcp__a__b") "," RESULT("t2") ","
         "{'role':'system','content':'late'}]," DEFERRED_TOOLS);

    CHECK(!ts_request_changed(&r.rq));
    CHECK(r.rq.hygiene.siblings_moved == 0
          && r.rq.hygiene.boundaries_added == 0);
    CHECK(r.rq.discovered == 1);
    trun_free(&r);
    tpol_free(&t);
}


static void
test_hygiene_siblings_move(void)
{
    tpol_t  t;
    trun_t  r;

    tpol_init(&t);
    trun(&r, &t, HEAD "'messages':[{'role':'user','content':'x'},"
         SEARCH("t1") "," FOUND("t1", "mcp__a__b", ",{'type':'text',"
         "'text':'memory: A'},{'type':'text','text':'memory: B'}") ","
         CALL("t2", "mcp__a__b") "," RESULT("t2") "],"
         DEFERRED_TOOLS);

    CHECK(r.rq.hygiene.siblings_moved == 2
          && r.rq.hygiene.boundaries_added == 1);
    CHECK(blocks(&r, 2) == 2);
    CHECK(strcmp(block_text(&r, 2, 1), "Tool loaded.") == 0);
    CHECK(blocks(&r, 4) == 3);
    CHECK(strcmp(block_text(&r, 4, 1), "memory: A") == 0);
    CHECK(strcmp(block_text(&r, 4, 2), "memory: B") == 0);
    check_idempotent(&t, &r);
    trun_free(&r);

    /* no later plain tool result: the siblings stay, no marker */
    trun(&r, &t, HEAD "'messages':[{'role':'user','content':'x'},"
         SEARCH("t1") "," FOUND("t1", "mcp__a__b", ",{'type':'text',"
         "'text':'memory: A'}") "]," DEFERRED_TOOLS);
    CHECK(!ts_request_changed(&r.rq));
    trun_free(&r);

    tpol_free(&t);
}


static void
test_hygiene_stale_references(void)
{
    tpol_t  t;
    trun_t  r;

    tpol_init(&t);

    /* the MCP server went away: its reference becomes text */
    trun(&r, &t, HEAD "'messages':[{'role':'user','content':'x'},"
         SEARCH("t1") "," FOUND("t1", "mcp__gone__x", "") "],"
         DEFERRED_TOOLS);
    CHECK(r.rq.hygiene.refs_stale == 1 && r.rq.hygiene.boundaries_added == 0);
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(
              cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(
              cJSON_GetObjectItem(message(&r, 2), "content"), 0),
              "content"), 0), "text")),
              "Tool mcp__gone__x is no longer available.") == 0);
    check_idempotent(&t, &r);
    trun_free(&r);

    /* a loaded tool without defer_loading cannot be referenced */
    trun(&r, &t, HEAD "'messages':[{'role':'user','content':'x'},"
         SEARCH("t1") "," FOUND("t1", "Read", "") "],'tools':["
         TOOL("ToolSearch") "," TOOL("Read") ",{'name':'mcp__a__b',"
         "'input_schema':{},'defer_loading':true}]}");
    CHECK(r.rq.hygiene.refs_converted == 1 && r.rq.hygiene.refs_stale == 0);
    CHECK(has_text(r.out, r.len, "\"text\":\"Tool loaded: Read\""));
    check_idempotent(&t, &r);
    trun_free(&r);

    tpol_free(&t);
}


/* the gateway's output, sent again, is left alone (chained gateways) */
static void
test_policy_idempotent_on_fixtures(void)
{
    static const int   ups[] = { TS_UPSTREAM_ANTHROPIC, TS_UPSTREAM_VERTEX,
                                 TS_UPSTREAM_BEDROCK,
                                 TS_UPSTREAM_COMPATIBLE };
    char             **paths;
    size_t             n, i, u, len2;
    tpol_t             t;
    tst_doc_t          d;
    ts_request_t       rq, rq2;
    char              *out, *out2;
    cJSON             *json;

    n = tst_fixtures(&paths);
    tpol_init(&t);
    t.in.betas = "claude-code-20250219,advanced-tool-use-2025-11-20";
    t.in.betas_len = strlen(t.in.betas);

    for (i = 0; i < n; i++) {
        if (tst_doc_load(&d, paths[i]) != 0) {
            tst_doc_free(&d);
            continue;
        }

        for (u = 0; u < sizeof(ups) / sizeof(ups[0]); u++) {
            tst_note("%s upstream %d", paths[i], ups[u]);
            t.in.upstream = ups[u];

            ts_request_process(&rq, &t.in, d.buf, d.len);
            out = tst_alloc(ts_request_size(&rq) + 1);
            CHECK(ts_request_render(&rq, out) == 0);
            json = tst_json(out, ts_request_size(&rq));
            CHECK(json != NULL);
            cJSON_Delete(json);

            ts_request_process(&rq2, &t.in, out, ts_request_size(&rq));
            len2 = ts_request_size(&rq2);
            out2 = tst_alloc(len2 + 1);
            CHECK(ts_request_render(&rq2, out2) == 0);
            CHECK(len2 == ts_request_size(&rq)
                  && memcmp(out, out2, len2) == 0);

            ts_request_free(&rq2);
            ts_request_free(&rq);
            free(out2);
            free(out);
        }

        tst_doc_free(&d);
    }

    tst_free_list(paths, n);
    tpol_free(&t);
}


const tst_case_t  tst_policy_tests[] = {
    { "policy_priority_chain", test_policy_priority_chain },
    { "policy_untouched_tools_keep_bytes",
      test_policy_untouched_tools_keep_bytes },
    { "policy_client_managed", test_policy_client_managed },
    { "policy_never_all_deferred", test_policy_never_all_deferred },
    { "policy_forced_tool_stays", test_policy_forced_tool_stays },
    { "policy_cache_control_moves", test_policy_cache_control_moves },
    { "policy_threshold_boundary", test_policy_threshold_boundary },
    { "policy_windows", test_policy_windows },
    { "policy_modes_and_models", test_policy_modes_and_models },
    { "policy_profiles", test_policy_profiles },
    { "policy_threads", test_policy_threads },
    { "policy_kill_switch_strips", test_policy_kill_switch_strips },
    { "policy_caller_off_tool_use", test_policy_caller_off_tool_use },
    { "policy_strip_triggers", test_policy_strip_triggers },
    { "policy_idempotent_on_fixtures", test_policy_idempotent_on_fixtures },
    { "hygiene_boundary_added", test_hygiene_boundary_added },
    { "hygiene_claude_code_marker_stays",
      test_hygiene_claude_code_marker_stays },
    { "hygiene_siblings_move", test_hygiene_siblings_move },
    { "hygiene_stale_references", test_hygiene_stale_references },
    { NULL, NULL }
};
