/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <string.h>

#include "search/ts_lexicon.h"


static int
ts_in_list(const char *const *list, const char *w, size_t len)
{
    for ( /* void */ ; *list; list++) {
        if (strlen(*list) == len && memcmp(*list, w, len) == 0) {
            return 1;
        }
    }

    return 0;
}


int
ts_stopword(const char *w, size_t len)
{
    static const char *const  words[] = {
        "a", "about", "all", "also", "am", "an", "and", "any", "are", "as",
        "at", "be", "been", "being", "but", "by", "can", "could", "did",
        "do", "does", "done", "each", "every", "for", "from", "had", "has",
        "have", "how", "i", "if", "in", "into", "is", "it", "its", "just",
        "let", "me", "my", "need", "of", "on", "or", "our", "please",
        "should", "so", "some", "that", "the", "their", "them", "then",
        "there", "these", "this", "those", "to", "tool", "tools", "up", "us",
        "use", "using", "want", "was", "we", "were", "what", "when", "where",
        "which", "who", "will", "with", "would", "you", "your", NULL
    };

    return ts_in_list(words, w, len);
}


/*
 * The words a person or an agent puts around a request ("can you
 * kindly provide details, additionally I'd like..."): rare in tool
 * descriptions, so by IDF they would weigh as much as the request's own
 * nouns.  Measured on the public sets' dev halves (docs/search.md).  No
 * verb a tool's name may start with ("find", "get", "list") is here.
 */
int
ts_request_word(const char *w, size_t len)
{
    static const char *const  words[] = {
        "able", "additionally", "appreciate", "appreciated", "assist",
        "assistance", "comprehensive", "curious", "currently", "different",
        "give", "great", "hello", "help", "hey", "hi", "including",
        "information", "interested", "kindly", "like", "ll", "looking",
        "particularly", "possible", "proceed", "provide", "re", "regarding",
        "specific", "specifically", "such", "sure", "tell", "thank",
        "thanks", "various", "ve", "wondering", NULL
    };

    return ts_in_list(words, w, len);
}


static int
ts_ends(const char *w, size_t len, const char *suffix)
{
    size_t  n;

    n = strlen(suffix);

    return len >= n && memcmp(w + len - n, suffix, n) == 0;
}


/* stems shorter than this match too much as word prefixes */
#define TS_STEM_MIN  4


/* the length of w without a plural suffix */
static size_t
ts_unplural(const char *w, size_t len)
{
    static const char *const  keep[] = { "ss", "us", "is", NULL };

    if (ts_ends(w, len, "ies")) {
        return len - 3;
    }

    if (ts_ends(w, len, "sses") || ts_ends(w, len, "ches")
        || ts_ends(w, len, "shes") || ts_ends(w, len, "xes"))
    {
        return len - 2;
    }

    if (ts_ends(w, len, "s") && len >= 2 && !ts_in_list(keep, w + len - 2, 2))
    {
        return len - 1;
    }

    return len;
}


/*
 * The plural goes first, so that "meetings" and "meeting" share "meet";
 * then an "-ing", an "-ed" or an adverb's "-ly" ("monthly"); a final "e"
 * or "y" goes last, so that "create" finds "creation" and "creating",
 * and "entry" finds "entries"
 */
size_t
ts_stem(const char *w, size_t len)
{
    size_t  n;

    n = ts_unplural(w, len);

    if (ts_ends(w, n, "ing")) {
        n -= 3;

    } else if (ts_ends(w, n, "ed")) {
        n = n - 2 >= TS_STEM_MIN ? n - 2 : n - 1;

    } else if (ts_ends(w, n, "ly") && n - 2 >= TS_STEM_MIN
               && w[n - 3] != 'p' && w[n - 3] != 'i')
    {
        /* not "supply" to "supp", nor "family" to "fami" */
        n -= 2;
    }

    if ((ts_ends(w, n, "e") || ts_ends(w, n, "y")) && n - 1 >= TS_STEM_MIN) {
        n--;
    }

    return n >= TS_STEM_MIN ? n : len;
}


/*
 * Groups of words a task description and a tool description use for the
 * same thing.  General software vocabulary only: nothing here names a
 * particular tool or server.
 */
