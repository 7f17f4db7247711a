/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * A worker's memory of several tools arrays (ts_recall.h), through the
 * index that recalls from it: hits and misses among many arrays, the
 * least recently used evicted first, the bound in bytes and in arrays,
 * and arrays told apart by their bytes when their hashes are the same.
 * Every scan is checked against the byte scan of the same body.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tst.h"
#include "tpol.h"


#define TST_SETS  8


/*
 * The recorded request as a team's member of tool set k sends it: its
 * first tool's description starts with letter k, after extra x's.
 */
static char *
tst_tool_set(const tst_doc_t *d, int k, size_t extra, size_t *len)
{
    const char  *key = "\"description\":\"";
    char        *p, *out;
    size_t       at;

    p = tst_find(d->buf, d->len, "\"tools\":[");
    p = p ? tst_find(p, d->len - (size_t) (p - d->buf), key) : NULL;

    if (p == NULL) {
        return NULL;
    }

    at = (size_t) (p - d->buf) + strlen(key);
    *len = d->len + extra;
    out = tst_alloc(*len);
    memcpy(out, d->buf, at);
    memset(out + at, 'x', extra);
    memcpy(out + at + extra, d->buf + at, d->len - at);
    out[at + extra] = (char) ('A' + k);

    return out;
}


/* bytes an entry of the recorded request's tools array holds */
static size_t
tst_entry_size(const tst_doc_t *d)
{
    const ts_member_t  *tools;

    tools = ts_index_top(&d->ix, TS_TOP_TOOLS);

    return sizeof(ts_recalled_t) + d->ix.ntools * sizeof(ts_tool_t)
           + tools->val.len;
}


typedef struct {
    tst_doc_t   doc;
    char       *set[TST_SETS];
    size_t      len[TST_SETS];
    long        all;
} tst_sets_t;


static int
tst_sets_load(tst_sets_t *s, size_t extra_step)
{
    int  k;

    if (tst_doc_load(&s->doc, TST_BIG) != 0) {
        return -1;
    }

    s->all = (long) s->doc.ix.ntools;

    for (k = 0; k < TST_SETS; k++) {
        s->set[k] = tst_tool_set(&s->doc, k, extra_step * (size_t) k,
                                 &s->len[k]);
        if (s->set[k] == NULL) {
            return -1;
        }
    }

    return 0;
}


static void
tst_sets_free(tst_sets_t *s)
{
    int  k;

    for (k = 0; k < TST_SETS; k++) {
        free(s->set[k]);
    }

    tst_doc_free(&s->doc);
}


static long
tst_set_recalled(ts_index_mem_t *mem, tst_sets_t *s, int k)
{
    return tst_recalled(mem, s->set[k], s->len[k]);
}


/*
 * Eight tool sets of one length, then of eight lengths, in turn: read
 * the first time, recalled every time after, each as its byte scan.
 */
static void
test_recall_many(void)
{
    ts_index_mem_t  mem;
    tst_sets_t      s;
    size_t          step;
    int             k, round;

    for (step = 0; step < 2; step++) {
        memset(&mem, 0, sizeof(mem));
        mem.tools.size = TS_RECALL_SIZE;
        CHECK(tst_sets_load(&s, step * 3) == 0);

        for (round = 0; round < 3; round++) {
            for (k = 0; k < TST_SETS; k++) {
                tst_note("step %zu round %d set %d", step, round, k);
                CHECK(tst_set_recalled(&mem, &s, k)
                      == (round == 0 ? 0 : s.all));
            }
        }

        CHECK(mem.tools.n == TST_SETS);
        CHECK(mem.tools.used == TST_SETS * tst_entry_size(&s.doc)
                                + step * 3 * (TST_SETS - 1) * TST_SETS / 2);

        /* the request itself: another array, read, then recalled */
        CHECK(tst_recalled(&mem, s.doc.buf, s.doc.len) == 0);
        CHECK(tst_recalled(&mem, s.doc.buf, s.doc.len) == s.all);

        /* an empty array, kept and recalled as no tools */
        CHECK(tst_recalled(&mem, "{\"tools\":[]}", 12) == 0);
        CHECK(tst_recalled(&mem, "{\"tools\":[]}", 12) == 0);
        CHECK(mem.tools.n == TST_SETS + 2);

        tst_sets_free(&s);
        ts_index_mem_free(&mem);
    }
}


/*
 * Room for three arrays: the fourth evicts the least recently used,
 * a recall making an array the most recent.
 */
