"""The tables and functions of `PostgresStore`, in a schema of their own (`pyox_agents` by default).

Each check-then-change that must be atomic is one PL/pgSQL function, called as one statement:
it checks first and raises (SQLSTATE `PYOX1`, the refusal in its message and what the database
holds in its detail) before anything is kept, so a refused call changes nothing. The sync and
async methods run the same statements. `{s}` stands for the schema's name (checked to be a
plain identifier before it is put in).

Tables: `threads` (one row per thread: entry count, parent, owner, shared state, first-save
order, title, archived, its latest run's status), `checkpoints` (what a server recorded of each
run when it ended, keyed by thread and run), `entries` (history entries, keyed by thread and
seq), `runs`, `audit` (keyed by run and seq), `kept_states` and `kept_changes` (a server's
kept shared state of each thread, and the versions appended to it since), `leases` (owner,
fencing token and expiry per thread; tokens from the sequence `lease_tokens`), `event_logs` and
`events` (each run's event log; a log expires with its rows), `active_runs` (each thread's
active run, with an expiry) and `schema_version`.
"""

from __future__ import annotations

__all__ = ["REFUSED", "SCHEMA_VERSION", "TABLES", "channel_sql"]

SCHEMA_VERSION = 4
"""The version of the tables and functions below; a database holding a newer one is refused.

A database at an older version is brought up to this one when a store opens it (the statements
below only add: `IF NOT EXISTS` tables, columns and indexes, `CREATE OR REPLACE` functions), so
what it holds stays readable. Version 2 added the threads' `title`, `archived` and `run_status`
and the `checkpoints` table; version 3 the kept states' `version`, `size` and `generation`, the
`kept_changes` table and the functions `keep_state` and `append_kept`; version 4 the function
`check_fence`, the lease check those and `write_step` share."""

REFUSED = "PYOX1"
"""The SQLSTATE of a refusal raised by the functions below."""


def channel_sql(key: str) -> str:
    """SQL for the NOTIFY channel of the event log `key` (a SQL expression): `pyox_` and the md5
    of the schema and the run key, so that followers are woken by their run only."""
    return f"'pyox_' || md5('{{s}}:' || {key})"


