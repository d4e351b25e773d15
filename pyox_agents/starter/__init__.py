"""`pyox-agents new NAME`: a project to start from, written into a new folder.

It is a Python agent with a typed state and an offline model, served with CORS for the page,
and a Vite + React page (CopilotKit, or the AI SDK's `useChat`) that follows the thread's
shared state live, keeps its thread across reloads, and shows tool calls and approvals. The
files are `template/`: `common/` for both pages, then the chosen page's own. The page's copy of
the live-state client (`clients/live-state` in the repository) ships in the wheel beside them.
"""

from __future__ import annotations

import re
from pathlib import Path

from pyox_agents._errors import PyoxError

__all__ = ["UIS", "StarterError", "create_project"]

UIS = ("copilotkit", "ai-sdk")
"""The pages a project can have: CopilotKit v2 (AG-UI), or the AI SDK's `useChat`."""

TEMPLATE = Path(__file__).resolve().parent / "template"

_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,213}")
_CLIENT_FILES = ("index.js", "index.d.ts")


class StarterError(PyoxError):
    """The project cannot be written: a bad name, a folder in the way, missing files."""


def create_project(path: str | Path, ui: str = "copilotkit") -> list[Path]:
    """Write a new project into folder `path` (which must not exist, or be empty) with the page
    `ui` (one of `UIS`); gives the files written, relative to `path`. The folder's name is the
    project's name: lowercase letters, digits, `-`, `_` and `.`, as npm wants."""
    if ui not in UIS:
        raise StarterError(f"--ui {ui!r} is not a page this writes; choose {' or '.join(UIS)}")
    root = Path(path)
    name = root.resolve().name
    if not _NAME.fullmatch(name):
        raise StarterError(f"{name!r} cannot name a project: use lowercase letters, digits, "
                           "'-', '_' and '.', starting with a letter or digit (npm's rule)")
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise StarterError(f"{root} is there already and is not an empty folder; choose a new "
                           "name")
    files = {**_files(TEMPLATE / "common"), **_files(TEMPLATE / ui)}
    client = _client_dir()
    for file in _CLIENT_FILES:
        files[f"web/src/live-state/{file}"] = (client / file).read_text(encoding="utf-8")
    root.mkdir(parents=True, exist_ok=True)
    written = []
    for relative, text in sorted(files.items()):
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text.replace("__NAME__", name).replace("__UI__", ui),
                          encoding="utf-8")
        written.append(Path(relative))
    return written


def _files(folder: Path) -> dict[str, str]:
    """The template's files under `folder`, by path relative to it (`_gitignore` is written as
    `.gitignore`: a file of that name would be left out of the wheel)."""
    files = {}
    for file in folder.rglob("*"):
        if file.is_file() and "__pycache__" not in file.parts:
            relative = file.relative_to(folder).as_posix().replace("_gitignore", ".gitignore")
            files[relative] = file.read_text(encoding="utf-8")
    return files


def _client_dir() -> Path:
    """Where the live-state client's files are: beside the template in an installed wheel
    (pyproject.toml puts them there), `clients/live-state` in a checkout."""
    for folder in (Path(__file__).resolve().parent / "live-state",
                   Path(__file__).resolve().parents[2] / "clients" / "live-state"):
        if all((folder / file).is_file() for file in _CLIENT_FILES):
            return folder
    raise StarterError("the live-state client's files are missing from this install; "
                       "install pyox-agents from its wheel or a checkout")

