/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Engine cost per request, in process: a body through what the glue
 * does (ts_request_process, the output's pieces with the new bytes
 * copied into one block, ts_request_free), against two baselines
 * measured in the same run: memcpy of the body (the floor), in the same
 * rounds, and cJSON parse + the same edit + print (a rewrite that
 * re-serialises the document), in rounds of its own after them.  The
 * index borrows memory kept across rounds, as a worker's; each round
 * times the engine twice: with that memory forgotten (all is read), and
 * as a session's next turn, after BEFORE, the turn before it, which the
 * memory then keeps (recalled_us).  Also the engine's peak heap per
 * request, the block of new bytes included, and whether two runs give
 * the same bytes.  Prints one JSON object.
 *
 *   bench_engine FILE BEFORE ROUNDS [OPTIONS OF toolsearch rewrite]
 *
 * Linked with -Wl,--wrap for malloc, calloc, realloc and free: the
 * engine's heap is counted by malloc_usable_size().
 */

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ts_bench.h"
#include "cli/ts_cli.h"
#include "rewrite/ts_gateway.h"


#define TS_HOSTED_TOOL  "{\"type\":\"tool_search_tool_bm25_20251119\"," \
                        "\"name\":\"tool_search_tool_bm25\"}"
#define TS_SEARCH_TOOL  "{\"name\":\"tool_search\",\"description\":" \
                        "\"Search the deferred tools.\",\"input_schema\":" \
                        "{\"type\":\"object\",\"properties\":{\"query\":" \
                        "{\"type\":\"string\"}},\"required\":[\"query\"]}}"


void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);


/* bytes the engine holds now and at most since the last reset */
static size_t  ts_live, ts_peak;


static void
ts_heap_add(void *p)
{
    if (p != NULL) {
        ts_live += malloc_usable_size(p);
        ts_peak = ts_live > ts_peak ? ts_live : ts_peak;
    }
}


void *
__wrap_malloc(size_t n)
{
    void  *p;

    p = __real_malloc(n);
    ts_heap_add(p);

    return p;
}


void *
__wrap_calloc(size_t n, size_t size)
{
    void  *p;

    p = __real_calloc(n, size);
    ts_heap_add(p);

    return p;
}


void *
__wrap_realloc(void *p, size_t n)
{
    size_t   old;
    void    *q;

    old = p ? malloc_usable_size(p) : 0;
    q = __real_realloc(p, n);

    if (q != NULL) {
        ts_live -= old;
        ts_heap_add(q);
    }

    return q;
}


void
__wrap_free(void *p)
{
    if (p != NULL) {
        ts_live -= malloc_usable_size(p);
        __real_free(p);
    }
}


/* what one engine round produced */
typedef struct {
    ts_decision_t   decision;
    size_t          out_len;
    size_t          edits;
    size_t          heap;       /* peak bytes, new bytes included */
    unsigned long   hash;       /* of the output */
} ts_round_t;


static unsigned long
ts_hash(unsigned long h, const char *p, size_t n)
{
    for ( /* void */ ; n; n--) {
        h = h * 33 + (unsigned char) *p++;
    }

    return h;
}


/* the output, over its pieces */
static unsigned long
ts_output_hash(ts_request_t *rq)
{
    ts_pieces_t    it;
    ts_piece_t     p;
    unsigned long  h;

    h = 5381;

    if (ts_request_pieces(rq, &it) == 0) {
        while (ts_pieces_next(&it, &p)) {
            h = ts_hash(h, p.data, p.len);
        }
    }

    return h;
}


/* the glue's calls for one request; rq is kept when keep is given */
static double
ts_engine_round(const ts_input_t *in, const char *body, size_t len,
    ts_round_t *r, ts_request_t *keep)
{
    ts_request_t   rq;
    char          *block;
    double         t0, t;
    int            changed;

    ts_peak = ts_live;
    r->heap = ts_live;
    block = NULL;

    t0 = ts_bench_now_us();
    r->decision = ts_request_process(&rq, in, body, len);
    changed = ts_request_changed(&rq);
    r->out_len = len;

    if (changed) {
        block = ts_bench_output_chain(&rq, &r->out_len);

        if (block == NULL) {
            fprintf(stderr, "bench_engine: no output\n");
            exit(2);
        }
    }

    t = ts_bench_now_us() - t0;

    r->edits = rq.edits.n;
    r->hash = changed ? ts_output_hash(&rq) : ts_hash(5381, body, len);

    t0 = ts_bench_now_us();

    if (keep == NULL) {
        ts_request_free(&rq);
    }

    free(block);
    t += ts_bench_now_us() - t0;
    r->heap = ts_peak - r->heap;

    if (keep != NULL) {
        *keep = rq;
    }

    return t;
}