static const char *const  ts_thesaurus[] = {
    "create add new make insert generate",
    "delete remove erase drop destroy discard clear purge",
    "list enumerate browse",
    "get fetch retrieve read view obtain load show display",
    "update edit modify change alter patch replace rewrite",
    "search find look lookup locate query discover",
    "send post message notify publish share",
    "reply respond answer",
    "run execute exec invoke launch trigger perform",
    "stop kill terminate cancel abort",
    "close dismiss exit",
    "folder directory dir",
    "file document",
    "screenshot capture snapshot",
    "page tab website site webpage homepage",
    "navigate visit goto open go",
    "click press tap",
    "type fill enter input form textbox",
    "remember memorize memory recall knowledge know",
    "note observation fact",
    "bug issue ticket defect problem",
    "pr pull merge",
    "repository repo project codebase",
    "comment remark feedback note",
    "user member person people account contact colleague",
    "channel room chat conversation",
    "database db sql table",
    "error exception failure crash",
    "log console output",
    "deploy release ship install rollout",
    "wait sleep pause delay",
    "download save export",
    "upload attach import",
    "move rename transfer",
    "copy duplicate clone",
    "javascript js script evaluate eval",
    "request network http traffic connection bandwidth",
    "performance trace profile speed slow fast latency",
    "location place address map",
    "route directions navigation",
    "calendar schedule event meeting appointment",
    "email mail inbox",
    "image picture photo logo icon png jpg jpeg gif svg",
    "size resize dimension viewport",
    "select choose pick option dropdown",
    "hover mouse",
    "key keyboard keystroke",
    "relation link connection relationship",
    "entity node object",
    "think reason plan step",
    "docs documentation reference manual guide wiki",
    "library package dependency module",
    "star favorite bookmark",
    "fork copy",
    "diff difference compare",
    "switch activate focus select",
    "emulate simulate throttle mock",
    "schema structure field column property attribute",
    "migration migrate alter",
    "row record entry item",
    "task todo story item",
    "label tag category",
    "height elevation altitude high tall",
    "accessibility a11y",
    "research investigate investigation study",
    "url link href",
    "port forward tunnel proxy",
    "calculate compute sum total add plus arithmetic",
    "history past previous earlier recent timeline",
    "say said talk discuss discussion mention",
    "check verify validate inspect examine",
    "audit review analyze analyse assess score report",
    "element node component widget",
    "tree hierarchy outline structure layout",
    "cost price billing spend expense budget invoice payment usage credit",
    "block paragraph section content",
    "status state progress stage phase",
    "tracker board backlog kanban",
    "local localhost machine laptop computer",
    "connect reach access",
    "login signin auth authenticate credential password",
    "secret token credential password",
    "result response return outcome",
    "title heading caption",
    "remote hosted cloud online",
    "config configuration setting settings preference",
    "permission access role grant",
    "alert alarm incident notification",
    "metric measurement statistic stats",
    "chart plot visualization dashboard",
    "pipeline build workflow job",
    "convert transform format translate",
    "summarize summary overview digest",
    "detail details info information describe",
    "date time timestamp day",
    "watch monitor observe track follow subscribe",
    "backup archive restore",
    "mute silence snooze suppress quiet",
    "write save store persist",
    "resolve fix solve fixed",
    NULL
};


/* the next word of a space-separated list, or NULL */
static const char *
ts_next_word(const char *p, size_t *len)
{
    const char  *e;

    while (*p == ' ') {
        p++;
    }

    if (*p == '\0') {
        return NULL;
    }

    for (e = p; *e && *e != ' '; e++) { /* void */ }

    *len = (size_t) (e - p);

    return p;
}


static int
ts_same_stem(const char *a, size_t alen, const char *b, size_t blen)
{
    /* a stem is a prefix: words of different first bytes differ */
    if (alen == 0 || blen == 0) {
        return alen == blen;
    }

    if (a[0] != b[0]) {
        return 0;
    }

    alen = ts_stem(a, alen);
    blen = ts_stem(b, blen);

    return alen == blen && memcmp(a, b, alen) == 0;
}


static int
ts_group_has(const char *group, const char *w, size_t len)
{
    const char  *p;
    size_t       n;

    for (p = group; (p = ts_next_word(p, &n)); p += n) {
        if (ts_same_stem(p, n, w, len)) {
            return 1;
        }
    }

    return 0;
}


size_t
ts_synonyms(const char *w, size_t len, ts_word_t *out, size_t max)
{
    const char *const  *g;
    const char         *p;
    size_t              n, k;

    k = 0;

    for (g = ts_thesaurus; *g; g++) {
        if (!ts_group_has(*g, w, len)) {
            continue;
        }

        for (p = *g; (p = ts_next_word(p, &n)) && k < max; p += n) {
            if (!ts_same_stem(p, n, w, len)) {
                out[k].p = p;
                out[k++].len = n;
            }
        }
    }

    return k;
}
