"""Which images and files a model takes, and the check that refuses a run before it starts when
its model cannot take one of its messages' parts (never dropping the part silently).

A model says what it takes with an `accepts(media_type, source)` method (and, for the error
message, an `input_kinds` attribute). A model without `accepts` is given every part as it is.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pyox_agents._errors import PyoxError
from pyox_agents.state._pointers import DECODE_HINT, lone_surrogate
from pyox_agents.state.messages import File, Image, Message

__all__ = ["ANY_INPUT", "InputKinds", "InputNotAccepted", "Source", "base_media_type",
           "check_inputs", "source_of"]

Source = Literal["data", "url"]
"""Where a part's bytes are: carried in a `data:` URL, or at a URL the provider fetches."""

_SOURCES: Mapping[frozenset[str], str] = {frozenset({"data", "url"}): "data or URL",
                                          frozenset({"data"}): "data only",
                                          frozenset({"url"}): "URL only"}


def base_media_type(media_type: str) -> str:
    """`media_type` without its parameters, in lower case: "Text/Plain; charset=utf-8" ->
    "text/plain"."""
    return media_type.split(";")[0].strip().lower()


def source_of(url: str) -> Source:
    """"data" for a `data:` URL, else "url"."""
    return "data" if url.startswith("data:") else "url"


@dataclass(frozen=True, slots=True)
class InputKinds:
    """The images and files a model takes: media type patterns ("image/*", "application/pdf"),
    each with the sources it takes them from ("data", "url").

    `InputKinds({"image/*": ("data", "url"), "application/pdf": ("data",)})`; `ANY_INPUT`
    takes everything.
    """

    kinds: Mapping[str, tuple[Source, ...]]

    def accepts(self, media_type: str, source: Source = "data") -> bool:
        """Whether a part of `media_type` from `source` is taken."""
        return any(fnmatch.fnmatchcase(base_media_type(media_type), pattern) and source in sources
                   for pattern, sources in self.kinds.items())

    def describe(self) -> str:
        """What is taken, for an error message: "image/* (data or URL), application/pdf
        (data only)"; "text only" when nothing is."""
        if not self.kinds:
            return "text only"
        return ", ".join(f"{pattern} ({_SOURCES.get(frozenset(sources), '/'.join(sources))})"
                         for pattern, sources in self.kinds.items())


ANY_INPUT = InputKinds({"*/*": ("data", "url")})
"""Every image and file, from data or URL (models that pass parts on as they are)."""


class InputNotAccepted(PyoxError, ValueError):
    """A message has an image or file the model cannot take, or text that is not text (a lone
    surrogate); `path` names the part."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


PartPaths = Mapping[tuple[int, str, int], str]
"""Where each part came from in a client's request: (message index, "images" or "files",
index) -> a path such as "messages[2].content[1]"."""


def check_inputs(model: object, messages: Sequence[Message], paths: PartPaths | None = None
                 ) -> None:
    """Refuse `messages` when `model` cannot take one of their images or files, or when their
    text holds a lone surrogate (UTF-8 cannot encode it: no model, store or audit can take it).

    Raises:
        InputNotAccepted: naming the part's path (from `paths`, else
            "messages[i].files[j]"), its media type, and what the model takes; or the text's
            path ("messages[i].content") and where the surrogate is.
    """
    _check_text(messages)
    accepts = getattr(model, "accepts", None)
    if accepts is None:
        return
    for index, field, number, part in _parts(messages):
        source = source_of(part.url)
        if accepts(part.media_type, source):
            continue
        where = (paths or {}).get((index, field, number), f"messages[{index}].{field}[{number}]")
        kinds = getattr(model, "input_kinds", None)
        takes = kinds.describe() if isinstance(kinds, InputKinds) else "other kinds"
        name = getattr(model, "name", type(model).__name__)
        how = "as data" if source == "data" else "by URL"
        what = "an image" if field == "images" else "a file"
        raise InputNotAccepted(
            f"{where} is {what} of type {part.media_type} sent {how}, which model {name!r} "
            f"cannot take (it takes {takes}); send one of those, or run an agent whose model "
            f"takes {part.media_type}", where)


def _check_text(messages: Sequence[Message]) -> None:
    for index, message in enumerate(messages):
        for field, text in (("content", message.content), ("name", message.name or "")):
            at = lone_surrogate(text)
            if at is not None:
                where = f"messages[{index}].{field}"
                raise InputNotAccepted(f"{where} holds a lone surrogate ({text[at]!r} at index "
                                       f"{at}), which is not text: {DECODE_HINT}", where)


def _parts(messages: Sequence[Message]) -> Iterator[tuple[int, str, int, Image | File]]:
    for index, message in enumerate(messages):
        for number, image in enumerate(message.images):
            yield index, "images", number, image
        for number, file in enumerate(message.files):
            yield index, "files", number, file
