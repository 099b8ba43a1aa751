"""The lookups part: show, list --grep and resolve on PostgreSQL against SQLite, and how flat they stay."""

# `show`, `list --grep` and `resolve` by slug, prefix and substring at 10,000 and 100,000 works (find_bench.py's
# commands, stores and checks): whole-process time as a ratio to the same command on SQLite and to the
# interpreter baseline, and how flat PostgreSQL stays from the smaller store to the larger (target: within
# 1.5x). Beside them, two floors: the baseline plus `import psycopg`, and plus a connection. The PostgreSQL
# store is loaded the way a team would move to it (see load.py); the report says how long each step took.

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass

import benchlib as bl
import find_bench
from pgbench.load import Load, both_worlds, sized_stores
from pgbench.report import report_head
from pgbench.server import Server

FLAT_TARGET = 1.5  # PostgreSQL's ratio at the largest store within this factor of its ratio at the smallest


@dataclass
class LookupResult:
    size: int
    works: dict[str, int]
    how: str
    load: Load
    baseline: bl.Series
    floors: dict[str, bl.Series]
    series: dict[tuple[str, str], bl.Series]  # (backend, command)
    replies: dict[tuple[str, str], str]


# The floors beside the baseline: what importing the driver costs, and importing it and connecting. They end
# with os._exit, as the `wheypoint` console script does: an ordinary exit with psycopg loaded tears down for
# another 100-200 ms here, which no wheypoint command pays.
_FLOORS = {
    "+ import psycopg": "import json, os, sqlite3, psycopg; os._exit(0)",
    "+ import psycopg, connect": "import json, os, sqlite3, psycopg; "
    "psycopg.connect(os.environ['WHEYPOINT_STORE']).close(); os._exit(0)",
}


def lookup_rounds(venv: bl.Venv, worlds: dict[str, bl.World], runs: int, result: LookupResult) -> None:
    """bl.WARMUP_ROUNDS discarded rounds, then `runs` kept: the baseline, the floors, then each command on each
    backend in turn (which backend goes first alternates round by round). The first round's replies are checked."""
    steps = {backend: find_bench.steps_for(venv, world) for backend, world in worlds.items()}
    pg_env = worlds["postgresql"].env
    names = [step.name for step in steps["postgresql"]]
    for round_number in range(bl.WARMUP_ROUNDS + runs):
        keep = round_number >= bl.WARMUP_ROUNDS
        elapsed, _ = bl.timed(venv.baseline(), pg_env, worlds["postgresql"].repo)
        if keep:
            result.baseline.times.append(elapsed)
        for label, code in _FLOORS.items():
            elapsed, _ = bl.timed([venv.python, "-c", code], pg_env, worlds["postgresql"].repo)
            if keep:
                result.floors[label].times.append(elapsed)
        order = list(worlds) if round_number % 2 == 0 else list(reversed(worlds))
        for index, name in enumerate(names):
            for backend in order:
                step, world = steps[backend][index], worlds[backend]
                elapsed, out = bl.timed(step.argv(round_number), world.env, world.repo)
                if round_number == 0:
                    reply = json.loads(out)
                    if reply.get("ok") is not True:
                        raise SystemExit(f"{backend} {name}: not ok: {out[:600]}")
                    result.replies[backend, name] = step.check(reply)
                if keep:
                    result.series.setdefault((backend, name), bl.Series(name)).times.append(elapsed)


def run_lookups(args: argparse.Namespace, venv: bl.Venv, server: Server | None, floor: tuple[float, float]) -> tuple[
    str, bool
]:  # fmt: skip
    started = time.perf_counter()
    server, sizes, sources = sized_stores(args, venv, server, "lookups")
    results: list[LookupResult] = []
    for size in sizes:
        source, how = sources[size]
        part_started = time.perf_counter()
        with both_worlds(venv, server, size, source, args, "lookups") as (worlds, load):
            result = LookupResult(size, {b: w.works for b, w in worlds.items()}, how, load, bl.Series("baseline"),
                                  {label: bl.Series(label) for label in _FLOORS}, {}, {})  # fmt: skip
            lookup_rounds(venv, worlds, args.runs, result)
            results.append(result)
        print(f"  {size:,} works took {time.perf_counter() - part_started:.0f} s", file=sys.stderr, flush=True)
    # An import that failed is the backend's failure, even when the batched copy let the lookups be measured.
    ok = not any(r.load.import_error for r in results)
    return lookup_report(args, venv, floor, server, results, time.perf_counter() - started), ok


