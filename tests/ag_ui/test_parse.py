"""parse_request(): a RunAgentInput body -> RunRequest, and the 400/422 answers to bad input."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pyox_agents import Agent, ApprovalRequested, RunContext, State, tool
from pyox_agents.adapters.ag_ui import upgrade_binary_parts
from pyox_agents.ag_ui import parse_request
from pyox_agents.models import ScriptedModel
from pyox_agents.service import Decision, RequestError, ToolOutput
from pyox_agents.state.messages import File, Image, Message, ToolCall
from pyox_agents.stores import MemoryStore
from tests.ag_ui.helpers import THREAD

pytestmark = pytest.mark.anyio

AGENT = Agent(ScriptedModel(["hi"]))
USER = {"id": "u1", "role": "user", "content": "hello"}


def body(**fields: Any) -> bytes:
    data: dict[str, Any] = {"threadId": THREAD, "runId": "r1", "messages": [USER]}
    data.update(fields)
    return json.dumps(data).encode()


def refused(raw: bytes, agent: Agent = AGENT) -> RequestError:
    with pytest.raises(RequestError) as caught:
        parse_request(raw, agent)
    return caught.value


def test_malformed_json_is_a_400() -> None:
    error = refused(b'{"threadId": ')
    assert error.status == 400 and "not JSON" in str(error)


def test_a_json_value_that_is_not_an_object_is_a_422_naming_the_body() -> None:
    error = refused(b"[1, 2]")
    assert (error.status, error.field) == (422, "body")


def test_a_missing_field_is_a_422_naming_it() -> None:
    error = refused(json.dumps({"threadId": "t", "messages": []}).encode())
    assert (error.status, error.field) == (422, "runId")


def test_an_invalid_message_is_a_422_naming_its_index_and_field() -> None:
    error = refused(body(messages=[USER, {"id": "u2", "role": "user"}]))
    assert (error.status, error.field) == (422, "messages[1].content")


def test_unknown_extra_fields_are_ignored() -> None:
    run_input, request = parse_request(body(somethingNew={"x": 1}, forwardedProps={"a": 1}), AGENT)
    assert request.thread_id == THREAD and run_input.forwarded_props == {"a": 1}


@pytest.mark.parametrize("state", [None, {}])
def test_an_absent_or_empty_state_from_a_new_page_means_the_threads_kept_state(state: Any) -> None:
    raw = body() if state is None else body(state=state)
    request = parse_request(raw, AGENT)[1]
    assert request.state == state and not request.saw_thread  # the service keeps it so


def test_a_client_with_an_assistant_message_has_seen_the_threads_state() -> None:
    reply = {"id": "a1", "role": "assistant", "content": "hi"}
    request = parse_request(body(messages=[USER, reply, USER], state={}), AGENT)[1]
    assert request.state == {} and request.saw_thread  # its {} is a cleared state


def test_a_given_state_is_passed_on() -> None:
    assert parse_request(body(state={"todos": [1]}), AGENT)[1].state == {"todos": [1]}


def test_the_whole_history_becomes_runtime_messages() -> None:
    messages = [
        {"id": "s", "role": "system", "content": "be brief"},
        {"id": "d", "role": "developer", "content": "dev note"},
        USER,
        {"id": "a", "role": "assistant", "content": "checking",
         "toolCalls": [{"id": "c1", "type": "function",
                        "function": {"name": "look", "arguments": '{"q":"x"}'}}]},
        {"id": "t", "role": "tool", "toolCallId": "c1", "content": "found"},
        {"id": "a2", "role": "assistant", "content": "done"},
    ]
    request = parse_request(body(messages=messages), AGENT)[1]
    call = ToolCall("look", {"q": "x"}, id="c1")
    assert request.messages == (
        Message.system("be brief"), Message.system("dev note"), Message.user("hello"),
        Message.assistant("checking", (call,)), Message.tool(call, "found"),
        Message.assistant("done"))


def test_text_and_image_parts_become_text_and_images() -> None:
    content = [{"type": "text", "text": "what is"}, {"type": "text", "text": "this?"},
               {"type": "image", "source": {"type": "data", "value": "AAAA",
                                            "mimeType": "image/jpeg"}},
               {"type": "image", "source": {"type": "url", "value": "https://x.test/a.png"}}]
    request = parse_request(body(messages=[{"id": "u", "role": "user", "content": content}]),
                            AGENT)[1]
    assert request.messages == (Message.user("what is\nthis?",
                                             Image("data:image/jpeg;base64,AAAA", "image/jpeg"),
                                             Image("https://x.test/a.png", "image/png")),)


def test_document_audio_and_video_parts_become_files_with_their_paths() -> None:
    content = [{"type": "text", "text": "read"},
               {"type": "document", "source": {"type": "url", "value": "https://x.test/a.pdf"},
                "metadata": {"filename": "a.pdf"}},
               {"type": "image", "source": {"type": "url", "value": "https://x.test/a.png"}},
               {"type": "audio", "source": {"type": "data", "value": "UklGRg==",
                                            "mimeType": "audio/wav"}},
               {"type": "video", "source": {"type": "url", "value": "https://x.test/v",
                                            "mimeType": "video/mp4"}}]
    request = parse_request(body(messages=[USER, {"id": "u", "role": "user",
                                                  "content": content}]), AGENT)[1]
    assert request.messages[1] == Message.user(
        "read", Image("https://x.test/a.png", "image/png"),
        File("https://x.test/a.pdf", "application/pdf", "a.pdf"),
        File("data:audio/wav;base64,UklGRg==", "audio/wav"),
        File("https://x.test/v", "video/mp4"))
    assert request.part_paths == {(1, "files", 0): "messages[1].content[1]",
                                  (1, "images", 0): "messages[1].content[2]",
                                  (1, "files", 1): "messages[1].content[3]",
                                  (1, "files", 2): "messages[1].content[4]"}


def test_a_url_part_whose_media_type_cannot_be_told_is_a_422_asking_for_it() -> None:
    content = [{"type": "document", "source": {"type": "url", "value": "https://x.test/doc"}}]
    error = refused(body(messages=[{"id": "u", "role": "user", "content": content}]))
    assert (error.status, error.field) == (422, "messages[0].content[0].source.mimeType")


def test_a_legacy_binary_part_is_read_as_its_media_part_leaving_the_body_as_it_was() -> None:
    """@ag-ui/core 0.0.59: `binary` {mimeType, id?, url?, data?, filename?}."""
    content = [{"type": "binary", "mimeType": "image/png", "data": "AAAA"},
               {"type": "binary", "mimeType": "text/csv", "url": "https://x.test/t.csv",
                "filename": "t.csv"}]
    raw = {"threadId": THREAD, "runId": "r1", "messages": [
        {"id": "u", "role": "user", "content": content}]}
    kept = json.loads(json.dumps(raw))
    upgraded = upgrade_binary_parts(raw)
    assert raw == kept and upgraded["messages"][0]["content"] == [
        {"type": "image", "source": {"type": "data", "value": "AAAA", "mimeType": "image/png"}},
        {"type": "document", "source": {"type": "url", "value": "https://x.test/t.csv",
                                        "mimeType": "text/csv"},
         "metadata": {"filename": "t.csv"}}]
    request = parse_request(json.dumps(raw).encode(), AGENT)[1]
    assert request.messages[0] == Message.user(
        "", Image("data:image/png;base64,AAAA", "image/png"),
        File("https://x.test/t.csv", "text/csv", "t.csv"))


def test_a_part_the_agent_cannot_be_given_is_a_422_naming_it() -> None:
    """A provider's file handle names bytes only that provider can read: refused, not dropped.
    (Audio by URL, refused here before, is now taken when the agent's model takes it:
    tests/test_multimodal.py.)"""
    content = [{"type": "audio", "source": {"type": "file", "value": "file-abc123"}}]
    error = refused(body(messages=[{"id": "u", "role": "user", "content": content}]))
    assert (error.status, error.field) == (422, "messages[0].content[0]")
    assert "file source" in str(error) and "data source or a url source" in str(error)


def test_a_tool_result_for_no_known_call_is_a_422() -> None:
    error = refused(body(messages=[USER, {"id": "t", "role": "tool", "toolCallId": "nope",
                                          "content": "x"}]))
    assert (error.status, error.field) == (422, "messages[1].toolCallId")


def test_tool_messages_are_the_clients_tool_outputs() -> None:
    messages = [USER, {"id": "a", "role": "assistant", "toolCalls": [
        {"id": "c1", "type": "function", "function": {"name": "pick", "arguments": "{}"}}]},
        {"id": "t", "role": "tool", "toolCallId": "c1", "content": "blue"},
        {"id": "t2", "role": "tool", "toolCallId": "c1", "content": "", "error": "no screen"}]
    request = parse_request(body(messages=messages), AGENT)[1]
    assert request.tool_outputs == (ToolOutput("c1", "blue"),
                                    ToolOutput("c1", "no screen", is_error=True))


def test_reasoning_activity_and_subagent_messages_are_not_the_conversations() -> None:
    messages = [USER, {"id": "r", "role": "reasoning", "content": "hmm"},
                {"id": "x", "role": "activity", "activityType": "plan", "content": {}},
                {"id": "s", "role": "assistant", "content": "inner", "subagentRunId": "sub"}]
    assert parse_request(body(messages=messages), AGENT)[1].messages == (Message.user("hello"),)


def test_frontend_tools_become_client_tools() -> None:
    tools = [{"name": "pick_color", "description": "Ask the user for a color",
              "parameters": {"type": "object", "properties": {"hint": {"type": "string"}}}},
             {"name": "beep", "description": "Beep"}]
    specs = parse_request(body(tools=tools), AGENT)[1].client_tools
    assert [(s.name, s.description) for s in specs] == [("pick_color", "Ask the user for a color"),
                                                        ("beep", "Beep")]
    assert specs[0].parameters["properties"] == {"hint": {"type": "string"}}
    assert specs[1].parameters == {"type": "object", "properties": {}}


def test_context_becomes_description_colon_value_lines() -> None:
    context = [{"description": "page", "value": "/cart"}, {"description": "user", "value": "Ann"}]
    assert parse_request(body(context=context), AGENT)[1].context == ("page: /cart", "user: Ann")


# -- resume ------------------------------------------------------------------------------------


@tool(approval=True)
def delete(ctx: RunContext, name: str) -> str:
    """Delete a file."""
    return f"deleted {name}"


@tool
async def book(ctx: RunContext, city: str) -> str:
    """Book a trip, asking for the dates."""
    schema = {"type": "object", "properties": {"from": {"type": "string"}}, "required": ["from"]}
    dates = await ctx.ask_person(f"Which dates in {city}?", schema=schema)
    return f"booked {dates}"


async def paused(call: ToolCall) -> tuple[Agent, str]:
    """An agent whose thread THREAD waits for a person; the open request's id."""
    agent = Agent(ScriptedModel([call, "ok"]), tools=[delete, book], store=MemoryStore())
    result = await agent.arun(State(id=THREAD, messages=[Message.user("go")]))
    [event] = [e for e in result.events if isinstance(e, ApprovalRequested)]
    return agent, event.request.id


