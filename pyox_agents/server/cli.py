"""The `pyox-agents` command: `demo` serves the demo page and agent, `serve` a user's own agents.

    pyox-agents demo [--host 127.0.0.1] [--port 8000] [--model demo] [--pace 1.5]
                     [--store sqlite:PATH]
    pyox-agents serve module:attribute [--host ...] [--port ...] [--store ...] [--grace 25]
                      [--workers N] [--cors ORIGIN] [--allowed-host NAME]
    pyox-agents new NAME [--ui copilotkit|ai-sdk]

Both serve the AG-UI and AI SDK endpoints of `create_app`. `demo` also serves the built page
(shipped in the package, no Node needed) at `/`. By default threads are kept in a SQLite file
in the user's data directory, so a reloaded page, or a restarted server, gets them back.
On SIGTERM, runs get `--grace` seconds to finish their step; the rest are left resumable.
`--workers N` serves from N processes on one port (Linux), which share threads through a
Redis or PostgreSQL `--store` (`_workers`). `new` writes a project to start from (`_cli_new`).

Browsers: a page on another origin may not call the agents unless `--cors ORIGIN` allows it,
and the server answers only the `Host` names of the address it listens on (`--allowed-host`
adds others); slow clients are dropped (`--header-timeout`, `--body-timeout`,
`--max-pending-connections`): see `_cli_safety`.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import os
import socket
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyox_agents._errors import PyoxError
from pyox_agents._redact import redact_url
from pyox_agents.server._cli_new import add_new_command, run_new
from pyox_agents.server._cli_safety import (
    DEFAULT_BODY_TIMEOUT,
    add_safety_options,
    allowed_hosts_for,
    base_url,
    say_endpoints,
    say_exposure,
)
from pyox_agents.server._cli_values import count_of, pace_of, seconds_of
from pyox_agents.server._cross_site import normalized_origins
from pyox_agents.server._hosts import HostCheck, normalized_hosts
from pyox_agents.server._workers import LISTEN_FD_OPTION, PARENT_OPTION
from pyox_agents.starter import StarterError

if TYPE_CHECKING:
    from pyox_agents.stores.base import Store

__all__ = ["STATIC_DIR", "default_store_path", "load_target", "main", "open_store"]

DEFAULT_GRACE = 25.0
"""`--grace`: the seconds a SIGTERM gives the runs to finish their step. Under the 30 s that
Kubernetes (`terminationGracePeriodSeconds`) waits before SIGKILL, so the process ends on its
own, its streams told; uvicorn's own `timeout_graceful_shutdown` has no default (it waits)."""

STATIC_DIR = Path(__file__).resolve().parent / "static"
"""The built demo page (`frontend-demo`, `npm run build`), shipped inside the package."""

STORE_FORMS = ("sqlite:PATH, memory, redis://HOST:PORT[/DB] or "
               "postgresql://USER@HOST[:PORT]/DATABASE")

REDIS_FORMS = ("redis://", "rediss://", "unix://")
POSTGRES_FORM = "postgresql://"
SHARED_STORES = (*REDIS_FORMS, POSTGRES_FORM)
"""The `--store` forms several processes can share (memory and SQLite are one process's)."""


class CliError(PyoxError):
    """A command-line mistake: printed as `pyox-agents: error: ...`, exit status 2."""


def default_store_path() -> Path:
    """Where `demo` keeps its threads: `$XDG_DATA_HOME/pyox-agents/demo.db`.

    Without XDG_DATA_HOME, `~/.local/share/pyox-agents/demo.db`.
    """
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "pyox-agents" / "demo.db"


