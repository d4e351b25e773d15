"""Bad (and a few deliberately tolerated) requests for `POST /agents/{name}/ag-ui`.

Statuses as documented (app.py, ag_ui_request.py, serving.py, DESIGN.md "Server"): 400 a body
that is not JSON; 422 a JSON body that is not a usable `RunAgentInput` (the error names the
field); 401 no or unknown credentials; 404 an unknown agent or another principal's thread; 409 a
thread with a run going; 413 a body, a state or a message list over the limit; 429 too many runs.
200 only where the protocol says to go on (unknown fields ignored, an interrupt id for an
interrupt the thread does not have, any JSON as the state).
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

USER = {"id": "u1", "role": "user", "content": "add one"}


def run(thread: str = "new-thread", **fields: Any) -> dict[str, Any]:
    """A valid RunAgentInput as @ag-ui/client sends it, with `fields` replaced."""
    return {"threadId": thread, "runId": "r1", "state": {"items": []}, "messages": [USER],
            "tools": [], "context": [], "forwardedProps": {}, **fields}


def without(key: str) -> dict[str, Any]:
    body = run()
    del body[key]
    return body


def call(call_id: str = "c1", name: str = "add", arguments: str = '{"text":"a"}') -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


ASSISTANT = {"id": "a1", "role": "assistant", "content": "", "toolCalls": [call()]}
APPROVE = {"interruptId": INTERRUPT, "status": "resolved", "payload": {"approved": True}}


def resume(*entries: dict[str, Any], thread: str = "ann-paused") -> bytes:
    return dumps(run(thread, messages=[{"id": "u1", "role": "user", "content": "wipe"}],
                     resume=list(entries)))


def text(**fields: Any) -> bytes:
    return dumps(run(**fields))


CASES: list[Case] = [
    # -- not JSON: 400 ---------------------------------------------------------------------
    Case("empty-body", "an empty body is not JSON", 400, b""),
    Case("broken-json", "a syntax error", 400, b"{nope"),
    Case("truncated-json", "a body cut in the middle", 400, text()[:40]),
    Case("trailing-garbage", "a valid object followed by garbage", 400, text() + b" }{"),
    Case("non-utf8-latin1", "a Latin-1 byte inside a string", 400,
         text().replace(b"add one", b"caf\xe9")),
    Case("non-utf8-invalid-byte", "a byte that is never UTF-8", 400, b"\xff" + text()),
    Case("single-quotes", "Python-style quotes are not JSON", 400,
         b"{'threadId': 't', 'runId': 'r', 'messages': []}"),
    Case("integer-5000-digits", "an integer longer than Python will parse", 400,
         b'{"threadId":"t","runId":"r","messages":[],"state":{"n":' + b"9" * 5000 + b"}}"),
    Case("form-encoded", "a form body (a type a page may send cross-site)", 415,
         b"threadId=t&runId=r&messages=", headers={"content-type":
                                                   "application/x-www-form-urlencoded"}),
    Case("json-as-text-plain", "JSON sent as text/plain (a cross-site form's type)", 415,
         text(), headers={"content-type": "text/plain;charset=UTF-8"}),
    Case("deep-nesting-body", "20,000 nested arrays (40 KB, under max_body)", 400,
         b'{"threadId":"t","runId":"r","messages":[],"forwardedProps":'
         + nested(20_000).encode() + b"}"),
    # -- JSON, not a RunAgentInput: 422 ----------------------------------------------------
    Case("json-null", "null where the object belongs", 422, b"null", field="body"),
    Case("json-array", "an array where the object belongs", 422, b"[]", field="body"),
    Case("json-array-of-inputs", "a list of RunAgentInputs", 422, dumps([run()]), field="body"),
    Case("json-string", "a string where the object belongs", 422, b'"run"', field="body"),
    Case("json-number", "a number where the object belongs", 422, b"42", field="body"),
    Case("missing-thread-id", "threadId is required", 422, dumps(without("threadId")),
         field="threadId"),
    Case("missing-run-id", "runId is required", 422, dumps(without("runId")), field="runId"),
    Case("missing-messages", "messages is required", 422, dumps(without("messages")),
         field="messages"),
    Case("thread-id-number", "a number where the id string belongs", 422, text(threadId=7),
         field="threadId"),
    Case("thread-id-null", "null thread id", 422, text(threadId=None), field="threadId"),
    Case("thread-id-empty", "an empty thread id", 422, text(threadId=""), field="threadId"),
    Case("thread-id-slash", "a thread id that is not a State id", 422, text(threadId="a/b"),
         field="threadId"),
    Case("thread-id-huge", "a 10,000-character thread id", 422, text(threadId="x" * 10_000),
         field="threadId"),
    Case("thread-id-lone-surrogate", "an escaped lone surrogate in the thread id (not text)", 400,
         text(threadId="\ud800")),
    Case("messages-object", "an object where the message list belongs", 422,
         text(messages={"0": USER}), field="messages"),
    Case("messages-as-string", "the message list JSON-encoded as a string", 422,
         text(messages="[]"), field="messages"),
    Case("message-null", "null in the message list", 422, text(messages=[None]),
         field="messages[0]"),
    Case("message-unknown-role", "role 'wizard'", 422,
         text(messages=[{"id": "m", "role": "wizard", "content": "hi"}]), field="messages[0]"),
    Case("message-missing-role", "a message without a role", 422,
         text(messages=[{"id": "m", "content": "hi"}]), field="messages[0]"),
    Case("message-missing-id", "a message without an id", 422,
         text(messages=[{"role": "user", "content": "hi"}]), field="messages[0].id"),
    Case("user-content-number", "a number as a user message's content", 422,
         text(messages=[{"id": "m", "role": "user", "content": 5}]), field="messages[0].content"),
    Case("user-content-null", "null as a user message's content", 422,
         text(messages=[{"id": "m", "role": "user", "content": None}]),
         field="messages[0].content"),
    Case("user-part-unknown-type", "a content part of an unknown type", 422,
         text(messages=[{"id": "m", "role": "user", "content": [{"type": "hologram"}]}]),
         field="messages[0].content"),
    Case("user-part-file-handle", "an audio part by a provider's file handle, which the agent "
         "cannot be given", 422,
         text(messages=[{"id": "m", "role": "user", "content": [
             {"type": "audio", "source": {"type": "file", "value": "file-abc"}}]}]),
         field="messages[0].content[0]"),
    Case("user-part-binary-id-only", "a legacy binary part naming only an id", 422,
         text(messages=[{"id": "m", "role": "user", "content": [
             {"type": "binary", "mimeType": "application/pdf", "id": "f1"}]}]),
         field="messages[0].content[0]"),
    Case("tool-result-unknown-call", "a tool result for a call no message made", 422,
         text(messages=[USER, {"id": "t", "role": "tool", "toolCallId": "ghost", "content": "x"}]),
         field="messages[1].toolCallId"),
    Case("tool-result-before-call", "a tool result sent before the call it answers", 422,
         text(messages=[USER, {"id": "t", "role": "tool", "toolCallId": "c1", "content": "x"},
                        ASSISTANT]), field="messages[1].toolCallId"),
    Case("tool-result-image-part", "a tool result given as an image part", 422,
         text(messages=[USER, ASSISTANT, {"id": "t", "role": "tool", "toolCallId": "c1",
                                          "content": [{"type": "image", "source": {
                                              "type": "url", "value": "http://x/y.png"}}]}]),
         field="messages[2].content[0]"),
    Case("tool-calls-object", "an object where the tool call list belongs", 422,
         text(messages=[USER, {**ASSISTANT, "toolCalls": call()}]),
         field="messages[1].toolCalls"),
    Case("tool-call-no-function", "a tool call without its function", 422,
         text(messages=[USER, {**ASSISTANT, "toolCalls": [{"id": "c1", "type": "function"}]}]),
         field="messages[1].toolCalls[0].function"),
    Case("tools-object", "an object where the tool list belongs", 422,
         text(tools={"name": "f"}), field="tools"),
    Case("tools-as-string", "the tool list JSON-encoded as a string", 422, text(tools="[]"),
         field="tools"),
    Case("tool-missing-name", "a client tool without a name", 422,
         text(tools=[{"description": "d", "parameters": {}}]), field="tools[0].name"),
    Case("context-missing-value", "a context item without its value", 422,
         text(context=[{"description": "d"}]), field="context[0].value"),
    Case("context-value-object", "an object where a context value string belongs", 422,
         text(context=[{"description": "d", "value": {"a": 1}}]), field="context[0].value"),
    Case("resume-object", "an object where the resume list belongs", 422,
         text(resume={"interruptId": "x", "status": "resolved"}), field="resume"),
    Case("resume-bad-status", "resume status 'maybe'", 422,
         text(resume=[{"interruptId": "x", "status": "maybe"}]), field="resume[0].status"),
    Case("resume-forged-interrupt-id", "a resume that answers an interrupt the paused thread "
         "does not have", 422, resume({**APPROVE, "interruptId": "apr_forged"}),
         field="resume"),
    Case("resume-payload-missing", "the right interrupt, no payload", 422,
         resume({"interruptId": INTERRUPT, "status": "resolved"}), field="resume[0].payload"),
    Case("resume-approved-as-string", "approved 'true' (a string for a boolean)", 422,
         resume({**APPROVE, "payload": {"approved": "true"}}), field="resume[0].payload"),
    Case("resume-arguments-array", "edited arguments as an array", 422,
         resume({**APPROVE, "payload": {"approved": True, "arguments": [1]}}),
         field="resume[0].payload.arguments"),
    Case("state-nan", "NaN in the state (JSON has none)", 422,
         b'{"threadId":"t","runId":"r","messages":[],"state":{"x":NaN}}', field="state"),
    Case("state-infinity", "1e999 in the state overflows to infinity", 422,
         b'{"threadId":"t","runId":"r","messages":[],"state":{"x":1e999}}', field="state"),
    Case("state-wrong-type", "a state that does not fit the agent's state type", 422,
         text(state={"items": "not a list"}), path="/agents/typed/ag-ui", field="state"),
    Case("state-deeply-nested", "a state nested 300 levels deep (600 bytes): past the depth limit",
         400, text(state={"deep": "@DEEP@"}).replace(b'"@DEEP@"', nested(300).encode())),
    Case("message-lone-surrogate", "an escaped lone surrogate in a message", 400,
         text(messages=[{"id": "m", "role": "user", "content": "\ud800"}])),
    # -- who asks: 401 / 404 ---------------------------------------------------------------
    Case("no-credentials", "no Authorization header", 401, text(), token=None),
    Case("unknown-token", "a bearer token nobody has", 401, text(), token="tok-eve"),
    Case("basic-auth", "Basic instead of Bearer", 401, text(), token=None,
         headers={"authorization": "Basic YW5uOnB3"}),
    Case("unknown-agent", "an agent that does not exist", 404, text(),
         path="/agents/nobody/ag-ui"),
    Case("other-principals-thread", "bob runs on ann's thread", 404, text(thread="ann-thread"),
         token="tok-bob"),
    Case("other-principals-interrupt", "bob answers ann's open interrupt", 404,
         resume(APPROVE), token="tok-bob"),
    # -- sizes and load: 413 / 409 / 429 ---------------------------------------------------
    Case("oversize-body", "a body over max_body", 413,
         text(forwardedProps={"pad": "x" * MAX_BODY})),
    Case("huge-message-string", "a 100 KB message", 413,
         text(messages=[{"id": "m", "role": "user", "content": "x" * 100_000}])),
    Case("too-many-messages", f"{MESSAGES + 1} messages", 413,
         text(messages=[{"id": f"m{i}", "role": "user", "content": "x"}
                        for i in range(MESSAGES + 1)]), field="messages"),
    Case("state-over-limit", "a state over the state_bytes limit", 413,
         text(state={"items": ["x" * STATE_BYTES]}), field="state"),
    Case("thread-running", "a second run on a thread whose run is going, that rejects", 409,
         text(thread="ann-busy", forwardedProps={"doubleTexting": "reject"}), setup="busy"),
    Case("double-texting-unknown", "doubleTexting that is none of the three", 422,
         text(forwardedProps={"doubleTexting": "later"}),
         field="forwardedProps.doubleTexting"),
    Case("too-many-runs", "a third run while ann has two going", 429, text(thread="third"),
         setup="busy2"),
    # -- tolerated on purpose: 200 ---------------------------------------------------------
    Case("unknown-fields-ignored", "unknown fields are ignored (documented)", 200,
         text(futureField={"a": 1}, protocolVersion="1.0")),
    Case("resume-for-no-open-interrupt", "a resume for a thread with no open interrupt is "
         "ignored (the protocol says to go on)", 200,
         dumps(run("ann-thread", resume=[{**APPROVE, "interruptId": "apr_forged"}]))),
    Case("pointer-like-state-keys", "state keys that would be broken JSON Pointers ('/', '~')"
         " are plain keys", 200, text(state={"a/b": {"~x": 1}, "~": [], "items": []})),
]
