"""Running one of the Node browser scripts (tests/e2e/browser/*.mjs, copilotkit_runtime/drive.mjs)
and reading the ONE JSON line it prints as its report."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest


def run_browser_script(script: Path, args: list[str], chromium: str,
                       cwd: Path | None = None) -> dict[str, Any]:
    """`node script *args` with $CHROMIUM set; its report (the last stdout line). A script that
    broke (exit code not 0, or no report) fails the test with what it printed."""
    proc = subprocess.run(["node", str(script), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=240, check=False,
                          env={**os.environ, "CHROMIUM": chromium})
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        pytest.fail(f"{script.name} broke ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}",
                    pytrace=False)
    result: dict[str, Any] = json.loads(lines[-1])
    return result
