/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * build/toolsearch: the engine from the command line.
 *
 *   toolsearch inspect [FILE]            prints the request index as JSON
 *   toolsearch rewrite [OPTIONS] [FILE]  applies the gateway's policy
 *   toolsearch search [OPTIONS] QUERY    searches a tool catalogue
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ts_cli.h"
#include "ts_request.h"


/* the policy of a rewrite run, built from options like the directives */
typedef struct {
    ts_policy_t       policy;
    ts_input_t        in;
    ts_match_list_t   always_load;
    ts_match_list_t   defer_tools;
    ts_match_list_t   client_search_tools;
    ts_match_list_t   unsupported_models;
    ts_match_list_t   windows;
    unsigned long     tokens[64];
    char              betas[4096];
    int               own_client_search_tools;
    int               own_unsupported_models;
} ts_cli_conf_t;


char *
ts_read_all(FILE *f, size_t *len)
{
    char    *buf, *p;
    size_t   cap, n;

    cap = 65536;
    *len = 0;
    buf = malloc(cap);

    while (buf != NULL) {
        n = fread(buf + *len, 1, cap - *len, f);
        *len += n;

        if (n == 0) {
            return ferror(f) ? (free(buf), NULL) : buf;
        }

        if (*len == cap) {
            cap *= 2;
            p = realloc(buf, cap);
            if (p == NULL) {
                free(buf);
            }
            buf = p;
        }
    }

    return NULL;
}


/* a JSON string value of the body as a cJSON string, escapes decoded */
static cJSON *
ts_cli_string(const char *buf, const ts_val_t *v)
{
    cJSON   *s;
    char    *out;
    size_t   n;

    if (v->kind != TS_STRING) {
        return cJSON_CreateNull();
    }

    out = malloc(v->len + 1);
    if (out == NULL) {
        return NULL;
    }

    n = ts_str_decode(buf, v, out, v->len);
    out[n == (size_t) -1 ? 0 : n] = '\0';
    s = cJSON_CreateString(out);
    free(out);

    return s;
}


static cJSON *
ts_cli_block(const ts_index_t *ix, uint32_t k)
{
    const ts_block_t  *b;
    cJSON             *o, *children;
    uint32_t           c;

    b = &ix->blocks[k];

    if (b->child_count == 0) {
        return ts_cli_string(ix->buf, &b->type);
    }

    o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "type", ts_cli_string(ix->buf, &b->type));
    children = cJSON_AddArrayToObject(o, "content");

    for (c = b->child_first; c < b->child_first + b->child_count; c++) {
        cJSON_AddItemToArray(children,
                             ts_cli_string(ix->buf, &ix->blocks[c].type));
    }

    return o;
}


static cJSON *
ts_cli_message(const ts_index_t *ix, size_t i)
{
    const ts_message_t  *m;
    cJSON               *o, *blocks;
    uint32_t             k;

    m = &ix->messages[i];
    o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "role", ts_cli_string(ix->buf, &m->role));

    if (m->content.kind != TS_ARRAY) {
        cJSON_AddStringToObject(o, "content",
                                m->content.kind == TS_STRING ? "string"
                                                             : "none");
        return o;
    }

    blocks = cJSON_AddArrayToObject(o, "content");

    for (k = m->block_first; k < m->block_end; k++) {
        if (ix->blocks[k].parent < 0) {
            cJSON_AddItemToArray(blocks, ts_cli_block(ix, k));
        }
    }

    return o;
}


static cJSON *
ts_cli_index(const ts_index_t *ix, ts_decision_t d)
{
    cJSON   *o, *arr;
    size_t   i;

    o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "decision", ts_decision_name(d));
    cJSON_AddNumberToObject(o, "bytes", (double) ix->len);

    if (ix->status != TS_OK) {
        cJSON_AddNumberToObject(o, "error_offset", (double) ix->err_off);
        return o;
    }

    arr = cJSON_AddArrayToObject(o, "members");
    for (i = 0; i < ix->nmembers; i++) {
        cJSON_AddItemToArray(arr,
                             ts_cli_string(ix->buf, &ix->members[i].key));
    }

    if (ix->top[TS_TOP_MODEL] >= 0) {
        cJSON_AddItemToObject(o, "model",
            ts_cli_string(ix->buf, &ix->members[ix->top[TS_TOP_MODEL]].val));
    }

    cJSON_AddNumberToObject(o, "tools_count", (double) ix->ntools);
    arr = cJSON_AddArrayToObject(o, "tools");
    for (i = 0; i < ix->ntools; i++) {
        cJSON_AddItemToArray(arr, ts_cli_string(ix->buf, &ix->tools[i].name));
    }

    cJSON_AddNumberToObject(o, "messages_count", (double) ix->nmessages);
    arr = cJSON_AddArrayToObject(o, "messages");
    for (i = 0; i < ix->nmessages; i++) {
        cJSON_AddItemToArray(arr, ts_cli_message(ix, i));
    }

    return o;
}


