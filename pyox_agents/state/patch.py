"""RFC 6902 operations on frozen JSON: apply with path copying, and diff.

An `Op` is recorded by a draft at the moment of a write. `apply` copies only the containers on
each op's path, so untouched subtrees stay shared between versions; `apply_json` does the same
for ops in their JSON form (a recorded history, a kept thread's way back), the one applier both
use. `diff` is only for a tool that replaces the whole document. Moving ops past the versions
committed meanwhile is `pyox_agents.state.rebase`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pyox_agents.state.frozen import (
    JSON,
    FrozenDict,
    FrozenList,
    freeze,
    parse_pointer,
    pointer,
    thaw,
)
from pyox_agents.state.jsonvalue import json_equal

__all__ = ["Op", "Path", "apply", "apply_json", "diff", "inverse", "parse_patch"]

Path = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Op:
    """One RFC 6902 operation: `add`, `remove` or `replace` at `path` (int tokens index lists).

    `value` is frozen (None for `remove`). `append` marks an add made by `append`/`extend`: it
    stays at the end of the list as the list is when the op is applied.
    """

    kind: Literal["add", "remove", "replace"]
    path: Path
    value: JSON = None
    append: bool = False

    def to_json(self) -> dict[str, JSON]:
        """The plain RFC 6902 dict, e.g. `{"op": "add", "path": "/todos/0", "value": "x"}`."""
        if self.kind == "remove":
            return {"op": "remove", "path": pointer(self.path)}
        return {"op": self.kind, "path": pointer(self.path), "value": thaw(self.value)}

    @property
    def inserts(self) -> bool:
        """True for an add into a list: it moves later items rather than writing over one."""
        return self.kind == "add" and bool(self.path) and isinstance(self.path[-1], int)

    @property
    def moves(self) -> bool:
        """True for an add into a list or a removal from one: it moves the items after it."""
        return self.kind != "replace" and bool(self.path) and isinstance(self.path[-1], int)


# -- apply ---------------------------------------------------------------------------------------


def apply(root: JSON, ops: list[Op] | tuple[Op, ...]) -> JSON:
    """The new version: `ops` applied in order to the frozen `root`, which is left unchanged.

    Each container on an op's path is copied at most once per call; everything else is shared.

    Raises:
        ValueError: an op's path does not exist in the document (never for the library's ops).
    """
    writer = _Writer(root)
    for op in ops:
        writer.write(op)
    return writer.root


def apply_json(root: JSON, ops: Iterable[Mapping[str, Any]]) -> JSON:
    """`root` (frozen) after RFC 6902 operations in their JSON form, as a new frozen version.

    All six operations: add (`-` appends to a list), remove, replace, move, copy and test. Like
    `apply`, it copies only the containers on each op's path and leaves `root` unchanged.

    Raises:
        ValueError: an op that is malformed (no string `path`, no `value`, an unknown `op`),
            whose path does not exist, or whose test fails; the message names the op's path.
        TypeError: an op's value that is not JSON.
    """
    return parse_patch(root, ops)[0]


def parse_patch(root: JSON, ops: Iterable[Mapping[str, Any]]) -> tuple[JSON, list[Op]]:
    """`apply_json`, and the ops it wrote: a client's RFC 6902 patch made on `root` as `Op`s
    that can be rebased (`move` is a remove and an add, `copy` an add, `test` only checks; an
    add at `-` stays at the end of its list).

    Raises:
        ValueError, TypeError: as `apply_json`.
    """
    writer = _Writer(root)
    for raw in ops:
        _apply_raw(writer, raw)
    return writer.root, writer.written


class _Writer:
    """One `apply` call: its current root, the containers it copied (and may now change), and
    the ops it wrote."""

    __slots__ = ("_fresh", "root", "written")

    def __init__(self, root: JSON) -> None:
        self.root = root
        self._fresh: dict[int, JSON] = {}  # id -> copy made here (kept alive: ids stay unique)
        self.written: list[Op] = []

    def _writable(self, container: JSON) -> JSON:
        if id(container) in self._fresh:
            return container
        copy: JSON = FrozenDict(container) if isinstance(container, dict) else FrozenList(container)
        self._fresh[id(copy)] = copy
        return copy

    def write(self, op: Op) -> None:
        self.written.append(op)
        if not op.path:
            if op.kind == "remove":
                raise ValueError("cannot remove the whole document; replace it instead")
            self.root = op.value
            return
        kind, path = op.kind, op.path
        parent = self.root = self._writable(_container(self.root, kind, path, 0))
        for depth, token in enumerate(path[:-1]):
            child = _container(_child(parent, token, kind, path, depth + 1), kind, path, depth + 1)
            copy = self._writable(child)
            if copy is not child:
                _set(parent, token, copy)
            parent = copy
        _write(parent, op)


def _apply_raw(writer: _Writer, raw: Mapping[str, Any]) -> None:
    """One RFC 6902 op in JSON form, as the `Op`s it stands for, written in turn."""
    name, text = raw.get("op"), raw.get("path")
    if not isinstance(text, str):
        raise ValueError(f"patch operation {dict(raw)!r} has no string 'path'")
    if name in ("move", "copy", "test"):
        source = raw.get("from") if name != "test" else text
        if not isinstance(source, str):
            raise ValueError(f"patch operation {dict(raw)!r} has no string 'from'")
        path = _tokens(writer.root, source, append=False)
        value = _get(writer.root, path, name)
        if name == "test":
            if "value" not in raw:
                raise ValueError(f"patch operation {dict(raw)!r} has no 'value'")
            if not _test_equal(value, raw["value"]):
                raise ValueError(f"patch test failed at {text!r}: the value there is {value!r}")
            return
        if name == "move":
            if text == source:
                return  # onto itself: nothing moves (RFC 6902)
            if text.startswith(source + "/") or source == "":
                raise ValueError(f"cannot move {source!r} into {text!r}: a value cannot move "
                                 "into itself (RFC 6902)")
            writer.write(Op("remove", path))
        writer.write(Op("add", _tokens(writer.root, text, append=True), value))
        return
    if name == "remove":
        writer.write(Op("remove", _tokens(writer.root, text, append=False)))
        return
    if name not in ("add", "replace"):
        raise ValueError(f"unknown patch operation {name!r}: use add, remove, replace, move, "
                         "copy or test")
    if "value" not in raw:
        raise ValueError(f"patch operation {dict(raw)!r} has no 'value'")
    path = _tokens(writer.root, text, append=name == "add")
    writer.write(Op(name, path, freeze(raw["value"], "value"),
                    append=name == "add" and text.endswith("/-")))


def _test_equal(a: Any, b: Any) -> bool:
    """RFC 6902's `test`: numbers equal by value (`1` is `1.0`), the rest as JSON."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_test_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_test_equal(x, y) for x, y in zip(a, b, strict=True))
    numbers = (int, float)
    if (isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool)
            and not isinstance(b, bool)):
        return bool(a == b)
    return json_equal(a, b)


