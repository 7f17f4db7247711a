/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Fuzz target: the Responses dialect.  The input's first byte picks the
 * part.  Even: the rest is a request body, read and rewritten under a
 * policy drawn from the next bytes and an upstream the byte picks;
 * properties: a valid body it changes stays valid JSON, every function a
 * function_call item of its input calls is declared (as a tool, or
 * loaded by a tool_search_output of the input; in the namespace the call
 * names, when it names one), and its tools array recalled from a
 * worker's memory gives the decision, counts and bytes of the body read
 * whole.  Odd: the rest is the
 * answer each call of the gateway loop gets, as response.* events or one
 * JSON response; properties: the client's bytes do not depend on where
 * the answer was cut, valid events stay valid, a valid response stays
 * valid JSON, every call's body is valid JSON, and the loop ends within
 * its budget; an answer of odd length runs a stored exchange (store
 * absent: each call goes on from the one before).
 */

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fz.h"
#include "responses/ts_responses.h"


#define FZ_RFN(name)                                                        \
    "{\"type\":\"function\",\"name\":\"" name "\","                       \
    "\"description\":\"Creates entities in the memory graph.\","          \
    "\"parameters\":{\"type\":\"object\"}}"

/* the body the loop runs: store false, or stored (the upstream keeps it) */
#define FZ_RBODY(store)                                                     \
    "{\"model\":\"gpt-4.1\",\"stream\":true," store                      \
    "\"instructions\":\"Be brief.\",\"input\":[{\"role\":\"user\","      \
    "\"content\":\"hi\"}],"                                                \
    "\"tools\":[" FZ_RFN("bash") "," FZ_RFN("mcp__memory__create_entities") \
    "," FZ_RFN("mcp__memory__read_graph") "]}"

static const char  fz_rbody[] = FZ_RBODY("\"store\":false,");
static const char  fz_rbody_stored[] = FZ_RBODY("");


/* 1 when the array has an item whose name is name (tools or loaded) */
static int
fz_named(const cJSON *items, const char *name)
{
    const cJSON  *t, *n;

    cJSON_ArrayForEach(t, items) {
        n = cJSON_GetObjectItemCaseSensitive(t, "name");

        if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0) {
            return 1;
        }
    }

    return 0;
}


/*
 * 1 when the items (tools[], or a tool_search_output's tools) declare
 * the function: by its name, or as a member of the namespace ns
 */
static int
fz_declared(const cJSON *items, const char *ns, const char *name)
{
    const cJSON  *t, *n;

    if (ns == NULL) {
        return fz_named(items, name);
    }

    cJSON_ArrayForEach(t, items) {
        n = cJSON_GetObjectItemCaseSensitive(t, "name");

        if (cJSON_IsString(n) && strcmp(n->valuestring, ns) == 0
            && fz_named(cJSON_GetObjectItemCaseSensitive(t, "tools"), name))
        {
            return 1;
        }
    }

    return 0;
}


/* every function_call of the input names a declared function */
static void
fz_rcheck_calls(const char *p, size_t len)
{
    const cJSON  *it, *n, *type, *tools, *other;
    const char   *ns;
    cJSON        *doc;
    int           ok;

    doc = cJSON_ParseWithLength(p, len);
    tools = cJSON_GetObjectItemCaseSensitive(doc, "tools");

    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "input")) {
        type = cJSON_GetObjectItemCaseSensitive(it, "type");
        n = cJSON_GetObjectItemCaseSensitive(it, "name");

        if (!cJSON_IsString(type) || strcmp(type->valuestring,
                                             "function_call") != 0
            || !cJSON_IsString(n))
        {
            continue;
        }

        ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                                      it, "namespace"));
        ok = fz_declared(tools, ns, n->valuestring);

        cJSON_ArrayForEach(other, cJSON_GetObjectItemCaseSensitive(doc,
                                                                   "input"))
        {
            ok |= fz_declared(cJSON_GetObjectItemCaseSensitive(other,
                                                               "tools"),
                              ns, n->valuestring);
        }

        /* a function the client's own tools never had is the client's */
        fz_assert(ok || !fz_named(tools, "tool_search"),
                  "a call of a function the request does not declare");
    }

    cJSON_Delete(doc);
}


static void
fz_rrequest(uint8_t mode, const uint8_t *data, size_t size)
{
    fz_policy_t    f;
    ts_request_t   rq;
    ts_decision_t  d;
    char          *out;
    size_t         len;

    if (size < FZ_POLICY_BYTES) {
        return;
    }

    fz_policy(&f, data);
    f.in.upstream = (mode & 2) ? TS_UPSTREAM_OPENAI : TS_UPSTREAM_COMPATIBLE;
    data += FZ_POLICY_BYTES;
    size -= FZ_POLICY_BYTES;

    d = fz_rewrite(ts_responses_process, &rq, &f.in, (const char *) data,
                   size, &out, &len);
    fz_check_recalled_request(ts_responses_process, &f.in,
                              (const char *) data, size, &rq, out, len);

    if (d == TS_DECISION_DEFERRED_GATEWAY
        || d == TS_DECISION_DEFERRED_HOSTED)
    {
        /* cJSON, which the check asks too, refuses lone surrogates */
        fz_assert(fz_valid_json(out, len)
                  || !fz_valid_json((const char *) data, size),
                  "a valid body, rewritten invalid");
        fz_rcheck_calls(out, len);

    } else {
        fz_assert(rq.edits.n == 0, "edits without a deferral");
    }

    ts_request_free(&rq);
    free(out);
}


static void
fz_ranswer(uint8_t mode, const char *answer, size_t n)
{
    static const uint8_t  policy[FZ_POLICY_BYTES] = {
        1, 0, 0x8b, 2, 2, 4, 0, 0x0a
    };
    static const fz_dialect_t  d = {
        ts_responses_process, ts_responses_loop_create, fz_rbody,
        sizeof(fz_rbody) - 1, fz_rcheck_calls, 0
    };
    static const fz_dialect_t  stored = {
        ts_responses_process, ts_responses_loop_create, fz_rbody_stored,
        sizeof(fz_rbody_stored) - 1, fz_rcheck_calls, 0
    };
    fz_policy_t                f;

    fz_policy(&f, policy);
    f.p.max_searches = 1 + (mode >> 2 & 3);
    f.in.upstream = TS_UPSTREAM_COMPATIBLE;

    /* an answer of odd length runs a stored exchange */
    fz_whole_and_cut(n & 1 ? &stored : &d, &f, !(mode & 2), 1 + (mode >> 4),
                     answer, n);
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }

    fz_init();

    if (data[0] & 1) {
        fz_ranswer(data[0], (const char *) data + 1, size - 1);

    } else {
        fz_rrequest(data[0], data + 1, size - 1);
    }

    return 0;
}
