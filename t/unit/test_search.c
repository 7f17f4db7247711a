/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Tool search: docs/spec/search.md's scorer rule by rule and its worked
 * example, select:, the mcp__ prefix path, required terms, limits, and
 * the hybrid ranking on natural-language queries over the real
 * catalogue.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tst.h"
#include "search/ts_lexicon.h"
#include "search/ts_prereq.h"
#include "search/ts_search.h"
#include "search/ts_starts.h"


typedef struct {
    char            *body;
    ts_index_t       ix;
    ts_catalog_t     c;
    ts_result_t      r;
} tcat_t;


/* tools written with ' for "; pool NULL: every tool is deferred */
static int
tcat(tcat_t *t, const char *tools, const unsigned char *pool,
    const ts_hints_t *hints)
{
    char    *q;
    size_t   len;

    memset(t, 0, sizeof(tcat_t));
    q = tst_quote(tools, &len);
    t->body = tst_alloc(len + 12);
    len = (size_t) sprintf(t->body, "{\"tools\":%s}", q);
    free(q);

    return CHECK(ts_index_build(&t->ix, t->body, len) == TS_OK)
           && CHECK(ts_catalog_build(&t->c, &t->ix, pool, hints, 1) == 0);
}


static void
tcat_free(tcat_t *t)
{
    ts_result_free(&t->r);
    ts_catalog_free(&t->c);
    ts_index_free(&t->ix);
    free(t->body);
}


static int
tsearch(tcat_t *t, const char *query, int scoring, size_t max)
{
    ts_result_free(&t->r);
    tst_note("query \"%s\"", query);

    return CHECK(ts_search_run(&t->c, query, strlen(query), scoring, max,
                               &t->r) == 0);
}


/* the hit names, space-separated, as a static string */
static const char *
thits(const tcat_t *t)
{
    static char        out[4096];
    const ts_entry_t  *e;
    size_t             i, n;

    out[0] = '\0';

    for (i = 0, n = 0; i < t->r.nhits && n < sizeof(out) - 600; i++) {
        e = &t->c.tools[t->r.hits[i].tool];
        n += (size_t) snprintf(out + n, sizeof(out) - n, "%s%.*s",
                               i ? " " : "", (int) e->name.len,
                               ts_catalog_name(&t->c, e));
    }

    return out;
}


static void
test_worked_example(void)
{
    tcat_t  t;

    if (!tcat(&t, "[{'name':'mcp__slack__send_message'},"
                  "{'name':'mcp__slack__list_channels'},"
                  "{'name':'mcp__github__create_issue'},"
                  "{'name':'mcp__email__send_email'}]", NULL, NULL))
    {
        return;
    }

    if (tsearch(&t, "slack send", TS_SCORING_SEED, 0)) {
        CHECK(strcmp(thits(&t), "mcp__slack__send_message "
                     "mcp__slack__list_channels mcp__email__send_email")
              == 0);
        CHECK(t.r.nhits == 3 && t.r.hits[0].score == 24
              && t.r.hits[1].score == 12 && t.r.hits[2].score == 12);
        CHECK(t.r.kind == TS_QUERY_KEYWORDS);
    }

    tcat_free(&t);
}


static void
test_name_parts(void)
{
    tcat_t             t;
    const ts_entry_t  *e;

    if (!tcat(&t, "[{'name':'NotebookEdit'},"
                  "{'name':'mcp__my_srv__getHTTPStatus'},"
                  "{'name':'mcp__chrome-devtools__take_screenshot'}]",
              NULL, NULL))
    {
        return;
    }

    e = &t.c.tools[0];
    CHECK(!e->mcp && e->nparts == 2);
    CHECK(strncmp(ts_catalog_str(&t.c, e->words), "notebook edit",
                  e->words.len) == 0);

    e = &t.c.tools[1];
    CHECK(e->mcp && e->nparts == 4);
    CHECK(strncmp(ts_catalog_str(&t.c, e->words), "my srv get httpstatus",
                  e->words.len) == 0);
    CHECK(strncmp(ts_catalog_str(&t.c, e->full), "my_srv__gethttpstatus",
                  e->full.len) == 0);

    e = &t.c.tools[2];
    CHECK(strncmp(ts_catalog_str(&t.c, e->words),
                  "chrome-devtools take screenshot", e->words.len) == 0);

    tcat_free(&t);
}


