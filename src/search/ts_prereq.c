/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <stdlib.h>
#include <string.h>

#include "scan/ts_json.h"
#include "scan/ts_str.h"
#include "search/ts_lexicon.h"
#include "search/ts_prereq.h"


/* the words of a getter's name that are compared, "get" included */
#define TS_PREREQ_PARTS   8

/* the required parameters of the best tool that are read */
#define TS_PREREQ_PARAMS  16

/* a parameter name longer than this is not looked up */
#define TS_PREREQ_KEY     128


typedef struct {
    const char  *p;
    size_t       len;
} ts_piece_t;


/* the end of the word at p: alphanumerics, cut where lower turns upper */
static const char *
ts_prereq_word_end(const char *p, const char *end)
{
    const char  *q;

    for (q = p + 1; q < end && ts_ascii_alnum((unsigned char) *q); q++) {
        if (ts_ascii_upper((unsigned char) *q)
            && q[-1] >= 'a' && q[-1] <= 'z')
        {
            break;
        }
    }

    return q;
}


static int
ts_prereq_same(const char *a, const char *b, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        if (ts_ascii_lower(a[i]) != ts_ascii_lower(b[i])) {
            return 0;
        }
    }

    return 1;
}


/* word w names part, either in the plural ("stocks" and "stock") */
static int
ts_names_part(const char *w, size_t wlen, const ts_piece_t *part)
{
    if (wlen == part->len) {
        return ts_prereq_same(w, part->p, wlen);
    }

    if (wlen == part->len + 1 && wlen > 3) {
        return ts_ascii_lower(w[part->len]) == 's'
               && ts_prereq_same(w, part->p, part->len);
    }

    if (part->len == wlen + 1) {
        return ts_ascii_lower(part->p[wlen]) == 's'
               && ts_prereq_same(w, part->p, wlen);
    }

    return 0;
}


static int
ts_text_names(const char *p, size_t len, const ts_piece_t *part)
{
    const char  *end, *e;

    for (end = p + len; p < end; p = e) {
        if (!ts_ascii_alnum((unsigned char) *p)) {
            e = p + 1;
            continue;
        }

        e = ts_prereq_word_end(p, end);

        if (ts_names_part(p, (size_t) (e - p), part)) {
            return 1;
        }
    }

    return 0;
}


/*
 * A name's group (the MCP server, or an API before "::"; empty
 * otherwise) and the parts after it, cut like the catalogue's.  Returns
 * the number of parts, at most max.
 */
static size_t
ts_name_parts(const char *name, size_t len, ts_piece_t *group,
    ts_piece_t *parts, size_t max)
{
    const char  *p, *end, *sep, *e;
    size_t       n;

    end = name + len;
    p = name;
    group->p = name;
    group->len = 0;

    if (len > 5 && memcmp(name, "mcp__", 5) == 0) {
        sep = ts_find(name + 5, len - 5, "__", 2);

        if (sep != NULL) {
            group->p = name + 5;
            group->len = (size_t) (sep - group->p);
            p = sep + 2;
        }

    } else {
        sep = ts_find(name, len, "::", 2);

        if (sep != NULL) {
            group->len = (size_t) (sep - name);
            p = sep + 2;
        }
    }

    for (n = 0; p < end && n < max; p = e) {
        if (!ts_ascii_alnum((unsigned char) *p)) {
            e = p + 1;
            continue;
        }

        e = ts_prereq_word_end(p, end);
        parts[n].p = p;
        parts[n++].len = (size_t) (e - p);
    }

    return n;
}


/*
 * The words a getter's name names its result with: not the function
 * words nor "info", "details", "based" (get_stock_info returns a stock).
 * 0: not counted; -1: the getter links nothing, "user" being what most
 * parameters of a catalogue speak of.
 */
static int
ts_object_word(const ts_piece_t *w)
{
    static const char *const  skip[] = {
        "info", "information", "detail", "details", "based", NULL
    };
    const char *const        *s;
    char                      low[16];
    size_t                    i;

    if (w->len >= sizeof(low)) {
        return 1;
    }

    for (i = 0; i < w->len; i++) {
        low[i] = ts_ascii_lower(w->p[i]);
    }

    if (ts_stopword(low, w->len)) {
        return 0;
    }

    for (s = skip; *s; s++) {
        if (strlen(*s) == w->len && memcmp(*s, low, w->len) == 0) {
            return 0;
        }
    }

    return w->len == 4 && memcmp(low, "user", 4) == 0 ? -1 : 1;
}


/* a required parameter: its name and its description */
typedef struct {
    ts_piece_t  key;
    ts_piece_t  desc;
} ts_param_t;


/* every counted word of the getter is in the parameter's name or text */
static int
ts_param_names(const ts_param_t *prm, const ts_piece_t *obj, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        if (!ts_text_names(prm->key.p, prm->key.len, &obj[i])
            && !ts_text_names(prm->desc.p, prm->desc.len, &obj[i]))
        {
            return 0;
        }
    }

    return 1;
}


