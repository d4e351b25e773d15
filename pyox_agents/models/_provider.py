"""What the HTTP providers (OpenAI-compatible, Anthropic) share: their errors and clients.

A provider's failure becomes a `ProviderError` (a `ModelError` with a `code`), so the run ends
with `RunFailed` carrying a message that says what went wrong and what to do.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from pyox_agents._redact import redact_text
from pyox_agents.models.base import ModelError

PUBLIC_MESSAGES = {
    "no_api_key": "the model provider has no API key on this server; the server's log says "
                  "which setting is missing",
    "auth": "the model provider refused this server's credentials; the server's log has the "
            "details",
    "not_found": "the model provider does not know the model this agent uses; the server's "
                 "log has the details",
    "bad_request": "the model provider rejected the request; the server's log has the details",
    "rate_limited": "the model provider is rate-limiting this server; try again in a minute",
    "provider_unavailable": "the model provider is unavailable; try again later",
    "timeout": "the model provider did not answer in time; try again",
    "connection": "the model provider could not be reached; try again later",
    "model_error": "the model provider failed during its reply; try again",
}
"""What a client reads of a provider's failure, by code: never its URL, its words or the
key's hint (the run's record and the server's log have them)."""


class ProviderError(ModelError):
    """A model provider failed or refused the request; `code` says how.

    Codes: "no_api_key" (no key configured), "auth" (the key was refused, HTTP 401/403),
    "not_found" (no such model, HTTP 404), "bad_request" (HTTP 400/422), "rate_limited"
    (HTTP 429 after the retries), "provider_unavailable" (HTTP 5xx after the retries),
    "timeout", "connection" (the server could not be reached) and "model_error" (the
    provider reported an error in the middle of its reply, or anything else).

    The message says what went wrong and what to do, for the server's log and the run's
    record (a URL in it has its password and secret parameters hidden); a client reads
    `public_message`, one of `PUBLIC_MESSAGES`.
    """

    def __init__(self, message: str, *, code: str = "model_error", status: int | None = None):
        super().__init__(redact_text(message))
        self.code = code
        self.status = status
        """The HTTP status the provider answered with, when there was one."""

    @property
    def public_message(self) -> str:
        """What a client is shown: what failed, by code, naming no URL."""
        return PUBLIC_MESSAGES.get(self.code, PUBLIC_MESSAGES["model_error"])


@dataclass(frozen=True, slots=True)
class ErrorKinds:
    """One SDK's exception classes, so one function can describe both SDKs' errors."""

    status: type[Exception]
    timeout: type[Exception]
    connection: type[Exception]


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Who answered: a label for messages ("OpenAI"), where, and how the key is configured."""

    label: str
    model: str
    base_url: str
    key_hint: str
    max_retries: int
    timeout: float | None


def provider_message(exc: BaseException) -> str:
    """The provider's own words for `exc`: `error.message` of the body when there is one."""
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(error, str):
            return error
    message = getattr(exc, "message", None)
    return message if isinstance(message, str) and message else str(exc) or type(exc).__name__


def describe_failure(exc: Exception, kinds: ErrorKinds, at: Endpoint) -> ProviderError:
    """The `ProviderError` for an SDK exception, saying what went wrong and what to do."""
    said = provider_message(exc)
    retries = f"after {at.max_retries} retries" if at.max_retries else "(retries are off)"
    unreached = _unreached(exc, kinds, at, retries)
    if unreached is not None:
        return unreached
    status = getattr(exc, "status_code", None) if isinstance(exc, kinds.status) else None
    if not isinstance(status, int) or status < 400:
        return ProviderError(f"{at.label} failed during the reply of model {at.model!r}: {said}",
                             code="model_error")
    return _refused(status, said, at, retries)


def _unreached(exc: Exception, kinds: ErrorKinds, at: Endpoint,
               retries: str) -> ProviderError | None:
    """The error of a request that got no answer (a timeout, no connection), or None."""
    if isinstance(exc, kinds.timeout):
        return ProviderError(
            f"{at.label} did not answer within {at.timeout}s {retries} for model {at.model!r}; "
            "pass a larger timeout=... to the model, or try again", code="timeout")
    if isinstance(exc, kinds.connection):
        cause = exc.__cause__ or exc.__context__
        detail = f": {cause}" if cause is not None and str(cause) else ""
        return ProviderError(
            f"could not connect to {at.label} at {at.base_url}{detail}; is the server running "
            "and is the base URL right?", code="connection")
    return None


