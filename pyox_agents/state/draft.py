"""One tool call's editable view of the shared state: `ctx.state`.

Reads see the version the tool started from. A container read through a draft becomes a *view*:
a real `dict` or `list` (a subclass) whose own storage is this draft's working copy of the
container at that place, so `isinstance`, `json.dumps`, pydantic and every C-level reader see
its current value. There is one view per place: reading the same place twice gives the same
object, and a frozen container found at two places (`days + days`) gets one view at each.
Because a view is never at two places, its identity is its place: a write through it lands
where it was taken, after any insert or removal before it, and every alias sees it.

Each write changes the view's storage and records an RFC 6902 op at once, so finishing the
tool never needs a diff or a deep copy. Values put in are frozen at that moment: changing the
caller's own object later has no effect, and a value taken from the document and put at another
place is a copy there. A view whose place was removed or replaced (the root too, by
`ctx.state = ...`) keeps reading the value it had and refuses writes. A draft belongs to one
tool call (one thread); drafts share only frozen values.
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Callable, ItemsView, Iterable, Iterator, ValuesView
from typing import Any, Literal, NoReturn, SupportsIndex, overload

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
    """A view's place is no longer in the document (writes raise it)."""


class Draft:
    """The scope of one tool call: its base version, its live views and its recorded ops.

    `root` is what `ctx.state` returns; `replace` is what `ctx.state = value` does. After
    `close()` reads still work and writes raise. `writable=False` makes every write raise
    `PermissionError` (a subagent given read access only).
    """

    __slots__ = (
        "__weakref__",
        "_closed",
        "_committed",
        "_name",
        "_on_close",
        "_ops",
        "_root",
        "_view",
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
        self._root: JSON = self.base  # the document as last replaced (frozen)
        self._view: DraftDict | DraftList | None = None  # the live view of the root, once read
        self._ops: list[Op] = []
        self._closed = False
        self._committed = False  # set by SharedState.commit

    @property
    def root(self) -> Any:
        """The document: a `DraftDict` or `DraftList` view if it is a container, else the value."""
        view = self._view
        if view is not None:
            return view
        root = self._root
        if type(root) is FrozenDict:
            view = DraftDict._make(self, None, None, root)
        elif type(root) is FrozenList:
            view = DraftList._make(self, None, None, root)
        else:
            return root
        self._view = view
        return view

    @root.setter
    def root(self, value: object) -> None:
        self.replace(value)

    def replace(self, value: object) -> None:
        """Make `value` the whole document (`ctx.state = value`), recording the ops of a diff.

        Parts of the current document left at their place keep their identity, so the diff
        skips them (`{**ctx.state, "x": 1}` costs one op), and views of them keep working. The
        old root view, and views of parts not kept at their place, refuse writes from now on.

        Raises:
            TypeError: `value` is not JSON (the message names the path).
        """
        self._check_write()
        old_view = self._view
        if old_view is not None and value is old_view:
            return
        new = freeze(value, self._name)
        self._ops.extend(diff(self.value, new))
        self._root = new
        self._view = None
        if old_view is not None:
            old_view._live = False
            self._rehome(old_view, value, new)

    def _rehome(self, old: DraftDict | DraftList, value: object, new: JSON) -> None:
        """Move the views of the old root's children put back at their own place (the view
        itself at its key or index of `value`, as `{**ctx.state, ...}` does) under a new root
        view; any other value put there is a copy, and the view of the old child is gone."""
        if not old._kids or type(new) is not old._frozen_type or isinstance(value, StateView):
            return
        root = self.root
        assert isinstance(root, DraftDict | DraftList)
        for kid in list(old._kids.values()):
            place = kid._place()
            if _slot(value, place) is not kid or _slot(new, place) is not kid._snap:
                continue
            del old._kids[id(kid)]
            old._store_raw(place, kid._snap)  # the old root keeps reading what it held
            kid._parent = root
            kid._key = place
            root._store_raw(place, kid)
            root._kids[id(kid)] = kid

    def _end(self) -> JSON:
        """The current document as the new version, for a commit with nothing committed
        meanwhile: the changed views become frozen in place (no copy); the draft keeps only
        that frozen value, so its views refuse writes and read what they held.
        """
        view = self._view
        if view is not None:
            self._root = view._freeze_in_place()
            self._view = None
        return self._root

    @property
    def ops(self) -> list[Op]:
        """The ops recorded so far, in order, relative to `base`."""
        return list(self._ops)

    @property
    def value(self) -> JSON:
        """The current document (frozen; later writes through this draft do not change it)."""
        view = self._view
        return self._root if view is None else view._snapshot()

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

    def _put(self, value: object, at: Path) -> JSON:
        """`value` frozen, to be stored at the new place `at` (errors name that path).

        A view gives its current value (a copy: the view stays at its own place); a frozen
        value is stored as it is (a frozen container may be at several places: each gets its
        own view when read).
        """
        if isinstance(value, _View):
            return value._snapshot()
        if type(value) is FrozenDict or type(value) is FrozenList:
            return value
        return freeze(value, self._name, at=at)


class _Seat:
    """Where a view is, kept in its one slot (`_view_state`, the slot the frozen types have).

    `parent` and `key` are the place (for a list parent, `key` is the index last seen: the
    view finds itself again by identity, near it, after inserts and removals). `kids` are the
    views of the container's children (by id), `snap` a frozen copy of the current value (None
    once changed since it was made), `live` False once the place was removed.
    """

    __slots__ = ("draft", "key", "kids", "live", "parent", "snap")

    def __init__(self, draft: Draft, parent: DraftDict | DraftList | None, key: Any,
                 snap: JSON) -> None:
        self.draft = draft
        self.parent = parent
        self.key = key
        self.kids: dict[int, DraftDict | DraftList] = {}
        self.snap = snap
        self.live = True


class _View(StateView):
    """What `DraftDict` and `DraftList` share: where the view is, its children, its snapshot."""

    __slots__ = ()

    _view_state: _Seat
    _frozen_type: type

    @property
    def _draft(self) -> Draft:
        return self._view_state.draft

    @property
    def _parent(self) -> DraftDict | DraftList | None:
        return self._view_state.parent

    @_parent.setter
    def _parent(self, value: DraftDict | DraftList | None) -> None:
        self._view_state.parent = value

    @property
    def _key(self) -> Any:
        return self._view_state.key

    @_key.setter
    def _key(self, value: Any) -> None:
        self._view_state.key = value

    @property
    def _kids(self) -> dict[int, DraftDict | DraftList]:
        return self._view_state.kids

    @property
    def _snap(self) -> JSON:
        return self._view_state.snap

    @_snap.setter
    def _snap(self, value: JSON) -> None:
        self._view_state.snap = value

    @property
    def _live(self) -> bool:
        return self._view_state.live

    @_live.setter
    def _live(self, value: bool) -> None:
        self._view_state.live = value

    def _setup(self, draft: Draft, parent: DraftDict | DraftList | None, key: Any,
               frozen: JSON) -> None:
        object.__setattr__(self, "_view_state", _Seat(draft, parent, key, frozen))

    def _freeze_in_place(self) -> JSON:
        """End this view (its draft is committed as it is): the value it holds becomes frozen.

        A changed view becomes a FrozenDict/FrozenList in place (its class changes; layouts are
        identical), so the new version reuses the draft's working copies; an unchanged one
        gives back the frozen value it was made from, so that stays shared.
        """
        snap = self._snap
        if snap is not None:
            return snap
        for kid in list(self._kids.values()):
            self._store_raw(kid._place(), kid._freeze_in_place())
        frozen_type = self._frozen_type
        object.__delattr__(self, "_view_state")  # a frozen value keeps no draft alive
        object.__setattr__(self, "__class__", frozen_type)
        return self  # type: ignore[return-value]

    # -- where am I ------------------------------------------------------------------------------

    def _place(self) -> Any:
        """This view's key in its parent (a list index found by identity, near the last one)."""
        parent = self._parent
        if not isinstance(parent, list):
            return self._key
        size = list.__len__(parent)
        at = min(self._key, size - 1)  # removals may have left the last index past the end
        if at >= 0 and list.__getitem__(parent, at) is self:
            self._key = at
            return at
        for step in range(1, size):
            below, above = at - step, at + step
            if 0 <= below < size and list.__getitem__(parent, below) is self:
                self._key = below
                return below
            if 0 <= above < size and list.__getitem__(parent, above) is self:
                self._key = above
                return above
            if below < 0 and above >= size:
                break
        raise self._gone()

    def _path(self) -> Path:
        """The tokens of this view's place from the root.

        Raises:
            RuntimeError: the place (or one containing it) was removed or replaced.
        """
        tokens: list[str | int] = []
        view: _View | None = self
        while view is not None:
            if not view._live:
                raise self._gone()
            if view._parent is not None:
                tokens.append(view._place())
            view = view._parent
        tokens.reverse()
        return tuple(tokens)

    def _begin(self) -> Path:
        """Check that this draft may write here, and return the path of the place."""
        self._draft._check_write()
        return self._path()

    def _gone(self) -> _Gone:
        tokens: list[str | int] = []
        view: _View | None = self
        while view is not None and view._parent is not None:
            tokens.append(view._key)
            view = view._parent
        name = self._draft._name
        if view is self:  # the root
            return _Gone(
                f"{name} was replaced ({name} = ...) after this view of it was read; read it "
                f"again from {name}"
            )
        where = python_path(name, tokens[::-1])
        return _Gone(
            f"{where} was removed from {name} (or replaced); read it again from {name}"
        )

    # -- children and values ---------------------------------------------------------------------

    def _store_raw(self, key: Any, value: object) -> None:
        raise NotImplementedError

    def _child(self, key: Any, item: Any) -> Any:
        """The item at `key` as the caller sees it: a view for a container (made on first read,
        and kept in this view's storage), else the scalar."""
        kind = type(item)
        if kind is FrozenDict:
            view: DraftDict | DraftList = DraftDict._make(self._draft, self, key, item)  # type: ignore[arg-type]
        elif kind is FrozenList:
            view = DraftList._make(self._draft, self, key, item)  # type: ignore[arg-type]
        else:
            return item
        self._store_raw(key, view)
        self._kids[id(view)] = view
        return view

    def _drop(self, item: object) -> None:
        """`item` leaves this container: if it is a view, its place is gone."""
        if isinstance(item, _View):
            item._live = False
            self._kids.pop(id(item), None)

    def _changed(self) -> None:
        """This container changed: its snapshot, and those above it, must be made again."""
        view: _View | None = self
        while view is not None and view._snap is not None:
            view._snap = None
            view = view._parent

    def _record(self, op: Op) -> None:
        self._changed()
        self._draft._ops.append(op)

    def _snapshot(self) -> JSON:
        """The current value, frozen (made once per change; unchanged parts are shared)."""
        raise NotImplementedError

    def _frozen(self, at: Any) -> JSON:
        return self._snapshot()

    def _peek(self) -> JSON:
        return self._snapshot()


def _snap_item(item: object) -> Any:
    return item._snapshot() if isinstance(item, _View) else item


def _refuse_new(cls: type) -> NoReturn:
    raise TypeError(
        f"a {cls.__name__} is made by a draft (ctx.state); use a dict or a list of your own"
    )


class DraftDict(dict[str, Any], _View):
    """A live view of a dict in a draft: a `dict` holding its current value, each write
    recording ops.

    Reading a dict or list value gives a view of it; reading a scalar gives the scalar.
    `copy()`, `copy.copy` and `copy.deepcopy` give a plain, detached deep copy.
    """

    __slots__ = ("_view_state",)
    _frozen_type = FrozenDict

    def __new__(cls, *args: object, **kwargs: object) -> DraftDict:
        _refuse_new(cls)

    @classmethod
    def _make(cls, draft: Draft, parent: DraftDict | DraftList | None, key: Any,
              frozen: FrozenDict) -> DraftDict:
        view = dict.__new__(cls)
        dict.update(view, frozen)
        view._setup(draft, parent, key, frozen)
        return view

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """`view.__init__(...)` sets what is given, like `dict.__init__` (an update)."""
        self.update(*args, **kwargs)

    def _store_raw(self, key: Any, value: object) -> None:
        dict.__setitem__(self, key, value)

    def _snapshot(self) -> JSON:
        snap = self._snap
        if snap is not None:
            return snap
        # the storage, views included (dict.copy would read values through __getitem__)
        out = FrozenDict(dict.items(self))
        for kid in self._kids.values():
            dict.__setitem__(out, kid._key, kid._snapshot())
        self._snap = out
        return out

    # -- reads -----------------------------------------------------------------------------------

    def __getitem__(self, key: str) -> Any:
        return self._child(key, dict.__getitem__(self, key))

    def get(self, key: str, default: Any = None) -> Any:
        """The value at `key` (a view for a dict or list), or `default`."""
        if dict.__contains__(self, key):
            return self._child(key, dict.__getitem__(self, key))
        return default

    def __iter__(self) -> Iterator[str]:
        # defined so that dict(view) and {**view} read the values through __getitem__
        return dict.__iter__(self)

    def values(self) -> ValuesView[Any]:  # type: ignore[override]
        """The values (views for dicts and lists), like `dict.values`."""
        self._read_all()
        return dict.values(self)

    def items(self) -> ItemsView[str, Any]:  # type: ignore[override]
        """The (key, value) pairs (views for dicts and lists), like `dict.items`."""
        self._read_all()
        return dict.items(self)

    def _read_all(self) -> None:
        for key, item in list(dict.items(self)):
            kind = type(item)
            if kind is FrozenDict or kind is FrozenList:
                self._child(key, item)

    def copy(self) -> dict[str, JSON]:
        """A plain, editable deep copy of the current value."""
        value = thaw(self._snapshot())
        assert isinstance(value, dict)
        return value

    __copy__ = copy

    def __deepcopy__(self, memo: dict[int, object]) -> dict[str, JSON]:
        return self.copy()

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[type[dict[str, JSON]], tuple[Any]]:
        return (dict, (self.copy(),))

    @classmethod
    def fromkeys(cls, keys: Iterable[Any], value: Any = None) -> dict[Any, Any]:
        """A plain dict with `keys`, each set to `value` (like `dict.fromkeys`)."""
        return dict.fromkeys(keys, value)

    def __or__(self, other: object) -> dict[str, Any]:  # type: ignore[override]
        if not isinstance(other, dict):
            return NotImplemented
        return {**self._snapshot(), **other}  # type: ignore[dict-item]

    def __ror__(self, other: object) -> dict[str, Any]:  # type: ignore[override]
        if not isinstance(other, dict):
            return NotImplemented
        return {**other, **self._snapshot()}  # type: ignore[dict-item]

    # -- writes ----------------------------------------------------------------------------------

    def __setitem__(self, key: str, value: object) -> None:
        self._draft._check_write()
        self._check_key(key)
        path = self._path()
        old = dict.get(self, key, _MISSING)
        if value is old and old is not _MISSING:
            return
        self._store(key, self._draft._put(value, (*path, key)), path)

    def _store(self, key: str, new: JSON, path: Path) -> None:
        """Set `key` to the frozen `new`, recording `add` or `replace`."""
        old = dict.get(self, key, _MISSING)
        kind: Literal["add", "replace"] = "add" if old is _MISSING else "replace"
        self._drop(old)
        dict.__setitem__(self, key, new)
        self._record(Op(kind, (*path, key), new))

    def _check_key(self, key: object) -> None:
        if not isinstance(key, str) or isinstance(key, enum.Enum):
            raise TypeError(
                f"{python_path(self._draft._name, self._path())} got a key {key!r} "
                f"({type(key).__name__}); keys of shared state must be str: use str(key)"
            )

    def __delitem__(self, key: str) -> None:
        path = self._begin()
        if not dict.__contains__(self, key):
            raise KeyError(key)
        self._drop(dict.__getitem__(self, key))
        dict.__delitem__(self, key)
        self._record(Op("remove", (*path, key)))

    def pop(self, key: str, default: Any = _MISSING) -> Any:
        """Remove `key` and return its value (frozen), or `default` if missing."""
        self._begin()
        if not dict.__contains__(self, key):
            if default is _MISSING:
                raise KeyError(key)
            return default
        value = _snap_item(dict.__getitem__(self, key))
        del self[key]
        return value

    def popitem(self) -> tuple[str, Any]:
        """Remove and return the last (key, value) pair, like `dict.popitem`."""
        self._begin()
        if not dict.__len__(self):
            raise KeyError("popitem(): dictionary is empty")
        key = next(dict.__reversed__(self))
        return key, self.pop(key)

    def update(self, other: Any = (), /, **kwargs: Any) -> None:
        """Set each key of `other` and `kwargs`; all values are read first, then written."""
        path = self._begin()
        pairs = dict(other, **kwargs)
        for key in pairs:
            self._check_key(key)
        frozen = {
            key: self._draft._put(value, (*path, key))
            for key, value in pairs.items()
            if value is not dict.get(self, key, _MISSING)
        }
        for key, value in frozen.items():
            self._store(key, value, path)

    def setdefault(self, key: str, default: Any = None) -> Any:
        """The value at `key`; if missing, first store `default` there."""
        if not dict.__contains__(self, key):
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Empty the dict (recorded as one `replace` with `{}`)."""
        path = self._begin()
        if dict.__len__(self):
            for kid in self._kids.values():
                kid._live = False
            self._kids.clear()
            dict.clear(self)
            self._record(Op("replace", path, FrozenDict()))

    def __ior__(self, other: Any) -> DraftDict:  # type: ignore[override, misc]
        self.update(other)
        return self


class DraftList(list[Any], _View):
    """A live view of a list in a draft: a `list` holding its current value, each write
    recording ops.

    `sort` and `reverse` record one `replace` of the list; `append`/`extend` record appends,
    which stay at the end of the list when rebased past other tools' changes. A slice reads as
    a `FrozenList`; `copy()`, `copy.copy` and `copy.deepcopy` give a plain, detached deep copy.
    `heapq`'s functions work through the list's methods (recording their ops).
    """

    __slots__ = ("_view_state",)
    _frozen_type = FrozenList

    def __new__(cls, *args: object, **kwargs: object) -> DraftList:
        _refuse_new(cls)

    @classmethod
    def _make(cls, draft: Draft, parent: DraftDict | DraftList | None, key: Any,
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
        out = FrozenList(list.copy(self))  # the storage, views included
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
                    f"size {len(targets)}"
                )
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


def _slot(container: Any, key: Any) -> Any:
    """`container[key]` (raw), or a marker when there is no such place."""
    if isinstance(container, dict):
        return dict.get(container, key, _MISSING) if isinstance(key, str) else _MISSING
    if isinstance(container, list) and isinstance(key, int) and 0 <= key < len(container):
        return list.__getitem__(container, key)
    return _MISSING


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
