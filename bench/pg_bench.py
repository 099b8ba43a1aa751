"""The PostgreSQL team store against the SQLite file: races, write throughput, lookups, tool calls, kill -9."""

# Five parts, each a subcommand (`all` runs them in turn, on one server), each in a module of bench/pgbench/
# that says at its top what it checks: race.py (N writers on one base: exactly one commit), throughput.py (N
# writers on N works: commits per second), lookups.py (show, list --grep, resolve at 10,000 and 100,000 works),
# calls.py (the same and a write as tool calls of a long-lived `wheypoint mcp`, once connected) and kill.py
# (kill -9 mid-transaction: nothing acknowledged lost).
#
# How. Every process runs in a clean venv holding a real install of `wheypoint[postgres]` (benchlib's
# `ensure_venv_with("postgres")`: `python -m venv`, the project and then its `postgres` extra, psycopg from the
# index), as `<venv>/bin/wheypoint ...` in a scratch git checkout named `bench`. Unless `--url` names a server
# (a superuser's URL), a throwaway PostgreSQL server is started for the run (tools/pg_throwaway.sh, default
# durable settings: fsync on, synchronous_commit on, like SQLite's synchronous=FULL) and stopped at the end,
# also on failure or SIGTERM. Every store is a database of its own (CREATE DATABASE), dropped after use; the
# SQLite store is a file in a scratch WHEYPOINT_HOME. N processes start gated or spawned (see together.py).
#
# Reproduce (from the checkout's root; on a busy 2-CPU machine race took 6 minutes, throughput 3, kill 4 (both
# backends), lookups 12, half of it loading the 100,000 works into PostgreSQL; building the generated SQLite
# stores first, when they are not cached, adds about 5 minutes):
#
#     python3 bench/pg_bench.py all
#     python3 bench/pg_bench.py race [--rounds 5] [--writers 32] [--starts gate,spawn] [--kinds base,first]
#     python3 bench/pg_bench.py throughput [--runs 5] [--writers 32]
#     python3 bench/pg_bench.py lookups [--sizes 10000,100000] [--runs 20]
#     python3 bench/pg_bench.py calls [--sizes 10000] [--runs 20]
#     python3 bench/pg_bench.py kill [--rounds 200] [--backends postgresql,sqlite]
#     python3 bench/pg_bench.py race --url postgresql://USER:PASSWORD@HOST:PORT/postgres   # an existing server
#
# Reports are printed and written to bench/results/pg-<part>.md. The exit status is 1 when any check failed (a
# race with other than one commit, a lost revision, a head that is not its work's highest revision, an
# unexpected refusal, a `wheypoint import` that failed), so the figures of a wrong backend are never quoted as a
# pass.

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Sequence

import benchlib as bl
from pgbench.calls import run_calls
from pgbench.kill import run_kill
from pgbench.lookups import run_lookups
from pgbench.options import PART_NAMES, defaults_of, listed, parse_args
from pgbench.race import run_race
from pgbench.server import no_server, postgres_server, terminate
from pgbench.throughput import run_throughput


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv, (__doc__ or "").splitlines()[0])
    started = time.perf_counter()
    signal.signal(signal.SIGTERM, terminate)
    venv = bl.ensure_venv_with("postgres")
    print(f"interpreter {venv.base} (Python {venv.facts['python']}), venv {venv.path}, git HEAD {bl.git_head()}",
          flush=True)  # fmt: skip
    floor = bl.floors(venv)
    runners = {"race": run_race, "throughput": run_throughput, "lookups": run_lookups, "calls": run_calls,
               "kill": run_kill}  # fmt: skip
    todo = [(p, defaults_of(p)) for p in PART_NAMES] if args.part == "all" else [(args.part, args)]
    needs_server = any(p in ("lookups", "calls") or "postgresql" in listed(getattr(a, "backends", "")) for p, a in todo)
    all_ok = True
    with postgres_server(venv, args.url) if needs_server else no_server() as server:
        for name, part_args in todo:
            part_started = time.perf_counter()
            text, ok = runners[name](part_args, venv, server, floor)
            all_ok = all_ok and ok
            bl.publish(text, getattr(args, "out", None), f"pg-{name}")
            print(f"{name} took {time.perf_counter() - part_started:.0f} s", file=sys.stderr, flush=True)
    print(f"wall time {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
