"""DefaultChatTransport bodies -> Chat + RunRequest, one rule per test."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pyox_agents import Agent, File, Image, Message, ToolCall, tool
from pyox_agents.ai_sdk import parse_request
from pyox_agents.models import ScriptedModel
from pyox_agents.service import Decision, RequestError, ToolOutput

from .helpers import body, user


@tool
def inc(n: int) -> int:
    """Add n."""
    return n


AGENT = Agent(ScriptedModel(["hi"]), tools=[inc])


def parse(raw: bytes, v: int = 7) -> Any:
    return parse_request(raw, AGENT, sdk_version=v)


def assistant(*parts: dict[str, Any], id: str = "a1") -> dict[str, Any]:
    return {"id": id, "role": "assistant", "parts": list(parts)}


def tool_part(state: str, name: str = "inc", call_id: str = "c1", **fields: Any) -> dict:
    return {"type": f"tool-{name}", "toolCallId": call_id, "state": state, "input": {"n": 1},
            **fields}


def test_submit_message_gives_the_user_text() -> None:
    chat, request = parse(body(user("hello")))
    assert chat.id == request.thread_id == "chat-1"
    assert chat.message_id is None and chat.trigger == "submit-message"
    assert request.messages == (Message.user("hello"),)


def test_malformed_json_is_400() -> None:
    with pytest.raises(RequestError, match="not JSON") as caught:
        parse(b"{nope")
    assert caught.value.status == 400


def test_body_that_is_not_an_object_is_400() -> None:
    with pytest.raises(RequestError, match="not an object") as caught:
        parse(b"[1, 2]")
    assert caught.value.status == 400


def test_missing_chat_id_is_422_naming_id() -> None:
    with pytest.raises(RequestError) as caught:
        parse(json.dumps({"messages": []}).encode())
    assert (caught.value.status, caught.value.field) == (422, "id")


def test_messages_that_are_not_a_list_are_422() -> None:
    with pytest.raises(RequestError) as caught:
        parse(json.dumps({"id": "c", "messages": {"a": 1}}).encode())
    assert (caught.value.status, caught.value.field) == (422, "messages")


MALFORMED = [  # (what the body holds, the field the 422 names)
    ({"id": "c", "trigger": "submit-message"}, "messages"),
    ({"id": "c", "messages": []}, "messages"),
    ({"id": "c", "message": "hi"}, "message"),
    ({"id": "c", "messages": [], "message": {"id": "u1", "role": "user"}}, "message.parts"),
    ({"id": "c", "messages": [{"id": "u1", "role": "wizard", "parts": []}]},
     "messages[0].role"),
    ({"id": "c", "messages": [{"id": 5, "role": "user", "parts": []}]}, "messages[0].id"),
    ({"id": "c", "messages": [{"id": "u1", "role": "user", "parts": "hello"}]},
     "messages[0].parts"),
    ({"id": "c", "messages": [{"id": "u1", "role": "user"}]}, "messages[0].parts"),
    ({"id": "c", "messages": [{"id": "u1", "role": "user",
                               "parts": [{"type": "text", "text": 5}]}]},
     "messages[0].parts[0].text"),
    ({"id": "c", "messages": [{"id": "u1", "role": "user",
                               "parts": [{"type": "text", "text": None}]}]},
     "messages[0].parts[0].text"),
    ({"id": "c", "messages": [{"id": "u1", "role": "user", "parts": [5]}]}, "messages[0]"),
    ({"id": "c", "messages": [{"id": "u1", "role": "user", "parts": []}]}, "messages[0]"),
    ({"id": "c", "trigger": "send", "messages": [{"id": "u1", "role": "user",
                                                  "parts": [{"type": "text", "text": "x"}]}]},
     "trigger"),
]


@pytest.mark.parametrize(("sent", "field"), MALFORMED)
def test_a_body_no_ai_client_sends_is_422_naming_the_field(sent: dict[str, Any], field: str
                                                          ) -> None:
    """Rule: bad input gets a clear error naming what was wrong, before any run: a message the
    model would read nothing of is not run on an empty conversation."""
    with pytest.raises(RequestError) as caught:
        parse(json.dumps(sent).encode())
    assert (caught.value.status, caught.value.field) == (422, field)
    assert field.split(".")[0].split("[")[0] in str(caught.value)


def test_the_newest_message_alone_is_read_when_messages_is_empty() -> None:
    sent = {"id": "c", "messages": [], "message": {"id": "u9", "role": "user",
                                                   "parts": [{"type": "text", "text": "hi"}]}}
    _, request = parse(json.dumps(sent).encode())
    assert [(m.role, m.content) for m in request.messages] == [("user", "hi")]


def test_unsupported_sdk_version_is_refused() -> None:
    with pytest.raises(ValueError, match="5, 6 or 7"):
        parse(body(user("x")), v=8)


def test_unknown_parts_and_fields_from_newer_clients_are_ignored() -> None:
    newer = {"id": "u1", "role": "user", "metadata": {"x": 1}, "futureField": True, "parts": [
        {"type": "text", "text": "hi", "state": "done", "providerMetadata": {"p": {}}},
        {"type": "custom", "kind": "acme.thing"},
        {"type": "reasoning-file", "url": "data:,", "mediaType": "text/plain"},
        {"type": "steering-message", "id": "s", "parts": []},
        {"type": "brand-new-part", "whatever": [1, 2]},
        {"no": "type"}, "not an object",
    ]}
    old = assistant({"type": "step-start"}, {"type": "text", "text": "ok"},
                    tool_part("output-available", output=1, toolMetadata={"a": 1},
                              resultProviderMetadata={}, approval={"id": "x", "approved": True,
                                                                   "isAutomatic": False}))
    _, request = parse(body(newer, old, user("more", "u2")))
    assert [m.role for m in request.messages] == ["user", "assistant", "tool", "user"]


def test_regenerate_message_asks_to_regenerate() -> None:
    chat, _ = parse(body(user("x"), trigger="regenerate-message"))
    assert chat.trigger == "regenerate-message"
    assert chat.message_id is None


def test_last_assistant_message_makes_a_continuation_of_it() -> None:
    chat, _ = parse(body(user("x"), assistant({"type": "text", "text": "y"}, id="msg_9")))
    assert chat.message_id == "msg_9"


def test_assistant_steps_become_assistant_and_tool_messages() -> None:
    message = assistant(
        {"type": "step-start"}, {"type": "text", "text": "Let me. "},
        tool_part("output-available", output={"n": 2}),
        tool_part("output-error", call_id="c2", errorText="bad"),
        {"type": "step-start"}, {"type": "reasoning", "text": "hmm"},
        {"type": "text", "text": "Done."},
    )
    _, request = parse(body(user("x"), message, user("y", "u2")))
    one, two = ToolCall("inc", {"n": 1}, id="c1"), ToolCall("inc", {"n": 1}, id="c2")
    assert request.messages[1:5] == (
        Message.assistant("Let me. ", (one, two)),
        Message.tool(one, '{"n":2}'),
        Message.tool(two, "bad", is_error=True),
        Message.assistant("Done."),
    )


def test_text_after_tool_parts_starts_a_new_step_without_step_start() -> None:
    message = assistant(tool_part("output-available", output="r"), {"type": "text", "text": "t"})
    _, request = parse(body(user("x"), message, user("y", "u2")))
    assert [m.role for m in request.messages] == ["user", "assistant", "tool", "assistant", "user"]


def test_denied_tool_part_becomes_a_denied_result() -> None:
    part = tool_part("output-denied", approval={"id": "a", "approved": False, "reason": "no"})
    _, request = parse(body(user("x"), assistant(part), user("y", "u2")))
    assert request.messages[2] == Message.tool(ToolCall("inc", {"n": 1}, id="c1"),
                                               "denied by a person: no", is_error=True)


def test_dynamic_tool_part_is_read_by_its_tool_name() -> None:
    part = {"type": "dynamic-tool", "toolName": "inc", "toolCallId": "c1",
            "state": "output-available", "input": {}, "output": 3}
    _, request = parse(body(user("x"), assistant(part), user("y", "u2")))
    assert request.messages[1].tool_calls[0].name == "inc"


def test_backend_run_parts_are_left_out() -> None:
    nested = tool_part("output-available", call_id="sub", output=1, providerExecuted=True)
    _, request = parse(body(user("x"), assistant(tool_part("output-available", output=1),
                                                  nested), user("y", "u2")))
    assert [c.id for c in request.messages[1].tool_calls] == ["c1"]


def test_user_image_file_part_becomes_an_image() -> None:
    message = {"id": "u1", "role": "user", "parts": [
        {"type": "text", "text": "look"},
        {"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,AA=="},
        {"type": "file", "mediaType": "application/pdf", "url": "https://x/y.pdf"},
    ]}
    _, request = parse(body(message))
    assert request.messages[0].images == (Image("data:image/png;base64,AA==", "image/png"),)


def test_user_file_parts_of_any_other_media_type_become_files_not_dropped() -> None:
    """ai's `FileUIPart`: {type: "file", mediaType, url, filename?}."""
    message = {"id": "u1", "role": "user", "parts": [
        {"type": "text", "text": "look"},
        {"type": "file", "mediaType": "application/pdf", "url": "https://x/y.pdf",
         "filename": "y.pdf"},
        {"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,AA=="},
        {"type": "file", "mediaType": "audio/wav", "url": "data:audio/wav;base64,UklGRg=="},
    ]}
    _, request = parse(body(user("hi", "u0"), message))
    assert request.messages[1].files == (
        File("https://x/y.pdf", "application/pdf", "y.pdf"),
        File("data:audio/wav;base64,UklGRg==", "audio/wav"))
    assert request.part_paths == {(1, "files", 0): "messages[1].parts[1]",
                                  (1, "images", 0): "messages[1].parts[2]",
                                  (1, "files", 1): "messages[1].parts[3]"}


