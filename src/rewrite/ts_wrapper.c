/*
 * Copyright (C) ngx_http_toolsearch_module authors
 */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite/ts_defer.h"
#include "rewrite/ts_wrapper.h"
#include "scan/ts_str.h"


static const char  ts_wrapper_description[] =
    "Calls a tool that a search loaded: the search's result gives its "
    "description and input schema. name: the tool's exact name; "
    "arguments: its input, an object that follows its input schema. "
    "Tools in your tool list are called directly, not through this one.";


int
ts_wrapper_free(const ts_index_t *ix)
{
    size_t  i;

    for (i = 0; i < ix->ntools; i++) {
        if (ts_str_eq(ix->buf, &ix->tools[i].name, TS_WRAPPER_NAME)) {
            return 0;
        }
    }

    return 1;
}


void
ts_wrapper_tool(ts_buf_t *b, const ts_policy_t *p, const char *schema)
{
    ts_buf_str(b, "\"name\":\"" TS_WRAPPER_NAME "\",\"description\":\"");
    ts_buf_str(b, ts_wrapper_description);
    ts_buf_str(b, "\",\"");
    ts_buf_str(b, schema);
    ts_buf_str(b, "\":{\"type\":\"object\",\"properties\":"
                  "{\"name\":{\"type\":\"string\",\"description\":\"the "
                  "name of a tool that ");
    ts_buf_str(b, p->search_tool);
    ts_buf_str(b, " loaded\"},\"arguments\":{\"type\":\"object\","
                  "\"description\":\"the tool's input\"}},"
                  "\"required\":[\"name\",\"arguments\"]}");
}


/* the tool of ix with this name (decoded), or -1 */
static long
ts_wrapper_tool_named(const ts_index_t *ix, const char *name, size_t len)
{
    char         tmp[TS_NAME_MAX];
    const char  *s;
    size_t       i, n;

    for (i = 0; i < ix->ntools; i++) {
        s = ts_str_view(ix->buf, &ix->tools[i].name, tmp, sizeof(tmp), &n);

        if (s != NULL && n == len && memcmp(s, name, len) == 0) {
            return (long) i;
        }
    }

    return -1;
}


void
ts_wrapper_found_text(ts_buf_t *b, const ts_index_t *ix,
    const ts_name_t *names, size_t n)
{
    const ts_tool_t  *t;
    size_t            i;
    long              k;

    ts_buf_str(b, "Loaded: ");

    for (i = 0; i < n; i++) {
        ts_buf_str(b, i ? ", " : "");
        ts_buf_escaped(b, names[i].p, names[i].len);
    }

    ts_buf_str(b, ". They are not in your tool list: call each through "
                  TS_WRAPPER_NAME ", with {\\\"name\\\": its name, "
                  "\\\"arguments\\\": its input}, the input following its "
                  "schema below.");

    for (i = 0; i < n; i++) {
        k = ts_wrapper_tool_named(ix, names[i].p, names[i].len);
        if (k < 0) {
            continue;
        }

        t = &ix->tools[k];
        ts_buf_str(b, "\\n\\nTool: ");
        ts_buf_escaped(b, names[i].p, names[i].len);

        /* a JSON string's escaped bytes are text of the result as they are */
        if (t->description.kind == TS_STRING) {
            ts_buf_str(b, "\\nDescription: ");
            ts_buf_add(b, ix->buf + t->description.off + 1,
                       t->description.len - 2);
        }

        if (t->input_schema.kind != TS_NONE) {
            ts_buf_str(b, "\\nInput schema: ");
            ts_buf_escaped(b, ix->buf + t->input_schema.off,
                           t->input_schema.len);
        }
    }
}


/*
 * The key of an object item (ts_container_items: from the key to the
 * value), as a string value
 */
static int
ts_item_key(const char *buf, const ts_val_t *item, ts_val_t *key)
{
    size_t  i, end;

    end = item->off + item->len;

    for (i = item->off; i < end && buf[i] != '"'; i++) { /* void */ }

    key->off = i;
    key->kind = TS_STRING;
    key->esc = 0;

    for (i++; i < end && buf[i] != '"'; i++) {
        if (buf[i] == '\\') {
            key->esc = 1;
            i++;
        }
    }

    if (i >= end) {
        return -1;
    }

    key->len = i + 1 - key->off;

    return 0;
}


