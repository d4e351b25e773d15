"""The rules for what is JSON, the same at every entry: a run's state, a tool's write, a model's
text and arguments, a State's messages and a store's rows.

A lone surrogate (what `surrogateescape` decoding makes of a file name) is not text, and JSON
nested past `MAX_DEPTH` levels breaks a parser or serializer somewhere between here and a
browser: both are refused where they enter, with the path, or (from a model) replaced or turned
into an error result the model reads.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyox_agents import Agent, RunContext, StateChanged, ToolResult, tool
from pyox_agents.events import RunFinished, RunStarted, TextDelta, ToolCallEnded
from pyox_agents.models import ScriptedModel, ToolCall
from pyox_agents.state.conversation import State
from pyox_agents.state.frozen import MAX_DEPTH, freeze
from pyox_agents.state.messages import Image, Message, Reply
from pyox_agents.state.shared import Refused, SharedState, json_size
from pyox_agents.stores import MemoryStore, SQLiteStore
from tests.runs import collect, deltas, finished, replay, results

pytestmark = pytest.mark.anyio

SURROGATE = "report-\udcff.txt"  # os.fsdecode(b"report-\xff.txt")


def nested(levels: int, leaf: Any = 1) -> Any:
    """A value `levels` deep (a scalar is 1 level): {"a": {"a": ... leaf}}."""
    value = leaf
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def writer(value: Any, key: str = "x") -> Any:
    @tool
    def write(ctx: RunContext) -> str:
        """Write the value."""
        ctx.state[key] = value
        return "written"

    return write


async def run_writer(value: Any, key: str = "x", store: Any = None, state: Any = None,
                     thread: State | None = None) -> list[Any]:
    agent = Agent(model=ScriptedModel([ToolCall("write", {}), "done"]),
                  tools=[writer(value, key)], store=store)
    return await collect(agent, thread or "go", state={} if state is None else state)


def the_error(events: list[Any]) -> str:
    (result,) = [e for e in events if isinstance(e, ToolResult)]
    assert result.error is not None, result
    return str(result.error)


# -- lone surrogates -------------------------------------------------------------------------


async def test_lone_surrogate_written_by_a_tool_is_refused_with_its_path() -> None:
    events = await run_writer({"name": SURROGATE})
    error = the_error(events)
    assert 'ctx.state["x"]["name"]' in error and "lone surrogate" in error
    assert not deltas(events) and finished(events).state == {}


async def test_lone_surrogate_in_a_key_is_refused_with_its_path() -> None:
    events = await run_writer({SURROGATE: 1})
    assert 'ctx.state["x"] has the key' in the_error(events)
    assert not deltas(events)


async def test_refused_surrogate_leaves_a_sqlite_thread_usable(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    thread = State(messages=[Message.user("list the files")])
    first = await run_writer(SURROGATE, store=store, thread=thread)
    assert "lone surrogate" in the_error(first)
    loaded = await store.aload(thread.id)
    loaded.add_message(Message.user("again"))
    second = await run_writer("fine", store=store, thread=loaded)
    assert finished(second).state == {"x": "fine"}


def test_initial_state_with_a_lone_surrogate_is_a_type_error_naming_the_path() -> None:
    agent = Agent(model=ScriptedModel(["done"]))
    with pytest.raises(TypeError, match=r'state\["files"\]\[0\] is a str that holds a lone'):
        agent.run("go", state={"files": [SURROGATE]})


async def test_model_text_and_arguments_with_lone_surrogates_get_u_fffd(tmp_path: Path) -> None:
    seen: list[str] = []

    @tool
    def open_file(name: str) -> str:
        """Open a file."""
        seen.append(name)
        return "opened"

    reply = Reply(text="see \udcff", tool_calls=(
        ToolCall("open_file", {}, id="c1", raw_arguments='{"name": "a\\udcffb"}'),))
    agent = Agent(model=ScriptedModel([reply, "done \ud800"]), tools=[open_file],
                  store=SQLiteStore(tmp_path / "s.db"))
    events = await collect(agent)
    assert seen == ["a\ufffdb"]
    text = "".join(e.delta for e in events if isinstance(e, TextDelta))
    assert "\udcff" not in text and "\ufffd" in text
    (ended,) = [e for e in events if isinstance(e, ToolCallEnded)]
    assert ended.arguments == {"name": "a\ufffdb"}
    assert isinstance(events[-1], RunFinished) and events[-1].outcome != "error"
    json.dumps([str(e) for e in events], ensure_ascii=False).encode("utf-8")


# -- nesting -----------------------------------------------------------------------------------


@pytest.mark.parametrize("levels", [65, 300, 490, 1_000])
async def test_tool_write_past_the_depth_limit_is_refused_with_path_and_limit(
        levels: int) -> None:
    events = await run_writer(nested(levels))
    error = the_error(events)
    assert error.startswith('ctx.state["x"]["a"]') and f"at most {MAX_DEPTH}" in error
    assert not deltas(events)
    done = finished(events)
    assert done.state == {} and done.outcome != "error"


async def test_tool_write_up_to_the_depth_limit_is_kept() -> None:
    value = nested(MAX_DEPTH - 1)  # at state["x"]: MAX_DEPTH levels in the state
    events = await run_writer(value)
    assert finished(events).state == {"x": value}
    assert replay({}, events) == {"x": value}


async def test_nesting_built_one_write_at_a_time_stops_at_the_limit() -> None:
    @tool
    def dig(ctx: RunContext) -> str:
        """Dig deeper and deeper."""
        place = ctx.state
        for _ in range(200):
            place["a"] = {}
            place = place["a"]
        return "dug"

    agent = Agent(model=ScriptedModel([ToolCall("dig", {}), "done"]), tools=[dig])
    events = await collect(agent, state={})
    assert f"at most {MAX_DEPTH} levels" in the_error(events)
    assert not deltas(events) and finished(events).state == {}


async def test_moving_a_deep_part_deeper_is_refused_at_the_commit() -> None:
    @tool
    def move(ctx: RunContext) -> str:
        """Put the deep part under itself."""
        place = ctx.state
        for _ in range(10):
            place = place["a"]
        place["b"] = ctx.state["deep"]
        return "moved"

    state = {"a": nested(20), "deep": nested(MAX_DEPTH - 2)}
    agent = Agent(model=ScriptedModel([ToolCall("move", {}), "done"]), tools=[move])
    events = await collect(agent, state=state)
    error = the_error(events)
    assert "/a/a/a/a/a/a/a/a/a/a/b" in error and f"deeper than {MAX_DEPTH} levels" in error
    assert not deltas(events) and finished(events).state == state


def test_initial_state_past_the_limit_is_a_type_error_not_a_recursion_error() -> None:
    agent = Agent(model=ScriptedModel(["done"]))
    with pytest.raises(TypeError, match=rf'state\["a"\].* is nested 65 levels deep.*{MAX_DEPTH}'):
        agent.run("go", state=nested(1_000))


def test_extra_data_past_the_limit_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r'extra_data\["a"\].*at most 64 levels'):
        State(extra_data=nested(1_000))


async def test_model_arguments_past_the_limit_give_an_error_result_and_the_run_goes_on() -> None:
    called: list[Any] = []

    @tool
    def take(value: Any) -> str:
        """Take a value."""
        called.append(value)
        return "taken"

    deep = json.dumps({"value": nested(MAX_DEPTH)})
    agent = Agent(model=ScriptedModel([ToolCall("take", {}, id="c1", raw_arguments=deep),
                                       "done"]), tools=[take])
    events = await collect(agent)
    error = results(events)["c1"].error
    assert error is not None and f"deeper than {MAX_DEPTH} levels" in error
    assert not called and finished(events).answer == "done"


# -- the commit keeps the limits a request's state is held to -------------------------------


def test_commit_over_max_bytes_is_refused_and_changes_nothing() -> None:
    shared = SharedState({"items": []}, max_bytes=100)
    draft = shared.draft("t")
    draft.root["items"].append("x" * 200)
    with pytest.raises(Refused, match=r"max_state_bytes\) is 100"):
        shared.commit(draft)
    assert shared.value == {"items": []} and shared.version == 0


def test_many_small_commits_stop_exactly_at_max_bytes() -> None:
    limit = 2_000
    shared = SharedState({"items": []}, max_bytes=limit)
    refused = 0
    for index in range(500):
        draft = shared.draft("t")
        draft.root["items"].append(f"item {index}")
        if index % 3 == 0 and len(shared.value["items"]):  # type: ignore[arg-type,index]
            del draft.root["items"][0]
        try:
            shared.commit(draft)
        except Refused:
            refused += 1
        assert json_size(shared.value) <= limit
    assert refused and json_size(shared.value) > limit - 20


def test_commit_failing_the_state_type_is_refused_naming_the_field() -> None:
    class Todos(pydantic.BaseModel, extra="forbid"):
        items: list[str] = []

    shared = SharedState({"items": []}, state_type=Todos)
    draft = shared.draft("t")
    draft.root["owner"] = "ann"
    with pytest.raises(Refused, match=r"state_type Todos \(owner: Extra inputs"):
        shared.commit(draft)
    assert shared.value == {"items": []} and shared.version == 0


async def test_agent_state_type_refuses_a_tool_commit_with_an_error_result() -> None:
    class Todos(pydantic.BaseModel):
        items: list[str] = []

    agent = Agent(model=ScriptedModel([ToolCall("write", {}), "done"]),
                  tools=[writer(3, "items")], state_type=Todos)
    events = await collect(agent, state={"items": []})
    assert "items: Input should be a valid list" in the_error(events)
    assert not deltas(events) and finished(events).state == {"items": []}


# -- seed 000: State, its messages and the stores --------------------------------------------


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_every_store_round_trips_a_state_with_a_lone_surrogate(kind: str,
                                                               tmp_path: Path) -> None:
    """Seed 000: "State(history=snapshot.history) rebuilds the same value, and so does a
    store": a State the constructor accepts (here a message naming a file whose name
    surrogateescape decoded) is saved and loaded back the same by every store."""
    store = MemoryStore() if kind == "memory" else SQLiteStore(tmp_path / "s.db")
    state = State(messages=[Message.user(f"open {SURROGATE}")])
    state.add_message(Message.user(f"and {SURROGATE}"))
    store.save(state)
    loaded = store.load(state.id)
    assert [m.content for m in loaded.messages] == [m.content for m in state.messages]
    assert loaded.history == state.history


def test_add_message_refuses_images_that_are_not_images() -> None:
    """Seed 000, add_message: "ValueError: message is not a user message, has blocks other
    than text and images, or has no text and no image"."""
    state = State()
    with pytest.raises(ValueError, match=r"images\[0\] is a str, not an Image"):
        state.add_message(Message(role="user", content="look",
                                  images=("https://x/y.png",)))  # type: ignore[arg-type]
    assert state.history == ()


