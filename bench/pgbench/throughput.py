"""The throughput part: N processes each updating a work of its own, commits per second on both backends."""

# N processes, each updating a work of its own: all must commit; commits per second (N over the time from the
# start to the last exit), SQLite's in the same run, run by run in turn.

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import benchlib as bl
from pgbench.options import listed
from pgbench.report import NAMES, median, report_head
from pgbench.server import Server
from pgbench.stores import BACKENDS, Store, close_store, consistency_problems, new_store, seed, store_state
from pgbench.together import run_together


@dataclass
class ThroughputRun:
    backend: str
    start: str
    number: int
    commits: int
    wall: float
    per_process: float  # median seconds from the start to a process's exit
    problems: list[str]

    @property
    def rate(self) -> float:
        return self.commits / self.wall


def throughput_run(venv: bl.Venv, store: Store, repo: Path, writers: int, start: str, number: int) -> ThroughputRun:
    slugs = [f"lane-{start}-{number}-{i:02d}" for i in range(writers)]
    heads = seed(venv, store, repo, slugs)
    argvs = [["checkpoint", s, "--base", heads[s], "--decision", f"{s} moves on.", "--rationale",
              "each writer owns one work"] for s in slugs]  # fmt: skip
    exits, wall = run_together(venv, argvs, store, repo, start)
    problems = [f"{e.outcome} (exit {e.code}): {json.dumps(e.reply)[:300]}" for e in exits if e.outcome != "commit"]
    state, _ = store_state(venv, store)
    acknowledged = {e.reply["revision_id"]: e.reply["slug"] for e in exits if e.outcome == "commit"}
    problems += consistency_problems({s: state[s] for s in slugs if s in state}, acknowledged)
    problems += [f"{s}: {len(state[s].chain) if s in state else 0} revisions, not 2" for s in slugs
                 if s not in state or len(state[s].chain) != 2]  # fmt: skip
    commits = sum(e.outcome == "commit" for e in exits)
    return ThroughputRun(store.backend, start, number, commits, wall, median([e.seconds for e in exits]), problems)


def run_throughput(args: argparse.Namespace, venv: bl.Venv, server: Server | None, floor: tuple[float, float]) -> tuple[
    str, bool
]:  # fmt: skip
    started = time.perf_counter()
    backends, starts = listed(args.backends), listed(args.starts)
    runs: list[ThroughputRun] = []
    with tempfile.TemporaryDirectory(prefix="wheypoint-pgthroughput-") as tmp:
        repo = Path(tmp) / bl.PROJECT
        repo.mkdir()
        bl.make_repo(repo)
        stores = {(b, s): new_store(venv, server, b, f"lanes_{s}", Path(tmp)) for b in backends for s in starts}
        try:
            # One discarded warm-up run each, then the kept runs; backends and starts in turn within each run, so
            # a drift of the machine touches all of them alike.
            for number in range(args.runs + 1):
                for start in starts:
                    for backend in backends:
                        print(f"throughput: {backend}, {start}, run {number} ...", file=sys.stderr, flush=True)
                        run = throughput_run(venv, stores[backend, start], repo, args.writers, start, number)
                        if number > 0 or run.problems:
                            runs.append(run)
        finally:
            for store in stores.values():
                close_store(venv, server, store)
    seconds = time.perf_counter() - started
    lines = [*report_head("PostgreSQL write throughput benchmark", venv, floor, server),
             f"- {args.writers} `wheypoint checkpoint` processes at once, each updating a work of its own (seeded "
             f"just before); {args.runs} kept runs after one warm-up, per backend and start; this part took "
             f"{seconds:.0f} s",
             "- commits/s: commits over the wall time from the start (the gate opening, or the first spawn) to the "
             "last exit; `gate` leaves out the processes' start-up (imports), `spawn` is whole processes", "",
             "| start | backend | runs | commits per run | median wall s | median commits/s | min-max commits/s "
             "| median s to a process's exit |",
             "|---|---|---:|---:|---:|---:|---|---:|"]  # fmt: skip
    for start in starts:
        for backend in backends:
            mine = [r for r in runs if (r.backend, r.start) == (backend, start) and r.number > 0]
            rates = [r.rate for r in mine]
            lines.append(f"| {start} | {NAMES[backend]} | {len(mine)} | {median([r.commits for r in mine]):.0f} | "
                         f"{median([r.wall for r in mine]):.2f} | {median(rates):.1f} | {min(rates):.1f}-"
                         f"{max(rates):.1f} | {median([r.per_process for r in mine]):.2f} |")  # fmt: skip
    if set(backends) == set(BACKENDS):
        lines += ["", "| start | PostgreSQL / SQLite commits/s (median of per-run ratios) |", "|---|---:|"]
        for start in starts:
            pg = {r.number: r.rate for r in runs if (r.backend, r.start) == ("postgresql", start) and r.number > 0}
            sq = {r.number: r.rate for r in runs if (r.backend, r.start) == ("sqlite", start) and r.number > 0}
            lines.append(f"| {start} | {median([pg[n] / sq[n] for n in pg if n in sq]):.2f}x |")
    lines += ["", "| start | backend | run | commits | wall s | commits/s |", "|---|---|---:|---:|---:|---:|"]
    lines += [f"| {r.start} | {NAMES[r.backend]} | {r.number} | {r.commits} | {r.wall:.2f} | {r.rate:.1f} |"
              for r in runs]  # fmt: skip
    failed = [r for r in runs if r.problems]
    lines += ["", f"**{len(runs) - len(failed)} of {len(runs)} runs committed every writer.**"]
    for r in failed:
        lines.append(f"- FAIL {NAMES[r.backend]} {r.start} run {r.number}: " + "; ".join(r.problems[:6]))
    return "\n".join(lines) + "\n", not failed
