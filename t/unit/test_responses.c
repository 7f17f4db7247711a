/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The Responses dialect's request side: which models have hosted
 * tool_search, and the four paths a body takes (client_managed,
 * server_state, deferred_hosted, deferred_gateway) with what each
 * writes.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tst.h"
#include "tpol.h"
#include "responses/ts_responses.h"


#define HOSTED(s)  ts_responses_hosted_model(s, strlen(s))

#define RFN(n)     "{'type':'function','name':'" n "','description':'D " \
                   n "','parameters':{}}"
#define RTOOLS     "'tools':[" RFN("bash") "," RFN("mcp__mem__create") "," \
                   RFN("mcp__mem__read") "]"
#define RHEAD(m)   "{'model':'" m "','instructions':'Be brief.'," \
                   "'input':'hi',"
/* an input that called a deferred function, answered */
#define RCALLED    "'input':[{'type':'function_call','call_id':'c'," \
                   "'name':'mcp__mem__read','arguments':'{}'},{'type':" \
                   "'function_call_output','call_id':'c','output':'ok'}],"

#define rs_run(r, t, body)  trun_with(r, t, body, ts_responses_process)


/* a continuation of a kept exchange: from resume, the searches' outputs */
static void
rs_resume(tpol_t *t, const char *resume)
{
    t->in.tail = resume ? "{\"type\":\"function_call_output\"}" : NULL;
    t->in.tail_len = resume ? strlen(t->in.tail) : 0;
    t->in.resume = resume;
}

static void
test_hosted_models(void)
{
    CHECK(HOSTED("gpt-5.4"));
    CHECK(HOSTED("gpt-5.4-mini"));
    CHECK(HOSTED("gpt-5.10"));
    CHECK(HOSTED("gpt-6"));
    CHECK(HOSTED("openai/gpt-5.5-pro"));
    CHECK(!HOSTED("gpt-5"));
    CHECK(!HOSTED("gpt-5-mini"));
    CHECK(!HOSTED("gpt-5.3"));
    CHECK(!HOSTED("gpt-4.1"));
    CHECK(!HOSTED("o3"));
    CHECK(!HOSTED("gpt-"));
}


/* the names of the output's tools (a type where there is no name) */
static void
rs_names(const trun_t *r, char *out, size_t cap)
{
    cJSON       *t;
    const char  *s;
    size_t       n;

    out[0] = '\0';
    n = 0;

    cJSON_ArrayForEach(t, cJSON_GetObjectItem(r->json, "tools")) {
        s = cJSON_GetStringValue(cJSON_GetObjectItem(t, "name"));
        s = s ? s : cJSON_GetStringValue(cJSON_GetObjectItem(t, "type"));
        n += snprintf(out + n, cap - n, "%s%s%s", n ? "," : "", s,
                      cJSON_IsTrue(cJSON_GetObjectItem(t, "defer_loading"))
                      ? "*" : "");
    }
}


