"""The package as it would be published: its metadata, its changelog, and the install lines of
the docs, run against the wheel built from this checkout.

The tests marked `packaging` build the sdist and the wheel once (`python -m build`, as `make
dist` does), check them with `twine check --strict`, then make one fresh virtual environment and
run in it every `pip install` line of README.md and docs/ with the built wheel in place of the
project (`pyox-agents[mcp]`, `.`, `dist/pyox_agents-<version>-py3-none-any.whl`), and the
README's smallest agent, offline. pip reaches the package index for the dependencies (its cache
and local indexes make a second run fast). `-m "not packaging"` leaves them out.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from .docs.markdown_examples import DOC_FILES, ROOT, blocks

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
VERSION: str = PROJECT["version"]
WHEEL_NAME = f"pyox_agents-{VERSION}-py3-none-any.whl"

_INSTALL = re.compile(r"\bpip install ([^`\n#]+)")
_PROJECT_SPEC = re.compile(
    r"^(?P<project>pyox-agents|\.|\./|dist/pyox_agents-[^\[\]/]+\.whl)(?P<extras>\[[^\]]*\])?$"
)
_PRINTED = re.compile(r"^\s*print\(.*\)\s*#\s?(?P<shown>.+)$")


@dataclass(frozen=True)
class InstallLine:
    """A `pip install ...` line of the docs: its arguments, and where it is written."""

    args: tuple[str, ...]
    places: tuple[str, ...]

    def with_wheel(self, wheel: Path) -> list[str]:
        """The arguments with the built wheel in place of the project (extras kept)."""
        out = []
        for arg in self.args:
            spec = _PROJECT_SPEC.match(arg)
            if spec is None:
                out.append(arg)
                continue
            if spec["project"].startswith("dist/") and spec["project"] != f"dist/{WHEEL_NAME}":
                pytest.fail(f"{self.places[0]}: names {spec['project']}; `make dist` builds "
                            f"dist/{WHEEL_NAME}")
            out.append(f"{wheel}{spec['extras'] or ''}")
        return out


def install_lines() -> list[InstallLine]:
    """Every distinct `pip install` line of README.md and docs/, in code or a shell block."""
    found: dict[tuple[str, ...], list[str]] = {}
    for path in DOC_FILES:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in _INSTALL.finditer(line):
                args = tuple(shlex.split(match[1]))
                found.setdefault(args, []).append(f"{path.relative_to(ROOT)}:{number}")
    return [InstallLine(args, tuple(places)) for args, places in found.items()]


def readme_smallest_agent() -> str:
    """The README's smallest agent: its `# app.py` block."""
    return next(b.code for b in blocks(ROOT / "README.md")
                if b.lang == "python" and b.code.startswith("# app.py"))


# -- without a build ------------------------------------------------------------------------


def test_the_changelog_starts_with_the_packages_version() -> None:
    """CHANGELOG.md (Keep a Changelog) has the version pyproject.toml declares as its first."""
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    versions = re.findall(r"^## \[(?P<version>[^\]]+)\]", changelog, flags=re.MULTILINE)
    assert versions and versions[0] == VERSION, (
        f"CHANGELOG.md's first version is {versions[:1]}; pyproject.toml says {VERSION}: add a "
        f"'## [{VERSION}] - <date or Unreleased>' section on top"
    )
    assert re.search(rf"^\[{re.escape(VERSION)}\]: \S+", changelog, flags=re.MULTILINE), (
        f"CHANGELOG.md has no link for [{VERSION}] at its end"
    )


def test_the_metadata_has_what_an_index_page_shows() -> None:
    """pyproject.toml names the license, classifiers, keywords, URLs and the Python versions."""
    assert PROJECT["license"] and PROJECT["keywords"] and PROJECT["requires-python"]
    classifiers = PROJECT["classifiers"]
    supported = re.findall(r"Programming Language :: Python :: (3\.\d+)$", "\n".join(classifiers),
                           flags=re.MULTILINE)
    floor = PROJECT["requires-python"].removeprefix(">=")
    assert supported and min(supported, key=lambda v: int(v.split(".")[1])) == floor
    assert {"Homepage", "Documentation", "Repository", "Issues", "Changelog"} <= set(
        PROJECT["urls"])
    dev = " ".join(PROJECT["optional-dependencies"]["dev"])
    assert "build" in dev and "twine" in dev, "`make dist` needs build and twine in the dev extra"


