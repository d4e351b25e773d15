"""The layer map of DESIGN.md, read from the code: every module of `pyox_agents`, its layer, and
every import it makes (at the top, inside functions, under `TYPE_CHECKING`), found with `ast`.

    server/, ag_ui.py, ai_sdk.py, __init__.py   compose (the public faces)
    starter/                                  the project `pyox-agents new` writes (files)
    demo/                                     the demo's agents and model (server/ serves them)
    examples/                                 the seven feature agents (one unit with demo/)
    adapters/ag_ui/, adapters/ai_sdk/         pure translation, one package per protocol
    adapters/                                 what both protocols share
    service/                                  protocol-free serving
    agent.py                                  the facade of a run
    remote/                                   agents behind AG-UI endpoints, as subagents
    runtime/                                  the loop and its parts
    tools.py                                  what a tool sees
    _run_request.py                           what a client asks for (adapters make it, the
                                              service runs it: so it sits below both)
    events.py                                 the runtime's events
    models/, stores/                          beside each other, on state/
    state/                                    the data model
    _redact.py                                secrets out of URLs and error text (imports
                                              nothing of ours: stores, models, remote, the
                                              runtime and the server use it)
    _errors.py                                PyoxError, ToolError: the errors' root (imports
                                              nothing of ours: state's refusals are ones)

A module may import modules of its own unit and of any unit ranked below it: never one above,
never one beside it (the two protocols, models and stores, the demo and the adapters).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pyox_agents

ROOT = Path(pyox_agents.__file__).parent
PACKAGE = "pyox_agents"

# (unit, rank): the first prefix that matches a module's dotted name gives its unit.
UNITS: tuple[tuple[str, str, float], ...] = (
    ("pyox_agents.server", "server", 9),
    ("pyox_agents.ag_ui", "faces", 9),
    ("pyox_agents.ai_sdk", "faces", 9),
    ("pyox_agents._ag_ui", "faces", 9),
    ("pyox_agents._ai_sdk", "faces", 9),
    ("pyox_agents.tracing", "faces", 9),
    ("pyox_agents.starter", "starter", 8),  # `pyox-agents new`'s files; the CLI writes them
    ("pyox_agents.adapters.ag_ui", "adapters/ag_ui", 7),
    ("pyox_agents.adapters.ai_sdk", "adapters/ai_sdk", 7),
    ("pyox_agents.adapters", "adapters", 6.5),
    ("pyox_agents.service", "service", 6),
    ("pyox_agents.demo", "demo", 5.5),
    ("pyox_agents.examples", "demo", 5.5),  # the feature gallery the demo serves
    ("pyox_agents.agent", "agent", 5),
    ("pyox_agents.remote", "remote", 4.5),
    ("pyox_agents.runtime", "runtime", 4),
    ("pyox_agents.mcp", "mcp", 3.5),
    ("pyox_agents.tools", "tools", 3),
    ("pyox_agents.toolsets", "tools", 3),
    ("pyox_agents._tool_docs", "tools", 3),
    ("pyox_agents._run_context", "tools", 3),
    ("pyox_agents._run_request", "run_request", 2.5),
    ("pyox_agents.events", "events", 2),
    ("pyox_agents.models", "models", 1),
    ("pyox_agents.stores", "stores", 1),
    ("pyox_agents.state", "state", 0),
    ("pyox_agents._redact", "redact", -1),  # secrets out of URLs and text, nothing of ours
    ("pyox_agents._errors", "errors", -1),  # PyoxError, ToolError, nothing of ours
    ("pyox_agents", "faces", 9),  # the package's own __init__: the public face
)


@dataclass(frozen=True)
class Import:
    """One import statement: who imports what, where, and whether it runs inside a function."""

    importer: str
    imported: str
    line: int
    lazy: bool


def unit_of(module: str) -> tuple[str, float]:
    """The unit and rank of a dotted module name of pyox_agents."""
    for prefix, unit, rank in UNITS:
        if module == prefix or module.startswith(prefix + "."):
            return unit, rank
    raise AssertionError(f"{module} is on no layer of the map; add it to UNITS in {__file__}")


def modules() -> dict[str, Path]:
    """Every module of pyox_agents by dotted name (a package by its own name); not the files
    `pyox-agents new` copies into a user's project (`starter/template`), which are theirs."""
    found: dict[str, Path] = {}
    for path in sorted(ROOT.rglob("*.py")):
        if path.is_relative_to(ROOT / "starter" / "template"):
            continue
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: set[str]) -> list[Import]:
    """The pyox_agents modules `name` imports, with `from package import submodule` resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[Import] = []
    for node, lazy in _walk(tree, lazy=False):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                targets.append(sub if sub in known else base)
        for target in targets:
            if target == PACKAGE or target.startswith(PACKAGE + "."):
                while target not in known:
                    target = target.rpartition(".")[0]
                if target != name:
                    found.append(Import(name, target, node.lineno, lazy))
    return found


def _walk(node: ast.AST, lazy: bool) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
    out: list[tuple[ast.Import | ast.ImportFrom, bool]] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            out.append((child, lazy))
        inner = lazy or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
        out.extend(_walk(child, inner))
    return out


def all_imports() -> list[Import]:
    """Every import between modules of pyox_agents."""
    found = modules()
    known = set(found)
    return [edge for name, path in found.items() for edge in imports(name, path, known)]


def cycles(edges: list[Import]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    graph: dict[str, set[str]] = {}
    for edge in edges:
        graph.setdefault(edge.importer, set()).add(edge.imported)
        graph.setdefault(edge.imported, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(groups)
