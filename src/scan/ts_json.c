/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The schema-free scanner: a JSON value validated, an array's or an
 * object's items listed, an object's members looked up by name.
 */

#include "scan/ts_scan.h"


ts_status_t
ts_value_parse(const char *buf, size_t len, ts_val_t *v)
{
    ts_scan_t  s;

    /* nothing is no value, and an empty buffer may have no address */
    if (len == 0) {
        v->kind = TS_NONE;
        return TS_ERR_SYNTAX;
    }

    memset(&s, 0, sizeof(ts_scan_t));
    s.start = (const unsigned char *) buf;
    s.p = s.start;
    s.end = s.start + len;

    ts_ws(&s);

    if (ts_member_value(&s, v) == 0) {
        ts_ws(&s);

        if (s.p != s.end) {
            (void) ts_fail(&s, TS_ERR_SYNTAX);
        }
    }

    return s.err;
}


ts_status_t
ts_container_items(const char *buf, const ts_val_t *v, ts_val_t **items,
    size_t *n)
{
    ts_scan_t    s;
    ts_val_t    *it, val;
    size_t       cap, from;
    int          rc, obj;

    *items = NULL;
    *n = 0;
    cap = 0;
    obj = (v->kind == TS_OBJECT);

    memset(&s, 0, sizeof(ts_scan_t));
    s.start = (const unsigned char *) buf;
    s.p = s.start + v->off;
    s.end = s.start + v->off + v->len;

    rc = ts_open(&s, obj ? '{' : '[');

    while (rc == 0) {
        from = s.p - s.start;

        if ((obj && ts_key(&s, NULL) != 0) || ts_member_value(&s, &val) != 0) {
            break;
        }

        it = ts_grow(&s, (void **) items, *n, &cap, sizeof(ts_val_t));
        if (it == NULL) {
            break;
        }

        it->off = from;
        it->len = s.p - s.start - from;
        it->kind = obj ? TS_NONE : val.kind;
        it->esc = obj ? 0 : val.esc;
        (*n)++;

        rc = ts_more(&s, obj ? '}' : ']');
    }

    if (s.err != TS_OK) {
        free(*items);
        *items = NULL;
        *n = 0;
    }

    return s.err;
}


/*
 * The members named keys of the object at the scanner, which it leaves
 * after the object.  Inlined into its callers: with one key, the loops
 * fold away.
 */
static TS_HOT void
ts_members_scan(ts_scan_t *s, const char *buf, const char *const *keys,
    size_t n, ts_val_t *out, const ts_member_reader_t *rd)
{
    ts_val_t  k, v;
    size_t    i;
    int       rc;

    /* an absent member is an empty span: callers may read it unchecked */
    for (i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof(ts_val_t));
    }

    rc = ts_open(s, '{');

    while (rc == 0) {
        if (ts_key(s, &k) != 0) {
            break;
        }

        for (i = 0; i < n; i++) {
            if (out[i].kind == TS_NONE && ts_str_eq(buf, &k, keys[i])) {
                break;
            }
        }

        /* the reader's key, the first time: it may read the value itself */
        if (rd != NULL && i == rd->key
            && (rc = rd->read(s, &v, rd->data)) != 0)
        {
            if (rc < 0) {
                break;
            }

        } else if (ts_member_value(s, &v) != 0) {
            break;
        }

        if (i < n) {
            out[i] = v;
        }

        rc = ts_more(s, '}');
    }
}


static TS_HOT ts_status_t
ts_members_of(const char *buf, const ts_val_t *obj,
    const char *const *keys, size_t n, ts_val_t *out)
{
    ts_scan_t  s;
    size_t     i;

    if (obj->kind != TS_OBJECT) {
        for (i = 0; i < n; i++) {
            memset(&out[i], 0, sizeof(ts_val_t));
        }

        return TS_ERR_TYPE;
    }

    memset(&s, 0, sizeof(ts_scan_t));
    s.start = (const unsigned char *) buf;
    s.p = s.start + obj->off;
    s.end = s.start + obj->off + obj->len;

    ts_members_scan(&s, buf, keys, n, out, NULL);

    return s.err;
}


