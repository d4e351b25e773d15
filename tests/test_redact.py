"""One redaction helper for every URL the server knows: a store's, a model provider's, a remote
agent's. `redact_url` hides the password of `user:password@` and every parameter that holds a
secret, in any case; `redact_text` does so in free text (an exception's message). Neither ever
raises, whatever it is given."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from pyox_agents._redact import HIDDEN, redact_text, redact_url

SCHEMES = ["redis", "rediss", "unix", "postgresql", "postgres", "http", "https"]
SECRET_PARAMETERS = ["password", "pass", "pwd", "passwd", "secret", "client_secret", "token",
                     "access_token", "refresh_token", "api_key", "apikey", "api-key", "key",
                     "auth", "sig", "signature", "X-Amz-Signature", "X-Amz-Credential",
                     "credential", "credentials", "sslpassword", "authorization"]
PASSWORD = "pa5s:w@rd/?#&"
"""A password with each character a URL treats apart (percent-encoded where it goes)."""


@pytest.mark.parametrize("url", [
    "redis://:{p}@127.0.0.1:6379/0",
    "redis://default:{p}@127.0.0.1:6379/0",
    "rediss://user:{p}@cache.example.com:6380/1?ssl_cert_reqs=none",
    "unix://user:{p}@/run/redis.sock?db=0",
    "postgresql://app:{p}@db.internal:5432/app",
    "postgres://app:{p}@db.internal/app?sslmode=require",
    "https://user:{p}@llm.example.com/v1",
    "http://user:{p}@127.0.0.1:8000/agents/research/ag-ui",
])
@pytest.mark.parametrize("password", ["s3cret", quote(PASSWORD, safe=""), "p@ss@word",
                                      "pa:ss", "pa?ss#x"])
def test_redact_url_hides_the_password_of_user_password_at(url: str, password: str) -> None:
    redacted = redact_url(url.format(p=password))
    assert password not in redacted
    assert f":{HIDDEN}@" in redacted
    assert redacted == url.format(p=HIDDEN), "the user, host, port, path and query stay"


def test_redact_url_hides_a_password_with_an_unencoded_slash() -> None:
    assert redact_url("redis://:ab/cd@cache:6379/0") == f"redis://:{HIDDEN}@cache:6379/0"


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("name", SECRET_PARAMETERS)
def test_redact_url_hides_every_secret_query_parameter_in_any_case(scheme: str,
                                                                   name: str) -> None:
    for spelled in (name, name.upper(), name.title()):
        url = f"{scheme}://host:1/db?sslmode=require&{spelled}=tok3n-VALUE&db=0#frag"
        assert redact_url(url) == \
            f"{scheme}://host:1/db?sslmode=require&{spelled}={HIDDEN}&db=0#frag"


@pytest.mark.parametrize("url", [
    "postgresql://app@db/app?sslmode=require&application_name=pyox",
    "redis://cache:6379/0?db=1&socket_timeout=5",
    "https://mastodon.social/@someone",
    "https://host:8443/users/@me?monkey=1&sslkey=/etc/key.pem",
    "http://127.0.0.1:8000/agents/x/ag-ui",
])
def test_redact_url_keeps_a_url_that_holds_no_secret(url: str) -> None:
    assert redact_url(url) == url


@pytest.mark.parametrize(("conninfo", "redacted"), [
    ("host=db user=app password=s3cret dbname=app",
     f"host=db user=app password={HIDDEN} dbname=app"),
    ("host=db password='se cret' dbname=app", f"host=db password={HIDDEN} dbname=app"),
    ("host=db PASSWORD = s3cret", f"host=db PASSWORD = {HIDDEN}"),
])
def test_redact_url_hides_a_libpq_password(conninfo: str, redacted: str) -> None:
    assert redact_url(conninfo) == redacted


def test_redact_text_hides_every_url_and_pair_in_an_error_message() -> None:
    message = ("cannot connect to PostgreSQL at 'postgresql://me:hunter2@db/app?password="
               "hunter3' (connection refused); also tried (redis://:hunter4@cache:6379/0), "
               "password=hunter5 and Authorization: Bearer sk-hunter6-abcdef")
    redacted = redact_text(message)
    for secret in ("hunter2", "hunter3", "hunter4", "hunter5", "sk-hunter6"):
        assert secret not in redacted
    assert redacted.startswith("cannot connect to PostgreSQL at 'postgresql://me:***@db/app?")
    assert "(redis://:***@cache:6379/0)" in redacted and "connection refused" in redacted


_TEXT = st.text(st.characters(exclude_categories=()), max_size=40)
"""Any text, lone surrogates included."""
_HOST = st.from_regex(r"[a-z][a-z0-9.-]{0,20}", fullmatch=True)
_PATH = st.from_regex(r"(/[a-z0-9._-]{0,10}){0,3}", fullmatch=True)


@given(scheme=st.sampled_from(SCHEMES), user=st.from_regex(r"[a-z0-9_]{0,8}", fullmatch=True),
       password=st.text(min_size=1, max_size=20), host=_HOST, path=_PATH,
       port=st.one_of(st.none(), st.integers(1, 65535)))
def test_no_password_survives_redact_url(scheme: str, user: str, password: str, host: str,
                                         path: str, port: int | None) -> None:
    secret = "S3CR3T" + quote(password, safe="")
    where = host if port is None else f"{host}:{port}"
    redacted = redact_url(f"{scheme}://{user}:{secret}@{where}{path}")
    assert "S3CR3T" not in redacted
    assert redacted == f"{scheme}://{user}:{HIDDEN}@{where}{path}"


@given(scheme=st.sampled_from(SCHEMES), host=_HOST, name=st.sampled_from(SECRET_PARAMETERS),
       value=st.text(min_size=1, max_size=20), before=st.sampled_from(["", "db=0&"]))
def test_no_secret_parameter_survives_redact_url(scheme: str, host: str, name: str, value: str,
                                                 before: str) -> None:
    secret = "S3CR3T" + quote(value, safe="")
    redacted = redact_url(f"{scheme}://{host}/x?{before}{name}={secret}&after=1")
    assert "S3CR3T" not in redacted and redacted.endswith("&after=1")


@given(text=_TEXT)
def test_redaction_never_raises_and_hides_nothing_twice(text: str) -> None:
    for redact in (redact_url, redact_text):
        once = redact(text)
        assert isinstance(once, str)
        assert redact(once) == once


@given(before=_TEXT, password=st.text(min_size=1, max_size=20), after=_TEXT)
def test_redact_text_hides_a_url_password_wherever_it_stands(before: str, password: str,
                                                            after: str) -> None:
    assume("S3CR3T" not in before + after)
    secret = "S3CR3T" + quote(password, safe="")
    text = f"{before} redis://app:{secret}@cache:6379/0 {after}"
    assert "S3CR3T" not in redact_text(text)