def _tokens(root: JSON, text: str, *, append: bool) -> Path:
    """The path a JSON Pointer names in `root`: a list's tokens become ints (`-`: its end).

    A token that names nothing stays a str, so the write reports where the path breaks.
    """
    tokens = parse_pointer(text)
    path: list[str | int] = []
    node: JSON = root
    for depth, token in enumerate(tokens, start=1):
        if isinstance(node, list):
            last = depth == len(tokens)
            if token == "-" and append and last:
                path.append(len(node))
                break
            if token.isdigit() and (token == "0" or not token.startswith("0")):
                index = int(token)
                path.append(index)
                node = node[index] if index < len(node) else None
                continue
        path.append(token)
        node = node.get(token) if isinstance(node, dict) else None
    return tuple(path)


def _get(root: JSON, path: Path, verb: str, levels: int | None = None) -> JSON:
    """The value at `path` in `root` (at its first `levels` tokens, if given)."""
    node = root
    for depth, token in enumerate(path[:levels], start=1):
        node = _child(_container(node, verb, path, depth - 1), token, verb, path, depth)
    return node


def _child(parent: JSON, token: str | int, verb: str, path: Path, depth: int) -> JSON:
    if isinstance(parent, dict) and isinstance(token, str) and token in parent:
        return parent[token]
    if isinstance(parent, list) and isinstance(token, int) and 0 <= token < len(parent):
        return parent[token]
    raise ValueError(f"cannot {verb} {pointer(path)}: {pointer(path[:depth])} does not exist")


def _container(value: JSON, verb: str, path: Path, depth: int) -> JSON:
    if isinstance(value, dict | list):
        return value
    raise ValueError(f"cannot {verb} {pointer(path)}: {pointer(path[:depth]) or 'the document'} "
                     "is not an object or array")


