"""Tools that send every kind of live event while they run, for the `useChat` parts tests (the
adapter's unit tests and the end-to-end ones against the real `ai` client)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from pyox_agents import RunContext, tool


@tool
async def research(ctx: RunContext) -> str:
    """Look things up and show how it goes."""
    ctx.emit("weather", {"city": "Oslo"}, id="w1")
    ctx.emit("tick", 1, transient=True)
    view = ctx.progress("crawl", {"done": 1, "of": 3})
    ctx.progress("crawl", {"done": 3, "of": 3}, id=view)
    ctx.cite("https://example.com/a", title="Page A")
    ctx.cite_document("Annual report", "application/pdf", filename="report.pdf")
    ctx.attach_file("data:text/plain;base64,aGk=", "text/plain", filename="hi.txt")
    return "found"


@tool
async def count_up(ctx: RunContext) -> AsyncIterator[int]:
    """Count to three, showing each number."""
    for n in (1, 2, 3):
        yield n
