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


# Automatic prefix caching, OpenAI's and vLLM's (Chat Completions and
# Responses; docs/gateway-search.md, "What a session costs" under Chat
# Completions, states the model for operators).
#
# * The prompt is tools[] (one block per tool), then, for Responses, the
#   instructions (one block), then the messages (Chat Completions) or the
#   input items (Responses), one block each: OpenAI's and vLLM's chat
#   templates put the tool definitions in the system area, before the
#   first message.  A string input is one block.  Of a deferred function
#   (defer_loading, Responses' hosted search) the model reads its name
#   and description, of a namespace its own and its members that are not
#   deferred; what a hosted search loads inside one request is appended
#   after the prompt and not counted.
# * Tokens: the text a block carries (a message's string content, the
#   text of its parts, a function_call_output's string output, the
#   instructions) at 4 bytes a token, the rest of its compact JSON at 3.5.
# * Every request caches its whole prompt; a request reads the longest
#   prefix, ending at a block, that an earlier request of the session
#   had, in whole increments of `step` tokens and only from `minimum`
#   tokens on (OpenAI: 1,024 and 128; vLLM: its 16-token blocks).  No
#   breakpoints, no write premium: a token read costs `read_price`, any
#   other 1.0.
#
# A cache break is a request that pays again for blocks the request
# before it had: after the first block where the two differ, it has
# blocks that the request before had after that place too.  A request
# that only drops the end of the one before (the turns a gateway's loop
# appended) and goes on differently breaks nothing.

OPENAI_MINIMUM = 1024
OPENAI_STEP = 128
VLLM_BLOCK = 16
# cached input as a fraction of the input price, per model family
OPENAI_READ_PRICES = {"gpt-5": 0.1, "gpt-4.1": 0.25, "gpt-4o": 0.5}
TEXT_MEMBERS = ("content", "text", "output", "instructions")


def texts_of(value):
    """the strings of a block the model reads as text"""
    out = []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        for v in value:
            out += texts_of(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            if k in TEXT_MEMBERS and isinstance(v, str):
                out.append(v)
            elif k in ("content", "output") and isinstance(v, list):
                out += texts_of(v)
    return out


def openai_tokens(value):
    """estimated tokens of a block: its text as prose, the rest as JSON"""
    whole = len(compact(value).encode())
    texts = texts_of(value)
    prose = sum(len(t.encode()) for t in texts)
    quoted = sum(len(compact(t).encode()) for t in texts)
    return prose / BYTES_PER_TOKEN_PROSE + \
        max(0, whole - quoted) / BYTES_PER_TOKEN_JSON


def deferred(t):
    return isinstance(t, dict) and t.get("defer_loading") is True


def hosted_seen(t):
    """What a Responses model reads of a tool (OpenAI's tool search
    guide): of a deferred function its name and description; of a
    namespace its own, and its members that are not deferred."""
    if deferred(t):
        return {k: t.get(k) for k in ("name", "description")}
    if isinstance(t, dict) and t.get("type") == "namespace" and \
            isinstance(t.get("tools"), list):
        return dict(t, tools=[m for m in t["tools"] if not deferred(m)])
    return t


class Part(Block):
    """one block of an OpenAI-format prompt; of a deferred function or
    namespace member (Responses' defer_loading), what hosted_seen says"""

    def __init__(self, where, value):
        self.where = where
        self.breakpoint = False
        self.key = compact(value).encode()
        self.tokens = openai_tokens(hosted_seen(value))


def tool_name(t):
    if not isinstance(t, dict):
        return "?"
    return t.get("name") or (t.get("function") or {}).get("name") or \
        t.get("type", "?")


def item_name(i, m):
    if not isinstance(m, dict):
        return "[%d]" % i
    kind = m.get("role") or m.get("type", "?")
    return "[%d] (%s)" % (i, kind)


def openai_prompt(body):
    """The blocks of a Chat Completions or Responses body (parsed), in
    the order the model reads them."""
    out = [Part("tools[%d] %s" % (i, tool_name(t)), t)
           for i, t in enumerate(body.get("tools") or [])]
    if "instructions" in body:
        out.append(Part("instructions", body["instructions"]))
    if "messages" in body:
        out += [Part("messages" + item_name(i, m), m)
                for i, m in enumerate(body["messages"])]
    elif isinstance(body.get("input"), list):
        out += [Part("input" + item_name(i, m), m)
                for i, m in enumerate(body["input"])]
    elif "input" in body:
        out.append(Part("input", body["input"]))
    return out


class PrefixSession(Session):
    """The automatic prefix cache of one session, and what each request
    costs; a Bill's `again` is the tokens a break paid again."""

    def __init__(self, read_price=OPENAI_READ_PRICES["gpt-5"],
                 minimum=OPENAI_MINIMUM, step=OPENAI_STEP):
        Session.__init__(self)
        self.read_price = read_price
        self.minimum = minimum
        self.step = step

    def bill(self, body):
        blocks = openai_prompt(body)
        keys = prefix_keys(blocks)
        total, common = 0.0, 0.0
        for b, k in zip(blocks, keys):
            total += b.tokens
            if k in self.entries:
                common = total
        read = (common // self.step) * self.step
        if read < self.minimum:
            read = 0.0
        units = self.read_price * read + PRICE_UNCACHED * (total - read)
        self.entries.update(keys)
        cause, again = self.break_cause(blocks, read)
        self.last = blocks
        b = Bill(len(self.bills) + 1, total, read, 0.0, units, cause)
        b.again = again
        self.bills.append(b)
        return b

    def break_cause(self, blocks, read=0.0):
        """(cause, tokens paid again) when this request pays again for
        blocks the one before it had after their first difference: the
        part of them past what it read (an older request of the session
        may have had the same prefix, and then nothing is paid again)"""
        before = self.last
        if before is None:
            return None, 0.0
        d = 0
        while d < min(len(before), len(blocks)) and \
                before[d].key == blocks[d].key:
            d += 1
        had = {b.key for b in before[d:]}
        pos = sum(b.tokens for b in blocks[:d])
        again = 0.0
        for b in blocks[d:]:
            if b.key in had:
                again += max(0.0, min(b.tokens, pos + b.tokens - read))
            pos += b.tokens
        if not again:
            return None, 0.0
        return "%s changed (was %s)" % (blocks[d].where,
                                        before[d].where), again


def prefix_session(bodies, **kw):
    """the PrefixSession of a list of request bodies (bytes or parsed)"""
    s = PrefixSession(**kw)
    for b in bodies:
        s.bill(json.loads(b) if isinstance(b, (bytes, str)) else b)
    return s