def _set(container: JSON, token: str | int, value: JSON) -> None:
    if isinstance(container, dict) and isinstance(token, str):
        dict.__setitem__(container, token, value)
    elif isinstance(container, list) and isinstance(token, int):
        list.__setitem__(container, token, value)


def _write(parent: JSON, op: Op) -> None:
    token = op.path[-1]
    if isinstance(parent, dict) and isinstance(token, str):
        if op.kind == "add":
            dict.__setitem__(parent, token, op.value)
            return
        if token in parent:
            if op.kind == "replace":
                dict.__setitem__(parent, token, op.value)
            else:
                dict.__delitem__(parent, token)
            return
    elif isinstance(parent, list) and isinstance(token, int):
        if op.kind == "add" and 0 <= token <= len(parent):
            list.insert(parent, token, op.value)
            return
        if 0 <= token < len(parent):
            if op.kind == "replace":
                list.__setitem__(parent, token, op.value)
            else:
                list.__delitem__(parent, token)
            return
    raise ValueError(f"cannot {op.kind} {pointer(op.path)}: there is no such place")


def inverse(root: JSON, ops: list[Op] | tuple[Op, ...]) -> list[Op]:
    """The ops that undo `ops` applied to `root`, in the order to apply them: each op's old
    value read where it writes (a look along its path, not at the whole document).

    Raises:
        ValueError: an op of `ops` does not apply to `root` as it is then.
    """
    back: list[Op] = []
    state = root
    for op in ops:
        if not op.path:
            back.append(Op("replace", (), state))
        elif op.inserts:
            back.append(Op("remove", op.path))
        else:
            parent, token = _get(state, op.path, op.kind, len(op.path) - 1), op.path[-1]
            if isinstance(parent, dict) and op.kind != "remove":  # a key set: back as it was
                back.append(Op("replace", op.path, parent[token]) if token in parent
                            else Op("remove", op.path))
            else:  # an item replaced, or a key or item removed: its old value goes back
                old = _get(state, op.path, op.kind)
                back.append(Op("add" if op.kind == "remove" else "replace", op.path, old))
        state = apply(state, [op])
    back.reverse()
    return back


# -- diff ----------------------------------------------------------------------------------------


def diff(old: JSON, new: JSON) -> list[Op]:
    """Ops that turn `old` into `new`, for a tool that replaced the whole document.

    Values that are the same object are skipped without a look inside, so a new document built
    from the old one's parts (`{**ctx.state, "x": 1}`) costs only what changed.
    """
    ops: list[Op] = []
    _diff(old, new, (), ops)
    return ops


def _diff(old: JSON, new: JSON, path: Path, ops: list[Op]) -> None:
    if old is new:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if key not in new:
                ops.append(Op("remove", (*path, key)))
        for key, value in new.items():
            if key in old:
                _diff(old[key], value, (*path, key), ops)
            else:
                ops.append(Op("add", (*path, key), value))
    elif isinstance(old, list) and isinstance(new, list):
        _diff_lists(old, new, path, ops)
    elif _same_scalar(old, new):
        return
    else:
        ops.append(Op("replace", path, new))


def _diff_lists(old: list[JSON], new: list[JSON], path: Path, ops: list[Op]) -> None:
    start = 0
    shortest = min(len(old), len(new))
    while start < shortest and _same(old[start], new[start]):
        start += 1
    old_end, new_end = len(old), len(new)
    while old_end > start and new_end > start and _same(old[old_end - 1], new[new_end - 1]):
        old_end -= 1
        new_end -= 1
    if old_end - start == new_end - start:
        for index in range(start, old_end):
            _diff(old[index], new[index], (*path, index), ops)
        return
    for index in range(old_end - 1, start - 1, -1):
        ops.append(Op("remove", (*path, index)))
    for index in range(start, new_end):
        ops.append(Op("add", (*path, index), new[index]))


def _same(a: JSON, b: JSON) -> bool:
    return a is b or _same_scalar(a, b)


def _same_scalar(a: JSON, b: JSON) -> bool:
    """Equal scalars of one type (`1`, `1.0` and `True` are three JSON values; so are 0.0, -0.0)."""
    if type(a) is not type(b) or isinstance(a, dict | list) or a != b:
        return False
    return not isinstance(a, float) or math.copysign(1.0, a) == math.copysign(1.0, b)  # type: ignore[arg-type]