ts_status_t
ts_document_members(const char *buf, size_t len, const char *const *keys,
    size_t n, ts_val_t *out, ts_val_t *doc)
{
    return ts_document_read(buf, len, keys, n, out, doc, NULL);
}


ts_status_t
ts_document_read(const char *buf, size_t len, const char *const *keys,
    size_t n, ts_val_t *out, ts_val_t *doc, const ts_member_reader_t *rd)
{
    ts_scan_t  s;

    memset(&s, 0, sizeof(ts_scan_t));
    memset(doc, 0, sizeof(ts_val_t));
    s.start = (const unsigned char *) buf;
    s.p = s.start;
    s.end = s.start + len;

    ts_ws(&s);
    doc->off = s.p - s.start;

    if (len == 0 || s.p == s.end) {
        memset(out, 0, n * sizeof(ts_val_t));
        return TS_ERR_SYNTAX;
    }

    ts_members_scan(&s, buf, keys, n, out, rd);
    doc->len = s.p - s.start - doc->off;
    doc->kind = TS_OBJECT;
    ts_ws(&s);

    if (s.err == TS_OK && s.p != s.end) {
        (void) ts_fail(&s, TS_ERR_SYNTAX);
    }

    return s.err;
}


ts_status_t
ts_items_members(const char *buf, const ts_val_t *arr,
    const char *const *keys, size_t n, ts_val_t **items, ts_val_t **out,
    size_t *count)
{
    ts_scan_t   s;
    ts_val_t   *it, *m, val;
    size_t      cap, mcap, from;
    int         rc;

    *items = NULL;
    *out = NULL;
    *count = 0;
    cap = 0;
    mcap = 0;

    memset(&s, 0, sizeof(ts_scan_t));
    s.start = (const unsigned char *) buf;
    s.p = s.start + arr->off;
    s.end = s.start + arr->off + arr->len;

    rc = ts_open(&s, '[');

    while (rc == 0) {
        from = s.p - s.start;
        it = ts_grow(&s, (void **) items, *count, &cap, sizeof(ts_val_t));
        m = it ? ts_grow(&s, (void **) out, *count, &mcap,
                         n * sizeof(ts_val_t))
               : NULL;

        if (m == NULL) {
            break;
        }

        if (s.p < s.end && *s.p == '{') {
            ts_members_scan(&s, buf, keys, n, *out + *count * n, NULL);
            val.kind = TS_OBJECT;
            val.esc = 0;

        } else {
            memset(*out + *count * n, 0, n * sizeof(ts_val_t));

            if (ts_member_value(&s, &val) != 0) {
                break;
            }
        }

        if (s.err != TS_OK) {
            break;
        }

        it = *items + *count;
        it->off = from;
        it->len = s.p - s.start - from;
        it->kind = val.kind;
        it->esc = val.esc;
        (*count)++;

        rc = ts_more(&s, ']');
    }

    if (s.err != TS_OK) {
        free(*items);
        free(*out);
        *items = NULL;
        *out = NULL;
        *count = 0;
    }

    return s.err;
}


ts_status_t
ts_object_member(const char *buf, const ts_val_t *obj, const char *key,
    ts_val_t *out)
{
    return ts_members_of(buf, obj, &key, 1, out);
}


ts_status_t
ts_object_members(const char *buf, const ts_val_t *obj,
    const char *const *keys, size_t n, ts_val_t *out)
{
    return ts_members_of(buf, obj, keys, n, out);
}


const char *
ts_status_name(ts_status_t st)
{
    static const char  *names[] = {
        "ok", "malformed", "too_deep", "duplicate_key", "wrong_type",
        "limit", "no_memory"
    };

    return (unsigned) st < sizeof(names) / sizeof(names[0])
           ? names[st] : "unknown";
}