/* a string member, "" when absent */
static const char *
ts_cjson_str(const cJSON *o, const char *key)
{
    const char  *s;

    s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));

    return s ? s : "";
}


static int
ts_is_hosted_name(const cJSON *o, const char *key)
{
    return strncmp(ts_cjson_str(o, key), "tool_search_tool_",
                   sizeof("tool_search_tool_") - 1) == 0;
}


static void
ts_cjson_defer(cJSON *doc, const ts_request_t *rq)
{
    cJSON   *tools, *t;
    size_t   i;

    tools = cJSON_GetObjectItemCaseSensitive(doc, "tools");
    i = 0;

    cJSON_ArrayForEach(t, tools) {
        if (i < rq->ix.ntools && rq->defer[i++]) {
            cJSON_AddTrueToObject(t, "defer_loading");
        }
    }

    cJSON_AddItemToArray(tools, cJSON_Parse(TS_HOSTED_TOOL));
}


/* deferred tools out, the search tool in, their names in the system */
static void
ts_cjson_gateway(cJSON *doc, const ts_request_t *rq)
{
    cJSON   *tools, *system, *block;
    char     names[TS_GATEWAY_ANNOUNCE_MAX];
    size_t   i, n;

    tools = cJSON_GetObjectItemCaseSensitive(doc, "tools");
    n = 0;
    names[0] = '\0';

    for (i = rq->ix.ntools; i-- > 0; ) {
        if (rq->defer[i]) {
            n += (size_t) snprintf(names + n, sizeof(names) - n, "%s\n",
                     ts_cjson_str(cJSON_GetArrayItem(tools, (int) i),
                                  "name"));
            n = n < sizeof(names) ? n : sizeof(names) - 1;
            cJSON_DeleteItemFromArray(tools, (int) i);
        }
    }

    cJSON_AddItemToArray(tools, cJSON_Parse(TS_SEARCH_TOOL));

    system = cJSON_GetObjectItemCaseSensitive(doc, "system");
    block = cJSON_CreateObject();
    cJSON_AddStringToObject(block, "type", "text");
    cJSON_AddStringToObject(block, "text", names);

    if (cJSON_IsArray(system)) {
        cJSON_AddItemToArray(system, block);

    } else {
        cJSON_Delete(block);
        cJSON_AddStringToObject(doc, "system", names);
    }
}


static cJSON *
ts_cjson_text(const char *text)
{
    cJSON  *b;

    b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "type", "text");
    cJSON_AddStringToObject(b, "text", text);

    return b;
}


/* tool_reference blocks of a content array become text */
static void
ts_cjson_refs(cJSON *content)
{
    cJSON  *b, *next;
    int     i;

    i = 0;

    for (b = content ? content->child : NULL; b; b = next, i++) {
        next = b->next;

        if (strcmp(ts_cjson_str(b, "type"), "tool_reference") == 0) {
            cJSON_ReplaceItemInArray(content, i,
                                     ts_cjson_text("Tool loaded."));
        }
    }
}


/* hosted search blocks out or to text, references to text */
static void
ts_cjson_blocks(cJSON *content)
{
    cJSON       *b, *next;
    const char  *type;
    int          i;

    i = 0;

    for (b = content ? content->child : NULL; b; b = next) {
        next = b->next;
        type = ts_cjson_str(b, "type");

        if (strcmp(type, "server_tool_use") == 0
            && ts_is_hosted_name(b, "name"))
        {
            cJSON_DeleteItemFromArray(content, i);
            continue;
        }

        if (strcmp(type, "tool_search_tool_result") == 0) {
            cJSON_ReplaceItemInArray(content, i,
                                     ts_cjson_text("Tools found."));

        } else if (strcmp(type, "tool_result") == 0) {
            ts_cjson_refs(cJSON_GetObjectItemCaseSensitive(b, "content"));
        }

        i++;
    }
}


static void
ts_cjson_strip(cJSON *doc)
{
    cJSON  *tools, *t, *next, *m;
    int     i;

    tools = cJSON_GetObjectItemCaseSensitive(doc, "tools");
    i = 0;

    for (t = tools ? tools->child : NULL; t; t = next) {
        next = t->next;

        if (ts_is_hosted_name(t, "type")) {
            cJSON_DeleteItemFromArray(tools, i);
            continue;
        }

        cJSON_DeleteItemFromObjectCaseSensitive(t, "defer_loading");
        i++;
    }

    cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(doc, "messages")) {
        ts_cjson_blocks(cJSON_GetObjectItemCaseSensitive(m, "content"));
    }
}


