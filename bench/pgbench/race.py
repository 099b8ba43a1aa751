"""The race part: N `wheypoint checkpoint` processes on one base (or one new work) must make exactly one commit."""

# N (32) `wheypoint checkpoint` processes on one base of one work, per round (5). Exactly one may commit; every
# other one must be refused `stale-parent` with exit 1, and the store must then hold the work's first revision
# and the winner's, the winner's as head. Also (`--kinds first`) N processes making the same new work at once:
# one commit, every other one refused `base-revision-required`.

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import benchlib as bl
from pgbench.options import listed
from pgbench.report import NAMES, report_head
from pgbench.server import Server
from pgbench.stores import Store, close_store, consistency_problems, new_store, seed, store_state
from pgbench.together import run_together


@dataclass
class RaceRound:
    backend: str
    start: str
    kind: str  # "base": N updates of one head; "first": N first checkpoints of one new slug
    number: int
    outcomes: Counter[str]
    exit_codes: Counter[int]
    revisions: int
    head_is_winner: bool
    wall: float
    spread: float  # seconds between the first and the last exit
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


def race_round(venv: bl.Venv, store: Store, repo: Path, writers: int, start: str, kind: str, number: int) -> RaceRound:
    slug = f"race-{kind}-{start}-{number}"
    if kind == "base":
        base = seed(venv, store, repo, [slug])[slug]
        argvs = [["checkpoint", slug, "--base", base, "--decision", f"Writer {i} takes the slot.", "--rationale",
                  f"writer {i} of {writers} racing on one base"] for i in range(writers)]  # fmt: skip
        loser, stored = "stale-parent", 2
    else:
        argvs = [["checkpoint", slug, "--orientation", f"Writer {i} starts this work.", "--next", "hold", "--decision",
                  f"Writer {i} takes the slot.", "--rationale", f"writer {i} of {writers} making one new work"]
                 for i in range(writers)]  # fmt: skip
        loser, stored = "base-revision-required", 1
    exits, wall = run_together(venv, argvs, store, repo, start)
    outcomes = Counter(e.outcome for e in exits)
    codes = Counter(e.code for e in exits)
    problems = []
    if outcomes != Counter({"commit": 1, loser: writers - 1}):
        problems.append(f"outcomes {dict(outcomes)}, not 1 commit and {writers - 1} {loser}")
    for e in exits:
        if (e.outcome == "commit" and e.code != 0) or (e.outcome != "commit" and e.code != 1):
            problems.append(f"{e.outcome} exited {e.code}")
        if e.outcome not in ("commit", loser):
            problems.append(f"unexpected reply: {json.dumps(e.reply)[:300]} {e.stderr[-200:]}")
    state, _ = store_state(venv, store)
    work = state.get(slug)
    revisions = len(work.chain) if work else 0
    winners = [e.reply["revision_id"] for e in exits if e.outcome == "commit"]
    head_is_winner = bool(work) and len(winners) == 1 and work is not None and work.head == winners[0]
    if revisions != stored:
        problems.append(f"the store holds {revisions} revisions of {slug}, not {stored}")
    if not head_is_winner:
        problems.append(f"the head of {slug} is {work.head if work else None}, not the one winner's {winners}")
    problems += consistency_problems({slug: work} if work else {}, {w: slug for w in winners})
    spread = max(e.seconds for e in exits) - min(e.seconds for e in exits)
    return RaceRound(store.backend, start, kind, number, outcomes, codes, revisions, head_is_winner, wall, spread,
                     problems)  # fmt: skip


def run_race(args: argparse.Namespace, venv: bl.Venv, server: Server | None, floor: tuple[float, float]) -> tuple[
    str, bool
]:  # fmt: skip
    started = time.perf_counter()
    backends, starts, kinds = listed(args.backends), listed(args.starts), listed(args.kinds)
    rounds: list[RaceRound] = []
    with tempfile.TemporaryDirectory(prefix="wheypoint-pgrace-") as tmp:
        repo = Path(tmp) / bl.PROJECT
        repo.mkdir()
        bl.make_repo(repo)
        for backend in backends:
            for start in starts:
                store = new_store(venv, server, backend, f"race_{start}", Path(tmp))
                try:
                    for kind in kinds:
                        for number in range(1, args.rounds + 1):
                            print(f"race: {backend}, {start}, {kind}, round {number} ...", file=sys.stderr, flush=True)
                            rounds.append(race_round(venv, store, repo, args.writers, start, kind, number))
                finally:
                    close_store(venv, server, store)
    seconds = time.perf_counter() - started
    lines = [*report_head("PostgreSQL race benchmark", venv, floor, server),
             f"- {args.writers} `wheypoint checkpoint` processes per round, {args.rounds} rounds per backend, start "
             f"and kind; this part took {seconds:.0f} s",
             "- kind `base`: every process updates one work from the same base (its first revision), each with a "
             "decision of its own; expected 1 commit and the rest `stale-parent` (exit 1), 2 revisions stored, the "
             "head the winner's",
             "- kind `first`: every process makes the same new work (same slug, contents of its own); expected 1 "
             "commit and the rest `base-revision-required` (exit 1), 1 revision stored",
             "- start `gate`: pre-imported, released together; `spawn`: whole processes launched at once", "",
             "| backend | kind | start | round | commits | refused | exit codes | revisions stored | head = winner "
             "| last exit s | exits spread s | verdict |",
             "|---|---|---|---:|---:|---|---|---:|---|---:|---:|---|"]  # fmt: skip
    for r in rounds:
        refused = ", ".join(f"{n} {code}" for code, n in sorted(r.outcomes.items()) if code != "commit") or "none"
        codes = ", ".join(f"{n}x{code}" for code, n in sorted(r.exit_codes.items()))
        lines.append(f"| {NAMES[r.backend]} | {r.kind} | {r.start} | {r.number} | {r.outcomes.get('commit', 0)} | "
                     f"{refused} | {codes} | {r.revisions} | {'yes' if r.head_is_winner else 'NO'} | {r.wall:.2f} | "
                     f"{r.spread:.2f} | {'PASS' if r.ok else 'FAIL'} |")  # fmt: skip
    failed = [r for r in rounds if not r.ok]
    lines += ["", f"**{len(rounds) - len(failed)} of {len(rounds)} rounds passed.**"]
    for r in failed:
        lines.append(f"- FAIL {NAMES[r.backend]} {r.kind} {r.start} round {r.number}: " + "; ".join(r.problems[:6]))
    return "\n".join(lines) + "\n", not failed
