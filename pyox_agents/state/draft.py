"""One tool call's editable view of the shared state: `ctx.state`.

Reads see the version the tool started from. The first write to a container copies it and the
containers above it (once each per draft; everything else stays shared with the committed
version) and records an RFC 6902 op at once, so finishing the tool never needs a diff or a deep
copy. Values put in are frozen at that moment: changing the caller's own object later has no
effect, and a value taken from the document and put at another place is a copy there. A draft
belongs to one tool call (one thread); drafts share only frozen values.
"""

from __future__ import annotations

import enum
import operator
import sys
from collections.abc import (
    Callable,
    Iterable,
    Iterator,
    MutableMapping,
    MutableSequence,
    Sequence,
)
from typing import Any, ClassVar, Literal, SupportsIndex, overload

from pyox_agents.state.frozen import (
    JSON,
    FrozenDict,
    FrozenList,
    StateView,
    freeze,
    python_path,
    thaw,
)
from pyox_agents.state.patch import Op, Path, diff

__all__ = ["Draft", "DraftDict", "DraftList"]

_MISSING: Any = object()


class _Gone(RuntimeError):
    """A view's value is no longer in the document (writes raise it; reads fall back)."""


class Draft:
    """The scope of one tool call: its base version, its working copies and its recorded ops.

    `root` is what `ctx.state` returns; `replace` is what `ctx.state = value` does. After
    `close()` reads still work and writes raise. `writable=False` makes every write raise
    `PermissionError` (a subagent given read access only).
    """

    __slots__ = (
        "__weakref__",
        "_closed",
        "_committed",
        "_fresh",
        "_name",
        "_on_close",
        "_ops",
        "_origin",
        "_root",
        "base",
        "base_version",
        "owner",
        "tool",
        "writable",
    )

    def __init__(
        self,
        base: JSON,
        base_version: int = 0,
        *,
        tool: str = "",
        writable: bool = True,
        name: str = "ctx.state",
        owner: object = None,
        on_close: Callable[[Draft], None] | None = None,
    ) -> None:
        self.base = freeze(base, name)
        self.base_version = base_version
        self.tool = tool
        self.writable = writable
        self.owner = owner
        self._name = name
        self._on_close = on_close
        self._root: JSON = self.base
        self._ops: list[Op] = []
        self._closed = False
        self._committed = False  # set by SharedState.commit
        # id -> working copy this draft may still change in place (dropped by _seal)
        self._fresh: dict[int, JSON] = {}
        # id of a copy -> (copy, what it replaced), so a view of the original finds the copy
        self._origin: dict[int, tuple[JSON, JSON]] = {}

    @property
    def root(self) -> Any:
        """The document: a `DraftDict` or `DraftList` view if it is a container, else the value."""
        root = self._root
        if isinstance(root, dict):
            return DraftDict(self, None, None, root)
        if isinstance(root, list):
            return DraftList(self, None, None, root)
        return root

    @root.setter
    def root(self, value: object) -> None:
        self.replace(value)

    def replace(self, value: object) -> None:
        """Make `value` the whole document (`ctx.state = value`), recording the ops of a diff.

        Parts of the current document left at their place keep their identity, so the diff
        skips them (`{**ctx.state, "x": 1}` costs one op); a part moved elsewhere is a copy.

        Raises:
            TypeError: `value` is not JSON (the message names the path).
        """
        self._check_write()
        if isinstance(value, StateView) and value._peek() is self._root:
            return
        new = freeze(value, self._name)
        self._seal()
        self._ops.extend(diff(self._root, new))
        self._root = new

    @property
    def ops(self) -> list[Op]:
        """The ops recorded so far, in order, relative to `base`."""
        return list(self._ops)

    @property
    def value(self) -> JSON:
        """The current document (frozen; later writes through this draft do not change it)."""
        self._release(self._root)
        return self._root

    @property
    def changed(self) -> bool:
        """Whether any op was recorded."""
        return bool(self._ops)

    @property
    def closed(self) -> bool:
        """Whether `close()` was called: writes now raise `RuntimeError`."""
        return self._closed

    def close(self) -> None:
        """End the tool call's right to write; the draft's owner is told (once)."""
        if self._closed:
            return
        self._closed = True
        if self._on_close is not None:
            self._on_close(self)

    # -- used by the views -----------------------------------------------------------------------

    def _check_write(self) -> None:
        if self._closed:
            who = f"tool {self.tool!r}" if self.tool else "the tool"
            raise RuntimeError(
                f"{self._name} changed after {who} returned; change it inside the tool"
            )
        if not self.writable:
            who = f"tool {self.tool!r}" if self.tool else "this tool"
            raise PermissionError(
                f"{self._name} is read-only in {who} (its agent was given state=\"read\"): read "
                f"it only, or give the subagent state=\"write\" to let its tools change it"
            )

    def _seal(self) -> None:
        """Stop changing working copies in place: the next write to each copies it again.

        Needed when a working copy becomes reachable from elsewhere (put at a second place,
        held in an op's value, handed out as a plain frozen value).
        """
        self._fresh.clear()

    def _release(self, value: JSON) -> None:
        """Seal if `value` is a working copy: it is about to be seen, so it must stop changing."""
        if id(value) in self._fresh and isinstance(value, dict | list):
            self._seal()

    def _copy(self, container: JSON) -> JSON:
        """A working copy of a container, which this draft may change in place until sealed."""
        copy: JSON = (
            FrozenDict(container) if isinstance(container, dict) else FrozenList(container)  # type: ignore[arg-type]
        )
        self._fresh[id(copy)] = copy
        self._origin[id(copy)] = (copy, container)
        return copy

    def _succeeds(self, value: object, original: object) -> bool:
        """Whether `value` is `original` or a later copy of it (made by this draft)."""
        while value is not original:
            entry = self._origin.get(id(value))
            if entry is None or entry[0] is not value:
                return False
            value = entry[1]
        return True

    def _put(self, value: object, at: Path) -> JSON:
        """`value` frozen, to be stored at the new place `at` (errors name that path).

        A container already in some document (a view, a frozen value) is stored as a shallow
        copy: one container object at two places would leave a view unsure which is its own.
        """
        if isinstance(value, _View):
            return _shallow(value._sealed())
        if isinstance(value, FrozenDict | FrozenList):
            self._release(value)  # its items may be working copies
            return _shallow(value)
        return freeze(value, self._name, at=at)


