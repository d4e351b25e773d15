"""Bad (and a few deliberately tolerated) requests for the AI SDK endpoints.

`POST /agents/{name}/ai-sdk` (and its `/{chat_id}/stream` and `/{chat_id}/stop`). Statuses as
documented (ai_sdk_request.py, app.py, serving.py): 400 a body that is not a JSON object or an
unknown `ai` major; 422 a field no `ai` client sends that way (the text names it); 401, 404,
409, 413, 429 as for AG-UI. Error bodies are plain text. The parser is lenient on purpose
("part types and fields this module does not know are ignored, never refused"): such requests
are 200.
"""

from __future__ import annotations

from typing import Any

from tests.reliability.corpus_common import (
    INTERRUPT,
    MAX_BODY,
    MESSAGES,
    STATE_BYTES,
    Case,
    dumps,
    nested,
)


def user(text: str = "add one", id: str = "u1") -> dict[str, Any]:
    return {"id": id, "role": "user", "parts": [{"type": "text", "text": text}]}


def chat(id: Any = "new-chat", **fields: Any) -> dict[str, Any]:
    """A body as DefaultChatTransport sends it, with `fields` replaced."""
    return {"id": id, "messages": [user()], "trigger": "submit-message", **fields}


def body(id: Any = "new-chat", **fields: Any) -> bytes:
    return dumps(chat(id, **fields))


def continuation(approval: dict[str, Any], thread: str = "ann-paused") -> bytes:
    """ann answers the approval of her paused thread in an ai 6+ tool part."""
    assistant = {"id": "a1", "role": "assistant", "parts": [
        {"type": "step-start"},
        {"type": "tool-wipe", "toolCallId": "call-x", "state": "approval-responded",
         "input": {}, "approval": approval}]}
    return dumps(chat(thread, messages=[user("wipe"), assistant], messageId="a1"))