static int
ts_cli_inspect(FILE *in)
{
    ts_request_t   rq;
    ts_decision_t  d;
    cJSON         *o;
    char          *body, *text;
    size_t         len;

    body = ts_read_all(in, &len);
    if (body == NULL) {
        fprintf(stderr, "toolsearch: cannot read the request\n");
        return 2;
    }

    d = ts_request_process(&rq, NULL, body, len);

    o = ts_cli_index(&rq.ix, d);
    text = cJSON_Print(o);
    if (text != NULL) {
        printf("%s\n", text);
    }

    cJSON_free(text);
    cJSON_Delete(o);
    ts_request_free(&rq);
    free(body);

    return d == TS_DECISION_PASSTHROUGH ? 0 : 1;
}


static int
ts_cli_list(ts_match_list_t *l, const char *pattern)
{
    char  err[300];

    if (ts_match_add(l, pattern, strlen(pattern), err, sizeof(err)) != 0) {
        fprintf(stderr, "toolsearch: %s\n", err);
        return -1;
    }

    return 0;
}


static int
ts_cli_beta(ts_cli_conf_t *c, const char *value)
{
    size_t  n, v;

    n = strlen(c->betas);
    v = strlen(value);

    if (n + v + 2 > sizeof(c->betas)) {
        fprintf(stderr, "toolsearch: --beta values too long\n");
        return -1;
    }

    if (n > 0) {
        c->betas[n++] = ',';
    }

    memcpy(c->betas + n, value, v + 1);

    return 0;
}


static int
ts_cli_window(ts_cli_conf_t *c, const char *re, const char *tokens)
{
    char  *end;

    if (c->windows.n == sizeof(c->tokens) / sizeof(c->tokens[0])) {
        fprintf(stderr, "toolsearch: too many --context-window options\n");
        return -1;
    }

    c->tokens[c->windows.n] = strtoul(tokens, &end, 10);

    if (*end != '\0' || c->tokens[c->windows.n] == 0) {
        fprintf(stderr, "toolsearch: bad window \"%s\"\n", tokens);
        return -1;
    }

    return ts_cli_list(&c->windows, re);
}


/* one option (and its arguments); returns how many argv it used, or -1 */
static int
ts_cli_option(ts_cli_conf_t *c, int argc, char **argv)
{
    const char  *o;
    int          mode;

    o = argv[0];

    if (strcmp(o, "--upstream-tool-reference") == 0) {
        c->policy.upstream_tool_reference = 1;
        return 1;
    }

    if (strcmp(o, "--disable-betas") == 0) {
        c->policy.disable_betas = 1;
        return 1;
    }

    if (strcmp(o, "--no-turn-boundary") == 0) {
        c->policy.turn_boundary = 0;
        return 1;
    }

    if (argc < 2) {
        return -1;
    }

    if (strcmp(o, "--defer") == 0) {
        mode = ts_defer_mode_parse(argv[1], strlen(argv[1]),
                                   &c->policy.defer_percent);
        c->policy.defer_mode = mode;
        return mode < 0 ? -1 : 2;
    }

    if (strcmp(o, "--upstream") == 0) {
        c->in.upstream = ts_upstream_parse(argv[1], strlen(argv[1]));
        return c->in.upstream <= TS_UPSTREAM_AUTO ? -1 : 2;
    }

    if (strcmp(o, "--hosted-search") == 0) {
        c->policy.hosted_search = strcmp(argv[1], "regex") == 0
                                  ? TS_HOSTED_REGEX : TS_HOSTED_BM25;
        return strcmp(argv[1], "regex") && strcmp(argv[1], "bm25") ? -1 : 2;
    }

    if (strcmp(o, "--search") == 0) {
        c->policy.search = ts_search_mode_parse(argv[1], strlen(argv[1]));
        return c->policy.search < 0 ? -1 : 2;
    }

    if (strcmp(o, "--tool-name") == 0) {
        c->policy.search_tool = argv[1];
        return 2;
    }

    if (strcmp(o, "--beta") == 0) {
        return ts_cli_beta(c, argv[1]) == 0 ? 2 : -1;
    }

    if (strcmp(o, "--always-load") == 0) {
        return ts_cli_list(&c->always_load, argv[1]) == 0 ? 2 : -1;
    }

    if (strcmp(o, "--defer-tools") == 0) {
        return ts_cli_list(&c->defer_tools, argv[1]) == 0 ? 2 : -1;
    }

    if (strcmp(o, "--client-search-tools") == 0) {
        c->own_client_search_tools = 1;
        return ts_cli_list(&c->client_search_tools, argv[1]) == 0 ? 2 : -1;
    }

    if (strcmp(o, "--unsupported-models") == 0) {
        c->own_unsupported_models = 1;
        return ts_cli_list(&c->unsupported_models, argv[1]) == 0 ? 2 : -1;
    }

    if (strcmp(o, "--context-window") == 0 && argc >= 3) {
        return ts_cli_window(c, argv[1], argv[2]) == 0 ? 3 : -1;
    }

    return -1;
}