static void
test_seed_points(void)
{
    tcat_t  t;

    if (!tcat(&t, "[{'name':'NotebookEdit'},"
                  "{'name':'mcp__x__notebooks_edit'},"
                  "{'name':'Other','description':'Edits a NOTEBOOK.'},"
                  "{'name':'mcp__x__zip_tool',"
                  "'description':'Already reads a thread'},"
                  "{'name':'mcp__x__snake_case'}]", NULL, NULL))
    {
        return;
    }

    /* exact part 10 (built-in) / 12 (MCP); substring 5 / 6 */
    if (tsearch(&t, "notebook", TS_SCORING_SEED, 10)) {
        CHECK(strcmp(thits(&t),
                     "NotebookEdit mcp__x__notebooks_edit Other") == 0);
        CHECK(t.r.hits[0].score == 10 && t.r.hits[1].score == 6
              && t.r.hits[2].score == 2);
    }

    /* word boundaries: "read" is not in "already" or "thread" */
    if (tsearch(&t, "read", TS_SCORING_SEED, 10)) {
        CHECK(t.r.nhits == 0);
    }

    if (tsearch(&t, "reads", TS_SCORING_SEED, 10)) {
        CHECK(strcmp(thits(&t), "mcp__x__zip_tool") == 0);
    }

    /* the full name counts 3, and only while nothing else matched */
    if (tsearch(&t, "e_c", TS_SCORING_SEED, 10)) {
        CHECK(strcmp(thits(&t), "mcp__x__snake_case") == 0
              && t.r.hits[0].score == 3);
    }

    /* the query is text, never a pattern */
    if (tsearch(&t, "(a+)+$ .* [", TS_SCORING_SEED, 10)) {
        CHECK(t.r.nhits == 0);
    }

    tcat_free(&t);
}


static void
test_required_terms(void)
{
    tcat_t  t;

    if (!tcat(&t, "[{'name':'mcp__slack__send_message'},"
                  "{'name':'mcp__slack__list_channels'},"
                  "{'name':'mcp__email__send_email',"
                  "'description':'Not for Slack.'},"
                  "{'name':'mcp__github__create_issue'}]", NULL, NULL))
    {
        return;
    }

    if (tsearch(&t, "+slack send", TS_SCORING_SEED, 0)) {
        CHECK(strcmp(thits(&t), "mcp__slack__send_message "
                     "mcp__email__send_email mcp__slack__list_channels")
              == 0);
    }

    /* required terms keep the seed's behaviour in hybrid mode too */
    if (tsearch(&t, "+slack +list", TS_SCORING_HYBRID, 0)) {
        CHECK(strcmp(thits(&t), "mcp__slack__list_channels") == 0);
        CHECK(t.r.hits[0].score == 24);
    }

    if (tsearch(&t, "+jira send", TS_SCORING_SEED, 0)) {
        CHECK(t.r.nhits == 0);
    }

    tcat_free(&t);
}


static void
test_select(void)
{
    static const unsigned char  pool[] = { 0, 1, 1, 0 };
    tcat_t                      t;

    if (!tcat(&t, "[{'name':'Read'},{'name':'mcp__a__x'},"
                  "{'name':'mcp__b__x'},{'name':'Edit'}]", pool, NULL))
    {
        return;
    }

    /* loaded tools are found too; unknown names are reported */
    if (tsearch(&t, "  select: mcp__b__x, Read ,nope,,read,EDIT ",
                TS_SCORING_HYBRID, 1))
    {
        CHECK(t.r.kind == TS_QUERY_SELECT);
        CHECK(strcmp(thits(&t), "mcp__b__x Read Edit") == 0);
        CHECK(t.r.nmissing == 1 && t.r.missing[0].len == 4);
    }

    tcat_free(&t);
}


static void
test_select_limit(void)
{
    tst_sb_t  q;
    tcat_t    t;
    int       i;

    if (!tcat(&t, "[{'name':'Read'}]", NULL, NULL)) {
        return;
    }

    memset(&q, 0, sizeof(tst_sb_t));
    tst_sb_str(&q, "select:");

    for (i = 0; i < 40; i++) {
        tst_sb_str(&q, "Read,");
    }

    tst_sb_add(&q, "", 1);

    if (tsearch(&t, q.p, TS_SCORING_SEED, 0)) {
        CHECK(t.r.nhits == 1 && t.r.truncated);
    }

    free(q.p);
    tcat_free(&t);
}


