/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * The getter a tool needs before it can be called: a pooled tool named
 * get_<what> (in the same MCP server or API) whose <what> a required
 * parameter of the tool names, such as get_zipcode_based_on_city for
 * estimate_distance(cityA: "The zipcode of the first city").  Read from
 * the catalogue alone: names and input schemas.
 */
#ifndef TS_PREREQ_H
#define TS_PREREQ_H


#include <stddef.h>
#include <stdint.h>

#include "search/ts_catalog.h"


/*
 * Marks in out[] (c->ntools bytes, cleared by the caller) the pooled
 * tools that are getters of a required parameter of tool; returns how
 * many.  0 without input schemas or when the schema is not one object.
 */
size_t ts_prereq_getters(const ts_catalog_t *c, uint32_t tool,
    unsigned char *out);


#endif /* TS_PREREQ_H */