def open_store(spec: str) -> Any:
    """The store a `--store` value names: `sqlite:PATH`, `memory`, `redis://...` or
    `postgresql://...`.

    Raises:
        CliError: the value is none of these, the Redis or PostgreSQL store is not installed,
            or the database cannot be used.
    """
    if spec == "memory":
        from pyox_agents.stores import MemoryStore

        return MemoryStore()
    if spec.startswith("sqlite:"):
        path = Path(spec.removeprefix("sqlite:")).expanduser()
        if not str(path) or str(path) == ".":
            raise CliError(f"--store {spec!r} names no file: write sqlite:PATH, such as "
                           f"sqlite:{default_store_path()}")
        path.parent.mkdir(parents=True, exist_ok=True)
        from pyox_agents.stores import SQLiteStore

        return SQLiteStore(str(path))
    if spec.startswith(REDIS_FORMS):
        try:
            from pyox_agents.stores.redis import RedisStore
        except ImportError as exc:
            raise CliError(f"--store {redact_url(spec)!r} needs the Redis store, which could "
                           f"not be imported ({exc}); install it with `pip install "
                           "'pyox-agents[redis]'` or use sqlite:PATH") from None
        return RedisStore(spec)
    if spec.startswith(POSTGRES_FORM):
        return _postgres_store(spec)
    raise CliError(f"--store {redact_url(spec)!r} is not a store; use {STORE_FORMS}")


def _postgres_store(spec: str) -> Any:
    """The PostgresStore of a `--store postgresql://...` value (its schema made on first use)."""
    try:
        from pyox_agents.stores.postgres import PostgresStore
    except ImportError as exc:
        raise CliError(f"--store postgresql://... needs the PostgreSQL store, which could not be "
                       f"imported ({exc}); install it with "
                       '`pip install "pyox-agents[postgres]"` or use sqlite:PATH') from None
    try:
        return PostgresStore(spec)
    except (ValueError, ConnectionError, RuntimeError) as exc:
        raise CliError(f"--store {redact_url(spec)!r}: {exc}") from None


def load_target(target: str) -> Any:
    """What `serve module:attribute` names: an Agent, a dict of name -> Agent, or an ASGI app.

    The current directory is importable, as with `python -m`.

    Raises:
        CliError: the form is wrong, the module or attribute is missing, or the object is none
            of the three.
    """
    module_name, sep, attribute = target.partition(":")
    if not sep or not module_name or not attribute:
        raise CliError(f"{target!r} is not module:attribute; write e.g. myapp.agents:agent")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CliError(f"cannot import module {module_name!r} ({exc}); run from the folder "
                       "that contains it, or install it") from None
    value: Any = module
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise CliError(f"module {module_name!r} has no attribute {attribute!r}")
        value = getattr(value, part)
    return value


def _agents_of(target: Any, name: str) -> dict[str, Any] | None:
    """The agents `serve` serves by name, or None for a ready ASGI app."""
    from pyox_agents.agent import Agent

    if isinstance(target, Agent):
        return {target.name or "agent": target}
    if isinstance(target, Mapping):
        bad = [key for key, value in target.items() if not isinstance(value, Agent)]
        if bad or not target:
            raise CliError(f"{name} is a dict, but not of name -> Agent (check {bad or 'empty'})")
        return dict(target)
    if callable(target):
        return None  # a ready ASGI app (Starlette, FastAPI, ...)
    raise CliError(f"{name} is a {type(target).__name__}; serve an Agent, a dict of name -> "
                   "Agent, or an ASGI app")


def _create_app(agents: Mapping[str, Any], args: argparse.Namespace, store: Store | None,
                origins: tuple[str, ...], hosts: tuple[str, ...] | None,
                page: Path | None = None) -> Any:
    """`create_app` for the command's agents, with its options (`--cors` and the hosts, as
    `_checked` gives them, `--body-timeout`, ...)."""
    from pyox_agents.server import create_app

    return create_app(agents, store=store, tune_gc=True, cors_origins=origins,
                      allowed_hosts=hosts, body_timeout=args.body_timeout or DEFAULT_BODY_TIMEOUT,
                      page=page)


