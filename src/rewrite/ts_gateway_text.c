/*
 * Copyright (C) ngx_http_toolsearch_module authors
 *
 * Gateway-executed search: its texts, the same in every format.  The
 * search tool's description and fields, a search's result (what it found,
 * what exists, the MCP servers), select: queries, tool_reference blocks,
 * the announcement of what the search can load.
 */

#include <stdlib.h>
#include <string.h>

#include "rewrite/ts_defer.h"
#include "rewrite/ts_facts.h"
#include "rewrite/ts_gateway.h"
#include "rewrite/ts_wrapper.h"
#include "messages/ts_history.h"
#include "scan/ts_str.h"


static const char  ts_search_description[] =
    "Searches the tools that are not loaded yet (the system prompt lists "
    "their names) and loads the matches so that they can be called. Call "
    "it before calling a tool that is not in your tool list. Query forms: "
    "\\\"select:name1,name2\\\" loads tools by exact name; keywords such "
    "as \\\"slack send message\\\" rank tools by name and description; a "
    "keyword with a leading + is required (\\\"+github issue\\\"); a query "
    "starting with mcp__ lists the tools with that prefix. Loaded tools "
    "stay available for the rest of the conversation.";


static void
ts_name_list(ts_buf_t *b, const ts_name_t *names, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        if (i) {
            ts_buf_str(b, ", ");
        }

        ts_buf_escaped(b, names[i].p, names[i].len);
    }
}


int
ts_gateway_refs(const ts_index_t *ix, int mode, int upstream,
    const ts_policy_t *p)
{
    /* Vertex and Bedrock are not known to expand a client's references */
    return p->search != TS_SEARCH_HOSTED
           && (upstream == TS_UPSTREAM_ANTHROPIC
               || upstream == TS_UPSTREAM_COMPATIBLE)
           && ts_defer_artifacts_allowed(ix, mode, upstream, p);
}


void
ts_gateway_references(ts_buf_t *b, const ts_name_t *names, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        ts_buf_str(b, i ? ",{" : "{");
        ts_buf_str(b, "\"type\":\"tool_reference\",\"tool_name\":\"");
        ts_buf_escaped(b, names[i].p, names[i].len);
        ts_buf_str(b, "\"}");
    }
}


/* the length of the server of an MCP tool name, or 0 */
static size_t
ts_mcp_server(const ts_name_t *name)
{
    const char  *sep;

    if (!ts_name_is_mcp(name->p, name->len)) {
        return 0;
    }

    sep = ts_find(name->p + 5, name->len - 5, "__", 2);

    return sep ? (size_t) (sep - name->p) - 5 : 0;
}


/* the tools of the server of names[i], which are next to it: sorted */
static size_t
ts_server_tools(const ts_names_t *names, size_t i, size_t len)
{
    const ts_name_t  *a, *b;
    size_t            j;

    a = &names->items[i];

    for (j = i + 1; j < names->n; j++) {
        b = &names->items[j];

        if (ts_mcp_server(b) != len || memcmp(a->p, b->p, len + 5) != 0) {
            break;
        }
    }

    return j - i;
}


int
ts_gateway_servers(ts_buf_t *b, const ts_index_t *ix)
{
    ts_names_t  names;
    size_t      i, len, k, servers;

    ts_names_init(&names);

    for (i = 0; i < ix->ntools; i++) {
        if (ix->tools[i].name.kind == TS_STRING
            && ts_names_add(&names, ix->buf, &ix->tools[i].name) != 0)
        {
            ts_names_free(&names);
            return -1;
        }
    }

    ts_names_sort(&names);

    for (i = 0, servers = 0; i < names.n; i += k) {
        len = ts_mcp_server(&names.items[i]);
        k = len ? ts_server_tools(&names, i, len) : 1;

        if (len == 0 || servers++ >= TS_GATEWAY_SERVERS_MAX) {
            continue;
        }

        if (servers > 1) {
            ts_buf_str(b, ", ");
        }

        ts_buf_escaped(b, names.items[i].p + 5, len);
        ts_buf_str(b, " (");
        ts_buf_num(b, k);
        ts_buf_str(b, k == 1 ? " tool)" : " tools)");
    }

    if (servers > TS_GATEWAY_SERVERS_MAX) {
        ts_buf_str(b, ", and ");
        ts_buf_num(b, servers - TS_GATEWAY_SERVERS_MAX);
        ts_buf_str(b, " more servers");
    }

    ts_names_free(&names);

    return b->failed ? -1 : 0;
}