def test_a_file_only_user_message_is_kept() -> None:
    message = {"id": "u1", "role": "user", "parts": [
        {"type": "file", "mediaType": "application/pdf", "url": "https://x/y.pdf"}]}
    _, request = parse(body(message))
    assert request.messages == (Message.user("", File("https://x/y.pdf", "application/pdf")),)


def test_a_file_part_without_url_or_media_type_is_a_422_naming_it() -> None:
    message = {"id": "u1", "role": "user", "parts": [
        {"type": "text", "text": "look"}, {"type": "file", "url": "https://x/y.pdf"}]}
    with pytest.raises(RequestError, match=r"messages\[0\]\.parts\[1\] is a file part "
                                           r"without a url and a mediaType") as caught:
        parse(body(message))
    assert (caught.value.status, caught.value.field) == (422, "messages[0].parts[1]")


def test_state_comes_from_the_state_body_field() -> None:
    _, request = parse(body(user("x"), state={"n": 3}))
    assert request.state == {"n": 3}


def test_state_falls_back_to_the_last_data_state_part() -> None:
    first = assistant({"type": "data-state", "id": "state", "data": {"n": 1}}, id="a1")
    second = assistant({"type": "data-state", "id": "state", "data": {"n": 2}},
                       {"type": "text", "text": "ok"}, id="a2")
    _, request = parse(body(user("x"), first, user("y", "u2"), second, user("z", "u3")))
    assert request.state == {"n": 2}


