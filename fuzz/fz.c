/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#define _GNU_SOURCE  /* memmem */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fz.h"
#include "rewrite/ts_beta.h"
#include "messages/ts_index.h"
#include "loop/ts_sse.h"


/* the pattern lists a policy picks from; 0 stays empty */
#define FZ_LISTS  4

static ts_match_list_t    fz_lists[FZ_LISTS];
static ts_match_list_t    fz_windows;
static ts_policy_t        fz_default;       /* ts_policy_init()'s */
static ts_policy_lists_t  fz_default_lists;

static const char *const  fz_patterns[FZ_LISTS][4] = {
    { NULL },
    { "~^mcp__[a-m]", NULL },
    { "Bash", "Read", "~(?i)search", NULL },
    { "~.", NULL }
};

static const char *const  fz_betas[] = {
    "",
    TS_BETA_FIRST_PARTY,
    TS_BETA_THIRD_PARTY,
    "context-1m-2025-08-07,advanced-tool-use-2025-11-20",
    "claude-code-20250219 , tool-search-tool-2025-10-19,,x"
};

static const char *const  fz_tool_names[] = {
    "tool_search", "find_tools", "ToolSearch", "search-2"
};

static const char *const  fz_window_patterns[] = { "~^claude-", NULL };

ts_index_mem_t  fz_mem, fz_collide;


void
fz_assert(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "property failed: %s\n", what);
        abort();
    }
}


static void
fz_add_all(ts_match_list_t *l, const char *const *patterns)
{
    char  err[256];

    fz_assert(ts_match_add_all(l, patterns, err, sizeof(err)) == 0, err);
}


void
fz_init(void)
{
    size_t  i;
    char    err[256];

    if (fz_windows.n) {
        return;
    }

    for (i = 1; i < FZ_LISTS; i++) {
        fz_add_all(&fz_lists[i], fz_patterns[i]);
    }

    ts_policy_init(&fz_default);
    fz_assert(ts_policy_lists_init(&fz_default_lists, &fz_default, err,
                                   sizeof(err)) == 0, err);
    fz_add_all(&fz_windows, fz_window_patterns);

    fz_mem.tools.size = TS_RECALL_SIZE;
    fz_mem.chat_tools.size = TS_RECALL_SIZE;
    fz_mem.responses_tools.size = TS_RECALL_SIZE;
    fz_collide.tools.size = FZ_RECALL_SMALL;
    fz_collide.chat_tools.size = FZ_RECALL_SMALL;
    fz_collide.responses_tools.size = FZ_RECALL_SMALL;
    fz_collide.tools.same_hash = 1;
    fz_collide.chat_tools.same_hash = 1;
    fz_collide.responses_tools.same_hash = 1;
}


/*
 * d[0]: defer mode and client override; d[1]: percent (its top bits:
 * client profiles and User-Agent); d[2]: profile
 * and flags; d[3]: search mode and scoring; d[4], d[5]: max searches and
 * results; d[6]: lists; d[7]: betas, tool name, windows, hints.
 */
static const char  *fz_user_agents[] = {
    NULL, "claude-cli/2.1.332 (external, sdk-cli)", "Anthropic/JS 1.14.0",
    "curl/8"
};


