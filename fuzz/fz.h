/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * What the fuzz targets share: a policy drawn from input bytes, so that
 * every combination of the directives is reachable, and the properties
 * an output body must have.  A failed property aborts, which libFuzzer
 * reports as a crash with the input that caused it.
 */

#ifndef FZ_H
#define FZ_H

#include <stddef.h>
#include <stdint.h>

#include "rewrite/ts_policy.h"
#include "rewrite/ts_request.h"
#include "loop/ts_loop.h"


/* input bytes a policy is drawn from */
#define FZ_POLICY_BYTES  8

/* a memory of a few small arrays: inputs evict each other */
#define FZ_RECALL_SMALL  (64 * 1024)


typedef struct {
    unsigned long    tokens[2];
    const char      *phrases[2];
    ts_policy_t      p;
    ts_input_t       in;
} fz_policy_t;


/* a format's request step: ts_request_process() or a dialect's */
typedef ts_decision_t (*fz_process_pt)(ts_request_t *rq,
    const ts_input_t *in, const char *body, size_t len);

/*
 * Two worker memories kept across inputs, for every format: a gateway's,
 * and a small one where every array hashes the same, so that arrays are
 * evicted often and told apart by their bytes alone (fz_init sizes them).
 */
extern ts_index_mem_t  fz_mem, fz_collide;

/* compiles the pattern lists the policies choose from, once */
void fz_init(void);

/* a policy from d[0 .. FZ_POLICY_BYTES - 1] */
void fz_policy(fz_policy_t *f, const uint8_t *d);

/* aborts with a message when ok is 0 */
void fz_assert(int ok, const char *what);

/* strict RFC 8259 validity, and cJSON's agreement */
int fz_valid_json(const char *p, size_t len);

/*
 * Every tool_reference in the messages of a valid body names a tool of
 * its tools[]; aborts otherwise.  A body with an escaped NUL is not
 * checked: cJSON cannot tell its keys apart.
 */
void fz_check_references(const char *p, size_t len);

/*
 * The top-level members of out other than those the engine edits
 * (messages, tools, system, anthropic_beta) are byte for byte those of
 * in, in the same order.
 */
void fz_check_untouched(const char *in, size_t inlen, const char *out,
    size_t outlen);

/*
 * Runs a format's request step; *out is the body the glue would forward:
 * the rendered output, or a copy of the body when nothing changed.  The
 * caller frees it.
 */
ts_decision_t fz_rewrite(fz_process_pt process, ts_request_t *rq,
    const ts_input_t *in, const char *body, size_t len, char **out,
    size_t *outlen);

/*
 * A worker's memory never changes a request (the principle "faster,
 * never different"): the body through each of fz_mem and fz_collide,
 * twice (the second time its tools array is recalled, with the facts
 * derived from it when the memory could keep them, the first time often
 * an array of an input before), gives the decision, counts and bytes of
 * the request read without memory (rq, out); aborts otherwise.
 */
void fz_check_recalled_request(fz_process_pt process, const ts_input_t *in,
    const char *body, size_t len, const ts_request_t *rq, const char *out,
    size_t outlen);

/*
 * 1 when every complete event with data carries a JSON value (or, with
 * done, the [DONE] of Chat Completions)
 */
int fz_events_valid(const char *p, size_t n, int done);

/* how many bytes of the answer the next piece has */
typedef size_t (*fz_piece_pt)(void *arg);

/* pieces of a fixed size (0: the whole answer), for fz_piece_fixed */
typedef struct {
    size_t  step;
    size_t  whole;
} fz_fixed_t;

size_t fz_piece_fixed(void *arg);

/* an OpenAI dialect's loop: its request step, its loop, the body it runs */
typedef struct {
    ts_decision_t  (*process)(ts_request_t *rq, const ts_input_t *in,
                              const char *body, size_t len);
    ts_loop_t     *(*create)(const ts_input_t *in, const ts_request_t *rq);
    const char      *body;
    size_t           len;
    void           (*check)(const char *p, size_t n);  /* a call's body */
    int              done;      /* its streams end with [DONE] */
} fz_dialect_t;

/*
 * The dialect's body deferred, its loop fed the answer whole and in
 * step-byte pieces: the client's bytes must be the same; valid events
 * or a valid JSON answer must give valid ones
 */
void fz_whole_and_cut(const fz_dialect_t *d, const fz_policy_t *f, int sse,
    size_t step, const char *answer, size_t n);

/*
 * The loop's exchange: each call's body checked (valid JSON, then check)
 * and fed the answer in pieces; the client's bytes in out.  Aborts when
 * the loop does not end within 25 calls.
 */
void fz_exchange(ts_loop_t *lp, int sse, const char *answer, size_t n,
    fz_piece_pt piece, void *arg, void (*check)(const char *p, size_t n),
    ts_buf_t *out);

#endif /* FZ_H */
