/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The tool catalogue a search runs over: each tool's name, name parts,
 * description and configured hint, decoded and lowercased once per
 * request so that no query term ever costs more than a scan.
 */

#ifndef TS_CATALOG_H
#define TS_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#include "messages/ts_index.h"
#include "rewrite/ts_match.h"


/* a slice of the catalogue's text */
typedef struct {
    uint32_t    off;
    uint32_t    len;
} ts_span_t;


/*
 * A pooled tool's searchable text: its full name in the names region at
 * the start of the catalogue's text (the pool's names one after the
 * other, for the seed's substring search), then one run of words, hint
 * and description.  Each field is followed by a NUL, so no match or word
 * can span two fields.
 */
typedef struct {
    ts_span_t   name;       /* as the request spells it, in names */
    ts_span_t   full;       /* lowercase, "mcp__" removed */
    ts_span_t   words;      /* name parts, lowercase, space-separated */
    ts_span_t   hint;       /* the configured hint, lowercase */
    ts_span_t   desc;       /* description, lowercase */
    ts_span_t   schema;     /* input_schema as written, in schemas (the
                               request body): only BM25 reads it */
    uint32_t    part_first; /* into parts[] */
    uint32_t    nparts;
    uint32_t    desc_words;
    uint32_t    hint_words;
    uint32_t    schema_words;   /* its bytes */
    uint32_t    at;         /* its index in the request's tools: a tool
                               without a name (Responses' hosted tools)
                               has no entry, so the two may differ */
    unsigned    mcp:1;
    unsigned    pooled:1;   /* deferred: keyword search looks here */
} ts_entry_t;


/* operator-curated phrases: the first pattern matching a name wins */
typedef struct {
    const ts_match_list_t  *names;
    const char *const      *phrases;
} ts_hints_t;


typedef struct {
    char           *heap;       /* the memory below, when not lent */
    size_t          need;       /* its size, to lend next time */
    char           *text;       /* the pool's searchable text, followed
                                   by TS_CHUNK readable bytes */
    size_t          text_len;
    size_t          full_len;   /* text[0, full_len): the names region */
    const char     *schemas;    /* the request body, or NULL: the hybrid
                                   scorer reads input schemas in place */
    size_t          schemas_len;
    char           *names;      /* every tool's name */
    size_t          names_len;
    uint32_t       *pool;       /* entries of the pool, in text order */
    ts_span_t      *parts;
    size_t          nparts;
    ts_entry_t     *tools;
    size_t          ntools;
    size_t          npooled;
    double          avg_words;  /* over the pool: name parts, */
    double          avg_desc;   /* description words */
    double          avg_hint;   /* hint words */
    double          avg_schema; /* and schema bytes */
} ts_catalog_t;


/*
 * Prepares the tools of an indexed request; pool[i] marks the tools
 * keyword search covers (NULL: all of them).  Tools without a string
 * name are left out.  The input schemas, which only the hybrid scorer
 * reads and which are the bulk of a catalogue, are prepared with schemas
 * set.  -1 without memory, or past 4 GB of text.
 */
int ts_catalog_build(ts_catalog_t *c, const ts_index_t *ix,
    const unsigned char *pool, const ts_hints_t *hints, int schemas);

/*
 * The same in memory the caller lends (mem, size bytes, 8-byte aligned),
 * such as a buffer a worker reuses for every request, so that a request
 * touches no fresh pages.  When it is too small (or NULL) the catalogue
 * takes its memory from the heap in one piece; either way c->need tells
 * the size to lend next time.  The catalogue and the index must outlive
 * searches.
 */
int ts_catalog_build_in(ts_catalog_t *c, const ts_index_t *ix,
    const unsigned char *pool, const ts_hints_t *hints, int schemas,
    void *mem, size_t size);

void ts_catalog_free(ts_catalog_t *c);

static inline const char *
ts_catalog_str(const ts_catalog_t *c, ts_span_t s)
{
    return c->text + s.off;
}


static inline const char *
ts_catalog_name(const ts_catalog_t *c, const ts_entry_t *e)
{
    return c->names + e->name.off;
}

#endif /* TS_CATALOG_H */