def test_add_message_without_text_is_a_value_error() -> None:
    """Seed 000, add_message: "ValueError: ... or has no text and no image"."""
    with pytest.raises(ValueError, match="whose text is a NoneType, not a str"):
        State().add_message(Message(role="user", content=None))  # type: ignore[arg-type]


def test_constructor_refuses_messages_with_images_that_are_not_images() -> None:
    with pytest.raises(TypeError, match=r"messages\[0\]\.images\[0\] must be an Image"):
        State(messages=[Message(role="user", content="x", images=("u",))])  # type: ignore[arg-type]
    State(messages=[Message.user("x", Image(url="https://x/y.png"))])


def test_history_after_construction_is_oldest_first() -> None:
    """Seed 000, history: "Everything that happened, oldest first"."""
    state = State(messages=[Message.user("hi")], extra_data={"repo": "api"})
    kinds = [entry.kind for entry in state.history]
    assert kinds == ["import", "extra_data"]
    stamps = [entry.at for entry in state.history]
    assert stamps == sorted(stamps)


# -- properties ------------------------------------------------------------------------------

HOSTILE = st.sampled_from(["\udcff", "\ud800", "\udfff", "\x00", "\\", '"', "\u2028", "~1",
                           "/", "\U0001f600", "\ud83d\ude00", "é"])
