"""How the models modules import each other: downward only, providers on demand."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pyox_agents

PACKAGE = Path(pyox_agents.__file__).parent


def _imports(path: Path) -> set[str]:
    """Every pyox_agents module `path` imports, at its top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("pyox_agents.")}


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_the_models_modules_import_one_another_without_a_cycle() -> None:
    """Name resolution imports the providers; no provider module imports it back."""
    graph = {_module(p): _imports(p) for p in (PACKAGE / "models").glob("*.py")
             if p.name != "__init__.py"}
    cycles: list[list[str]] = []

    def visit(module: str, trail: list[str]) -> None:
        if module in trail:
            cycles.append([*trail[trail.index(module):], module])
            return
        for target in sorted(graph.get(module, ())):
            visit(target, [*trail, module])

    for module in sorted(graph):
        visit(module, [])
    assert cycles == []


def test_a_model_name_imports_only_the_provider_it_names() -> None:
    script = textwrap.dedent("""
        import sys
        from pyox_agents.models.names import resolve_model
        loaded = lambda: sorted(m for m in ("pyox_agents.models.openai",
                                            "pyox_agents.models.anthropic") if m in sys.modules)
        before = loaded()
        resolve_model("openai:gpt-5-mini")
        print(before, loaded())
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, env={**os.environ, "OPENAI_API_KEY": ""}).stdout
    assert out.strip() == "[] ['pyox_agents.models.openai']"


def test_only_the_models_package_imports_the_test_doubles() -> None:
    """`stream_reply` serves the demo model and the planners from below `scripted.py`."""
    importers = sorted(
        _module(path) for path in PACKAGE.rglob("*.py")
        if "pyox_agents.models.scripted" in _imports(path)
        and path != PACKAGE / "models" / "__init__.py"
    )
    assert importers == []
