
/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The anthropic-beta header: the request's lines read as one, and
 * replaced by one line without moving any other header.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_toolsearch_betas.h"


static ngx_int_t
ngx_http_toolsearch_is_beta(ngx_table_elt_t *h)
{
    return h->key.len == sizeof("anthropic-beta") - 1
           && ngx_strncasecmp(h->key.data, (u_char *) "anthropic-beta",
                              sizeof("anthropic-beta") - 1) == 0;
}


/* every anthropic-beta line of the request, comma-joined */
ngx_int_t
ngx_http_toolsearch_betas(ngx_http_request_t *r, ngx_str_t *merged)
{
    u_char           *p;
    size_t            len;
    ngx_uint_t        i, pass;
    ngx_list_part_t  *part;
    ngx_table_elt_t  *h;

    len = 0;
    p = NULL;
    ngx_str_null(merged);

    for (pass = 0; pass < 2; pass++) {
        for (part = &r->headers_in.headers.part; part; part = part->next) {
            h = part->elts;

            for (i = 0; i < part->nelts; i++) {
                if (!ngx_http_toolsearch_is_beta(&h[i])) {
                    continue;
                }

                if (pass == 0) {
                    len += h[i].value.len + 1;
                    continue;
                }

                if (p != merged->data) {
                    *p++ = ',';
                }

                p = ngx_cpymem(p, h[i].value.data, h[i].value.len);
            }
        }

        if (pass == 0) {
            if (len == 0) {
                return NGX_OK;
            }

            merged->data = ngx_pnalloc(r->pool, len);
            if (merged->data == NULL) {
                return NGX_ERROR;
            }

            p = merged->data;
        }
    }

    merged->len = p - merged->data;

    return NGX_OK;
}


ngx_int_t
ngx_http_toolsearch_betas_prepare(ngx_http_request_t *r, const char *value,
    size_t len, ngx_http_toolsearch_betas_t *nb)
{
    ngx_uint_t        i, n;
    ngx_list_t       *l;
    ngx_list_part_t  *part;
    ngx_table_elt_t  *h;

    l = &r->headers_in.headers;
    n = 0;

    for (part = &l->part; part; part = part->next) {
        h = part->elts;

        for (i = 0; i < part->nelts; i++) {
            n += ngx_http_toolsearch_is_beta(&h[i]);
        }
    }

    nb->value.len = len;
    nb->value.data = ngx_pnalloc(r->pool, len + 1);
    nb->parts = ngx_palloc(r->pool, (n + 1) * sizeof(ngx_list_part_t));

    if (nb->value.data == NULL || nb->parts == NULL) {
        return NGX_ERROR;
    }

    ngx_memcpy(nb->value.data, value, len);
    nb->value.data[len] = '\0';
    nb->added = NULL;

    if (n > 0 || nb->value.len == 0) {
        return NGX_OK;
    }

    nb->added = ngx_list_push(l);
    if (nb->added == NULL) {
        return NGX_ERROR;
    }

    ngx_str_set(&nb->added->key, "anthropic-beta");
    nb->added->lowcase_key = (u_char *) "anthropic-beta";
    nb->added->hash = ngx_hash_key(nb->added->lowcase_key,
                                   nb->added->key.len);
    nb->added->value = nb->value;

    return NGX_OK;
}


/*
 * Drops element i of a part without moving any element, because other
 * request fields point into the list: the part is shortened, advanced or
 * split around it.  A part is never left empty but unlinked from prev:
 * readers of the list, the proxy module among them, take a part's first
 * slot without checking its count.  The last part is the one
 * ngx_list_push() fills: its capacity, l->nalloc, shrinks with it.
 */
static void
ngx_http_toolsearch_list_drop(ngx_list_t *l, ngx_list_part_t *prev,
    ngx_list_part_t *part, ngx_uint_t i, ngx_list_part_t *spare)
{
    if (part->nelts == 1 && prev != NULL) {
        prev->next = part->next;
        part->nelts = 0;

        /* prev is full: a push starts a new part (a first part that is
         * empty only ever lends a slot it dropped) */
        if (l->last == part) {
            l->last = prev;
            l->nalloc = prev->nelts ? prev->nelts : 1;
        }

        return;
    }

    if (i == part->nelts - 1) {
        part->nelts--;
        return;
    }

    if (l->last == part) {
        l->nalloc -= i + 1;
    }

    if (i == 0) {
        part->elts = (u_char *) part->elts + l->size;
        part->nelts--;
        return;
    }

    spare->elts = (u_char *) part->elts + (i + 1) * l->size;
    spare->nelts = part->nelts - i - 1;
    spare->next = part->next;

    part->nelts = i;
    part->next = spare;

    if (l->last == part) {
        l->last = spare;
    }
}


void
ngx_http_toolsearch_betas_commit(ngx_http_request_t *r,
    ngx_http_toolsearch_betas_t *nb)
{
    ngx_uint_t        i, first;
    ngx_list_t       *l;
    ngx_list_part_t  *part, *prev, *spare;
    ngx_table_elt_t  *h;

    if (nb->added) {
        return;
    }

    l = &r->headers_in.headers;
    spare = nb->parts;
    first = nb->value.len > 0;
    prev = NULL;

    for (part = &l->part; part; part = part->next) {
        h = part->elts;

        for (i = 0; i < part->nelts; /* void */) {
            if (!ngx_http_toolsearch_is_beta(&h[i])) {
                i++;
                continue;
            }

            if (first) {
                h[i].value = nb->value;
                first = 0;
                i++;
                continue;
            }

            /* what follows the dropped line is rescanned from i */
            ngx_http_toolsearch_list_drop(l, prev, part, i, spare++);
            h = part->elts;

            if (i == part->nelts) {
                break;
            }
        }

        /* an unlinked part is no part's predecessor */
        if (part->nelts > 0 || prev == NULL) {
            prev = part;
        }
    }
}


ngx_int_t
ngx_http_toolsearch_set_betas(ngx_http_request_t *r, const char *value,
    size_t len)
{
    ngx_http_toolsearch_betas_t  nh;

    if (ngx_http_toolsearch_betas_prepare(r, value, len, &nh) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_http_toolsearch_betas_commit(r, &nh);

    return NGX_OK;
}