/* 1 when a value is of the JSON Schema type named by t (unknown: 1) */
static int
ts_type_is(const char *sbuf, const ts_val_t *t, const char *buf,
    const ts_val_t *v)
{
    static const struct {
        const char  *name;
        int          kind;
    } types[] = {
        { "string", TS_STRING }, { "number", TS_NUMBER },
        { "integer", TS_NUMBER }, { "object", TS_OBJECT },
        { "array", TS_ARRAY }, { "null", TS_NULL }, { "boolean", TS_TRUE }
    };
    size_t  i;
    double  d;
    int     kind;

    for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        if (!ts_str_eq(sbuf, t, types[i].name)) {
            continue;
        }

        kind = v->kind == TS_FALSE ? TS_TRUE : v->kind;

        if (kind != types[i].kind) {
            return 0;
        }

        if (i == 2) {
            d = strtod(buf + v->off, NULL);
            return d == floor(d);
        }

        return 1;
    }

    return 1;
}


/* 1 when the value fits the "type" of a property's schema */
static int
ts_type_fits(const char *sbuf, const ts_val_t *prop, const char *buf,
    const ts_val_t *v)
{
    ts_val_t  type, *items;
    size_t    n, i;
    int       fits;

    if (prop->kind != TS_OBJECT
        || ts_object_member(sbuf, prop, "type", &type) != TS_OK)
    {
        return 1;
    }

    if (type.kind == TS_STRING) {
        return ts_type_is(sbuf, &type, buf, v);
    }

    if (type.kind != TS_ARRAY
        || ts_container_items(sbuf, &type, &items, &n) != TS_OK)
    {
        return 1;
    }

    fits = (n == 0);

    for (i = 0; i < n && !fits; i++) {
        fits = items[i].kind != TS_STRING
               || ts_type_is(sbuf, &items[i], buf, v);
    }

    free(items);

    return fits;
}


/* the schema keywords that make a schema one the check does not judge */
static int
ts_schema_judged(const char *sbuf, const ts_val_t *schema)
{
    static const char  *keys[] = {
        "$ref", "anyOf", "oneOf", "allOf", "not", "if", "type"
    };
    ts_val_t            m[7];

    if (schema->kind != TS_OBJECT
        || ts_object_members(sbuf, schema, keys, 7, m) != TS_OK)
    {
        return 0;
    }

    return m[0].kind == TS_NONE && m[1].kind == TS_NONE
           && m[2].kind == TS_NONE && m[3].kind == TS_NONE
           && m[4].kind == TS_NONE && m[5].kind == TS_NONE
           && (m[6].kind == TS_NONE || ts_str_eq(sbuf, &m[6], "object"));
}


static void
ts_quoted_key(ts_buf_t *err, const char *buf, const ts_val_t *key)
{
    ts_buf_str(err, "\\\"");
    ts_buf_escaped(err, buf + key->off + 1, key->len - 2);
    ts_buf_str(err, "\\\"");
}


/* required members present; -1 with why in err */
static int
ts_check_required(const char *sbuf, const ts_val_t *req, const char *buf,
    const ts_val_t *args, ts_buf_t *err)
{
    char         tmp[TS_NAME_MAX];
    const char  *key;
    ts_val_t    *items, v;
    size_t       n, i, len;
    int          rc;

    if (req->kind != TS_ARRAY
        || ts_container_items(sbuf, req, &items, &n) != TS_OK)
    {
        return 0;
    }

    rc = 0;

    for (i = 0; rc == 0 && i < n; i++) {
        key = ts_str_view(sbuf, &items[i], tmp, sizeof(tmp) - 1, &len);
        if (key == NULL || memchr(key, '\0', len) != NULL) {
            continue;
        }

        if (key != tmp) {
            memcpy(tmp, key, len);
        }

        tmp[len] = '\0';

        if (ts_object_member(buf, args, tmp, &v) == TS_OK
            && v.kind == TS_NONE)
        {
            ts_buf_str(err, "the required member ");
            ts_quoted_key(err, sbuf, &items[i]);
            ts_buf_str(err, " is missing");
            rc = -1;
        }
    }

    free(items);

    return rc;
}


