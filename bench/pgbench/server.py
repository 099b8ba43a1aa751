"""The PostgreSQL server a run uses (given with --url, or a throwaway one) and its databases, one per store."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import benchlib as bl

THROWAWAY = bl.ROOT / "tools" / "pg_throwaway.sh"

# Runs SQL on a PostgreSQL database: stdin is [url, [[sql, args], ...]]; prints each statement's rows as JSON.
_SQL = """
import json, sys
import psycopg
url, statements = json.load(sys.stdin)
replies = []
with psycopg.connect(url, autocommit=True) as conn:
    for sql, args in statements:
        cursor = conn.execute(sql, args or None)
        replies.append(cursor.fetchall() if cursor.description else [])
json.dump(replies, sys.stdout, default=str)
"""


@dataclass
class Server:
    """A PostgreSQL server the benchmark may create databases on."""

    url: str  # a superuser's URL, on a maintenance database
    how: str
    facts: dict[str, str]
    databases: list[str] = field(default_factory=list)  # made by this run, dropped at the end


def shown(url: str) -> str:
    """A URL without its password."""
    parts = urlsplit(url)
    if parts.password:
        parts = parts._replace(netloc=parts.netloc.replace(f":{parts.password}@", ":***@"))
    return urlunsplit(parts)


def pg_sql(venv: bl.Venv, url: str, *statements: str | tuple[str, Sequence[Any]]) -> list[list[list[Any]]]:
    """Each statement's rows, run in order on one autocommit connection by the venv's psycopg."""
    payload = json.dumps([url, [[s, []] if isinstance(s, str) else [s[0], list(s[1])] for s in statements]])
    done = subprocess.run([venv.python, "-c", _SQL], input=payload, capture_output=True, text=True, check=False,
                          cwd=tempfile.gettempdir())  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"SQL on {shown(url)} failed: {done.stderr.strip()[-800:]}")
    replies: list[list[list[Any]]] = json.loads(done.stdout)
    return replies


def server_facts(venv: bl.Venv, url: str) -> dict[str, str]:
    names = ("server_version", "fsync", "synchronous_commit", "full_page_writes", "wal_sync_method", "shared_buffers",
             "max_connections")  # fmt: skip
    rows = pg_sql(venv, url, "SELECT " + ", ".join(f"current_setting('{n}')" for n in names))[0][0]
    return dict(zip(names, map(str, rows), strict=True))


def terminate(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # unwinds through the `finally` that stops the server


@contextmanager
def postgres_server(venv: bl.Venv, url: str | None) -> Iterator[Server]:
    """The server given with --url, else a throwaway one started here (fsync on) and stopped on the way out."""
    if url:
        server = Server(url, f"given with --url ({shown(url)})", server_facts(venv, url))
        try:
            yield server
        finally:
            drop_databases(venv, server)
        return
    folder = tempfile.mkdtemp(prefix="wheypoint-pgbench-")  # under /tmp: the postgres user must reach it as root
    env = {k: v for k, v in os.environ.items() if k != "PG_FSYNC"}  # the durable default, never fsync=off
    started = time.perf_counter()
    try:
        done = subprocess.run(["bash", str(THROWAWAY), "start", folder], capture_output=True, text=True, env=env,
                              timeout=300, check=False)  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"could not start a PostgreSQL server: {done.stderr.strip()[-800:]}")
        admin = done.stdout.strip().splitlines()[-1]
        took = time.perf_counter() - started
        how = f"a throwaway server started for this run (tools/pg_throwaway.sh) in {took:.1f} s"
        print(f"PostgreSQL server at {shown(admin)}", file=sys.stderr, flush=True)
        yield Server(admin, how, server_facts(venv, admin))
    finally:
        subprocess.run(["bash", str(THROWAWAY), "stop", folder], capture_output=True, timeout=300, check=False)
        shutil.rmtree(folder, ignore_errors=True)
        print("PostgreSQL server stopped", file=sys.stderr, flush=True)


def database_url(server: Server, name: str) -> str:
    return urlunsplit(urlsplit(server.url)._replace(path=f"/{name}"))


def fresh_database(venv: bl.Venv, server: Server, label: str) -> tuple[str, str]:
    """(name, URL) of a new empty database for one store."""
    name = f"wpbench_{label}_{os.getpid()}".replace("-", "_").lower()
    pg_sql(venv, server.url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', f'CREATE DATABASE "{name}"')
    server.databases.append(name)
    return name, database_url(server, name)


def drop_database(venv: bl.Venv, server: Server, name: str) -> None:
    pg_sql(venv, server.url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    if name in server.databases:
        server.databases.remove(name)


def drop_databases(venv: bl.Venv, server: Server) -> None:
    for name in list(server.databases):
        try:
            drop_database(venv, server, name)
        except SystemExit as exc:
            print(f"could not drop {name}: {exc}", file=sys.stderr)


@contextmanager
def no_server() -> Iterator[None]:
    """Stands in for `postgres_server` when no part asked for PostgreSQL, so none is started."""
    yield None
