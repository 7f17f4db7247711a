/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The deferral policy (docs/spec/deferral.md): which requests get tool
 * search from the gateway, which of their tools are deferred, and the
 * edits that do it.
 */

#ifndef TS_POLICY_H
#define TS_POLICY_H

#include <stddef.h>

#include "messages/ts_index.h"
#include "rewrite/ts_match.h"


typedef enum {
    TS_DEFER_OFF = 0,       /* standard */
    TS_DEFER_ON,            /* tst: always defer */
    TS_DEFER_AUTO           /* tst-auto: defer above a threshold */
} ts_defer_mode_t;


typedef enum {
    TS_UPSTREAM_AUTO = 0,
    TS_UPSTREAM_ANTHROPIC,
    TS_UPSTREAM_VERTEX,
    TS_UPSTREAM_BEDROCK,
    TS_UPSTREAM_COMPATIBLE,
    TS_UPSTREAM_OPENAI          /* OpenAI's Responses API: hosted
                                   tool_search for the models that have
                                   it (src/responses) */
} ts_upstream_t;


/* who runs the model's searches of a deferred request */
typedef enum {
    TS_SEARCH_AUTO = 0,     /* hosted where the upstream can, else gateway */
    TS_SEARCH_HOSTED,       /* the upstream's hosted search only */
    TS_SEARCH_GATEWAY       /* the gateway's own search tool, always */
} ts_search_mode_t;


/*
 * How gateway search loads what it finds where the upstream takes no
 * tool_reference (rewrite/ts_wrapper.h)
 */
typedef enum {
    TS_FOUND_TOOLS = 0,     /* the definitions join tools[] */
    TS_FOUND_WRAPPER        /* tools[] fixed: call_tool, definitions as
                               the search's text */
} ts_found_tools_t;


typedef enum {
    TS_HOSTED_BM25 = 0,
    TS_HOSTED_REGEX
} ts_hosted_t;


/* the gateway search's scorer; the default ranks better (docs/search.md) */
typedef enum {
    TS_SCORING_SEED = 0,    /* docs/spec/search.md's scorer, exactly */
    TS_SCORING_HYBRID,      /* seed + weighted BM25 with expansion */
    TS_SCORING_BM25         /* plain BM25, the evaluation's baseline */
} ts_scoring_t;


/*
 * The words of a setting, in the order of its values: what the
 * configuration and the command line accept, and how a value is named.
 */
typedef struct {
    const char *const  *word;
    unsigned            n;
} ts_words_t;

/* the words of an array of them */
#define TS_WORDS(a)  { (a), sizeof(a) / sizeof((a)[0]) }

extern const ts_words_t  ts_upstream_words;     /* ts_upstream_t */
extern const ts_words_t  ts_search_mode_words;  /* ts_search_mode_t */
extern const ts_words_t  ts_hosted_words;       /* ts_hosted_t */
extern const ts_words_t  ts_found_tools_words;  /* ts_found_tools_t */


#define TS_DEFAULT_CONTEXT_WINDOW  200000
#define TS_CONTEXT_1M_WINDOW       1000000
#define TS_CONTEXT_1M_BETA         "context-1m-"
#define TS_AUTO_DEFAULT_PERCENT    10

/* longest model name and tool name the policy matches */
#define TS_NAME_MAX                512


/* defaults of the list directives, NULL-terminated */
extern const char *const  ts_default_client_search_tools[];
extern const char *const  ts_default_unsupported_models[];
extern const char *const  ts_default_first_party_hosts[];
extern const char *const  ts_default_openai_hosts[];


/*
 * The settings of the directives the engine reads.  Every value means
 * itself, zero included: defaults come from ts_policy_init() only.
 */
