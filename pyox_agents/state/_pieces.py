"""`Pieces`: a text that arrives in many small pieces (a model's tokens), kept in few objects.

A reply streamed token by token would otherwise keep one string and one list slot per token
until it ends, about a hundred bytes each; here every `JOIN_EVERY` pieces become one string, so
what an open stream holds grows with its text, not with its token count, and joining never
copies more than the last few pieces.
"""

from __future__ import annotations

__all__ = ["JOIN_EVERY", "Pieces"]

JOIN_EVERY = 32
"""Pieces joined into one string at a time."""


class Pieces:
    """Text added piece by piece with `add`; `text()` is all of it."""

    __slots__ = ("_joined", "_recent")

    def __init__(self) -> None:
        self._joined: list[str] = []
        self._recent: list[str] = []

    def add(self, piece: str) -> None:
        """Add `piece` at the end."""
        recent = self._recent
        recent.append(piece)
        if len(recent) >= JOIN_EVERY:
            self._joined.append("".join(recent))
            recent.clear()

    def text(self) -> str:
        """The whole text so far (kept as one string from then on: asked again, the same)."""
        if not self._joined and len(self._recent) <= 1:
            return self._recent[0] if self._recent else ""
        whole = "".join(self._joined) + "".join(self._recent)
        self._joined, self._recent = [], [whole]
        return whole

    def adopt(self, text: str) -> None:
        """Hold `text`, the same text as all the pieces added, in their place (one string
        shared with whoever else holds it, not a copy of its own)."""
        self._joined, self._recent = [], [text]

    def __bool__(self) -> bool:
        return bool(self._joined or self._recent)
