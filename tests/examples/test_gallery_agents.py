"""The seven feature agents of `pyox_agents.examples`, driven over AG-UI as CopilotKit drives
them (the offline demo model, a real server): what a page gets from each."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from pyox_agents.examples import (
    AGENTIC_CHAT,
    AGENTIC_GENERATIVE_UI,
    BACKEND_TOOL_RENDERING,
    HUMAN_IN_THE_LOOP,
    PREDICTIVE_STATE_UPDATES,
    PROGRESS_KIND,
    SHARED_STATE,
    TOOL_BASED_GENERATIVE_UI,
)
from tests.examples.drive import (
    CHANGE_BACKGROUND,
    CONFIRM_CHANGES,
    GENERATE_HAIKU,
    SELECT_STEPS,
    Thread,
)

pytestmark = pytest.mark.anyio

Gallery = Callable[..., Thread]


async def test_agentic_chat_calls_the_pages_tool_and_goes_on_with_its_answer(
        gallery: Gallery) -> None:
    """Agentic chat: "frontend tools from `RunAgentInput.tools` (CopilotKit `useFrontendTool`,
    e.g. `change_background`)"."""
    thread = gallery(AGENTIC_CHAT, tools=[CHANGE_BACKGROUND])
    run = await thread.say("Please change the background to teal")
    [call] = run.calls("change_background")
    assert call["arguments"] == {"background": "teal"}
    assert run.outcome == {"type": "success"} and not run.of("TOOL_CALL_RESULT")
    after = await thread.answer(call["id"], "the background is now teal")
    assert after.text == "Done: the background is now teal"


async def test_agentic_chat_reads_the_pages_context_and_forwarded_props(
        gallery: Gallery) -> None:
    """"`context` from `useAgentContext` in the instructions, `forwardedProps` (CopilotKit's
    `properties`) readable as `ctx.forwarded_props`"."""
    thread = gallery(AGENTIC_CHAT, tools=[CHANGE_BACKGROUND],
                     context=[{"description": "The person's name", "value": "Ada"}],
                     forwarded={"page": "agentic-chat"})
    assert (await thread.say("What is my name?")).text == "Your name is Ada."
    forwarded = await thread.say("What did the page forward?")
    assert forwarded.text == 'The page forwarded {"page": "agentic-chat"}.'


async def test_backend_tool_result_is_json_the_page_parses(gallery: Gallery) -> None:
    """Backend tool rendering: "results are JSON the page parses"."""
    thread = gallery(BACKEND_TOOL_RENDERING)
    run = await thread.say("What's the weather in Paris?")
    [start] = run.of("TOOL_CALL_START")
    assert start["toolCallName"] == "get_weather" and start["parentMessageId"]
    [result] = run.of("TOOL_CALL_RESULT")
    weather = json.loads(result["content"])
    assert weather["city"] == "Paris"
    assert set(weather) == {"city", "temperature", "feels_like", "conditions", "humidity",
                            "wind"}
    assert run.text == f"It's {weather['temperature']}°C and {weather['conditions']} in Paris."


async def test_the_persons_answer_to_a_frontend_question_continues_the_run(
        gallery: Gallery) -> None:
    """Human in the loop with `useHumanInTheLoop`: "a frontend tool the person answers, the run
    continues with the answer"."""
    thread = gallery(HUMAN_IN_THE_LOOP, tools=[SELECT_STEPS])
    run = await thread.say("plan a trip to Mars")
    [call] = run.calls("select_steps")
    steps = call["arguments"]["steps"]
    assert len(steps) == 5 and {s["status"] for s in steps} == {"enabled"}
    steps[1]["status"] = "disabled"
    after = await thread.answer(call["id"], {"accepted": True, "steps": steps})
    assert after.text == ("Going ahead with 4 steps: build the rocket, load the supplies, "
                          "launch, land on Mars.")


@pytest.mark.parametrize(("approved", "said"), [(True, "Done: booked flight PX"),
                                                (False, "The flight was not booked")])
async def test_an_approval_interrupt_resumes_the_same_run(
        gallery: Gallery, approved: bool, said: str) -> None:
    """Human in the loop with `useInterrupt`: "our approval interrupts, resumed with the same
    runId as CopilotKit sends"."""
    thread = gallery(HUMAN_IN_THE_LOOP, tools=[SELECT_STEPS])
    run = await thread.say("book a flight to Paris")
    assert run.outcome["type"] == "interrupt"
    [interrupt] = run.outcome["interrupts"]
    assert interrupt["toolCallId"] == run.calls("book_flight")[0]["id"]
    resumed = await thread.resume(run, {"approved": approved})
    assert resumed.of("RUN_STARTED")[0]["runId"] == run.run_id
    assert resumed.text.startswith(said)
    assert resumed.outcome == {"type": "success"}


