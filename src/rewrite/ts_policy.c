/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <string.h>

#include "rewrite/ts_beta.h"
#include "rewrite/ts_policy.h"


const char *const  ts_default_client_search_tools[] = {
    "ToolSearch", "MCPSearch", "tool_search", NULL
};

/* Claude Code's own exclusion list: no tool_reference support */
const char *const  ts_default_unsupported_models[] = {
    "~(?i)claude-3-(5-)?haiku", NULL
};

const char *const  ts_default_first_party_hosts[] = {
    "~^api\\.anthropic\\.com$", NULL
};

/* OpenAI's API and Azure OpenAI's resources: the openai profile */
const char *const  ts_default_openai_hosts[] = {
    "~^api\\.openai\\.com$", "~\\.openai\\.azure\\.com$", NULL
};


static const char  *ts_mode_names[] = { "off", "on", "auto" };

static const char *const  ts_upstream_names[] = {
    "auto", "anthropic", "vertex", "bedrock", "compatible", "openai"
};

static const char *const  ts_search_mode_names[] = {
    "auto", "hosted", "gateway"
};

static const char *const  ts_hosted_names[] = { "bm25", "regex" };

static const char *const  ts_found_tools_names[] = { "tools", "wrapper" };

const ts_words_t  ts_upstream_words = TS_WORDS(ts_upstream_names);
const ts_words_t  ts_search_mode_words = TS_WORDS(ts_search_mode_names);
const ts_words_t  ts_hosted_words = TS_WORDS(ts_hosted_names);
const ts_words_t  ts_found_tools_words = TS_WORDS(ts_found_tools_names);


int
ts_defer_mode_parse(const char *s, size_t len, unsigned *percent)
{
    unsigned  n;
    size_t    i;

    *percent = TS_AUTO_DEFAULT_PERCENT;

    if (len == 3 && memcmp(s, "off", 3) == 0) {
        return TS_DEFER_OFF;
    }

    if (len == 2 && memcmp(s, "on", 2) == 0) {
        *percent = 0;
        return TS_DEFER_ON;
    }

    if (len < 4 || memcmp(s, "auto", 4) != 0) {
        return -1;
    }

    if (len == 4) {
        return TS_DEFER_AUTO;
    }

    /* N is 1..99, 0 and 100 are "on" and "off" (docs/spec/deferral.md) */
    if (s[4] != ':' || len == 5 || len > 7) {
        return -1;
    }

    n = 0;

    for (i = 5; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return -1;
        }

        n = n * 10 + (unsigned) (s[i] - '0');
    }

    *percent = n;

    /* auto:0, the specification's own spelling of "on", is an alias */
    return n == 0 ? TS_DEFER_ON : TS_DEFER_AUTO;
}


int
ts_words_parse(const ts_words_t *w, const char *s, size_t len)
{
    unsigned  i;

    for (i = 0; i < w->n; i++) {
        if (strlen(w->word[i]) == len && memcmp(w->word[i], s, len) == 0) {
            return (int) i;
        }
    }

    return -1;
}

void
ts_policy_init(ts_policy_t *p)
{
    memset(p, 0, sizeof(ts_policy_t));

    p->defer_mode = TS_DEFER_ON;
    p->defer_percent = 0;
    p->upstream_tool_reference = 0;
    p->disable_betas = 0;
    p->hosted_search = TS_HOSTED_BM25;
    p->turn_boundary = 1;
    p->client_profiles = 1;
    p->search = TS_SEARCH_AUTO;
    p->search_tool = "tool_search";
    p->found_tools = TS_FOUND_WRAPPER;
    p->cache_last_message = 1;
    p->conversations = 0;
    p->max_searches = 3;
    p->max_results = 10;
    p->scoring = TS_SCORING_HYBRID;
}


int
ts_policy_lists_init(ts_policy_lists_t *l, ts_policy_t *p, char *err,
    size_t len)
{
    if (ts_match_add_all(&l->client_search_tools,
                         ts_default_client_search_tools, err, len) != 0
        || ts_match_add_all(&l->unsupported_models,
                            ts_default_unsupported_models, err, len) != 0)
    {
        return -1;
    }

    p->always_load = &l->always_load;
    p->defer_tools = &l->defer_tools;
    p->client_search_tools = &l->client_search_tools;
    p->unsupported_models = &l->unsupported_models;
    p->windows = &l->windows;
    p->window_tokens = l->window_tokens;

    return 0;
}


void
ts_policy_lists_free(ts_policy_lists_t *l)
{
    ts_match_free(&l->always_load);
    ts_match_free(&l->defer_tools);
    ts_match_free(&l->client_search_tools);
    ts_match_free(&l->unsupported_models);
    ts_match_free(&l->windows);
}


const char *
ts_defer_mode_name(int mode)
{
    return (unsigned) mode < 3 ? ts_mode_names[mode] : "off";
}


const char *
ts_upstream_name(int upstream)
{
    return (unsigned) upstream < ts_upstream_words.n
           ? ts_upstream_names[upstream] : "auto";
}


const char *
ts_upstream_beta(int upstream, int tool_reference)
{
    switch (upstream) {
    case TS_UPSTREAM_ANTHROPIC:
        return TS_BETA_FIRST_PARTY;
    case TS_UPSTREAM_VERTEX:
    case TS_UPSTREAM_BEDROCK:
        return TS_BETA_THIRD_PARTY;
    case TS_UPSTREAM_COMPATIBLE:
        /* it forwards to Anthropic's API unchanged, or it cannot */
        return tool_reference ? TS_BETA_FIRST_PARTY : NULL;
    default:
        return NULL;
    }
}


unsigned long
ts_policy_window(const ts_policy_t *p, const char *model, size_t len,
    const char *betas, size_t betas_len)
{
    int  i;

    if (ts_beta_has_prefix(betas, betas_len, TS_CONTEXT_1M_BETA)) {
        return TS_CONTEXT_1M_WINDOW;
    }

    i = model ? ts_match_first(p->windows, model, len) : -1;

    return i >= 0 ? p->window_tokens[i] : TS_DEFAULT_CONTEXT_WINDOW;
}


size_t
ts_policy_threshold_chars(unsigned long window, unsigned percent)
{
    unsigned long long  tokens;

    tokens = (unsigned long long) window * percent / 100;

    return (size_t) (tokens * TS_CHARS_PER_TOKEN_NUM
                     / TS_CHARS_PER_TOKEN_DEN);
}


unsigned long long
ts_policy_tokens(unsigned long long chars)
{
    return chars * TS_CHARS_PER_TOKEN_DEN / TS_CHARS_PER_TOKEN_NUM;
}