def _common(sub: argparse.ArgumentParser, store_help: str) -> None:
    """The options `demo` and `serve` share."""
    sub.add_argument("--host", default="127.0.0.1", help="address to listen on "
                     "(default: 127.0.0.1)")
    sub.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    sub.add_argument("--store", metavar="STORE", default=None, help=store_help)
    sub.add_argument("--grace", metavar="SECONDS", type=seconds_of, default=DEFAULT_GRACE,
                     help="on SIGTERM, how long runs get to finish their step before the "
                          "rest stop, resumable (default: %(default)g)")
    sub.add_argument("--workers", metavar="N", type=count_of, default=1,
                     help="worker processes on the one port, each with its own socket so "
                          "that connections spread evenly (Linux); above 1, threads must be "
                          "in a redis:// or postgresql:// --store (default: 1)")
    sub.add_argument("--loop", choices=("auto", "asyncio", "uvloop"), default="auto",
                     help="the event loop, as uvicorn's --loop (default: auto, uvloop "
                          "when installed)")
    sub.add_argument("--http", choices=("auto", "h11", "httptools"), default="auto",
                     help="the HTTP parser, as uvicorn's --http (default: auto, httptools "
                          "when installed)")
    add_safety_options(sub)
    sub.add_argument(LISTEN_FD_OPTION, dest="listen_fd", type=int, default=None,
                     help=argparse.SUPPRESS)  # a worker's socket, given by its parent
    sub.add_argument(PARENT_OPTION, dest="parent_pid", type=int, default=0,
                     help=argparse.SUPPRESS)  # and that parent's pid


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pyox-agents",
        description="Serve pyox-agents agents to AG-UI (CopilotKit) and AI SDK (useChat) pages.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    demo = commands.add_parser(
        "demo", help="serve the demo page: a todo list and a cart shared with an agent",
        description="Serve the demo page at / with its agent over AG-UI and the AI SDK. "
                    "Open the printed URL and type: add milk and eggs to my cart")
    _common(demo, f"where threads are kept: {STORE_FORMS} "
                 f"(default: sqlite:{default_store_path()})")
    demo.add_argument("--model", default="demo",
                      help="demo (offline, the default), openai:<model> or ollama:<model>")
    demo.add_argument("--pace", type=pace_of, default=1.5, metavar="SECONDS",
                      help="about how long the offline model takes to answer, as a real one "
                           "would (default 1.5; 0 answers at once)")

    serve = commands.add_parser(
        "serve", help="serve your own agents: module:agent, module:agents_dict or module:app",
        description="Serve an Agent, a dict of name -> Agent, or a ready ASGI app named as "
                    "module:attribute (imported from the current folder).")
    serve.add_argument("target", metavar="MODULE:ATTRIBUTE",
                       help="e.g. myapp:agent, myapp:agents (a dict) or myapp:app")
    _common(serve, f"where threads are kept: {STORE_FORMS} (default: none, nothing is kept)")
    add_new_command(commands)
    return parser


def _serve(app: Any, args: argparse.Namespace, wrap: Any = None) -> None:
    from pyox_agents.server._graceful import serve

    sock = None
    if args.listen_fd is not None:  # a worker: the socket its parent bound and handed down
        from pyox_agents.server._workers import end_with_parent

        if args.parent_pid:  # started by `--workers` (else by whoever passed the socket)
            end_with_parent(args.parent_pid)
        sock = socket.socket(fileno=args.listen_fd)
    serve(app, args.host, args.port, args.grace, loop=args.loop, http=args.http, sock=sock,
          header_timeout=args.header_timeout, max_pending=args.max_pending_connections,
          wrap=wrap)


def _is_worker(args: argparse.Namespace) -> bool:
    return args.listen_fd is not None


def _supervises(args: argparse.Namespace) -> bool:
    return args.workers > 1 and not _is_worker(args)


def _check_shared(store: str | None, default: str) -> None:
    """Several workers keep threads in one store they all reach, never a process's own
    (`default`: what keeps them without a --store)."""
    if store is not None and not store.startswith((*SHARED_STORES, "sqlite:")) \
            and store != "memory":
        raise CliError(f"--store {redact_url(store)!r} is not a store; use {STORE_FORMS}")
    if store is None or not store.startswith(SHARED_STORES):
        what = f"--store {store}" if store else default
        raise CliError(f"--workers above 1 needs a store every worker shares: give --store "
                       f"redis://HOST:PORT or postgresql://USER@HOST/DATABASE ({what} would "
                       f"keep each worker's threads apart)")


