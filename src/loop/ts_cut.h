/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Answers without tool-search blocks, for clients that cannot take them
 * (continue's CLI fails on a server_tool_use's input_json_delta, the
 * Vercel AI SDK on a search result for a call it does not know): the
 * server_tool_use blocks of a search tool and the tool_search_tool_result
 * blocks leave an answer, an event stream or one JSON message, the
 * blocks after them renumbered; everything else, usage included, goes on
 * byte for byte.  The model's calls stay, so the tools it called count as
 * discovered on the client's next turn.
 *
 * The caller moves the bytes: init when the answer's headers say what it
 * is (Content-Type text/event-stream: sse), feed each piece as it comes,
 * end at the last; the answer's length changes, so no Content-Length.
 * For the hosted path, tool NULL on a deferred_hosted answer; for the
 * gateway's own searches, the search tool's name on what the loop gives
 * the client.
 */

#ifndef TS_CUT_H
#define TS_CUT_H

#include "scan/ts_buf.h"


/* an event stream's blocks tracked by index; later ones are kept */
#define TS_CUT_BLOCKS_MAX  256

/*
 * A JSON answer is held whole for the cut, an event until it is complete;
 * past these, the held bytes and the rest of the answer go on as they are
 */
#define TS_CUT_JSON_MAX    (16 * 1024 * 1024)
#define TS_CUT_EVENT_MAX   (4 * 1024 * 1024)


typedef struct {
    int             sse;
    const char     *tool;       /* the gateway's search tool, or NULL */
    ts_buf_t        in;         /* an incomplete event, the JSON answer */
    size_t          seen;
    unsigned char   drop[TS_CUT_BLOCKS_MAX];     /* by upstream index */
    long            dropped;    /* blocks removed so far */
    int             through;    /* past a cap: the rest as it comes */
} ts_cut_t;


/* sse: an event stream, else one JSON message */
void ts_cut_init(ts_cut_t *a, const char *tool, int sse);
void ts_cut_free(ts_cut_t *a);

/* bytes of the answer; what the client gets now is appended to out */
int ts_cut_feed(ts_cut_t *a, const char *p, size_t n, ts_buf_t *out);

/* the answer ended: the rest for the client in out */
int ts_cut_end(ts_cut_t *a, ts_buf_t *out);

/* the tool-search blocks removed */
long ts_cut_removed(const ts_cut_t *a);

#endif /* TS_CUT_H */