class _View(StateView):
    """A live view of the container at one place of a draft's document."""

    __slots__ = ("_draft", "_key", "_parent", "_value")

    _kind: ClassVar[type]

    def __init__(
        self, draft: Draft, parent: _View | None, key: str | int | None, value: Any
    ) -> None:
        self._draft = draft
        self._parent = parent
        self._key = key
        self._value = value  # the container as last seen at that place

    # -- where am I ------------------------------------------------------------------------------

    def _locate(self) -> tuple[Any, Path]:
        """The current container and its path; follows this draft's copies of it and list
        index shifts (its key first, then a search of the parent list by identity).

        A view whose value, or a container above it, was replaced or removed is gone, even if
        the new container holds the same items (`ctx.state["todos"] = [*ctx.state["todos"]]`):
        read it again from `ctx.state`.

        Raises:
            RuntimeError: the value is no longer in the document.
        """
        draft = self._draft
        parent = self._parent
        if parent is None:
            root = draft._root
            if not isinstance(root, self._kind):
                raise self._gone()
            self._value = root
            return root, ()
        try:
            container, path = parent._locate()
        except _Gone:
            raise self._gone() from None
        key = self._key
        found = _slot(container, key)
        if found is not self._value and not draft._succeeds(found, self._value):
            key = self._search(container)
            found = container[key]
            self._key = key
        self._value = found
        return found, (*path, key)  # type: ignore[arg-type]

    def _search(self, container: JSON) -> int:
        if isinstance(container, list):
            succeeds = self._draft._succeeds
            for index, item in enumerate(container):
                if item is self._value or succeeds(item, self._value):
                    return index
        raise self._gone()

    def _gone(self) -> _Gone:
        return _Gone(
            f"{python_path(self._draft._name, self._last_path())} was removed from "
            f"{self._draft._name} (or replaced); read it again from {self._draft._name}"
        )

    def _last_path(self) -> list[str | int]:
        tokens: list[str | int] = []
        view: _View | None = self
        while view is not None and view._key is not None:
            tokens.append(view._key)
            view = view._parent
        return tokens[::-1]

    def _read(self) -> Any:
        """The current container; for a view whose value was removed, the value it had."""
        try:
            return self._locate()[0]
        except _Gone:
            return self._value

    def _peek(self) -> JSON:
        value: JSON = self._read()
        return value

    def _sealed(self) -> JSON:
        """The current value, which this draft will no longer change in place."""
        value: JSON = self._read()
        self._draft._release(value)
        return value

    def _frozen(self, at: Sequence[str | int]) -> JSON:
        try:
            current, path = self._locate()
        except _Gone:
            current, path = self._value, None
        self._draft._release(current)
        return current if path == tuple(at) else _shallow(current)

    def _writable(self) -> tuple[Any, Path]:
        """The container as a working copy (copying it and its ancestors if needed), and path."""
        draft = self._draft
        draft._check_write()
        container, path = self._locate()
        if id(container) in draft._fresh:
            return container, path
        copy = draft._copy(container)
        self._put_here(copy)
        return copy, path

    def _put_here(self, value: JSON) -> None:
        """Store `value` at this view's place (no op recorded)."""
        if self._parent is None:
            self._draft._root = value
        else:
            parent, _ = self._parent._writable()
            if isinstance(parent, dict):
                dict.__setitem__(parent, self._key, value)
            else:
                assert isinstance(self._key, int)
                list.__setitem__(parent, self._key, value)
        self._value = value

    def _replace_self(self, value: JSON) -> None:
        """Replace this container with `value`, recording one `replace` op."""
        current, path = self._locate()
        draft = self._draft
        self._put_here(value)
        draft._origin[id(value)] = (value, current)  # views of the old container follow it
        draft._ops.append(Op("replace", path, value))

    def _child(self, key: str | int, value: JSON) -> Any:
        if isinstance(value, dict):
            return DraftDict(self._draft, self, key, value)
        if isinstance(value, list):
            return DraftList(self._draft, self, key, value)
        return value

    def _is_here(self, value: object, current: object) -> bool:
        """Whether `value` is a view of `current` (`x[k] += ...` stores the same object back)."""
        return isinstance(value, StateView) and value._peek() is current

    # -- what every view has ---------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StateView):
            other = other._peek()
        result: bool = self._read() == other
        return result

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._read())

    def __len__(self) -> int:
        return len(self._read())


