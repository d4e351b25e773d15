"""`DraftDict`: a live view of a dict in a draft; re-exported by `pyox_agents.state.draft`."""

from __future__ import annotations

import enum
from collections.abc import ItemsView, Iterable, Iterator, ValuesView
from typing import Any, Literal, SupportsIndex

from pyox_agents.state._draft_view import _MISSING, _refuse_new, _Scope, _snap_item, _View
from pyox_agents.state._json_errors import NotJSON
from pyox_agents.state.frozen import JSON, FrozenDict, FrozenList, python_path, thaw
from pyox_agents.state.patch import Op, Path


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
    def _make(cls, draft: _Scope, parent: _View | None, key: Any,
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
            raise NotJSON(
                f"{python_path(self._draft._name, self._path())} got a key {key!r} "
                f"({type(key).__name__}); keys of shared state must be str: use str(key)")

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
