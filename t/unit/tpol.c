/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tst.h"
#include "tpol.h"
#include "rewrite/ts_counters.h"


/* the directives' defaults (ts_policy_init()); upstream anthropic */
void
tpol_init(tpol_t *t)
{
    char  err[256];

    memset(t, 0, sizeof(tpol_t));
    ts_policy_init(&t->p);
    CHECK(ts_policy_lists_init(&t->l, &t->p, err, sizeof(err)) == 0);

    t->in.policy = &t->p;
    t->in.upstream = TS_UPSTREAM_ANTHROPIC;
    t->in.defer_mode = -1;
    t->in.betas = "";
}


void
tpol_add(ts_match_list_t *l, const char *pattern)
{
    char  err[256];

    CHECK(ts_match_add(l, pattern, strlen(pattern), err, sizeof(err)) == 0);
}


void
tpol_window(tpol_t *t, const char *re, unsigned long tokens)
{
    t->l.window_tokens[t->l.windows.n] = tokens;
    tpol_add(&t->l.windows, re);
}


void
tpol_free(tpol_t *t)
{
    ts_policy_lists_free(&t->l);
}


ts_decision_t
trun(trun_t *r, tpol_t *t, const char *body)
{
    return trun_with(r, t, body, ts_request_process);
}


ts_decision_t
trun_with(trun_t *r, tpol_t *t, const char *body, tprocess_pt process)
{
    size_t  len;

    memset(r, 0, sizeof(trun_t));
    r->body = tst_quote(body, &len);
    r->d = process(&r->rq, &t->in, r->body, len);
    r->len = ts_request_size(&r->rq);
    r->out = tst_alloc(r->len + 1);

    if (CHECK(ts_request_render(&r->rq, r->out) == 0)) {
        r->json = tst_json(r->out, r->len);
        CHECK(r->json != NULL);
    }

    return r->d;
}


void
trun_free(trun_t *r)
{
    ts_request_free(&r->rq);
    cJSON_Delete(r->json);
    free(r->out);
    free(r->body);
}


cJSON *
tool_named(const trun_t *r, const char *name)
{
    cJSON  *t;

    cJSON_ArrayForEach(t, cJSON_GetObjectItem(r->json, "tools")) {
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(t, "name")),
                   name) == 0)
        {
            return t;
        }
    }

    return NULL;
}


int
deferred(const trun_t *r, const char *name)
{
    cJSON  *t;

    t = tool_named(r, name);

    return t != NULL && cJSON_IsTrue(cJSON_GetObjectItem(t, "defer_loading"));
}


int
has_text(const char *hay, size_t len, const char *needle)
{
    return tst_memmem(hay, len, needle, strlen(needle)) != NULL;
}


#define TPOL_FROM(name, var, metric, when, log, from, help)  #from,

int
counters_filled(const size_t *count, const char *from)
{
    static const char *const  fills[] = { TS_COUNTERS(TPOL_FROM) };

    int     ok;
    size_t  i;

    ok = 1;

    for (i = 0; i < TS_COUNTER_N; i++) {
        if ((count[i] != (size_t) -1) != (strcmp(fills[i], from) == 0)) {
            fprintf(stderr, "counter %zu: from %s\n", i, fills[i]);
            ok = 0;
        }
    }

    return ok;
}
