"""Loads a generated SQLite store into a new PostgreSQL database as a team would move: export, import, ANALYZE."""

# The way a team would move to PostgreSQL: `wheypoint export --all` of the generated SQLite store, `wheypoint
# import` into an empty database, then VACUUM ANALYZE (what autovacuum does by itself a minute later), so the
# lookups are timed on a store as a team would have it; the report says how long each step took.

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import benchlib as bl
from pgbench.server import Server, drop_database, fresh_database, pg_sql
from pgbench.together import reply_of


@dataclass
class Load:
    """How the PostgreSQL copy of a generated store was made."""

    export_s: float = 0.0
    import_s: float = 0.0
    import_error: str = ""  # why `wheypoint import` failed, when it did
    batched_s: float = 0.0  # the batched copy through the store API, when it was used
    analyze_s: float = 0.0
    bundle_mb: float = 0.0
    database: str = ""  # its size as PostgreSQL reports it


_BATCHED = "import sys; sys.path.insert(0, sys.argv[1]); import benchlib; benchlib.copy_store_in_batches(*sys.argv[2:])"


def postgres_world(venv: bl.Venv, server: Server, size: int, source: Path | None, root: Path,
                   args: argparse.Namespace) -> tuple[bl.World, str, Load]:  # fmt: skip
    """The scratch world of a PostgreSQL store: the generated works loaded, then the targets checkpointed.

    The load is `wheypoint export --all` and `wheypoint import` (--loader import); with --loader auto (the
    default), an import that fails is reported and the works are copied through the store API instead, 5,000
    works a transaction (--loader batched: that copy alone).
    """
    home, repo = root / "home", root / bl.PROJECT
    for folder in (home, repo):
        folder.mkdir(parents=True)
    bl.make_repo(repo)
    name, url = fresh_database(venv, server, f"lookups_{size}")
    env = bl.bench_env(home)
    env["WHEYPOINT_STORE"] = url
    load = Load()
    if source is not None and args.loader != "batched":
        exported = root / "exported"
        exported.mkdir()
        shutil.copyfile(source, exported / "store.sqlite3")
        bundle = root / "all.bundle.json"
        print(f"lookups: exporting {size:,} works ...", file=sys.stderr, flush=True)
        seconds, out = bl.timed([venv.wheypoint, "export", "--all", "--out", str(bundle)], bl.bench_env(exported), repo)
        load.export_s, load.bundle_mb = seconds / 1000, bundle.stat().st_size / 1e6
        if json.loads(out)["works"] != size:
            raise SystemExit(f"export --all wrote {json.loads(out)['works']} works, not {size}")
        shutil.rmtree(exported)
        print(f"lookups: importing {size:,} works into PostgreSQL ...", file=sys.stderr, flush=True)
        started = time.perf_counter()
        done = subprocess.run([venv.wheypoint, "import", str(bundle), "--no-note"], env=env, cwd=repo,
                              capture_output=True, timeout=args.load_timeout, check=False)  # fmt: skip
        load.import_s = time.perf_counter() - started
        reply = reply_of(done.stdout, done.stderr)
        bundle.unlink()
        if done.returncode != 0 or reply.get("written") != size:
            load.import_error = f"exit {done.returncode}: {json.dumps(reply)[:600]}"
            print(f"  the import failed after {load.import_s:.0f} s: {load.import_error}", file=sys.stderr, flush=True)
            if args.loader == "import":
                raise SystemExit(f"import into PostgreSQL: {load.import_error}")
        else:
            print(f"  imported in {load.import_s:.0f} s", file=sys.stderr, flush=True)
    if source is not None and (args.loader == "batched" or load.import_error):
        print(f"lookups: copying {size:,} works into PostgreSQL in batches ...", file=sys.stderr, flush=True)
        started = time.perf_counter()
        subprocess.run([venv.python, "-c", _BATCHED, str(bl.BENCH_DIR), str(source), url], env=env, cwd=repo,
                       check=True, timeout=args.load_timeout)  # fmt: skip
        load.batched_s = time.perf_counter() - started
    if source is not None:
        started = time.perf_counter()
        pg_sql(venv, url, "VACUUM ANALYZE")
        load.analyze_s = time.perf_counter() - started
    world = bl.World(home, repo, env, {}, root / "session.jsonl", 0, 0, 0)
    bl.add_targets(venv, world)
    count, where = pg_sql(venv, url, "SELECT count(*) FROM works",
                          "SELECT pg_size_pretty(pg_database_size(current_database()))")  # fmt: skip
    load.database = str(where[0][0])
    world.works = int(count[0][0])
    generated = world.works - len(bl.TARGETS_WORKS)
    world.grep_hits = len(bl.grep_indices(generated)) + 1 if generated else 1
    return world, name, load


def sized_stores(args: argparse.Namespace, venv: bl.Venv, server: Server | None, part: str
                 ) -> tuple[Server, list[int], dict[int, tuple[Path | None, str]]]:  # fmt: skip
    """The server a part needs, the sizes `--sizes` asks for, and the generated SQLite store of each, built or
    cached before any timing."""
    from pgbench.options import listed

    if server is None:
        raise SystemExit(f"{part} needs a PostgreSQL server")
    sizes = [int(s.replace("_", "")) for s in listed(args.sizes)]
    return server, sizes, bl.stores_for(sizes, venv)


@contextmanager
def both_worlds(venv: bl.Venv, server: Server, size: int, source: Path | None, args: argparse.Namespace,
                part: str) -> Iterator[tuple[dict[str, bl.World], Load]]:  # fmt: skip
    """The SQLite world and the PostgreSQL world of one generated store, in a scratch folder, holding the same
    works (checked); the PostgreSQL database is dropped on the way out."""
    with tempfile.TemporaryDirectory(prefix=f"wheypoint-pg{part}-") as tmp:
        root = Path(tmp)
        (root / "sqlite").mkdir()
        sq_world = bl.make_world(root / "sqlite", venv, source)
        pg_world, database, load = postgres_world(venv, server, size, source, root / "postgresql", args)
        try:
            if sq_world.works != pg_world.works:
                raise SystemExit(f"SQLite holds {sq_world.works} works, PostgreSQL {pg_world.works}")
            print(f"{part}: measuring {size:,} works ...", file=sys.stderr, flush=True)
            yield {"sqlite": sq_world, "postgresql": pg_world}, load
        finally:
            drop_database(venv, server, database)
