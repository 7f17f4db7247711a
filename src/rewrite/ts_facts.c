/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

#include "messages/ts_history.h"
#include "rewrite/ts_client.h"
#include "rewrite/ts_facts.h"
#include "rewrite/ts_shape.h"


const char *const  ts_hosted_tool_names[] = {
    "tool_search_tool_bm25", "tool_search_tool_regex"
};

static const ts_words_t  ts_hosted_tools = TS_WORDS(ts_hosted_tool_names);


/* a server tool: any "type" other than "custom" */
static int
ts_is_server_tool(const char *buf, const ts_tool_t *t)
{
    return t->type.kind == TS_STRING && !ts_str_eq(buf, &t->type, "custom");
}


static int
ts_is_search_tool(const char *buf, const ts_tool_t *t, const ts_policy_t *p)
{
    char         tmp[TS_NAME_MAX];
    const char  *name;
    size_t       len;

    if (ts_history_is_hosted_tool(buf, t)) {
        return 1;
    }

    name = ts_str_view(buf, &t->name, tmp, sizeof(tmp), &len);
    if (name == NULL) {
        return 0;
    }

    if (ts_words_parse(&ts_hosted_tools, name, len) >= 0) {
        return 1;
    }

    /*
     * A tool named like the gateway's own search tool: the request
     * passed a gateway already, or the client has one; a second tool of
     * that name would be refused upstream.
     */
    if (p->search != TS_SEARCH_HOSTED
        && strlen(p->search_tool) == len
        && memcmp(p->search_tool, name, len) == 0)
    {
        return 1;
    }

    return ts_match_any(p->client_search_tools, name, len);
}


/*
 * The array already uses tool search: a search tool of its own or a
 * deferred tool.
 */
static int
ts_tools_managed(const ts_index_t *ix, const ts_policy_t *p)
{
    size_t  i;

    for (i = 0; i < ix->ntools; i++) {
        if (ix->tools[i].defer_loading.val.kind != TS_NONE
            || ts_is_search_tool(ix->buf, &ix->tools[i], p))
        {
            return 1;
        }
    }

    return 0;
}


/*
 * The core communication tools (docs/spec/deferral.md): the model needs
 * them on its first turn, so no configuration defers them.
 */
static int
ts_is_core_tool(const char *name, size_t len)
{
    static const char  *core[] = { "Agent", "Brief" };
    size_t              i;

    for (i = 0; i < sizeof(core) / sizeof(core[0]); i++) {
        if (strlen(core[i]) == len && memcmp(core[i], name, len) == 0) {
            return 1;
        }
    }

    return 0;
}


/*
 * The location's rules alone, whatever the conversation did: what the
 * gateway's announcement lists and the threshold weighs.
 * TS_FACT_ELIGIBLE when the chain may defer the tool at all, with
 * TS_FACT_DEFERRABLE when the rules defer it.
 */
static int
ts_tool_flags(const ts_index_t *ix, const ts_tool_t *t,
    const ts_policy_t *p, int rule, int client)
{
    char         tmp[TS_NAME_MAX];
    const char  *name;
    size_t       len;

    name = ts_str_view(ix->buf, &t->name, tmp, sizeof(tmp), &len);

    /* what cannot be named cannot be found: keep it loaded */
    if (name == NULL || ts_match_any(p->always_load, name, len)
        || ts_is_server_tool(ix->buf, t))
    {
        return 0;
    }

    if (!ts_is_core_tool(name, len)
        && (ts_shape_defers(rule, name, len)
            || ts_client_defers(client, name, len)
            || ts_match_any(p->defer_tools, name, len)))
    {
        return TS_FACT_ELIGIBLE | TS_FACT_DEFERRABLE;
    }

    return TS_FACT_ELIGIBLE;
}


static size_t
ts_tool_chars(const ts_tool_t *t)
{
    size_t  n;

    n = t->name.len - 2 + t->input_schema.len;

    if (t->description.kind == TS_STRING) {
        n += t->description.len - 2;
    }

    return n;
}


/*
 * The strongest MCP shape among the names the chain may defer; compound
 * names count only when they weigh enough to be worth a search.
 */
static int
ts_facts_defer_rule(const ts_index_t *ix, const ts_policy_t *p)
{
    char         tmp[TS_NAME_MAX];
    const char  *name;
    size_t       i, len, compound, n;
    int          rule, shape;

    rule = TS_SHAPE_NONE;
    compound = 0;
    n = 0;

    for (i = 0; i < ix->ntools; i++) {
        name = ts_str_view(ix->buf, &ix->tools[i].name, tmp, sizeof(tmp),
                           &len);

        if (name == NULL || ts_is_server_tool(ix->buf, &ix->tools[i])
            || ts_match_any(p->always_load, name, len))
        {
            continue;
        }

        shape = ts_shape_of(name, len);

        if (shape == TS_SHAPE_COMPOUND) {
            compound += ts_tool_chars(&ix->tools[i]);
            n++;
        }

        if (shape > rule) {
            rule = shape;
        }
    }

    if (rule == TS_SHAPE_COMPOUND
        && (n < TS_SHAPE_COMPOUND_MIN_TOOLS
            || compound < TS_SHAPE_COMPOUND_MIN_CHARS))
    {
        return TS_SHAPE_NONE;
    }

    return rule;
}


