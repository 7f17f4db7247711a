/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Fuzz target: one request body through the engine under a policy drawn
 * from the input's first bytes.  Properties: a body the engine does not
 * analyse, or fails on, is not changed; a valid body stays valid;
 * members the engine does not edit are untouched; no tool_reference
 * dangles; a second pass over the output changes nothing; the scan by
 * the string map finds what the byte-by-byte scan finds.
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

    (void) fz_rewrite(&rq2, &again, out, outlen, &out2, &len2);

    if (ts_request_changed(&rq2) || rq2.betas_changed) {
        fz_assert((rq->stripped || rq->refs_stale > 0
                   || rq->refs_converted > 0 || rq->history_searches > 0)
                  && passes == 1,
                  "a second pass changed the output");
        fz_assert(fz_valid_json(out2, len2), "second pass, invalid output");
        fz_check_references(out2, len2);
        fz_check_idempotent(&rq2, &again, out2, len2, passes + 1);
    }

    free(out2);
    ts_request_free(&rq2);
}


/* two tools hold the same values, field by field (padding aside) */
static int
fz_tool_eq(ts_tool_t *a, ts_tool_t *b)
{
    ts_val_t     *va[TS_TOOL_VALS], *vb[TS_TOOL_VALS];
    ts_member_t  *ma[TS_TOOL_MEMBERS], *mb[TS_TOOL_MEMBERS];
    size_t        i;

    ts_tool_parts(a, va, ma);
    ts_tool_parts(b, vb, mb);

    for (i = 0; i < TS_TOOL_VALS; i++) {
        if (va[i]->off != vb[i]->off || va[i]->len != vb[i]->len
            || va[i]->kind != vb[i]->kind || va[i]->esc != vb[i]->esc)
        {
            return 0;
        }
    }

    for (i = 0; i < TS_TOOL_MEMBERS; i++) {
        if (ma[i]->off != mb[i]->off || ma[i]->len != mb[i]->len) {
            return 0;
        }
    }

    return 1;
}


/*
 * The scan by the string map, the scan of every byte, and the scan in
 * memory kept across inputs (which recalls the last tools array read)
 * agree; recalled tools are the tools read.
 */
static void
fz_check_scans(const char *body, size_t len)
{
    static ts_index_mem_t  mem;
    ts_index_t             a, b, c;
    size_t                 i;

    (void) ts_index_build(&a, body, len);
    (void) ts_index_build_plain(&b, body, len);
    (void) ts_index_build_in(&c, body, len, &mem);

    fz_assert(a.status == b.status && a.err_off == b.err_off
              && a.nmembers == b.nmembers && a.ntools == b.ntools
              && a.nmessages == b.nmessages && a.nblocks == b.nblocks,
              "the string map's scan and the byte scan disagree");

    fz_assert(c.status == a.status && c.err_off == a.err_off
              && c.ntools == a.ntools && c.nblocks == a.nblocks,
              "the scan that recalls tools and the scan that reads differ");

    for (i = 0; a.status == TS_OK && i < a.ntools; i++) {
        fz_assert(fz_tool_eq(&a.tools[i], &c.tools[i]),
                  "a recalled tool differs from the tool read");
    }

    ts_index_free(&a);
    ts_index_free(&b);
    ts_index_free(&c);
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
    d = fz_rewrite(&rq, &f.in, body, len, &out, &outlen);

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
