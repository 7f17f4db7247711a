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
#include "scan/ts_json.h"


/* an event stream's blocks tracked by index; later ones are kept */
#define TS_CUT_BLOCKS_MAX  256

/*
 * An event is held until it is complete, a JSON answer's content item
 * until its type says whether it goes (its first bytes as a rule, the
 * whole item for a search block), the separators between items until
 * the next kept item or the array's end.  Past TS_CUT_EVENT_MAX, the
 * held bytes and the rest of the answer go on as they are; past
 * TS_CUT_ITEM_MAX, the item is kept (and the separators: what is held
 * and the rest go on).
 */
#define TS_CUT_EVENT_MAX   (4 * 1024 * 1024)
#define TS_CUT_ITEM_MAX    (1024 * 1024)
#define TS_CUT_KEY_MAX     256


/* a JSON answer read as it comes: where the reading is */
typedef struct {
    int             state;      /* TS_J_* in ts_cut.c */
    int             mode;       /* an item's bytes: held or passed */
    int             prev;       /* the last item: none, kept, dropped */
    long            depth;      /* the message's nesting, or the item's */
    unsigned        str:1;      /* in a string */
    unsigned        esc:1;      /* ... after a backslash */
    unsigned        key:1;      /* a string here is a member's name */
    unsigned        scalar:1;   /* the item is a number or a literal */
    unsigned        content:1;  /* the message's content member came */
    unsigned        want:1;     /* its value comes next */
    unsigned        ntype:1;    /* an item's type member came */
    unsigned        nname:1;    /* ... its name member */
    int             field;      /* the value coming: of type, of name */
    int             tok;        /* a key or value being read */
    ts_val_t        tokv;       /* ... where it is */
    ts_val_t        type;       /* an item's first type and name */
    ts_val_t        name;
    ts_buf_t        gap;        /* separators held */
    size_t          keep;       /* ... those a kept item takes */
    ts_buf_t        keyb;       /* a member name of the message */
} ts_cut_json_t;


typedef struct {
    int             sse;
    const char     *tool;       /* the gateway's search tool, or NULL */
    ts_buf_t        in;         /* an incomplete event, a held item */
    size_t          seen;
    unsigned char   drop[TS_CUT_BLOCKS_MAX];     /* by upstream index */
    long            dropped;    /* blocks removed so far */
    int             through;    /* past a cap: the rest as it comes */
    ts_cut_json_t   j;
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

/*
 * The cut of a whole JSON message, in one piece: what the streaming cut
 * gives for every complete, well-formed answer (the tests compare them);
 * anything it cannot read goes on as it came.
 */
int ts_cut_whole(const char *tool, const char *p, size_t n, ts_buf_t *out,
    long *removed);

#endif /* TS_CUT_H */
