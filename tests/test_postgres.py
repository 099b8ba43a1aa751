"""The team store's own facts: credentials, passwords never shown, timeouts, a server lost mid-write, the driver."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import BASE_PYTHON, Runner, make_repo, reap

FIRST = ["checkpoint", "retry-backoff", "--orientation", "Backoff, designed.", "--next", "hold", "--no-note",
         "--decision", "Cap at 30 s.", "--rationale", "The gateway drops idle sockets."]  # fmt: skip


@pytest.fixture
def store_url(postgres_url: str) -> str:
    """Every CLI call of this module runs on a fresh PostgreSQL database."""
    return postgres_url


def without_password(url: str) -> tuple[str, str]:
    """The URL with its password taken out, and the password."""
    parts = urlsplit(url)
    assert parts.password
    return url.replace(f":{parts.password}@", "@"), parts.password


def test_credentials_from_pgpassword_or_pgpass_and_never_shown(wp: Runner, store_url: str, tmp_path: Path) -> None:
    bare, password = without_password(store_url)
    assert wp(*FIRST, env={"WHEYPOINT_STORE": bare, "PGPASSWORD": password}).code == 0
    parts = urlsplit(store_url)
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"{parts.hostname}:{parts.port}:*:{parts.username}:{password}\n")
    pgpass.chmod(0o600)
    shown = wp("show", "retry-backoff", env={"WHEYPOINT_STORE": bare, "PGPASSFILE": str(pgpass)})
    assert shown.code == 0 and shown.json["record"]["slug"] == "retry-backoff"
    wrong = store_url.replace(f":{password}@", ":not-the-password-x9@")
    refused = wp("show", "retry-backoff", env={"WHEYPOINT_STORE": wrong})
    assert refused.code == 1 and refused.json["error"]["code"] == "storage-error"
    assert "not-the-password-x9" not in refused.stdout + refused.stderr
    assert f"{parts.username}:***@" in refused.json["error"]["message"]


def test_the_pyz_on_a_bare_python_says_what_to_install(pyz: Path, store_url: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_")}
    # -S leaves site-packages off the path: CI installs the dev tools (psycopg among them) into the base
    # interpreter itself, and a user's bare python3 has no driver.
    done = subprocess.run([BASE_PYTHON, "-I", "-S", str(pyz), "list"], env={**env, "WHEYPOINT_STORE": store_url},
                          cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 1 and '"store-driver-missing"' in done.stdout, done.stdout + done.stderr
    assert "wheypoint[postgres]" in done.stdout and without_password(store_url)[1] not in done.stdout


def test_a_server_that_never_answers_is_refused_after_the_connect_timeout(wp: Runner, tmp_path: Path) -> None:
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts connections and never says a word
    try:
        url = f"postgresql://wp:hidden-pw@127.0.0.1:{silent.getsockname()[1]}/wp?connect_timeout=1"
        started = time.monotonic()
        done = wp("list", env={"WHEYPOINT_STORE": url})
        if "store-driver-missing" in done.stdout:
            return  # the pyz under a bare python: refused before connecting (the test above)
        assert done.code == 1 and done.json["error"]["code"] == "storage-error", done.stdout
        assert time.monotonic() - started < 30 and "hidden-pw" not in done.stdout + done.stderr
    finally:
        silent.close()


def test_a_writer_whose_server_goes_away_mid_write_is_refused_and_the_head_is_whole(
    store_url: str, tmp_path: Path
) -> None:
    import psycopg

    from wheypoint.store import open_store
    from wheypoint.store.postgres.backend import LOCK_BUCKETS, WORK_LOCK

    repo = make_repo(tmp_path / "shop")
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_")}
    env.update(WHEYPOINT_STORE=store_url, WHEYPOINT_HOME=str(tmp_path / "home"))
    first = subprocess.run([sys.executable, "-m", "wheypoint", *FIRST], cwd=repo, env=env, capture_output=True,
                           text=True, timeout=60, check=True)  # fmt: skip
    import json

    reply = json.loads(first.stdout)
    work_id, base = reply["work_id"], reply["revision_id"]
    holder = psycopg.connect(store_url)  # holds the work's lock, so the writer waits inside its transaction
    holder.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s) & %s)", (WORK_LOCK, work_id, LOCK_BUCKETS - 1))
    writer = subprocess.Popen([sys.executable, "-m", "wheypoint", "checkpoint", "retry-backoff", "--base", base,
                               "--decision", "Retry twice.", "--rationale", "Flaky links.", "--no-note"],
                              cwd=repo, env=env, stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        with psycopg.connect(store_url, autocommit=True) as admin:
            deadline = time.monotonic() + 30
            pids: list[tuple[int]] = []
            while not pids and time.monotonic() < deadline:
                # This test's database only: a parallel worker's writers wait on locks of their own.
                pids = admin.execute("SELECT pid FROM pg_stat_activity WHERE application_name = 'wheypoint' "
                                     "AND datname = current_database() "
                                     "AND wait_event_type = 'Lock'").fetchall()  # fmt: skip
                time.sleep(0.05)
            assert pids, "the writer never waited for the lock"
            admin.execute("SELECT pg_terminate_backend(%s)", pids[0])  # the server drops the writer's session
        out, _ = writer.communicate(timeout=60)
    finally:
        holder.rollback()
        holder.close()
        if writer.poll() is None:
            writer.kill()
    assert writer.returncode == 1 and json.loads(out)["error"]["code"] == "storage-error", out
    store = open_store(store_url, create=False)
    try:
        assert store.work(work_id).head_revision_id == base  # type: ignore[union-attr]
        assert [r["revision_id"] for r in store.revisions(work_id)] == [base]
    finally:
        store.close()
    again = subprocess.run([sys.executable, "-m", "wheypoint", "checkpoint", "retry-backoff", "--base", base,
                            "--decision", "Retry twice.", "--rationale", "Flaky links.", "--no-note"],
                           cwd=repo, env=env, capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert again.returncode == 0, again.stdout


def test_a_schema_newer_than_the_runtime_is_refused(wp: Runner, store_url: str) -> None:
    import psycopg

    assert wp(*FIRST).code == 0
    with psycopg.connect(store_url, autocommit=True) as conn:
        conn.execute("UPDATE wheypoint_schema SET version = version + 1")
    for args in (["list"], FIRST):
        done = wp(*args)
        assert done.code == 1 and done.json["error"]["code"] == "runtime-behind", done.stdout


def test_a_kept_connection_prepares_no_statement_so_each_lookup_is_planned_with_its_values(store_url: str) -> None:
    """A long-lived process's lookups by prefix and substring, run often on one kept connection, leave no prepared
    statement behind: a prepared one would get the server's generic plan, which scans every work for a LIKE."""
    from wheypoint.store import open_store
    from wheypoint.store.postgres.backend import PostgresStore

    writer = open_store(store_url, create=True)
    writer.close()
    for _ in range(12):
        store = open_store(store_url, create=False, kept=True)
        try:
            assert store.works_with_slug_prefix("retry-", None, 21) == []
            assert store.works_with_slug_part("quokka", None, 21) == []
            assert store.works_with_slug("retry-backoff", None) == []
        finally:
            store.close()
    store = open_store(store_url, create=False, kept=True)
    try:
        assert isinstance(store, PostgresStore)
        assert store._rows("SELECT count(*) FROM pg_prepared_statements", ()) == [(0,)]
    finally:
        store.close()


