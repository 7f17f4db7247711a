/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The options of toolsearch rewrite, shared with the engine benchmark:
 * a policy built like the directives build it.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/ts_cli.h"


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
    char               *end;
    ts_policy_lists_t  *l;

    l = &c->lists;

    if (l->windows.n == TS_POLICY_WINDOWS) {
        fprintf(stderr, "toolsearch: too many --context-window options\n");
        return -1;
    }

    l->window_tokens[l->windows.n] = strtoul(tokens, &end, 10);

    if (*end != '\0' || l->window_tokens[l->windows.n] == 0) {
        fprintf(stderr, "toolsearch: bad window \"%s\"\n", tokens);
        return -1;
    }

    return ts_cli_list(&l->windows, re);
}


/* a list option: its first pattern replaces the list's defaults */
static int
ts_cli_own(ts_match_list_t *l, int *own, const char *pattern)
{
    if (!*own) {
        ts_match_free(l);
        *own = 1;
    }

    return ts_cli_list(l, pattern) == 0 ? 2 : -1;
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

    if (strcmp(o, "--no-client-profiles") == 0) {
        c->policy.client_profiles = 0;
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
        c->in.upstream = ts_words_parse(&ts_upstream_words, argv[1],
                                        strlen(argv[1]));
        return c->in.upstream <= TS_UPSTREAM_AUTO ? -1 : 2;
    }

    if (strcmp(o, "--hosted-search") == 0) {
        c->policy.hosted_search = ts_words_parse(&ts_hosted_words, argv[1],
                                                 strlen(argv[1]));
        return c->policy.hosted_search < 0 ? -1 : 2;
    }

    if (strcmp(o, "--search") == 0) {
        c->policy.search = ts_words_parse(&ts_search_mode_words, argv[1],
                                          strlen(argv[1]));
        return c->policy.search < 0 ? -1 : 2;
    }

    if (strcmp(o, "--found-tools") == 0) {
        c->policy.found_tools = ts_words_parse(&ts_found_tools_words,
                                               argv[1], strlen(argv[1]));
        return c->policy.found_tools < 0 ? -1 : 2;
    }

    if (strcmp(o, "--tool-name") == 0) {
        c->policy.search_tool = argv[1];
        return 2;
    }

    if (strcmp(o, "--beta") == 0) {
        return ts_cli_beta(c, argv[1]) == 0 ? 2 : -1;
    }

    if (strcmp(o, "--user-agent") == 0) {
        c->in.user_agent = argv[1];
        c->in.user_agent_len = strlen(argv[1]);
        return 2;
    }

    if (strcmp(o, "--always-load") == 0) {
        return ts_cli_list(&c->lists.always_load, argv[1]) == 0 ? 2 : -1;
    }

    if (strcmp(o, "--defer-tools") == 0) {
        return ts_cli_list(&c->lists.defer_tools, argv[1]) == 0 ? 2 : -1;
    }

    if (strcmp(o, "--client-search-tools") == 0) {
        return ts_cli_own(&c->lists.client_search_tools,
                          &c->own_client_search_tools, argv[1]);
    }

    if (strcmp(o, "--unsupported-models") == 0) {
        return ts_cli_own(&c->lists.unsupported_models,
                          &c->own_unsupported_models, argv[1]);
    }

    if (strcmp(o, "--context-window") == 0 && argc >= 3) {
        return ts_cli_window(c, argv[1], argv[2]) == 0 ? 3 : -1;
    }

    return -1;
}


void
ts_cli_conf_free(ts_cli_conf_t *c)
{
    ts_policy_lists_free(&c->lists);
}


int
ts_cli_conf_parse(ts_cli_conf_t *c, int argc, char **argv, const char **path)
{
    int   i, n;
    char  err[300];

    ts_policy_init(&c->policy);

    if (ts_policy_lists_init(&c->lists, &c->policy, err, sizeof(err)) != 0) {
        fprintf(stderr, "toolsearch: %s\n", err);
        return -1;
    }

    c->in.policy = &c->policy;
    c->in.upstream = TS_UPSTREAM_ANTHROPIC;
    c->in.defer_mode = -1;
    *path = NULL;

    for (i = 0; i < argc; i += n) {
        if (strncmp(argv[i], "--", 2) != 0 && i == argc - 1) {
            *path = argv[i];
            n = 1;
            continue;
        }

        n = ts_cli_option(c, argc - i, argv + i);
        if (n < 0) {
            fprintf(stderr, "toolsearch: bad option \"%s\"\n", argv[i]);
            return -1;
        }
    }

    c->in.betas = c->betas;
    c->in.betas_len = strlen(c->betas);

    return 0;
}
