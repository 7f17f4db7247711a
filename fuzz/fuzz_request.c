/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Fuzz target: one request body through the engine under a policy drawn
 * from the input's first bytes.  Properties: a body the engine does not
 * analyse, or fails on, is not changed; a valid body stays valid;
 * members the engine does not edit are untouched; no tool_reference
 * dangles; a second pass over the output changes nothing; the scan by
 * the string map finds what the byte-by-byte scan finds; a request
 * through a worker's memory (tools recalled, the facts the rules gave
 * of them kept) is the request read whole.
 */

#include <stdlib.h>
#include <string.h>

#include "fz.h"


/*
 * The engine's own output, fed again with the header it produced, is
 * left as it is.  The one exception: a first pass that removed
 * tool-search artifacts the upstream cannot take (fields stripped, or
 * references to tools that are not deferred dropped) also removed what
 * showed which tools a search had found or which search tool the client
 * ran, so the second pass applies the policy to a request without that
 * history; a third pass then changes nothing.  References turned into
 * text count too: they were references to tools that are not deferred.
 * So do the gateway's own searches in history, rewritten into a search
 * tool's call and result for the upstream: their found tools are text
 * there ("Loaded: ..."), which a second pass reads as conversation, not
 * as tools loaded.
 */
static void
fz_check_idempotent(const ts_request_t *rq, const ts_input_t *in,
    const char *out, size_t outlen, int passes)
{
    ts_input_t     again;
    ts_request_t   rq2;
    char          *out2;
    size_t         len2;

    again = *in;

    if (rq->betas_changed) {
        again.betas = rq->betas;
        again.betas_len = strlen(rq->betas);
    }

    (void) fz_rewrite(ts_request_process, &rq2, &again, out, outlen, &out2,
                      &len2);

    if (ts_request_changed(&rq2) || rq2.betas_changed) {
        fz_assert((rq->stripped || rq->hygiene.refs_stale > 0
                   || rq->hygiene.refs_converted > 0
                   || rq->history_searches > 0)
                  && passes == 1,
                  "a second pass changed the output");
        fz_assert(fz_valid_json(out2, len2), "second pass, invalid output");
        fz_check_references(out2, len2);
        fz_check_idempotent(&rq2, &again, out2, len2, passes + 1);
    }

    free(out2);
    ts_request_free(&rq2);
}


/* two items of an index hold the same values (padding aside) */
static int
fz_parts_eq(const ts_parts_t *a, const ts_parts_t *b)
{
    size_t  i;

    for (i = 0; i < a->nv; i++) {
        if (a->v[i]->off != b->v[i]->off || a->v[i]->len != b->v[i]->len
            || a->v[i]->kind != b->v[i]->kind
            || a->v[i]->esc != b->v[i]->esc)
        {
            return 0;
        }
    }

    for (i = 0; i < a->nm; i++) {
        if (a->m[i]->off != b->m[i]->off || a->m[i]->len != b->m[i]->len) {
            return 0;
        }
    }

    return 1;
}


/* what a scan that recalls and a scan that reads found agree */
static int
fz_items_eq(ts_index_t *a, ts_index_t *b)
{
    ts_parts_t  pa, pb;
    size_t      i;
    int         eq;

    eq = 1;

    for (i = 0; eq && i < a->ntools; i++) {
        ts_tool_parts(&a->tools[i], &pa);
        ts_tool_parts(&b->tools[i], &pb);
        eq = fz_parts_eq(&pa, &pb);
    }

    for (i = 0; eq && i < a->nmessages; i++) {
        ts_message_parts(&a->messages[i], &pa);
        ts_message_parts(&b->messages[i], &pb);
        eq = fz_parts_eq(&pa, &pb)
             && a->messages[i].block_first == b->messages[i].block_first
             && a->messages[i].block_end == b->messages[i].block_end;
    }

    for (i = 0; eq && i < a->nblocks; i++) {
        ts_block_parts(&a->blocks[i], &pa);
        ts_block_parts(&b->blocks[i], &pb);
        eq = fz_parts_eq(&pa, &pb)
             && a->blocks[i].message == b->blocks[i].message
             && a->blocks[i].parent == b->blocks[i].parent
             && a->blocks[i].child_first == b->blocks[i].child_first
             && a->blocks[i].child_count == b->blocks[i].child_count;
    }

    return eq;
}


/*
 * A scan in memory kept across inputs agrees with the scan that reads
 * (a): each input is scanned in it twice, the first time against the
 * inputs before (often its mutations).
 */
static void
fz_check_recall(ts_index_t *a, ts_index_mem_t *mem, const char *body,
    size_t len)
{
    ts_index_t  c;
    int         i;

    for (i = 0; i < 2; i++) {
        (void) ts_index_build_in(&c, body, len, mem);

        fz_assert(c.status == a->status && c.err_off == a->err_off
                  && c.ntools == a->ntools && c.nmessages == a->nmessages
                  && c.nblocks == a->nblocks,
                  "the scan that recalls and the scan that reads differ");

        fz_assert(a->status != TS_OK || fz_items_eq(a, &c),
                  "a recalled tool, message or block differs from the one "
                  "read");

        ts_index_free(&c);
    }
}


/*
 * The scan by the string map, the scan of every byte, and the scans in
 * memory kept across inputs agree.  That memory recalls the tools arrays
 * of the inputs before, and the messages of the last input read twice
 * running, as far as their bytes come again.
 */
static void
fz_check_scans(const char *body, size_t len)
{
    ts_index_t  a, b;

    (void) ts_index_build(&a, body, len);
    (void) ts_index_build_plain(&b, body, len);

    fz_assert(a.status == b.status && a.err_off == b.err_off
              && a.nmembers == b.nmembers && a.ntools == b.ntools
              && a.nmessages == b.nmessages && a.nblocks == b.nblocks,
              "the string map's scan and the byte scan disagree");

    fz_check_recall(&a, &fz_mem, body, len);
    fz_check_recall(&a, &fz_collide, body, len);

    ts_index_free(&a);
    ts_index_free(&b);
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_policy_t    f;
    ts_request_t   rq;
    ts_decision_t  d;
    char          *body, *out;
    size_t         len, outlen;
    int            valid;

    if (size < FZ_POLICY_BYTES) {
        return 0;
    }

    fz_init();
    fz_policy(&f, data);

    /* an exact copy: a read past the body is a read past the heap block */
    len = size - FZ_POLICY_BYTES;
    body = malloc(len ? len : 1);
    fz_assert(body != NULL, "memory");
    memcpy(body, data + FZ_POLICY_BYTES, len);

    fz_check_scans(body, len);
    d = fz_rewrite(ts_request_process, &rq, &f.in, body, len, &out,
                   &outlen);
    fz_check_recalled_request(ts_request_process, &f.in, body, len, &rq, out,
                              outlen);

    if (d < TS_DECISION_STANDARD_MODE) {
        fz_assert(!ts_request_changed(&rq) && !rq.betas_changed,
                  "a passthrough decision changed the request");
    }

    valid = d >= TS_DECISION_STANDARD_MODE && fz_valid_json(body, len);

    if (valid) {
        fz_assert(fz_valid_json(out, outlen), "valid input, invalid output");
        fz_check_untouched(body, len, out, outlen);
        fz_check_references(out, outlen);
        fz_check_idempotent(&rq, &f.in, out, outlen, 1);
    }

    free(out);
    free(body);
    ts_request_free(&rq);

    return 0;
}