async def test_a_tasks_steps_appear_and_complete_live(gallery: Gallery) -> None:
    """Agentic generative UI: "a multi-step task whose steps appear and complete live:
    ctx.progress during one tool -> ACTIVITY events"."""
    thread = gallery(AGENTIC_GENERATIVE_UI)
    run = await thread.say("make pancakes")
    [snapshot] = run.of("ACTIVITY_SNAPSHOT")
    assert snapshot["activityType"] == PROGRESS_KIND
    assert [s["status"] for s in snapshot["content"]["steps"]] == ["pending"] * 5
    content = snapshot["content"]
    seen = []
    import jsonpatch

    for delta in run.of("ACTIVITY_DELTA"):
        assert delta["messageId"] == snapshot["messageId"]
        content = jsonpatch.apply_patch(content, delta["patch"])
        seen.append([s["status"] for s in content["steps"]])
    assert ["done", "in progress", "pending", "pending", "pending"] in seen
    assert seen[-1] == ["done"] * 5
    [result] = run.of("TOOL_CALL_RESULT")
    last_delta = max(i for i, e in enumerate(run.events) if e["type"] == "ACTIVITY_DELTA")
    assert last_delta < run.events.index(result)
    assert not run.of("STATE_DELTA")  # a live view, not shared state


async def test_the_agent_calls_the_pages_haiku_tool_with_the_haiku(gallery: Gallery) -> None:
    """Tool-based generative UI: "a frontend tool with a render (`generate_haiku` style)"."""
    thread = gallery(TOOL_BASED_GENERATIVE_UI, tools=[GENERATE_HAIKU])
    run = await thread.say("Write a haiku about autumn")
    [call] = run.calls("generate_haiku")
    assert call["arguments"]["english"] == ["autumn wind", "the leaves dance down",
                                            "a quiet path"]
    assert len(call["arguments"]["japanese"]) == 3
    after = await thread.answer(call["id"], "shown")
    assert after.text == "Here is your haiku."


async def test_the_shared_list_is_edited_by_both_sides(gallery: Gallery) -> None:
    """Shared state: "the existing todo/cart, edited by both sides"."""
    thread = gallery(SHARED_STATE, state={"todos": [
        {"id": "p1", "text": "walk the dog", "done": True},
        {"id": "p2", "text": "water the plants", "done": False}]})
    await thread.say("clear completed")
    assert [t["text"] for t in thread.state["todos"]] == ["water the plants"]
    thread.state["todos"][0]["done"] = True  # the person ticks it on the page
    await thread.say("add call mom to my list")
    assert [(t["text"], t["done"]) for t in thread.state["todos"]] == [
        ("water the plants", True), ("call mom", False)]


async def test_the_document_is_predicted_from_the_streaming_argument_then_committed(
        gallery: Gallery) -> None:
    """Predictive state updates: "`@tool(predict_state={"document": "text"})` sends
    `CUSTOM{name: "PredictState", value: [{state_key, tool, tool_argument}]}` before that
    tool's argument stream ... the authoritative `STATE_DELTA` follows when the tool
    finishes"."""
    thread = gallery(PREDICTIVE_STATE_UPDATES)
    run = await thread.say("write a story about a lighthouse")
    kinds = [event["type"] for event in run.events]
    predict = next(i for i, e in enumerate(run.events)
                   if e["type"] == "CUSTOM" and e["name"] == "PredictState")
    assert run.events[predict]["value"] == [
        {"state_key": "document", "tool": "write_document", "tool_argument": "text"}]
    assert predict < kinds.index("TOOL_CALL_START") < kinds.index("STATE_DELTA")
    assert len(run.of("TOOL_CALL_ARGS")) > 3
    [call] = run.calls("write_document")
    assert thread.state == {"document": call["arguments"]["text"], "previous": ""}
    assert thread.state["document"].startswith("A story about a lighthouse")


@pytest.mark.parametrize(("kept", "said"), [(True, "Kept: the document is saved."),
                                            (False, "Undone: the document is as it was.")])
async def test_the_person_keeps_or_undoes_the_written_document(
        gallery: Gallery, kept: bool, said: str) -> None:
    """Predictive state updates: "optionally a `confirm_changes` human-in-the-loop step"."""
    thread = gallery(PREDICTIVE_STATE_UPDATES, tools=[CONFIRM_CHANGES], state={"document": ""})
    run = await thread.say("write a story about a lighthouse")
    [confirm] = run.calls("confirm_changes")
    written = thread.state["document"]
    assert written.startswith("A story about a lighthouse")
    after = await thread.answer(confirm["id"], {"accepted": kept})
    assert after.text == said
    assert thread.state == ({"document": written, "previous": ""} if kept else
                            {"document": "", "previous": None})