/*
 * The members of one object (a) looked up in the other (b): for each
 * member of a, fn judges it against b's member of that name
 */
typedef int (*ts_member_check_pt)(const char *abuf, const ts_val_t *key,
    const ts_val_t *aval, const char *bbuf, const ts_val_t *bval,
    ts_buf_t *err);

static int
ts_each_member(const char *abuf, const ts_val_t *a, const char *bbuf,
    const ts_val_t *b, ts_member_check_pt fn, ts_buf_t *err)
{
    char         tmp[TS_NAME_MAX];
    const char  *s;
    ts_val_t    *items, key, aval, bval;
    size_t       n, i, len;
    int          rc;

    if (ts_container_items(abuf, a, &items, &n) != TS_OK) {
        return 0;
    }

    rc = 0;

    for (i = 0; rc == 0 && i < n; i++) {
        if (ts_item_key(abuf, &items[i], &key) != 0) {
            continue;
        }

        s = ts_str_view(abuf, &key, tmp, sizeof(tmp) - 1, &len);
        if (s == NULL || memchr(s, '\0', len) != NULL) {
            continue;
        }

        if (s != tmp) {
            memcpy(tmp, s, len);
        }

        tmp[len] = '\0';

        if (ts_object_member(abuf, a, tmp, &aval) != TS_OK
            || ts_object_member(bbuf, b, tmp, &bval) != TS_OK)
        {
            continue;
        }

        rc = fn(abuf, &key, &aval, bbuf, &bval, err);
    }

    free(items);

    return rc;
}


/* an argument the schema has no property for (additionalProperties) */
static int
ts_check_known(const char *abuf, const ts_val_t *key, const ts_val_t *aval,
    const char *bbuf, const ts_val_t *prop, ts_buf_t *err)
{
    (void) aval;
    (void) bbuf;

    if (prop->kind != TS_NONE) {
        return 0;
    }

    ts_buf_str(err, "the member ");
    ts_quoted_key(err, abuf, key);
    ts_buf_str(err, " is not in the schema, which allows no other");

    return -1;
}


/* a property's argument of the type the property says */
static int
ts_check_type(const char *sbuf, const ts_val_t *key, const ts_val_t *prop,
    const char *abuf, const ts_val_t *arg, ts_buf_t *err)
{
    if (arg->kind == TS_NONE || ts_type_fits(sbuf, prop, abuf, arg)) {
        return 0;
    }

    ts_buf_str(err, "the member ");
    ts_quoted_key(err, sbuf, key);
    ts_buf_str(err, " is not of the type its schema gives");

    return -1;
}


/* the arguments against the tool's input schema; -1 with why in err */
static int
ts_check_schema(const char *sbuf, const ts_val_t *schema, const char *buf,
    const ts_val_t *args, ts_buf_t *err)
{
    static const char  *keys[] = {
        "properties", "required", "additionalProperties", "patternProperties"
    };
    ts_val_t            m[4];

    if (!ts_schema_judged(sbuf, schema)
        || ts_object_members(sbuf, schema, keys, 4, m) != TS_OK)
    {
        return 0;
    }

    if (ts_check_required(sbuf, &m[1], buf, args, err) != 0) {
        return -1;
    }

    if (m[0].kind == TS_OBJECT
        && ts_each_member(sbuf, &m[0], buf, args, ts_check_type, err) != 0)
    {
        return -1;
    }

    if (m[2].kind == TS_FALSE && m[3].kind == TS_NONE
        && ts_each_member(buf, args, sbuf,
                          m[0].kind == TS_OBJECT ? &m[0] : schema,
                          ts_check_known, err) != 0)
    {
        return -1;
    }

    return 0;
}


