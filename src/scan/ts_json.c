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


/* inlined into both callers: with one key, the loops fold away */
static TS_HOT ts_status_t
ts_members_of(const char *buf, const ts_val_t *obj,
    const char *const *keys, size_t n, ts_val_t *out)
{
    ts_scan_t  s;
    ts_val_t   k, v;
    size_t     i;
    int        rc;

    /* an absent member is an empty span: callers may read it unchecked */
    for (i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof(ts_val_t));
    }

    if (obj->kind != TS_OBJECT) {
        return TS_ERR_TYPE;
    }

    memset(&s, 0, sizeof(ts_scan_t));
    s.start = (const unsigned char *) buf;
    s.p = s.start + obj->off;
    s.end = s.start + obj->off + obj->len;

    rc = ts_open(&s, '{');

    while (rc == 0) {
        if (ts_key(&s, &k) != 0 || ts_member_value(&s, &v) != 0) {
            break;
        }

        for (i = 0; i < n; i++) {
            if (out[i].kind == TS_NONE && ts_str_eq(buf, &k, keys[i])) {
                out[i] = v;
                break;
            }
        }

        rc = ts_more(&s, '}');
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
