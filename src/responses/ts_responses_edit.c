/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Responses, request side: gateway search's edits in this format's
 * shapes.  tools[] with the search function (a namespace's loaded members
 * kept in their namespace), the announcement in instructions, the input's
 * tail, a resumed exchange; one call an answer for a stored response.
 */

#include <stdlib.h>
#include <string.h>

#include "scan/ts_scan.h"
#include "scan/ts_str.h"
#include "rewrite/ts_defer.h"
#include "rewrite/ts_facts.h"
#include "rewrite/ts_format.h"
#include "rewrite/ts_gateway.h"
#include "rewrite/ts_wrapper.h"
#include "responses/ts_responses.h"
#include "responses/ts_responses_int.h"


static const char  ts_rs_one_call[] = "\"parallel_tool_calls\":false,";
static const char  ts_rs_no_call[] = "\"tool_choice\":\"none\",";


/* where a tool of the index goes in gateway search's tools[] */
typedef enum {
    TS_RS_GONE = 0,     /* deferred */
    TS_RS_STAYS,        /* loaded, in its place */
    TS_RS_LATER         /* deferrable and loaded: after the search tool */
} ts_rs_place_t;


static ts_rs_place_t
ts_rs_place(const ts_request_t *rq, size_t i)
{
    if (rq->loaded[i] && (rq->deferrable[i] & TS_FACT_DEFERRABLE)) {
        return TS_RS_LATER;
    }

    return rq->defer[i] ? TS_RS_GONE : TS_RS_STAYS;
}


void
ts_rs_namespace_write(ts_buf_t *b, const ts_index_t *ix,
    const ts_val_t *elem, size_t k, size_t m, ts_rs_keep_pt keep,
    const void *arg)
{
    const ts_tool_t  *t;
    const char       *buf;
    size_t            j, open, close, sep;

    buf = ix->buf;
    t = &ix->tools[k];

    for (j = 0; j < m && keep(arg, k + j); j++) {
        /* void */
    }

    if (j == m) {
        ts_buf_add(b, buf + elem->off, elem->len);
        return;
    }

    /* from the namespace's start to its first member, from its last on */
    open = t[0].elem.off;
    close = t[m - 1].elem.off + t[m - 1].elem.len;
    ts_buf_add(b, buf + elem->off, open - elem->off);
    sep = 0;

    for (j = 0; j < m; j++) {
        if (keep(arg, k + j)) {
            ts_buf_str(b, sep++ ? "," : "");
            ts_buf_add(b, buf + t[j].elem.off, t[j].elem.len);
        }
    }

    ts_buf_add(b, buf + close, elem->off + elem->len - close);
}


/* a member that gateway search's tools[] keeps: one not deferred */
static int
ts_rs_kept(const void *rq, size_t i)
{
    return ts_rs_place(rq, i) != TS_RS_GONE;
}


/* an element of the client's tools[] and the index's tools in it */
typedef struct {
    ts_val_t    elem;
    size_t      first;
    size_t      n;          /* a namespace's members, or 1 */
    unsigned    group:1;    /* a namespace */
    unsigned    now:1;      /* written in place */
    unsigned    later:1;    /* written after the search function */
    uint32_t    rank;       /* of history's first call of its tools */
} ts_rs_elem_t;


/*
 * Where an element goes, from the index's tools from *k that lie in it
 * (a namespace's members, or itself): a tool that stays, in place; one
 * loaded on demand, after the search function.  A namespace stays in
 * place with the members that stay and those loaded; with no member
 * staying, it comes after the search function with the members loaded,
 * so that the calls of those members carry its name; with none, it is
 * left out.  An empty namespace stays.
 */
static void
ts_rs_element(const ts_request_t *rq, const ts_val_t *elem, size_t *k,
    ts_rs_elem_t *e)
{
    const ts_index_t  *ix;
    size_t             j;
    uint32_t           c;
    unsigned           seen[3];
    ts_rs_place_t      at;

    ix = &rq->ix;
    memset(e, 0, sizeof(ts_rs_elem_t));
    e->elem = *elem;
    e->first = *k;

    while (*k < ix->ntools
           && ix->tools[*k].elem.off < elem->off + elem->len)
    {
        (*k)++;
    }

    e->n = *k - e->first;
    e->group = e->n != 1 || ix->tools[e->first].elem.off != elem->off;
    memset(seen, 0, sizeof(seen));

    for (j = 0; j < e->n; j++) {
        at = ts_rs_place(rq, e->first + j);
        seen[at] = 1;
        c = rq->called ? rq->called[e->first + j] : 0;

        /* the first of its tools that history calls ranks it */
        if (at == TS_RS_LATER && c && (e->rank == 0 || c < e->rank)) {
            e->rank = c;
        }
    }

    e->now = e->n == 0 || seen[TS_RS_STAYS];
    e->later = !e->now && seen[TS_RS_LATER];
}


