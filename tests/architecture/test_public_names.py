"""Every public package says what is public in `__all__`, and says nothing else: a name it
holds without listing it must start with "_" (httpx's habit). DESIGN.md: "each package's
`__init__` lists its public names in `__all__`, pinned by a test"."""

from __future__ import annotations
import __future__

import importlib
import types

import pytest

# The faces: packages and modules that only hand names on. (events.py and tools.py define
# their names themselves; their `__all__` lists those.)
PUBLIC = [
    "pyox_agents",
    "pyox_agents.ag_ui",
    "pyox_agents.ai_sdk",
    "pyox_agents.server",
    "pyox_agents.service",
    "pyox_agents.stores",
    "pyox_agents.models",
    "pyox_agents.demo",
    "pyox_agents.adapters.ag_ui",
    "pyox_agents.adapters.ai_sdk",
    "pyox_agents.runtime",
]


@pytest.mark.parametrize("name", PUBLIC)
def test_a_public_module_holds_no_unlisted_public_name(name: str) -> None:
    module = importlib.import_module(name)
    listed = set(module.__all__)
    unlisted = sorted(
        attr for attr, value in vars(module).items()
        if not attr.startswith("_") and attr not in listed
        and not isinstance(value, types.ModuleType) and attr != "TYPE_CHECKING"
        and getattr(value, "__module__", None) != "typing"  # `Any` for a lazy __getattr__
        and not isinstance(value, __future__._Feature)
    )
    assert not unlisted, (f"{name} holds public names it does not list in __all__: "
                          f"{unlisted}; list them, or import them under a private name")


@pytest.mark.parametrize("name", PUBLIC)
def test_every_listed_name_exists_and_says_what_it_is(name: str) -> None:
    module = importlib.import_module(name)
    for attr in module.__all__:
        value = getattr(module, attr)
        if callable(value):
            assert getattr(value, "__doc__", None), f"{name}.{attr} has no docstring"