static void
test_recall_eviction(void)
{
    ts_index_mem_t  mem;
    tst_sets_t      s;

    memset(&mem, 0, sizeof(mem));
    CHECK(tst_sets_load(&s, 0) == 0);
    mem.tools.size = 3 * tst_entry_size(&s.doc);

    CHECK(tst_set_recalled(&mem, &s, 0) == 0);
    CHECK(tst_set_recalled(&mem, &s, 1) == 0);
    CHECK(tst_set_recalled(&mem, &s, 2) == 0);
    CHECK(tst_set_recalled(&mem, &s, 0) == s.all);

    /* 3 evicts 1, the least recently used: 3, 0, 2 */
    CHECK(tst_set_recalled(&mem, &s, 3) == 0);
    CHECK(mem.tools.n == 3 && mem.tools.used <= mem.tools.size);
    CHECK(tst_set_recalled(&mem, &s, 2) == s.all);
    CHECK(tst_set_recalled(&mem, &s, 0) == s.all);
    CHECK(tst_set_recalled(&mem, &s, 3) == s.all);

    /* 1 comes back and evicts 2: 1, 3, 0 */
    CHECK(tst_set_recalled(&mem, &s, 1) == 0);
    CHECK(tst_set_recalled(&mem, &s, 0) == s.all);
    CHECK(tst_set_recalled(&mem, &s, 3) == s.all);
    CHECK(tst_set_recalled(&mem, &s, 1) == s.all);
    CHECK(tst_set_recalled(&mem, &s, 2) == 0);
    CHECK(mem.tools.n == 3 && mem.tools.used <= mem.tools.size);

    tst_sets_free(&s);
    ts_index_mem_free(&mem);
}


/*
 * The bound: an array larger than it is never kept; a bound lowered
 * between requests keeps the most recent arrays that fit; no more than
 * TS_RECALL_MAX_ARRAYS arrays, however small.
 */
static void
test_recall_bound(void)
{
    ts_index_mem_t  mem;
    tst_sets_t      s;
    char            body[64];
    size_t          entry;
    int             k, n;

    memset(&mem, 0, sizeof(mem));
    CHECK(tst_sets_load(&s, 0) == 0);
    entry = tst_entry_size(&s.doc);

    mem.tools.size = entry - 1;
    CHECK(tst_set_recalled(&mem, &s, 0) == 0);
    CHECK(tst_set_recalled(&mem, &s, 0) == 0);
    CHECK(mem.tools.n == 0 && mem.tools.used == 0);

    mem.tools.size = 4 * entry;

    for (k = 0; k < 4; k++) {
        CHECK(tst_set_recalled(&mem, &s, k) == 0);
    }

    CHECK(mem.tools.used == 4 * entry);

    /* lowered to two: 3 and 2 stay, 3 recalled */
    mem.tools.size = 2 * entry + entry / 2;
    CHECK(tst_set_recalled(&mem, &s, 3) == s.all);
    CHECK(mem.tools.n == 2 && mem.tools.used == 2 * entry);
    CHECK(tst_set_recalled(&mem, &s, 2) == s.all);
    CHECK(tst_set_recalled(&mem, &s, 1) == 0);

    /* no size: nothing kept, the arrays dropped */
    mem.tools.size = 0;
    CHECK(tst_set_recalled(&mem, &s, 1) == 0);
    CHECK(mem.tools.n == 0 && mem.tools.used == 0);

    mem.tools.size = TS_RECALL_SIZE;

    for (k = 0; k < TS_RECALL_MAX_ARRAYS + 8; k++) {
        n = snprintf(body, sizeof(body),
                     "{\"tools\":[{\"name\":\"t%d\"}],\"messages\":[]}", k);
        CHECK(tst_recalled(&mem, body, (size_t) n) == 0);
    }

    CHECK(mem.tools.n == TS_RECALL_MAX_ARRAYS);

    /* the first ones were evicted, the last one is there */
    n = snprintf(body, sizeof(body),
                 "{\"tools\":[{\"name\":\"t%d\"}],\"messages\":[]}", 0);
    CHECK(tst_recalled(&mem, body, (size_t) n) == 0);
    CHECK(tst_recalled(&mem, body, (size_t) n) == 1);

    tst_sets_free(&s);
    ts_index_mem_free(&mem);
}


/*
 * Every array hashes the same: arrays of one length, of one or two
 * tools, are told apart by their bytes, each recalled as its own.  A
 * lookup compares TS_RECALL_MAX_COMPARES arrays in vain at most: past
 * them, the array is read, and read as the byte scan reads it.
 */
