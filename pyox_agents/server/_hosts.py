"""The `Host` check: a request must name a host the server serves, so a page on another site
cannot reach it by a name of its own that resolves to the server's address (DNS rebinding).

`HostCheck` is an ASGI middleware, like Starlette's `TrustedHostMiddleware` and with its
patterns (`"example.com"`, `"*.example.com"`, `"*"` for any), whose refusal says which host was
refused and how to allow it. `/healthz` is answered whatever the host, so that a load balancer
or a Kubernetes probe that names the server by its address can check it.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["LOOPBACK_HOSTS", "HostCheck", "host_name", "is_loopback", "normalized_hosts"]

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
"""The names of this machine's loopback address, which no other site can make a browser use."""

HEALTH_PATH = "/healthz"


def is_loopback(host: str) -> bool:
    """Whether `host` (a `--host` value: a name or an address) is this machine's loopback."""
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def normalized_hosts(hosts: Sequence[str]) -> tuple[str, ...]:
    """`hosts` as `HostCheck` compares them: lower case, an IPv6 address in brackets.

    Raises:
        ValueError: a value is empty, has a port or a scheme, or a `*` elsewhere than in
            `"*"` or a leading `"*."`.
    """
    out: list[str] = []
    for host in hosts:
        name = host.strip().lower()
        if ":" in name and not name.startswith("["):
            try:
                name = f"[{ipaddress.IPv6Address(name)}]"
            except ValueError:
                raise ValueError(f"allowed host {host!r} is not a host name: write the name "
                                 "alone, without a scheme or a port, e.g. 'app.example.com'"
                                 ) from None
        if not name or "/" in name or "*" in name[1:] or (
                name.startswith("*") and name != "*" and not name.startswith("*.")):
            raise ValueError(f"allowed host {host!r} is not a host name or pattern: write "
                             "'app.example.com', '*.example.com' (its subdomains) or '*' (any)")
        out.append(name)
    return tuple(dict.fromkeys(out))


def host_name(header: str) -> str:
    """The host of a `Host` header's value, without its port, in lower case (`[::1]` for
    `[::1]:8000`)."""
    value = header.strip().lower()
    if value.startswith("["):
        return value[: value.find("]") + 1] if "]" in value else value
    name, _, port = value.rpartition(":")
    return name if name and port.isdigit() else value


class HostCheck:
    """An ASGI middleware that answers 400 to a request whose `Host` is not one of `hosts`.

    `hosts` are names, `*.example.com` for every subdomain of example.com, or `*` for any
    (then nothing is checked); `normalized_hosts` checks them.
    """

    def __init__(self, app: ASGIApp, hosts: Sequence[str]) -> None:
        self.app = app
        self.hosts = normalized_hosts(hosts)
        self.any = "*" in self.hosts
        self._names = frozenset(h for h in self.hosts if not h.startswith("*"))
        self._suffixes = tuple(h[1:] for h in self.hosts if h.startswith("*."))

    def allows(self, host: str) -> bool:
        """Whether a request naming `host` (a `Host` header's value) is served."""
        name = host_name(host)
        return self.any or name in self._names or name.endswith(self._suffixes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse the request if its host is not served, else pass it on."""
        if self.any or scope["type"] not in ("http", "websocket") or \
                scope.get("path") == HEALTH_PATH:
            await self.app(scope, receive, send)
            return
        host = Headers(scope=scope).get("host", "")
        if self.allows(host):
            await self.app(scope, receive, send)
            return
        served = ", ".join(self.hosts)
        what = f"the host {host!r}" if host else "a request without a Host header"
        name = host_name(host) or "NAME"
        response = PlainTextResponse(
            f"{what} is not one this server answers to ({served}), so it was refused: a page "
            "on another site could reach the server by a name of its own (DNS rebinding). If "
            f"you reach it by that name, allow it: pyox-agents serve --allowed-host {name}, or "
            f"create_app(..., allowed_hosts=[{name!r}])", status_code=400)
        await response(scope, receive, send)