def test_body_state_wins_over_data_state_parts() -> None:
    old = assistant({"type": "data-state", "id": "state", "data": {"n": 1}})
    _, request = parse(body(user("x"), old, user("y", "u2"), state={"n": 5}))
    assert request.state == {"n": 5}


@pytest.mark.parametrize("extra", [{}, {"state": None}, {"state": {}}])
def test_no_state_or_empty_state_from_a_new_chat_means_the_threads_kept_state(extra: dict
                                                                              ) -> None:
    _, request = parse(body(user("x"), **extra))
    assert request.state == extra.get("state") and not request.saw_thread


def test_the_last_data_state_part_is_the_version_the_client_last_saw() -> None:
    old = assistant({"type": "data-state", "id": "state", "data": {"n": 1}})
    _, request = parse(body(user("x"), old, user("y", "u2"), state={}))
    assert request.state == {} and request.state_seen == {"n": 1} and request.saw_thread


def test_approval_responded_part_gives_a_decision() -> None:
    part = tool_part("approval-responded", approval={"id": "apr_1", "approved": True})
    chat, request = parse(body(user("x"), assistant(part)))
    assert request.decisions == (Decision("apr_1", True, None),)
    assert chat.denied_calls == frozenset()


def test_refusal_reason_is_the_answer_and_the_call_is_marked_denied() -> None:
    part = tool_part("approval-responded",
                     approval={"id": "apr_1", "approved": False, "reason": "too risky"})
    chat, request = parse(body(user("x"), assistant(part)))
    assert request.decisions == (Decision("apr_1", False, "too risky"),)
    assert chat.denied_calls == frozenset({"c1"})