static void
test_prefix(void)
{
    static const unsigned char  pool[] = { 1, 1, 0, 1 };
    tcat_t                      t;

    if (!tcat(&t, "[{'name':'mcp__github__create_issue'},"
                  "{'name':'mcp__github__get_issue'},"
                  "{'name':'mcp__github__list_issues'},"
                  "{'name':'mcp__gitlab__get_issue'}]", pool, NULL))
    {
        return;
    }

    if (tsearch(&t, "mcp__GitHub__", TS_SCORING_SEED, 0)) {
        CHECK(t.r.kind == TS_QUERY_PREFIX);
        CHECK(strcmp(thits(&t), "mcp__github__create_issue "
                     "mcp__github__get_issue") == 0);
    }

    if (tsearch(&t, "mcp__git", TS_SCORING_SEED, 2)) {
        CHECK(t.r.nhits == 2);
    }

    /* no prefix match: keyword search over the same text */
    if (tsearch(&t, "mcp__jira get_issue", TS_SCORING_SEED, 0)) {
        CHECK(t.r.kind == TS_QUERY_KEYWORDS);
        CHECK(strcmp(thits(&t), "mcp__github__get_issue "
                     "mcp__gitlab__get_issue") == 0);
    }

    tcat_free(&t);
}


static void
test_limits_and_ties(void)
{
    tst_sb_t  tools, q;
    tcat_t    t;
    char      name[64];
    int       i;

    memset(&tools, 0, sizeof(tst_sb_t));
    tst_sb_str(&tools, "[");

    for (i = 0; i < 30; i++) {
        snprintf(name, sizeof(name), "%s{'name':'mcp__s__item_%02d'}",
                 i ? "," : "", i);
        tst_sb_str(&tools, name);
    }

    tst_sb_add(&tools, "]", 2);

    if (!tcat(&t, tools.p, NULL, NULL)) {
        free(tools.p);
        return;
    }

    /* equal scores keep catalogue order; 5 by default */
    if (tsearch(&t, "item", TS_SCORING_SEED, 0)) {
        CHECK(strcmp(thits(&t), "mcp__s__item_00 mcp__s__item_01 "
                     "mcp__s__item_02 mcp__s__item_03 mcp__s__item_04")
              == 0);
    }

    if (tsearch(&t, "item", TS_SCORING_HYBRID, 12)) {
        CHECK(t.r.nhits == 12);
    }

    /* terms past the limit are dropped and the result says so */
    memset(&q, 0, sizeof(tst_sb_t));

    for (i = 0; i < TS_SEARCH_TERMS_MAX; i++) {
        snprintf(name, sizeof(name), "zz%d ", i);
        tst_sb_str(&q, name);
    }

    tst_sb_add(&q, "item", 5);

    if (tsearch(&t, q.p, TS_SCORING_SEED, 0)) {
        CHECK(t.r.nhits == 0 && t.r.truncated);
    }

    free(q.p);
    memset(&q, 0, sizeof(tst_sb_t));
    tst_sb_rep(&q, "x", 100 * 1024);
    tst_sb_add(&q, "", 1);

    if (tsearch(&t, q.p, TS_SCORING_HYBRID, 0)) {
        CHECK(t.r.nhits == 0 && t.r.truncated);
    }

    if (tsearch(&t, " \t\n", TS_SCORING_HYBRID, 0)) {
        CHECK(t.r.kind == TS_QUERY_EMPTY && t.r.nhits == 0);
    }

    free(q.p);
    free(tools.p);
    tcat_free(&t);
}


/*
 * Sixteen words with many thesaurus relatives: the relatives of the first
 * fifteen would fill the 64 terms, the last word must still count.
 */
static void
test_relatives_leave_room(void)
{
    tcat_t  t;

    if (!tcat(&t, "[{'name':'mcp__zoo__zebra_walk'},"
                  "{'name':'mcp__zoo__feed_lion'}]", NULL, NULL))
    {
        return;
    }

    if (tsearch(&t, "delete get update search send stop create run "
                    "navigate image calendar email user bug type zebra",
                TS_SCORING_HYBRID, 0))
    {
        CHECK(strcmp(thits(&t), "mcp__zoo__zebra_walk") == 0);
    }

    tcat_free(&t);
}


