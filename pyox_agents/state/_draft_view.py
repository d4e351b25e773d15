"""What a draft's live views share (`DraftDict`, `DraftList`): where a view is, its children,
its snapshot, and how it finds its place again after inserts and removals."""

from __future__ import annotations

from typing import Any, ClassVar, NoReturn, Protocol

from pyox_agents.state.frozen import JSON, FrozenDict, FrozenList, StateView, python_path
from pyox_agents.state.patch import Op, Path

_MISSING: Any = object()


class _Scope(Protocol):
    """What a view uses of the `Draft` it belongs to."""

    _name: str
    _ops: list[Op]

    def _check_write(self) -> None: ...

    def _put(self, value: object, at: Path) -> JSON: ...


class _Gone(RuntimeError):
    """A view's place is no longer in the document (writes raise it)."""


class _Seat:
    """Where a view is, kept in its one slot (`_view_state`, the slot the frozen types have).

    `parent` and `key` are the place (for a list parent, `key` is the index last seen: the
    view finds itself again by identity, near it, after inserts and removals). `kids` are the
    views of the container's children (by id), `snap` a frozen copy of the current value (None
    once changed since it was made), `live` False once the place was removed.
    """

    __slots__ = ("draft", "key", "kids", "live", "parent", "snap")

    def __init__(self, draft: _Scope, parent: _View | None, key: Any,
                 snap: JSON) -> None:
        self.draft = draft
        self.parent = parent
        self.key = key
        self.kids: dict[int, _View] = {}
        self.snap = snap
        self.live = True


class _View(StateView):
    """What `DraftDict` and `DraftList` share: where the view is, its children, its snapshot."""

    __slots__ = ()

    _view_state: _Seat
    _frozen_type: type
    _dict_view: ClassVar[Any]  # DraftDict and DraftList, set by pyox_agents.state.draft
    _list_view: ClassVar[Any]

    @property
    def _draft(self) -> _Scope:
        return self._view_state.draft

    @property
    def _parent(self) -> _View | None:
        return self._view_state.parent

    @_parent.setter
    def _parent(self, value: _View | None) -> None:
        self._view_state.parent = value

    @property
    def _key(self) -> Any:
        return self._view_state.key

    @_key.setter
    def _key(self, value: Any) -> None:
        self._view_state.key = value

    @property
    def _kids(self) -> dict[int, _View]:
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

    def _setup(self, draft: _Scope, parent: _View | None, key: Any,
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
                f"again from {name}")
        where = python_path(name, tokens[::-1])
        return _Gone(
            f"{where} was removed from {name} (or replaced); read it again from {name}")

    # -- children and values ---------------------------------------------------------------------

    def _store_raw(self, key: Any, value: object) -> None:
        raise NotImplementedError

    def _child(self, key: Any, item: Any) -> Any:
        """The item at `key` as the caller sees it: a view for a container (made on first read,
        and kept in this view's storage), else the scalar."""
        kind = type(item)
        if kind is FrozenDict:
            view: _View = self._dict_view._make(self._draft, self, key, item)
        elif kind is FrozenList:
            view = self._list_view._make(self._draft, self, key, item)
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

    def _peek(self) -> JSON:
        return self._snapshot()


def _snap_item(item: object) -> Any:
    return item._snapshot() if isinstance(item, _View) else item


def _refuse_new(cls: type) -> NoReturn:
    raise TypeError(
        f"a {cls.__name__} is made by a draft (ctx.state); use a dict or a list of your own")
