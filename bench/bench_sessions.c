/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The engine's cost per request when a worker serves many sessions in
 * turn, in process: the bodies listed in a file (one path a line) go
 * through what the glue does (ts_request_process, the output's pieces
 * with the new bytes copied into one block, ts_request_free) in the
 * order listed, again and again, in index memory kept across requests
 * as a worker's (toolsearch_recall_tools at its default).  The first
 * pass over the list is not timed: it reads every tools array once, as
 * a worker that has served the sessions before.  Prints one JSON object:
 * the median µs a request of the timed passes, and the share of tools
 * recalled in them.
 *
 *   bench_sessions LIST PASSES [--chat | --responses]
 *       [OPTIONS OF toolsearch rewrite]
 *
 * With --chat the bodies are Chat Completions requests, through what the
 * glue does for them: ts_chat_process, and for gateway search the loop
 * made and given the request's reading (ts_loop_keep), then freed; with
 * --responses Responses requests, the same way (ts_responses_process).
 *
 * Under callgrind, the difference between two runs of different PASSES
 * is the instructions of that many passes: exact, whatever else runs on
 * the machine (bench/sessions_bench.py).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_bench.h"
#include "cli/ts_cli.h"
#include "chat/ts_chat.h"
#include "responses/ts_responses.h"
#include "loop/ts_loop.h"


/* bodies a list may name */
#define TS_SESSIONS_MAX  4096


/* an API format: how the glue reads its requests and makes its loop */
typedef struct {
    const char      *flag;
    ts_decision_t  (*process)(ts_request_t *rq, const ts_input_t *in,
                              const char *body, size_t len);
    ts_loop_t     *(*loop)(const ts_input_t *in, const ts_request_t *rq);
} ts_sessions_format_t;


/* the first, without a flag, is Messages: no loop (hosted search) */
static const ts_sessions_format_t  ts_sessions_formats[] = {
    { NULL, ts_request_process, NULL },
    { "--chat", ts_chat_process, ts_chat_loop_create },
    { "--responses", ts_responses_process, ts_responses_loop_create },
};


typedef struct {
    char    *body[TS_SESSIONS_MAX];
    size_t   len[TS_SESSIONS_MAX];
    size_t   n;
} ts_sessions_t;


static void
ts_sessions_load(ts_sessions_t *s, const char *list)
{
    FILE  *f;
    char   line[4096];

    f = fopen(list, "r");
    if (f == NULL) {
        fprintf(stderr, "bench_sessions: cannot open %s\n", list);
        exit(2);
    }

    s->n = 0;

    while (s->n < TS_SESSIONS_MAX && fgets(line, sizeof(line), f) != NULL) {
        line[strcspn(line, "\n")] = '\0';

        if (line[0] != '\0') {
            s->body[s->n] = ts_bench_load(line, &s->len[s->n]);
            s->n++;
        }
    }

    fclose(f);

    if (s->n == 0) {
        fprintf(stderr, "bench_sessions: no bodies in %s\n", list);
        exit(2);
    }
}


/* the glue's calls for one request; adds its tools seen and recalled */
static void
ts_sessions_request(const ts_input_t *in, const char *body, size_t len,
    const ts_sessions_format_t *fmt, size_t *seen, size_t *recalled)
{
    ts_request_t   rq;
    ts_loop_t     *lp;
    char          *block;
    size_t         out;

    lp = NULL;

    if (fmt->process(&rq, in, body, len) == TS_DECISION_DEFERRED_GATEWAY
        && fmt->loop != NULL)
    {
        lp = fmt->loop(in, &rq);

        if (lp == NULL) {
            fprintf(stderr, "bench_sessions: no loop\n");
            exit(2);
        }
    }

    if (ts_request_changed(&rq)) {
        block = ts_bench_output_chain(&rq, &out);

        if (block == NULL) {
            fprintf(stderr, "bench_sessions: no output\n");
            exit(2);
        }

        free(block);
    }

    *seen += rq.ix.ntools;
    *recalled += rq.ix.tools_recalled;

    /* the loop takes the reading: after the counts */
    if (lp != NULL) {
        ts_loop_keep(lp, &rq);
    }
    ts_request_free(&rq);
    ts_loop_free(lp);
}


int
main(int argc, char **argv)
{
    static ts_cli_conf_t   c;
    static ts_index_mem_t  mem;
    static ts_sessions_t          s;
    ts_input_t                    in;
    const char                   *path;
    double                       *t, t0;
    size_t                        passes, i, k, seen, recalled;
    int                           skip;
    const ts_sessions_format_t   *fmt;

    fmt = &ts_sessions_formats[0];
    skip = 3;

    for (i = 1; argc > 3 && i < sizeof(ts_sessions_formats)
                                / sizeof(ts_sessions_formats[0]); i++)
    {
        if (strcmp(argv[3], ts_sessions_formats[i].flag) == 0) {
            fmt = &ts_sessions_formats[i];
            skip = 4;
        }
    }

    if (argc < 3
        || ts_cli_conf_parse(&c, argc - skip, argv + skip, &path) != 0
        || (passes = strtoul(argv[2], NULL, 10)) == 0)
    {
        fprintf(stderr, "usage: bench_sessions LIST PASSES "
                "[--chat | --responses] [OPTIONS]\n");
        return 2;
    }

    ts_sessions_load(&s, argv[1]);

    t = malloc(passes * sizeof(double));
    if (t == NULL) {
        return 2;
    }

    in = c.in;
    in.index_mem = &mem;
    mem.tools.size = TS_RECALL_SIZE;
    mem.chat_tools.size = TS_RECALL_SIZE;
    mem.responses_tools.size = TS_RECALL_SIZE;
    seen = 0;
    recalled = 0;

    for (i = 0; i < s.n; i++) {
        ts_sessions_request(&in, s.body[i], s.len[i], fmt, &seen,
                            &recalled);
    }

    seen = 0;
    recalled = 0;

    for (k = 0; k < passes; k++) {
        t0 = ts_bench_now_us();

        for (i = 0; i < s.n; i++) {
            ts_sessions_request(&in, s.body[i], s.len[i], fmt, &seen,
                            &recalled);
        }

        t[k] = (ts_bench_now_us() - t0) / (double) s.n;
    }

    printf("{\"bodies\":%zu,\"passes\":%zu,\"us\":%.2f,\"recalled\":%.4f}\n",
           s.n, passes, ts_bench_median(t, passes),
           seen ? (double) recalled / (double) seen : 0.0);

    for (i = 0; i < s.n; i++) {
        free(s.body[i]);
    }

    free(t);
    ts_index_mem_free(&mem);
    ts_cli_conf_free(&c);

    return 0;
}
