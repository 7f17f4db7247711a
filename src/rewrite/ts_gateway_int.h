/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Gateway-executed search, request side: the helpers one of its files
 * defines for another.  Not for the other files: ts_gateway.h is its
 * interface.
 */

#ifndef TS_GATEWAY_INT_H
#define TS_GATEWAY_INT_H

#include "scan/ts_buf.h"
#include "scan/ts_scan.h"


/* ts_gateway_history.c */

void ts_gateway_raw(ts_buf_t *b, const char *buf, const ts_val_t *v);

#endif /* TS_GATEWAY_INT_H */