/*
 * A query of up to 16 words brings thesaurus relatives ("erase" finds
 * remove); a longer one does not: a task sentence carries its own
 * vocabulary.  The two tools differ only by the relative.
 */
static void
test_long_query_relatives(void)
{
    static const char  filler[] = "alpha bravo charlie delta echo foxtrot "
                                  "golf hotel india juliet kilo lima mike "
                                  "november";
    char    query[256];
    tcat_t  t;

    if (!tcat(&t, "[{'name':'mcp__files__stat',"
                  "'description':'Tells a file size'},"
                  "{'name':'mcp__files__remove',"
                  "'description':'Takes a file away'}]", NULL, NULL))
    {
        return;
    }

    snprintf(query, sizeof(query), "erase the file %s", filler);

    if (tsearch(&t, query, TS_SCORING_HYBRID, 1)) {
        CHECK(strcmp(thits(&t), "mcp__files__remove") == 0);
    }

    snprintf(query, sizeof(query), "erase the file %s oscar", filler);

    if (tsearch(&t, query, TS_SCORING_HYBRID, 1)) {
        CHECK(strcmp(thits(&t), "mcp__files__stat") == 0);
    }

    tcat_free(&t);
}


static void
test_hints_and_escapes(void)
{
    ts_match_list_t      names;
    const char *const    phrases[] = { "Post To Channels", NULL };
    ts_hints_t           hints;
    tcat_t               t;
    char                 err[128];

    memset(&names, 0, sizeof(ts_match_list_t));

    if (!CHECK(ts_match_add(&names, "~^mcp__chat__", 13, err,
                            sizeof(err)) == 0))
    {
        return;
    }

    hints.names = &names;
    hints.phrases = phrases;

    if (tcat(&t, "[{'name':'mcp__chat__write'},"
                 "{'name':'mcp__\\u0062log__write',"
                 "'description':'Publishes a \\u0050OST.\\nNew line'}]",
             NULL, &hints))
    {
        if (tsearch(&t, "post", TS_SCORING_SEED, 0)) {
            CHECK(strcmp(thits(&t), "mcp__chat__write mcp__blog__write")
                  == 0);
            CHECK(t.r.hits[0].score == 4 && t.r.hits[1].score == 2);
        }

        if (tsearch(&t, "line", TS_SCORING_SEED, 0)) {
            CHECK(strcmp(thits(&t), "mcp__blog__write") == 0);
        }

        tcat_free(&t);
    }

    ts_match_free(&names);
}


static void
test_fallback(void)
{
    static const unsigned char  pool[] = { 1, 0, 1, 1 };
    tcat_t                      t;
    char                        out[64];
    size_t                      n;

    if (!tcat(&t, "[{'name':'mcp__aaaa__one'},{'name':'Read'},"
                  "{'name':'mcp__aaaa__two'},{'name':'mcp__aaaa__three'}]",
              pool, NULL))
    {
        return;
    }

    n = ts_search_fallback(&t.c, out, sizeof(out));
    CHECK(n == strlen(out) && n < sizeof(out));
    CHECK(strcmp(out, "mcp__aaaa__one, mcp__aaaa__two, and 1 more") == 0);

    n = ts_search_fallback(&t.c, out, 44);
    CHECK(strcmp(out, "mcp__aaaa__one, and 2 more") == 0);

    tcat_free(&t);
}


static void
test_stems(void)
{
    CHECK(ts_stem("issues", 6) == 4);
    CHECK(ts_stem("meetings", 8) == 4);
    CHECK(ts_stem("create", 6) == 5);
    CHECK(ts_stem("entries", 7) == 4);
    CHECK(ts_stem("branches", 8) == 6);
    CHECK(ts_stem("created", 7) == 5);
    CHECK(ts_stem("saved", 5) == 4);
    CHECK(ts_stem("listing", 7) == 4);
    CHECK(ts_stem("string", 6) == 6);
    CHECK(ts_stem("status", 6) == 6);
    CHECK(ts_stem("class", 5) == 5);
    CHECK(ts_stem("pr", 2) == 2);
    CHECK(ts_stem("entry", 5) == 4 && ts_stem("query", 5) == 4);
    CHECK(ts_stem("copy", 4) == 4);

    /* an adverb's -ly, not the end of "supply", "family" or "daily" */
    CHECK(ts_stem("monthly", 7) == 5 && ts_stem("weekly", 6) == 4);
    CHECK(ts_stem("supply", 6) == 5 && ts_stem("family", 6) == 5);
    CHECK(ts_stem("daily", 5) == 4);
    CHECK(ts_request_word("kindly", 6) && ts_request_word("provide", 7));
    CHECK(!ts_request_word("find", 4) && !ts_request_word("details", 7));
    CHECK(ts_word_start("a blacklist", 2) && !ts_word_start("blacklist", 5));
    CHECK(ts_word_end("lists", 5, 5) && !ts_word_end("lists", 5, 4));
    CHECK(ts_word_bounded("read it", 7, 0, 4));
    CHECK(!ts_word_bounded("already", 7, 3, 4));
    CHECK(!ts_word_bounded("re_read", 7, 3, 4));
}


