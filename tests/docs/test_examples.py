"""Every Python example of the documentation and the README runs (or says why it cannot).

Each block runs in a fresh namespace, in a temporary directory (files it writes, such as
``threads.db``, land there). A model named by a provider name (``"gpt-5-mini"``,
``"anthropic:claude-..."``) answers from the block's ``<!-- replies: [...] -->`` script instead
of the network; ``"demo"`` stays the real offline `DemoModel`. See ``markdown_examples``.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pyox_agents.models import (
    FunctionModel,
    Message,
    Model,
    ScriptedModel,
    ToolCall,
    ToolSpec,
    resolve_model,
)
from pyox_agents.stores import Store

from ..postgres_server import postgres_server  # noqa: F401  (fixtures a block may need)
from ..redis_server import redis_server  # noqa: F401
from .markdown_examples import ROOT, Block, blocks, chain, python_blocks

# The module whose `_model_named` turns a name into a model: where `resolve_model` lives.
model_names = sys.modules[resolve_model.__module__]

SERVICES = {"redis": ("REDIS_URL", "redis_server"), "postgres": ("DATABASE_URL", "postgres_server")}
"""What `<!-- needs: NAME -->` gives a block: the variable set to the fixture's URL."""

PROVIDER_VARIABLES = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
)


def _answers_done(messages: list[Message], tools: list[ToolSpec]) -> str:
    return "Done."


class _NamedModels:
    """Resolves provider model names to the current block's scripted replies.

    Each agent resolves its model once, at its first run: a script covers all of its runs.
    """

    def __init__(self) -> None:
        self.replies: str | None = None
        self._real = model_names._model_named

    def __call__(self, name: str) -> Model:
        if name.strip() == "demo":
            return self._real(name)
        if self.replies is None:
            return FunctionModel(_answers_done)
        script = eval(self.replies, {"ToolCall": ToolCall})
        if isinstance(script, dict):  # one script per model name: {"gpt-5-mini": [...], ...}
            script = script[name]
        return ScriptedModel(script)


@pytest.fixture
def named_models(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> _NamedModels:
    resolver = _NamedModels()
    monkeypatch.setattr(model_names, "_model_named", resolver)
    for name in PROVIDER_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return resolver


@pytest.fixture
def fresh_modules() -> Iterator[None]:
    """Modules an example imports from its files (`app`, `server`) are forgotten afterwards."""
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if not name.startswith(("pyox_agents", "_")) and "." not in name:
            module = sys.modules[name]
            if str(getattr(module, "__file__", "")).startswith(str(Path.cwd())):
                del sys.modules[name]


_FILE_NAME = re.compile(r"#\s*(?P<name>[\w/]+\.py)\s*$")


def _write_files_before(block: Block) -> None:
    """Save the page's earlier blocks that start with `# NAME.py` as files, for imports."""
    for earlier in python_blocks():
        if earlier.path != block.path or earlier.line >= block.line:
            continue
        first = earlier.code.splitlines()[0] if earlier.code.strip() else ""
        named = _FILE_NAME.match(first)
        if named:
            Path(named["name"]).write_text(earlier.code, encoding="utf-8")


@pytest.mark.parametrize("block", python_blocks(), ids=lambda b: b.id)
def test_python_example_runs(
    block: Block,
    named_models: _NamedModels,
    fresh_modules: None,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Python example in the docs or the README runs as written.

    A block starting with `# NAME.py` is also saved as that file, so later blocks of the page
    (and the commands shown, such as `pyox-agents serve app:agent`) can import it.
    """
    if block.not_run is not None:
        pytest.skip(f"not run: {block.not_run}")
    _write_files_before(block)
    for step in chain(block):
        if step.needs is None:
            continue
        if step.needs not in SERVICES:
            pytest.fail(f"{step.id}: <!-- needs: {step.needs} --> is not one of {sorted(SERVICES)}")
        variable, fixture = SERVICES[step.needs]
        monkeypatch.setenv(variable, request.getfixturevalue(fixture))
    namespace: dict[str, Any] = {"__name__": "__main__"}
    for step in chain(block):
        if step.not_run is not None:
            continue
        if step.replies is not None:
            named_models.replies = step.replies
        # dont_inherit: the block runs as its own module would, without this file's
        # `from __future__ import annotations` (a pydantic model in it must not see strings)
        code = compile(step.code, step.id, "exec", dont_inherit=True)
        exec(code, namespace)
    # A server closes its store when it stops; here the next example comes instead. A store
    # left open (a PostgreSQL pool and its threads) would be collected in some later test.
    for value in namespace.values():
        if isinstance(value, Store):
            value.close()


def test_every_skipped_example_says_why() -> None:
    """An example marked not runnable carries its reason."""
    for block in python_blocks():
        assert block.not_run is None or block.not_run.strip(), (
            f"{block.id}: not-run without a reason"
        )


def test_every_example_block_is_labelled() -> None:
    """Every code block names its language, so none is left out of these tests by accident."""
    for path in sorted([*(ROOT / "docs").rglob("*.md"), ROOT / "README.md"]):
        for block in blocks(path):
            assert block.lang, f"{block.id}: a code block without a language"


PUBLIC_MODULES = {
    "pyox_agents": "pyox_agents.md",
    "pyox_agents.events": "events.md",
    "pyox_agents.tools": "tools.md",
    "pyox_agents.models": "models.md",
    "pyox_agents.stores": "stores.md",
    "pyox_agents.server": "server.md",
    "pyox_agents.ag_ui": "ag_ui.md",
    "pyox_agents.ai_sdk": "ai_sdk.md",
    "pyox_agents.mcp": "mcp.md",
    "pyox_agents.remote": "remote.md",
    "pyox_agents.tracing": "tracing.md",
}


def _reference_hook() -> Any:
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    return hook


def test_the_api_reference_covers_every_public_name() -> None:
    """Every name in a public module's pinned `__all__` has an entry in the API reference."""
    hook = _reference_hook()
    for module_name, page in PUBLIC_MODULES.items():
        text = (ROOT / "docs" / "reference" / page).read_text(encoding="utf-8")
        entries = {
            line[4:].strip()
            for line in hook.on_page_markdown(text).splitlines()
            if line.startswith("::: ")
        }
        expected = {
            f"{module_name}.{name}" for name in importlib.import_module(module_name).__all__
        }
        assert entries == expected, (
            f"docs/reference/{page}: missing {sorted(expected - entries)}, "
            f"extra {sorted(entries - expected)}; write <!-- public names of {module_name} -->"
        )


def test_the_readme_quickstart_is_two_commands() -> None:
    """The README's Quickstart block stays exactly two commands."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quickstart", 1)[1]
    first = next(
        b
        for b in blocks(ROOT / "README.md")
        if b.lang in ("sh", "bash") and b.code.strip() in section
    )
    commands = [
        line
        for line in first.code.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert [c.split("#")[0].split() for c in commands] == [["make", "demo"], ["make", "test"]]
