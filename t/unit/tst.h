/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * A small unit test harness for the engine, and the helpers the test
 * files share.  cJSON is the independent oracle.
 */

#ifndef TST_H
#define TST_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "messages/ts_index.h"
#include "rewrite/ts_edit.h"
#include "rewrite/ts_request.h"


#define TST_CLAUDE  TS_FIXTURES "/claude-code"
#define TST_BIG     TST_CLAUDE "/ts-unset/002.json"
#define TST_CHAT    TS_FIXTURES "/chat"


typedef struct {
    const char  *name;
    void       (*fn)(void);
} tst_case_t;


/* NULL-terminated test tables, one per test file */
extern const tst_case_t  tst_index_tests[];
extern const tst_case_t  tst_malformed_tests[];
extern const tst_case_t  tst_str_tests[];
extern const tst_case_t  tst_edit_tests[];
extern const tst_case_t  tst_request_tests[];
extern const tst_case_t  tst_policy_tests[];
extern const tst_case_t  tst_shape_tests[];
extern const tst_case_t  tst_undiscovered_tests[];
extern const tst_case_t  tst_cut_tests[];
extern const tst_case_t  tst_search_tests[];
extern const tst_case_t  tst_gateway_tests[];
extern const tst_case_t  tst_loop_tests[];
extern const tst_case_t  tst_strmap_tests[];
extern const tst_case_t  tst_recall_tests[];
extern const tst_case_t  tst_chat_tests[];
extern const tst_case_t  tst_responses_tests[];


/* a handwritten body and the index status it must get */
typedef struct {
    const char   *name;
    const char   *body;
    ts_status_t   st;
} tst_body_t;

/* every malformed class, NULL-terminated (test_malformed.c) */
extern const tst_body_t  tst_bad_bodies[];


/* records a failed check of the running test; returns ok */
int tst_check(int ok, const char *file, int line, const char *expr);

/* context printed with the next failure (printf format) */
void tst_note(const char *fmt, ...);

#define CHECK(cond)  tst_check((cond) != 0, __FILE__, __LINE__, #cond)


/* growable byte string; allocation failure aborts the run */
typedef struct {
    char    *p;
    size_t   len;
    size_t   cap;
} tst_sb_t;

void tst_sb_add(tst_sb_t *sb, const void *s, size_t n);
void tst_sb_str(tst_sb_t *sb, const char *s);
void tst_sb_rep(tst_sb_t *sb, const char *s, size_t times);


/* a request body in an exactly sized buffer, its index and cJSON tree */
typedef struct {
    const char  *name;      /* for failure notes */
    char        *buf;
    size_t       len;
    ts_index_t   ix;
    ts_status_t  st;
    cJSON       *root;      /* NULL when cJSON rejects the body */
} tst_doc_t;

int tst_doc_load(tst_doc_t *d, const char *path);
void tst_doc_set(tst_doc_t *d, const char *body, size_t len);
void tst_doc_free(tst_doc_t *d);

/* index status of a body (copied into an exactly sized buffer) */
ts_status_t tst_status(const char *body, size_t len);


void *tst_alloc(size_t n);
char *tst_dup(const void *p, size_t n);

/* a body written with ' for ", as a NUL-terminated copy with " */
char *tst_quote(const char *s, size_t *len);

/* paths of every NNN.json request fixture, sorted; caller frees */
size_t tst_fixtures(char ***paths);
void tst_free_list(char **list, size_t n);

/* the whole of buf[0, len) parsed by cJSON, or NULL */
cJSON *tst_json(const char *buf, size_t len);

/* the span of v parses to a value equal to node (both absent: equal) */
int tst_span_is(const char *buf, const ts_val_t *v, const cJSON *node);

/* a "key": value span is exactly the member node */
int tst_member_is(const char *buf, size_t off, size_t len,
    const cJSON *node);

/* the string value v decodes to exactly s */
int tst_str_is(const char *buf, const ts_val_t *v, const char *s);

/* the first s in len bytes at p, or NULL */
char *tst_find(const char *p, size_t len, const char *s);

/*
 * How many tools a scan of buf in mem recalled; -1 when its index
 * differs from the byte scan's (test_strmap.c).
 */
long tst_recalled(ts_index_mem_t *mem, const char *buf, size_t len);

/* two indexes of one body are the same, member for member */
int tst_index_eq(const ts_index_t *a, const ts_index_t *b);

const void *tst_memmem(const void *hay, size_t hlen, const void *needle,
    size_t nlen);


/* prefix, open * n, mid, close * n, suffix */
typedef struct {
    const char  *prefix;
    const char  *open;
    const char  *mid;
    const char  *close;
    const char  *suffix;
} tst_nest_t;

/* body generators; caller frees */
char *tst_nested(const tst_nest_t *spec, size_t n, size_t *len);
char *tst_members(size_t n, size_t *len);

#endif /* TST_H */
