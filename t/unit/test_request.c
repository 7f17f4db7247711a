/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * One request through the engine: decisions and unchanged output.
 */

#include <stdlib.h>
#include <string.h>

#include "tst.h"


static void
test_request_fixtures_unchanged(void)
{
    char         **paths, *buf;
    size_t         n, i;
    tst_doc_t      d;
    ts_request_t   rq;

    n = tst_fixtures(&paths);
    CHECK(n >= 10);

    for (i = 0; i < n; i++) {
        tst_note("%s", paths[i]);

        if (!CHECK(tst_doc_load(&d, paths[i]) == 0)) {
            tst_doc_free(&d);
            continue;
        }

        memset(&rq, 0, sizeof(rq));
        CHECK(ts_request_process(&rq, NULL, d.buf, d.len)
              == TS_DECISION_PASSTHROUGH);
        CHECK(!ts_request_changed(&rq));
        CHECK(ts_request_size(&rq) == d.len);

        buf = tst_alloc(d.len + 1);
        CHECK(ts_request_render(&rq, buf) == 0);
        CHECK(memcmp(buf, d.buf, d.len) == 0);
        free(buf);

        ts_request_free(&rq);
        tst_doc_free(&d);
    }

    tst_free_list(paths, n);
}


static const struct {
    ts_status_t     st;
    ts_decision_t   decision;
    const char     *word;
} tst_decisions[] = {
    { TS_ERR_SYNTAX, TS_DECISION_MALFORMED, "passthrough_malformed" },
    { TS_ERR_DEPTH, TS_DECISION_TOO_DEEP, "passthrough_too_deep" },
    { TS_ERR_DUPLICATE, TS_DECISION_DUPLICATE_KEY,
      "passthrough_duplicate_key" },
    { TS_ERR_TYPE, TS_DECISION_WRONG_TYPE, "passthrough_wrong_type" },
    { TS_ERR_LIMIT, TS_DECISION_LIMIT, "passthrough_limit" }
};


static void
test_request_bad_bodies(void)
{
    const tst_body_t  *b;
    ts_request_t       rq;
    size_t             i, len;
    char              *buf;

    for (b = tst_bad_bodies; b->name; b++) {
        tst_note("%s", b->name);

        len = strlen(b->body);
        buf = tst_dup(b->body, len);
        memset(&rq, 0, sizeof(rq));

        ts_request_process(&rq, NULL, buf, len);

        for (i = 0; i < sizeof(tst_decisions) / sizeof(tst_decisions[0]);
             i++)
        {
            if (tst_decisions[i].st == b->st) {
                CHECK(rq.decision == tst_decisions[i].decision);
                CHECK(strcmp(ts_decision_name(rq.decision),
                             tst_decisions[i].word) == 0);
            }
        }

        CHECK(!ts_request_changed(&rq));

        ts_request_free(&rq);
        free(buf);
    }
}


static void
test_decision_names(void)
{
    int  d, e;

    CHECK(strcmp(ts_decision_name(TS_DECISION_N), "none") == 0);

    /* every decision has its own word, safe for logs and headers */
    for (d = 0; d < TS_DECISION_N; d++) {
        CHECK(strspn(ts_decision_name(d), "abcdefghijklmnopqrstuvwxyz_")
              == strlen(ts_decision_name(d)));

        for (e = d + 1; e < TS_DECISION_N; e++) {
            CHECK(strcmp(ts_decision_name(d), ts_decision_name(e)) != 0);
        }
    }
}


static void
test_defer_mode_parse(void)
{
    static const struct {
        const char  *s;
        int          mode;
        unsigned     percent;
    } t[] = {
        { "off", TS_DEFER_OFF, 10 }, { "on", TS_DEFER_ON, 0 },
        { "auto", TS_DEFER_AUTO, 10 }, { "auto:0", TS_DEFER_ON, 0 },
        { "auto:1", TS_DEFER_AUTO, 1 }, { "auto:99", TS_DEFER_AUTO, 99 },
        { "auto:100", -1, 0 },
        { "auto:101", -1, 0 }, { "auto:", -1, 0 }, { "auto:-1", -1, 0 },
        { "auto:1000", -1, 0 }, { "auto:5x", -1, 0 }, { "On", -1, 0 },
        { "", -1, 0 }, { "autox", -1, 0 }
    };
    unsigned  percent;
    size_t    i;
    int       mode;

    for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        tst_note("mode \"%s\"", t[i].s);
        mode = ts_defer_mode_parse(t[i].s, strlen(t[i].s), &percent);
        CHECK(mode == t[i].mode);
        CHECK(mode < 0 || percent == t[i].percent);
    }
}


static void
test_threshold_chars(void)
{
    /* docs/spec/deferral.md: floor(floor(window * N / 100) * 2.5) */
    CHECK(ts_policy_threshold_chars(200000, 10) == 50000);
    CHECK(ts_policy_threshold_chars(1000000, 10) == 250000);
    CHECK(ts_policy_threshold_chars(200000, 0) == 0);
    CHECK(ts_policy_threshold_chars(200000, 100) == 500000);
    CHECK(ts_policy_threshold_chars(199999, 1) == 4997);
    CHECK(ts_policy_threshold_chars(100, 3) == 7);
}


const tst_case_t  tst_request_tests[] = {
    { "defer_mode_parse", test_defer_mode_parse },
    { "threshold_chars", test_threshold_chars },
    { "request_fixtures_unchanged", test_request_fixtures_unchanged },
    { "request_bad_bodies", test_request_bad_bodies },
    { "decision_names", test_decision_names },
    { NULL, NULL }
};