def resume(interrupt_id: str, **entry: Any) -> bytes:
    return body(resume=[{"interruptId": interrupt_id, "status": "resolved", **entry}])


async def test_an_approval_answered_yes_is_an_approving_decision() -> None:
    agent, rid = await paused(ToolCall("delete", {"name": "a"}))
    request = parse_request(resume(rid, payload={"approved": True}), agent)[1]
    assert request.decisions == (Decision(rid, approve=True),)


async def test_an_approval_with_edited_arguments_carries_them() -> None:
    agent, rid = await paused(ToolCall("delete", {"name": "a"}))
    raw = resume(rid, payload={"approved": True, "arguments": {"name": "b"}})
    assert parse_request(raw, agent)[1].decisions == (Decision(rid, True, arguments={"name": "b"}),)


async def test_an_approval_answered_no_denies() -> None:
    agent, rid = await paused(ToolCall("delete", {"name": "a"}))
    raw = resume(rid, payload={"approved": False, "arguments": {"name": "b"}})
    assert parse_request(raw, agent)[1].decisions == (Decision(rid, approve=False),)


async def test_a_cancelled_interrupt_denies_as_dismissed() -> None:
    """A "cancelled" interrupt is set aside, not answered: it denies, marked dismissed (so a
    regenerate sent with it branches, while an explicit "no" with an old history resumes)."""
    agent, rid = await paused(ToolCall("delete", {"name": "a"}))
    raw = body(resume=[{"interruptId": rid, "status": "cancelled"}])
    assert parse_request(raw, agent)[1].decisions == (
        Decision(rid, approve=False, dismissed=True),)


