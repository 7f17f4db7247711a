/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Formats and the Chat Completions dialect: the format a URI names, what
 * the request side decides and writes, and one round of the loop over a
 * streamed answer whose search call is held back.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tst.h"
#include "tpol.h"
#include "rewrite/ts_format.h"
#include "chat/ts_chat.h"
#include "responses/ts_responses.h"


#define FORMAT(s)  ts_format_of_uri(s, strlen(s))

#define FN(n)      "{'type':'function','function':{'name':'" n "'," \
                   "'description':'D " n "','parameters':{}}}"
#define CHEAD      "{'model':'gpt-4.1','messages':[{'role':'system'," \
                   "'content':'Be brief.'},{'role':'user','content':'hi'}],"
#define CTOOLS     "'tools':[" FN("bash") "," FN("mcp__mem__create") "," \
                   FN("mcp__mem__read") "]"


static void
test_format_of_uri(void)
{
    CHECK(FORMAT("/v1/chat/completions") == TS_FORMAT_CHAT);
    CHECK(FORMAT("/openai/deployments/x/chat/completions/")
          == TS_FORMAT_CHAT);
    CHECK(FORMAT("/v1/responses") == TS_FORMAT_RESPONSES);
    CHECK(FORMAT("/v1/messages") == TS_FORMAT_MESSAGES);
    CHECK(FORMAT("/") == TS_FORMAT_MESSAGES);
    CHECK(FORMAT("/v1/completions") == TS_FORMAT_MESSAGES);
    CHECK(strcmp(ts_format_name(TS_FORMAT_CHAT), "chat_completions") == 0);
}


/* a Chat Completions body through the request side */
#define chat_run(r, t, body)  trun_with(r, t, body, ts_chat_process)


/* the names of the output's functions, comma-separated */
static void
chat_names(const trun_t *r, char *out, size_t cap)
{
    cJSON  *t;
    size_t  n;

    out[0] = '\0';
    n = 0;

    cJSON_ArrayForEach(t, cJSON_GetObjectItem(r->json, "tools")) {
        n += snprintf(out + n, cap - n, "%s%s", n ? "," : "",
                      cJSON_GetStringValue(cJSON_GetObjectItem(
                          cJSON_GetObjectItem(t, "function"), "name")));
    }
}


static const char *
chat_system(const trun_t *r)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(
               cJSON_GetObjectItem(r->json, "messages"), 0), "content"));
}


