/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Engine unit tests: the harness, main() and the shared helpers.
 */

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tst.h"


static const tst_case_t  *tst_tables[] = {
    tst_strmap_tests,
    tst_recall_tests,
    tst_index_tests,
    tst_malformed_tests,
    tst_str_tests,
    tst_edit_tests,
    tst_request_tests,
    tst_policy_tests,
    tst_shape_tests,
    tst_undiscovered_tests,
    tst_cut_tests,
    tst_search_tests,
    tst_gateway_tests,
    tst_loop_tests,
    tst_chat_tests,
    tst_responses_tests,
    NULL
};


static unsigned  tst_fails;
static char      tst_first[1024];
static char      tst_ctx[512];


int
tst_check(int ok, const char *file, int line, const char *expr)
{
    if (ok) {
        return 1;
    }

    if (tst_fails++ == 0) {
        snprintf(tst_first, sizeof(tst_first), "%s:%d: %s%s%s", file, line,
                 expr, tst_ctx[0] ? " @ " : "", tst_ctx);
    }

    return 0;
}


void
tst_note(const char *fmt, ...)
{
    va_list  ap;

    va_start(ap, fmt);
    vsnprintf(tst_ctx, sizeof(tst_ctx), fmt, ap);
    va_end(ap);
}


static int
tst_run(const tst_case_t *t)
{
    tst_fails = 0;
    tst_ctx[0] = '\0';

    t->fn();

    if (tst_fails == 0) {
        return 1;
    }

    printf("FAIL %s: %s (%u failed checks)\n", t->name, tst_first,
           tst_fails);

    return 0;
}


int
main(void)
{
    const tst_case_t  **tab, *t;
    unsigned            passed, failed;

    passed = 0;
    failed = 0;

    for (tab = tst_tables; *tab; tab++) {
        for (t = *tab; t->name; t++) {
            if (tst_run(t)) {
                passed++;

            } else {
                failed++;
            }
        }
    }

    printf("%u passed, %u failed\n", passed, failed);

    return failed == 0 ? 0 : 1;
}


void *
tst_alloc(size_t n)
{
    void  *p;

    p = malloc(n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }

    return p;
}


char *
tst_dup(const void *p, size_t n)
{
    char  *d;

    d = tst_alloc(n);
    memcpy(d, p, n);

    return d;
}


char *
tst_quote(const char *s, size_t *len)
{
    char    *p;
    size_t   i;

    *len = strlen(s);
    p = tst_dup(s, *len + 1);

    for (i = 0; i < *len; i++) {
        if (p[i] == '\'') {
            p[i] = '"';
        }
    }

    return p;
}


void
tst_sb_add(tst_sb_t *sb, const void *s, size_t n)
{
    char    *p;
    size_t   cap;

    /* memcpy() takes no NULL, even for nothing */
    if (n == 0) {
        return;
    }

    if (sb->len + n > sb->cap) {
        cap = sb->cap ? sb->cap : 64;
        while (cap < sb->len + n) {
            cap *= 2;
        }

        p = realloc(sb->p, cap);
        if (p == NULL) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }

        sb->p = p;
        sb->cap = cap;
    }

    memcpy(sb->p + sb->len, s, n);
    sb->len += n;
}


void
tst_sb_str(tst_sb_t *sb, const char *s)
{
    tst_sb_add(sb, s, strlen(s));
}


void
tst_sb_rep(tst_sb_t *sb, const char *s, size_t times)
{
    while (times--) {
        tst_sb_str(sb, s);
    }
}


char *
tst_nested(const tst_nest_t *spec, size_t n, size_t *len)
{
    tst_sb_t  sb = { NULL, 0, 0 };

    tst_sb_str(&sb, spec->prefix);
    tst_sb_rep(&sb, spec->open, n);
    tst_sb_str(&sb, spec->mid);
    tst_sb_rep(&sb, spec->close, n);
    tst_sb_str(&sb, spec->suffix);

    *len = sb.len;
    return sb.p;
}


/* {"k0":0,"k1":1,...} with n members */
char *
tst_members(size_t n, size_t *len)
{
    tst_sb_t  sb = { NULL, 0, 0 };
    char      m[64];
    size_t    i;

    tst_sb_str(&sb, "{");

    for (i = 0; i < n; i++) {
        snprintf(m, sizeof(m), "%s\"k%zu\":%zu", i ? "," : "", i, i);
        tst_sb_str(&sb, m);
    }

    tst_sb_str(&sb, "}");

    *len = sb.len;
    return sb.p;
}


static char *
tst_read(const char *path, size_t *len)
{
    FILE    *f;
    char    *buf;
    long     n;

    f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }

    buf = NULL;

    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0
        && fseek(f, 0, SEEK_SET) == 0)
    {
        buf = tst_alloc((size_t) n);
        if (fread(buf, 1, (size_t) n, f) != (size_t) n) {
            free(buf);
            buf = NULL;
        }
        *len = (size_t) n;
    }

    fclose(f);
    return buf;
}


void
tst_doc_set(tst_doc_t *d, const char *body, size_t len)
{
    memset(d, 0, sizeof(tst_doc_t));

    d->name = "handwritten";
    d->buf = tst_dup(body, len);
    d->len = len;
    d->st = ts_index_build(&d->ix, d->buf, len);
    d->root = tst_json(d->buf, len);
}