def lookup_report(args: argparse.Namespace, venv: bl.Venv, floor: tuple[float, float], server: Server,
                  results: list[LookupResult], seconds: float) -> str:  # fmt: skip
    lines = [*report_head("PostgreSQL lookup benchmark", venv, floor, server),
             f"- rounds per size: {args.runs} kept after {bl.WARMUP_ROUNDS} warm-up rounds; each round runs the "
             "baseline, the two floors, then each command on SQLite and on PostgreSQL back to back (which goes first "
             f"alternates); the first round's replies are checked (find_bench.py's checks); this part took "
             f"{seconds:.0f} s",
             "- SQLite stores: " + "; ".join(f"{r.size:,}: {r.how}" for r in results),
             "- PostgreSQL stores: `wheypoint export --all` of the SQLite store, `wheypoint import` into a new "
             "database (when that fails, or with --loader batched: benchlib.copy_store_in_batches, the store API's "
             "commit_stream 5,000 works a transaction), VACUUM ANALYZE, then the three target works checkpointed by "
             "the CLI", "",
             "| works | export s | bundle MB | `wheypoint import` s | batched copy s | VACUUM ANALYZE s "
             "| database size |",
             "|---:|---:|---:|---|---:|---:|---:|"]  # fmt: skip
    for r in results:
        loaded = f"FAILED after {r.load.import_s:.1f}" if r.load.import_error else f"{r.load.import_s:.1f}"
        loaded = loaded if r.load.import_s else "-"
        batched = f"{r.load.batched_s:.1f}" if r.load.batched_s else "-"
        lines.append(f"| {r.works['postgresql']:,} | {r.load.export_s:.1f} | {r.load.bundle_mb:.0f} | {loaded} | "
                     f"{batched} | {r.load.analyze_s:.1f} | {r.load.database} |")  # fmt: skip
    lines += [f"- **`wheypoint import` of {r.size:,} works into PostgreSQL failed** ({r.load.import_error}); the "
              f"store was loaded by the batched copy instead ({args.loader})"
              for r in results if r.load.import_error]  # fmt: skip
    lines += ["", "Ratios: the median of per-round ratios, then the ratio of medians in brackets.", "",
              "| works | command | SQLite ms | PostgreSQL ms | SQLite / baseline | PostgreSQL / baseline "
              "| PostgreSQL / SQLite | replies (SQLite; PostgreSQL) |",
              "|---:|---|---:|---:|---:|---:|---:|---|"]  # fmt: skip
    for r in results:
        base = r.baseline
        lines.append(f"| {r.works['postgresql']:,} | baseline `python -c '{bl.BASELINE_CODE}'` | | {base.median():.1f} "
                     "| | 1.00x | | |")  # fmt: skip
        for label, series in r.floors.items():
            lines.append(f"| {r.works['postgresql']:,} | baseline {label} | | {series.median():.1f} | | "
                         f"{series.cell(base)} | | |")  # fmt: skip
        for name in dict.fromkeys(n for _, n in r.series):
            sq, pg = r.series["sqlite", name], r.series["postgresql", name]
            lines.append(f"| {r.works['postgresql']:,} | {name} | {sq.median():.1f} | {pg.median():.1f} | "
                         f"{sq.cell(base)} | {pg.cell(base)} | {pg.cell(sq)} | {r.replies['sqlite', name]}; "
                         f"{r.replies['postgresql', name]} |")  # fmt: skip
    if len(results) > 1:
        small, large = results[0], results[-1]
        lines += ["", f"## Flatness, {large.size:,} over {small.size:,} works", "",
                  "Each command's ratio to the baseline at the larger store over its ratio at the smaller (a ratio of "
                  "ratios, so a drift of the machine between the two cancels); the ratio of median ms beside it.", "",
                  "| command | PostgreSQL | target | verdict | SQLite |", "|---|---:|---:|---|---:|"]  # fmt: skip
        for name in dict.fromkeys(n for _, n in large.series):
            cells = []
            for backend in ("postgresql", "sqlite"):
                big, one = large.series[backend, name], small.series[backend, name]
                value = big.paired(large.baseline) / one.paired(small.baseline)
                cells.append((value, f"{value:.2f}x (raw ms {big.median() / one.median():.2f}x)"))
            lines.append(f"| {name} | {cells[0][1]} | <= {FLAT_TARGET}x | {bl.verdict(cells[0][0], FLAT_TARGET)} | "
                         f"{cells[1][1]} |")  # fmt: skip
    return "\n".join(lines) + "\n"