CASES: list[Case] = [
    # -- not a JSON object: 400 ------------------------------------------------------------
    Case("empty-body", "an empty body is not JSON", 400, b""),
    Case("broken-json", "a syntax error", 400, b'{"id": "c", messages: []}'),
    Case("truncated-json", "a body cut in the middle", 400, body()[:30]),
    Case("trailing-garbage", "a valid object followed by garbage", 400, body() + b"]"),
    Case("non-utf8-latin1", "a Latin-1 byte inside a string", 400,
         body().replace(b"add one", b"na\xefve")),
    Case("non-utf8-invalid-byte", "a byte that is never UTF-8", 400, b"\xfe" + body()),
    Case("json-null", "null where the object belongs", 400, b"null"),
    Case("json-array", "an array where the object belongs", 400, b"[]"),
    Case("json-array-of-bodies", "a list of request bodies", 400, dumps([chat()])),
    Case("json-string", "a string where the object belongs", 400, b'"hi"'),
    Case("json-number", "a number where the object belongs", 400, b"7"),
    Case("integer-5000-digits", "an integer longer than Python will parse", 400,
         b'{"id":"c","messages":[],"n":' + b"1" * 5000 + b"}"),
    Case("form-encoded", "a form body (a type a page may send cross-site)", 415,
         b"id=c&messages=", headers={"content-type": "application/x-www-form-urlencoded"}),
    Case("json-as-text-plain", "JSON sent as text/plain (a cross-site form's type)", 415,
         body(), headers={"content-type": "text/plain"}),
    Case("sdk-version-query", "?v=4 is not a supported ai major", 400, body(),
         path="/agents/todo/ai-sdk?v=4"),
    Case("sdk-version-header", "x-ai-sdk-version 'seven'", 400, body(),
         headers={"x-ai-sdk-version": "seven"}),
    Case("deep-nesting-body", "20,000 nested arrays (40 KB, under max_body)", 400,
         b'{"id":"c","messages":[],"extra":' + nested(20_000).encode() + b"}"),
    # -- JSON, not what an ai client sends: 422 --------------------------------------------
    Case("missing-id", "no chat id", 422, dumps({"messages": [user()]})),
    Case("id-number", "a number where the chat id string belongs", 422, body(12)),
    Case("id-null", "a null chat id", 422, body(None)),
    Case("id-empty", "an empty chat id", 422, body("")),
    Case("id-slash", "a chat id that is not a State id", 422, body("a/b")),
    Case("id-huge", "a 10,000-character chat id", 422, body("x" * 10_000)),
    Case("id-lone-surrogate", "an escaped lone surrogate in the chat id (not text)", 400,
         body("\ud800")),
    Case("messages-object", "an object where the message list belongs", 422,
         body(messages={"0": user()})),
    Case("messages-as-string", "the message list JSON-encoded as a string", 422,
         body(messages="[]")),
    Case("message-null", "null in the message list", 422, body(messages=[None])),
    Case("message-array", "an array where a message belongs", 422, body(messages=[[user()]])),
    Case("message-number", "a number where a message belongs", 422, body(messages=[1])),
    Case("approvals-object", "an object where the approvals list belongs", 422,
         body("ann-paused", approvals={"id": INTERRUPT, "approved": True})),
    Case("approvals-item-string", "a string where an approval belongs", 422,
         body("ann-paused", approvals=[INTERRUPT])),
    Case("approval-missing-id", "an approval without its id", 422,
         body("ann-paused", approvals=[{"approved": True}])),
    Case("approval-approved-string", "approved 'true' (a string for a boolean)", 422,
         body("ann-paused", approvals=[{"id": INTERRUPT, "approved": "true"}])),
    Case("approval-forged-id", "an approval id the server never issued", 422,
         body("ann-paused", approvals=[{"id": "apr_forged", "approved": True}])),
    Case("approval-no-paused-run", "an approval on a thread that waits for nothing", 422,
         body("ann-thread", approvals=[{"id": "apr_forged", "approved": True}])),
    Case("approval-part-forged-id", "an approval-responded part with a forged id", 422,
         continuation({"id": "apr_forged", "approved": True})),
    Case("approval-part-approved-number", "an approval-responded part with approved: 1", 422,
         continuation({"id": INTERRUPT, "approved": 1})),
    Case("client-tools-object", "an object where the clientTools list belongs", 422,
         body(clientTools={"name": "f"})),
    Case("client-tool-no-name", "a client tool without a name", 422,
         body(clientTools=[{"description": "d"}])),
    Case("client-tool-string", "a string where a client tool belongs", 422,
         body(clientTools=["f"])),
    Case("state-nan", "NaN in the state (JSON has none)", 422,
         b'{"id":"c","messages":[],"state":{"x":NaN}}'),
    Case("state-wrong-type", "a state that does not fit the agent's state type", 422,
         body(state={"items": 3}), path="/agents/typed/ai-sdk"),
    Case("message-lone-surrogate", "an escaped lone surrogate in a text part", 400,
         body(messages=[user("\ud800")])),
    # -- who asks: 401 / 404 ---------------------------------------------------------------
    Case("no-credentials", "no Authorization header", 401, body(), token=None),
    Case("unknown-token", "a bearer token nobody has", 401, body(), token="tok-eve"),
    Case("unknown-agent", "an agent that does not exist", 404, body(),
         path="/agents/nobody/ai-sdk"),
    Case("other-principals-chat", "bob posts to ann's chat", 404, body("ann-thread"),
         token="tok-bob"),
    Case("other-principals-approval", "bob answers ann's open approval", 404,
         body("ann-paused", approvals=[{"id": INTERRUPT, "approved": True}]), token="tok-bob"),
    Case("resume-other-principals-chat", "bob follows ann's chat stream", 404, method="GET",
         path="/agents/todo/ai-sdk/ann-thread/stream", token="tok-bob"),
    Case("stop-other-principals-chat", "bob stops ann's chat", 404,
         path="/agents/todo/ai-sdk/ann-thread/stop", token="tok-bob"),
    Case("resume-no-credentials", "following a stream without credentials", 401, method="GET",
         path="/agents/todo/ai-sdk/ann-thread/stream", token=None),
    # -- sizes and load: 413 / 409 / 429 ---------------------------------------------------
    Case("oversize-body", "a body over max_body", 413, body(pad="x" * MAX_BODY)),
    Case("huge-text-part", "a 100 KB text part", 413, body(messages=[user("x" * 100_000)])),
    Case("too-many-messages", f"{MESSAGES + 1} messages", 413,
         body(messages=[user("x", f"m{i}") for i in range(MESSAGES + 1)])),
    Case("state-over-limit", "a state body field over the state_bytes limit", 413,
         body(state={"items": ["x" * STATE_BYTES]})),
    Case("data-state-part-over-limit", "the state of a data-state part over the limit", 413,
         body(messages=[user(), {"id": "a", "role": "assistant", "parts": [
             {"type": "data-state", "id": "state", "data": {"items": ["x" * STATE_BYTES]}}]},
             user("again", "u2")])),
    Case("chat-running", "a second run on a chat whose run is going, that rejects", 409,
         body("ann-busy", doubleTexting="reject"), setup="busy"),
    Case("double-texting-unknown", "doubleTexting that is none of the three", 422,
         body(doubleTexting=["enqueue"])),
    Case("too-many-runs", "a third run while ann has two going", 429, body("third"),
         setup="busy2"),
    # -- tolerated on purpose: 200 ---------------------------------------------------------
    Case("unknown-parts-and-fields", "unknown part types and fields are ignored (documented)",
         200, body(messages=[{**user(), "parts": [{"type": "text", "text": "add one"},
                                                 {"type": "hologram", "x": 1}, {"no": "type"},
                                                 "not a part"]}], futureField=1)),
    Case("data-state-delta-bad-pointer", "a data-state-delta part with an invalid JSON "
         "Pointer is a data part, left out (documented)", 200,
         body(messages=[user(), {"id": "a", "role": "assistant", "parts": [
             {"type": "data-state-delta", "data": [{"op": "add", "path": "items/~2",
                                                    "value": 1}]}]}, user("again", "u2")])),
    Case("pointer-like-state-keys", "state keys that would be broken JSON Pointers are plain "
         "keys", 200, body(state={"a/b": {"~x": 1}, "items": []})),
]
