"""The `pyox-agents` command: help, `serve` of a module path, store errors, a real server start."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyox_agents.demo import demo_agents
from pyox_agents.server.cli import default_store_path, load_target, main, open_store
from pyox_agents.stores import MemoryStore, SQLiteStore

ENTRY = [sys.executable, "-c", "from pyox_agents.server.cli import main; main()"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def user_module(tmp_path: Path) -> Path:
    """A folder with `myagents.py`: an Agent, a dict of Agents, and a non-agent."""
    (tmp_path / "myagents.py").write_text(textwrap.dedent("""
        from pyox_agents import Agent
        from pyox_agents.models import ScriptedModel

        agent = Agent(model=ScriptedModel(["hi"]), name="helper")
        agents = {"one": agent, "two": Agent(model=ScriptedModel(["yo"]))}
        number = 3
    """))
    return tmp_path


def _serve(args: list[str], cwd: Path, env: dict[str, str] | None = None
           ) -> Iterator[tuple[subprocess.Popen[str], str]]:
    port = _free_port()
    proc = subprocess.Popen([*ENTRY, *args, "--port", str(port)], cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env={**os.environ, **(env or {})})
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(base + "/healthz", timeout=1) as response:
                    assert json.load(response) == {"ok": True}
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    proc.kill()
                    output = proc.communicate()[0]
                    pytest.fail(f"the server did not answer /healthz within 20 s:\n{output}")
                time.sleep(0.1)
        yield proc, base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def _get(url: str) -> object:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.load(response)


def test_help_lists_both_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "demo" in out and "serve" in out


@pytest.mark.parametrize("command", ["demo", "serve"])
def test_each_command_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for option in ("--host", "--port", "--store"):
        assert option in out
    if command == "demo":
        assert "--model" in out


def test_installed_command_prints_help() -> None:
    result = subprocess.run([*ENTRY, "demo", "--help"], capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert "add milk and eggs to my cart" in result.stdout


@pytest.mark.parametrize("spec", ["bogus", "postgres://db", "sqlite:"])
def test_bad_store_is_a_clear_error(spec: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["demo", "--store", spec, "--port", "1"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"--store {spec!r}" in err
    assert "sqlite:PATH" in err


def test_store_values_name_their_store(tmp_path: Path) -> None:
    assert isinstance(open_store("memory"), MemoryStore)
    store = open_store(f"sqlite:{tmp_path}/sub/demo.db")
    assert isinstance(store, SQLiteStore)
    assert (tmp_path / "sub" / "demo.db").exists()


def test_default_store_is_in_the_xdg_data_directory(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_store_path() == tmp_path / "pyox-agents" / "demo.db"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_store_path() == Path.home() / ".local" / "share" / "pyox-agents" / "demo.db"


def test_serve_target_must_be_module_colon_attribute(user_module: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(user_module)
    for target, message in [("myagents", "not module:attribute"),
                            ("nosuchmodule:agent", "cannot import module 'nosuchmodule'"),
                            ("myagents:missing", "has no attribute 'missing'"),
                            ("myagents:number", "serve an Agent, a dict")]:
        with pytest.raises(SystemExit) as exit_:
            main(["serve", target, "--port", "1"])
        assert exit_.value.code == 2
        assert message in capsys.readouterr().err
    monkeypatch.syspath_prepend(str(user_module))
    assert load_target("myagents:agents")["one"].name == "helper"


def test_serve_an_agent_answers_healthz(user_module: Path) -> None:
    for _proc, base in _serve(["serve", "myagents:agent"], user_module):
        listing = _get(base + "/agents")
        assert [a["name"] for a in listing["agents"]] == ["helper"]  # type: ignore[index]


def test_serve_a_dict_of_agents_with_a_store(user_module: Path, tmp_path: Path) -> None:
    db = tmp_path / "threads.db"
    for _proc, base in _serve(["serve", "myagents:agents", "--store", f"sqlite:{db}"],
                              user_module):
        listing = _get(base + "/agents")
        agents = listing["agents"]  # type: ignore[index]
        assert sorted(a["name"] for a in agents) == ["one", "two"]
        assert all(a["capabilities"]["persistent"] for a in agents)
    assert db.exists()


def test_demo_serves_the_page_and_says_what_to_type(tmp_path: Path) -> None:
    env = {"XDG_DATA_HOME": str(tmp_path / "xdg")}
    for proc, base in _serve(["demo"], tmp_path, env):
        with urllib.request.urlopen(base + "/", timeout=5) as response:
            assert '<div id="root">' in response.read().decode()
        listing = _get(base + "/agents")
        tools = {t["name"]: t for t in listing["agents"][0]["tools"]}  # type: ignore[index]
        assert tools["checkout"]["approval"] is True
        proc.terminate()
        out = proc.communicate(timeout=10)[0]
        assert f"open {base}/" in out
        assert "add milk and eggs to my cart" in out
        for name in demo_agents():  # every agent's endpoints, the gallery's too
            assert f"  {name}: {base}/agents/{name}/ag-ui (AG-UI), {base}/agents/{name}/ai-sdk" \
                   in out
    assert (tmp_path / "xdg" / "pyox-agents" / "demo.db").exists()


def _request(url: str, method: str = "GET", headers: dict[str, str] | None = None,
             body: bytes | None = None) -> tuple[int, dict[str, str], str]:
    """Status, headers and body of a request, whatever its status."""
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


def _output(proc: subprocess.Popen[str]) -> str:
    proc.terminate()
    return proc.communicate(timeout=10)[0]


def test_serve_banner_lists_every_endpoint_of_every_agent(user_module: Path) -> None:
    for proc, base in _serve(["serve", "myagents:agents"], user_module):
        out = _output(proc)
        for name in ("one", "two"):
            assert f"{name}: {base}/agents/{name}/ag-ui (AG-UI), {base}/agents/{name}/ai-sdk" \
                   in out
        assert "hosts answered: 127.0.0.1, localhost, [::1]" in out
        assert "pages that may call it: its own (a frontend elsewhere: --cors ORIGIN)" in out


def test_serve_refuses_a_foreign_host_unless_allowed(user_module: Path) -> None:
    for _proc, base in _serve(["serve", "myagents:agent"], user_module):
        status, _, text = _request(base + "/agents", headers={"Host": "evil.example"})
        assert status == 400 and "--allowed-host evil.example" in text
        for host in ("localhost", "127.0.0.1"):
            assert _request(base + "/agents", headers={"Host": host})[0] == 200
    for _proc, base in _serve(["serve", "myagents:agent", "--allowed-host", "evil.example"],
                              user_module):
        assert _request(base + "/agents", headers={"Host": "evil.example"})[0] == 200
        assert _request(base + "/agents", headers={"Host": "other.example"})[0] == 400


def test_serve_on_every_address_answers_any_host_and_says_so(user_module: Path) -> None:
    for proc, base in _serve(["serve", "myagents:agent", "--host", "0.0.0.0"], user_module):
        assert _request(base + "/agents", headers={"Host": "box.lan"})[0] == 200
        assert "hosts answered: any (no Host check" in _output(proc)


def test_serve_cors_lets_a_frontend_on_another_origin_call_it(user_module: Path) -> None:
    frontend = "http://localhost:3000"
    chat = json.dumps({"id": "c1", "trigger": "submit-message", "messages": [
        {"id": "m1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]}).encode()
    for _proc, base in _serve(["serve", "myagents:agent", "--cors", frontend], user_module):
        url = base + "/agents/helper/ai-sdk"
        status, headers, _ = _request(url, "OPTIONS", headers={
            "Origin": frontend, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type"})
        assert status == 200 and headers["access-control-allow-origin"] == frontend
        json_type = {"Content-Type": "application/json"}
        status, headers, text = _request(url, "POST", {"Origin": frontend, **json_type}, chat)
        assert status == 200 and text.rstrip().endswith("data: [DONE]")
        status, _, text = _request(url, "POST", {"Origin": "https://evil.example",
                                                 **json_type}, chat)
        assert status == 403 and "--cors https://evil.example" in text


def test_cors_and_body_timeout_belong_to_a_ready_apps_create_app(
        user_module: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    (user_module / "readyapp.py").write_text("async def app(scope, receive, send):\n    pass\n")
    monkeypatch.chdir(user_module)
    for option in (["--cors", "http://localhost:3000"], ["--body-timeout", "5"]):
        with pytest.raises(SystemExit) as exit_:
            main(["serve", "readyapp:app", "--port", "1", *option])
        assert exit_.value.code == 2
        assert "create_app(...) cors_origins= or body_timeout=" in capsys.readouterr().err


@pytest.mark.parametrize(("option", "message"), [
    (["--cors", "http://localhost:3000/"], "--cors: 'http://localhost:3000/' is not an origin"),
    (["--allowed-host", "http://x.example"], "allowed host 'http://x.example'"),
    (["--header-timeout", "0"], "'0' is not a positive number of seconds"),
    (["--max-pending-connections", "none"], "'none' is not a number of connections"),
])
def test_bad_cross_site_and_timeout_options_are_clear_errors(
        option: list[str], message: str, user_module: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(user_module)
    with pytest.raises(SystemExit) as exit_:
        main(["serve", "myagents:agent", "--port", "1", *option])
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err
