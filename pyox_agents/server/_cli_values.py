"""The values of the `pyox-agents` command's options that argparse cannot check by itself."""

from __future__ import annotations

import argparse

__all__ = ["count_of", "pace_of", "seconds_of"]


def count_of(text: str) -> int:
    """A `--workers` value: a whole number of processes, at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of processes; write e.g. "
                                         "--workers 2")
    return value


def pace_of(text: str) -> float:
    """A `--pace` value: seconds from 0 to 60."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 60:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds from 0 to 60; "
                                         "write e.g. --pace 1.5, or --pace 0 to answer at once")
    return value


def seconds_of(text: str) -> float:
    """A `--grace` value: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds; "
                                         "write e.g. --grace 25")
    return value