/*
 * Flags, counts and the names of the deferrable tools.  The names point
 * into buf, which holds the tools array shift bytes before ix->buf does:
 * the memory's copy of the array, or the body itself.  A name past the
 * body's end (a Responses namespace member's, qualified per request:
 * ts_rs_qualify) is not in the memory's copy: the names hold a copy of
 * it, the same for every request that sends the array's bytes.
 */
static int
ts_facts_tools(ts_facts_t *f, const ts_index_t *ix, const ts_policy_t *p,
    const char *buf, size_t shift)
{
    const ts_tool_t  *t;
    ts_val_t          name;
    size_t            i;
    int               past;

    f->rule = ts_facts_defer_rule(ix, p);

    for (i = 0; i < ix->ntools; i++) {
        t = &ix->tools[i];
        f->flags[i] = (unsigned char) ts_tool_flags(ix, t, p, f->rule,
                                                    f->client);

        if (!(f->flags[i] & TS_FACT_DEFERRABLE)) {
            continue;
        }

        f->deferrable++;
        f->chars += ts_tool_chars(t);

        past = buf != ix->buf && t->name.off + t->name.len > ix->len;
        name = t->name;
        name.off -= shift;

        if ((past ? ts_names_add_copy(&f->names, ix->buf, &t->name)
                  : ts_names_add(&f->names, buf, &name))
            != 0)
        {
            return -1;
        }

        if (past || name.esc) {
            f->memo.size += name.len + sizeof(char *);
        }
    }

    ts_names_seal(&f->names);

    f->memo.size += ix->ntools + f->names.cap * sizeof(ts_name_t)
                    + (f->names.slots ? f->names.mask + 1 : 0)
                      * sizeof(uint32_t);

    return 0;
}


static void
ts_facts_memo_free(ts_recall_memo_t *m)
{
    ts_facts_free((ts_facts_t *) m);
}


/* the lists of p the facts depend on, in the facts' order */
static void
ts_facts_lists(const ts_policy_t *p, const ts_match_list_t **lists)
{
    lists[0] = p->always_load;
    lists[1] = p->defer_tools;
    lists[2] = p->client_search_tools;
}


/* facts of ix's tools under p, their names in buf (ts_facts_tools) */
static ts_facts_t *
ts_facts_make(const ts_index_t *ix, const ts_policy_t *p, int client,
    const char *buf, size_t shift)
{
    ts_facts_t  *f;
    const char  *tool;
    size_t       n, i;

    tool = p->search_tool;
    n = strlen(tool) + 1;

    f = calloc(1, sizeof(ts_facts_t));
    if (f == NULL) {
        return NULL;
    }

    ts_names_init(&f->names);
    f->memo.free = ts_facts_memo_free;
    f->memo.size = sizeof(ts_facts_t) + n;
    ts_facts_lists(p, f->lists);

    for (i = 0; i < TS_FACT_LISTS; i++) {
        f->serials[i] = f->lists[i] ? f->lists[i]->serial : 0;
    }

    f->own_search = p->search != TS_SEARCH_HOSTED;
    f->client = client;
    f->flags = malloc(ix->ntools ? ix->ntools : 1);
    f->search_tool = malloc(n);

    if (f->flags == NULL || f->search_tool == NULL
        || ts_facts_tools(f, ix, p, buf, shift) != 0)
    {
        ts_facts_free(f);
        return NULL;
    }

    memcpy(f->search_tool, tool, n);
    f->managed = ts_tools_managed(ix, p);

    return f;
}


/* 1 when f was made under what p says now */
static int
ts_facts_fit(const ts_facts_t *f, const ts_policy_t *p, int client)
{
    const ts_match_list_t  *lists[TS_FACT_LISTS];
    size_t                  i;

    ts_facts_lists(p, lists);

    for (i = 0; i < TS_FACT_LISTS; i++) {
        if (lists[i] != f->lists[i]
            || (lists[i] != NULL && lists[i]->serial != f->serials[i]))
        {
            return 0;
        }
    }

    return f->own_search == (p->search != TS_SEARCH_HOSTED)
           && f->client == client
           && strcmp(f->search_tool, p->search_tool) == 0;
}


const ts_facts_t *
ts_facts_get(const ts_index_t *ix, const ts_policy_t *p, int client,
    ts_facts_t **made)
{
    ts_recalled_t      *e;
    const ts_member_t  *tools;
    ts_facts_t         *f;

    e = ix->tools_kept;
    *made = NULL;

    if (e != NULL && e->memo != NULL
        && e->memo->free == ts_facts_memo_free
        && ts_facts_fit((const ts_facts_t *) e->memo, p, client))
    {
        return (const ts_facts_t *) e->memo;
    }

    if (e != NULL) {
        /* names into the memory's copy of the array: they live as long */
        tools = ts_index_top(ix, TS_TOP_TOOLS);
        f = ts_facts_make(ix, p, client, e->bytes, tools->val.off);

        if (f == NULL) {
            return NULL;
        }

        /*
         * kept, or the caller's when the memory cannot hold them: their
         * names point into e's bytes, which no one evicts while the
         * memory is lent to this index
         */
        if (ts_recall_keep(ix->kept_in ? ix->kept_in : &ix->mem->tools, e,
                           &f->memo)
            != 0)
        {
            *made = f;
        }

        return f;
    }

    *made = ts_facts_make(ix, p, client, ix->buf, 0);

    return *made;
}


void
ts_facts_free(ts_facts_t *f)
{
    if (f == NULL) {
        return;
    }

    ts_names_free(&f->names);
    free(f->flags);
    free(f->search_tool);
    free(f);
}
