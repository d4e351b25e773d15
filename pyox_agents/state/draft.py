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

from collections.abc import Callable
from typing import Any

from pyox_agents._errors import ToolError
from pyox_agents.state._draft_dict import DraftDict
from pyox_agents.state._draft_list import DraftList
from pyox_agents.state._draft_view import _MISSING, _View
from pyox_agents.state.frozen import JSON, FrozenDict, FrozenList, StateView, freeze
from pyox_agents.state.patch import Op, Path, diff

__all__ = ["Draft", "DraftDict", "DraftList", "StateAccessDenied"]


class StateAccessDenied(ToolError, PermissionError):
    """`ctx.state` in a tool that may not change it (a subagent given `state="read"`) or not
    read it (given no access): the message says so and what to give the subagent, written
    for the model and the person to read (a `ToolError`). A `PermissionError`."""


class Draft:
    """The scope of one tool call: its base version, its live views and its recorded ops.

    `root` is what `ctx.state` returns; `replace` is what `ctx.state = value` does. After
    `close()` reads still work and writes raise. `writable=False` makes every write raise
    `PermissionError` (a subagent given read access only).
    """

    __slots__ = ("__weakref__", "_closed", "_committed", "_name", "_on_close", "_ops", "_root",
                 "_view", "base", "base_version", "owner", "tool", "writable")

    def __init__(self, base: JSON, base_version: int = 0, *, tool: str = "", writable: bool = True,
                 name: str = "ctx.state", owner: object = None,
                 on_close: Callable[[Draft], None] | None = None) -> None:
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
                f"{self._name} changed after {who} returned; change it inside the tool")
        if not self.writable:
            who = f"tool {self.tool!r}" if self.tool else "this tool"
            raise StateAccessDenied(
                f"{self._name} is read-only in {who} (its agent was given state=\"read\"): read "
                f"it only, or give the subagent state=\"write\" to let its tools change it")

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


def _slot(container: Any, key: Any) -> Any:
    """`container[key]` (raw), or a marker when there is no such place."""
    if isinstance(container, dict):
        return dict.get(container, key, _MISSING) if isinstance(key, str) else _MISSING
    if isinstance(container, list) and isinstance(key, int) and 0 <= key < len(container):
        return list.__getitem__(container, key)
    return _MISSING


_View._dict_view = DraftDict  # a view makes its children's views with these
_View._list_view = DraftList