def test_every_install_line_of_the_docs_installs_this_project() -> None:
    """Each `pip install` line names the project as the tests can replace it with the wheel:
    `pyox-agents[extras]`, `.`, or `dist/<the wheel make dist builds>`; each extra exists."""
    lines = install_lines()
    assert lines, "the docs have pip install lines; none was found"
    extras = set(PROJECT["optional-dependencies"])
    for line in lines:
        specs = [_PROJECT_SPEC.match(arg) for arg in line.args]
        named = [spec for spec in specs if spec is not None]
        assert named, f"{line.places[0]}: `pip install {shlex.join(line.args)}` names no " \
                      "pyox-agents spec the packaging test understands"
        for spec in named:
            if spec["project"].startswith("dist/"):
                assert spec["project"] == f"dist/{WHEEL_NAME}", (
                    f"{line.places[0]}: names {spec['project']}; `make dist` builds {WHEEL_NAME}")
            asked = set(filter(None, (spec["extras"] or "[]")[1:-1].split(",")))
            assert asked <= extras, f"{line.places[0]}: no extra {sorted(asked - extras)}"


# -- with the built sdist and wheel ---------------------------------------------------------


@dataclass(frozen=True)
class Dist:
    sdist: Path
    wheel: Path


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    """The sdist and the wheel, built once (the wheel from the sdist, as `python -m build`)."""
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, f"python -m build failed:\n{proc.stdout[-3000:]}{proc.stderr}"
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    assert wheel.name == WHEEL_NAME
    return Dist(sdist, wheel)


@dataclass
class Venv:
    path: Path
    installs: list[tuple[InstallLine, subprocess.CompletedProcess[str]]]

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"


@pytest.fixture(scope="module")
def venv(dist: Dist, tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """A fresh virtual environment where every install line of the docs ran, in the order the
    docs give them, with the wheel in place of the project. The venv has no pip of its own:
    this environment's pip installs into it (`pip --python`), as `pip install` would there."""
    path = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True,
                   timeout=120)
    made = Venv(path, [])
    ran: set[tuple[str, ...]] = set()
    for line in install_lines():
        args = tuple(line.with_wheel(dist.wheel))
        if args in ran:  # `.[mcp]` and `pyox-agents[mcp]` are one command with the wheel
            continue
        ran.add(args)
        command = [sys.executable, "-m", "pip", "--python", str(made.python), "install",
                   "--quiet", "--no-compile", *args]  # bytecode is compiled at first import
        made.installs.append((line, subprocess.run(command, capture_output=True, text=True,
                                                   timeout=900, check=False)))
    return made