TEXT = st.lists(st.one_of(HOSTILE, st.text(max_size=3)), max_size=4).map("".join)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False,
                    allow_infinity=False), TEXT)
DOCS = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)), max_leaves=12)


@st.composite
def documents(draw: st.DrawFn) -> Any:
    """Random JSON with hostile strings, sometimes wrapped to a depth around the limit."""
    doc = draw(DOCS)
    if draw(st.booleans()):
        doc = nested(draw(st.integers(MAX_DEPTH - 3, MAX_DEPTH + 3)), doc)
    return {"doc": doc}


def _is_text(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 1


def _acceptable(value: Any) -> bool:
    return _is_text(value) and _depth(value) <= MAX_DEPTH


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents())
def test_run_state_is_accepted_or_refused_with_its_path(doc: Any) -> None:
    agent = Agent(model=ScriptedModel(["done"]))
    if _acceptable(doc):
        assert agent.run("go", state=doc).state == doc
        return
    with pytest.raises(TypeError, match=rf'^state\["doc"\].*(lone surrogate|at most {MAX_DEPTH})'):
        agent.run("go", state=doc)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents())
def test_tool_write_is_kept_or_refused_with_its_path(doc: Any, tmp_path_factory: Any) -> None:
    store = SQLiteStore(tmp_path_factory.mktemp("db") / "s.db")
    agent = Agent(model=ScriptedModel([ToolCall("write", {}), "done"]),
                  tools=[writer(doc["doc"], "doc")], store=store)
    thread = State(messages=[Message.user("go")])
    result = agent.run(thread, state={})
    refused = [e for e in result.events if isinstance(e, ToolResult) and e.error]
    if _acceptable(doc):
        assert not refused and result.state == doc
        assert [e.state for e in result.events if isinstance(e, StateChanged)] == [doc]
    else:
        assert refused and str(refused[0].error).startswith('ctx.state["doc"]')
        assert result.state == {}
    assert store.load(thread.id).history == thread.history