void
fz_policy(fz_policy_t *f, const uint8_t *d)
{
    static const ts_match_list_t  *search_tools[] = {
        &fz_default_lists.client_search_tools, &fz_lists[0], &fz_lists[2],
        &fz_lists[3]
    };
    static const ts_match_list_t  *unsupported[] = {
        &fz_default_lists.unsupported_models, &fz_lists[0], &fz_lists[1],
        &fz_lists[3]
    };

    memset(f, 0, sizeof(fz_policy_t));
    f->p = fz_default;

    f->p.defer_mode = d[0] % 3;
    f->p.defer_percent = d[1] % 101;
    f->p.upstream_tool_reference = d[2] >> 2 & 1;
    f->p.disable_betas = (d[2] >> 3 & 7) == 0;
    f->p.hosted_search = d[2] >> 6 & 1;
    f->p.turn_boundary = d[2] >> 7;
    f->p.search = d[3] % 3;
    f->p.scoring = d[3] / 3 % 3;
    f->p.max_searches = 1 + d[4] % 20;
    f->p.max_results = 1 + d[5] % 32;
    f->p.found_tools = d[5] >> 5 & 1;       /* ts_found_tools_t */
    f->p.cache_last_message = d[5] >> 6 & 1;
    f->p.always_load = &fz_lists[d[6] & 3];
    f->p.defer_tools = &fz_lists[d[6] >> 2 & 3];
    f->p.client_search_tools = search_tools[d[6] >> 4 & 3];
    f->p.unsupported_models = unsupported[d[6] >> 6];
    f->p.search_tool = fz_tool_names[d[7] >> 3 & 3];

    f->tokens[0] = 1000;
    f->p.windows = (d[7] & 0x20) ? &fz_windows : &fz_lists[0];
    f->p.window_tokens = f->tokens;

    f->phrases[0] = "memory graph entities";
    f->p.hint_names = (d[7] & 0x40) ? &fz_lists[1] : NULL;
    f->p.hint_phrases = f->phrases;

    f->in.policy = &f->p;
    f->in.upstream = 1 + d[2] % 4;
    f->in.defer_mode = (d[0] >> 4 & 1) ? (d[0] >> 5) % 3 : -1;
    f->in.defer_percent = d[1] % 101;
    f->in.betas = fz_betas[(d[7] & 7) % 5];
    f->in.betas_len = strlen(f->in.betas);

    /* the client profiles, from the percent's spare bits */
    f->p.client_profiles = d[1] >> 7;
    f->in.user_agent = fz_user_agents[(d[1] >> 5) & 3];
    f->in.user_agent_len = f->in.user_agent ? strlen(f->in.user_agent) : 0;
}


int
fz_valid_json(const char *p, size_t len)
{
    ts_val_t     v;
    cJSON       *j;
    const char  *end;

    if (ts_value_parse(p, len, &v) != TS_OK) {
        return 0;
    }

    j = cJSON_ParseWithLengthOpts(p, len, &end, 0);
    cJSON_Delete(j);

    if (j == NULL) {
        return 0;
    }

    while (end < p + len && strchr(" \t\r\n", *end)) {
        end++;
    }

    return end == p + len;
}


static int
fz_has_tool(const cJSON *tools, const cJSON *name)
{
    const cJSON  *t;

    cJSON_ArrayForEach(t, tools) {
        if (cJSON_IsString(name)
            && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(t, "name"))
            && strcmp(cJSON_GetObjectItemCaseSensitive(t, "name")->valuestring,
                      name->valuestring) == 0)
        {
            return 1;
        }
    }

    return 0;
}


/* the references of one block: a tool_result's, or a hosted result's */
static void
fz_check_block(const cJSON *tools, const cJSON *b)
{
    const cJSON  *type, *content, *ref;

    type = cJSON_GetObjectItemCaseSensitive(b, "type");
    content = cJSON_GetObjectItemCaseSensitive(b, "content");

    if (cJSON_IsString(type)
        && strcmp(type->valuestring, "tool_search_tool_result") == 0)
    {
        content = cJSON_GetObjectItemCaseSensitive(content,
                                                   "tool_references");

    } else if (!cJSON_IsString(type)
               || strcmp(type->valuestring, "tool_result") != 0)
    {
        return;
    }

    if (!cJSON_IsArray(content)) {
        return;
    }

    cJSON_ArrayForEach(ref, content) {
        type = cJSON_GetObjectItemCaseSensitive(ref, "type");

        if (cJSON_IsString(type)
            && strcmp(type->valuestring, "tool_reference") == 0)
        {
            fz_assert(fz_has_tool(tools, cJSON_GetObjectItemCaseSensitive(
                                             ref, "tool_name")),
                      "a tool_reference names a tool absent from tools[]");
        }
    }
}


void
fz_check_references(const char *p, size_t len)
{
    cJSON        *j, *tools, *m, *b;

    /*
     * cJSON ends a key at an escaped NUL, so "content\u0000" would read
     * as "content": a member the upstream does not take as one.
     */
    if (memmem(p, len, "\\u0000", 6) != NULL) {
        return;
    }

    j = cJSON_ParseWithLength(p, len);
    tools = cJSON_GetObjectItemCaseSensitive(j, "tools");

    cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(j, "messages")) {
        cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(m, "content")) {
            fz_check_block(tools, b);
        }
    }

    cJSON_Delete(j);
}


