"""Read-only JSON values: the committed versions of the shared state.

`FrozenDict` and `FrozenList` subclass `dict` and `list`, so `isinstance`, `json.dumps`, `==` and
pydantic accept them as they are, but every change raises `TypeError`. `freeze` validates a value
as JSON and returns its frozen form, reusing containers that are already frozen: that reuse is
what lets versions share structure. `thaw` makes a plain editable deep copy.

What a subclass cannot stop: C code that writes a list's or dict's storage without calling its
methods. In the standard library that is `heapq`'s C functions (`heappush`, `heappop`,
`heapify`, `heapreplace`, `heappushpop` and the private `_max` ones), which accept any list
subclass; `list`'s or `dict`'s own methods called on an instance by hand (`list.append(value,
x)`, `list.sort(value)`, `list.__init__`, `dict.update(value, ...)`); and `exec`/`eval` given a
frozen dict as globals (they add `__builtins__` before refusing). Those change a frozen value
in place, shared by every version that holds it, with no delta: copy first (`heap =
list(value)`). Everything else refuses: the methods and operators, `bisect.insort`,
`random.shuffle`, `operator.iadd` (`sorted` copies).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NoReturn, TypeAlias

from pyox_agents.state._json_errors import MAX_DEPTH, NotJSON, check_text, not_json, too_deep
from pyox_agents.state._pointers import lone_surrogate, parse_pointer, pointer, python_path

__all__ = [
    "JSON",
    "MAX_DEPTH",
    "FrozenDict",
    "FrozenList",
    "NotJSON",
    "StateView",
    "freeze",
    "lone_surrogate",
    "parse_pointer",
    "pointer",
    "python_path",
    "thaw",
]

JSON: TypeAlias = dict[str, "JSON"] | list["JSON"] | str | int | float | bool | None

_READ_ONLY = (
    "this value is read-only (a committed version of the shared state); change it through "
    "ctx.state inside a tool, or make an editable copy: pyox_agents.state.frozen.thaw(value) "
    "copies it whole ({copy} copies one level)")


def _refuse(copy: str) -> NoReturn:
    raise TypeError(_READ_ONLY.format(copy=copy))


def _refusing(copy: str) -> Callable[..., NoReturn]:
    """A method that refuses every call: what each way to change a frozen value is."""

    def refuse(self: object, *args: object, **kwargs: object) -> NoReturn:
        _refuse(copy)

    return refuse


class _Sealed(type):
    """Metaclass of the frozen types: `FrozenList(items)` is filled by `__new__` alone, so
    `__init__` (which would refill an existing instance) can refuse every call."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        new: Any = cls.__new__
        return new(cls, *args, **kwargs)


class FrozenDict(dict[str, JSON], metaclass=_Sealed):
    """A read-only dict. `dict(value)` makes an editable (shallow) copy; `copy.deepcopy` a deep one.

    The library builds and fills fresh instances through `dict`'s own methods before anyone
    else sees them; once handed out, an instance never changes. Every method that changes a
    dict raises `TypeError`, and so do `__init__` and attribute assignment (`__class__` too).
    Only an explicit call of `dict`'s own C methods on an instance
    (`dict.__setitem__(value, k, v)`) gets past: that is not an accident of ordinary code.
    """

    # `__class__` assignment needs an identical layout, so with this slot no plain dict
    # subclass can be swapped in for this type (`object.__setattr__(v, "__class__", X)`). A
    # draft's view has the same one slot (it holds where the view is): when its tool commits,
    # a changed view becomes a FrozenDict in place, so its working copy is the new version.
    __slots__ = ("_view_state",)

    def __new__(cls, *args: Any, **kwargs: Any) -> FrozenDict:
        self = dict.__new__(cls)
        if args and isinstance(args[0], StateView):
            args = (args[0]._peek(), *args[1:])
        dict.update(self, *args, **kwargs)
        return self

    def __init__(self, *args: object, **kwargs: object) -> None:
        _refuse("dict(value)")

    __setattr__ = __delattr__ = __setitem__ = __delitem__ = __ior__ = _refusing("dict(value)")
    update = pop = popitem = clear = setdefault = _refusing("dict(value)")

    @classmethod
    def fromkeys(cls, keys: Iterable[object], value: object = None) -> FrozenDict:  # type: ignore[override]
        """A new FrozenDict with `keys`, each set to `value` (checked as JSON)."""
        frozen = freeze(dict.fromkeys(keys, value))
        assert isinstance(frozen, FrozenDict)
        return frozen

    def __copy__(self) -> dict[str, JSON]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, object]) -> dict[str, JSON]:
        return {key: thaw(value) for key, value in self.items()}

    def __reduce__(self) -> tuple[type[FrozenDict], tuple[dict[str, JSON]]]:
        return (FrozenDict, (dict(self),))