static void
test_responses_paths(void)
{
    tpol_t       t;
    trun_t       r;
    char         names[256];
    const char  *ins;

    tpol_init(&t);
    t.in.upstream = TS_UPSTREAM_COMPATIBLE;

    /* store false: the gateway's search, announced in instructions */
    CHECK(rs_run(&r, &t, RHEAD("gpt-4.1") "'store':false," RTOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    rs_names(&r, names, sizeof(names));
    CHECK(strcmp(names, "bash,tool_search,call_tool") == 0);
    ins = cJSON_GetStringValue(cJSON_GetObjectItem(r.json, "instructions"));
    CHECK(ins != NULL && strncmp(ins, "Be brief.\n\nCall tool_search", 27)
          == 0);
    trun_free(&r);

    /*
     * the call wrapper: a call in the input goes back as call_tool's, its
     * search restored before it; the function stays deferred
     */
    CHECK(rs_run(&r, &t, "{'model':'m','store':false,'input':[{'type':"
                 "'function_call','call_id':'c','name':'mcp__mem__read',"
                 "'arguments':'{\\\"k\\\":1}'},{'type':"
                 "'function_call_output','call_id':'c','output':'ok'}],"
                 RTOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    rs_names(&r, names, sizeof(names));
    CHECK(strcmp(names, "bash,tool_search,call_tool") == 0);
    CHECK(has_text(r.out, r.len, "\"input\":[{\"type\":\"function_call\","
                   "\"call_id\":\"call_search_c\",\"name\":\"tool_search\","
                   "\"arguments\":\"{\\\"query\\\":\\\"select:mcp__mem__read"
                   "\\\"}\"},{\"type\":\"function_call_output\",\"call_id\":"
                   "\"call_search_c\",\"output\":\"Loaded: mcp__mem__read."));
    CHECK(has_text(r.out, r.len, "{\"type\":\"function_call\",\"call_id\":"
                   "\"c\",\"name\":\"call_tool\",\"arguments\":\"{\\\"name"
                   "\\\":\\\"mcp__mem__read\\\",\\\"arguments\\\":{\\\"k"
                   "\\\":1}}\"}"));
    trun_free(&r);

    /* toolsearch_found_tools tools: loaded after the search function */
    t.p.found_tools = TS_FOUND_TOOLS;

    /* called in the input: loaded after the search function */
    CHECK(rs_run(&r, &t, "{'model':'m','store':false," RCALLED RTOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    rs_names(&r, names, sizeof(names));
    CHECK(strcmp(names, "bash,tool_search,mcp__mem__read") == 0);
    /* no instructions: a member of the gateway's opens the body */
    CHECK(strncmp(r.out, "{\"instructions\":\"Call tool_search", 33) == 0);
    trun_free(&r);

    /* found functions in the order the input first called them */
    CHECK(rs_run(&r, &t, "{'model':'m','store':false,'input':[{'type':"
                 "'function_call','call_id':'c','name':'mcp__mem__read',"
                 "'arguments':'{}'},{'type':'function_call_output',"
                 "'call_id':'c','output':'ok'},{'type':'function_call',"
                 "'call_id':'d','name':'mcp__mem__create','arguments':"
                 "'{}'},{'type':'function_call_output','call_id':'d',"
                 "'output':'ok'}]," RTOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    rs_names(&r, names, sizeof(names));
    CHECK(strcmp(names, "bash,tool_search,mcp__mem__read,mcp__mem__create")
          == 0);
    trun_free(&r);
    t.p.found_tools = TS_FOUND_WRAPPER;

    /* stored, or going on from a stored response: the search too */
    CHECK(rs_run(&r, &t, RHEAD("gpt-4.1") RTOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    CHECK(ts_responses_stored(&r.rq));
    trun_free(&r);

    CHECK(rs_run(&r, &t, RHEAD("gpt-4.1") "'store':false,"
                 "'previous_response_id':'resp_1'," RTOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    CHECK(!ts_responses_stored(&r.rq));
    trun_free(&r);

    /*
     * stored, the call wrapper: the history's call goes back as
     * call_tool's (the kept call is one), tools[] as with store false
     */
    CHECK(rs_run(&r, &t, "{'model':'m','input':[{'type':'function_call',"
                 "'id':'fc_1','call_id':'c','name':'mcp__mem__read',"
                 "'arguments':'{}'},{'type':'function_call_output',"
                 "'call_id':'c','output':'ok'}]," RTOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    CHECK(ts_responses_stored(&r.rq));
    rs_names(&r, names, sizeof(names));
    CHECK(strcmp(names, "bash,tool_search,call_tool") == 0);
    CHECK(has_text(r.out, r.len, "{\"type\":\"function_call\",\"id\":"
                   "\"fc_1\",\"call_id\":\"c\",\"name\":\"call_tool\""));
    trun_free(&r);

    /* a stored continuation: from the last call, the searches' outputs */
    rs_resume(&t, "resp_2");
    CHECK(rs_run(&r, &t, RHEAD("gpt-4.1") "'previous_response_id':"
                 "'resp_1'," RTOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r.json,
                 "previous_response_id")), "resp_2") == 0);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "input")) == 1);
    trun_free(&r);

    CHECK(rs_run(&r, &t, "{'model':'m','input':[{'role':'user','content':"
                 "'hi'}]," RTOOLS "}") == TS_DECISION_DEFERRED_GATEWAY);
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r.json,
                 "previous_response_id")), "resp_2") == 0);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "input")) == 1);
    trun_free(&r);

    /*
     * with a call of a deferred function in the history: the upstream
     * holds the history as the first call sent it, so nothing of it is
     * rewritten here (the input is the tail), tools[] is the first call's
     */
    CHECK(rs_run(&r, &t, "{'model':'m'," RCALLED RTOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    rs_names(&r, names, sizeof(names));
    CHECK(strcmp(names, "bash,tool_search,call_tool") == 0);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "input")) == 1);
    trun_free(&r);
    rs_resume(&t, NULL);

    /*
     * a conversation the upstream holds: byte-identical unless the
     * operator allows the search in it (a refused continuation would
     * leave the search call open in the conversation)
     */
    CHECK(rs_run(&r, &t, RHEAD("gpt-4.1") "'conversation':'conv_1',"
                 RTOOLS "}") == TS_DECISION_SERVER_STATE);
    CHECK(r.rq.edits.n == 0);
    trun_free(&r);
    t.p.conversations = 1;

    /*
     * allowed, store false too: the search, one call an answer, the call
     * wrapper; its continuation goes on in it with the searches' outputs
     * alone
     */
    CHECK(rs_run(&r, &t, RHEAD("gpt-4.1") "'store':false,'conversation':"
                 "{'id':'conv_1'}," RTOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    CHECK(ts_responses_stored(&r.rq) && r.rq.load_wrapper);
    CHECK(cJSON_IsFalse(cJSON_GetObjectItem(r.json, "parallel_tool_calls")));
    trun_free(&r);

    rs_resume(&t, "resp_2");
    CHECK(rs_run(&r, &t, RHEAD("gpt-4.1") "'conversation':'conv_1',"
                 RTOOLS "}") == TS_DECISION_DEFERRED_GATEWAY);
    CHECK(cJSON_GetObjectItem(r.json, "previous_response_id") == NULL);
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r.json,
                 "conversation")), "conv_1") == 0);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "input")) == 1);
    trun_free(&r);
    rs_resume(&t, NULL);

    /* with previous_response_id, or parallel calls: byte-identical */
    CHECK(rs_run(&r, &t, RHEAD("gpt-4.1") "'conversation':'conv_1',"
                 "'previous_response_id':'resp_1'," RTOOLS "}")
          == TS_DECISION_SERVER_STATE);
    CHECK(r.rq.edits.n == 0);
    trun_free(&r);

    CHECK(rs_run(&r, &t, RHEAD("gpt-4.1") "'store':false,'conversation':"
                 "'conv_1','parallel_tool_calls':true," RTOOLS "}")
          == TS_DECISION_SERVER_STATE);
    trun_free(&r);
    t.p.conversations = 0;

    /* searching on its own: byte-identical */
    CHECK(rs_run(&r, &t, RHEAD("gpt-5.4") "'tools':[" RFN("bash") ","
                 "{'type':'tool_search','execution':'client'}]}")
          == TS_DECISION_CLIENT_MANAGED);
    trun_free(&r);

    CHECK(rs_run(&r, &t, RHEAD("gpt-5.4") "'tools':[{'type':'namespace',"
                 "'name':'mcp__mem','tools':[{'type':'function','name':"
                 "'read','defer_loading':true}]},{'type':'tool_search'}]}")
          == TS_DECISION_CLIENT_MANAGED);
    trun_free(&r);

    /* an openai upstream and a model that has hosted search */
    t.in.upstream = TS_UPSTREAM_OPENAI;
    CHECK(rs_run(&r, &t, RHEAD("gpt-5.4") RTOOLS "}")
          == TS_DECISION_DEFERRED_HOSTED);
    rs_names(&r, names, sizeof(names));
    CHECK(strcmp(names, "bash,mcp__mem__create*,mcp__mem__read*,"
                 "tool_search") == 0);
    trun_free(&r);

    /*
     * ... and the call of a found function whose search the client
     * dropped: the function stays deferred, its search restored before
     * the call, from the call alone
     */
    CHECK(rs_run(&r, &t, "{'model':'gpt-5.4','store':false,'input':[{"
                 "'role':'user','content':'hi'},{'type':'function_call',"
                 "'call_id':'c','name':'mcp__mem__read','arguments':'{}'},"
                 "{'type':'function_call_output','call_id':'c','output':"
                 "'ok'}]," RTOOLS "}")
          == TS_DECISION_DEFERRED_HOSTED);
    rs_names(&r, names, sizeof(names));
    CHECK(strcmp(names, "bash,mcp__mem__create*,mcp__mem__read*,"
                 "tool_search") == 0);
    CHECK(strstr(r.out, "{\"role\":\"user\",\"content\":\"hi\"},"
                 "{\"type\":\"tool_search_call\",\"execution\":\"server\","
                 "\"call_id\":null,\"status\":\"completed\",\"arguments\":"
                 "{\"paths\":[\"mcp__mem__read\"]}},{\"type\":"
                 "\"tool_search_output\",\"execution\":\"server\",\"call_id\":"
                 "null,\"status\":\"completed\",\"tools\":[{\"type\":"
                 "\"function\",\"name\":\"mcp__mem__read\",\"description\":"
                 "\"D mcp__mem__read\",\"parameters\":{}}]},{\"type\":"
                 "\"function_call\"") != NULL);
    CHECK(r.rq.searches_restored == 1);
    trun_free(&r);

    /* ... not in a chain: its upstream holds the search */
    CHECK(rs_run(&r, &t, "{'model':'gpt-5.4','store':false,"
                 "'previous_response_id':'resp_1','input':[{'type':"
                 "'function_call','call_id':'c','name':'mcp__mem__read',"
                 "'arguments':'{}'},{'type':'function_call_output',"
                 "'call_id':'c','output':'ok'}]," RTOOLS "}")
          == TS_DECISION_DEFERRED_HOSTED);
    rs_names(&r, names, sizeof(names));
    CHECK(strcmp(names, "bash,mcp__mem__create*,mcp__mem__read,"
                 "tool_search") == 0);
    CHECK(r.rq.searches_restored == 0);
    trun_free(&r);

    /* ... with references: every function declared, the tool kept */
    CHECK(rs_run(&r, &t, "{'model':'gpt-5.4','input':[{'type':"
                 "'item_reference','id':'fc_1'}]," RTOOLS "}")
          == TS_DECISION_DEFERRED_HOSTED);
    rs_names(&r, names, sizeof(names));
    CHECK(strcmp(names, "bash,mcp__mem__create,mcp__mem__read,"
                 "tool_search") == 0);
    trun_free(&r);

    /* ... and an older model: the gateway's search, or state held */
    CHECK(rs_run(&r, &t, RHEAD("gpt-5") "'store':false," RTOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    trun_free(&r);

    /* not a Responses body: passes */
    CHECK(rs_run(&r, &t, "{'model':'m'," RTOOLS "}")
          == TS_DECISION_PASSTHROUGH);
    trun_free(&r);

    tpol_free(&t);
}


/* a namespace of two members, as Codex sends an MCP server's tools */
#define RNS        "{'type':'namespace','name':'mcp__mem','description':" \
                   "'Memory','tools':[" RFN("create") "," RFN("read") "]}"
#define RNSTOOLS   "'tools':[" RFN("bash") "," RNS ",{'type':'web_search'}]"


/* the output's namespace mcp__mem, compact, or NULL: the caller frees */
static char *
rs_namespace(const trun_t *r, int *at)
{
    cJSON       *t;
    const char  *s;
    int          i;

    i = 0;

    cJSON_ArrayForEach(t, cJSON_GetObjectItem(r->json, "tools")) {
        s = cJSON_GetStringValue(cJSON_GetObjectItem(t, "name"));

        if (s != NULL && strcmp(s, "mcp__mem") == 0) {
            *at = i;
            return cJSON_PrintUnformatted(t);
        }

        i++;
    }

    return NULL;
}


static void
test_responses_namespaces(void)
{
    tpol_t   t;
    trun_t   r;
    char     names[256], *ns;
    int      at;

    tpol_init(&t);
    t.in.upstream = TS_UPSTREAM_COMPATIBLE;

    /* gateway search: the namespace leaves; announced by qualified names */
    CHECK(rs_run(&r, &t, RHEAD("m") "'store':false," RNSTOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    rs_names(&r, names, sizeof(names));
    CHECK(strcmp(names, "bash,web_search,tool_search") == 0);
    CHECK(has_text(r.out, r.len, "mcp__mem__create, mcp__mem__read"));
    CHECK(r.rq.tools_deferred == 2 && r.rq.ix.ntools == 4);
    trun_free(&r);

    /* a call in the input, in its namespace: it alone, after the search */
    CHECK(rs_run(&r, &t, "{'model':'m','store':false,'input':[{'type':"
                 "'function_call','call_id':'c','name':'read','namespace':"
                 "'mcp__mem','arguments':'{}'},{'type':"
                 "'function_call_output','call_id':'c','output':'ok'}],"
                 RNSTOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    ns = rs_namespace(&r, &at);
    CHECK(ns != NULL && at == 3);
    CHECK(ns != NULL && strcmp(ns, "{\"type\":\"namespace\",\"name\":"
                               "\"mcp__mem\",\"description\":\"Memory\","
                               "\"tools\":[{\"type\":\"function\",\"name\":"
                               "\"read\",\"description\":\"D read\","
                               "\"parameters\":{}}]}") == 0);
    free(ns);
    trun_free(&r);

    /* namespaces loaded on demand follow in the order history called */
    CHECK(rs_run(&r, &t, "{'model':'m','store':false,'input':["
                 "{'type':'function_call','call_id':'c','name':'y',"
                 "'namespace':'mcp__b','arguments':'{}'},{'type':"
                 "'function_call_output','call_id':'c','output':'ok'},"
                 "{'type':'function_call','call_id':'d','name':'x',"
                 "'namespace':'mcp__a','arguments':'{}'},{'type':"
                 "'function_call_output','call_id':'d','output':'ok'}],"
                 "'tools':[{'type':'namespace','name':'mcp__a','tools':["
                 RFN("x") "]},{'type':'namespace','name':'mcp__b','tools':["
                 RFN("y") "]}," RFN("bash") "]}")
          == TS_DECISION_DEFERRED_GATEWAY);
    rs_names(&r, names, sizeof(names));
    CHECK(strcmp(names, "bash,tool_search,mcp__b,mcp__a") == 0);
    trun_free(&r);

    /* tool_choice names a member by its bare name: it stays loaded */
    CHECK(rs_run(&r, &t, RHEAD("m") "'store':false,'tool_choice':{'type':"
                 "'function','name':'read'}," RNSTOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    ns = rs_namespace(&r, &at);
    CHECK(ns != NULL && at == 3 && strstr(ns, "\"create\"") == NULL);
    free(ns);
    trun_free(&r);

    /* the bare name, without its namespace, is not the member */
    CHECK(rs_run(&r, &t, "{'model':'m','store':false,'input':[{'type':"
                 "'function_call','call_id':'c','name':'read',"
                 "'arguments':'{}'},{'type':'function_call_output',"
                 "'call_id':'c','output':'ok'}]," RNSTOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    CHECK(rs_namespace(&r, &at) == NULL);
    trun_free(&r);

    /* members without names (escapes), an empty namespace: kept whole */
    CHECK(rs_run(&r, &t, RHEAD("m") "'store':false,'tools':["
                 "{'type':'namespace','name':'mcp\\u005fmem','tools':["
                 RFN("read") "]},{'type':'namespace','name':'e','tools':[]},"
                 RFN("mcp__x__y") "]}")
          == TS_DECISION_DEFERRED_GATEWAY);
    rs_names(&r, names, sizeof(names));
    CHECK(strcmp(names, "mcp_mem,e,tool_search") == 0);
    CHECK(has_text(r.out, r.len, "\"tools\":[{\"type\":\"function\","
                   "\"name\":\"read\""));
    trun_free(&r);

    /* a member kept by a list: the namespace stays, with it alone */
    tpol_add(&t.l.always_load, "mcp__mem__create");
    CHECK(rs_run(&r, &t, RHEAD("m") "'store':false," RNSTOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    ns = rs_namespace(&r, &at);
    CHECK(ns != NULL && at == 1 && strstr(ns, "\"read\"") == NULL
          && strstr(ns, "\"create\"") != NULL);
    free(ns);
    trun_free(&r);
    tpol_free(&t);

    /* hosted: defer_loading on members, tool_search after the last tool */
    tpol_init(&t);
    t.in.upstream = TS_UPSTREAM_OPENAI;
    CHECK(rs_run(&r, &t, RHEAD("gpt-5.4") RNSTOOLS "}")
          == TS_DECISION_DEFERRED_HOSTED);
    rs_names(&r, names, sizeof(names));
    CHECK(strcmp(names, "bash,mcp__mem,web_search,tool_search") == 0);
    CHECK(has_text(r.out, r.len, "\"name\":\"create\",\"description\":"
                   "\"D create\",\"parameters\":{},\"defer_loading\":true}"));
    CHECK(has_text(r.out, r.len, "\"description\":\"Memory\",\"tools\""));
    trun_free(&r);

    /* a hosted search output of the input that declares it: deferred */
    CHECK(rs_run(&r, &t, "{'model':'gpt-5.4','store':false,'input':["
                 "{'type':'tool_search_output','execution':'server',"
                 "'call_id':null,'tools':[{'type':'namespace','name':"
                 "'mcp__mem','tools':[" RFN("read") "]}]},{'type':"
                 "'function_call','call_id':'c','name':'read','namespace':"
                 "'mcp__mem','arguments':'{}'},{'type':"
                 "'function_call_output','call_id':'c','output':'ok'}],"
                 RNSTOOLS "}")
          == TS_DECISION_DEFERRED_HOSTED);
    CHECK(r.rq.tools_deferred == 2);
    trun_free(&r);

    /*
     * the client dropped the searches: one restored a namespace, before
     * the first call of any of its members, with every member the input
     * calls in the client's order; the members stay deferred
     */
    CHECK(rs_run(&r, &t, "{'model':'gpt-5.4','store':false,'input':["
                 "{'type':'function_call','call_id':'c','name':'read',"
                 "'namespace':'mcp__mem','arguments':'{}'},{'type':"
                 "'function_call_output','call_id':'c','output':'ok'},"
                 "{'type':'function_call','call_id':'d','name':'create',"
                 "'namespace':'mcp__mem','arguments':'{}'},{'type':"
                 "'function_call_output','call_id':'d','output':'ok'}],"
                 RNSTOOLS "}")
          == TS_DECISION_DEFERRED_HOSTED);
    CHECK(r.rq.tools_deferred == 2 && r.rq.searches_restored == 1);
    CHECK(has_text(r.out, r.len, "\"input\":[{\"type\":\"tool_search_call\","
                   "\"execution\":\"server\",\"call_id\":null,\"status\":"
                   "\"completed\",\"arguments\":{\"paths\":[\"mcp__mem\"]}},"
                   "{\"type\":\"tool_search_output\",\"execution\":"
                   "\"server\",\"call_id\":null,\"status\":\"completed\","
                   "\"tools\":[{\"type\":\"namespace\",\"name\":"
                   "\"mcp__mem\",\"description\":\"Memory\",\"tools\":["
                   "{\"type\":\"function\",\"name\":\"create\","
                   "\"description\":\"D create\",\"parameters\":{}},"
                   "{\"type\":\"function\",\"name\":\"read\","
                   "\"description\":\"D read\",\"parameters\":{}}]}]},"
                   "{\"type\":\"function_call\",\"call_id\":\"c\""));
    trun_free(&r);

    /*
     * two namespaces whose members' qualified names are alike (mcp +
     * mem__read, mcp__mem + read): the call's namespace picks the member
     */
    CHECK(rs_run(&r, &t, "{'model':'gpt-5.4','store':false,'input':["
                 "{'type':'function_call','call_id':'c','name':'read',"
                 "'namespace':'mcp__mem','arguments':'{}'},{'type':"
                 "'function_call_output','call_id':'c','output':'ok'}],"
                 "'tools':[{'type':'namespace','name':'mcp','tools':["
                 RFN("mem__read") "]},{'type':'namespace','name':'mcp__mem',"
                 "'tools':[" RFN("read") "]}]}")
          == TS_DECISION_DEFERRED_HOSTED);
    CHECK(r.rq.searches_restored == 1);
    CHECK(has_text(r.out, r.len, "\"paths\":[\"mcp__mem\"]"));
    CHECK(has_text(r.out, r.len, "\"completed\",\"tools\":[{\"type\":"
                   "\"namespace\",\"name\":\"mcp__mem\",\"tools\":["
                   "{\"type\":\"function\",\"name\":\"read\","
                   "\"description\":\"D read\",\"parameters\":{}}]}]}"));
    trun_free(&r);

    /* a call whose namespace has escapes: its member declared in place */
    CHECK(rs_run(&r, &t, "{'model':'gpt-5.4','store':false,'input':["
                 "{'type':'function_call','call_id':'c','name':'read',"
                 "'namespace':'mcp\\u005f_mem','arguments':'{}'},{'type':"
                 "'function_call_output','call_id':'c','output':'ok'}],"
                 RNSTOOLS "}")
          == TS_DECISION_DEFERRED_HOSTED);
    CHECK(r.rq.searches_restored == 0 && r.rq.tools_deferred == 1);
    CHECK(has_text(r.out, r.len, "\"D read\",\"parameters\":{}}]"));
    trun_free(&r);

    tpol_free(&t);
}


const tst_case_t  tst_responses_tests[] = {
    { "responses hosted models", test_hosted_models },
    { "responses paths", test_responses_paths },
    { "responses namespaces", test_responses_namespaces },
    { NULL, NULL }
};
