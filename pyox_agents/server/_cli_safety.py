"""What `pyox-agents serve` and `demo` let browsers and slow clients do: the options (`--cors`,
`--allowed-host`, the timeouts and the cap on waiting connections), the hosts an address
implies, and the banner lines that say where each agent answers and who may call it.

The server answers the `Host` names of the address it listens on: on a loopback address only
the loopback names (a page elsewhere cannot reach it by a name of its own, as DNS rebinding
would), on a given address that address and the loopback names, on `0.0.0.0` or `::` any name
(which the banner says) unless `--allowed-host` names them.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence

from pyox_agents.server._cli_values import connections_of, positive_seconds
from pyox_agents.server._hosts import LOOPBACK_HOSTS, is_loopback, normalized_hosts
from pyox_agents.server._stalls import DEFAULT_HEADER_TIMEOUT

__all__ = ["DEFAULT_BODY_TIMEOUT", "add_safety_options", "allowed_hosts_for", "base_url",
           "say_endpoints", "say_exposure"]

DEFAULT_BODY_TIMEOUT = 30.0
"""`--body-timeout`: the seconds a request's body may take to arrive (`create_app`'s default)."""

ANY_ADDRESS = ("0.0.0.0", "::", "[::]", "")


def add_safety_options(sub: argparse.ArgumentParser) -> None:
    """Add the cross-site, host and slow-client options to a command's parser."""
    sub.add_argument("--cors", metavar="ORIGIN", action="append", default=[],
                     help="let pages on ORIGIN (scheme://host[:port]) call the agents from the "
                          "browser; repeat for several (default: only the server's own pages)")
    sub.add_argument("--allowed-host", metavar="NAME", action="append", default=[],
                     help="a Host name to answer besides those of the address it listens on "
                          "(*.example.com: its subdomains; '*': any); repeat for several "
                          "(default: the loopback names on 127.0.0.1, any name on 0.0.0.0)")
    sub.add_argument("--header-timeout", metavar="SECONDS", type=positive_seconds,
                     default=DEFAULT_HEADER_TIMEOUT,
                     help="close a connection that has not sent a request's headers this long "
                          "after it opened or its last response ended (default: %(default)g)")
    sub.add_argument("--body-timeout", metavar="SECONDS", type=positive_seconds, default=None,
                     help="answer 408 to a request whose body takes longer to arrive "
                          f"(default: {DEFAULT_BODY_TIMEOUT:g})")
    sub.add_argument("--max-pending-connections", metavar="N", type=connections_of, default=None,
                     help="connections that may wait for a request's headers at once; over it, "
                          "the one that waited longest is closed (default: half the process's "
                          "file descriptor limit)")


def allowed_hosts_for(bind: str, extra: Sequence[str]) -> tuple[str, ...] | None:
    """The `Host` names a server listening on `bind` answers (None: any), with `extra`."""
    if "*" in extra:
        return None
    if is_loopback(bind):
        return normalized_hosts([*LOOPBACK_HOSTS, *extra])
    if bind in ANY_ADDRESS:
        return normalized_hosts([*LOOPBACK_HOSTS, *extra]) if extra else None
    return normalized_hosts([bind, *LOOPBACK_HOSTS, *extra])


def base_url(host: str, port: int) -> str:
    """The server's URL for the address it listens on (an IPv6 one in brackets)."""
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def say_endpoints(base: str, agents: Iterable[str]) -> None:
    """Print each agent's AG-UI and AI SDK endpoint."""
    for name in agents:
        print(f"  {name}: {base}agents/{name}/ag-ui (AG-UI), {base}agents/{name}/ai-sdk "
              "(AI SDK)", flush=True)


def say_exposure(host: str, hosts: tuple[str, ...] | None, origins: Sequence[str] | None
                 ) -> None:
    """Print who can reach the server: its address (without auth), the `Host` names it
    answers, and the pages that may call it. `origins` None: a ready app of the user's, whose
    auth and origins are its own, so only the hosts are said."""
    if origins is not None:
        if is_loopback(host):
            print(f"  no auth: listening on {host} only, so only this machine can reach it",
                  flush=True)
        else:
            print(f"  warning: no auth, and {host} may be reachable by others; serve a "
                  "create_app(..., auth=bearer_tokens({...})) app for that", flush=True)
    if hosts is None:
        print("  hosts answered: any (no Host check; name yours with --allowed-host NAME)",
              flush=True)
    else:
        print(f"  hosts answered: {', '.join(hosts)} (another name: --allowed-host NAME)",
              flush=True)
    if origins is not None:
        allowed = ", ".join(["its own", *origins])
        print(f"  pages that may call it: {allowed} (a frontend elsewhere: --cors ORIGIN)",
              flush=True)
