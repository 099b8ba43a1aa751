"""One store under measurement, on either backend: made, seeded, read back with SQL and checked."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import benchlib as bl
from pgbench.server import Server, drop_database, fresh_database, pg_sql

BACKENDS = ("postgresql", "sqlite")

# First checkpoints of the works named, through the CLI's own entry point, in one process; prints {slug: head}.
_SEED = """
import json, sys
from wheypoint.cli.main import answer
heads = {}
for slug in sys.argv[1:]:
    code, out = answer(["checkpoint", slug, "--orientation", f"{slug}: seeded by the benchmark.", "--next", "hold",
                        "--decision", f"Start {slug}.", "--rationale", "a head for the writers to build on",
                        "--no-note"])
    reply = json.loads(out)
    if code != 0 or not reply.get("ok"):
        sys.exit(f"seeding {slug} refused: {out}")
    heads[slug] = reply["revision_id"]
print(json.dumps(heads))
"""


@dataclass
class Store:
    """One store under measurement: its backend, where it is, and the environment its commands run with."""

    backend: str
    location: str  # a database URL, or the SQLite file
    env: dict[str, str]
    database: str | None = None


def new_store(venv: bl.Venv, server: Server | None, backend: str, label: str, tmp: Path) -> Store:
    """An empty store: a fresh database (PostgreSQL, named by WHEYPOINT_STORE) or a fresh WHEYPOINT_HOME."""
    home = tmp / f"home-{backend}-{label}"
    home.mkdir()
    env = bl.bench_env(home)
    if backend == "sqlite":
        return Store(backend, str(home / "store.sqlite3"), env)
    if server is None:
        raise SystemExit("a PostgreSQL store needs a server")
    name, url = fresh_database(venv, server, label)
    env["WHEYPOINT_STORE"] = url
    return Store(backend, url, env, name)


def close_store(venv: bl.Venv, server: Server | None, store: Store) -> None:
    if store.database is not None and server is not None:
        drop_database(venv, server, store.database)


def seed(venv: bl.Venv, store: Store, repo: Path, slugs: Sequence[str]) -> dict[str, str]:
    """First checkpoints of `slugs` (one process, through the CLI's entry point): {slug: head revision}."""
    done = subprocess.run([venv.python, "-c", _SEED, *slugs], env=store.env, cwd=repo, capture_output=True, text=True,
                          check=False)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"seeding the {store.backend} store failed: {done.stderr.strip()[-800:]}")
    heads: dict[str, str] = json.loads(done.stdout)
    return heads


@dataclass
class WorkState:
    """A work as the store holds it: its head pointer and its revisions, oldest first."""

    head: str
    head_number: int
    chain: list[tuple[int, str, str | None]]  # (number, revision id, parent revision id)


_STATE_SQL = ("SELECT w.slug, w.head_revision_id, w.head_number, r.number, r.revision_id, r.parent_revision_id "
              "FROM works w JOIN revisions r ON r.work_id = w.work_id ORDER BY w.slug, r.number")  # fmt: skip
_LINGERING_SQL = ("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'wheypoint' "
                  "AND datname = current_database()")  # fmt: skip


def store_state(venv: bl.Venv, store: Store) -> tuple[dict[str, WorkState], int]:
    """Every work's head and revisions, read with SQL (not through wheypoint); and, on PostgreSQL, how many
    sessions of wheypoint's are still connected to the database (none should be, between commands)."""
    if store.backend == "sqlite":
        conn = sqlite3.connect(store.location)
        try:
            rows = conn.execute(_STATE_SQL).fetchall()
        finally:
            conn.close()
        lingering = 0
    else:
        rows, count = pg_sql(venv, store.location, _STATE_SQL, _LINGERING_SQL)
        lingering = int(count[0][0])
    state: dict[str, WorkState] = {}
    for slug, head, head_number, number, revision, parent in rows:
        state.setdefault(slug, WorkState(head, int(head_number), [])).chain.append((int(number), revision, parent))
    return state, lingering


def consistency_problems(state: dict[str, WorkState], acknowledged: dict[str, str]) -> list[str]:
    """What is wrong with the store: an acknowledged revision missing, a broken chain, a head not the highest."""
    problems = []
    for slug, work in state.items():
        numbers = [number for number, _, _ in work.chain]
        if numbers != list(range(1, len(numbers) + 1)):
            problems.append(f"{slug}: revision numbers {numbers[:8]} do not run 1..{len(numbers)}")
        for (number, revision, parent), before in zip(work.chain, [None, *work.chain[:-1]], strict=True):
            expected = before[1] if before else None
            if parent != expected:
                problems.append(f"{slug}: revision {number} {revision} has parent {parent}, not {expected}")
        number, revision, _ = work.chain[-1]
        if (work.head, work.head_number) != (revision, number):
            problems.append(f"{slug}: the head is {work.head} (#{work.head_number}), not its highest revision "
                            f"{revision} (#{number})")  # fmt: skip
    where = {revision: slug for slug, work in state.items() for _, revision, _ in work.chain}
    for revision, slug in acknowledged.items():
        if where.get(revision) != slug:
            problems.append(f"acknowledged revision {revision} of {slug} is not in the store")
    return problems