def test_freeze_never_raises_recursion_error() -> None:
    for levels in (MAX_DEPTH, MAX_DEPTH + 1, 5_000):
        value: Any = 1
        for _ in range(levels - 1):
            value = [value]
        if levels <= MAX_DEPTH:
            assert freeze(value) == value
        else:
            with pytest.raises(TypeError, match="levels deep"):
                freeze(value)


def test_the_not_json_messages_still_name_what_to_use() -> None:
    with pytest.raises(TypeError, match=r'state\["when"\] is a datetime.*isoformat'):
        freeze({"when": datetime.datetime(2020, 1, 1)})


@pytest.mark.parametrize("value", [SURROGATE, {"files": [SURROGATE]}, nested(MAX_DEPTH + 1)])
async def test_tool_result_that_is_not_json_is_an_error_result_and_the_run_goes_on(
        value: Any) -> None:
    @tool
    def read() -> Any:
        """Return the value."""
        return value

    agent = Agent(model=ScriptedModel([ToolCall("read", {}), "done"]), tools=[read])
    events = await collect(agent)
    assert the_error(events).startswith("the result")
    assert finished(events).answer == "done"


async def test_tool_error_quoting_a_lone_surrogate_is_kept_with_u_fffd(
        tmp_path: Path) -> None:
    @tool
    def open_file() -> str:
        """Open the file."""
        raise ValueError(f"cannot open {SURROGATE}")

    store = SQLiteStore(tmp_path / "s.db")
    agent = Agent(model=ScriptedModel([ToolCall("open_file", {}), "done"]), tools=[open_file],
                  store=store)
    thread = State(messages=[Message.user("go")])
    events = await collect(agent, thread)
    assert the_error(events) == ("the tool failed with an unexpected ValueError; the server's "
                                 "log has the details")
    assert finished(events).answer == "done"
    assert store.load(thread.id).history == thread.history
    run_id = next(e.run_id for e in events if isinstance(e, RunStarted))
    [step] = [s for s in store.load_run(run_id).steps if s.kind == "tool"]
    assert step.error is not None
    assert step.error.message == "ValueError: cannot open report-\ufffd.txt"
