"""`DraftList`: a live view of a list in a draft; re-exported by `pyox_agents.state.draft`."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Iterator
from typing import Any, SupportsIndex, overload

from pyox_agents.state._draft_view import _refuse_new, _Scope, _snap_item, _View
from pyox_agents.state.frozen import JSON, FrozenList, thaw
from pyox_agents.state.patch import Op, Path


class DraftList(list[Any], _View):
    """A live view of a list in a draft: a `list` holding its current value, each write
    recording ops.

    `sort` and `reverse` record one `replace` of the list; `append`/`extend` record appends,
    which stay at the end of the list when rebased past other tools' changes. A slice reads as
    a `FrozenList`; `copy()`, `copy.copy` and `copy.deepcopy` give a plain, detached deep copy.
    `heapq`'s functions do not go through these methods: written in C, they change the view's
    own storage, and record nothing. The change is not committed on its own, and a later
    change through the methods may carry it into the version with no op for it, so the deltas
    no longer replay to the state. Use `heapq` on a copy and write it back:
    `heap = list(ctx.state["queue"]); heapq.heappush(heap, x); ctx.state["queue"] = heap`.
    """

    __slots__ = ("_view_state",)
    _frozen_type = FrozenList

    def __new__(cls, *args: object, **kwargs: object) -> DraftList:
        _refuse_new(cls)

    @classmethod
    def _make(cls, draft: _Scope, parent: _View | None, key: Any,
              frozen: FrozenList) -> DraftList:
        view = list.__new__(cls)
        list.extend(view, frozen)
        view._setup(draft, parent, key, frozen)
        return view

    def __init__(self, iterable: Iterable[Any] = (), /) -> None:
        """`view.__init__(items)` sets the items, like `list.__init__` (recorded as ops)."""
        self[:] = list(iterable)

    def _store_raw(self, key: Any, value: object) -> None:
        list.__setitem__(self, key, value)

    def _snapshot(self) -> JSON:
        snap = self._snap
        if snap is not None:
            return snap
        out = FrozenList(list.__iter__(self))  # the storage, views included (one pass)
        if len(self._kids) > 8:
            for at, item in enumerate(out):
                if isinstance(item, _View):
                    item._key = at
                    list.__setitem__(out, at, item._snapshot())
        else:
            for kid in self._kids.values():
                list.__setitem__(out, kid._place(), kid._snapshot())
        self._snap = out
        return out

    # -- reads -----------------------------------------------------------------------------------

    @overload
    def __getitem__(self, index: SupportsIndex) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> FrozenList: ...
    def __getitem__(self, index: SupportsIndex | slice) -> Any:
        if isinstance(index, slice):
            return FrozenList([_snap_item(item) for item in list.__getitem__(self, index)])
        at = _normalise(index, list.__len__(self), "list index out of range")
        return self._child(at, list.__getitem__(self, at))

    def __iter__(self) -> Iterator[Any]:
        at = 0
        while at < list.__len__(self):
            yield self._child(at, list.__getitem__(self, at))
            at += 1

    def __reversed__(self) -> Iterator[Any]:
        at = list.__len__(self) - 1
        while at >= 0:
            if at < list.__len__(self):
                yield self._child(at, list.__getitem__(self, at))
            at -= 1

    def copy(self) -> list[JSON]:
        """A plain, editable deep copy of the current value."""
        value = thaw(self._snapshot())
        assert isinstance(value, list)
        return value

    __copy__ = copy

    def __deepcopy__(self, memo: dict[int, object]) -> list[JSON]:
        return self.copy()

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[type[list[JSON]], tuple[Any]]:
        return (list, (self.copy(),))

    def __add__(self, other: object) -> list[Any]:
        if not isinstance(other, list):
            return NotImplemented
        return [*self._items(), *_items(other)]

    def __radd__(self, other: object) -> list[Any]:
        if not isinstance(other, list):
            return NotImplemented
        return [*_items(other), *self._items()]

    def __mul__(self, times: SupportsIndex) -> list[Any]:
        return self._items() * operator.index(times)

    __rmul__ = __mul__

    def _items(self) -> list[Any]:
        """The current items, frozen (for building a new value)."""
        snap = self._snapshot()
        assert isinstance(snap, list)
        return list(snap)

    # -- writes ----------------------------------------------------------------------------------

    @overload
    def __setitem__(self, index: SupportsIndex, value: Any) -> None: ...
    @overload
    def __setitem__(self, index: slice, value: Iterable[Any]) -> None: ...
    def __setitem__(self, index: SupportsIndex | slice, value: Any) -> None:
        path = self._begin()
        if isinstance(index, slice):
            self._assign_slice(index, value, path)
            return
        at = _normalise(index, list.__len__(self), "list assignment index out of range")
        old = list.__getitem__(self, at)
        if value is old:
            return
        new = self._draft._put(value, (*path, at))
        self._drop(old)
        list.__setitem__(self, at, new)
        self._record(Op("replace", (*path, at), new))

    @overload
    def __delitem__(self, index: SupportsIndex) -> None: ...
    @overload
    def __delitem__(self, index: slice) -> None: ...
    def __delitem__(self, index: SupportsIndex | slice) -> None:
        path = self._begin()
        size = list.__len__(self)
        if isinstance(index, slice):
            start, stop, step = index.indices(size)
            self._remove(sorted(range(start, stop, step), reverse=True), path)
            return
        self._remove([_normalise(index, size, "list assignment index out of range")], path)

    def insert(self, index: SupportsIndex, value: Any) -> None:
        """Insert `value` before `index`, normalised exactly like `list.insert`."""
        path = self._begin()
        at = operator.index(index)
        size = list.__len__(self)
        at = max(at + size, 0) if at < 0 else min(at, size)
        new = self._draft._put(value, (*path, at))
        list.insert(self, at, new)
        self._record(Op("add", (*path, at), new))

    def append(self, value: Any) -> None:
        """Add `value` at the end (rebased, it stays at the end of the list as it is then)."""
        self.extend((value,))

    def extend(self, values: Iterable[Any]) -> None:
        """Append each of `values` (read in full first, so `lst.extend(lst)` works)."""
        path = self._begin()
        items = list(values)
        size = list.__len__(self)
        frozen = [
            self._draft._put(item, (*path, size + offset)) for offset, item in enumerate(items)
        ]
        for item in frozen:
            self._record(Op("add", (*path, list.__len__(self)), item, append=True))
            list.append(self, item)

    def __iadd__(self, values: Iterable[Any]) -> DraftList:  # type: ignore[misc]
        self.extend(values)
        return self

    def __imul__(self, times: SupportsIndex) -> DraftList:
        count = operator.index(times)
        if count <= 0:
            self.clear()
        elif count > 1:
            self.extend(self._items() * (count - 1))
        return self

    def pop(self, index: SupportsIndex = -1) -> Any:
        """Remove the item at `index` and return it (frozen)."""
        path = self._begin()
        size = list.__len__(self)
        if not size:
            raise IndexError("pop from empty list")
        at = _normalise(index, size, "pop index out of range")
        value = _snap_item(list.__getitem__(self, at))
        self._remove([at], path)
        return value

    def remove(self, value: Any) -> None:
        """Remove the first item equal to `value`."""
        path = self._begin()
        try:
            at = list.index(self, value)
        except ValueError:
            raise ValueError("list.remove(x): x not in list") from None
        self._remove([at], path)

    def clear(self) -> None:
        """Empty the list (recorded as one `replace` with `[]`)."""
        path = self._begin()
        if list.__len__(self):
            for kid in self._kids.values():
                kid._live = False
            self._kids.clear()
            list.clear(self)
            self._record(Op("replace", path, FrozenList()))

    def sort(self, *, key: Callable[[Any], Any] | None = None, reverse: bool = False) -> None:
        """Sort in place like `list.sort` (views of the items move with them); one `replace`."""
        path = self._begin()
        current = list.copy(self)
        items = sorted(current, key=key, reverse=reverse)
        self._reorder(current, items, path)

    def reverse(self) -> None:
        """Reverse in place (views of the items move with them); one `replace` op."""
        path = self._begin()
        current = list.copy(self)
        self._reorder(current, current[::-1], path)

    # -- helpers ---------------------------------------------------------------------------------

    def _remove(self, indices: list[int], path: Path) -> None:
        """Remove the items at `indices` (given in descending order)."""
        for at in indices:
            self._drop(list.__getitem__(self, at))
            list.__delitem__(self, at)
            self._record(Op("remove", (*path, at)))

    def _assign_slice(self, index: slice, values: Iterable[Any], path: Path) -> None:
        start, stop, step = index.indices(list.__len__(self))
        frozen = [
            self._draft._put(item, (*path, start + offset))
            for offset, item in enumerate(list(values))
        ]
        if step != 1:
            targets = range(start, stop, step)
            if len(frozen) != len(targets):
                raise ValueError(
                    f"attempt to assign sequence of size {len(frozen)} to extended slice of "
                    f"size {len(targets)}")
            for at, item in zip(targets, frozen, strict=True):
                self._drop(list.__getitem__(self, at))
                list.__setitem__(self, at, item)
                self._record(Op("replace", (*path, at), item))
            return
        stop = max(stop, start)
        self._remove(list(range(stop - 1, start - 1, -1)), path)
        for offset, item in enumerate(frozen):
            list.insert(self, start + offset, item)
            self._record(Op("add", (*path, start + offset), item))

    def _reorder(self, current: list[Any], items: list[Any], path: Path) -> None:
        if all(a is b for a, b in zip(current, items, strict=True)):
            return
        list.__setitem__(self, slice(None), items)
        for at, item in enumerate(items):
            if isinstance(item, _View):
                item._key = at
        self._changed()
        self._draft._ops.append(Op("replace", path, self._snapshot()))


def _normalise(index: SupportsIndex, size: int, message: str) -> int:
    """A valid index from a possibly negative one, or IndexError(message) like `list` raises."""
    at = operator.index(index)
    if at < 0:
        at += size
    if not 0 <= at < size:
        raise IndexError(message)
    return at


def _items(value: list[Any]) -> list[Any]:
    """The items of a list; a view's current items frozen."""
    if isinstance(value, DraftList):
        return value._items()
    return list(value)
