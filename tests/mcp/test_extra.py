"""The `mcp` extra: nothing of it is imported unless used, and its absence is explained."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=120)


def test_pyox_agents_does_not_import_mcp_until_the_toolset_is_used() -> None:
    done = run_python("""
        import sys
        import pyox_agents, pyox_agents.server
        from pyox_agents import Agent
        print(sorted(m for m in sys.modules if m == "mcp" or m.startswith(("mcp.", "mcp_types"))))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_without_the_extra_the_import_error_says_what_to_install() -> None:
    """A missing extra: `pip install "pyox-agents[mcp]"` (simulated by hiding the module)."""
    done = run_python("""
        import sys
        sys.modules["mcp"] = None  # as if the mcp package were not installed
        import pyox_agents
        try:
            from pyox_agents.mcp import MCPToolset
        except ImportError as exc:
            print(exc)
    """)
    assert done.returncode == 0, done.stderr
    assert "pyox_agents.mcp needs the MCP SDK, which is not installed" in done.stdout
    assert 'install it with: pip install "pyox-agents[mcp]"' in done.stdout


def test_the_mcp_modules_public_names_are_exactly_these_and_documented() -> None:
    import pyox_agents.mcp

    assert set(pyox_agents.mcp.__all__) == {"MCPServerUnavailable", "MCPToolError", "MCPToolset"}
    for name in pyox_agents.mcp.__all__:
        assert getattr(pyox_agents.mcp, name).__doc__, f"pyox_agents.mcp.{name} has no docstring"
