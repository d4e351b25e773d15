"""One helper for each shared rule: the id rule, and the wording of pydantic's errors."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pyox_agents
from pyox_agents.state._depth import deep_path, deeper_than
from pyox_agents.state._ids import ID_RULE, is_id
from pyox_agents.state._validation import describe_problems, validation_problems
from pyox_agents.state.conversation import State

PACKAGE = Path(pyox_agents.__file__).parent
HELPERS = {PACKAGE / "state" / "_validation.py", PACKAGE / "state" / "_ids.py",
           PACKAGE / "state" / "_depth.py"}
ID_PATTERN = "[A-Za-z0-9_-]{1,128}"


def _modules(*folders: str) -> list[Path]:
    roots = [PACKAGE / folder for folder in folders] or [PACKAGE]
    return sorted(p for root in roots for p in root.rglob("*.py") if p not in HELPERS)


def _formats_pydantic_errors(path: Path) -> bool:
    """Whether `path` reads a ValidationError's `.errors()` itself."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
               and node.func.attr == "errors" and not node.args
               for node in ast.walk(ast.parse(path.read_text())))


def _writes_the_id_pattern(path: Path) -> bool:
    return any(isinstance(node, ast.Constant) and node.value == ID_PATTERN
               for node in ast.walk(ast.parse(path.read_text())))


def _walks_json_levels(path: Path) -> bool:
    """Whether `path` walks a JSON value's levels itself: `x.values() if isinstance(x, dict)
    else x`, the step of a depth count."""
    return any(isinstance(node, ast.IfExp) and isinstance(node.body, ast.Call)
               and isinstance(node.body.func, ast.Attribute) and node.body.func.attr == "values"
               and isinstance(node.test, ast.Call) and getattr(node.test.func, "id", "") ==
               "isinstance" and isinstance(node.orelse, ast.Name)
               for node in ast.walk(ast.parse(path.read_text())))


def _relative(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(PACKAGE)) for p in paths]


def test_the_state_and_models_word_pydantic_errors_through_one_helper() -> None:
    assert _relative([p for p in _modules("state", "models") if _formats_pydantic_errors(p)]) == []


def test_the_state_writes_the_id_rule_once() -> None:
    assert _relative([p for p in _modules("state", "models") if _writes_the_id_pattern(p)]) == []


def test_every_module_words_pydantic_errors_through_one_helper() -> None:
    assert _relative([p for p in _modules() if _formats_pydantic_errors(p)]) == []


def test_every_module_takes_the_id_rule_from_one_place() -> None:
    assert _relative([p for p in _modules() if _writes_the_id_pattern(p)]) == []


def test_every_module_measures_how_deep_json_nests_in_one_place() -> None:
    assert _relative([p for p in _modules() if _walks_json_levels(p)]) == []


def _nested(levels: int) -> object:
    value: object = "leaf"
    for level in range(levels - 1):
        value = {"k": value} if level % 2 else [value]
    return value


@given(st.integers(1, 80), st.integers(0, 80))
def test_deeper_than_counts_a_scalar_as_one_level(levels: int, limit: int) -> None:
    value = {"a": 1, "b": _nested(levels)}
    assert deeper_than(value, limit) == (levels + 1 > limit)
    if levels + 1 > limit:
        path = deep_path(value, limit)
        assert len(path) == limit and (limit < 2 or path[0] == "b")


def _classes(*folders: str) -> dict[str, str]:
    """Each class name defined under `folders`, with the first module that defines it."""
    found: dict[str, str] = {}
    for path in _modules(*folders):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                found.setdefault(node.name, str(path.relative_to(PACKAGE)))
    return found


def test_a_class_name_means_one_thing_in_the_state_and_the_adapters() -> None:
    """The state's `Draft` (a tool's edit of the shared state) is the only `Draft`: a chat
    message the AG-UI client is building is a `MessageDraft`."""
    state, adapters = _classes("state"), _classes("adapters")
    assert {name: (state[name], adapters[name]) for name in state.keys() & adapters.keys()} == {}


@given(st.text(alphabet="ab_-Z9 /é.", max_size=130) | st.just("x" * 129) | st.just("x" * 128))
def test_a_state_id_is_exactly_what_the_id_rule_accepts(text: str) -> None:
    if is_id(text):
        assert State(id=text).id == text
    else:
        with pytest.raises(ValueError, match=re.escape(ID_RULE)):
            State(id=text)


class _Todo(pydantic.BaseModel, extra="forbid"):
    text: str
    done: bool = False


def test_validation_problems_name_where_and_what() -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        _Todo.model_validate({"text": 3, "done": "maybe", "due": 1})
    assert describe_problems(caught.value, root="todo") == (
        "text: Input should be a valid string; done: Input should be a valid boolean, unable to "
        "interpret input; due: Extra inputs are not permitted"
    )
    assert validation_problems(caught.value, root="todo", say={"extra_forbidden": "no such "
                               "argument"})[-1] == ("due", "no such argument")


def test_an_error_about_the_whole_value_is_named_by_the_root() -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        _Todo.model_validate([1])
    assert describe_problems(caught.value, root="state").startswith("state: ")


def test_the_demo_agent_runs_on_the_one_offline_demo_model() -> None:
    """The demo's own phrases are rules given to `DemoModel`, not a second model class."""
    from pyox_agents.demo import demo_agents
    from pyox_agents.models import DemoModel

    assert type(demo_agents()["demo"].model) is DemoModel
    models = [name for name in _classes() if name.endswith("DemoModel")]
    assert models == ["DemoModel"]