int
ts_gateway_result(ts_buf_t *b, const char *id, size_t id_len,
    const ts_name_t *names, size_t n, int ran, int refs,
    const ts_buf_t *servers, const ts_index_t *defs)
{
    ts_buf_str(b, "{\"type\":\"tool_result\",\"tool_use_id\":");
    ts_buf_add(b, id, id_len);

    if (refs && ran && n > 0) {
        /* Claude Code's shape: the references alone */
        ts_buf_str(b, ",\"content\":[");
        ts_gateway_references(b, names, n);
        ts_buf_str(b, "]}");

        return b->failed ? -1 : 0;
    }

    ts_buf_str(b, ",\"content\":\"");
    ts_gateway_found_text(b, names, n, ran, servers, defs);
    ts_buf_str(b, "\"}");

    return b->failed ? -1 : 0;
}


void
ts_gateway_select(ts_buf_t *b, const ts_name_t *names, size_t n)
{
    size_t  i;

    ts_buf_str(b, "select:");

    for (i = 0; i < n; i++) {
        ts_buf_str(b, i ? "," : "");
        ts_buf_add(b, names[i].p, names[i].len);
    }
}


void
ts_gateway_found_text(ts_buf_t *b, const ts_name_t *names, size_t n,
    int ran, const ts_buf_t *servers, const ts_index_t *defs)
{
    if (defs != NULL && ran && n > 0) {
        ts_wrapper_found_text(b, defs, names, n);

    } else {
        ts_gateway_result_text(b, names, n, ran, servers);
    }
}


void
ts_gateway_result_text(ts_buf_t *b, const ts_name_t *names, size_t n,
    int ran, const ts_buf_t *servers)
{
    if (!ran) {
        ts_buf_str(b, "This search did not run. Search again.");

    } else if (n == 0 && servers->len > 0) {
        ts_buf_str(b, "No tool matched. The tools come from these MCP "
                      "servers: ");
        ts_buf_add(b, servers->p, servers->len);
        ts_buf_str(b, ". Search again with a server's name and what the "
                      "tool does, or select: a name from the list in the "
                      "system prompt.");

    } else if (n == 0) {
        ts_buf_str(b, "No tool matched. Try other keywords, or select: a "
                      "name from the list in the system prompt.");

    } else {
        ts_buf_str(b, "Loaded: ");
        ts_name_list(b, names, n);
        ts_buf_str(b, ". Their definitions are in your tool list now; call "
                      "them directly.");
    }
}


void
ts_gateway_search_fields(ts_buf_t *b, const ts_policy_t *p,
    const char *schema)
{
    ts_buf_str(b, "\"name\":\"");
    ts_buf_str(b, p->search_tool);
    ts_buf_str(b, "\",\"description\":\"");
    ts_buf_str(b, ts_search_description);
    ts_buf_str(b, "\",\"");
    ts_buf_str(b, schema);
    ts_buf_str(b, "\":{\"type\":\"object\",\"properties\":"
                  "{\"query\":{\"type\":\"string\",\"description\":"
                  "\"select:name1,name2, or keywords\"},"
                  "\"max_results\":{\"type\":\"integer\",\"minimum\":1,"
                  "\"maximum\":");
    ts_buf_num(b, p->max_results);
    ts_buf_str(b, ",\"description\":\"how many tools to load (default 5)\"}},"
                  "\"required\":[\"query\"]}");
}


/*
 * What the search tool can load: the deferrable tools, found or not,
 * sorted, so that the text is the same on every turn of a conversation
 * whatever its searches found (it follows the client's cache
 * breakpoints in the system prompt).  A summary that names the tools
 * found keeps them loaded after a compaction (ts_history_named).
 */
int
ts_gateway_announcement(const ts_index_t *ix,
    const unsigned char *deferrable, const ts_policy_t *p, ts_buf_t *b)
{
    ts_names_t  names;
    size_t      i, shown;

    ts_names_init(&names);

    for (i = 0; i < ix->ntools; i++) {
        if (deferrable[i] && ts_names_add(&names, ix->buf,
                                              &ix->tools[i].name) != 0)
        {
            ts_names_free(&names);
            return -1;
        }
    }

    ts_names_sort(&names);
    ts_buf_reset(b);
    ts_buf_str(b, "Call ");
    ts_buf_str(b, p->search_tool);
    ts_buf_str(b, " (select:<name> or keywords) to load one of these tools "
                  "before you call it, unless it is in your tool list "
                  "already; name the tools you loaded in any summary of "
                  "this conversation: ");

    for (shown = 0; shown < names.n; shown++) {
        if (b->len + names.items[shown].len > TS_GATEWAY_ANNOUNCE_MAX) {
            break;
        }

        ts_name_list(b, &names.items[shown], 1);

        if (shown + 1 < names.n) {
            ts_buf_str(b, ", ");
        }
    }

    if (shown < names.n) {
        ts_buf_str(b, "and ");
        ts_buf_num(b, names.n - shown);
        ts_buf_str(b, " more");
    }

    ts_buf_str(b, ".");
    ts_names_free(&names);

    return b->failed ? -1 : 0;
}
