"""The values of the `pyox-agents` command's options that argparse cannot check by itself: each
a number in a range, refused with what was wrong and an example of a right one."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TypeVar

__all__ = ["connections_of", "count_of", "pace_of", "positive_seconds", "seconds_of"]

N = TypeVar("N", int, float)


def _number(text: str, kind: Callable[[str], N], fits: Callable[[N], bool], what: str) -> N:
    """`text` as a `kind` that `fits`; else an error saying it is not `what`."""
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not fits(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}")
    return value


def count_of(text: str) -> int:
    """A `--workers` value: a whole number of processes, at least 1."""
    return _number(text, int, lambda v: v >= 1, "a number of processes; write e.g. --workers 2")


def connections_of(text: str) -> int:
    """A cap of connections: a whole number, at least 1."""
    return _number(text, int, lambda v: v >= 1, "a number of connections; write e.g. 500")


def pace_of(text: str) -> float:
    """A `--pace` value: seconds from 0 to 60."""
    return _number(text, float, lambda v: 0 <= v <= 60,
                   "a number of seconds from 0 to 60; write e.g. --pace 1.5, or --pace 0 to "
                   "answer at once")


def seconds_of(text: str) -> float:
    """A `--grace` value: a positive number of seconds."""
    return _number(text, float, lambda v: v > 0,
                   "a positive number of seconds; write e.g. --grace 25")


def positive_seconds(text: str) -> float:
    """A timeout: a positive number of seconds."""
    return _number(text, float, lambda v: v > 0, "a positive number of seconds; write e.g. 10")
