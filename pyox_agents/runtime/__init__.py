"""The run loop and its parts: runner, journal, replies, planning, permissions, limits, loops.

Internal: the public names these modules define are re-exported by `pyox_agents`.
"""

__all__: list[str] = []
