"""Events from inside a tool: `ctx.emit`, `ctx.progress`, `ctx.cite`, `ctx.attach_file`, values
an async generator tool yields, and `ctx.forwarded_props`. They reach the run's stream while the
tool runs, from async tools and from sync tools' worker threads alike, and are not shared state."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import jsonpatch
import pytest

from pyox_agents import (
    Agent,
    CustomEvent,
    FileAttached,
    PreliminaryResult,
    Progress,
    RunContext,
    SourceCited,
    StateChanged,
    ToolCall,
    ToolResult,
    tool,
)
from pyox_agents.models import ScriptedModel
from tests.runs import collect, finished, results


def _agent(*tools: Any) -> Agent:
    calls = [ToolCall(t.name, {}, id=f"c-{t.name}") for t in tools]
    return Agent(model=ScriptedModel([calls, "done"]), tools=list(tools))


@pytest.mark.anyio
async def test_an_emitted_event_reaches_the_stream_before_the_tool_result() -> None:
    @tool
    async def announce(ctx: RunContext) -> str:
        ctx.emit("weather", {"city": "Oslo"}, id="w1", transient=True)
        return "ok"

    events = await collect(_agent(announce))
    kinds = [type(e).__name__ for e in events]
    custom = next(e for e in events if isinstance(e, CustomEvent))
    assert custom == CustomEvent("weather", {"city": "Oslo"}, id="w1", transient=True,
                                 call_id="c-announce")
    assert kinds.index("CustomEvent") < kinds.index("ToolResult")


@pytest.mark.anyio
async def test_a_sync_tool_emits_from_its_worker_thread() -> None:
    @tool
    def slow(ctx: RunContext) -> str:
        for i in range(3):
            ctx.emit("tick", i)
        return "ok"

    events = await collect(_agent(slow))
    assert [e.value for e in events if isinstance(e, CustomEvent)] == [0, 1, 2]


@pytest.mark.anyio
async def test_events_of_a_tool_that_fails_stay_emitted_and_change_no_state() -> None:
    @tool
    async def half(ctx: RunContext) -> str:
        ctx.emit("step", "started")
        ctx.state["x"] = 1
        raise RuntimeError("broke")

    events = await collect(_agent(half), state={})
    assert [e.value for e in events if isinstance(e, CustomEvent)] == ["started"]
    assert results(events)["c-half"].error is not None
    assert not [e for e in events if isinstance(e, StateChanged)]
    assert finished(events).state == {}


@pytest.mark.anyio
async def test_progress_sends_the_whole_view_then_patches_that_replay_to_it() -> None:
    @tool
    async def crawl(ctx: RunContext) -> str:
        for done in range(3):
            ctx.progress("crawl", {"done": done, "pages": [f"p{i}" for i in range(done)]})
        return "ok"

    events = await collect(_agent(crawl), state={"kept": True})
    views = [e for e in events if isinstance(e, Progress)]
    assert [v.delta is None for v in views] == [True, False, False]
    assert len({v.id for v in views}) == 1
    content = views[0].content
    for view in views[1:]:
        content = jsonpatch.apply_patch(content, list(view.delta or ()))
        assert content == view.content
    assert finished(events).state == {"kept": True}  # progress is not shared state


@pytest.mark.anyio
async def test_progress_refuses_a_value_that_is_not_json_naming_it() -> None:
    @tool
    async def bad(ctx: RunContext) -> str:
        ctx.progress("crawl", {"when": {1, 2}})
        return "ok"

    events = await collect(_agent(bad))
    error = results(events)["c-bad"].error
    assert error is not None and "ctx.progress('crawl') content" in error and "set" in error


@pytest.mark.anyio
async def test_sources_and_files_reach_the_stream() -> None:
    @tool
    async def research(ctx: RunContext) -> str:
        ctx.cite("https://example.com/a", "A")
        ctx.cite_document("Report", "application/pdf", "report.pdf")
        ctx.attach_file("data:text/plain;base64,aGk=", "text/plain", "hi.txt")
        return "ok"

    events = await collect(_agent(research))
    sources = [e for e in events if isinstance(e, SourceCited)]
    assert [(s.url, s.title) for s in sources] == [("https://example.com/a", "A"), (None, "Report")]
    assert len({s.source_id for s in sources}) == 2
    files = [e for e in events if isinstance(e, FileAttached)]
    assert files == [FileAttached("data:text/plain;base64,aGk=", "text/plain", "hi.txt",
                                  call_id="c-research")]


@pytest.mark.anyio
async def test_an_async_generator_tool_streams_preliminary_results_and_ends_with_the_last() -> None:
    @tool
    async def count(ctx: RunContext) -> AsyncIterator[dict[str, int]]:
        for n in range(1, 4):
            yield {"n": n}

    events = await collect(_agent(count))
    partial = [e.result for e in events if isinstance(e, PreliminaryResult)]
    assert partial == [{"n": 1}, {"n": 2}, {"n": 3}]
    final = next(e for e in events if isinstance(e, ToolResult))
    assert final.result == {"n": 3}


@pytest.mark.anyio
async def test_a_tool_reads_what_the_client_forwarded() -> None:
    seen: list[Any] = []

    @tool
    async def look(ctx: RunContext) -> str:
        seen.append(ctx.forwarded_props)
        return "ok"

    await collect(_agent(look), forwarded_props={"user": {"plan": "pro"}})
    assert seen == [{"user": {"plan": "pro"}}]


def test_emit_outside_a_run_says_where_it_works() -> None:
    from pyox_agents import State

    ctx = RunContext(run_id="r" * 64, conversation=State())
    with pytest.raises(RuntimeError, match="inside a tool of a run"):
        ctx.emit("x", 1)


@pytest.mark.anyio
@pytest.mark.parametrize(("call", "named"), [
    (lambda ctx: ctx.emit("bad\ud800", 1), "ctx.emit name"),
    (lambda ctx: ctx.emit("ok", 1, id="\udfff"), "ctx.emit id"),
    (lambda ctx: ctx.progress("steps\ud800", {}), "ctx.progress kind"),
    (lambda ctx: ctx.cite("https://example.com", "title \ud800"), "ctx.cite title"),
    (lambda ctx: ctx.cite_document("Report", "application/pdf", 7), "ctx.cite_document filename"),
    (lambda ctx: ctx.attach_file("data:,x", "text/plain", "f\udc00.txt"),
     "ctx.attach_file filename"),
])
async def test_a_live_event_with_text_that_is_not_text_is_refused_naming_it(
        call: Any, named: str) -> None:
    """A lone surrogate (or a non-str) where a client reads text is refused at the call, with
    what it was, as everywhere a value enters a run; nothing is sent."""

    @tool
    async def hostile(ctx: RunContext) -> str:
        call(ctx)
        return "ok"

    events = await collect(_agent(hostile))
    error = results(events)["c-hostile"].error
    assert error is not None and named in error
    assert not [e for e in events
                if isinstance(e, CustomEvent | Progress | SourceCited | FileAttached)]
