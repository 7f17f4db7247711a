/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Helpers shared by the subcommands of build/toolsearch.
 */

#ifndef TS_CLI_H
#define TS_CLI_H

#include <stdio.h>

#include "rewrite/ts_request.h"


/* the policy of a rewrite run, built from options like the directives */
typedef struct {
    ts_policy_t        policy;
    ts_input_t         in;
    ts_policy_lists_t  lists;
    char               betas[4096];
    int                own_client_search_tools;
    int                own_unsupported_models;
} ts_cli_conf_t;


/* the whole stream in a malloc'd buffer, or NULL */
char *ts_read_all(FILE *f, size_t *len);

/* path, or standard input for NULL and "-" */
int ts_cli_open(const char *path, FILE **in);

int ts_cli_main_search(int argc, char **argv);

/*
 * fills a zeroed conf from ts_policy_init() and the options of
 * toolsearch rewrite (a list option replaces its default); the last
 * argument not an option is the path.  -1 after printing the error.
 */
int ts_cli_conf_parse(ts_cli_conf_t *c, int argc, char **argv,
    const char **path);
void ts_cli_conf_free(ts_cli_conf_t *c);

#endif /* TS_CLI_H */