/* the counted words of a getter's name, or 0 when it is no getter */
static size_t
ts_getter_object(const ts_piece_t *parts, size_t nparts, ts_piece_t *obj)
{
    size_t  i, n;
    int     w;

    if (nparts < 2 || parts[0].len != 3
        || !ts_prereq_same(parts[0].p, "get", 3))
    {
        return 0;
    }

    for (i = 1, n = 0; i < nparts; i++) {
        w = ts_object_word(&parts[i]);

        if (w < 0) {
            return 0;
        }

        if (w > 0) {
            obj[n++] = parts[i];
        }
    }

    return n;
}


/* the inside of a string value's quotes */
static ts_piece_t
ts_inside(const char *s, const ts_val_t *v)
{
    ts_piece_t  pc;

    pc.p = s + v->off + 1;
    pc.len = v->kind == TS_STRING && v->len >= 2 ? v->len - 2 : 0;

    return pc;
}


/*
 * The tool's required parameters that its input schema describes, at
 * most max: names with escapes or past TS_PREREQ_KEY bytes are left out
 */
static size_t
ts_required(const char *s, size_t len, ts_param_t *out, size_t max)
{
    static const char *const  keys[] = { "properties", "required" };
    ts_val_t                  doc, m[2], pv, dv, *items;
    char                      key[TS_PREREQ_KEY + 1];
    size_t                    i, n, k;
    ts_piece_t                name;

    if (ts_document_members(s, len, keys, 2, m, &doc) != TS_OK
        || m[0].kind != TS_OBJECT || m[1].kind != TS_ARRAY
        || ts_container_items(s, &m[1], &items, &n) != TS_OK)
    {
        return 0;
    }

    for (i = 0, k = 0; i < n && k < max; i++) {
        name = ts_inside(s, &items[i]);

        if (items[i].kind != TS_STRING || items[i].esc
            || name.len > TS_PREREQ_KEY)
        {
            continue;
        }

        memcpy(key, name.p, name.len);
        key[name.len] = '\0';

        if (ts_object_member(s, &m[0], key, &pv) != TS_OK
            || pv.kind != TS_OBJECT)
        {
            continue;
        }

        if (ts_object_member(s, &pv, "description", &dv) != TS_OK) {
            dv.kind = TS_NONE;
        }

        out[k].key = name;
        out[k++].desc = ts_inside(s, &dv);
    }

    free(items);

    return k;
}


/*
 * A quick look before the name is cut: b's name begins with the group of
 * the tool (name) and "get" follows, as a word of its own
 */
static int
ts_getter_of(const ts_catalog_t *c, const ts_entry_t *b, const char *name,
    const ts_piece_t *group)
{
    const char  *p;
    size_t       len, at;

    p = ts_catalog_name(c, b);
    len = b->name.len;

    /* the tool's name up to its parts: "mcp__server__", "api::" or "" */
    at = group->len == 0 ? 0 : (size_t) (group->p - name) + group->len + 2;

    if (len < at + 4 || memcmp(p, name, at) != 0
        || !ts_prereq_same(p + at, "get", 3)
        || (p[at + 3] >= 'a' && p[at + 3] <= 'z'))
    {
        return 0;
    }

    return 1;
}


size_t
ts_prereq_getters(const ts_catalog_t *c, uint32_t tool, unsigned char *out)
{
    const ts_entry_t  *e, *b;
    ts_param_t         prm[TS_PREREQ_PARAMS];
    ts_piece_t         group, bgroup, parts[TS_PREREQ_PARTS];
    ts_piece_t         obj[TS_PREREQ_PARTS];
    size_t             nprm, i, j, nparts, nobj, found;

    e = &c->tools[tool];

    if (c->schemas == NULL || e->schema.len == 0) {
        return 0;
    }

    /* the getters of the tool's group first: most tools have none */
    ts_name_parts(ts_catalog_name(c, e), e->name.len, &group, parts, 0);

    for (i = 0, found = 0; i < c->ntools; i++) {
        b = &c->tools[i];

        if (i != tool && b->pooled
            && ts_getter_of(c, b, ts_catalog_name(c, e), &group))
        {
            out[i] = 1;
            found++;
        }
    }

    nprm = found ? ts_required(c->schemas + e->schema.off, e->schema.len,
                               prm, TS_PREREQ_PARAMS)
                 : 0;

    for (i = 0, found = 0; i < c->ntools; i++) {
        if (!out[i]) {
            continue;
        }

        out[i] = 0;
        b = &c->tools[i];
        nparts = ts_name_parts(ts_catalog_name(c, b), b->name.len, &bgroup,
                               parts, TS_PREREQ_PARTS);
        nobj = bgroup.len == group.len
               ? ts_getter_object(parts, nparts, obj) : 0;

        for (j = 0; nobj > 0 && j < nprm; j++) {
            if (ts_param_names(&prm[j], obj, nobj)) {
                out[i] = 1;
                found++;
                break;
            }
        }
    }

    return found;
}
