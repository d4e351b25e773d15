"""The demo page committed in pyox_agents/server/static is built from the current frontend-demo/.

`npm run build` writes static/build-stamp.json with a hash of frontend-demo's sources and lock
file, and of the live-state client the page bundles (frontend-demo/scripts/stamp.mjs). Here the
hash is recomputed the same way: a change to the sources without a rebuild fails, so the wheel
never ships a stale page.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FRONTEND = ROOT / "frontend-demo"
STATIC = ROOT / "pyox_agents" / "server" / "static"
FILES = ("index.html", "package.json", "package-lock.json", "tsconfig.json", "vite.config.ts")
DIRS = ("src", "scripts")
CLIENT = ("../clients/live-state/index.js",)
"""Files outside frontend-demo/ the page bundles, as paths relative to it."""


def sources_sha256() -> tuple[str, int]:
    """The hash stamp.mjs computes: per file (sorted by path), path NUL bytes NUL."""
    paths = [FRONTEND / name for name in FILES]
    for folder in DIRS:
        paths += [p for p in (FRONTEND / folder).rglob("*") if p.is_file()]
    relative = sorted([p.relative_to(FRONTEND).as_posix() for p in paths] + list(CLIENT))
    digest = hashlib.sha256()
    for path in relative:
        digest.update(path.encode())
        digest.update(b"\0")
        digest.update((FRONTEND / path).read_bytes())
        digest.update(b"\0")
    return digest.hexdigest(), len(relative)


def test_built_page_is_shipped_in_the_package() -> None:
    index = (STATIC / "index.html").read_text()
    assert '<div id="root">' in index
    scripts = [line for line in index.splitlines() if "<script" in line and "assets/" in line]
    assert scripts, "index.html loads no built script from assets/"
    for line in scripts:
        name = line.split('src="')[1].split('"')[0].removeprefix("./")
        assert (STATIC / name).is_file(), f"index.html loads {name}, which is not in {STATIC}"


def test_committed_build_matches_the_frontend_sources() -> None:
    stamp = json.loads((STATIC / "build-stamp.json").read_text())
    expected, count = sources_sha256()
    assert stamp["sources_sha256"] == expected, (
        "pyox_agents/server/static is older than frontend-demo/ (its build-stamp.json hash "
        f"{stamp['sources_sha256'][:12]} != {expected[:12]} over {count} files): run "
        "`npm ci && npm run build` in frontend-demo/ and commit pyox_agents/server/static"
    )


def test_lock_file_pins_every_dependency_exactly() -> None:
    package = json.loads((FRONTEND / "package.json").read_text())
    lock = json.loads((FRONTEND / "package-lock.json").read_text())
    for section in ("dependencies", "devDependencies"):
        for name, version in package[section].items():
            assert version[0].isdigit(), f"{name} is {version!r} in package.json; pin it exactly"
            assert lock["packages"][f"node_modules/{name}"]["version"] == version


INITIAL_JS_BUDGET = 600_000
"""Bytes, gzipped, of the JavaScript a first visit loads (the entry script and its preloads)."""
PAGE_BUDGET = 1_200_000
"""Bytes, deflated as in a wheel, of the whole built page: the wheel stays under 1.5 MB."""


def _initial_scripts(index: str) -> list[str]:
    names = []
    for line in index.splitlines():
        if ("<script" in line and "src=" in line) or 'rel="modulepreload"' in line:
            attribute = "src=" if "<script" in line else "href="
            names.append(line.split(f'{attribute}"')[1].split('"')[0].removeprefix("./"))
    return names


def test_first_visit_loads_at_most_the_initial_script_budget() -> None:
    """The page's first load stays small: CopilotKit loads only when its tab is opened."""
    names = _initial_scripts((STATIC / "index.html").read_text())
    assert names, "index.html loads no script"
    sizes = {name: len(gzip.compress((STATIC / name).read_bytes())) for name in names}
    total = sum(sizes.values())
    assert total <= INITIAL_JS_BUDGET, (
        f"a first visit loads {total:,} bytes of gzipped JavaScript, over the budget of "
        f"{INITIAL_JS_BUDGET:,}: {sizes}. Load the new dependency lazily (React.lazy) or leave "
        "it out of the build (vite.config.ts aliases)")


def test_built_page_fits_the_wheel_budget() -> None:
    """The built page, compressed as a wheel stores it, stays within its budget."""
    files = [path for path in STATIC.rglob("*") if path.is_file()]
    sizes = {path.relative_to(STATIC).as_posix(): len(zlib.compress(path.read_bytes(), 6))
             for path in files}
    total = sum(sizes.values())
    largest = sorted(sizes.items(), key=lambda item: -item[1])[:5]
    assert total <= PAGE_BUDGET, (
        f"the built page is {total:,} bytes compressed, over the budget of {PAGE_BUDGET:,}; "
        f"largest files: {largest}. Keep syntax grammars, diagrams and math fonts out of the "
        "build (frontend-demo/vite.config.ts) or load the new part lazily")
