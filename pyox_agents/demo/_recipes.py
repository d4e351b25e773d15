"""The demo's slow tool: `find_recipe` looks a dish up in a small built-in cookbook, showing
its progress live (`ctx.progress`) and citing where the recipe comes from (`ctx.cite`). It
takes a few seconds on purpose, so a page can show a run in progress, be reloaded, and pick the
run up again. It reads and changes no shared state."""

from __future__ import annotations

import anyio

from pyox_agents.tools import RunContext, tool

__all__ = ["find_recipe"]

COOKBOOK: dict[str, list[str]] = {
    "pancakes": ["flour", "milk", "eggs", "butter"],
    "omelette": ["eggs", "butter", "cheese"],
    "pizza": ["flour", "yeast", "tomatoes", "mozzarella"],
}
"""Dish -> its ingredients; other dishes get a generic list."""

SOURCES = ["the pantry index", "family recipes", "the cookbook"]
STEP_SECONDS = 0.6
"""How long each lookup takes: long enough to watch."""


@tool
async def find_recipe(ctx: RunContext, dish: str) -> str:
    """Find a recipe for a dish and list its ingredients, citing the source."""
    name = dish.strip().lower() or "pancakes"
    view = None
    for done, where in enumerate(SOURCES, start=1):
        view = ctx.progress("search", {"dish": name, "looking_in": where, "done": done,
                                       "of": len(SOURCES)}, id=view)
        await anyio.sleep(STEP_SECONDS)
    page = name.replace(" ", "_").capitalize()
    ctx.cite(f"https://en.wikipedia.org/wiki/{page}", title=f"{name.capitalize()} (Wikipedia)")
    ingredients = COOKBOOK.get(name, ["salt", "pepper", "olive oil"])
    return f"{name}: " + ", ".join(ingredients)