static void
test_recall_collisions(void)
{
    static const char  *bodies[] = {
        "{\"tools\":[{\"name\":\"a\"},{\"name\":\"b\"}],\"messages\":[]}",
        "{\"tools\":[{\"name\":\"abcdefghijklmn\"}],\"messages\":[]}",
        "{\"tools\":[{\"name\":\"c\"}, {\"name\":\"d\"}],\"messages\":[]}",
        "{\"tools\":[{\"name\":\"a\"}              ],\"messages\":[]}",
    };
    static const long   ntools[] = { 2, 1, 2, 1 };
    static const char  *names = "pqrs";
    ts_index_mem_t      mem;
    size_t              i;
    int                 round, k;
    char                one[4][64];

    memset(&mem, 0, sizeof(mem));
    mem.tools.size = TS_RECALL_SIZE;
    mem.tools.same_hash = 1;

    for (round = 0; round < 3; round++) {
        for (i = 0; i < 4; i++) {
            tst_note("round %d body %zu", round, i);
            CHECK(tst_recalled(&mem, bodies[i], strlen(bodies[i]))
                  == (round == 0 ? 0 : ntools[i]));
        }
    }

    /*
     * Arrays of one tool, of one length, too short for spans: each
     * compared whole.  Read in turn, kept newest first.
     */
    for (k = 0; k < 4; k++) {
        snprintf(one[k], sizeof(one[k]),
                 "{\"tools\":[{\"name\":\"%c\"}],\"messages\":[]}", names[k]);
        CHECK(tst_recalled(&mem, one[k], strlen(one[k])) == 0);
    }

    /* the most recent; then 2, after the most recent, 3 */
    CHECK(tst_recalled(&mem, one[3], strlen(one[3])) == 1);
    CHECK(tst_recalled(&mem, one[2], strlen(one[2])) == 1);

    /* 1 after 3 compared in vain; 0 after 3 and 2: read, kept again */
    CHECK(tst_recalled(&mem, one[1], strlen(one[1])) == 1);
    CHECK(tst_recalled(&mem, one[0], strlen(one[0])) == 0);
    CHECK(mem.tools.n == 9);
    CHECK(tst_recalled(&mem, one[0], strlen(one[0])) == 1);

    ts_index_mem_free(&mem);
}


/*
 * Every array hashes the same, and the recorded request's tool sets,
 * of one length, differ in one place: the window where the last lookup
 * saw two of them differ turns the others away without a memcmp, so
 * each is recalled whatever the order, none compared in vain.
 */
static void
test_recall_window(void)
{
    ts_index_mem_t  mem;
    tst_sets_t      s;
    int             k, round;

    memset(&mem, 0, sizeof(mem));
    mem.tools.size = TS_RECALL_SIZE;
    mem.tools.same_hash = 1;
    CHECK(tst_sets_load(&s, 0) == 0);

    for (k = 0; k < TST_SETS; k++) {
        CHECK(tst_set_recalled(&mem, &s, k) == 0);
    }

    for (round = 0; round < 2; round++) {
        for (k = 0; k < TST_SETS; k++) {
            tst_note("round %d set %d", round, k);
            CHECK(tst_set_recalled(&mem, &s, round ? TST_SETS - 1 - k : k)
                  == s.all);
        }
    }

    CHECK(mem.tools.n == TST_SETS);

    tst_sets_free(&s);
    ts_index_mem_free(&mem);
}


/* the output of the recorded request under t, through memory mem */
static char *
tst_output(tpol_t *t, ts_index_mem_t *mem, const tst_doc_t *d,
    ts_decision_t want, size_t *len)
{
    ts_input_t     in;
    ts_request_t   rq;
    char          *out;

    in = t->in;
    in.index_mem = mem;
    CHECK(ts_request_process(&rq, &in, d->buf, d->len) == want);
    *len = ts_request_size(&rq);
    out = tst_alloc(*len + 1);
    CHECK(ts_request_render(&rq, out) == 0);
    ts_request_free(&rq);

    return out;
}


/* 1 when the output through mem is the output read whole, want */
static int
tst_same_output(tpol_t *t, ts_index_mem_t *mem, const tst_doc_t *d,
    ts_decision_t decision, const char *want, size_t want_len)
{
    char    *out;
    size_t   len;
    int      same;

    out = tst_output(t, mem, d, decision, &len);
    same = len == want_len && memcmp(out, want, len) == 0;
    free(out);

    return same;
}


/* bytes the memory's entries hold, their facts included */
static size_t
tst_used(const ts_recall_t *rc)
{
    const ts_recalled_t  *e;
    size_t                n;

    n = 0;

    for (e = rc->mru; e != NULL; e = e->next) {
        n += e->size;
    }

    return n;
}