@pytest.mark.packaging
def test_the_sdist_and_the_wheel_pass_twine_check(dist: Dist) -> None:
    """What `make dist` builds is what PyPI would take: `twine check --strict` passes."""
    proc = subprocess.run([sys.executable, "-m", "twine", "check", "--strict",
                           str(dist.sdist), str(dist.wheel)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.packaging
def test_every_documented_install_line_installs_the_wheel(venv: Venv) -> None:
    """Each `pip install` line of the docs, with the wheel for the project, installs in a
    fresh environment, with every extra it names; the command-line entry point works there."""
    for line, proc in venv.installs:
        output = proc.stdout + proc.stderr
        where = ", ".join(line.places)
        assert proc.returncode == 0, f"`pip install {shlex.join(line.args)}` ({where}):\n{output}"
        assert "does not provide the extra" not in output, f"{where}: {output}"
    cli = subprocess.run([str(venv.path / "bin" / "pyox-agents"), "--help"],
                         capture_output=True, text=True, timeout=60, check=False)
    assert cli.returncode == 0 and "serve" in cli.stdout, cli.stdout + cli.stderr


@pytest.mark.packaging
def test_the_readme_smallest_agent_runs_offline_from_the_wheel(venv: Venv,
                                                               tmp_path: Path) -> None:
    """`python app.py` with the README's block, in the fresh environment, prints what its
    comments say, with no API key and every proxy pointing at a closed port (no network)."""
    code = readme_smallest_agent()
    (tmp_path / "app.py").write_text(code, encoding="utf-8")
    offline = "http://127.0.0.1:9"
    env = {key: value for key, value in os.environ.items()
           if not key.endswith(("_API_KEY", "_BASE_URL")) and key != "PYTHONPATH"}
    env |= {"HTTP_PROXY": offline, "HTTPS_PROXY": offline, "ALL_PROXY": offline, "NO_PROXY": ""}
    proc = subprocess.run([str(venv.python), "app.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    shown = [m["shown"].strip() for m in map(_PRINTED.match, code.splitlines()) if m]
    assert shown and proc.stdout.splitlines() == shown, (proc.stdout, shown)


@pytest.mark.packaging
def test_new_writes_a_project_from_the_wheel(venv: Venv, tmp_path: Path) -> None:
    """`pyox-agents new` in the fresh environment writes the whole project, the page's copy of
    the live-state client included (the wheel carries it: there is no checkout to copy from),
    and its agent imports there and answers offline."""
    for ui in ("copilotkit", "ai-sdk"):
        proc = subprocess.run([str(venv.path / "bin" / "pyox-agents"), "new", f"todos-{ui}",
                               "--ui", ui], cwd=tmp_path, capture_output=True, text=True,
                              timeout=60, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        client = tmp_path / f"todos-{ui}" / "web" / "src" / "live-state" / "index.js"
        assert client.read_text() == (ROOT / "clients" / "live-state" / "index.js").read_text()
    run = ("from agent import agent; r = agent.run('add milk'); "
           "print(r.state['todos'][0]['text'])")
    proc = subprocess.run([str(venv.python), "-c", run], cwd=tmp_path / "todos-ai-sdk",
                          capture_output=True, text=True, timeout=120, check=False,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert proc.returncode == 0 and proc.stdout.strip() == "milk", proc.stdout + proc.stderr


@pytest.mark.packaging
def test_the_readme_serve_line_serves_the_smallest_agent_from_the_wheel(venv: Venv,
                                                                        tmp_path: Path) -> None:
    """The README's `pyox-agents serve app:agent ...` line, run as written (on a free port) in
    the fresh environment beside its `app.py`: the banner names the agent's endpoints, and an
    AG-UI request to it runs offline, the thread kept in the SQLite file the line names."""
    line = next(text for b in blocks(ROOT / "README.md") if b.lang == "sh"
                for text in b.code.splitlines() if text.startswith("pyox-agents serve app:"))
    args = shlex.split(line.split("#")[0])
    (tmp_path / "app.py").write_text(readme_smallest_agent(), encoding="utf-8")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {key: value for key, value in os.environ.items()
           if not key.endswith(("_API_KEY", "_BASE_URL")) and key != "PYTHONPATH"}
    server = subprocess.Popen([str(venv.path / "bin" / args[0]), *args[1:], "--port", str(port)],
                              cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        banner = server.stdout.readline() + server.stdout.readline()  # type: ignore[union-attr]
        assert f"{base}/agents/agent/ag-ui (AG-UI)" in banner, banner
        body = {"threadId": "t1", "runId": "r1", "state": {}, "tools": [], "context": [],
                "forwardedProps": {}, "messages": [{"id": "u1", "role": "user",
                                                    "content": "add milk"}]}
        request = urllib.request.Request(f"{base}/agents/agent/ag-ui",
                                         data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    stream = response.read().decode()
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "not serving"
                time.sleep(0.2)
        assert "RUN_FINISHED" in stream and "milk" in stream, stream
        assert (tmp_path / "threads.db").exists()
    finally:
        server.terminate()
        server.wait(timeout=30)
        server.stdout.close()  # type: ignore[union-attr]
