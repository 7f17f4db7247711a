/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Helpers shared by the subcommands of build/toolsearch.
 */

#ifndef TS_CLI_H
#define TS_CLI_H

#include <stdio.h>


/* the whole stream in a malloc'd buffer, or NULL */
char *ts_read_all(FILE *f, size_t *len);

/* path, or standard input for NULL and "-" */
int ts_cli_open(const char *path, FILE **in);

int ts_cli_main_search(int argc, char **argv);

#endif /* TS_CLI_H */
