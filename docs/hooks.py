"""MkDocs hook: a reference page's `<!-- public names of MODULE -->` becomes one entry per name.

The names are read from MODULE's `__all__` in the source (statically, nothing is imported), so
the API reference follows the pinned public names: a name added to `__all__` gets its entry, a
name removed loses it. Each entry is a mkdocstrings `::: MODULE.NAME`, in alphabetical order.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
_MARKER = re.compile(r"^<!-- public names of (?P<module>[\w.]+) -->$", re.MULTILINE)


def public_names(module: str) -> list[str]:
    """The names in `module.__all__`, read from its source file."""
    base = ROOT.joinpath(*module.split("."))
    source = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    if not source.exists():
        raise ValueError(f"the API reference names {module}, but {source} does not exist")
    for node in ast.parse(source.read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            assert isinstance(node, ast.Assign)
            return sorted(ast.literal_eval(node.value), key=str.lower)
    raise ValueError(f"{source} has no literal __all__ list for the API reference to follow")


def entries(module: str) -> str:
    """The mkdocstrings entries of every public name of `module`."""
    return "\n\n".join(f"::: {module}.{name}" for name in public_names(module))


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """Expand the public-names markers of a page."""
    return _MARKER.sub(lambda m: entries(m["module"]), markdown)
