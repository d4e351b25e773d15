"""Paths in a JSON document: as Python subscripts for messages (`python_path`), as RFC 6901 JSON
Pointers (`pointer`, `parse_pointer`), and the lone surrogates no JSON text may hold."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str) -> int | None:
    """The index of the first lone surrogate (U+D800 to U+DFFF) in `text`, or None.

    Python strings hold them (`surrogateescape` decoding of a file name makes them), but they
    are not text: UTF-8 cannot encode them, so no store, stream or browser can take them.
    """
    if text.isascii():
        return None
    found = _SURROGATE.search(text)
    return None if found is None else found.start()


DECODE_HINT = ("decode bytes with errors='replace' (for a file name: name.encode('utf-8', "
               "'surrogateescape').decode('utf-8', 'replace'))")
"""What to do about a lone surrogate, for the messages that refuse one."""


def python_path(path: str, tokens: Iterable[str | int]) -> str:
    """`path` followed by `tokens` as Python subscripts: `state["todos"][3]`."""
    parts = [path]
    for token in tokens:
        if isinstance(token, int):
            parts.append(f"[{token}]")
        else:
            # a key with a lone surrogate is written escaped (\udcff): a message naming it
            # must itself be text that encodes, in a log line or an HTTP error body
            ascii_only = lone_surrogate(token) is not None
            parts.append(f"[{json.dumps(token, ensure_ascii=ascii_only)}]")
    return "".join(parts)


def pointer(tokens: Iterable[str | int]) -> str:
    """The RFC 6901 JSON Pointer of a path: `~` becomes `~0`, `/` becomes `~1`; the root is ``."""
    return "".join("/" + str(token).replace("~", "~0").replace("/", "~1") for token in tokens)


def parse_pointer(text: str) -> tuple[str, ...]:
    """The tokens of an RFC 6901 JSON Pointer (all str: the pointer does not say list or dict).

    Raises:
        ValueError: the pointer is neither `` nor starts with `/`, has a `~` that is not `~0`
            or `~1`, or a lone surrogate (no UTF-8 text can carry it).
    """
    if text == "":
        return ()
    if not text.startswith("/"):
        raise ValueError(
            f"{text!r} is not a JSON Pointer: it must be '' (the whole document) or start with "
            f"'/', like '/todos/0'")
    if "~" in text and _BAD_ESCAPE.search(text):
        raise ValueError(f"{text!r} is not a JSON Pointer: '~' is written '~0' and '/' '~1' "
                         "in a token, and '~' followed by anything else is not allowed")
    if lone_surrogate(text) is not None:
        raise ValueError(f"{text!a} is not a JSON Pointer a state can hold: it has a "
                         "lone surrogate")
    return tuple(token.replace("~1", "/").replace("~0", "~") for token in text[1:].split("/"))


_BAD_ESCAPE = re.compile(r"~(?![01])")