static void
test_chat_request(void)
{
    tpol_t  t;
    trun_t  r;
    char    names[256];

    tpol_init(&t);
    t.in.upstream = TS_UPSTREAM_ANTHROPIC;

    /* any upstream: the gateway runs the search */
    CHECK(chat_run(&r, &t, CHEAD CTOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    chat_names(&r, names, sizeof(names));
    CHECK(strcmp(names, "bash,tool_search,call_tool") == 0);
    CHECK(strstr(chat_system(&r), "Be brief.\n\nCall tool_search") != NULL);
    CHECK(strstr(chat_system(&r), "mcp__mem__create, mcp__mem__read.")
          != NULL);
    trun_free(&r);

    /*
     * toolsearch_found_tools tools: called in history, named by
     * tool_choice: after the search tool, history's calls first
     */
    t.p.found_tools = TS_FOUND_TOOLS;

    CHECK(chat_run(&r, &t, "{'model':'m','messages':[{'role':'user',"
                   "'content':'hi'},{'role':'assistant','tool_calls':[{"
                   "'id':'c1','type':'function','function':{'name':"
                   "'mcp__mem__read','arguments':'{}'}}]},{'role':'tool',"
                   "'tool_call_id':'c1','content':'ok'}],"
                   "'tool_choice':{'type':'function','function':{"
                   "'name':'mcp__mem__create'}}," CTOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    chat_names(&r, names, sizeof(names));
    CHECK(strcmp(names, "bash,tool_search,mcp__mem__read,mcp__mem__create")
          == 0);
    /* no system message: one of the gateway's opens the conversation */
    CHECK(strncmp(chat_system(&r), "Call tool_search", 16) == 0);
    trun_free(&r);

    /*
     * found tools in the order history first called them, not the
     * client's: a tool found later goes after those found before it
     */
    CHECK(chat_run(&r, &t, "{'model':'m','messages':[{'role':'user',"
                   "'content':'hi'},{'role':'assistant','tool_calls':[{"
                   "'id':'c1','type':'function','function':{'name':"
                   "'mcp__mem__read','arguments':'{}'}}]},{'role':'tool',"
                   "'tool_call_id':'c1','content':'ok'},{'role':"
                   "'assistant','tool_calls':[{'id':'c2','type':'function',"
                   "'function':{'name':'mcp__mem__create','arguments':"
                   "'{}'}},{'id':'c3','type':'function','function':{"
                   "'name':'mcp__mem__read','arguments':'{}'}}]},{'role':"
                   "'tool','tool_call_id':'c2','content':'ok'},{'role':"
                   "'tool','tool_call_id':'c3','content':'ok'}],"
                   CTOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    chat_names(&r, names, sizeof(names));
    CHECK(strcmp(names, "bash,tool_search,mcp__mem__read,mcp__mem__create")
          == 0);
    trun_free(&r);
    t.p.found_tools = TS_FOUND_WRAPPER;

    /* a client function named like the wrapper: found ones load as tools */
    CHECK(chat_run(&r, &t, CHEAD "'tools':[" FN("call_tool") ","
                   FN("mcp__mem__create") "," FN("mcp__mem__read") "]}")
          == TS_DECISION_DEFERRED_GATEWAY);
    chat_names(&r, names, sizeof(names));
    CHECK(strcmp(names, "call_tool,tool_search") == 0);
    trun_free(&r);

    /* what passes untouched */
    CHECK(chat_run(&r, &t, CHEAD "'n':2," CTOOLS "}")
          == TS_DECISION_PASSTHROUGH);
    CHECK(r.rq.edits.n == 0);
    trun_free(&r);

    CHECK(chat_run(&r, &t, "{'model':'m','messages':{}," CTOOLS "}")
          == TS_DECISION_PASSTHROUGH);
    trun_free(&r);

    CHECK(chat_run(&r, &t, CHEAD "'tools':[" FN("tool_search") ","
                   FN("mcp__mem__read") "]}")
          == TS_DECISION_CLIENT_MANAGED);
    trun_free(&r);

    tpol_free(&t);
}


/*
 * A lone surrogate escape is JSON by RFC 8259's grammar but not Unicode,
 * and cJSON rejects it: the rewrite keeps it as it came, so the output is
 * what fuzz_chat's validity check calls invalid only because the input
 * already was.
 */
static void
test_chat_lone_surrogate(void)
{
    tpol_t         t;
    ts_request_t   rq;
    ts_val_t       v;
    char          *body, *out;
    size_t         len, n, kept;

    tpol_init(&t);
    body = tst_quote("{'model':'m','messages':[{'role':'system',"
                     "'content':'Be brief. \\udf89'},{'role':'user',"
                     "'content':'hi'}]," CTOOLS "}", &len);

    CHECK(ts_chat_process(&rq, &t.in, body, len)
          == TS_DECISION_DEFERRED_GATEWAY);
    n = ts_request_size(&rq);
    out = tst_alloc(n + 1);
    CHECK(ts_request_render(&rq, out) == 0);

    /* the body up to its escape's end comes out byte for byte */
    kept = strstr(body, "\\udf89") + 6 - body;
    CHECK(n > kept && memcmp(out, body, kept) == 0);
    CHECK(ts_value_parse(out, n, &v) == TS_OK);
    CHECK(has_text(out, n, "Be brief. \\udf89\\n\\nCall tool_search"));
    CHECK(cJSON_ParseWithLength(body, len) == NULL);
    CHECK(cJSON_ParseWithLength(out, n) == NULL);

    free(out);
    free(body);
    ts_request_free(&rq);
    tpol_free(&t);
}


/* a stream whose answer is a search call, then the next call's body */
static void
test_chat_loop_round(void)
{
    static const char  answer[] =
        "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":"
        "{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}"
        "\n\n"
        "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":"
        "{\"tool_calls\":[{\"index\":0,\"id\":\"s1\",\"type\":\"function\","
        "\"function\":{\"name\":\"tool_search\",\"arguments\":\"\"}}]},"
        "\"finish_reason\":null}]}\n\n"
        "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":"
        "{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":"
        "\"{\\\"query\\\":\\\"select:mcp__mem__read\\\"}\"}}]},"
        "\"finish_reason\":null}]}\n\n"
        "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},"
        "\"finish_reason\":\"tool_calls\"}]}\n\n"
        "data: [DONE]\n\n";
    static const char  wrapped_bad[] =
        "data: {\"id\":\"c2\",\"choices\":[{\"index\":0,\"delta\":"
        "{\"tool_calls\":[{\"index\":0,\"id\":\"w1\",\"type\":\"function\","
        "\"function\":{\"name\":\"call_tool\",\"arguments\":"
        "\"{\\\"name\\\":\\\"mcp__mem__read\\\",\\\"arguments\\\":1}\"}}]},"
        "\"finish_reason\":null}]}\n\n"
        "data: {\"id\":\"c2\",\"choices\":[{\"index\":0,\"delta\":{},"
        "\"finish_reason\":\"tool_calls\"}]}\n\n"
        "data: [DONE]\n\n";
    static const char  wrapped_ok[] =
        "data: {\"id\":\"c3\",\"choices\":[{\"index\":0,\"delta\":"
        "{\"tool_calls\":[{\"index\":0,\"id\":\"w2\",\"type\":\"function\","
        "\"function\":{\"name\":\"call_tool\",\"arguments\":"
        "\"{\\\"name\\\":\\\"mcp__mem__read\\\",\"}}]},"
        "\"finish_reason\":null}]}\n\n"
        "data: {\"id\":\"c3\",\"choices\":[{\"index\":0,\"delta\":"
        "{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":"
        "\"\\\"arguments\\\":{\\\"k\\\":1}}\"}}]},"
        "\"finish_reason\":null}]}\n\n"
        "data: {\"id\":\"c3\",\"choices\":[{\"index\":0,\"delta\":{},"
        "\"finish_reason\":\"tool_calls\"}]}\n\n"
        "data: [DONE]\n\n";
    tpol_t        t;
    ts_loop_t    *lp;
    ts_buf_t      call, out;
    ts_request_t  rq;
    char         *body;
    size_t        len, i;

    tpol_init(&t);
    body = tst_quote(CHEAD "'stream':true," CTOOLS "}", &len);
    CHECK(ts_chat_process(&rq, &t.in, body, len)
          == TS_DECISION_DEFERRED_GATEWAY);
    lp = ts_chat_loop_create(&t.in, &rq);
    ts_request_free(&rq);
    ts_buf_init(&call, 0);
    ts_buf_init(&out, 0);

    CHECK(lp != NULL && ts_loop_request(lp, &call) == 0);
    ts_loop_start(lp, 1);

    /* byte by byte: the search call never reaches the client */
    for (i = 0; i < sizeof(answer) - 1; i++) {
        CHECK(ts_loop_feed(lp, answer + i, 1, &out) == 0);
    }

    CHECK(ts_loop_end(lp, &out) == TS_LOOP_AGAIN);
    CHECK(!has_text(out.p, out.len, "tool_search"));
    CHECK(!has_text(out.p, out.len, "[DONE]"));
    CHECK(ts_loop_searches(lp) == 1 && ts_loop_loaded(lp) == 1);

    CHECK(ts_loop_request(lp, &call) == 0);
    CHECK(has_text(call.p, call.len, "\"tool_call_id\":\"s1\""));
    CHECK(has_text(call.p, call.len, "Loaded: mcp__mem__read."));
    CHECK(ts_loop_calls(lp) == 2);

    /* the call wrapper: the definition as text, tools[] as before */
    CHECK(has_text(call.p, call.len, "\\n\\nTool: mcp__mem__read\\n"
                   "Description: D mcp__mem__read\\nInput schema: {}"));
    CHECK(!has_text(call.p, call.len, "\"name\":\"mcp__mem__read\""));
    CHECK(has_text(call.p, call.len, "{\"type\":\"function\",\"function\":"
                   "{\"name\":\"call_tool\",\"description\":"));

    /* an invalid call of the wrapper: answered here, with why */
    ts_buf_reset(&out);
    ts_loop_start(lp, 1);
    CHECK(ts_loop_feed(lp, wrapped_bad, sizeof(wrapped_bad) - 1, &out) == 0);
    CHECK(ts_loop_end(lp, &out) == TS_LOOP_AGAIN);
    CHECK(!has_text(out.p, out.len, "call_tool"));
    CHECK(!has_text(out.p, out.len, "finish_reason\":\"tool_calls"));
    CHECK(ts_loop_request(lp, &call) == 0);
    CHECK(has_text(call.p, call.len, "{\"role\":\"tool\",\"tool_call_id\":"
                   "\"w1\",\"content\":\"The call did not run: the input "
                   "of call_tool is an object"));
    CHECK(has_text(call.p, call.len, "{\"id\":\"w1\",\"type\":\"function\","
                   "\"function\":{\"name\":\"call_tool\",\"arguments\":"
                   "\"{\\\"name\\\":\\\"mcp__mem__read\\\",\\\"arguments"
                   "\\\":1}\"}}"));

    /* a valid one: the client's call of the tool, in one delta */
    ts_buf_reset(&out);
    ts_loop_start(lp, 1);

    for (i = 0; i < sizeof(wrapped_ok) - 1; i++) {
        CHECK(ts_loop_feed(lp, wrapped_ok + i, 1, &out) == 0);
    }

    CHECK(ts_loop_end(lp, &out) == TS_LOOP_DONE);
    CHECK(!has_text(out.p, out.len, "call_tool"));
    CHECK(has_text(out.p, out.len, "\"tool_calls\":[{\"index\":0,\"id\":"
                   "\"w2\",\"type\":\"function\",\"function\":{\"name\":"
                   "\"mcp__mem__read\",\"arguments\":\"{\\\"k\\\":1}\"}}]"));
    CHECK(has_text(out.p, out.len, "\"finish_reason\":\"tool_calls\""));
    CHECK(has_text(out.p, out.len, "data: [DONE]"));
    CHECK(ts_loop_calls(lp) == 3);

    ts_buf_free(&call);
    ts_buf_free(&out);
    ts_loop_free(lp);
    free(body);
    tpol_free(&t);
}


/* the one-pass readers the dialect reads a body with */
static void
test_chat_readers(void)
{
    static const char *const  keys[] = { "a", "b" };
    static const char         doc[] = " {\"b\":[1,{\"a\":2},3],\"a\":\"x\"} ";
    ts_val_t                  v[2], top, *items, *m;
    size_t                    n;

    CHECK(ts_document_members(doc, sizeof(doc) - 1, keys, 2, v, &top)
          == TS_OK);
    CHECK(v[0].kind == TS_STRING && v[1].kind == TS_ARRAY);
    CHECK(top.off == 1 && top.len == sizeof(doc) - 3);

    CHECK(ts_items_members(doc, &v[1], keys, 2, &items, &m, &n) == TS_OK);
    CHECK(n == 3 && items[1].kind == TS_OBJECT && items[2].kind == TS_NUMBER);
    CHECK(m[2].kind == TS_NUMBER && m[3].kind == TS_NONE
          && m[0].kind == TS_NONE && m[4].kind == TS_NONE);
    free(items);
    free(m);

    /* what ts_value_parse refuses, or a document that is no object */
    CHECK(ts_document_members("{} x", 4, keys, 2, v, &top) == TS_ERR_SYNTAX);
    CHECK(ts_document_members("{\"a\":1", 6, keys, 2, v, &top)
          == TS_ERR_SYNTAX);
    CHECK(ts_document_members("[1]", 3, keys, 2, v, &top) == TS_ERR_TYPE);
    CHECK(ts_document_members("[1", 2, keys, 2, v, &top) == TS_ERR_SYNTAX);
    CHECK(ts_document_members("  ", 2, keys, 2, v, &top) == TS_ERR_SYNTAX);
    CHECK(ts_document_members("{\"a\":\"\xff\"}", 8, keys, 2, v, &top)
          == TS_ERR_SYNTAX);
}


/*
 * A body through the request side with the worker's memory and without:
 * the same decision, index and output.  *recalled: the tools the memory
 * gave.
 */
typedef ts_decision_t (*tst_process_pt)(ts_request_t *rq,
    const ts_input_t *in, const char *body, size_t len);

static int
tst_agree(tst_process_pt process, tpol_t *t, ts_index_mem_t *mem,
    const char *buf, size_t len, size_t *recalled)
{
    ts_input_t     in;
    ts_request_t   a, b;
    char          *oa, *ob;
    size_t         la, lb;
    int            same;

    in = t->in;
    in.index_mem = mem;
    same = process(&a, &in, buf, len) == process(&b, &t->in, buf, len);
    same = same && tst_index_eq(&a.ix, &b.ix);
    *recalled = a.ix.tools_recalled;

    la = ts_request_size(&a);
    lb = ts_request_size(&b);
    oa = tst_alloc(la + 1);
    ob = tst_alloc(lb + 1);
    same = same && la == lb && ts_request_render(&a, oa) == 0
           && ts_request_render(&b, ob) == 0 && memcmp(oa, ob, la) == 0;

    free(oa);
    free(ob);
    ts_request_free(&a);
    ts_request_free(&b);

    return same;
}


/*
 * The tools array recalled from the worker's memory (kept: the format's
 * memory in mem) gives what the body read whole gives: the fixtures
 * whole (recalled from the second time), each cut at every 97th byte and
 * with a byte changed there while the memory holds the whole body's
 * array; and a Messages array of the same bytes is never taken for it,
 * nor it for one.
 */
static void
tst_recall(tst_process_pt process, const char *const *paths, size_t npaths,
    int responses)
{
    static const char   junk[] = "\"\\\001x}]";
    ts_index_mem_t      mem;
    ts_recall_t        *kept;
    tst_doc_t           d;
    tpol_t              t;
    char               *buf;
    size_t              i, off, n, bad, hits;

    tpol_init(&t);
    memset(&mem, 0, sizeof(mem));
    mem.tools.size = TS_RECALL_SIZE;
    mem.chat_tools.size = TS_RECALL_SIZE;
    mem.responses_tools.size = TS_RECALL_SIZE;
    kept = responses ? &mem.responses_tools : &mem.chat_tools;

    for (i = 0; i < npaths; i++) {
        tst_note("%s", paths[i]);
        CHECK(tst_doc_load(&d, paths[i]) == 0);
        CHECK(tst_agree(process, &t, &mem, d.buf, d.len, &n) && n == 0);
        CHECK(tst_agree(process, &t, &mem, d.buf, d.len, &n) && n > 0
              && n == kept->mru->n);

        /* the Messages scan of the same bytes reads them itself */
        CHECK(tst_recalled(&mem, d.buf, d.len) == 0);

        buf = tst_dup(d.buf, d.len);
        bad = 0;
        hits = 0;

        for (off = 0; off < d.len; off += 97) {
            bad += !tst_agree(process, &t, &mem, buf, off, &n);
            buf[off] = junk[off % (sizeof(junk) - 1)];
            bad += !tst_agree(process, &t, &mem, buf, d.len, &n);
            hits += n > 0;
            buf[off] = d.buf[off];

            /* a broken body's array, if kept, must not stay the recent */
            CHECK(tst_agree(process, &t, &mem, d.buf, d.len, &n) && n > 0);
        }

        CHECK(bad == 0 && hits > 0);
        free(buf);

        /* recall off: the same, and what was kept is dropped */
        mem.forget = 1;
        CHECK(tst_agree(process, &t, &mem, d.buf, d.len, &n) && n == 0
              && kept->n == 0);
        mem.forget = 0;
        tst_doc_free(&d);
    }

    ts_index_mem_free(&mem);
    tpol_free(&t);
}


/* a body's output as a C string, for byte comparisons */
static char *
chat_out(const trun_t *r)
{
    char  *s;

    s = malloc(r->len + 1);
    if (s != NULL) {
        memcpy(s, r->out, r->len);
        s[r->len] = '\0';
    }

    return s;
}


#define WHIST  "{'model':'m','messages':[{'role':'user','content':'hi'}," \
               "{'role':'assistant','content':'On it.','tool_calls':[{" \
               "'id':'call_7','type':'function','function':{'name':" \
               "'mcp__mem__read','arguments':'{\\\"k\\\": 1}'}}]},{'role':" \
               "'tool','tool_call_id':'call_7','content':'ok'}"


/*
 * The call wrapper's next turn: a call of a deferred function goes back
 * as the call of the wrapper, its search restored before it, the same
 * bytes on the turn after; arguments that are no object load the function
 */
static void
test_chat_wrapper_history(void)
{
    tpol_t   t;
    trun_t   r;
    char     names[256], *one, *two, *cut;

    tpol_init(&t);

    CHECK(chat_run(&r, &t, WHIST "]," CTOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    chat_names(&r, names, sizeof(names));
    CHECK(strcmp(names, "bash,tool_search,call_tool") == 0);
    one = chat_out(&r);
    CHECK(has_text(r.out, r.len, "{\"role\":\"user\",\"content\":\"hi\"},"
          "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":"
          "\"call_search_call_7\",\"type\":\"function\",\"function\":{"
          "\"name\":\"tool_search\",\"arguments\":\"{\\\"query\\\":"
          "\\\"select:mcp__mem__read\\\"}\"}}]},{\"role\":\"tool\","
          "\"tool_call_id\":\"call_search_call_7\",\"content\":\"Loaded: "
          "mcp__mem__read. They are not in your tool list"));
    CHECK(has_text(r.out, r.len, "\\n\\nTool: mcp__mem__read\\nDescription: "
          "D mcp__mem__read\\nInput schema: {}\"},{\"role\":\"assistant\","
          "\"content\":\"On it.\",\"tool_calls\":[{\"id\":\"call_7\","
          "\"type\":\"function\",\"function\":{\"name\":\"call_tool\","
          "\"arguments\":\"{\\\"name\\\":\\\"mcp__mem__read\\\","
          "\\\"arguments\\\":{\\\"k\\\": 1}}\"}}]}"));
    trun_free(&r);

    /* a turn later: everything before the new turn as it was */
    CHECK(chat_run(&r, &t, WHIST ",{'role':'assistant','content':'Done.'},"
                   "{'role':'user','content':'more'}]," CTOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    two = chat_out(&r);
    cut = one ? strstr(one, ",{\"role\":\"tool\",\"tool_call_id\":\"call_7\"")
              : NULL;
    CHECK(cut != NULL && two != NULL
          && strncmp(one, two, cut - one) == 0);
    free(one);
    free(two);
    trun_free(&r);

    /* arguments that are no JSON object: the function loads as a tool */
    CHECK(chat_run(&r, &t, "{'model':'m','messages':[{'role':'user',"
                   "'content':'hi'},{'role':'assistant','tool_calls':[{"
                   "'id':'c1','type':'function','function':{'name':"
                   "'mcp__mem__read','arguments':'not json'}}]},{'role':"
                   "'tool','tool_call_id':'c1','content':'ok'}]," CTOOLS "}")
          == TS_DECISION_DEFERRED_GATEWAY);
    chat_names(&r, names, sizeof(names));
    CHECK(strcmp(names, "bash,tool_search,call_tool,mcp__mem__read") == 0);
    CHECK(!has_text(r.out, r.len, "call_search_"));
    trun_free(&r);

    tpol_free(&t);
}


static void
test_chat_recall(void)
{
    static const char *const  paths[] = { TST_CHAT "/opencode-002.json",
                                          TST_CHAT "/kilo-001.json" };

    tst_recall(ts_chat_process, paths, 2, 0);
}


/* the same for Responses, in a memory of its own */
static void
test_responses_recall(void)
{
    static const char *const  paths[] = {
        TS_FIXTURES "/openai-responses/opencode/002.json",
        TS_FIXTURES "/openai-responses/kilo/001.json" };

    tst_recall(ts_responses_process, paths, 2, 1);
}


const tst_case_t  tst_chat_tests[] = {
    { "chat recall", test_chat_recall },
    { "responses recall", test_responses_recall },
    { "chat readers", test_chat_readers },
    { "format of uri", test_format_of_uri },
    { "chat request", test_chat_request },
    { "chat lone surrogate", test_chat_lone_surrogate },
    { "chat loop round", test_chat_loop_round },
    { "chat wrapper history", test_chat_wrapper_history },
    { NULL, NULL }
};
