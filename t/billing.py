"""What an upstream request costs under Anthropic's prompt caching: the
billing model of the session-cost benchmark (bench/cost_bench.py) and of
the tests that assert its cache behaviour (t/test_session_cost.py).

The model (docs/benchmarks.md, "Session cost", states it for operators):

* The prompt is a list of blocks in the order the API caches them:
  tools[] (one block per tool), then the system prompt (one block per
  text block, one for a string), then the messages (one block per content
  block, one for a string content).
* A tool with "defer_loading": true is not in the prompt (the hosted
  search tool is).  A tool_reference expands in place: the block holding
  it (a tool_result, a tool_search_tool_result) costs the referenced
  definitions too, without changing any block before it.
* Tokens are estimated from bytes: text blocks' text at 4 bytes a token
  (prose), every other block's compact JSON at 3.5 (JSON).
* A block carrying cache_control is a breakpoint.  A request reads from
  the cache the longest prefix, ending at a block boundary, that an
  earlier request of the session wrote, looked up at each of its
  breakpoints and at most 20 blocks before each; the key of a prefix is
  its bytes without the cache_control members (clients move their
  breakpoints).  It writes the prefix up to each of its breakpoints.
* Units: a token read from the cache 0.1, written to it 1.25 (the tokens
  between the part read and the last breakpoint), any other 1.0.  Output
  tokens are not counted; the cache never expires within a session; the
  minimum cacheable length and betas are ignored.

A cache break is a request, after the session's first, that reads less
than the request before it cached: its cause is the first block that
differs from that request's prompt.
"""

import hashlib
import json

LOOKBACK = 20
PRICE_UNCACHED = 1.0
PRICE_WRITE = 1.25
PRICE_READ = 0.1
BYTES_PER_TOKEN_JSON = 3.5
BYTES_PER_TOKEN_PROSE = 4.0


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def without_cache_control(value):
    if isinstance(value, dict):
        return {k: without_cache_control(v) for k, v in value.items()
                if k != "cache_control"}
    if isinstance(value, list):
        return [without_cache_control(v) for v in value]
    return value


def references(block):
    """the tool names a block's tool_reference items load"""
    if not isinstance(block, dict):
        return []
    if block.get("type") == "tool_result" and \
            isinstance(block.get("content"), list):
        items = block["content"]
    elif block.get("type") == "tool_search_tool_result":
        items = (block.get("content") or {}).get("tool_references", [])
    else:
        return []
    return [r.get("tool_name") for r in items
            if isinstance(r, dict) and r.get("type") == "tool_reference"]


def tokens_of(block, definitions):
    """estimated tokens of one block, tool references expanded"""
    if isinstance(block, str):
        n = len(block.encode()) / BYTES_PER_TOKEN_PROSE
    elif block.get("type") == "text" and isinstance(block.get("text"), str):
        n = len(block["text"].encode()) / BYTES_PER_TOKEN_PROSE
    else:
        n = len(compact(without_cache_control(block)).encode()) \
            / BYTES_PER_TOKEN_JSON
    for name in references(block):
        if name in definitions:
            n += len(definitions[name]) / BYTES_PER_TOKEN_JSON
    return n


class Block:
    """one cacheable block: where it stands, its key bytes, its tokens"""

    def __init__(self, where, value, definitions):
        self.where = where
        self.breakpoint = isinstance(value, dict) and "cache_control" in value
        self.key = compact(without_cache_control(value)).encode()
        self.tokens = tokens_of(value, definitions)


def prompt(body):
    """The blocks of a request body (parsed), in cache order."""
    tools = [t for t in body.get("tools", []) if isinstance(t, dict)]
    definitions = {t.get("name"): compact(without_cache_control(t)).encode()
                   for t in tools if t.get("defer_loading") is True}
    out = [Block("tools[%d] %s" % (i, t.get("name")), t, definitions)
           for i, t in enumerate(tools) if t.get("defer_loading") is not True]
    system = body.get("system")
    if isinstance(system, str):
        out.append(Block("system", system, definitions))
    elif isinstance(system, list):
        out += [Block("system[%d]" % i, s, definitions)
                for i, s in enumerate(system)]
    for i, m in enumerate(body.get("messages", [])):
        content = m.get("content")
        if isinstance(content, list):
            out += [Block("messages[%d].content[%d] (%s %s)"
                          % (i, j, m.get("role"), b.get("type")),
                          b, definitions)
                    for j, b in enumerate(content)]
        else:
            out.append(Block("messages[%d] (%s)" % (i, m.get("role")),
                             content, definitions))
    return out


def prefix_keys(blocks):
    """the key of each prefix: keys[i] covers blocks[0..i]"""
    keys, h = [], hashlib.sha256()
    for b in blocks:
        h.update(b.key)
        h.update(b"\0")
        keys.append(h.copy().digest())
    return keys


class Bill:
    """what one request costs"""

    def __init__(self, n, tokens, read, written, units, cause):
        self.n = n                  # upstream request, from 1
        self.tokens = tokens        # the prompt's tokens (its context)
        self.read = read            # tokens read from the cache
        self.written = written      # tokens written to it
        self.units = units
        self.cause = cause          # the cache break's cause, or None


class Session:
    """The prompt cache of one session, and what each request costs."""

    def __init__(self):
        self.entries = set()
        self.bills = []
        self.last = None        # (blocks, tokens cached) of the last request

    def bill(self, body):
        blocks = prompt(body)
        keys = prefix_keys(blocks)
        sizes, total = [], 0.0
        for b in blocks:
            total += b.tokens
            sizes.append(total)
        marks = [i for i, b in enumerate(blocks) if b.breakpoint]
        hit = -1
        for m in marks:
            for i in range(m, max(-1, m - LOOKBACK - 1), -1):
                if keys[i] in self.entries:
                    hit = max(hit, i)
                    break
        read = sizes[hit] if hit >= 0 else 0.0
        cached = sizes[marks[-1]] if marks else 0.0
        written = max(0.0, cached - read)
        units = PRICE_READ * read + PRICE_WRITE * written + \
            PRICE_UNCACHED * (total - read - written)
        self.entries.update(keys[m] for m in marks)
        cause = self.break_cause(blocks, read)
        self.last = (blocks, cached)
        self.bills.append(Bill(len(self.bills) + 1, total, read, written,
                               units, cause))
        return self.bills[-1]

    def break_cause(self, blocks, read):
        """where this request first differs from the one before, when it
        read less than that one cached"""
        if self.last is None:
            return None
        before, cached = self.last
        if read + 0.5 >= cached:
            return None
        for old, new in zip(before, blocks):
            if old.key != new.key:
                return "%s changed (was %s)" % (new.where, old.where)
        if len(blocks) < len(before):
            return "the prompt ends before %s" % before[len(blocks)].where
        return "a breakpoint moved more than %d blocks" % LOOKBACK

    def units(self):
        return sum(b.units for b in self.bills)

    def breaks(self):
        return [b for b in self.bills if b.cause]

    def peak(self):
        return max(b.tokens for b in self.bills) if self.bills else 0.0


def bill_session(bodies):
    """the Session of a list of request bodies (bytes or parsed)"""
    s = Session()
    for b in bodies:
        s.bill(json.loads(b) if isinstance(b, (bytes, str)) else b)
    return s
