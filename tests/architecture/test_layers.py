"""The layer map of DESIGN.md holds in the code: imports point down only, and nothing imports in
a circle. DESIGN.md: "Internal modules are private (`_x.py`); each package's `__init__` lists its
public names in `__all__`, pinned by a test, and a test walks the imports and fails on one that
points up this map." """

from __future__ import annotations

from tests.architecture.layers import Import, all_imports, cycles, modules, unit_of

# Circles that predate the map, inside one unit, each with why it stays for now. An import
# between units never goes here: those point up or sideways, and are fixed.
KNOWN_CIRCLES: dict[tuple[str, ...], str] = {}

# DESIGN.md: adapters are "Pure: no I/O, no Agent, no store, no service". What they may use:
PURE = {"adapters/ag_ui", "adapters/ai_sdk", "adapters"}
PURE_MAY_IMPORT = {"adapters", "run_request", "events", "state", "models"}


def _rule_broken(edge: Import) -> str | None:
    unit, rank = unit_of(edge.importer)
    target_unit, target_rank = unit_of(edge.imported)
    if unit == target_unit:
        return None
    if unit in PURE and target_unit not in PURE_MAY_IMPORT:
        return (f"{edge.importer} (line {edge.line}) imports {edge.imported} (layer "
                f"{target_unit}): an adapter is pure translation and uses only "
                f"{', '.join(sorted(PURE_MAY_IMPORT))}")
    if rank > target_rank:
        return None
    where = "inside a function, " if edge.lazy else ""
    direction = "beside it" if rank == target_rank else "above it"
    return (f"{edge.importer} (line {edge.line}, {where}layer {unit}) imports {edge.imported}, "
            f"on layer {target_unit} {direction}: imports point down the map only")


def test_every_module_is_on_the_map() -> None:
    for name in modules():
        unit_of(name)  # raises naming the module that is on no layer


def test_imports_point_down_the_layer_map() -> None:
    broken = [problem for edge in all_imports() if (problem := _rule_broken(edge))]
    assert not broken, "\n".join(broken)


def test_no_modules_import_each_other_in_a_circle() -> None:
    """Function-level imports count: a lazy import that hides a circle is still one."""
    found = {tuple(group): group for group in cycles(all_imports())}
    unexpected = [" -> ".join(group) for key, group in found.items() if key not in KNOWN_CIRCLES]
    assert not unexpected, "modules that import each other:\n" + "\n".join(unexpected)


def test_the_known_circles_are_still_there() -> None:
    """The list only shrinks: a circle that is gone comes off it."""
    found = {tuple(group) for group in cycles(all_imports())}
    gone = [" -> ".join(key) for key in KNOWN_CIRCLES if key not in found]
    assert not gone, f"no longer circles, take them off KNOWN_CIRCLES: {gone}"
