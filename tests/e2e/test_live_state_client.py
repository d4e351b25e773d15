"""The live-state client package (`clients/live-state`) passes its own tests and its types
check against the real clients (`@ag-ui/client` 1.0.0 and 0.0.59, `ai` 7)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "clients" / "live-state"


def _run(argv: list[str], timeout: float) -> None:
    proc = subprocess.run(argv, cwd=PACKAGE, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(argv)}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"


def test_the_client_packages_own_tests_pass() -> None:
    """Rule: applyOps, diffState, rebaseOps and LiveThread behave as their tests say."""
    node = shutil.which("node")
    assert node is not None, "Node.js 20 is needed for the client package's tests"
    _run([node, "--test", "test/"], timeout=120)


def test_the_client_packages_types_check_against_the_real_clients(npm_ready: Path) -> None:
    """Rule: index.d.ts type-checks (strict) with HttpAgent 1.0.0 and 0.0.59 and ai 7."""
    npx = shutil.which("npx")
    assert npx is not None, "npm is needed to type-check the client package"
    _run([npx, "-y", "-p", "typescript@5.9.3", "tsc", "-p", "test/tsconfig.json"], timeout=300)
