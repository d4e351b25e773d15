"""The TypeScript examples of the documentation type-check against the pinned client packages.

Each ts/tsx block is a module of its own, checked by `tsc --noEmit` (strict) with the packages
frontend-demo/package-lock.json pins (`@copilotkit/react-core`, `@ai-sdk/react`, `ai`,
`@ag-ui/client`, React), the ones the demo page is built with. `npm ci` installs them there when
they are missing (Node and npm are needed, as for the end-to-end suites).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from .markdown_examples import ROOT, typescript_blocks

DEMO = ROOT / "frontend-demo"


def _installed_packages() -> Path:
    node_modules = DEMO / "node_modules"
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm is needed to type-check the docs' TypeScript examples: install Node.js 20")
    lock_path = Path(tempfile.gettempdir()) / "pyox-agents-demo-npm.lock"
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (node_modules / ".bin" / "tsc").exists():
            proc = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund"],
                cwd=DEMO,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            assert proc.returncode == 0, f"`npm ci` in {DEMO} failed:\n{proc.stderr[-3000:]}"
    return node_modules


def test_typescript_examples_type_check(tmp_path: Path) -> None:
    """Every TypeScript block in the docs and the README compiles under `tsc --strict`."""
    checked = [b for b in typescript_blocks() if b.not_run is None]
    assert checked, "the docs have TypeScript examples; none was found"
    node_modules = _installed_packages()
    os.symlink(node_modules, tmp_path / "node_modules")
    names = {}
    for number, block in enumerate(checked):
        name = f"example_{number}.{'tsx' if block.lang == 'tsx' else 'ts'}"
        (tmp_path / name).write_text(block.code, encoding="utf-8")
        names[name] = block.id
    options = json.loads((DEMO / "tsconfig.json").read_text())["compilerOptions"]
    # the repository's client package, as a page that installed it from a checkout has it
    client = {"@pyox-agents/live-state": [str(ROOT / "clients" / "live-state" / "index.d.ts")]}
    config = {"compilerOptions": options | {"noUnusedLocals": False, "paths": client},
              "files": sorted(names)}
    (tmp_path / "tsconfig.json").write_text(json.dumps(config), encoding="utf-8")
    proc = subprocess.run(
        [str(node_modules / ".bin" / "tsc"), "--noEmit", "-p", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    report = proc.stdout
    for name, block_id in names.items():
        report = report.replace(name, block_id)
    assert proc.returncode == 0, f"TypeScript examples do not type-check:\n{report}"
