"""The garbage collector's settings for a server with many open streams: a process's choice,
made by the CLI or by the app's author (`tune_gc()`), never by importing or building an app."""

from __future__ import annotations

import gc

__all__ = ["tune_gc"]


def tune_gc() -> None:
    """Tune this process's garbage collector for serving many streams at once.

    Freezes what start-up allocated out of the collector's reach (call it once the app is
    built), makes young collections run every 10,000 allocations and the middle ones every 5 of
    those, so each stays short (~30 ms with 1,000 open streams, ~70 ms every 20), and full ones
    as rare as before. Without it, collections pause every stream for hundreds of milliseconds
    (bench/concurrency.py). `pyox-agents serve` and `demo` call it; it changes the whole
    process's `gc` settings, so a library never does.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 5, 400)
