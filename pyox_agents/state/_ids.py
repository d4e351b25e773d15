"""The one rule for ids a client or a caller chooses: a `State` id, which is a thread's id."""

from __future__ import annotations

import re

__all__ = ["ID_RULE", "is_id"]

_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")

ID_RULE = "letters, digits, '_' and '-', 1 to 128 characters"
"""The rule in words, for error messages."""


def is_id(text: str) -> bool:
    """Whether `text` is a valid id: 1 to 128 ASCII letters, digits, '_' or '-'."""
    return _ID.fullmatch(text) is not None