def _supervise(args: argparse.Namespace, argv: Sequence[str]) -> None:
    """Bind one socket per worker, then start and watch the workers until SIGTERM/SIGINT."""
    from pyox_agents.server._workers import bind_sockets, supervise

    if not sys.platform.startswith("linux"):
        raise CliError("--workers above 1 needs Linux, whose SO_REUSEPORT spreads connections "
                       "over the workers' sockets; elsewhere run one process per port behind a "
                       "proxy, or `uvicorn --workers N`")
    try:
        sockets = bind_sockets(args.host, args.port, args.workers)
    except OSError as exc:
        raise CliError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") \
            from None
    print(f"  {args.workers} worker processes on port {sockets[0].getsockname()[1]}",
          flush=True)
    status = supervise(argv, sockets, args.grace)
    if status:
        raise SystemExit(status)


def _demo(args: argparse.Namespace, argv: Sequence[str]) -> None:
    from pyox_agents.demo import demo_agents

    if _supervises(args):
        _check_shared(args.store, "the default SQLite file")
    if not (STATIC_DIR / "index.html").is_file():
        raise CliError(f"the demo page is not built: {STATIC_DIR} has no index.html; run "
                       "`npm ci && npm run build` in frontend-demo/")
    from pyox_agents.models.names import resolve_model

    try:
        resolve_model(args.model)
    except (ValueError, ImportError) as exc:
        raise CliError(f"--model {args.model!r}: {exc}") from None
    agents = demo_agents(args.model, pace=args.pace)
    origins, hosts = _checked(args)
    if not _is_worker(args):
        url = base_url(args.host, args.port)
        print(f"pyox-agents demo: open {url}", flush=True)
        print("  type first: add milk and eggs to my cart", flush=True)
        print(f"  model {args.model}, threads kept in {args.store or default_store_path()}; "
              "endpoints:", flush=True)
        say_endpoints(url, agents)
        say_exposure(args.host, hosts, origins)
    if _supervises(args):
        _supervise(args, argv)
        return
    store = open_store(args.store or f"sqlite:{default_store_path()}")
    _serve(_create_app(agents, args, store, origins, hosts, page=STATIC_DIR), args)


def _checked(args: argparse.Namespace) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    """The `--cors` origins and the hosts to answer (None: any), checked: an origin or a host
    that is not one is the command's mistake."""
    try:
        origins = normalized_origins(args.cors)
        return origins, allowed_hosts_for(args.host, normalized_hosts(args.allowed_host))
    except ValueError as exc:
        raise CliError(str(exc).replace("cors_origins: ", "--cors: ")) from None


def _serve_target(args: argparse.Namespace, argv: Sequence[str]) -> None:
    target = load_target(args.target)
    agents = _agents_of(target, args.target)  # None: a ready ASGI app, with its own store
    if _supervises(args) and agents is not None:
        _check_shared(args.store, "no --store")
    origins, hosts = _checked(args)
    if agents is None and (args.cors or args.body_timeout is not None):
        raise CliError(f"--cors and --body-timeout set up the app `serve` makes for agents; "
                       f"{args.target} is a ready app: give its create_app(...) cors_origins= "
                       "or body_timeout= instead")
    if not _is_worker(args):
        print(f"pyox-agents: serving {args.target} at {base_url(args.host, args.port)}", flush=True)
        say_endpoints(base_url(args.host, args.port), agents or {})
        say_exposure(args.host, hosts, None if agents is None else origins)
    if _supervises(args):
        _supervise(args, argv)
        return
    store = open_store(args.store) if args.store else None
    if agents is not None:
        _serve(_create_app(agents, args, store, origins, hosts), args)
        return
    _serve(target, args, None if hosts is None else functools.partial(HostCheck, hosts=hosts))


def main(argv: Sequence[str] | None = None) -> None:
    """Run the `pyox-agents` command with `argv` (default: the process's arguments)."""
    parser = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    try:
        if args.command == "demo":
            _demo(args, argv)
        elif args.command == "new":
            run_new(args)
        else:
            _serve_target(args, argv)
    except (CliError, StarterError) as exc:
        parser.exit(2, f"pyox-agents: error: {exc}\n")
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