static int
tcontains(const ts_catalog_t *c, const ts_entry_t *e, const char *s)
{
    size_t  i, n;

    n = strlen(s);

    for (i = 0; i + n <= e->name.len; i++) {
        if (memcmp(ts_catalog_name(c, e) + i, s, n) == 0) {
            return 1;
        }
    }

    return 0;
}


/* the real catalogue: the model's natural words find the tool */
static void
test_hybrid_natural(void)
{
    static const char *const  cases[][2] = {
        { "take a picture of what the browser shows", "screenshot" },
        { "remember a fact about the user", "mcp__memory__" },
        { "open a bug report on github", "mcp__github__create_issue" },
        { "show the folders in this directory", "director" },
        { NULL, NULL }
    };

    tst_doc_t   d;
    ts_catalog_t c;
    ts_result_t  r;
    size_t       i, k;
    int          found;

    if (!CHECK(tst_doc_load(&d, TST_BIG) == 0) || !CHECK(d.st == TS_OK)) {
        tst_doc_free(&d);
        return;
    }

    if (CHECK(ts_catalog_build(&c, &d.ix, NULL, NULL, 1) == 0)) {
        for (i = 0; cases[i][0]; i++) {
            tst_note("query \"%s\"", cases[i][0]);

            if (!CHECK(ts_search_run(&c, cases[i][0], strlen(cases[i][0]),
                                     TS_SCORING_HYBRID, 5, &r) == 0))
            {
                continue;
            }

            for (k = 0, found = 0; k < r.nhits; k++) {
                found |= tcontains(&c, &c.tools[r.hits[k].tool],
                                   cases[i][1]);
            }

            CHECK(found);
            ts_result_free(&r);
        }

        ts_catalog_free(&c);
    }

    tst_doc_free(&d);
}


/* lent memory: used when large enough, the heap otherwise */
static void
test_lent_memory(void)
{
    static const char  body[] = "{\"tools\":[{\"name\":\"mcp__a__read_file\","
                                "\"input_schema\":{\"properties\":"
                                "{\"Path\":{}}}}]}";
    static double      mem[512];
    ts_index_t         ix;
    ts_catalog_t       c;
    ts_result_t        r;

    if (!CHECK(ts_index_build(&ix, body, sizeof(body) - 1) == TS_OK)) {
        return;
    }

    if (CHECK(ts_catalog_build_in(&c, &ix, NULL, NULL, 1, mem, 8) == 0)) {
        CHECK(c.heap != NULL && c.need > 8 && c.need <= sizeof(mem));
        ts_catalog_free(&c);
    }

    if (CHECK(ts_catalog_build_in(&c, &ix, NULL, NULL, 1, mem, sizeof(mem))
              == 0))
    {
        CHECK(c.heap == NULL && c.text >= (char *) mem);

        /* the schema is read in place, ignoring case */
        if (CHECK(ts_search_run(&c, "path", 4, TS_SCORING_HYBRID, 5, &r)
                  == 0))
        {
            CHECK(r.nhits == 1 && r.hits[0].bm25 > 0);
            ts_result_free(&r);
        }

        ts_catalog_free(&c);
    }

    ts_index_free(&ix);
}


/* a text of every kind of byte, from a fixed pseudo-random sequence */
static void
tbytes(char *p, size_t n, const char *alphabet)
{
    unsigned long  x;
    size_t         i, k;

    k = strlen(alphabet);

    for (i = 0, x = 12345; i < n; i++) {
        x = x * 1103515245 + 12345;
        p[i] = alphabet[(x >> 16) % k];
    }
}