class DraftDict(_View, MutableMapping[str, Any]):
    """A live view of a dict in a draft: the whole `dict` API, each write recording ops.

    Reading a dict or list value gives a view of it; reading a scalar gives the scalar.
    """

    __slots__ = ()
    _kind = dict

    def __getitem__(self, key: str) -> Any:
        return self._child(key, self._read()[key])

    def __setitem__(self, key: str, value: object) -> None:
        self._draft._check_write()
        self._check_key(key)
        current, path = self._locate()
        if key in current and self._is_here(value, current[key]):
            return
        self._store(key, self._draft._put(value, (*path, key)))

    def _store(self, key: str, new: JSON) -> None:
        """Set `key` to the frozen `new`, recording `add` or `replace`."""
        container, path = self._writable()
        kind: Literal["add", "replace"] = "replace" if key in container else "add"
        if kind == "replace":
            self._draft._release(container[key])
        dict.__setitem__(container, key, new)
        self._draft._ops.append(Op(kind, (*path, key), new))

    def _check_key(self, key: object) -> None:
        if not isinstance(key, str) or isinstance(key, enum.Enum):
            raise TypeError(
                f"{python_path(self._draft._name, self._locate()[1])} got a key {key!r} "
                f"({type(key).__name__}); keys of shared state must be str: use str(key)"
            )

    def __delitem__(self, key: str) -> None:
        self._draft._check_write()
        if key not in self._locate()[0]:
            raise KeyError(key)
        container, path = self._writable()
        self._draft._release(container[key])
        dict.__delitem__(container, key)
        self._draft._ops.append(Op("remove", (*path, key)))

    def __iter__(self) -> Iterator[str]:
        keys: Iterator[str] = iter(self._read())
        return keys

    def __reversed__(self) -> Iterator[str]:
        keys: Iterator[str] = reversed(self._read())
        return keys

    def __contains__(self, key: object) -> bool:
        return key in self._read()

    def get(self, key: str, default: Any = None) -> Any:
        """The value at `key` (a view for a dict or list), or `default`."""
        current = self._read()
        return self._child(key, current[key]) if key in current else default

    def pop(self, key: str, default: Any = _MISSING) -> Any:
        """Remove `key` and return its value (frozen), or `default` if missing."""
        self._draft._check_write()
        current = self._locate()[0]
        if key not in current:
            if default is _MISSING:
                raise KeyError(key)
            return default
        value = current[key]
        del self[key]
        return value

    def popitem(self) -> tuple[str, Any]:
        """Remove and return the last (key, value) pair, like `dict.popitem`."""
        self._draft._check_write()
        current = self._locate()[0]
        if not current:
            raise KeyError("popitem(): dictionary is empty")
        key = next(reversed(current))
        return key, self.pop(key)

    def update(self, other: Any = (), /, **kwargs: Any) -> None:
        """Set each key of `other` and `kwargs`; all values are read first, then written."""
        self._draft._check_write()
        pairs = dict(other, **kwargs)
        current, path = self._locate()
        for key in pairs:
            self._check_key(key)
        frozen = {
            key: self._draft._put(value, (*path, key))
            for key, value in pairs.items()
            if not (key in current and self._is_here(value, current[key]))
        }
        for key, value in frozen.items():
            self._store(key, value)

    def setdefault(self, key: str, default: Any = None) -> Any:
        """The value at `key`; if missing, first store `default` there."""
        if key not in self._read():
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Empty the dict (recorded as one `replace` with `{}`)."""
        self._draft._check_write()
        if self._locate()[0]:
            self._replace_self(FrozenDict())

    def copy(self) -> dict[str, JSON]:
        """A plain, editable deep copy of the current value."""
        value = thaw(self._read())
        assert isinstance(value, dict)
        return value

    def __or__(self, other: object) -> dict[str, Any]:
        if not isinstance(other, MutableMapping | dict):
            return NotImplemented
        return {**self._frozen_dict(), **other}

    def __ror__(self, other: object) -> dict[str, Any]:
        if not isinstance(other, MutableMapping | dict):
            return NotImplemented
        return {**other, **self._frozen_dict()}

    def __ior__(self, other: Any) -> DraftDict:  # type: ignore[misc]
        self.update(other)
        return self

    def _frozen_dict(self) -> dict[str, JSON]:
        value = self._sealed()
        assert isinstance(value, dict)
        return value


class DraftList(_View, MutableSequence[Any]):
    """A live view of a list in a draft: the whole `list` API, each write recording ops.

    `sort` and `reverse` record one `replace` of the list; `append`/`extend` record appends,
    which stay at the end of the list when rebased past other tools' changes.
    """

    __slots__ = ()
    _kind = list

    @overload
    def __getitem__(self, index: SupportsIndex) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> FrozenList: ...
    def __getitem__(self, index: SupportsIndex | slice) -> Any:
        current = self._read()
        if isinstance(index, slice):
            self._draft._release(current)
            return FrozenList(list.__getitem__(current, index))
        at = _normalise(index, len(current), "list index out of range")
        return self._child(at, current[at])

    @overload
    def __setitem__(self, index: SupportsIndex, value: Any) -> None: ...
    @overload
    def __setitem__(self, index: slice, value: Iterable[Any]) -> None: ...
    def __setitem__(self, index: SupportsIndex | slice, value: Any) -> None:
        self._draft._check_write()
        current, path = self._locate()
        if isinstance(index, slice):
            self._assign_slice(index, value)
            return
        at = _normalise(index, len(current), "list assignment index out of range")
        old = current[at]
        if self._is_here(value, old):
            return
        new = self._draft._put(value, (*path, at))
        container, path = self._writable()
        self._draft._release(old)
        list.__setitem__(container, at, new)
        self._draft._ops.append(Op("replace", (*path, at), new))

    @overload
    def __delitem__(self, index: SupportsIndex) -> None: ...
    @overload
    def __delitem__(self, index: slice) -> None: ...
    def __delitem__(self, index: SupportsIndex | slice) -> None:
        self._draft._check_write()
        current = self._locate()[0]
        if isinstance(index, slice):
            start, stop, step = index.indices(len(current))
            at = range(start, stop, step)
            self._remove(sorted(at, reverse=True))
            return
        self._remove([_normalise(index, len(current), "list assignment index out of range")])

    def __iter__(self) -> Iterator[Any]:
        index = 0
        while True:
            current = self._read()
            if index >= len(current):
                return
            yield self._child(index, current[index])
            index += 1

    def __contains__(self, value: object) -> bool:
        return _plain(value) in self._read()

    def insert(self, index: SupportsIndex, value: Any) -> None:
        """Insert `value` before `index`, normalised exactly like `list.insert`."""
        self._draft._check_write()
        current, path = self._locate()
        at = operator.index(index)
        size = len(current)
        at = max(at + size, 0) if at < 0 else min(at, size)
        new = self._draft._put(value, (*path, at))
        container, path = self._writable()
        list.insert(container, at, new)
        self._draft._ops.append(Op("add", (*path, at), new))

    def append(self, value: Any) -> None:
        """Add `value` at the end (rebased, it stays at the end of the list as it is then)."""
        self.extend((value,))

    def extend(self, values: Iterable[Any]) -> None:
        """Append each of `values` (read in full first, so `lst.extend(lst)` works)."""
        self._draft._check_write()
        items = list(values)
        current, path = self._locate()
        size = len(current)
        frozen = [
            self._draft._put(item, (*path, size + offset))
            for offset, item in enumerate(items)
        ]
        if not frozen:
            return
        container, path = self._writable()
        ops = self._draft._ops
        for item in frozen:
            ops.append(Op("add", (*path, len(container)), item, append=True))
            list.append(container, item)

    def pop(self, index: SupportsIndex = -1) -> Any:
        """Remove the item at `index` and return it (frozen)."""
        self._draft._check_write()
        current = self._locate()[0]
        if not current:
            raise IndexError("pop from empty list")
        at = _normalise(index, len(current), "pop index out of range")
        value = current[at]
        self._remove([at])
        return value

    def remove(self, value: Any) -> None:
        """Remove the first item equal to `value`."""
        self._draft._check_write()
        current = self._locate()[0]
        try:
            at = current.index(_plain(value))
        except ValueError:
            raise ValueError("list.remove(x): x not in list") from None
        self._remove([at])

    def clear(self) -> None:
        """Empty the list (recorded as one `replace` with `[]`)."""
        self._draft._check_write()
        if self._locate()[0]:
            self._replace_self(FrozenList())

    def sort(self, *, key: Callable[[Any], Any] | None = None, reverse: bool = False) -> None:
        """Sort in place like `list.sort` (`key` gets the frozen items); one `replace` op."""
        self._draft._check_write()
        current = self._sealed()
        assert isinstance(current, list)
        items = sorted(current, key=key, reverse=reverse)  # type: ignore[type-var,arg-type]
        self._reorder(current, items)

    def reverse(self) -> None:
        """Reverse in place; one `replace` op."""
        self._draft._check_write()
        current = self._sealed()
        assert isinstance(current, list)
        self._reorder(current, current[::-1])

    def index(self, value: Any, start: SupportsIndex = 0, stop: SupportsIndex = sys.maxsize) -> int:
        """The index of the first item equal to `value`, like `list.index`."""
        found: int = self._read().index(_plain(value), start, stop)
        return found

    def count(self, value: Any) -> int:
        """How many items equal `value`."""
        found: int = self._read().count(_plain(value))
        return found

    def copy(self) -> list[JSON]:
        """A plain, editable deep copy of the current value."""
        value = thaw(self._read())
        assert isinstance(value, list)
        return value

    def __add__(self, other: object) -> list[Any]:
        if not isinstance(other, list | DraftList):
            return NotImplemented
        return [*self._frozen_list(), *_frozen_items(other)]

    def __radd__(self, other: object) -> list[Any]:
        if not isinstance(other, list):
            return NotImplemented
        return [*other, *self._frozen_list()]

    def __mul__(self, times: SupportsIndex) -> list[Any]:
        return self._frozen_list() * times

    __rmul__ = __mul__

    def __imul__(self, times: SupportsIndex) -> DraftList:
        count = operator.index(times)
        if count <= 0:
            self.clear()
        elif count > 1:
            self.extend(self._frozen_list() * (count - 1))
        return self

    # -- helpers ---------------------------------------------------------------------------------

    def _frozen_list(self) -> list[JSON]:
        value = self._sealed()
        assert isinstance(value, list)
        return list(value)

    def _remove(self, indices: list[int]) -> None:
        """Remove the items at `indices` (given in descending order)."""
        if not indices:
            return
        container, path = self._writable()
        draft = self._draft
        for at in indices:
            draft._release(container[at])
            list.__delitem__(container, at)
            draft._ops.append(Op("remove", (*path, at)))

    def _assign_slice(self, index: slice, values: Iterable[Any]) -> None:
        current, path = self._locate()
        start, stop, step = index.indices(len(current))
        items = list(values)
        frozen = [
            self._draft._put(item, (*path, start + offset))
            for offset, item in enumerate(items)
        ]
        if step != 1:
            targets = range(start, stop, step)
            if len(frozen) != len(targets):
                raise ValueError(
                    f"attempt to assign sequence of size {len(frozen)} to extended slice of "
                    f"size {len(targets)}"
                )
            if not frozen:
                return
            container, path = self._writable()
            for at, item in zip(targets, frozen, strict=True):
                self._draft._release(container[at])
                list.__setitem__(container, at, item)
                self._draft._ops.append(Op("replace", (*path, at), item))
            return
        stop = max(stop, start)
        self._remove(list(range(stop - 1, start - 1, -1)))
        if not frozen:
            return
        container, path = self._writable()
        for offset, item in enumerate(frozen):
            list.insert(container, start + offset, item)
            self._draft._ops.append(Op("add", (*path, start + offset), item))

    def _reorder(self, current: list[JSON], items: list[JSON]) -> None:
        if all(a is b for a, b in zip(current, items, strict=True)):
            return
        self._replace_self(FrozenList(items))


def _slot(container: Any, key: str | int | None) -> Any:
    """`container[key]`, or a marker when there is no such place."""
    if isinstance(container, dict):
        return container.get(key, _MISSING) if isinstance(key, str) else _MISSING
    if isinstance(container, list) and isinstance(key, int) and 0 <= key < len(container):
        return container[key]
    return _MISSING


def _normalise(index: SupportsIndex, size: int, message: str) -> int:
    """A valid index from a possibly negative one, or IndexError(message) like `list` raises."""
    at = operator.index(index)
    if at < 0:
        at += size
    if not 0 <= at < size:
        raise IndexError(message)
    return at


def _shallow(value: JSON) -> JSON:
    """A new container object with the same items (a scalar as it is)."""
    if isinstance(value, dict):
        return FrozenDict(value)
    if isinstance(value, list):
        return FrozenList(value)
    return value


def _plain(value: object) -> object:
    """A view's current value; anything else as it is (for comparisons)."""
    return value._peek() if isinstance(value, StateView) else value


def _frozen_items(value: list[Any] | DraftList) -> list[Any]:
    if isinstance(value, DraftList):
        return value._frozen_list()
    return list(value)
