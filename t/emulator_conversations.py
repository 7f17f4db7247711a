"""OpenAI's Conversations API as the emulator plays it, beside its
Responses API (t/emulator_responses.py), as OpenAI's reference states it
(openai-openapi: createConversation, getConversation, deleteConversation,
createConversationItems, listConversationItems, getConversationItem,
deleteConversationItem) and as recordings of the real API show it:

* POST …/conversations {"metadata"?, "items"?} makes one
  ({"id": "conv_…", "object": "conversation", "created_at", "metadata"});
  at most 20 items a request;
* GET / DELETE …/conversations/{id}; an unknown id is a 404 (its
  message is the emulator's: no recording of it was found);
* POST …/conversations/{id}/items {"items": [...]} adds items (at most
  20) and lists them; GET …/items lists them (order desc by default,
  limit 1-100, default 20, after an item id) as {"object": "list",
  "data", "first_id", "last_id", "has_more"}; GET / DELETE
  …/items/{item_id};
* each item added gets an id with its type's prefix (msg, fc, fco, rs);
  an item given with an id of another prefix is refused ("Expected an
  ID that begins with 'msg'."), an id the store holds adds that item, an
  id the conversation holds already is refused
  (item_already_in_conversation);
* a user message's string content becomes [{"type": "input_text", …}].

A response made with "conversation" sees the conversation's items before
its input (emulator_responses.context, which checks them as it checks a
stored chain: every call of a function answered before the next model
call, call ids, item ids); once it is made its input items and output
items are added, whatever store says (vllm-project/agentic-api's PR 56
reports a recording against the live API where store false still adds
them; smg-project/smg's PR 916 states the opposite, without one).  A response whose call failed adds nothing; one whose answer a
Fault broke adds them (the upstream made it).
"""

import json
import re
from urllib.parse import parse_qs, urlsplit

# set by t/emulator.py, whose class this is
ApiError = None

PATH = re.compile(r"/conversations(?:/([^/]+))?(?:/items(?:/([^/]+))?)?$")
ITEMS = re.compile(r"/conversations/[^/]+/items")
PREFIX = {"message": "msg", "function_call": "fc",
          "function_call_output": "fco", "reasoning": "rs",
          "tool_search_call": "tsc", "tool_search_output": "tso"}
MAX_ITEMS = 20


def new_id(emu, prefix):
    """An id as emu.next_id gives it, emu.lock held by the caller."""
    emu.counter += 1
    return "%s_emu%06d" % (prefix, emu.counter)


def not_found(conv_id, param=None):
    return ApiError("Conversation with id '%s' not found." % conv_id, 404,
                    param=param)


def find(state, conv_id, param=None):
    conv = state.conversations.get(conv_id)
    if conv is None:
        raise not_found(conv_id, param)
    return conv


def resource(conv):
    return {"id": conv["id"], "object": "conversation",
            "created_at": conv["created_at"], "metadata": conv["metadata"]}


def of_request(state, body):
    """The conversation a Responses request names, or ApiError."""
    conv = body.get("conversation")
    if isinstance(conv, dict):
        conv = conv.get("id")
    if not isinstance(conv, str):
        raise ApiError("Invalid type for 'conversation': expected a string "
                       "or an object with an 'id'.", param="conversation")
    return find(state, conv, "conversation")


def stored_item(emu, state, item, i):
    """An item as the conversation keeps it: with its id, checked."""
    if not isinstance(item, dict):
        raise ApiError("Invalid type for 'items[%d]'." % i)
    kind = item.get("type", "message")
    if kind == "item_reference":
        if item.get("id") not in state.items:
            raise ApiError("Item with id '%s' not found." % item.get("id"),
                           404)
        return state.items[item["id"]]
    prefix = PREFIX.get(kind)
    if prefix is None:
        raise ApiError("Invalid value for 'items[%d].type'." % i,
                       param="items[%d].type" % i)
    given = item.get("id")
    if given is not None:
        if given in state.items:
            return state.items[given]
        if not isinstance(given, str) or \
                not given.startswith(prefix + "_"):
            raise ApiError("Invalid 'items[%d].id': '%s'. Expected an ID "
                           "that begins with '%s'." % (i, given, prefix),
                           param="items[%d].id" % i, code="invalid_value")
    item = dict(item, type=kind, id=given or new_id(emu, prefix))
    if kind == "message":
        if isinstance(item.get("content"), str):
            part = "output_text" if item.get("role") == "assistant" \
                else "input_text"
            item["content"] = [{"type": part, "text": item["content"]}]
        item.setdefault("status", "completed")
    state.items[item["id"]] = item
    return item