TABLES = """
CREATE SCHEMA IF NOT EXISTS {s};
CREATE TABLE IF NOT EXISTS {s}.schema_version (version integer NOT NULL);
CREATE TABLE IF NOT EXISTS {s}.threads (
    id text PRIMARY KEY,
    parent_id text,
    owner text,
    entries bigint NOT NULL DEFAULT 0,
    created_at text,
    updated_at text,
    shared_state text,
    shared_version bigint,
    first_saved bigserial NOT NULL
);
CREATE INDEX IF NOT EXISTS threads_by_first_saved ON {s}.threads (first_saved);
ALTER TABLE {s}.threads ADD COLUMN IF NOT EXISTS title text,
    ADD COLUMN IF NOT EXISTS archived boolean NOT NULL DEFAULT false,
    ADD COLUMN IF NOT EXISTS run_status text;
CREATE INDEX IF NOT EXISTS threads_by_owner ON {s}.threads
    (owner, archived, (coalesce(updated_at, '') COLLATE "C") DESC, (id COLLATE "C") DESC)
    WHERE parent_id IS NULL;
CREATE TABLE IF NOT EXISTS {s}.checkpoints (
    thread_id text NOT NULL,
    run_id text NOT NULL,
    seq bigserial NOT NULL,
    head text NOT NULL,
    state text,
    PRIMARY KEY (thread_id, run_id)
);
CREATE TABLE IF NOT EXISTS {s}.entries (
    thread_id text NOT NULL,
    seq bigint NOT NULL,
    body text NOT NULL,
    PRIMARY KEY (thread_id, seq)
);
CREATE TABLE IF NOT EXISTS {s}.runs (
    run_id text PRIMARY KEY,
    thread_id text,
    body text NOT NULL
);
CREATE TABLE IF NOT EXISTS {s}.audit (
    run_id text NOT NULL,
    seq bigint NOT NULL,
    body text NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS {s}.kept_states (
    thread_id text PRIMARY KEY,
    body text NOT NULL
);
ALTER TABLE {s}.kept_states ADD COLUMN IF NOT EXISTS version bigint,
    ADD COLUMN IF NOT EXISTS size bigint NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS generation bigint NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS {s}.kept_changes (
    thread_id text NOT NULL,
    version bigint NOT NULL,
    body text NOT NULL,
    PRIMARY KEY (thread_id, version)
);
CREATE TABLE IF NOT EXISTS {s}.leases (
    thread_id text PRIMARY KEY,
    owner text NOT NULL,
    token bigint NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE SEQUENCE IF NOT EXISTS {s}.lease_tokens;
CREATE TABLE IF NOT EXISTS {s}.event_logs (
    run_key text PRIMARY KEY,
    last_id bigint NOT NULL DEFAULT 0,
    done boolean NOT NULL DEFAULT false,
    expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS event_logs_by_expiry ON {s}.event_logs (expires_at);
CREATE TABLE IF NOT EXISTS {s}.events (
    run_key text NOT NULL REFERENCES {s}.event_logs ON DELETE CASCADE,
    id bigint NOT NULL,
    body text NOT NULL,
    PRIMARY KEY (run_key, id)
);
CREATE TABLE IF NOT EXISTS {s}.active_runs (
    thread_id text PRIMARY KEY,
    run_key text NOT NULL,
    expires_at timestamptz NOT NULL
);

-- Refuses ('fence', with the lease's token now) unless p_fence is the token of the thread's
-- live lease. FOR SHARE: a takeover waits until the caller's write committed, never lands in
-- its middle.
CREATE OR REPLACE FUNCTION {s}.check_fence(p_thread text, p_fence bigint)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_token bigint;
BEGIN
    SELECT l.token INTO v_token FROM {s}.leases l
        WHERE l.thread_id = p_thread AND l.expires_at > clock_timestamp() FOR SHARE;
    IF v_token IS DISTINCT FROM p_fence THEN
        RAISE EXCEPTION USING ERRCODE = 'PYOX1', MESSAGE = 'fence',
            DETAIL = coalesce(v_token::text, '');
    END IF;
END $$;

CREATE OR REPLACE FUNCTION {s}.write_step(
    p_thread text, p_first_seq bigint, p_entries text[], p_parent text, p_owner text,
    p_created text, p_updated text, p_shared text, p_shared_version bigint,
    p_run_id text, p_run text, p_audit_first bigint, p_audit text[],
    p_fence_thread text, p_fence bigint
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_held bigint;
    v_next bigint;
    n bigint := coalesce(cardinality(p_entries), 0);
BEGIN
    IF p_fence_thread IS NOT NULL THEN
        PERFORM {s}.check_fence(p_fence_thread, p_fence);
    END IF;
    INSERT INTO {s}.threads (id, parent_id, owner) VALUES (p_thread, p_parent, p_owner)
        ON CONFLICT (id) DO NOTHING;
    SELECT t.entries INTO v_held FROM {s}.threads t WHERE t.id = p_thread FOR UPDATE;
    IF v_held <> p_first_seq THEN
        RAISE EXCEPTION USING ERRCODE = 'PYOX1', MESSAGE = 'entries', DETAIL = v_held::text;
    END IF;
    IF p_run_id IS NOT NULL THEN
        INSERT INTO {s}.runs (run_id, thread_id, body) VALUES (p_run_id, p_thread, p_run)
            ON CONFLICT (run_id) DO UPDATE SET body = excluded.body;  -- locks the run's row
        IF p_audit_first IS NOT NULL THEN
            SELECT coalesce(max(a.seq) + 1, 0) INTO v_next FROM {s}.audit a
                WHERE a.run_id = p_run_id;
            IF v_next <> p_audit_first THEN
                RAISE EXCEPTION USING ERRCODE = 'PYOX1', MESSAGE = 'audit',
                    DETAIL = v_next::text;
            END IF;
            INSERT INTO {s}.audit (run_id, seq, body)
                SELECT p_run_id, p_audit_first + u.o - 1, u.b
                FROM unnest(p_audit) WITH ORDINALITY AS u(b, o);
        END IF;
    END IF;
    IF p_parent IS NOT NULL OR p_owner IS NOT NULL THEN
        UPDATE {s}.threads SET parent_id = coalesce(parent_id, p_parent),
            owner = coalesce(owner, p_owner) WHERE id = p_thread;
    END IF;
    IF n > 0 THEN
        INSERT INTO {s}.entries (thread_id, seq, body)
            SELECT p_thread, p_first_seq + u.o - 1, u.b
            FROM unnest(p_entries) WITH ORDINALITY AS u(b, o);
        UPDATE {s}.threads SET entries = entries + n, updated_at = p_updated,
            created_at = coalesce(created_at, p_created) WHERE id = p_thread;
    END IF;
    IF p_shared_version IS NOT NULL THEN
        UPDATE {s}.threads SET shared_state = p_shared, shared_version = p_shared_version
            WHERE id = p_thread;
    END IF;
END $$;

CREATE OR REPLACE FUNCTION {s}.keep_state(
    p_thread text, p_fence bigint, p_body text, p_version bigint, p_size bigint
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF p_fence IS NOT NULL THEN
        PERFORM {s}.check_fence(p_thread, p_fence);
    END IF;
    INSERT INTO {s}.kept_states AS k (thread_id, body, version, size)
        VALUES (p_thread, p_body, p_version, p_size)
        ON CONFLICT (thread_id) DO UPDATE SET body = excluded.body,
            version = excluded.version, size = excluded.size, generation = k.generation + 1;
    DELETE FROM {s}.kept_changes WHERE thread_id = p_thread;
END $$;

-- Appends versions' changes to a kept state at version p_since; gives the kept state's
-- generation when the changes have grown enough to be folded into it (else NULL).
CREATE OR REPLACE FUNCTION {s}.append_kept(
    p_thread text, p_fence bigint, p_since bigint, p_versions bigint[], p_bodies text[],
    p_max bigint, p_share double precision
) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v_version bigint;
    v_size bigint;
    v_generation bigint;
    v_count bigint;
    v_added bigint;
BEGIN
    IF p_fence IS NOT NULL THEN
        PERFORM {s}.check_fence(p_thread, p_fence);
    END IF;
    SELECT k.version, k.size, k.generation INTO v_version, v_size, v_generation
        FROM {s}.kept_states k WHERE k.thread_id = p_thread FOR UPDATE;
    IF v_version IS DISTINCT FROM p_since THEN
        RAISE EXCEPTION USING ERRCODE = 'PYOX1', MESSAGE = 'moved',
            DETAIL = coalesce(v_version::text, '');
    END IF;
    INSERT INTO {s}.kept_changes (thread_id, version, body)
        SELECT p_thread, u.v, u.b FROM unnest(p_versions, p_bodies) AS u(v, b);
    UPDATE {s}.kept_states SET version = p_versions[cardinality(p_versions)]
        WHERE thread_id = p_thread;
    SELECT count(*), coalesce(sum(length(c.body)), 0) INTO v_count, v_added
        FROM {s}.kept_changes c WHERE c.thread_id = p_thread;
    IF v_count >= p_max OR v_added > v_size * p_share THEN
        RETURN v_generation;
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION {s}.append_events(p_key text, p_ttl_ms bigint, p_events text[])
RETURNS SETOF bigint LANGUAGE plpgsql AS $$
DECLARE
    v_last bigint;
    v_done boolean;
    n bigint := coalesce(cardinality(p_events), 0);
BEGIN
    DELETE FROM {s}.event_logs WHERE run_key = p_key AND expires_at <= clock_timestamp();
    INSERT INTO {s}.event_logs (run_key, expires_at) VALUES (p_key, clock_timestamp())
        ON CONFLICT (run_key) DO NOTHING;
    SELECT l.last_id, l.done INTO v_last, v_done FROM {s}.event_logs l
        WHERE l.run_key = p_key FOR UPDATE;
    IF v_done THEN
        RAISE EXCEPTION USING ERRCODE = 'PYOX1', MESSAGE = 'done', DETAIL = '';
    END IF;
    UPDATE {s}.event_logs SET last_id = v_last + n,
        expires_at = clock_timestamp() + p_ttl_ms * interval '1 millisecond'
        WHERE run_key = p_key;
    INSERT INTO {s}.events (run_key, id, body)
        SELECT p_key, v_last + u.o, u.b FROM unnest(p_events) WITH ORDINALITY AS u(b, o);
    PERFORM pg_notify(CHANNEL, '');
    RETURN QUERY SELECT v_last + o FROM generate_series(1, n) AS o;
END $$;

CREATE OR REPLACE FUNCTION {s}.mark_done(p_key text, p_ttl_ms bigint)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM {s}.event_logs WHERE expires_at <= clock_timestamp();  -- expired logs go
    INSERT INTO {s}.event_logs (run_key, done, expires_at)
        VALUES (p_key, true, clock_timestamp() + p_ttl_ms * interval '1 millisecond')
        ON CONFLICT (run_key) DO UPDATE SET done = true, expires_at = excluded.expires_at;
    PERFORM pg_notify(CHANNEL, '');
END $$;
""".replace("CHANNEL", channel_sql("p_key"))