typedef struct {
    int                     defer_mode;     /* ts_defer_mode_t */
    unsigned                defer_percent;  /* 0..100, for auto */
    const ts_match_list_t  *always_load;
    const ts_match_list_t  *defer_tools;
    const ts_match_list_t  *client_search_tools;
    const ts_match_list_t  *unsupported_models;
    const ts_match_list_t  *windows;        /* model patterns ... */
    const unsigned long    *window_tokens;  /* ... and their windows */
    int                     upstream_tool_reference;
    int                     disable_betas;
    int                     hosted_search;  /* ts_hosted_t */
    int                     turn_boundary;
    int                     client_profiles;    /* known clients' own */

    /* gateway-executed search */
    int                     search;         /* ts_search_mode_t */
    const char             *search_tool;    /* the search tool's name */
    int                     found_tools;    /* ts_found_tools_t */
    int                     cache_last_message; /* a breakpoint of the
                                                   gateway's on it */
    int                     conversations;  /* search in a Responses
                                               conversation */
    unsigned                max_searches;   /* per client request */
    unsigned                max_results;    /* a query may ask up to */
    int                     scoring;        /* ts_scoring_t */
    const ts_match_list_t  *hint_names;     /* toolsearch_hint patterns */
    const char *const      *hint_phrases;   /* ... and their phrases */
} ts_policy_t;


/* what the glue knows of a request besides its body */
typedef struct {
    const ts_policy_t      *policy;
    int                     upstream;       /* resolved, never AUTO */
    int                     defer_mode;     /* -1: the policy's */
    unsigned                defer_percent;
    const char             *betas;          /* all anthropic-beta lines */
    size_t                  betas_len;
    const char             *user_agent;     /* NULL: none */
    size_t                  user_agent_len;

    /* a gateway search loop's later calls */
    const unsigned char    *loaded;         /* per tool: loaded by it */
    const char             *tail;           /* turns after the messages */
    size_t                  tail_len;
    const char             *resume;         /* Responses, stored: the
                                               response the call goes on
                                               from; the tail replaces
                                               the input */
    int                     text_only;      /* Responses, stored: the
                                               call answers in text
                                               ("tool_choice": "none") */

    ts_index_mem_t         *index_mem;      /* memory the index may reuse */
} ts_input_t;


/* the most context windows ts_policy_lists_t holds */
#define TS_POLICY_WINDOWS  64

/*
 * The pattern lists of a policy built outside nginx (the command line,
 * the unit tests, fuzzing, the benchmarks), and their windows' tokens.
 */
typedef struct {
    ts_match_list_t         always_load;
    ts_match_list_t         defer_tools;
    ts_match_list_t         client_search_tools;
    ts_match_list_t         unsupported_models;
    ts_match_list_t         windows;
    unsigned long           window_tokens[TS_POLICY_WINDOWS];
} ts_policy_lists_t;


/*
 * Every setting at its default, the one home of the directives'
 * defaults: the glue merges against it, and everything else starts from
 * it.  The lists are NULL (the glue's own, or ts_policy_lists_init()'s).
 */
void ts_policy_init(ts_policy_t *p);

/*
 * Compiles the lists' defaults into a zeroed l and points p's lists at
 * l's; -1 with err on failure.
 */
int ts_policy_lists_init(ts_policy_lists_t *l, ts_policy_t *p, char *err,
    size_t len);
void ts_policy_lists_free(ts_policy_lists_t *l);


/* parses "off", "on", "auto" or "auto:N"; -1 when invalid */
int ts_defer_mode_parse(const char *s, size_t len, unsigned *percent);

/* the value whose word s is (len bytes); -1 when none is */
int ts_words_parse(const ts_words_t *w, const char *s, size_t len);

const char *ts_defer_mode_name(int mode);
const char *ts_upstream_name(int upstream);

/* the tool-search beta value an upstream profile takes, or NULL */
const char *ts_upstream_beta(int upstream, int tool_reference);

/* the context window of a model, in tokens */
unsigned long ts_policy_window(const ts_policy_t *p, const char *model,
    size_t len, const char *betas, size_t betas_len);

/*
 * The estimate of characters per token: 2.5, the ratio toolsearch_defer
 * auto counts its threshold in; the status page and $toolsearch_tokens_saved
 * estimate tokens saved with it too.
 */
#define TS_CHARS_PER_TOKEN_NUM  5
#define TS_CHARS_PER_TOKEN_DEN  2

/* floor(floor(window * percent / 100) * 2.5) */
size_t ts_policy_threshold_chars(unsigned long window, unsigned percent);

/* the tokens that many characters are estimated at: floor(chars / 2.5) */
unsigned long long ts_policy_tokens(unsigned long long chars);

#endif /* TS_POLICY_H */