def test_approved_that_is_not_a_bool_is_422_naming_the_field() -> None:
    part = tool_part("approval-responded", approval={"id": "apr_1", "approved": "yes"})
    with pytest.raises(RequestError) as caught:
        parse(body(user("x"), assistant(part)))
    assert caught.value.status == 422
    assert caught.value.field == "messages[1].parts[0].approval.approved"


def test_answered_approvals_of_earlier_messages_are_not_decisions() -> None:
    part = tool_part("output-available", output=1, approval={"id": "apr_0", "approved": True})
    _, request = parse(body(user("x"), assistant(part), user("y", "u2")))
    assert request.decisions == ()


def test_approvals_body_field_answers_for_ai_5() -> None:
    _, request = parse(body(user("x"), assistant({"type": "text", "text": "?"}),
                            approvals=[{"id": "apr_1", "approved": False, "reason": "no"}]), v=5)
    assert request.decisions == (Decision("apr_1", False, "no"),)


def test_outputs_of_tools_the_agent_lacks_are_client_tool_outputs() -> None:
    message = assistant(tool_part("output-available", output=1),
                        tool_part("output-available", name="pick_color", call_id="k1",
                                  output={"color": "red"}),
                        tool_part("output-error", name="pick_color", call_id="k2",
                                  errorText="closed"),
                        tool_part("output-error", name="pick_color", call_id="k3",
                                  errorText=None))  # (it was read as the text "None")
    _, request = parse(body(user("x"), message))
    assert request.tool_outputs == (ToolOutput("k1", {"color": "red"}),
                                    ToolOutput("k2", "closed", is_error=True),
                                    ToolOutput("k3", "the tool failed", is_error=True))


def test_client_tools_body_field_declares_tools_for_the_model() -> None:
    declared = [{"name": "pick_color", "description": "Ask the user for a color",
                 "inputSchema": {"type": "object", "properties": {"hint": {"type": "string"}}}},
                {"name": "inc"}]
    _, request = parse(body(user("x"), clientTools=declared))
    (spec,) = request.client_tools
    assert (spec.name, spec.description) == ("pick_color", "Ask the user for a color")
    assert spec.parameters["properties"] == {"hint": {"type": "string"}}


def test_message_of_a_pre_5_client_is_read_from_content() -> None:
    _, request = parse(body({"id": "u1", "role": "user", "content": "old style"}))
    assert request.messages == (Message.user("old style"),)