/* chunk by chunk, up to the end of readable memory, as the walks do */
static void
test_word_starts(void)
{
    static const char  alphabet[] = "aZ9 _-\"\xc3\xa9.xQ0";
    char               text[300];
    const char        *p, *end;
    uint64_t           bits, carry;
    size_t             n, at;
    int                ok;

    tbytes(text, sizeof(text), alphabet);

    for (n = 1; n < sizeof(text); n += 37) {
        end = text + n;
        ok = 1;

        for (p = text, carry = 0; p < end; p += TS_CHUNK) {
            bits = ts_word_starts(p, end, end, &carry);

            for (at = 0; at < TS_CHUNK && p + at < end; at++) {
                ok &= ((bits >> at) & 1)
                      == (ts_ascii_alnum((unsigned char) p[at])
                          && ts_word_start(text, (size_t) (p - text) + at));
            }

            ok &= at == TS_CHUNK || bits >> at == 0;
        }

        tst_note("%zu bytes", n);
        CHECK(ok);
    }
}


/* every place where a word of the set begins is among the kernel's */
static void
test_prints_kernel(void)
{
    static const char *const  words[] = { "page", "ta", "x9", "_q", "zz" };
    static const char         alphabet[] = "pPaAgGtTxX9_qQzZ e";
    ts_prints_pt               kernel;
    ts_prints_t                t;
    uint64_t                  places[TS_RUN];
    char                      text[2000];
    const char               *p, *end;
    size_t                    i, k, n, at, w, k3;
    int                       ok, found;

    memset(&t, 0, sizeof(ts_prints_t));

    for (w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
        ts_prints_add(&t, words[w], strlen(words[w]), (unsigned) w);
    }

    tbytes(text, sizeof(text), alphabet);
    end = text + sizeof(text) - 3;
    kernel = ts_prints_kernel();
    ok = 1;

    for (p = text; p < end; p += n * TS_CHUNK) {
        n = ts_prints_places(kernel, &t, p, end, end, places);

        for (k = 0; k < n; k++) {
            for (i = 0; i < TS_CHUNK && p + k * TS_CHUNK + i < end; i++) {
                at = (size_t) (p - text) + k * TS_CHUNK + i;

                for (w = 0, found = 0; w < 5; w++) {
                    k3 = strlen(words[w]) < TS_PRINT ? strlen(words[w])
                                                     : TS_PRINT;
                    found |= at + k3 <= (size_t) (end - text)
                             && ts_same_icase(text + at, words[w], k3);
                }

                ok &= !found || ((places[k] >> i) & 1);
            }
        }
    }

    CHECK(ok);
}


/* description words are counted by spaces, 16 bytes at a time */
static void
test_description_words(void)
{
    tcat_t  t;

    if (!tcat(&t, "[{'name':'a','description':'A b c d e f g h i j k l m "
                  "n o p q r s t u v w'},{'name':'b','description':'One'},"
                  "{'name':'c','description':'x y z'}]", NULL, NULL))
    {
        return;
    }

    CHECK(t.c.tools[0].desc_words == 23 && t.c.tools[1].desc_words == 1
          && t.c.tools[2].desc_words == 3);
    CHECK(strncmp(ts_catalog_str(&t.c, t.c.tools[0].desc), "a b c", 5)
          == 0);

    tcat_free(&t);
}


/*
 * The hybrid scorer weighs the seed's points by IDF: a word that is a
 * part of many names ("test") tells them apart less than a rare one; its
 * 14 points are worth a quarter of the best score, not half as before
 */
static void
test_hybrid_idf(void)
{
    tcat_t  t;

    if (!tcat(&t, "[{'name':'mcp__qa__test_suite','description':'Runs a test'},"
                  "{'name':'mcp__qa__test_case','description':'Adds a test'},"
                  "{'name':'mcp__qa__test_plan','description':'Shows a test'},"
                  "{'name':'mcp__qa__test_run','description':'Starts a test'},"
                  "{'name':'mcp__web__fill_form',"
                  "'description':'Type text into a form field'}]", NULL, NULL))
    {
        return;
    }

    if (tsearch(&t, "type my test email", TS_SCORING_HYBRID, 2)) {
        CHECK(strncmp(thits(&t), "mcp__web__fill_form ", 20) == 0);
        CHECK(t.r.nhits == 2 && t.r.hits[1].seed == 14
              && t.r.hits[1].score < 0.3 * t.r.hits[0].score);
    }

    tcat_free(&t);
}