/* parse, the edit the engine made, print */
static double
ts_cjson_round(const ts_request_t *rq, const char *body, size_t len,
    size_t *out_len)
{
    cJSON   *doc;
    char    *out;
    double   t0, t;

    t0 = ts_bench_now_us();
    doc = cJSON_ParseWithLength(body, len);

    if (doc == NULL) {
        fprintf(stderr, "bench_engine: cJSON cannot parse the body\n");
        exit(2);
    }

    if (rq->decision == TS_DECISION_DEFERRED_HOSTED) {
        ts_cjson_defer(doc, rq);

    } else if (rq->decision == TS_DECISION_DEFERRED_GATEWAY) {
        ts_cjson_gateway(doc, rq);
    }

    if (rq->stripped) {
        ts_cjson_strip(doc);
    }

    out = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    t = ts_bench_now_us() - t0;

    *out_len = out ? strlen(out) : 0;
    cJSON_free(out);

    return t;
}


/* the memory keeps nothing to recall: the next body is read whole */
static void
ts_forget(ts_index_mem_t *mem)
{
    ts_recall_free(&mem->tools);
    memset(&mem->messages_seen.n, 0, sizeof(mem->messages_seen.n));
    mem->messages_seen.len = 0;
}


int
main(int argc, char **argv)
{
    static ts_cli_conf_t   c;
    static ts_index_mem_t  mem;
    ts_input_t             in;
    ts_request_t           rq;
    ts_round_t             first, r;
    const char            *path;
    char                  *body, *before, *dst;
    double                *t[4], med[4];
    size_t                 len, before_len, rounds, i, heap, cjson_len;
    int                    same;

    if (argc < 4 || ts_cli_conf_parse(&c, argc - 4, argv + 4, &path) != 0
        || (rounds = strtoul(argv[3], NULL, 10)) == 0)
    {
        fprintf(stderr, "usage: bench_engine FILE BEFORE ROUNDS "
                "[OPTIONS]\n");
        return 2;
    }

    body = ts_bench_load(argv[1], &len);
    before = ts_bench_load(argv[2], &before_len);
    dst = malloc(len + 1);

    for (i = 0; i < 4; i++) {
        t[i] = malloc(rounds * sizeof(double));
        if (t[i] == NULL || dst == NULL) {
            return 2;
        }
    }

    /* the decision the cJSON baseline repeats, and the reference output */
    ts_engine_round(&c.in, body, len, &first, &rq);

    /* the index in memory the worker lends, as the glue does */
    in = c.in;
    in.index_mem = &mem;
    mem.tools.size = TS_RECALL_SIZE;
    same = 1;
    heap = 0;

    for (i = 0; i < rounds; i++) {
        t[0][i] = ts_bench_memcpy(body, dst, len);
        ts_forget(&mem);
        t[1][i] = ts_engine_round(&in, body, len, &r, NULL);
        same &= r.hash == first.hash && r.out_len == first.out_len;

        /* the same conversation running: the turn before is kept whole */
        (void) ts_engine_round(&in, before, before_len, &r, NULL);
        t[3][i] = ts_engine_round(&in, body, len, &r, NULL);
        same &= r.hash == first.hash && r.out_len == first.out_len;
        heap = r.heap;      /* the last: the lent memory has grown */
    }

    /*
     * cJSON's rounds come after: the hundred thousand nodes a round frees
     * made the next round's first malloc sort them, and the engine round
     * that followed paid for it.
     */
    for (i = 0; i < rounds; i++) {
        t[2][i] = ts_cjson_round(&rq, body, len, &cjson_len);
    }

    for (i = 0; i < 4; i++) {
        med[i] = ts_bench_median(t[i], rounds);
    }

    printf("{\"bytes\":%zu,\"rounds\":%zu,\"decision\":\"%s\","
           "\"out_bytes\":%zu,\"edits\":%zu,\"memcpy_us\":%.2f,"
           "\"engine_us\":%.2f,\"recalled_us\":%.2f,\"cjson_us\":%.2f,"
           "\"cjson_bytes\":%zu,\"heap_bytes\":%zu,\"deterministic\":%s}\n",
           len, rounds, ts_decision_name(first.decision), first.out_len,
           first.edits, med[0], med[1], med[3], med[2], cjson_len, heap,
           same ? "true" : "false");

    ts_request_free(&rq);

    for (i = 0; i < 4; i++) {
        free(t[i]);
    }

    ts_index_mem_free(&mem);
    ts_cli_conf_free(&c);
    free(dst);
    free(body);

    return 0;
}