/* an element as it goes: whole, or a namespace with what it keeps */
static void
ts_rs_element_write(ts_buf_t *b, const ts_request_t *rq,
    const ts_rs_elem_t *e)
{
    if (e->group) {
        ts_rs_namespace_write(b, &rq->ix, &e->elem, e->first, e->n,
                              ts_rs_kept, rq);

    } else {
        ts_buf_add(b, rq->ix.buf + e->elem.off, e->elem.len);
    }
}


/*
 * Gateway search's tools[] with namespaces: the elements that stay, in
 * place; the search function; the elements loaded on demand, as the
 * other OpenAI dialect orders found tools (ts_gateway_openai_tools):
 * those history calls in the order of their first calls, then the others
 * in the client's order, so that a later discovery follows the earlier
 * ones.  A namespace's found members go in it, in the client's order.
 */
static int
ts_rs_tools_grouped(ts_request_t *rq, const ts_policy_t *p, ts_buf_t *b)
{
    const ts_val_t  *items;
    ts_rs_elem_t    *el;
    uint32_t         rank;
    size_t           i, k, n;

    /* the array's elements, read with its tools (ts_rs_qualify) */
    items = rq->tool_elems;
    n = rq->ntool_elems;
    el = malloc((n ? n : 1) * sizeof(ts_rs_elem_t));

    if (el == NULL) {
        return -1;
    }

    ts_buf_reset(b);
    ts_buf_str(b, "[");

    for (i = 0, k = 0; i < n; i++) {
        ts_rs_element(rq, &items[i], &k, &el[i]);

        if (el[i].now) {
            ts_rs_element_write(b, rq, &el[i]);
            ts_buf_str(b, ",");
        }
    }

    ts_buf_str(b, "{\"type\":\"function\",");
    ts_gateway_search_fields(b, p, "parameters");
    ts_buf_str(b, "}");

    /* rank 0 last: the elements history does not call */
    for (rank = 1; rank <= rq->ncalled + 1; rank++) {
        for (i = 0; i < n; i++) {
            if (el[i].later
                && el[i].rank == (rank <= rq->ncalled ? rank : 0))
            {
                ts_buf_str(b, ",");
                ts_rs_element_write(b, rq, &el[i]);
            }
        }
    }

    ts_buf_str(b, "]");
    free(el);

    return b->failed ? -1 : 0;
}


/*
 * Gateway search's tools[]: without namespaces (ts_rs_qualify), the
 * other OpenAI dialect's
 */
static int
ts_rs_tools_edit(ts_request_t *rq, const ts_policy_t *p, ts_buf_t *b)
{
    if (rq->qualified != NULL) {
        return ts_rs_tools_grouped(rq, p, b);
    }

    return ts_gateway_openai_tools(rq, p, "{\"type\":\"function\",", "}",
                                   b);
}


/*
 * The announcement ends the instructions, as a paragraph of their
 * string; without them, an instructions member opens the body.
 */
static int
ts_rs_instructions(ts_request_t *rq, const ts_buf_t *text, ts_buf_t *b)
{
    const ts_val_t  *ins, *top;

    ins = ts_rs_member(&rq->ix, TS_RS_INSTRUCTIONS);
    top = &rq->ix.members[TS_RS_KEYS].val;
    ts_buf_reset(b);

    if (ins->kind == TS_STRING) {
        ts_buf_str(b, "\\n\\n");
        ts_buf_add(b, text->p, text->len);

        return b->failed ? -1
               : ts_edit_replace(&rq->edits, ins->off + ins->len - 1, 0,
                                 b->p, b->len);
    }

    ts_buf_str(b, "\"instructions\":\"");
    ts_buf_add(b, text->p, text->len);
    ts_buf_str(b, "\"");

    if (ins->kind == TS_NULL) {
        return b->failed ? -1
               : ts_edit_replace(&rq->edits, ins->off, ins->len,
                                 b->p + sizeof("\"instructions\":") - 1,
                                 b->len - sizeof("\"instructions\":") + 1);
    }

    /* the body has an input: the object is not empty */
    ts_buf_str(b, ",");

    return b->failed ? -1
           : ts_edit_replace(&rq->edits, top->off + 1, 0, b->p, b->len);
}


/*
 * The input replaced by an array of the loop's items (the tail), after
 * the user message a string input stands for (own)
 */