def test_first_openers_of_an_empty_database_migrate_it_once(store_url: str) -> None:
    from wheypoint.store import open_store
    from wheypoint.store.postgres.migrations import SCHEMA_VERSION

    errors: list[BaseException] = []

    def open_and_close() -> None:
        try:
            open_store(store_url, create=True).close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_and_close) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    import psycopg

    with psycopg.connect(store_url) as conn:
        assert conn.execute("SELECT version FROM wheypoint_schema").fetchall() == [(SCHEMA_VERSION,)]


def test_a_bulk_import_holds_a_bounded_number_of_locks(store_url: str) -> None:
    """One transaction writing 1,500 works holds at most LOCK_BUCKETS locks (a lock per work overflowed the server's
    lock table at about 12,000 works: `out of shared memory`)."""
    import psycopg

    from test_store import outcome
    from wheypoint.store import open_store
    from wheypoint.store.postgres.backend import LOCK_BUCKETS
    from wheypoint.store.rows import Write

    held: list[int] = []

    def writes() -> Iterator[Write]:
        for n in range(1500):
            yield Write(f"bulk{n}", None, f"rev-bulk{n}-1", lambda head, n=n: outcome(f"bulk{n}", 1, None))
        with psycopg.connect(store_url, autocommit=True) as watcher:
            held.append(watcher.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").fetchone()[0])

    store = open_store(store_url, create=True)
    try:
        assert store.commit_stream(writes()) == (1500, 0)
    finally:
        store.close()
    assert 0 < held[0] <= LOCK_BUCKETS and held[0] < 1500, held  # fewer locks than works


# --- the URL, without a server ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("url", "shown", "secrets"), [
    ("postgresql://ann:s3cret@db.example:5432/team", "postgresql://ann:***@db.example:5432/team", ["s3cret"]),
    ("postgresql://ann:p%40ss@db/team?password=again&sslmode=require",
     "postgresql://ann:***@db/team?password=***&sslmode=require", ["p@ss", "p%40ss", "again"]),
    ("postgres://db/team?password=x", "postgres://db/team?password=***", ["x"]),
    ("postgresql://ann@db/team", "postgresql://ann@db/team", []),
    ("postgresql://[::1/db", "postgresql://[::1/db", []),  # unparsable for urllib: still shown
    ("postgresql://a:b@c@[::1/db", "postgresql://a:***@[::1/db", ["b@c"]),
])  # fmt: skip
def test_a_url_is_shown_without_its_password(url: str, shown: str, secrets: list[str]) -> None:
    from wheypoint.store.postgres.url import redacted, scrubbed

    assert redacted(url) == shown
    message = scrubbed(f"failed for {url}: " + ", ".join(secrets), url)
    assert message.startswith(f"failed for {shown}") and not any(secret in message for secret in secrets)


