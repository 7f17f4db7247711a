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

#include "cli/ts_cli.h"
#include "rewrite/ts_client.h"
#include "rewrite/ts_request.h"




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
ts_cli_block(const ts_index_t *ix, const ts_block_t *b)
{
    cJSON     *o, *children;
    uint32_t   c;

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
            cJSON_AddItemToArray(blocks, ts_cli_block(ix, &ix->blocks[k]));
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


static void
ts_cli_report(const ts_request_t *rq, size_t in, size_t out)
{
    fprintf(stderr, "decision=%s client=%s mode=%s upstream=%s tools=%zu "
            "deferred=%zu defer_chars=%zu threshold_chars=%zu "
            "refs_converted=%zu refs_stale=%zu siblings_moved=%zu "
            "boundaries_added=%zu searches_restored=%zu discovered=%zu "
            "bytes_in=%zu bytes_out=%zu\n",
            ts_decision_name(rq->decision), ts_client_name(rq->client),
            ts_defer_mode_name(rq->mode),
            ts_upstream_name(rq->upstream), rq->ix.ntools,
            rq->tools_deferred, rq->defer_chars, rq->threshold_chars,
            rq->hygiene.refs_converted, rq->hygiene.refs_stale,
            rq->hygiene.siblings_moved, rq->hygiene.boundaries_added,
            rq->searches_restored, rq->discovered, in, out);

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
        "    --upstream-tool-reference       "
        "toolsearch_upstream_tool_reference\n"
        "    --disable-betas                 toolsearch_disable_betas\n"
        "    --no-turn-boundary              toolsearch_turn_boundary off\n"
        "    --no-client-profiles            toolsearch_client_profiles off\n"
        "    --hosted-search bm25|regex      toolsearch_hosted_search\n"
        "    --search auto|hosted|gateway    toolsearch_search (auto)\n"
        "    --tool-name NAME                toolsearch_tool_name\n"
        "    --always-load NAME|~RE          (repeatable)\n"
        "    --defer-tools NAME|~RE          (repeatable)\n"
        "    --client-search-tools NAME|~RE  (repeatable; replaces default)\n"
        "    --unsupported-models NAME|~RE   (repeatable; replaces default)\n"
        "    --context-window ~RE TOKENS     (repeatable)\n"
        "    --beta VALUE                    an anthropic-beta header value\n"
        "    --user-agent VALUE              the User-Agent header\n"
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
    int                    rc;

    rc = 2;

    if (ts_cli_conf_parse(&c, argc, argv, &path) != 0) {
        ts_cli_usage();
        goto done;
    }

    if (ts_cli_open(path, &in) != 0) {
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