def add(emu, state, conv, items, check=True):
    """Items added to the conversation, in order; the ones added."""
    if not isinstance(items, list):
        raise ApiError("Invalid type for 'items': expected an array.",
                       param="items")
    if check and len(items) > MAX_ITEMS:
        raise ApiError("Invalid 'items': array too long. Expected an array "
                       "with maximum length %d, but got an array with "
                       "length %d instead." % (MAX_ITEMS, len(items)),
                       param="items", code="array_above_max_length")
    held = {it["id"] for it in conv["items"]}
    added = [stored_item(emu, state, it, i) for i, it in enumerate(items)]
    if check and any(it["id"] in held for it in added):
        raise ApiError("Item already in conversation", param="items",
                       code="item_already_in_conversation")
    conv["items"].extend(added)
    return added


def add_response(emu, state, body, resp):
    """A response made in a conversation: its input, then its output."""
    conv = of_request(state, body)
    inp = body.get("input")
    if isinstance(inp, str):
        inp = [{"type": "message", "role": "user", "content": inp}]
    add(emu, state, conv, list(inp) + resp["output"], check=False)


def listing(items):
    return {"object": "list", "data": items,
            "first_id": items[0]["id"] if items else None,
            "last_id": items[-1]["id"] if items else None,
            "has_more": False}


def list_items(conv, query):
    """GET …/items: order (desc), limit (20, 1-100), after."""
    order = query.get("order", ["desc"])[0]
    if order not in ("asc", "desc"):
        raise ApiError("Invalid value for 'order'.", param="order")
    try:
        limit = int(query.get("limit", ["20"])[0])
    except ValueError:
        limit = 0
    if not 1 <= limit <= 100:
        raise ApiError("Invalid 'limit': expected an integer from 1 to 100.",
                       param="limit")
    items = list(conv["items"])
    if order == "desc":
        items.reverse()
    after = query.get("after", [None])[0]
    if after is not None:
        ids = [it["id"] for it in items]
        if after not in ids:
            raise ApiError("No item found with id '%s'" % after, 404,
                           param="after")
        items = items[ids.index(after) + 1:]
    out = listing(items[:limit])
    out["has_more"] = len(items) > limit
    return out


def handle(handler, rec, path):
    """One Conversations API request; False when path is none of its."""
    emu = handler.emu
    state = emu.responses_state
    m = PATH.search(urlsplit(path).path)
    if m is None:
        return False
    conv_id, item_id = m.group(1), m.group(2)
    items_path = ITEMS.search(path) is not None
    query = parse_qs(urlsplit(path).query)
    method = handler.command
    with emu.lock:
        if conv_id is None and method == "POST":
            body = handler.parse(rec) if rec.body else {}
            conv = {"id": new_id(emu, "conv"), "created_at": 1764201600,
                    "metadata": body.get("metadata") or {}, "items": []}
            if body.get("items") is not None:
                add(emu, state, conv, body["items"])
            state.conversations[conv["id"]] = conv
            out = resource(conv)
        elif conv_id is None:
            return False
        elif not items_path and method == "GET":
            out = resource(find(state, conv_id))
        elif not items_path and method == "DELETE":
            find(state, conv_id)
            del state.conversations[conv_id]
            out = {"id": conv_id, "object": "conversation.deleted",
                   "deleted": True}
        elif items_path and item_id is None and method == "POST":
            conv = find(state, conv_id)
            out = listing(add(emu, state, conv,
                              handler.parse(rec).get("items")))
        elif items_path and item_id is None and method == "GET":
            out = list_items(find(state, conv_id), query)
        elif items_path and item_id is not None:
            conv = find(state, conv_id)
            found = [it for it in conv["items"] if it["id"] == item_id]
            if not found:
                raise ApiError("No item found with id '%s'" % item_id, 404)
            if method == "DELETE":
                conv["items"].remove(found[0])
                out = resource(conv)
            else:
                out = found[0]
        else:
            return False
    rec.status = 200
    handler.send_json(200, json.dumps(out).encode())
    return True