int
ts_wrapper_check(const ts_index_t *ix, const char *input, size_t len,
    ts_wrapper_call_t *call, ts_buf_t *err)
{
    static const char  *keys[] = { "name", "arguments" };
    char                tmp[TS_NAME_MAX];
    const char         *name;
    ts_val_t            doc, m[2];
    size_t              nlen;

    memset(call, 0, sizeof(ts_wrapper_call_t));
    call->buf = input;
    call->tool = -1;

    if (ts_value_parse(input, len, &doc) != TS_OK || doc.kind != TS_OBJECT
        || ts_object_members(input, &doc, keys, 2, m) != TS_OK
        || m[0].kind != TS_STRING || m[1].kind != TS_OBJECT)
    {
        ts_buf_str(err, "The call did not run: the input of "
                        TS_WRAPPER_NAME " is an object with the tool's "
                        "\\\"name\\\" and its \\\"arguments\\\", an object.");
        return -1;
    }

    call->name = m[0];
    call->args = m[1];
    name = ts_str_view(input, &m[0], tmp, sizeof(tmp), &nlen);
    call->tool = name ? ts_wrapper_tool_named(ix, name, nlen) : -1;

    if (call->tool < 0) {
        ts_buf_str(err, "The call did not run: no tool is named ");
        ts_buf_add(err, "\\\"", 2);
        ts_buf_add(err, input + m[0].off + 1, m[0].len - 2);
        ts_buf_add(err, "\\\"", 2);
        ts_buf_str(err, ". Search for the tool first and call it by the "
                        "name the search's result gives.");
        return -1;
    }

    ts_buf_str(err, "The call did not run: its arguments do not follow ");
    ts_buf_add(err, input + m[0].off + 1, m[0].len - 2);
    ts_buf_str(err, "'s input schema: ");

    if (ts_check_schema(ix->buf, &ix->tools[call->tool].input_schema,
                        input, &m[1], err) != 0)
    {
        ts_buf_str(err, ". Call it again with arguments that follow the "
                        "schema the search's result gives.");
        return -1;
    }

    ts_buf_reset(err);

    return 0;
}


/* one tool_use of a deferred tool as the upstream's call of the wrapper */
static int
ts_wrapper_call_edit(ts_request_t *rq, const ts_block_t *b, ts_buf_t *t)
{
    const char  *buf;
    ts_val_t     input;

    buf = rq->ix.buf;

    if (ts_object_member(buf, &b->elem, "input", &input) != TS_OK
        || input.kind != TS_OBJECT)
    {
        return 0;
    }

    ts_buf_reset(t);
    ts_buf_str(t, "{\"name\":");
    ts_buf_add(t, buf + b->name.off, b->name.len);
    ts_buf_str(t, ",\"arguments\":");
    ts_buf_add(t, buf + input.off, input.len);
    ts_buf_str(t, "}");

    if (t->failed
        || ts_edit_replace(&rq->edits, b->name.off, b->name.len,
                           "\"" TS_WRAPPER_NAME "\"",
                           sizeof(TS_WRAPPER_NAME) + 1) != 0)
    {
        return -1;
    }

    return ts_edit_replace(&rq->edits, input.off, input.len, t->p, t->len);
}


int
ts_wrapper_history(ts_request_t *rq)
{
    const ts_index_t  *ix;
    const ts_block_t  *b;
    ts_names_t         deferred;
    ts_buf_t           t;
    size_t             i;
    int                rc;

    ix = &rq->ix;
    ts_names_init(&deferred);
    ts_buf_init(&t, 0);
    rc = 0;

    for (i = 0; rc == 0 && i < ix->ntools; i++) {
        if (rq->defer[i] && ix->tools[i].name.kind == TS_STRING) {
            rc = ts_names_add(&deferred, ix->buf, &ix->tools[i].name);
        }
    }

    ts_names_seal(&deferred);

    for (i = 0; rc == 0 && deferred.n > 0 && i < ix->nblocks; i++) {
        b = &ix->blocks[i];

        if (b->parent < 0 && b->name.kind == TS_STRING
            && ts_str_eq(ix->buf, &b->type, "tool_use")
            && ts_str_eq(ix->buf, &ix->messages[b->message].role,
                         "assistant")
            && ts_names_has_val(&deferred, ix->buf, &b->name))
        {
            rc = ts_wrapper_call_edit(rq, b, &t);
        }
    }

    ts_buf_free(&t);
    ts_names_free(&deferred);

    return rc;
}