static int
ts_cli_defaults(ts_cli_conf_t *c)
{
    char  err[300];

    if ((!c->own_client_search_tools
         && ts_match_add_all(&c->client_search_tools,
                             ts_default_client_search_tools, err,
                             sizeof(err)) != 0)
        || (!c->own_unsupported_models
            && ts_match_add_all(&c->unsupported_models,
                                ts_default_unsupported_models, err,
                                sizeof(err)) != 0))
    {
        fprintf(stderr, "toolsearch: %s\n", err);
        return -1;
    }

    c->policy.always_load = &c->always_load;
    c->policy.defer_tools = &c->defer_tools;
    c->policy.client_search_tools = &c->client_search_tools;
    c->policy.unsupported_models = &c->unsupported_models;
    c->policy.windows = &c->windows;
    c->policy.window_tokens = c->tokens;

    c->in.policy = &c->policy;
    c->in.defer_mode = -1;
    c->in.betas = c->betas;
    c->in.betas_len = strlen(c->betas);

    return 0;
}


static void
ts_cli_conf_free(ts_cli_conf_t *c)
{
    ts_match_free(&c->always_load);
    ts_match_free(&c->defer_tools);
    ts_match_free(&c->client_search_tools);
    ts_match_free(&c->unsupported_models);
    ts_match_free(&c->windows);
}


static void
ts_cli_report(const ts_request_t *rq, size_t in, size_t out)
{
    fprintf(stderr, "decision=%s mode=%s upstream=%s tools=%zu "
            "deferred=%zu defer_chars=%zu threshold_chars=%zu "
            "refs_converted=%zu refs_stale=%zu siblings_moved=%zu "
            "boundaries_added=%zu discovered=%zu bytes_in=%zu "
            "bytes_out=%zu\n",
            ts_decision_name(rq->decision), ts_defer_mode_name(rq->mode),
            ts_upstream_name(rq->upstream), rq->ix.ntools,
            rq->tools_deferred, rq->defer_chars, rq->threshold_chars,
            rq->refs_converted, rq->refs_stale, rq->siblings_moved,
            rq->boundaries_added, rq->discovered, in, out);

    if (rq->betas_changed) {
        fprintf(stderr, "anthropic-beta: %s\n", rq->betas);
    }
}


/* writes the body the upstream would get to stdout */
static int
ts_cli_rewrite(ts_cli_conf_t *c, FILE *in)
{
    ts_request_t   rq;
    char          *body, *out;
    size_t         len, n;
    int            rc;

    body = ts_read_all(in, &len);
    if (body == NULL) {
        fprintf(stderr, "toolsearch: cannot read the request\n");
        return 2;
    }

    ts_request_process(&rq, &c->in, body, len);

    n = ts_request_size(&rq);
    out = malloc(n + 1);
    rc = out != NULL && ts_request_render(&rq, out) == 0;

    if (rc) {
        fwrite(out, 1, n, stdout);
        ts_cli_report(&rq, len, n);
    }

    free(out);
    ts_request_free(&rq);
    free(body);

    return rc ? 0 : 2;
}