static int
ts_rs_input_tail(ts_request_t *rq, const ts_input_t *in, int own)
{
    const ts_val_t  *input;
    ts_buf_t         b;
    int              rc;

    input = ts_rs_member(&rq->ix, TS_RS_INPUT);

    ts_buf_init(&b, 0);
    ts_buf_str(&b, "[");

    if (own) {
        ts_buf_str(&b, "{\"role\":\"user\",\"content\":");
        ts_buf_add(&b, rq->ix.buf + input->off, input->len);
        ts_buf_str(&b, "},");
    }

    ts_buf_add(&b, in->tail, in->tail_len);
    ts_buf_str(&b, "]");

    rc = b.failed ? -1
         : ts_edit_replace(&rq->edits, input->off, input->len, b.p, b.len);
    ts_buf_free(&b);

    return rc;
}


/*
 * The items of the loop's searches go after the input (the shared tail,
 * for an array); a string input becomes the user message it stands for,
 * followed by them.
 */
static int
ts_rs_string_tail(ts_request_t *rq, const ts_input_t *in)
{
    if (in->tail_len == 0
        || ts_rs_member(&rq->ix, TS_RS_INPUT)->kind != TS_STRING)
    {
        return 0;
    }

    return ts_rs_input_tail(rq, in, 1);
}


/*
 * A continuation of a stored exchange goes on from the response the
 * upstream kept of the last call (previous_response_id, in place of the
 * client's or first in the body), and its input is only what the
 * searches answered (the tail): the rest the upstream holds already.  In
 * a conversation it goes on in it: the conversation has every call's
 * items, and previous_response_id cannot come with it.
 */
static int
ts_rs_resume(ts_request_t *rq, const ts_input_t *in)
{
    const ts_val_t  *prev, *top, *conv;
    ts_buf_t         b;
    int              rc;

    prev = ts_rs_member(&rq->ix, TS_RS_PREVIOUS);
    conv = ts_rs_member(&rq->ix, TS_RS_CONVERSATION);
    top = &rq->ix.members[TS_RS_KEYS].val;

    rc = ts_rs_input_tail(rq, in, 0);

    if (conv->kind != TS_NONE && conv->kind != TS_NULL) {
        return rc;
    }

    ts_buf_init(&b, 0);
    ts_buf_str(&b, "\"previous_response_id\":\"");
    ts_buf_escaped(&b, in->resume, strlen(in->resume));
    ts_buf_str(&b, "\",");

    if (rc == 0 && !b.failed) {
        rc = prev->kind != TS_NONE
             ? ts_edit_replace(&rq->edits, prev->off, prev->len,
                               b.p + sizeof("\"previous_response_id\":") - 1,
                               b.len - sizeof("\"previous_response_id\":"))
             : ts_edit_replace(&rq->edits, top->off + 1, 0, b.p, b.len);
    }

    rc = b.failed ? -1 : rc;
    ts_buf_free(&b);

    return rc;
}


/*
 * The last call of a stored exchange whose model searched on past the
 * budget: "tool_choice": "none" (in place of the client's, or first in
 * the body), so that the response the client goes on from ends in text
 */
static int
ts_rs_text_only(ts_request_t *rq)
{
    const ts_val_t  *choice;
    size_t           n;

    choice = ts_rs_member(&rq->ix, TS_RS_TOOL_CHOICE);
    n = sizeof("\"tool_choice\":") - 1;

    if (choice->kind != TS_NONE) {
        return ts_edit_replace(&rq->edits, choice->off, choice->len,
                               ts_rs_no_call + n,
                               sizeof(ts_rs_no_call) - 2 - n);
    }

    return ts_edit_replace(&rq->edits, rq->ix.members[TS_RS_KEYS].val.off + 1,
                           0, ts_rs_no_call, sizeof(ts_rs_no_call) - 1);
}


int
ts_rs_apply_gateway(ts_request_t *rq, const ts_input_t *in)
{
    static const ts_gateway_form_t  form = {
        ts_rs_tools_edit, ts_rs_instructions
    };

    ts_input_t  gin;

    /*
     * A stored answer must not hold the search call beside one of the
     * client's: the client goes on from it, and the search's would stay
     * unanswered there.  One call an answer, the same on every call.
     */
    if (ts_responses_stored(rq)
        && ts_rs_member(&rq->ix, TS_RS_PARALLEL)->kind == TS_NONE
        && ts_edit_replace(&rq->edits, rq->ix.members[TS_RS_KEYS].val.off + 1,
                           0, ts_rs_one_call, sizeof(ts_rs_one_call) - 1)
           != 0)
    {
        return -1;
    }

    if (in->text_only && ts_rs_text_only(rq) != 0) {
        return -1;
    }

    if (in->resume == NULL || in->tail_len == 0) {
        return ts_gateway_apply_as(rq, in, &form) == 0
               && ts_rs_string_tail(rq, in) == 0 ? 0 : -1;
    }

    /* the input is the tail alone: nothing goes after the client's */
    gin = *in;
    gin.tail_len = 0;

    return ts_gateway_apply_as(rq, &gin, &form) == 0
           && ts_rs_resume(rq, in) == 0 ? 0 : -1;
}