/*
 * The hybrid scorer adds the share of the query's words (by IDF) a tool
 * has: the note that names the customer, the overdue payment and the
 * invoice answers the request better than the tool named after the
 * invoice alone, whose name match and short description weigh more
 */
static void
test_hybrid_found(void)
{
    tcat_t  t;

    if (!tcat(&t, "[{'name':'mcp__billing__invoice',"
                  "'description':'Invoice: gets an invoice by its invoice "
                  "number'},"
                  "{'name':'mcp__crm__send_note','description':'Sends a "
                  "short note by email or text message to one customer of "
                  "the account, for example a reminder about an overdue "
                  "payment or an invoice, and records it in the history "
                  "of the account'},"
                  "{'name':'mcp__crm__list_customers',"
                  "'description':'Lists customers'}]", NULL, NULL))
    {
        return;
    }

    if (tsearch(&t, "remind the customer about the overdue invoice",
                TS_SCORING_HYBRID, 2))
    {
        CHECK(strcmp(thits(&t), "mcp__crm__send_note mcp__billing__invoice")
              == 0);
    }

    /* the seed scorer keeps its ranking */
    if (tsearch(&t, "remind the customer about the overdue invoice",
                TS_SCORING_SEED, 1))
    {
        CHECK(strcmp(thits(&t), "mcp__billing__invoice") == 0);
    }

    tcat_free(&t);
}

/*
 * A two-letter word of a natural query is found as a whole word or a
 * whole name part only: "la" is no evidence for labels, "pr" none for
 * private repositories; the seed scorer keeps its rules
 */
static void
test_short_words(void)
{
    static const struct {
        const char  *query;
        int          scoring;
        const char  *found;
    } cases[] = {
        { "drive to la", TS_SCORING_HYBRID, "mcp__maps__directions" },
        { "open pr", TS_SCORING_HYBRID, "mcp__gh__pr_list" },
        { "la", TS_SCORING_SEED,
          "mcp__mail__update_label mcp__maps__directions" },
    };
    tcat_t  t;
    size_t  i;

    if (!tcat(&t, "[{'name':'mcp__mail__update_label',"
                  "'description':'Renames a label'},"
                  "{'name':'mcp__maps__directions',"
                  "'description':'Route to LA or any city'},"
                  "{'name':'mcp__gh__private_repos',"
                  "'description':'Lists private repositories'},"
                  "{'name':'mcp__gh__pr_list',"
                  "'description':'Lists pull requests'}]", NULL, NULL))
    {
        return;
    }

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (tsearch(&t, cases[i].query, cases[i].scoring, 5)) {
            CHECK(strcmp(thits(&t), cases[i].found) == 0);
        }
    }

    tcat_free(&t);
}


/* a task of nine words */
#define TRIP  "please estimate the driving distance between two towns " \
              "for my weekend road trip"

/*
 * The fifth place of a hybrid list goes to the getter the best tool
 * needs first: get_zipcode_based_on_city, whose zipcode a required
 * parameter of estimate_distance names.  Not a getter of another server,
 * nor one of "user", nor for the seed scorer, a list of one or a
 * search of a few words.
 */
