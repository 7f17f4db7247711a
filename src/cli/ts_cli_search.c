/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * toolsearch search: the gateway's tool search over a catalogue file.
 */

#include <stdlib.h>
#include <string.h>

#include "cli/ts_cli.h"
#include "search/ts_search.h"


#define TS_CLI_HINTS_MAX  64


typedef struct {
    const char       *tools;
    const char       *query;
    size_t            max;
    int               scoring;
    int               explain;
    int               batch;
    ts_match_list_t   hint_names;
    const char       *phrases[TS_CLI_HINTS_MAX];
} ts_cli_search_conf_t;


static int
ts_cli_search_option(ts_cli_search_conf_t *c, int argc, char **argv)
{
    char  err[256];

    if (strcmp(argv[0], "--explain") == 0) {
        c->explain = 1;
        return 1;
    }

    if (strcmp(argv[0], "--batch") == 0) {
        c->batch = 1;
        return 1;
    }

    if (argc < 2) {
        return -1;
    }

    if (strcmp(argv[0], "--tools") == 0) {
        c->tools = argv[1];
        return 2;
    }

    if (strcmp(argv[0], "--max") == 0) {
        c->max = strtoul(argv[1], NULL, 10);
        return c->max > 0 ? 2 : -1;
    }

    if (strcmp(argv[0], "--scoring") == 0) {
        c->scoring = ts_words_parse(&ts_scoring_words, argv[1],
                                    strlen(argv[1]));
        return c->scoring >= 0 ? 2 : -1;
    }

    if (strcmp(argv[0], "--hint") == 0 && argc >= 3
        && c->hint_names.n < TS_CLI_HINTS_MAX)
    {
        c->phrases[c->hint_names.n] = argv[2];

        if (ts_match_add(&c->hint_names, argv[1], strlen(argv[1]), err,
                         sizeof(err)) != 0)
        {
            fprintf(stderr, "toolsearch: %s\n", err);
            return -1;
        }

        return 3;
    }

    return -1;
}


/* a bare array of tools becomes the tools of a request */
static char *
ts_cli_search_body(char *buf, size_t *len)
{
    static const char   head[] = "{\"tools\":";
    char               *out;
    size_t              i;

    for (i = 0; i < *len && strchr(" \t\r\n", buf[i]) != NULL; i++) {
        /* void */
    }

    if (i == *len || buf[i] != '[') {
        return buf;
    }

    out = malloc(sizeof(head) + *len + 1);
    if (out != NULL) {
        memcpy(out, head, sizeof(head) - 1);
        memcpy(out + sizeof(head) - 1, buf, *len);
        out[sizeof(head) - 1 + *len] = '}';
        *len += sizeof(head);
    }

    free(buf);

    return out;
}


static void
ts_cli_search_print(const ts_catalog_t *cat, const ts_cli_search_conf_t *c,
    const char *query, const ts_result_t *r)
{
    const ts_entry_t  *e;
    char               why[1024];
    size_t             i;

    for (i = 0; i < r->nhits; i++) {
        e = &cat->tools[r->hits[i].tool];

        if (c->batch) {
            printf("%s%.*s", i ? "\t" : "", (int) e->name.len,
                   ts_catalog_name(cat, e));
            continue;
        }

        printf("%.*s", (int) e->name.len, ts_catalog_name(cat, e));

        if (c->explain && r->kind == TS_QUERY_KEYWORDS) {
            ts_search_explain(cat, r->hits[i].tool, query, strlen(query),
                              c->scoring, why, sizeof(why));
            printf("\tscore=%.4f seed=%.0f bm25=%.4f\t%s", r->hits[i].score,
                   r->hits[i].seed, r->hits[i].bm25, why + (why[0] == ' '));
        }

        printf("\n");
    }

    if (c->batch) {
        printf("\n");
    }

    for (i = 0; i < r->nmissing; i++) {
        fprintf(stderr, "toolsearch: no tool named \"%.*s\"\n",
                (int) r->missing[i].len, query + r->missing[i].off);
    }

    if (r->truncated) {
        fprintf(stderr, "toolsearch: query cut to %d bytes, %d terms (%d "
                "words hybrid) and %d names\n", TS_SEARCH_QUERY_MAX,
                TS_SEARCH_TERMS_MAX, TS_SEARCH_WORDS_MAX,
                TS_SEARCH_SELECT_MAX);
    }
}


