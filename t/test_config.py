"""nginx -t rejects every bad value of the module's directives with a
message that says what is wrong and what is allowed."""

import pytest

from gateway import Gateway

CASES = [
    # deferral mode
    ("", "toolsearch_defer auto:101;",
     'invalid value "auto:101", it must be "off", "on", "auto" or "auto:N" '
     'with N from 0 to 100'),
    ("", "toolsearch_defer auto:;", 'invalid value "auto:"'),
    ("", "toolsearch_defer auto:1000;", 'invalid value "auto:1000"'),
    ("", "toolsearch_defer auto:-1;", 'invalid value "auto:-1"'),
    ("", "toolsearch_defer Auto;", 'invalid value "Auto"'),
    # profiles and hosted tools
    ("", "toolsearch_upstream azure;",
     'invalid value "azure", it must be "auto", "anthropic", "vertex", '
     '"bedrock" or "compatible"'),
    ("", "toolsearch_hosted_search fuzzy;",
     'invalid value "fuzzy", it must be "bm25" or "regex"'),
    ("", "toolsearch maybe;",
     'invalid value "maybe" in "toolsearch" directive, it must be "on" or '
     '"off"'),
    # regexes: PCRE2's message and offset
    ("", "toolsearch_defer_tools '~(unclosed';",
     'missing closing parenthesis at offset 9 in "~(unclosed"'),
    ("", "toolsearch_always_load Read '~a[';",
     'missing terminating ] for character class at offset 2 in "~a["'),
    ("", "toolsearch_unsupported_models '~*x';",
     'quantifier does not follow a repeatable item at offset 0 in "~*x"'),
    ("", "toolsearch_context_window '~(x' 1000;",
     'missing closing parenthesis at offset 2 in "~(x"'),
    # numbers and sizes
    ("", "toolsearch_context_window ~opus 0;",
     'invalid number of tokens "0"'),
    ("", "toolsearch_context_window ~opus many;",
     'invalid number of tokens "many"'),
    ("", "toolsearch_max_body_size 12q;",
     'invalid size "12q", it must be a positive number of bytes with an '
     'optional "k" or "m" suffix'),
    ("", "toolsearch_max_body_size 0;", 'invalid size "0"'),
    ("toolsearch_zone 'a\"b' 64k;", "",
     'invalid zone name "a"b", it must be letters, digits, "_", "-" and "."'),
    ("toolsearch_zone ts 12q;", "", 'invalid zone size "12q"'),
    ("toolsearch_zone ts 4k;", "",
     'zone "ts" is too small: "4k", it must be at least 32k'),
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
     'invalid number of arguments in "toolsearch_status" directive'),
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
    gw = Gateway(1, http="toolsearch_zone ts 64k;", server="""
        toolsearch on; toolsearch_defer auto:0; toolsearch_upstream vertex;
        toolsearch_hosted_search regex; toolsearch_max_body_size 32m;
        toolsearch_context_window ~^claude- 200000;
        toolsearch_context_window '(?i)local' 32000;
        location = /s { toolsearch_status; }""")
    try:
        rc, out = gw.test_config()
        assert rc == 0, out
    finally:
        gw.remove()