/* the key of an object member's span, which starts with it */
static ts_val_t
fz_key(const char *buf, const ts_val_t *member)
{
    ts_val_t  k;
    size_t    i;

    for (i = member->off + 1; buf[i] != '"'; i++) {
        i += buf[i] == '\\';
    }

    k.off = member->off;
    k.len = i + 1 - member->off;
    k.kind = TS_STRING;
    k.esc = 1;

    return k;
}


static int
fz_edited_member(const char *buf, const ts_val_t *member)
{
    ts_val_t  k;

    k = fz_key(buf, member);

    return ts_str_eq(buf, &k, "messages") || ts_str_eq(buf, &k, "tools")
           || ts_str_eq(buf, &k, "system")
           || ts_str_eq(buf, &k, "anthropic_beta");
}


/* the next member from *i on that the engine does not edit */
static const ts_val_t *
fz_next_kept(const char *buf, const ts_val_t *members, size_t n, size_t *i)
{
    while (*i < n) {
        if (!fz_edited_member(buf, &members[(*i)++])) {
            return &members[*i - 1];
        }
    }

    return NULL;
}


/* the members of a valid top-level object (the body may not index) */
static size_t
fz_members(const char *p, size_t len, ts_val_t **items)
{
    ts_val_t  doc;
    size_t    n;

    n = 0;

    fz_assert(ts_value_parse(p, len, &doc) == TS_OK && doc.kind == TS_OBJECT
              && ts_container_items(p, &doc, items, &n) == TS_OK,
              "a top-level object");

    return n;
}


void
fz_check_untouched(const char *in, size_t inlen, const char *out,
    size_t outlen)
{
    ts_val_t        *a, *b;
    const ts_val_t  *ma, *mb;
    size_t           na, nb, i, k;

    na = fz_members(in, inlen, &a);
    nb = fz_members(out, outlen, &b);
    i = 0;
    k = 0;

    do {
        ma = fz_next_kept(in, a, na, &i);
        mb = fz_next_kept(out, b, nb, &k);

        fz_assert((ma == NULL) == (mb == NULL),
                  "a member the engine does not edit came or went");
        fz_assert(ma == NULL
                  || (ma->len == mb->len
                      && memcmp(in + ma->off, out + mb->off, ma->len) == 0),
                  "a member the engine does not edit changed");
    } while (ma != NULL);

    free(a);
    free(b);
}


ts_decision_t
fz_rewrite(fz_process_pt process, ts_request_t *rq, const ts_input_t *in,
    const char *body, size_t len, char **out, size_t *outlen)
{
    ts_decision_t  d;

    d = process(rq, in, body, len);

    /* like the glue: a body the engine did not change is kept as it is */
    *outlen = ts_request_changed(rq) ? ts_request_size(rq) : len;
    *out = malloc(*outlen + 1);
    fz_assert(*out != NULL, "memory");

    if (ts_request_changed(rq)) {
        fz_assert(ts_request_render(rq, *out) == 0, "render");

    } else {
        memcpy(*out, body, len);
    }

    return d;
}



/* two requests' decisions, counts and outputs agree */
static void
fz_check_same_request(const ts_request_t *a, const char *out_a,
    size_t len_a, const ts_request_t *b, const char *out_b, size_t len_b)
{
    size_t  i;
    int     same;

    same = a->decision == b->decision
           && ts_request_changed(a) == ts_request_changed(b)
           && len_a == len_b && memcmp(out_a, out_b, len_a) == 0
           && a->betas_changed == b->betas_changed
           && (!a->betas_changed || strcmp(a->betas, b->betas) == 0)
           && a->defer_rule == b->defer_rule
           && a->tools_deferred == b->tools_deferred
           && a->tools_deferrable == b->tools_deferrable
           && a->defer_chars == b->defer_chars
           && a->threshold_chars == b->threshold_chars
           && a->discovered == b->discovered
           && a->stripped == b->stripped
           && a->hygiene.refs_converted == b->hygiene.refs_converted
           && a->hygiene.refs_stale == b->hygiene.refs_stale
           && a->hygiene.refs_kept == b->hygiene.refs_kept
           && (a->defer == NULL) == (b->defer == NULL)
           && (a->deferrable == NULL) == (b->deferrable == NULL);

    for (i = 0; same && a->defer && i < a->ix.ntools; i++) {
        same = a->defer[i] == b->defer[i]
               && a->deferrable[i] == b->deferrable[i];
    }

    fz_assert(same, "a request in memory kept across inputs differs from "
              "the request read whole");
}


