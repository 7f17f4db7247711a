"""nginx -t rejects every bad value of the module's directives with a
message that says what is wrong and what is allowed."""

import pytest

from gateway import Gateway

CASES = [
    # deferral mode: N from 1 to 99 (0 and 100 are "on" and "off")
    ("", "toolsearch_defer auto:101;",
     'invalid value "auto:101" in "toolsearch_defer" directive, it must be '
     '"off", "on", "auto" or "auto:N" with N from 1 to 99'),
    ("", "toolsearch_defer auto:100;",
     'invalid value "auto:100" in "toolsearch_defer" directive'),
    ("", "toolsearch_defer auto:;",
     'invalid value "auto:" in "toolsearch_defer" directive'),
    ("", "toolsearch_defer auto:1000;", 'invalid value "auto:1000"'),
    ("", "toolsearch_defer auto:-1;", 'invalid value "auto:-1"'),
    ("", "toolsearch_defer Auto;", 'invalid value "Auto"'),
    # profiles and hosted tools
    ("", "toolsearch_upstream azure;",
     'invalid value "azure" in "toolsearch_upstream" directive, it must be '
     '"auto", "anthropic", "vertex", "bedrock", "compatible" or "openai"'),
    ("", "toolsearch_hosted_search fuzzy;",
     'invalid value "fuzzy" in "toolsearch_hosted_search" directive, it '
     'must be "bm25" or "regex"'),
    ("", "toolsearch_search local;",
     'invalid value "local" in "toolsearch_search" directive, it must be '
     '"auto", "hosted" or "gateway"'),
    ("", "toolsearch_search_blocks hide;",
     'invalid value "hide" in "toolsearch_search_blocks" directive, it must '
     'be "keep" or "strip"'),
    # BM25 alone is the search evaluation's baseline, not a choice
    ("", "toolsearch_search_scoring bm25;",
     'invalid value "bm25" in "toolsearch_search_scoring" directive, it '
     'must be "seed" or "hybrid"'),
    ("", "toolsearch maybe;",
     'invalid value "maybe" in "toolsearch" directive, it must be "on" or '
     '"off"'),
    # regexes: PCRE2's message and offset
    ("", "toolsearch_defer_tools '~(unclosed';",
     'invalid value "~(unclosed" in "toolsearch_defer_tools" directive, '
     'missing closing parenthesis at offset 9'),
    ("", "toolsearch_always_load Read '~a[';",
     'invalid value "~a[" in "toolsearch_always_load" directive, missing '
     'terminating ] for character class at offset 2'),
    ("", "toolsearch_unsupported_models '~*x';",
     'invalid value "~*x" in "toolsearch_unsupported_models" directive, '
     'quantifier does not follow a repeatable item at offset 0'),
    ("", "toolsearch_context_window '~(x' 1000;",
     'invalid value "~(x" in "toolsearch_context_window" directive, '
     'missing closing parenthesis at offset 2'),
    # lists need a value
    ("", "toolsearch_unsupported_models;",
     'no value in "toolsearch_unsupported_models" directive, it takes one '
     'or more names or ~regexes'),
    ("", "toolsearch_defer_tools;",
     'no value in "toolsearch_defer_tools" directive'),
    # numbers, names and sizes
    ("", "toolsearch_context_window ~opus 0;",
     'invalid value "0" in "toolsearch_context_window" directive, it must '
     'be a positive number of tokens'),
    ("", "toolsearch_context_window ~opus many;",
     'invalid value "many" in "toolsearch_context_window" directive'),
    ("", "toolsearch_max_searches 50;",
     'invalid value "50" in "toolsearch_max_searches" directive, it must be '
     'a number from 1 to 20'),
    ("", "toolsearch_max_searches x;",
     'invalid value "x" in "toolsearch_max_searches" directive'),
    ("", "toolsearch_max_results 0;",
     'invalid value "0" in "toolsearch_max_results" directive, it must be a '
     'number from 1 to 32'),
    ("", "toolsearch_tool_name 'a b';",
     'invalid value "a b" in "toolsearch_tool_name" directive, a tool name '
     'must be 1 to 64 letters, digits, "_" or "-"'),
    ("", "toolsearch_hint mcp__a '';",
     'invalid value "" in "toolsearch_hint" directive, the hint for '
     '"mcp__a" is empty'),
    ("", "toolsearch_max_body_size 12q;",
     'invalid value "12q" in "toolsearch_max_body_size" directive, it must '
     'be a positive number of bytes with an optional "k" or "m" suffix'),
    ("", "toolsearch_max_body_size 0;",
     'invalid value "0" in "toolsearch_max_body_size" directive'),
    ("toolsearch_recall_tools 12q;", "",
     'invalid value "12q" in "toolsearch_recall_tools" directive, it must '
     'be a positive number of bytes with an optional "k" or "m" suffix'),
    ("toolsearch_recall_tools 0;", "",
     'invalid value "0" in "toolsearch_recall_tools" directive'),
    ("toolsearch_recall_tools 1m; toolsearch_recall_tools 2m;", "",
     '"toolsearch_recall_tools" directive is duplicate'),
    ("", "toolsearch_recall_tools 1m;",
     '"toolsearch_recall_tools" directive is not allowed here'),
    ("toolsearch_zone 'a\"b' 64k;", "",
     'invalid value "a"b" in "toolsearch_zone" directive, a zone name must '
     'be letters, digits, "_", "-" and "."'),
    ("toolsearch_zone ts 12q;", "",
     'invalid value "12q" in "toolsearch_zone" directive'),
    ("toolsearch_zone ts 4k;", "",
     'invalid value "4k" in "toolsearch_zone" directive, zone "ts" must be '
     'at least 32k'),
    # duplicates where a second value makes no sense
    ("", "toolsearch on; toolsearch off;", '"toolsearch" directive is '
     'duplicate'),
    ("", "toolsearch_defer on; toolsearch_defer off;",
     '"toolsearch_defer" directive is duplicate'),
    ("", "toolsearch_max_body_size 1m; toolsearch_max_body_size 2m;",
     '"toolsearch_max_body_size" directive is duplicate'),
    ("", "toolsearch_upstream vertex; toolsearch_upstream bedrock;",
     '"toolsearch_upstream" directive is duplicate'),
    ("", "toolsearch_hosted_search bm25; toolsearch_hosted_search regex;",
     '"toolsearch_hosted_search" directive is duplicate'),
    ("", "toolsearch_defer_tools a; toolsearch_defer_tools b;",
     '"toolsearch_defer_tools" directive is duplicate'),
    ("toolsearch_zone a 64k; toolsearch_zone b 64k;", "",
     '"toolsearch_zone" directive is duplicate'),
    ("toolsearch_zone ts 64k;",
     "location = /s { toolsearch_status; toolsearch_status; }",
     '"toolsearch_status" directive is duplicate'),
    # status page
    ("", "location = /s { toolsearch_status; }",
     '"toolsearch_status" requires a "toolsearch_zone" in the http block'),
    ("toolsearch_zone ts 64k;",
     "location = /s { toolsearch on; toolsearch_status; }",
     '"toolsearch_status" directive cannot be used in a location with '
     '"toolsearch on"'),
    ("toolsearch_zone ts 64k;", "location = /s { toolsearch_status x; }",
     'invalid value "x" in "toolsearch_status" directive, the directive '
     'takes no value'),
    ("toolsearch_zone ts 64k; "
     "limit_req_zone $binary_remote_addr zone=ts:1m rate=1r/s;", "",
     'the shared memory zone "ts" is already declared for a different use'),
    # contexts
    ("", "toolsearch_zone ts 64k;",
     '"toolsearch_zone" directive is not allowed here'),
    ("toolsearch_status;", "",
     '"toolsearch_status" directive is not allowed here'),
]


@pytest.mark.parametrize("http,server,message", CASES,
                         ids=[c[2][:40] for c in CASES])
def test_nginx_t_rejects(http, server, message):
    gw = Gateway(1, http=http, server=server)
    try:
        rc, out = gw.test_config()
        assert rc == 1
        emerg = [line for line in out.splitlines() if "[emerg]" in line]
        assert len(emerg) == 1 and message in emerg[0], out
    finally:
        gw.remove()


def test_nginx_t_accepts_the_good_values():
    gw = Gateway(1, http="toolsearch_zone ts 64k; "
                 "toolsearch_recall_tools 64m;", server="""
        toolsearch on; toolsearch_defer auto:0; toolsearch_upstream vertex;
        toolsearch_max_searches 20; toolsearch_max_results 32;
        toolsearch_hosted_search regex; toolsearch_max_body_size 32m;
        toolsearch_context_window ~^claude- 200000;
        toolsearch_context_window '(?i)local' 32000;
        location = /s { toolsearch_status; }""")
    try:
        rc, out = gw.test_config()
        assert rc == 0, out
    finally:
        gw.remove()