class FrozenList(list[JSON], metaclass=_Sealed):
    """A read-only list. `list(value)` makes an editable (shallow) copy; `copy.deepcopy` a deep one.

    Like `FrozenDict`, filled only through `list`'s own methods before it is handed out, and
    every change raises `TypeError`: the list methods and operators, `__init__`, attribute
    assignment, `bisect.insort`, `random.shuffle`. Not `heapq`'s functions: written in C, they
    change any list subclass's storage in place, past its methods (this list would change,
    for every version that shares it, with no delta), as does `list.append(value, x)` called
    by hand. Give `heapq` a copy: `heap = list(value)`.
    """

    __slots__ = ("_view_state",)  # see FrozenDict

    def __new__(cls, iterable: Iterable[object] = (), /) -> FrozenList:
        self = list.__new__(cls)
        items: Any = iterable._peek() if isinstance(iterable, StateView) else iterable
        list.extend(self, items)
        return self

    def __init__(self, *args: object, **kwargs: object) -> None:
        _refuse("list(value)")

    __setattr__ = __delattr__ = __setitem__ = __delitem__ = _refusing("list(value)")
    __iadd__ = __imul__ = _refusing("list(value)")
    append = extend = insert = remove = pop = clear = sort = reverse = _refusing("list(value)")

    def __copy__(self) -> list[JSON]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, object]) -> list[JSON]:
        return [thaw(value) for value in self]

    def __reduce__(self) -> tuple[type[FrozenList], tuple[list[JSON]]]:
        return (FrozenList, (list(self),))


class StateView:
    """Base of the live views a draft hands out (`DraftDict`, `DraftList`).

    `freeze` takes a view's current value; `thaw` copies it. Defined here so this module needs
    nothing from the draft module.
    """

    __slots__ = ()

    def _peek(self) -> JSON:
        """The view's current value, frozen: never to change afterwards."""
        raise NotImplementedError