static void
ts_cli_usage(void)
{
    fprintf(stderr,
        "usage: toolsearch inspect [FILE]\n"
        "       toolsearch rewrite [OPTIONS] [FILE]\n"
        "  inspect  prints the index of a Messages API request as JSON;\n"
        "           exit 0 when it is analysable, 1 when the gateway\n"
        "           would pass it through untouched\n"
        "  rewrite  prints the body the upstream would get and, on stderr,\n"
        "           the decision; options mirror the directives:\n"
        "    --defer off|on|auto|auto:N      toolsearch_defer (on)\n"
        "    --upstream PROFILE              anthropic (default), vertex,\n"
        "                                    bedrock, compatible\n"
        "    --upstream-tool-reference       toolsearch_upstream_tool_reference\n"
        "    --disable-betas                 toolsearch_disable_betas\n"
        "    --no-turn-boundary              toolsearch_turn_boundary off\n"
        "    --hosted-search bm25|regex      toolsearch_hosted_search\n"
        "    --search auto|hosted|gateway    toolsearch_search (auto)\n"
        "    --tool-name NAME                toolsearch_tool_name\n"
        "    --always-load NAME|~RE          (repeatable)\n"
        "    --defer-tools NAME|~RE          (repeatable)\n"
        "    --client-search-tools NAME|~RE  (repeatable; replaces default)\n"
        "    --unsupported-models NAME|~RE   (repeatable; replaces default)\n"
        "    --context-window ~RE TOKENS     (repeatable)\n"
        "    --beta VALUE                    an anthropic-beta header value\n"
        "       toolsearch search --tools FILE [OPTIONS] QUERY\n"
        "  search   prints the tools a query finds, best first; FILE is a\n"
        "           JSON array of tool definitions or a request body\n"
        "    --max N                         results (5)\n"
        "    --scoring seed|hybrid|bm25      toolsearch_search_scoring\n"
        "    --hint NAME|~RE PHRASE          toolsearch_hint (repeatable)\n"
        "    --explain                       each score and its parts\n"
        "    --batch                         queries from stdin, one per\n"
        "                                    line; one line of names each\n");
}


int
ts_cli_open(const char *path, FILE **in)
{
    *in = stdin;

    if (path != NULL && strcmp(path, "-") != 0) {
        *in = fopen(path, "rb");
        if (*in == NULL) {
            perror(path);
            return -1;
        }
    }

    return 0;
}


static int
ts_cli_main_rewrite(int argc, char **argv)
{
    static ts_cli_conf_t   c;
    const char            *path;
    FILE                  *in;
    int                    i, n, rc;

    c.in.upstream = TS_UPSTREAM_ANTHROPIC;
    c.policy.defer_mode = TS_DEFER_ON;
    c.policy.turn_boundary = 1;
    path = NULL;
    rc = 2;

    for (i = 0; i < argc; i += n) {
        if (strncmp(argv[i], "--", 2) != 0 && i == argc - 1) {
            path = argv[i];
            n = 1;
            continue;
        }

        n = ts_cli_option(&c, argc - i, argv + i);
        if (n < 0) {
            fprintf(stderr, "toolsearch: bad option \"%s\"\n", argv[i]);
            ts_cli_usage();
            goto done;
        }
    }

    if (ts_cli_defaults(&c) != 0 || ts_cli_open(path, &in) != 0) {
        goto done;
    }

    rc = ts_cli_rewrite(&c, in);

    if (in != stdin) {
        fclose(in);
    }

done:

    ts_cli_conf_free(&c);

    return rc;
}


int
main(int argc, char **argv)
{
    FILE  *in;
    int    rc;

    if (argc >= 2 && strcmp(argv[1], "rewrite") == 0) {
        return ts_cli_main_rewrite(argc - 2, argv + 2);
    }

    if (argc >= 2 && strcmp(argv[1], "search") == 0) {
        rc = ts_cli_main_search(argc - 2, argv + 2);

        if (rc == 2) {
            ts_cli_usage();
        }

        return rc;
    }

    if (argc < 2 || argc > 3 || strcmp(argv[1], "inspect") != 0) {
        ts_cli_usage();
        return 2;
    }

    if (ts_cli_open(argc == 3 ? argv[2] : NULL, &in) != 0) {
        return 2;
    }

    rc = ts_cli_inspect(in);

    if (in != stdin) {
        fclose(in);
    }

    return rc;
}
