/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Fuzz target: the Chat Completions dialect.  The input's first byte
 * picks the part.  Even: the rest is a request body, read and rewritten
 * under a policy drawn from the next bytes; properties: a valid body it
 * changes stays valid JSON (an invalid one may stay invalid: a lone
 * surrogate escape, which cJSON rejects, is kept as it came), its
 * members other than tools and messages are untouched, every function
 * an assistant message calls is declared in its tools, and its tools
 * array recalled from a worker's memory gives the decision, counts and
 * bytes of the body read whole.  Odd: the rest is the
 * answer each call of the gateway loop gets, as a stream or one JSON
 * completion; properties: the client's bytes do not depend on where the
 * answer was cut (byte by byte included), valid chunks stay valid
 * chunks, a valid completion stays valid JSON, every call's body is
 * valid JSON, and the loop ends within its budget.
 */

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fz.h"
#include "chat/ts_chat.h"


#define FZ_FN(name)                                                         \
    "{\"type\":\"function\",\"function\":{\"name\":\"" name "\","         \
    "\"description\":\"Creates entities in the memory graph.\","          \
    "\"parameters\":{\"type\":\"object\"}}}"

static const char  fz_body[] =
    "{\"model\":\"gpt-4.1\",\"stream\":true,\"stream_options\":"
    "{\"include_usage\":true},\"user\":\"u\","
    "\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},"
    "{\"role\":\"user\",\"content\":\"hi\"}],"
    "\"tools\":[" FZ_FN("bash") "," FZ_FN("mcp__memory__create_entities")
    "," FZ_FN("mcp__memory__read_graph") "]}";


/* the names of the functions of a tools array */
static int
fz_declared(const cJSON *tools, const char *name)
{
    const cJSON  *t, *n;

    cJSON_ArrayForEach(t, tools) {
        n = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(t, "function"), "name");

        if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0) {
            return 1;
        }
    }

    return 0;
}


/* every call of an assistant message names a declared function */
static void
fz_check_calls(const char *p, size_t len)
{
    const cJSON  *m, *c, *n, *tools;
    cJSON        *doc;

    doc = cJSON_ParseWithLength(p, len);
    tools = cJSON_GetObjectItemCaseSensitive(doc, "tools");

    cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(doc, "messages")) {
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(m,
                                                               "tool_calls"))
        {
            n = cJSON_GetObjectItemCaseSensitive(
                    cJSON_GetObjectItemCaseSensitive(c, "function"), "name");

            fz_assert(!cJSON_IsString(n) || fz_declared(tools,
                                                        n->valuestring)
                      || !fz_declared(cJSON_GetObjectItemCaseSensitive(
                                          doc, "tools"), "tool_search"),
                      "a call of a function the tools do not declare");
        }
    }

    cJSON_Delete(doc);
}


static void
fz_request(const uint8_t *data, size_t size)
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
    data += FZ_POLICY_BYTES;
    size -= FZ_POLICY_BYTES;

    d = fz_rewrite(ts_chat_process, &rq, &f.in, (const char *) data, size,
                   &out, &len);
    fz_check_recalled_request(ts_chat_process, &f.in, (const char *) data,
                              size, &rq, out, len);

    if (d == TS_DECISION_DEFERRED_GATEWAY) {
        fz_assert(fz_valid_json(out, len)
                  || !fz_valid_json((const char *) data, size),
                  "a valid body, rewritten invalid");
        fz_check_untouched((const char *) data, size, out, len);
        fz_check_calls(out, len);

    } else {
        fz_assert(rq.edits.n == 0, "edits without a deferral");
    }

    ts_request_free(&rq);
    free(out);
}


static void
fz_answer(uint8_t mode, const char *answer, size_t n)
{
    static const uint8_t  policy[FZ_POLICY_BYTES] = {
        1, 0, 0x8b, 2, 2, 4, 0, 0x0a
    };
    static const fz_dialect_t  d = {
        ts_chat_process, ts_chat_loop_create, fz_body, sizeof(fz_body) - 1,
        fz_check_calls, 1
    };
    fz_policy_t                f;

    fz_policy(&f, policy);
    f.p.max_searches = 1 + (mode >> 2 & 3);

    fz_whole_and_cut(&d, &f, !(mode & 2), 1 + (mode >> 4), answer, n);
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }

    fz_init();

    if (data[0] & 1) {
        fz_answer(data[0], (const char *) data + 1, size - 1);

    } else {
        fz_request(data + 1, size - 1);
    }

    return 0;
}
