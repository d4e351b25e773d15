"""Secrets taken out of URLs and of error text before they are logged or kept.

`redact_url(url)` hides the password of a URL's `user:password@` and the value of every
parameter whose name says it holds a secret (`?password=`, `&token=`, `api_key=`, `sig=`, ...;
any case), in every form the stores, the model providers and the remote agents take:
`redis://`, `rediss://`, `unix://`, `postgresql://`, `postgres://`, `http(s)://`, and libpq's
`key=value` strings. `redact_text(text)` does the same for every URL in a free text (an
exception's message) and for its `password=...` pairs and `Bearer` tokens.

Both only hide: what they give is the text with each secret replaced by `***`, never longer
than needed, and they never raise, whatever they are given (a URL with a lone surrogate or no
host at all). They are for what the server logs and keeps; a client is shown a public message
instead, which names no URL at all.
"""

from __future__ import annotations

import re

__all__ = ["HIDDEN", "redact_text", "redact_url", "secret_name"]

HIDDEN = "***"
"""What a secret is replaced with."""

_SECRET_SUFFIXES = ("password", "passwd", "secret", "token", "signature", "credential",
                    "credentials", "apikey", "authorization")
"""A parameter whose name ends with one of these holds a secret (`sslpassword`,
`client_secret`, `access_token`, `X-Amz-Signature`, `X-Amz-Credential`)."""

_SECRET_WORDS = ("pass", "pwd", "key", "auth", "sig")
"""A parameter named one of these, or ending with `_` and one (`api_key`, `db_pwd`), holds a
secret; `monkey` or `sslkey` do not."""

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://\S*")
"""A URL in free text: a scheme, `://`, and everything up to the next white space."""

_PAIR = re.compile(
    r"(?<![A-Za-z0-9_.\-])(?P<name>[A-Za-z][A-Za-z0-9_.\-]*)\s?=\s?"
    r"(?P<value>'(?:[^'\\]|\\.)*'?|\"(?:[^\"\\]|\\.)*\"?|[^\s&;#'\"<>]+)")
"""`name=value`: a URL's query parameter or a libpq setting, its value quoted or up to the
next `&`, `;`, `#`, quote, bracket or white space."""

_BEARER = re.compile(r"\b(?P<scheme>Bearer|bearer|BEARER)(?P<gap>\s+)[A-Za-z0-9._~+/=\-]{8,}")
"""An `Authorization: Bearer <token>` header's token, quoted in an error."""

_HOST_PORT = re.compile(r"[^:@]+:\d*")
"""`host:port`, what comes before a URL's first `/` when it has no user information."""


def secret_name(name: str) -> bool:
    """Whether a parameter called `name` holds a secret (any case; `-` reads as `_`)."""
    norm = name.lower().replace("-", "_")
    if norm.endswith(_SECRET_SUFFIXES) or norm in _SECRET_WORDS:
        return True
    return any(norm.endswith("_" + word) for word in _SECRET_WORDS)


def redact_url(url: str) -> str:
    """`url` without its secrets: the password of `user:password@` and the value of each
    parameter that holds one (see `secret_name`), each replaced by `***`.

    Also takes libpq's `host=... password=...` form. Never raises.
    """
    return _redact_pairs(_redact_user(url))


def redact_text(text: str) -> str:
    """`text` (an error message) with the secrets of every URL in it hidden as `redact_url`
    hides them, and so every `password=...` (or `token=...`, ...) pair and `Bearer` token.
    Never raises."""
    if "://" in text:
        text = _URL.sub(lambda found: _redact_user(found.group()), text)
    if "=" in text:
        text = _redact_pairs(text)
    return _BEARER.sub(lambda found: f"{found['scheme']}{found['gap']}{HIDDEN}", text)


def _redact_user(url: str) -> str:
    """`url` with the password of its `user:password@` hidden (the user name stays)."""
    start = url.find("://")
    if start < 0:
        return url
    start += 3
    rest = url[start:]
    slash = rest.find("/")
    head = rest if slash < 0 else rest[:slash]
    at = head.rfind("@")
    if at < 0 and slash >= 0 and not _HOST_PORT.fullmatch(head):
        # a password with an unencoded "/" ("redis://:ab/cd@host"): its URL ends at the last
        # "@" before the query
        stops = [i for i in (rest.find("?"), rest.find("#")) if i >= 0]
        at = rest.rfind("@", 0, min(stops) if stops else len(rest))
    if at < 0:
        return url
    user, colon, password = rest[:at].partition(":")
    if not colon or not password or password == HIDDEN:
        return url
    return f"{url[:start]}{user}:{HIDDEN}{rest[at:]}"


def _redact_pairs(text: str) -> str:
    def hide(found: re.Match[str]) -> str:
        if not secret_name(found["name"]) or found["value"] == HIDDEN:
            return found.group()
        return f"{found.group()[:found.start('value') - found.start()]}{HIDDEN}"

    return _PAIR.sub(hide, text)