/* a JSON-string argument decoded (malloc'ed, its object at *obj), or NULL */
static char *
ts_wrapper_decoded(const char *buf, const ts_val_t *args, ts_val_t *obj)
{
    char    *s;
    size_t   n;

    if (args->kind != TS_STRING || (s = malloc(args->len)) == NULL) {
        return NULL;
    }

    n = ts_str_decode(buf, args, s, args->len);

    if (n == (size_t) -1 || ts_value_parse(s, n, obj) != TS_OK
        || obj->kind != TS_OBJECT)
    {
        free(s);
        return NULL;
    }

    return s;
}


int
ts_wrapper_turn_fits(const ts_index_t *ix, size_t k, const ts_val_t *args)
{
    const ts_val_t  *name;
    ts_val_t         obj;
    char            *s;

    name = &ix->tools[k].name;

    if (name->kind != TS_STRING || name->esc
        || !ts_defer_restorable(ix->buf + name->off + 1, name->len - 2))
    {
        return 0;
    }

    s = ts_wrapper_decoded(ix->buf, args, &obj);
    free(s);

    return s != NULL;
}


int
ts_wrapper_turn_call(ts_request_t *rq, const ts_val_t *name,
    const ts_val_t *args, ts_buf_t *t)
{
    const char  *buf;
    ts_val_t     obj;
    ts_buf_t     inner;
    char        *s;
    int          rc;

    buf = rq->ix.buf;
    s = ts_wrapper_decoded(buf, args, &obj);

    if (s == NULL) {
        return -1;
    }

    ts_buf_init(&inner, 0);
    ts_buf_str(&inner, "{\"name\":");
    ts_buf_add(&inner, buf + name->off, name->len);
    ts_buf_str(&inner, ",\"arguments\":");
    ts_buf_add(&inner, s + obj.off, obj.len);
    ts_buf_str(&inner, "}");
    free(s);

    ts_buf_reset(t);
    ts_buf_str(t, "\"");
    ts_buf_escaped(t, inner.p, inner.len);
    ts_buf_str(t, "\"");

    rc = (inner.failed || t->failed
          || ts_edit_replace(&rq->edits, name->off, name->len,
                             "\"" TS_WRAPPER_NAME "\"",
                             sizeof(TS_WRAPPER_NAME) + 1) != 0
          || ts_edit_replace(&rq->edits, args->off, args->len, t->p, t->len)
             != 0)
         ? -1 : 0;

    ts_buf_free(&inner);

    return rc;
}


long
ts_wrapper_deferred(const ts_request_t *rq, const ts_val_t *name)
{
    const ts_index_t  *ix;
    size_t             i;

    ix = &rq->ix;

    for (i = 0; name->kind == TS_STRING && i < ix->ntools; i++) {
        if (rq->defer[i] && ix->tools[i].name.kind == TS_STRING
            && ts_str_same_raw(ix->buf, &ix->tools[i].name, name))
        {
            return (long) i;
        }
    }

    return -1;
}


void
ts_wrapper_declare(ts_request_t *rq, size_t k)
{
    if (rq->defer[k]) {
        rq->defer[k] = 0;
        rq->tools_deferred--;
    }

    rq->loaded[k] = 1;
}


int
ts_wrapper_turns(ts_request_t *rq, const ts_policy_t *p,
    ts_wrapper_turn_pt turn)
{
    unsigned char  *done;
    ts_buf_t        t;
    size_t          i;
    int             rc;

    if (rq->ix.ntools == 0) {
        return 0;
    }

    done = calloc(rq->ix.ntools, 1);
    if (done == NULL) {
        return -1;
    }

    ts_buf_init(&t, 0);
    rc = 0;

    for (i = 0; rc == 0 && i < rq->ix.nmessages; i++) {
        rc = turn(rq, p, i, done, &t);
    }

    ts_buf_free(&t);
    free(done);

    return rc;
}
