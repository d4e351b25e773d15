"""`--store postgresql://...` on the command line: a PostgresStore, or an error saying what
to do."""

from __future__ import annotations

import socket

import pytest

from pyox_agents.server.cli import main, open_store
from pyox_agents.stores.postgres import PostgresStore
from tests.postgres_server import drop_schema


def test_a_postgresql_url_opens_a_postgres_store_making_its_schema(postgres_server: str) -> None:
    store = open_store(postgres_server)
    try:
        assert isinstance(store, PostgresStore)
        assert store.schema == "pyox_agents"
        assert store.list_threads() == []  # the schema was made on first use
    finally:
        store.close()
        drop_schema(postgres_server, "pyox_agents")


def test_an_unreachable_database_on_the_command_line_is_a_clear_error(
        capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    spec = f"postgresql://me:secret@127.0.0.1:{port}/app"
    with pytest.raises(SystemExit) as exit_:
        main(["demo", "--store", spec, "--port", "1"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"--store 'postgresql://me:***@127.0.0.1:{port}/app': cannot connect" in err
    assert "check that the server runs" in err
    assert "secret" not in err


def test_a_password_in_the_query_string_is_hidden_too(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue: "the PostgreSQL redaction misses `?password=`"."""
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    spec = f"postgresql://me@127.0.0.1:{port}/app?sslmode=disable&password=s3cret"
    with pytest.raises(SystemExit) as exit_:
        main(["demo", "--store", spec, "--port", "1"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"--store 'postgresql://me@127.0.0.1:{port}/app?sslmode=disable&password=***'" in err
    assert "cannot connect" in err and "s3cret" not in err