int
tst_doc_load(tst_doc_t *d, const char *path)
{
    memset(d, 0, sizeof(tst_doc_t));

    d->name = path;
    d->buf = tst_read(path, &d->len);
    if (d->buf == NULL) {
        return -1;
    }

    d->st = ts_index_build(&d->ix, d->buf, d->len);
    d->root = tst_json(d->buf, d->len);

    return 0;
}


void
tst_doc_free(tst_doc_t *d)
{
    ts_index_free(&d->ix);
    cJSON_Delete(d->root);
    free(d->buf);
    memset(d, 0, sizeof(tst_doc_t));
}


ts_status_t
tst_status(const char *body, size_t len)
{
    ts_index_t   ix;
    ts_status_t  st;
    char        *buf;

    buf = tst_dup(body, len);
    st = ts_index_build(&ix, buf, len);
    ts_index_free(&ix);
    free(buf);

    return st;
}


static int
tst_fixture_name(const char *s)
{
    return strlen(s) == 8 && s[0] >= '0' && s[0] <= '9'
           && s[1] >= '0' && s[1] <= '9' && s[2] >= '0' && s[2] <= '9'
           && strcmp(s + 3, ".json") == 0;
}


static void
tst_list_add(char ***list, size_t *n, const char *dir, const char *file)
{
    char    **l;
    size_t    len;

    l = realloc(*list, (*n + 1) * sizeof(char *));
    if (l == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }

    len = strlen(dir) + strlen(file) + 2;
    l[*n] = tst_alloc(len);
    snprintf(l[*n], len, "%s/%s", dir, file);

    *list = l;
    (*n)++;
}


/* adds the NNN.json files of dir; not a directory adds nothing */
static void
tst_scan_run(char ***list, size_t *n, const char *dir)
{
    DIR            *d;
    struct dirent  *de;

    d = opendir(dir);
    if (d == NULL) {
        return;
    }

    while ((de = readdir(d)) != NULL) {
        if (tst_fixture_name(de->d_name)) {
            tst_list_add(list, n, dir, de->d_name);
        }
    }

    closedir(d);
}


static int
tst_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char * const *) a, *(char * const *) b);
}


size_t
tst_fixtures(char ***paths)
{
    DIR            *d;
    struct dirent  *de;
    char            dir[1024];
    size_t          n;

    *paths = NULL;
    n = 0;

    d = opendir(TST_CLAUDE);
    if (d == NULL) {
        return 0;
    }

    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] != '.') {
            snprintf(dir, sizeof(dir), "%s/%s", TST_CLAUDE, de->d_name);
            tst_scan_run(paths, &n, dir);
        }
    }

    closedir(d);

    qsort(*paths, n, sizeof(char *), tst_cmp_str);

    return n;
}


void
tst_free_list(char **list, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        free(list[i]);
    }

    free(list);
}


cJSON *
tst_json(const char *buf, size_t len)
{
    const char  *end;
    cJSON       *root;
    char        *s;

    s = tst_alloc(len + 1);
    memcpy(s, buf, len);
    s[len] = '\0';

    end = NULL;
    root = cJSON_ParseWithOpts(s, &end, 1);

    free(s);
    return root;
}


int
tst_span_is(const char *buf, const ts_val_t *v, const cJSON *node)
{
    cJSON  *j;
    int     eq;

    if (node == NULL || v->kind == TS_NONE) {
        return node == NULL && v->kind == TS_NONE;
    }

    j = tst_json(buf + v->off, v->len);
    eq = j != NULL && cJSON_Compare(j, node, 1);
    cJSON_Delete(j);

    return eq;
}


int
tst_member_is(const char *buf, size_t off, size_t len, const cJSON *node)
{
    tst_sb_t   sb = { NULL, 0, 0 };
    cJSON     *j;
    int        eq;

    tst_sb_str(&sb, "{");
    tst_sb_add(&sb, buf + off, len);
    tst_sb_str(&sb, "}");

    j = tst_json(sb.p, sb.len);
    eq = j != NULL && cJSON_GetArraySize(j) == 1
         && strcmp(j->child->string, node->string) == 0
         && cJSON_Compare(j->child, node, 1);

    cJSON_Delete(j);
    free(sb.p);

    return eq;
}


int
tst_str_is(const char *buf, const ts_val_t *v, const char *s)
{
    size_t   n;
    char    *out;
    int      eq;

    if (v->kind != TS_STRING || s == NULL) {
        return 0;
    }

    /* decoding never makes a string longer than its JSON form */
    out = tst_alloc(v->len);
    n = ts_str_decode(buf, v, out, v->len);
    eq = n == strlen(s) && memcmp(out, s, n) == 0 && ts_str_eq(buf, v, s);
    free(out);

    return eq;
}


const void *
tst_memmem(const void *hay, size_t hlen, const void *needle, size_t nlen)
{
    const char  *h;
    size_t       i;

    h = hay;

    for (i = 0; nlen <= hlen && i <= hlen - nlen; i++) {
        if (memcmp(h + i, needle, nlen) == 0) {
            return h + i;
        }
    }

    return NULL;
}