static void
test_getter_place(void)
{
    static const struct {
        const char  *query;
        int          scoring;
        size_t       max;
        const char  *found;
    } cases[] = {
        { TRIP, TS_SCORING_HYBRID, 5,
          "mcp__geo__estimate_distance mcp__geo__drive_distance "
          "mcp__geo__distance_matrix mcp__geo__walk_distance "
          "mcp__geo__get_zipcode_based_on_city" },
        /* a longer list: the tools from the fifth place move down */
        { TRIP, TS_SCORING_HYBRID, 7,
          "mcp__geo__estimate_distance mcp__geo__drive_distance "
          "mcp__geo__distance_matrix mcp__geo__walk_distance "
          "mcp__geo__get_zipcode_based_on_city mcp__geo__route_distance" },
        /* a shorter list: its last place */
        { TRIP, TS_SCORING_HYBRID, 4,
          "mcp__geo__estimate_distance mcp__geo__drive_distance "
          "mcp__geo__distance_matrix mcp__geo__get_zipcode_based_on_city" },
        { TRIP, TS_SCORING_HYBRID, 1, "mcp__geo__estimate_distance" },
        { TRIP, TS_SCORING_SEED, 5,
          "mcp__geo__estimate_distance mcp__geo__distance_matrix "
          "mcp__geo__drive_distance mcp__geo__walk_distance "
          "mcp__geo__route_distance" },
        /* a search of a few words keeps its list */
        { "distance between two towns", TS_SCORING_HYBRID, 5,
          "mcp__geo__estimate_distance mcp__geo__distance_matrix "
          "mcp__geo__walk_distance mcp__geo__route_distance "
          "mcp__geo__drive_distance" },
        /* the getter is above the fifth place already: nothing moves */
        { "estimate the driving distance by zipcode for my weekend road "
          "trip", TS_SCORING_HYBRID, 5,
          "mcp__geo__estimate_distance mcp__geo__drive_distance "
          "mcp__post__get_zipcode mcp__geo__get_zipcode_based_on_city "
          "mcp__geo__walk_distance" },
    };
    unsigned char  mark[8];
    tcat_t         t;
    size_t         i;

    if (!tcat(&t, "[{'name':'mcp__geo__estimate_distance',"
                  "'description':'Estimates the distance between two "
                  "cities','input_schema':{'type':'object','properties':"
                  "{'cityA':{'type':'string','description':'The zipcode "
                  "of the first city'},'cityB':{'type':'string'}},"
                  "'required':['cityA','cityB']}},"
                  "{'name':'mcp__geo__distance_matrix','description':"
                  "'A distance matrix of towns'},"
                  "{'name':'mcp__geo__walk_distance','description':"
                  "'Walking distance'},"
                  "{'name':'mcp__geo__route_distance','description':"
                  "'Route distance'},"
                  "{'name':'mcp__geo__drive_distance','description':"
                  "'Driving distance'},"
                  "{'name':'mcp__geo__get_zipcode_based_on_city',"
                  "'description':'Gets the zipcode of a city'},"
                  "{'name':'mcp__post__get_zipcode','description':"
                  "'Gets a zipcode'},"
                  "{'name':'mcp__geo__get_user_city','description':"
                  "'Gets the city of a user'}]", NULL, NULL))
    {
        return;
    }

    memset(mark, 0, sizeof(mark));
    CHECK(ts_prereq_getters(&t.c, 0, mark) == 1 && mark[5] == 1);

    /* the getter's place is marked: it is out of score order */
    if (tsearch(&t, TRIP, TS_SCORING_HYBRID, 7)) {
        for (i = 0; i < t.r.nhits; i++) {
            CHECK(t.r.hits[i].getter == (i == 4));
        }

        CHECK(t.r.hits[4].score < t.r.hits[5].score);
    }

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tst_note("case %zu", i);

        if (tsearch(&t, cases[i].query, cases[i].scoring, cases[i].max)) {
            CHECK(strcmp(thits(&t), cases[i].found) == 0);
        }
    }

    tcat_free(&t);
}


const tst_case_t  tst_search_tests[] = {
    { "search: seed worked example", test_worked_example },
    { "search: relatives leave room for the query's words",
      test_relatives_leave_room },
    { "search: no relatives for a long query", test_long_query_relatives },
    { "search: the getter the best tool needs", test_getter_place },
    { "search: name parts", test_name_parts },
    { "search: seed points", test_seed_points },
    { "search: required terms", test_required_terms },
    { "search: select", test_select },
    { "search: select limit", test_select_limit },
    { "search: mcp__ prefix", test_prefix },
    { "search: limits and ties", test_limits_and_ties },
    { "search: hints and escapes", test_hints_and_escapes },
    { "search: no-match fallback", test_fallback },
    { "search: stems", test_stems },
    { "search: hybrid on natural queries", test_hybrid_natural },
    { "search: lent memory", test_lent_memory },
    { "search: word starts", test_word_starts },
    { "search: fingerprint kernel", test_prints_kernel },
    { "search: description words", test_description_words },
    { "search: hybrid idf", test_hybrid_idf },
    { "search: hybrid share of the query", test_hybrid_found },
    { "search: short words", test_short_words },
    { NULL, NULL }
};