void
fz_check_recalled_request(fz_process_pt process, const ts_input_t *in,
    const char *body, size_t len, const ts_request_t *rq, const char *out,
    size_t outlen)
{
    ts_index_mem_t  *mems[] = { &fz_mem, &fz_collide };
    ts_input_t       kept;
    ts_request_t     rq2;
    char            *out2;
    size_t           len2, m;
    int              i;

    for (m = 0; m < 2; m++) {
        kept = *in;
        kept.index_mem = mems[m];

        for (i = 0; i < 2; i++) {
            (void) fz_rewrite(process, &rq2, &kept, body, len, &out2,
                              &len2);
            fz_check_same_request(rq, out, outlen, &rq2, out2, len2);
            free(out2);
            ts_request_free(&rq2);
        }
    }
}

int
fz_events_valid(const char *p, size_t n, int done)
{
    ts_sse_event_t  ev;
    size_t          used, seen;

    seen = 0;

    while ((used = ts_sse_next(p, n, &seen, &ev)) > 0) {
        if (ev.data != NULL && !fz_valid_json(ev.data, ev.data_len)
            && !(done && ev.data_len == 6
                 && memcmp(ev.data, "[DONE]", 6) == 0))
        {
            return 0;
        }

        p += used;
        n -= used;
    }

    return 1;
}


void
fz_exchange(ts_loop_t *lp, int sse, const char *answer, size_t n,
    fz_piece_pt piece, void *arg, void (*check)(const char *p, size_t n),
    ts_buf_t *out)
{
    ts_buf_t         call;
    ts_loop_next_t   next;
    size_t           at, k;
    unsigned         calls;

    ts_buf_init(&call, 0);
    calls = 0;

    do {
        fz_assert(ts_loop_request(lp, &call) == 0, "the next call's body");
        fz_assert(fz_valid_json(call.p, call.len), "a call's body is valid");
        check(call.p, call.len);

        ts_loop_start(lp, sse);

        for (at = 0; at < n; at += k) {
            k = piece(arg);
            k = k < n - at ? k : n - at;
            fz_assert(ts_loop_feed(lp, answer + at, k, out) == 0, "feed");
        }

        next = ts_loop_end(lp, out);

    } while (next == TS_LOOP_AGAIN && ++calls < 25);

    fz_assert(next == TS_LOOP_DONE, "the loop ends within its budget");

    ts_buf_free(&call);
}


size_t
fz_piece_fixed(void *arg)
{
    fz_fixed_t  *c = arg;

    return c->step ? c->step : c->whole;
}


/* one exchange of a dialect's loop, the answer in step pieces (0: whole) */
static void
fz_dialect_run(const fz_dialect_t *d, const fz_policy_t *f, int sse,
    const char *answer, size_t n, size_t step, ts_buf_t *out)
{
    ts_request_t  rq;
    ts_loop_t    *lp;
    fz_fixed_t    cut;

    fz_assert(d->process(&rq, &f->in, d->body, d->len)
              == TS_DECISION_DEFERRED_GATEWAY, "the body is deferred");
    lp = d->create(&f->in, &rq);
    fz_assert(lp != NULL, "memory");
    ts_loop_keep(lp, &rq);
    ts_request_free(&rq);
    cut.step = step;
    cut.whole = n ? n : 1;

    fz_exchange(lp, sse, answer, n, fz_piece_fixed, &cut, d->check, out);
    ts_loop_free(lp);
}


void
fz_whole_and_cut(const fz_dialect_t *d, const fz_policy_t *f, int sse,
    size_t step, const char *answer, size_t n)
{
    ts_buf_t  whole, cut;

    ts_buf_init(&whole, 0);
    ts_buf_init(&cut, 0);

    fz_dialect_run(d, f, sse, answer, n, 0, &whole);
    fz_dialect_run(d, f, sse, answer, n, step, &cut);

    fz_assert(whole.len == cut.len
              && (cut.len == 0 || memcmp(whole.p, cut.p, cut.len) == 0),
              "the client's bytes depend on how the answer was cut");

    if (sse) {
        fz_assert(!fz_events_valid(answer, n, d->done)
                  || fz_events_valid(whole.p, whole.len, d->done),
                  "valid events in, an invalid event out");

    } else {
        fz_assert(!fz_valid_json(answer, n)
                  || fz_valid_json(whole.p, whole.len),
                  "a valid JSON answer, invalid JSON out");
    }

    ts_buf_free(&whole);
    ts_buf_free(&cut);
}
