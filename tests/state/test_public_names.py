"""The public names of the state modules, pinned: a change here is a change of the API."""

from __future__ import annotations

import pytest

from pyox_agents.state import draft, frozen, patch, rebase, shared


@pytest.mark.parametrize(
    ("module", "names"),
    [
        (
            frozen,
            ["JSON", "MAX_DEPTH", "FrozenDict", "FrozenList", "NotJSON", "StateView", "freeze",
             "lone_surrogate", "parse_pointer", "pointer", "python_path", "thaw"],
        ),
        (patch, ["Op", "Path", "apply", "apply_json", "diff", "inverse", "parse_patch"]),
        (rebase, ["Conflict", "rebase", "rebase_edit"]),
        (draft, ["Draft", "DraftDict", "DraftList", "StateAccessDenied"]),
        (shared, ["EDIT_BACK", "Commit", "Refused", "SharedState", "json_size"]),
    ],
)
def test_public_names_are_pinned(module: object, names: list[str]) -> None:
    assert sorted(module.__all__) == sorted(names)  # type: ignore[attr-defined]
    for name in names:
        assert getattr(module, name) is not None