def freeze(value: object, path: str = "state", *, at: Sequence[str | int] = ()) -> JSON:
    """Check that `value` is JSON and return it frozen; frozen containers are reused as they are.

    `path` (with the tokens `at` appended) names the value in error messages, in Python form
    (`ctx.state["todos"][3]`). A draft view gives its current value. `at` is also where the value
    goes in its document, so the `MAX_DEPTH` limit counts from the document's root.

    Raises:
        TypeError: a value or key that is not JSON (a str with a lone surrogate, nesting past
            `MAX_DEPTH`), naming its path and what to use instead.
    """
    kind = type(value)
    if kind in _SCALARS:
        if kind is float and not math.isfinite(value):  # type: ignore[arg-type]
            raise NotJSON(not_json(value, python_path(path, at)))
        if kind is str and not value.isascii():  # type: ignore[attr-defined]
            check_text(value, path, at)  # type: ignore[arg-type]
        if len(at) >= MAX_DEPTH:
            raise NotJSON(too_deep(path, at))
        return value  # type: ignore[return-value]
    if isinstance(value, FrozenDict | FrozenList):
        return value
    return _freeze(value, path, list(at))


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _freeze(value: object, path: str, at: list[str | int]) -> JSON:
    if len(at) >= MAX_DEPTH:
        raise NotJSON(too_deep(path, at))
    kind = type(value)
    if kind is dict and len(at) + 1 < MAX_DEPTH:
        return _freeze_dict(value, path, at)  # type: ignore[arg-type]
    if kind is list and len(at) + 1 < MAX_DEPTH:
        return _freeze_list(value, path, at)  # type: ignore[arg-type]
    if kind in _SCALARS:
        if kind is float and not math.isfinite(value):  # type: ignore[arg-type]
            raise NotJSON(not_json(value, python_path(path, at)))
        if kind is str and not value.isascii():  # type: ignore[attr-defined]
            check_text(value, path, at)  # type: ignore[arg-type]
        return value  # type: ignore[return-value]
    if isinstance(value, FrozenDict | FrozenList):
        return value
    if isinstance(value, StateView):
        return value._peek()
    if isinstance(value, dict):
        return _freeze_mapping(value, path, at)
    if isinstance(value, list):
        items = FrozenList()
        for index, item in enumerate(value):
            at.append(index)
            list.append(items, _freeze(item, path, at))
            at.pop()
        return items
    if isinstance(value, enum.Enum):
        raise NotJSON(not_json(value, python_path(path, at)))
    if isinstance(value, str):
        text = str.__str__(value)
        check_text(text, path, at)
        return text
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise NotJSON(not_json(value, python_path(path, at)))
        return float(value)
    raise NotJSON(not_json(value, python_path(path, at)))


# A plain dict or list (what json.loads gives) is copied whole by `dict`'s or `list`'s own C
# code, then walked once: str, int, bool and None items, most of a state, stay as they are
# (a non-ASCII str is checked for lone surrogates); every other item goes through `_freeze`,
# which raises, with the path, what the slow path would. Items sit at depth len(at) + 1, which
# the callers keep under MAX_DEPTH, so a scalar item needs no depth check.


def _freeze_dict(value: dict[Any, Any], path: str, at: list[str | int]) -> FrozenDict:
    frozen: FrozenDict = dict.__new__(FrozenDict)
    dict.update(frozen, value)
    for key, item in value.items():
        if type(key) is not str:
            return _freeze_mapping(value, path, at)  # refuses the key, with its path
        if not key.isascii():
            check_text(key, path, at, key=True)
        kind = type(item)
        if kind is str:
            if not item.isascii():
                at.append(key)
                check_text(item, path, at)
                at.pop()
        elif kind is not int and kind is not bool and item is not None:
            at.append(key)
            new = _freeze(item, path, at)
            at.pop()
            if new is not item:
                dict.__setitem__(frozen, key, new)
    return frozen


def _freeze_list(value: list[Any], path: str, at: list[str | int]) -> FrozenList:
    frozen: FrozenList = list.__new__(FrozenList)
    list.extend(frozen, value)
    for index, item in enumerate(value):
        kind = type(item)
        if kind is str:
            if not item.isascii():
                at.append(index)
                check_text(item, path, at)
                at.pop()
        elif kind is not int and kind is not bool and item is not None:
            at.append(index)
            new = _freeze(item, path, at)
            at.pop()
            if new is not item:
                list.__setitem__(frozen, index, new)
    return frozen


def _freeze_mapping(value: dict[Any, Any], path: str, at: list[str | int]) -> FrozenDict:
    frozen = FrozenDict()
    for key, item in value.items():
        if not isinstance(key, str) or isinstance(key, enum.Enum):
            raise NotJSON(
                f"{python_path(path, at)} has a key {key!r} ({type(key).__name__}); keys of "
                f"shared state must be str: use str(key)")
        if not key.isascii():
            check_text(key, path, at, key=True)
        at.append(key)
        dict.__setitem__(frozen, str(key), _freeze(item, path, at))
        at.pop()
    return frozen


def thaw(value: object) -> JSON:
    """A plain, editable deep copy of a JSON value (frozen or not, or a draft view)."""
    if isinstance(value, StateView):
        value = value._peek()
    if isinstance(value, dict):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, list):
        return [thaw(item) for item in value]
    return value  # type: ignore[return-value]