@given(password=st.text(min_size=1, max_size=30).filter(lambda p: "*" not in p))
def test_no_password_survives_redaction(password: str) -> None:
    from urllib.parse import quote

    from wheypoint.store.postgres.url import passwords_of, redacted, scrubbed

    url = f"postgresql://ann:{quote(password, safe='')}@db.example:5432/team"
    assert passwords_of(url) == {password}
    assert redacted(url) == "postgresql://ann:***@db.example:5432/team"
    assert password not in scrubbed(f"could not log in to {url} with {password} ({quote(password, safe='')})", url)


def test_an_mcp_process_serves_every_call_on_one_connection_and_reconnects_when_it_is_dropped(
    store_url: str, tmp_path: Path
) -> None:
    """Reads, writes and a refused write of one `wheypoint mcp` share one server session; once the server drops
    it between two calls, the next call connects afresh and answers as before."""
    import json

    import psycopg

    repo = make_repo(tmp_path / "shop")
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_")}
    env.update(WHEYPOINT_STORE=store_url, WHEYPOINT_HOME=str(tmp_path / "home"), HOME=str(tmp_path / "user"))
    server = subprocess.Popen([sys.executable, "-m", "wheypoint", "mcp"], cwd=repo, env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    assert server.stdin is not None and server.stdout is not None
    calls = iter(range(1, 1000))

    def call(name: str, arguments: dict[str, object]) -> dict[str, object]:
        assert server.stdin is not None and server.stdout is not None
        message = {"jsonrpc": "2.0", "id": next(calls), "method": "tools/call",
                   "params": {"name": name, "arguments": arguments}}  # fmt: skip
        server.stdin.write(json.dumps(message).encode() + b"\n")
        server.stdin.flush()
        result: dict[str, object] = json.loads(server.stdout.readline())["result"]
        return result

    def sessions(admin: psycopg.Connection[tuple[int]]) -> set[int]:
        rows = admin.execute("SELECT pid FROM pg_stat_activity WHERE application_name = 'wheypoint' "
                             "AND datname = current_database()").fetchall()  # fmt: skip
        return {row[0] for row in rows}

    intent = {"slug": "retry-backoff", "orientation": "Backoff, designed.", "next": {"move": "hold"},
              "decisions": [{"text": "Cap at 30 s.", "rationale": "The gateway drops idle sockets."}]}  # fmt: skip
    seen: list[set[int]] = []
    try:
        server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).encode()
            + b"\n")  # fmt: skip
        server.stdin.flush()
        assert b"wheypoint" in server.stdout.readline()
        with psycopg.connect(store_url, autocommit=True) as admin:
            first = call("checkpoint", {"intent": intent, "no_note": True})
            assert first["isError"] is False, first
            seen.append(sessions(admin))
            base = first["structuredContent"]["revision_id"]  # type: ignore[index]
            stale = call("checkpoint", {"intent": {"slug": "retry-backoff", "base_revision_id": "r" * 64}})
            assert stale["isError"] is True
            seen.append(sessions(admin))
            reads = (("show", {"work": "retry-backoff"}), ("list", {"grep": ["backoff"]}),
                     ("log", {"work": "retry-backoff"}), ("resolve", {"ref": "retry-backoff"}))  # fmt: skip
            for name, arguments in reads:
                done = call(name, arguments)
                assert done["isError"] is False, (name, done)
                seen.append(sessions(admin))
            update = {"slug": "retry-backoff", "base_revision_id": base, "notes": "Measured on the team store."}
            assert call("checkpoint", {"intent": update, "no_note": True})["isError"] is False
            seen.append(sessions(admin))
            assert len(seen[0]) == 1 and all(s == seen[0] for s in seen), seen  # one session, kept throughout
            admin.execute("SELECT pg_terminate_backend(%s)", (next(iter(seen[0])),))
            shown = call("show", {"work": "retry-backoff"})
            assert shown["isError"] is False, shown
            assert shown["structuredContent"]["record"]["revision_number"] == 2  # type: ignore[index]
            after = sessions(admin)
            assert len(after) == 1 and after != seen[0], (after, seen[0])
        server.stdin.close()
        assert server.wait(timeout=30) == 0
    finally:
        reap(server)