@pytest.mark.parametrize("entry", [{}, {"payload": None}, {"payload": {"approved": "yes"}},
                                   {"payload": {"ok": True}}, {"payload": True},
                                   {"payload": {"approved": True, "arguments": [1]}}])
async def test_a_missing_or_invalid_approval_payload_is_a_422_naming_the_interrupt(
        entry: dict[str, Any]) -> None:
    agent, rid = await paused(ToolCall("delete", {"name": "a"}))
    error = refused(resume(rid, **entry), agent)
    assert error.status == 422 and rid in str(error)
    assert error.field is not None and error.field.startswith("resume[0].payload")


async def test_an_ask_person_answer_that_fits_its_schema_is_the_answer() -> None:
    agent, rid = await paused(ToolCall("book", {"city": "Oslo"}))
    request = parse_request(resume(rid, payload={"from": "May 1"}), agent)[1]
    assert request.decisions == (Decision(rid, approve=True, answer={"from": "May 1"}),)


async def test_an_ask_person_answer_without_a_payload_is_a_422() -> None:
    """(An answer that does not fit its schema is refused where the run resumes, on every path:
    tests/test_answer_schema.py.)"""
    agent, rid = await paused(ToolCall("book", {"city": "Oslo"}))
    error = refused(resume(rid), agent)
    assert (error.status, error.field) == (422, "resume[0].payload") and rid in str(error)


async def test_a_resume_that_leaves_the_open_interrupt_unanswered_is_a_422() -> None:
    agent, rid = await paused(ToolCall("delete", {"name": "a"}))
    error = refused(resume("apr_other", payload={"approved": True}), agent)
    assert (error.status, error.field) == (422, "resume") and rid in str(error)


async def test_resume_entries_for_a_thread_with_nothing_open_are_ignored() -> None:
    agent = Agent(ScriptedModel(["hi"]), store=MemoryStore())
    request = parse_request(resume("apr_gone", payload={"approved": True}), agent)[1]
    assert request.decisions == ()
