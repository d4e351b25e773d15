"""The docs' `npm install` lines name exact versions, the ones the tests run (or the repository's
client package, from a checkout), and cover every package a page's TypeScript imports.

The versions are those pinned by the demo page (frontend-demo/package.json, whose packages the
TypeScript examples are type-checked with) and the end-to-end suites (tests/e2e/package.json,
tests/e2e/copilotkit_runtime/package.json), npm aliases included (`"ai6": "npm:ai@6.0.326"`).
"""

from __future__ import annotations

import collections
import json
import re
import shlex
from pathlib import Path

from .markdown_examples import DOC_FILES, ROOT, blocks

PINNING = [ROOT / "frontend-demo" / "package.json", ROOT / "tests" / "e2e" / "package.json",
           ROOT / "tests" / "e2e" / "copilotkit_runtime" / "package.json"]

_NPM_INSTALL = re.compile(r"\bnpm install ([^`\n#]+)")
_SPEC = re.compile(r"^(?P<name>(?:@[^/@\s]+/)?[^/@\s]+)@(?P<version>\d+\.\d+\.\d+)$")
_IMPORT = re.compile(r"""(?:\bfrom|^\s*import)\s+["'](?P<module>[^"'./][^"']*)["']""",
                     flags=re.MULTILINE)


def _pinned() -> dict[str, set[str]]:
    """Each npm package the tests install, with the exact versions they pin."""
    versions: dict[str, set[str]] = collections.defaultdict(set)
    for path in PINNING:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        for section in ("dependencies", "devDependencies"):
            for name, spec in manifest.get(section, {}).items():
                if spec.startswith("npm:"):  # an alias: "npm:ai@6.0.326"
                    name, _, spec = spec.removeprefix("npm:").rpartition("@")
                versions[name].add(spec)
    return versions


def _npm_installs(path: Path) -> list[tuple[int, list[str]]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [(number, shlex.split(match[1])) for number, line in enumerate(lines, 1)
            for match in _NPM_INSTALL.finditer(line)]


CLIENTS = {path.parent.name: json.loads(path.read_text(encoding="utf-8"))["name"]
           for path in (ROOT / "clients").glob("*/package.json")}
"""The repository's client packages by folder (`live-state`: `@pyox-agents/live-state`), each
installed from a checkout (`npm install <checkout>/clients/<folder>`) until it is published:
the version the tests use."""

FLAGS = {"--install-links"}
"""Options an `npm install` line may have (a copy of a package from a checkout, not a link)."""


def _installed(arg: str) -> str | None:
    """The package an `npm install` argument names: `name@x.y.z`, or one of the repository's
    client packages by its path in a checkout; None for anything else."""
    folder = arg.rstrip("/").rpartition("/clients/")[2]
    if "/clients/" in arg and folder in CLIENTS:
        return CLIENTS[folder]
    spec = _SPEC.match(arg)
    return spec["name"] if spec else None


def _package(module: str) -> str:
    parts = module.split("/")
    return "/".join(parts[:2]) if module.startswith("@") else parts[0]


def test_npm_install_lines_pin_the_versions_the_tests_use() -> None:
    """Every package of an `npm install` line has `@<exact version>`, a version a test runs."""
    pinned = _pinned()
    found = 0
    for path in DOC_FILES:
        for number, args in _npm_installs(path):
            where = f"{path.relative_to(ROOT)}:{number}"
            for arg in args:
                if arg in FLAGS:
                    continue
                if _installed(arg) in CLIENTS.values():
                    found += 1
                    continue
                spec = _SPEC.match(arg)
                assert spec, f"{where}: {arg!r} is not name@x.y.z; pin the version the tests use"
                assert spec["version"] in pinned.get(spec["name"], set()), (
                    f"{where}: {arg} is not a version the tests pin "
                    f"({sorted(pinned.get(spec['name'], set())) or 'not installed by any'})")
                found += 1
    assert found, "the docs have npm install lines; none was found"


def test_every_package_a_page_imports_is_in_its_npm_install_lines() -> None:
    """A guide's TypeScript examples import only packages an `npm install` line of the same
    page names, so a reader who runs those lines has them all."""
    for path in DOC_FILES:
        code = "\n".join(b.code for b in blocks(path) if b.lang in ("ts", "tsx", "typescript"))
        imported = {_package(m["module"]) for m in _IMPORT.finditer(code)}
        if not imported:
            continue
        installed = {_installed(arg) for _, args in _npm_installs(path) for arg in args}
        missing = imported - installed
        assert not missing, (
            f"{path.relative_to(ROOT)} imports {sorted(missing)} but no npm install line of "
            "it names them")
