"""The dependency floors in pyproject.toml are versions the test suite passes with.

Measured by installing the project with every runtime dependency and extra pinned to its floor
(`pip install -e '.[dev]' 'starlette==0.40.0' 'ag-ui-protocol==1.0.0' ...` in a venv apart) and
running the suite without tests/e2e. Below a floor, something the project or its tests use is
missing; each entry says what.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import ag_ui.core

ROOT = Path(__file__).resolve().parents[1]

MEASURED = {
    "starlette": "0.40",
    "ag-ui-protocol": "1.0.0",  # 0.1.22 lacks PROTOCOL_VERSION, RunFinishedCancelledOutcome,
    # TextPart, ImagePart, UrlSource, DataSource (0.1.20 also the SUBAGENT_* events)
    "jsonpatch": "1.34",  # (dev) 1.33 fails tests/state/test_properties.py's parallel drafts
    "anyio": "4.4",
    "pydantic": "2.11.2",  # what ag-ui-protocol 1.0.0 requires
    "uvicorn": "0.30",
    "orjson": "3.10",
    "jsonschema": "4.18",  # (checked with 4.18.0: validator_for, iter_errors, check_schema)
    "redis": "5.0.1",  # 5.0.0's asyncio Redis has no aclose()
    "psycopg": "3.2.1",  # 3.1 has no notifies(timeout=); 3.2.0's [binary] pins a dev release
    "openai": "1.66",
    "anthropic": "0.51",  # 0.50's MessageDeltaUsage has no input_tokens
}


def _floors() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = list(project["dependencies"])
    for extra in ("redis", "postgres", "openai", "anthropic"):
        declared += project["optional-dependencies"][extra]
    declared += [r for r in project["optional-dependencies"]["dev"] if r.startswith("jsonpatch")]
    floors = {}
    for requirement in declared:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)(?:\[[^]]*\])?>=([0-9.]+)", requirement)
        assert match, f"{requirement!r} has no floor (>=)"
        floors[match[1]] = match[2]
    return floors


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def test_every_floor_is_at_least_the_measured_one() -> None:
    floors = _floors()
    assert set(floors) == set(MEASURED)
    low = {name: floor for name, floor in floors.items()
           if _version(floor) < _version(MEASURED[name])}
    assert not low, f"floors below what the suite passes with: {low}"


def test_the_ag_ui_protocol_floor_has_every_name_the_adapters_import() -> None:
    """The names the project imports from `ag_ui.core` are 1.0's: the floor is 1.0.0."""
    imported = set()
    for path in (ROOT / "pyox_agents").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "ag_ui.core":
                imported |= {alias.name for alias in node.names}
    assert {"PROTOCOL_VERSION", "RunFinishedCancelledOutcome"} <= imported
    assert all(hasattr(ag_ui.core, name) for name in imported)
    assert _version(_floors()["ag-ui-protocol"]) >= (1, 0, 0)
