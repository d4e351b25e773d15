"""Property tests: a run's patches, applied in order with jsonpatch, give its final state.

An `Edit` is interpreted against the document as it is when the tool runs (its `route` picks a
container, its `action` what to do there), so every random sequence of edits is valid, and the
same edit can be done on a plain deep copy with ordinary dicts and lists to get the expected
result.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, MutableMapping, MutableSequence, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.lowlevel
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyox_agents import Agent, RunContext, ToolResult, tool
from pyox_agents.models import ScriptedModel, ToolCall

from .runs import collect, finished, replay

KEYS = st.sampled_from(["a", "b", "todos", "x/y", "~t", "a~1b", "/", "~", ""]) | st.text(max_size=4)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5)
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)
DOCUMENTS = st.dictionaries(KEYS, JSON, max_size=5)


@dataclass(frozen=True)
class Edit:
    route: tuple[int, ...]
    action: int
    key: str
    value: Any
    pick: int


EDITS = st.builds(
    Edit,
    route=st.lists(st.integers(0, 7), max_size=3).map(tuple),
    action=st.integers(0, 99),
    key=KEYS,
    value=JSON,
    pick=st.integers(-3, 9),
)


def _is_list(value: Any) -> bool:
    return isinstance(value, MutableSequence | list)


def _children(target: Any) -> list[Any]:
    keys = list(target.keys()) if isinstance(target, Mapping) else range(len(target))
    return [k for k in keys if isinstance(target[k], Mapping) or _is_list(target[k])]


def perform(edit: Edit, root: Any) -> Any:
    """Do `edit` on `root` (a draft view or a plain value); return the new root if replaced."""
    if edit.action >= 95 and isinstance(root, Mapping):
        return {**dict(root.items()), edit.key: copy.deepcopy(edit.value)}
    target = root
    for choice in edit.route:
        children = _children(target)
        if not children:
            break
        target = target[children[choice % len(children)]]
    value = copy.deepcopy(edit.value)
    if isinstance(target, MutableMapping | dict):
        _edit_dict(target, edit, value)
    else:
        _edit_list(target, edit, value)
    return None


def _edit_dict(target: Any, edit: Edit, value: Any) -> None:
    keys = list(target.keys())
    existing = keys[edit.pick % len(keys)] if keys else edit.key
    match edit.action % 6:
        case 0 | 1:
            target[edit.key] = value
        case 2:
            if keys:
                del target[existing]
        case 3:
            target.setdefault(edit.key, value)
        case 4:
            target.pop(existing, None)
        case _:
            target.update({edit.key: value, existing: [copy.deepcopy(value)]})


def _edit_list(target: Any, edit: Edit, value: Any) -> None:
    size = len(target)
    at = edit.pick % size if size else 0
    match edit.action % 11:
        case 0 | 1:
            target.append(value)
        case 2:
            target.insert(edit.pick, value)
        case 3:
            if size:
                target.pop(at)
        case 4:
            if size:
                target.remove(copy.deepcopy(_plain(target[at])))
        case 5:
            target.sort(key=lambda item: json.dumps(_plain(item), sort_keys=True))
        case 6:
            target.reverse()
        case 7:
            target.clear()
        case 8:
            target[at : at + 2] = [value, copy.deepcopy(value)]
        case 9:
            del target[at : at + 1]
        case _:
            target.extend([value, 1])


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if _is_list(value):
        return [_plain(v) for v in value]
    return value


def edit_tool(edits: Sequence[Edit], *, checkpoints: bool) -> Any:
    @tool
    async def edit(ctx: RunContext, index: int) -> str:
        """Do one scripted edit."""
        if checkpoints:
            for _ in range(edits[index].pick % 3):
                await anyio.lowlevel.checkpoint()
        replaced = perform(edits[index], ctx.state)
        if replaced is not None:
            ctx.state = replaced
        return "ok"

    return edit


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=DOCUMENTS, edits=st.lists(EDITS, min_size=1, max_size=8))
def test_patches_replay_to_the_final_state(document: dict[str, Any], edits: list[Edit]) -> None:
    expected = copy.deepcopy(document)
    for item in edits:
        replaced = perform(item, expected)
        if replaced is not None:
            expected = replaced
    script: list[Any] = [ToolCall("edit", {"index": i}) for i in range(len(edits))]
    agent = Agent(
        model=ScriptedModel([*script, "done"]), tools=[edit_tool(edits, checkpoints=False)]
    )
    original = copy.deepcopy(document)

    events = anyio.run(lambda: collect(agent, state=document))
    final = finished(events).state
    assert document == original  # the caller's dict is never changed
    assert final == expected
    assert replay(copy.deepcopy(document), events) == final  # and each event's state on the way


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=DOCUMENTS, edits=st.lists(EDITS, min_size=2, max_size=6))
def test_patches_of_parallel_tools_replay_to_the_final_state(
    document: dict[str, Any], edits: list[Edit]
) -> None:
    calls = [ToolCall("edit", {"index": i}) for i in range(len(edits))]
    agent = Agent(model=ScriptedModel([calls, "done"]), tools=[edit_tool(edits, checkpoints=True)])

    events = anyio.run(lambda: collect(agent, state=document))
    final = finished(events).state
    assert replay(copy.deepcopy(document), events) == final
    for result in (e for e in events if isinstance(e, ToolResult)):
        assert result.error is None or "while this tool ran" in result.error


@settings(max_examples=100, deadline=None)
@given(
    document=st.fixed_dictionaries({"todos": st.lists(JSON, max_size=5)}),
    items=st.lists(JSON, min_size=2, max_size=8),
)
def test_parallel_appends_and_sets_of_distinct_keys_are_all_kept(
    document: dict[str, Any], items: list[Any]
) -> None:
    @tool
    async def add(ctx: RunContext, index: int) -> str:
        """Append an item and set a key of its own."""
        for _ in range(index % 3):
            await anyio.lowlevel.checkpoint()
        ctx.state["todos"].append(items[index])
        ctx.state[f"key{index}"] = index
        return "ok"

    calls = [ToolCall("add", {"index": i}) for i in range(len(items))]
    agent = Agent(model=ScriptedModel([calls, "done"]), tools=[add])
    events = anyio.run(lambda: collect(agent, state=document))
    final = finished(events).state
    assert sorted(map(json.dumps, final["todos"])) == sorted(
        map(json.dumps, document["todos"] + items)
    )
    assert all(final[f"key{i}"] == i for i in range(len(items)))
    assert replay(copy.deepcopy(document), events) == final