/*
 * What the rules say of a recalled array's tools is kept with it, made
 * once per policy lists: the outputs through the memory are those read
 * whole, under one policy (deferral), another that keeps MCP tools
 * loaded (nothing to defer), and the first again, then other lists at
 * the addresses of the second's; the facts count within the bound,
 * and a memory that can hold the array but not its facts gives the
 * same outputs without them.
 */
static void
test_recall_facts(void)
{
    ts_index_mem_t  mem;
    tst_doc_t       d;
    tpol_t          a, b;
    char           *want_a, *want_b;
    size_t          len_a, len_b;
    int             i;

    static const char  small[] =
        "{\"tools\":[{\"name\":\"t\"}],\"messages\":[]}";

    CHECK(tst_doc_load(&d, TST_BIG) == 0);
    tpol_init(&a);
    tpol_init(&b);
    tpol_add(&b.l.always_load, "~^mcp__");

    want_a = tst_output(&a, NULL, &d, TS_DECISION_DEFERRED_HOSTED, &len_a);
    want_b = tst_output(&b, NULL, &d, TS_DECISION_NOTHING_TO_DEFER, &len_b);
    CHECK(len_a != len_b);

    memset(&mem, 0, sizeof(mem));
    mem.tools.size = TS_RECALL_SIZE;

    for (i = 0; i < 2; i++) {
        tst_note("round %d", i);
        CHECK(tst_same_output(&a, &mem, &d, TS_DECISION_DEFERRED_HOSTED,
                              want_a, len_a));
        CHECK(mem.tools.n == 1 && mem.tools.mru->memo != NULL);
        CHECK(tst_same_output(&b, &mem, &d, TS_DECISION_NOTHING_TO_DEFER,
                              want_b, len_b));
        CHECK(mem.tools.n == 1 && mem.tools.mru->memo != NULL);
    }

    CHECK(mem.tools.used == tst_used(&mem.tools));
    CHECK(mem.tools.used == tst_entry_size(&d)
                            + mem.tools.mru->memo->size);

    /*
     * b's lists freed and others made at their addresses, as a
     * configuration reloaded in one process: told apart by their serial
     */
    tpol_free(&b);
    tpol_init(&b);
    tpol_add(&b.l.always_load, "mcp__chrome-devtools__click");
    free(want_b);
    want_b = tst_output(&b, NULL, &d, TS_DECISION_DEFERRED_HOSTED, &len_b);
    CHECK(len_b != len_a);
    CHECK(tst_same_output(&b, &mem, &d, TS_DECISION_DEFERRED_HOSTED,
                          want_b, len_b));
    ts_index_mem_free(&mem);

    /* room for the array alone */
    memset(&mem, 0, sizeof(mem));
    mem.tools.size = tst_entry_size(&d);

    for (i = 0; i < 2; i++) {
        CHECK(tst_same_output(&a, &mem, &d, TS_DECISION_DEFERRED_HOSTED,
                              want_a, len_a));
        CHECK(mem.tools.n == 1 && mem.tools.mru->memo == NULL);
        CHECK(mem.tools.used == tst_entry_size(&d));
    }

    ts_index_mem_free(&mem);

    /*
     * room for the array and a small one, not for the facts as well:
     * the facts serve the request and go, the small array stays
     */
    memset(&mem, 0, sizeof(mem));
    mem.tools.size = TS_RECALL_SIZE;
    CHECK(tst_recalled(&mem, small, strlen(small)) == 0);
    mem.tools.size = mem.tools.used + tst_entry_size(&d);

    for (i = 0; i < 2; i++) {
        CHECK(tst_same_output(&a, &mem, &d, TS_DECISION_DEFERRED_HOSTED,
                              want_a, len_a));
        CHECK(mem.tools.n == 2 && mem.tools.mru->memo == NULL);
    }

    CHECK(tst_recalled(&mem, small, strlen(small)) == 1);

    ts_index_mem_free(&mem);
    free(want_a);
    free(want_b);
    tpol_free(&a);
    tpol_free(&b);
    tst_doc_free(&d);
}


const tst_case_t  tst_recall_tests[] = {
    { "recall: many tools arrays, each recalled by its bytes",
      test_recall_many },
    { "recall: the least recently used array evicted first",
      test_recall_eviction },
    { "recall: bounded in bytes and in arrays", test_recall_bound },
    { "recall: arrays of one hash told apart by their bytes",
      test_recall_collisions },
    { "recall: a team's arrays told apart where they differ",
      test_recall_window },
    { "recall: what the rules say of an array's tools kept with it",
      test_recall_facts },
    { NULL, NULL }
};
