"""How deeply a parsed JSON value nests, measured one level at a time (no recursion), for the
`MAX_DEPTH` checks of a request body, a model's tool arguments and a commit to the shared state.
"""

from __future__ import annotations

from typing import Any

__all__ = ["deep_path", "deeper_than"]


def deeper_than(value: Any, levels: int) -> bool:
    """Whether `value` nests more than `levels` levels (a scalar is 1), looking no further."""
    depth, level = 0, [value]
    while level:
        depth += 1
        if depth > levels:
            return True
        level = [child for item in level if isinstance(item, dict | list)
                 for child in (item.values() if isinstance(item, dict) else item)]
    return False


def deep_path(value: Any, levels: int) -> list[str | int]:
    """The path to a value at level `levels` + 1 of `value` (which has one), for an error."""
    path: list[str | int] = []
    while len(path) < levels:
        children = value.items() if isinstance(value, dict) else enumerate(value)
        need = levels - len(path) - 1
        for key, child in children:
            if deeper_than(child, need):
                path.append(key)
                value = child
                break
        else:
            raise AssertionError("no value that deep")  # pragma: no cover
    return path
