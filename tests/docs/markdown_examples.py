"""The code blocks of the documentation (docs/**/*.md and README.md), found and described.

A fenced block is described by an HTML comment on the line(s) just before it (invisible on the
site and on GitHub):

- ``<!-- replies: [ToolCall("add_todo", {"text": "Milk"}), "Done."] -->``: a model named by a
  provider name (``"gpt-5-mini"``, ``"anthropic:..."``) answers with this script in this block
  (the default: a model that answers "Done.").
- ``<!-- continue -->``: the block runs after the page's previous Python block, in its namespace
  (a guide that builds one example in steps).
- ``<!-- needs: redis -->`` / ``<!-- needs: postgres -->``: the block runs with ``REDIS_URL`` /
  ``DATABASE_URL`` set to a real ``redis-server`` / PostgreSQL started for the tests.
- ``<!-- not-run: REASON -->``: the block is not executed; the reason says why (a real API key,
  a fragment of a larger file). Such blocks are few and listed by the test report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC_FILES = sorted([*(ROOT / "docs").rglob("*.md"), ROOT / "README.md"])

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+|~~~+)(?P<lang>[\w+-]*)[^\n]*$")
_DIRECTIVE = re.compile(
    r"^\s*<!--\s*(?P<kind>replies|continue|not-run|needs)\s*:?\s*(?P<arg>.*?)\s*-->\s*$"
)


@dataclass(frozen=True)
class Block:
    """One fenced code block of a Markdown file."""

    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    replies: str | None = None
    continues: bool = False
    not_run: str | None = None
    needs: str | None = None

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """Every fenced block of `path`, with the directives written just before it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, fence, lang = match["indent"], match["fence"], match["lang"].lower()
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            body.append(lines[j][len(indent) :] if lines[j].startswith(indent) else lines[j])
            j += 1
        directives = _directives_before(lines, i)
        found.append(
            Block(
                path=path,
                line=i + 1,
                lang=lang,
                code="\n".join(body) + "\n",
                replies=directives.get("replies"),
                continues="continue" in directives,
                not_run=directives.get("not-run"),
                needs=directives.get("needs"),
            )
        )
        i = j + 1
    return found


def _directives_before(lines: list[str], fence_at: int) -> dict[str, str]:
    found: dict[str, str] = {}
    k = fence_at - 1
    while k >= 0 and (lines[k].strip() == "" or _DIRECTIVE.match(lines[k])):
        directive = _DIRECTIVE.match(lines[k])
        if directive:
            found[directive["kind"]] = directive["arg"]
        k -= 1
    return found


def python_blocks() -> list[Block]:
    """Every Python block of the documentation."""
    return [b for path in DOC_FILES for b in blocks(path) if b.lang in ("python", "py")]


def typescript_blocks() -> list[Block]:
    """Every TypeScript block (ts, tsx) of the documentation."""
    return [b for path in DOC_FILES for b in blocks(path) if b.lang in ("ts", "tsx", "typescript")]


def chain(block: Block) -> list[Block]:
    """The blocks to run for `block`: the page's earlier ones it continues, then itself."""
    page = [b for b in python_blocks() if b.path == block.path]
    at = page.index(block)
    start = at
    while start > 0 and page[start].continues:
        start -= 1
    return page[start : at + 1]