def _refused(status: int, said: str, at: Endpoint, retries: str) -> ProviderError:
    """The error of an answer with HTTP error `status`, saying what to do about it."""
    if status == 401:
        return ProviderError(
            f"{at.label} refused the API key (HTTP 401: {said}); {at.key_hint}",
            code="auth", status=status)
    if status == 403:
        return ProviderError(
            f"{at.label} refused access to model {at.model!r} (HTTP 403: {said}); check that "
            f"the key may use this model; {at.key_hint}",
            code="auth", status=status)
    if status == 404:
        return ProviderError(
            f"{at.label} at {at.base_url} has no model {at.model!r} (HTTP 404: {said}); check "
            "the model name (for Ollama: `ollama pull <model>`)",
            code="not_found", status=status)
    if status == 429:
        return ProviderError(
            f"{at.label} kept answering 429 Too Many Requests {retries}: {said}; wait and try "
            "again, or pass a larger max_retries=... to the model",
            code="rate_limited", status=status)
    if status >= 500:
        return ProviderError(
            f"{at.label} failed with HTTP {status} {retries}: {said}; try again later, or pass "
            "a larger max_retries=... to the model",
            code="provider_unavailable", status=status)
    return ProviderError(
        f"{at.label} rejected the request for model {at.model!r} (HTTP {status}: {said}); "
        "check the model's settings and the messages",
        code="bad_request", status=status)


def missing_extra(extra: str, package: str) -> ImportError:
    """The ImportError for a provider whose SDK is not installed: it names the pip command."""
    return ImportError(f"the {extra} models need the `{package}` package, which is not "
                       f'installed; run: pip install "pyox-agents[{extra}]"')


class _Closable(Protocol):
    async def close(self) -> None: ...


C = TypeVar("C", bound=_Closable)


class LoopClient(Generic[C]):
    """An SDK client made on first use and remade for each event loop, closed with its loop.

    An SDK client keeps a connection pool tied to the event loop that opened it; `agent.run`
    starts a new loop each time, so a model used by several runs needs one client per loop. A
    client this made is closed on the loop that opened it: when that loop shuts down
    (`asyncio.run` closes async generators), or soon after this forgets it on a loop that still
    runs. A client `given` by the caller is used on every loop and stays the caller's to close.
    """

    def __init__(self, make: Callable[[], C], given: C | None = None) -> None:
        self._make = make
        self._given = given
        self._client: C | None = None
        self._loop: object = None
        self._closer: AsyncGenerator[None, None] | None = None

    def get(self) -> C:
        """The client for the running event loop, made now if needed."""
        if self._given is not None:
            return self._given
        try:
            loop: object = asyncio.get_running_loop()
        except RuntimeError:  # another async library (trio): one client
            loop = None
        if self._client is None or self._loop is not loop:
            old_loop = self._loop
            if isinstance(old_loop, asyncio.AbstractEventLoop) and old_loop.is_closed():
                self._quiet_closer()  # its loop can no longer run the close
            self._client = self._make()
            self._loop = loop
            self._closer = None  # a previous one closes its client on its own loop
            if loop is not None:
                self._closer = _close_with_loop(self._client)
                with contextlib.suppress(StopIteration):  # runs to its `yield`: registered
                    self._closer.asend(None).send(None)
        return self._client

    async def aclose(self) -> None:
        """Close the client this made (a given one stays open); the next `get` makes a new
        one."""
        client, self._client, self._loop = self._client, None, None
        self._quiet_closer()  # it is closed here, not by its loop's shutdown
        if client is not None:
            await client.close()

    def _quiet_closer(self) -> None:
        """Stop the current closer without closing its client."""
        closer, self._closer = self._closer, None
        if closer is not None and getattr(closer, "ag_frame", None) is not None:  # still open
            with contextlib.suppress(StopAsyncIteration):
                closer.athrow(_Handed()).send(None)


class _Handed(Exception):
    """Thrown into a closer whose client was handed to the caller to close."""


async def _close_with_loop(client: _Closable) -> AsyncGenerator[None, None]:
    """Waits at `yield` until the loop shuts down (or it is dropped), then closes `client`.

    The running loop's async-generator hooks register it at its first step, so `asyncio.run`
    closes it (and so `client`) before the loop closes; a closer dropped while its loop runs is
    closed by the loop's finalizer hook.
    """
    handed = False
    try:
        yield
    except _Handed:
        handed = True
    finally:
        if not handed:
            await client.close()


def plain(value: Any) -> Any:
    """`value` with every mapping a dict and every sequence a list, as JSON encoders want."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [plain(v) for v in value]
    return value