static int
ts_cli_search_one(const ts_catalog_t *cat, const ts_cli_search_conf_t *c,
    const char *query)
{
    ts_result_t  r;
    char         list[TS_SEARCH_FALLBACK_MAX];
    int          found;

    if (ts_search_run(cat, query, strlen(query), c->scoring, c->max, &r)
        != 0)
    {
        fprintf(stderr, "toolsearch: out of memory\n");
        return -1;
    }

    ts_cli_search_print(cat, c, query, &r);
    found = r.nhits > 0;

    if (!found && !c->batch) {
        ts_search_fallback(cat, list, sizeof(list));
        fprintf(stderr, "toolsearch: no match; the tools are: %s\n", list);
    }
    ts_result_free(&r);

    return found;
}


/* one query per line of standard input */
static int
ts_cli_search_batch(const ts_catalog_t *cat, const ts_cli_search_conf_t *c)
{
    char    line[TS_SEARCH_QUERY_MAX + 2];
    size_t  n;

    while (fgets(line, sizeof(line), stdin) != NULL) {
        n = strcspn(line, "\r\n");
        line[n] = '\0';

        if (ts_cli_search_one(cat, c, line) < 0) {
            return 2;
        }

        fflush(stdout);
    }

    return 0;
}


static int
ts_cli_search_catalogue(ts_cli_search_conf_t *c)
{
    ts_catalog_t   cat;
    ts_index_t     ix;
    ts_hints_t     hints;
    FILE          *in;
    char          *buf;
    size_t         len;
    int            rc;

    if (ts_cli_open(c->tools, &in) != 0) {
        return 2;
    }

    buf = ts_read_all(in, &len);
    fclose(in);
    buf = buf ? ts_cli_search_body(buf, &len) : NULL;

    if (buf == NULL || ts_index_build(&ix, buf, len) != TS_OK) {
        fprintf(stderr, "toolsearch: %s: not a tool array or request\n",
                c->tools);
        free(buf);
        return 2;
    }

    hints.names = &c->hint_names;
    hints.phrases = c->phrases;

    if (ts_catalog_build(&cat, &ix, NULL, &hints,
                         c->scoring == TS_SCORING_HYBRID) != 0)
    {
        rc = 2;

    } else if (c->batch) {
        rc = ts_cli_search_batch(&cat, c);

    } else {
        rc = ts_cli_search_one(&cat, c, c->query);
        rc = rc < 0 ? 2 : !rc;
    }

    ts_catalog_free(&cat);
    ts_index_free(&ix);
    free(buf);

    return rc;
}


int
ts_cli_main_search(int argc, char **argv)
{
    ts_cli_search_conf_t  c;
    ts_policy_t           def;
    int                   i, n, rc;

    ts_policy_init(&def);
    memset(&c, 0, sizeof(ts_cli_search_conf_t));
    c.scoring = def.scoring;
    c.max = TS_SEARCH_DEFAULT;

    for (i = 0; i < argc; i += n) {
        if (strncmp(argv[i], "--", 2) != 0 && i == argc - 1) {
            c.query = argv[i];
            break;
        }

        n = ts_cli_search_option(&c, argc - i, argv + i);
        if (n < 0) {
            fprintf(stderr, "toolsearch: bad option \"%s\"\n", argv[i]);
            ts_match_free(&c.hint_names);
            return 2;
        }
    }

    if (c.tools == NULL || (c.query == NULL && !c.batch)) {
        ts_match_free(&c.hint_names);
        return 2;
    }

    rc = ts_cli_search_catalogue(&c);
    ts_match_free(&c.hint_names);

    return rc;
}
