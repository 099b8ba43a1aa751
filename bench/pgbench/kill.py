"""The kill part: SIGKILL a writer inside its write transaction, then check that nothing acknowledged was lost."""

# A writer commits in a loop, one connection per `checkpoint` as the command line does, and is killed with
# SIGKILL inside its write transaction, `--rounds` (200) times. The writer notes where it is in a shared byte
# (set inside the transaction before the first statement of the commit, again once its rows are written and
# COMMIT is about to be sent, cleared when the transaction returns), so each kill is aimed at one of the two
# and the report says where each writer really died. After every kill the store is read directly (SQL, not the
# CLI): every revision a writer printed as acknowledged must be there, each work's revisions must run 1..n with
# each parent the previous one, and each head must be its highest revision. A writer killed before COMMIT was
# sent must have left nothing.

from __future__ import annotations

import argparse
import json
import mmap
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import benchlib as bl
from pgbench.options import listed
from pgbench.report import NAMES, median, report_head
from pgbench.server import Server
from pgbench.stores import Store, close_store, consistency_problems, new_store, seed, store_state

# The writer the kill part kills: checkpoints its works in turn through the CLI's entry point (each one opens
# and closes its own connection, as a `wheypoint checkpoint` process does), printing `ack <slug> <revision>
# <number>` once a checkpoint has replied ok. The shared byte in argv[1] says where it is: 1 inside the write
# transaction, before the commit's first statement; 2 once the revision's rows are written (COMMIT about to
# be sent or on its way); 0 when the transaction has returned. Bounded: 120 s or 5,000 writes.
_WRITER = """
import json, mmap, os, sys, time
flag_file, label, slugs = sys.argv[1], sys.argv[2], sys.argv[3:]
from wheypoint.cli.main import answer
from wheypoint.store.sql import SqlStore
if os.environ.get("WHEYPOINT_STORE", "").startswith("postgres"):
    from wheypoint.store.postgres.backend import PostgresStore as Backend
else:
    from wheypoint.store.sqlite.backend import SqliteStore as Backend
with open(flag_file, "r+b") as handle:
    flag = mmap.mmap(handle.fileno(), 1)

def say(*words):
    os.write(1, (" ".join(str(w) for w in words) + "\\n").encode())

commit_locked, transaction = SqlStore._commit_locked, Backend._transaction

def traced_commit(self, write):
    say("txn", write.candidate_revision_id)
    flag[0] = 1
    done = commit_locked(self, write)
    flag[0] = 2
    return done

def traced_transaction(self, work_ids, body):
    try:
        return transaction(self, work_ids, body)
    finally:
        flag[0] = 0

SqlStore._commit_locked = traced_commit
Backend._transaction = traced_transaction

def head(slug):
    code, out = answer(["show", slug])
    reply = json.loads(out)
    if not reply.get("ok"):
        say("error", slug, out.replace("\\n", " ")[:300])
        sys.exit(3)
    return reply["record"]["revision_id"]

heads = {slug: head(slug) for slug in slugs}
say("ready")
deadline, n = time.monotonic() + 120, 0
while time.monotonic() < deadline and n < 5000:
    slug = slugs[n % len(slugs)]
    code, out = answer(["checkpoint", slug, "--base", heads[slug], "--orientation", f"{label}, write {n}.",
                        "--no-note"])
    reply = json.loads(out)
    if reply.get("ok"):
        heads[slug] = reply["revision_id"]
        say("ack", slug, reply["revision_id"], reply["revision_number"])
    else:
        say("refused", slug, reply["error"]["code"])
        if reply["error"]["code"] == "stale-parent":
            heads[slug] = head(slug)
        else:
            time.sleep(0.05)
    n += 1
"""


@dataclass
class KillRound:
    number: int
    aimed: int  # the phase the kill waited for (1 or 2)
    died_in: int  # where the writer was when it died (0 outside a transaction, 1, 2)
    acks: int
    in_flight: str  # "committed", "absent" or "none" (no commit was under way)
    refusals: Counter[str]
    first_ack_s: float
    lingering: int
    problems: list[str]


def kill_round(venv: bl.Venv, store: Store, repo: Path, slugs: Sequence[str], flag_file: Path, rng: random.Random,
               number: int, acknowledged: dict[str, str]) -> KillRound:  # fmt: skip
    """Start a writer, let it acknowledge 1-3 writes, kill it at the aimed point, then check the store."""
    flag_file.write_bytes(b"\0")
    with flag_file.open("r+b") as handle:
        flag = mmap.mmap(handle.fileno(), 1)
    started = time.perf_counter()
    proc = subprocess.Popen([venv.python, "-c", _WRITER, str(flag_file), f"kill round {number}", *slugs],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=store.env, cwd=repo)  # fmt: skip
    want, aimed = rng.randint(1, 3), rng.choice((1, 2))
    lines: list[str] = []
    seen = threading.Condition()
    first_ack: list[float] = []

    def read() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            with seen:
                lines.append(raw.decode(errors="replace").strip())
                if lines[-1].startswith("ack ") and not first_ack:
                    first_ack.append(time.perf_counter() - started)
                seen.notify_all()

    reader = threading.Thread(target=read)
    reader.start()
    problems: list[str] = []
    with seen:
        ready = seen.wait_for(lambda: sum(x.startswith("ack ") for x in lines) >= want or proc.poll() is not None, 60)
    if not ready or proc.poll() is not None:
        problems.append(f"the writer did not acknowledge {want} writes within 60 s (exit {proc.poll()})")
    deadline = time.perf_counter() + 10
    while flag[0] != aimed and proc.poll() is None and time.perf_counter() < deadline:
        time.sleep(0.0001)
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    reader.join()
    assert proc.stderr is not None
    stderr = proc.stderr.read().decode(errors="replace").strip()
    proc.stderr.close()
    died_in = flag[0]
    flag.close()
    if proc.returncode != -signal.SIGKILL:
        problems.append(f"the writer ended by itself (exit {proc.returncode}): {stderr[-400:]}")
    pending: str | None = None
    refusals: Counter[str] = Counter()
    acks = 0
    for line in lines:
        kind, *words = line.split()
        if kind == "txn":
            pending = words[0]
        elif kind == "ack":
            acknowledged[words[1]] = words[0]
            acks += 1
            pending = None
        elif kind == "refused":
            refusals[words[1]] += 1
            pending = None
        elif kind == "error":
            problems.append(f"the writer failed: {line[:300]}")
    state, lingering = store_state(venv, store)
    problems += consistency_problems(state, acknowledged)
    stored = {revision for work in state.values() for _, revision, _ in work.chain}
    in_flight = "none" if pending is None else ("committed" if pending in stored else "absent")
    if died_in == 1 and in_flight == "committed":
        problems.append(f"{pending} is in the store though its writer died before COMMIT was sent")
    for code in refusals:
        if code != "stale-parent":
            problems.append(f"the writer was refused {code} {refusals[code]} time(s)")
    return KillRound(number, aimed, died_in, acks, in_flight, refusals, first_ack[0] if first_ack else float("nan"),
                     lingering, problems)  # fmt: skip


def kill_backend(venv: bl.Venv, server: Server | None, backend: str, rounds: int, works: int, tmp: Path,
                 seed_value: int) -> tuple[list[KillRound], list[str], int]:  # fmt: skip
    """`rounds` kills on one store; answers the rounds, the final checks' problems and the acknowledged count."""
    repo = tmp / f"{bl.PROJECT}-{backend}" / bl.PROJECT
    repo.mkdir(parents=True)
    bl.make_repo(repo)
    store = new_store(venv, server, backend, "kill", tmp)
    rng = random.Random(seed_value)
    acknowledged: dict[str, str] = {}
    results: list[KillRound] = []
    try:
        slugs = [f"killed-writer-{i}" for i in range(works)]
        acknowledged.update({revision: slug for slug, revision in seed(venv, store, repo, slugs).items()})
        for number in range(1, rounds + 1):
            result = kill_round(venv, store, repo, slugs, tmp / f"flag-{backend}", rng, number, acknowledged)
            results.append(result)
            if number % 20 == 0 or result.problems:
                bad = sum(bool(r.problems) for r in results)
                print(f"kill: {backend}, round {number}/{rounds}: {len(acknowledged)} acknowledged, {bad} bad rounds",
                      file=sys.stderr, flush=True)  # fmt: skip
        # At the end, the heads as the CLI shows them must be the store's highest revisions too.
        state, _ = store_state(venv, store)
        final = consistency_problems(state, acknowledged)
        for slug in slugs:
            _, out = bl.timed([venv.wheypoint, "show", slug], store.env, repo)
            head = json.loads(out)["record"]["revision_id"]
            if head != state[slug].chain[-1][1]:
                final.append(f"`wheypoint show {slug}` answers head {head}, not {state[slug].chain[-1][1]}")
    finally:
        close_store(venv, server, store)
    return results, final, len(acknowledged)


def run_kill(args: argparse.Namespace, venv: bl.Venv, server: Server | None, floor: tuple[float, float]) -> tuple[
    str, bool
]:  # fmt: skip
    started = time.perf_counter()
    backends = listed(args.backends)
    lines = [*report_head("PostgreSQL kill -9 benchmark", venv, floor, server)]
    rows: list[str] = []
    details: list[str] = []
    ok = True
    with tempfile.TemporaryDirectory(prefix="wheypoint-pgkill-") as tmp:
        for backend in backends:
            part_started = time.perf_counter()
            rounds, final, total = kill_backend(venv, server, backend, args.rounds, args.works, Path(tmp), args.seed)
            took = time.perf_counter() - part_started
            died = Counter(r.died_in for r in rounds)
            flight = Counter((r.died_in, r.in_flight) for r in rounds)
            refused = sum((r.refusals for r in rounds), Counter())
            bad = [r for r in rounds if r.problems]
            ok = ok and not bad and not final
            firsts = [r.first_ack_s for r in rounds if r.first_ack_s == r.first_ack_s]
            rows.append(f"| {NAMES[backend]} | {len(rounds)} | {total:,} | {len(bad)} | {len(final)} | {died[1]} "
                        f"({flight[1, 'committed']} / {flight[1, 'absent']}) | {died[2]} ({flight[2, 'committed']} / "
                        f"{flight[2, 'absent']}) | {died[0]} | {refused.get('stale-parent', 0)} | "
                        f"{sum(v for k, v in refused.items() if k != 'stale-parent')} | {median(firsts):.2f} / "
                        f"{max(firsts, default=float('nan')):.2f} | {max((r.lingering for r in rounds), default=0)} | "
                        f"{took:.0f} |")  # fmt: skip
            for r in bad[:20]:
                said = "; ".join(r.problems[:5])
                details.append(f"- {NAMES[backend]} round {r.number} (died at {r.died_in}): {said}")
            details += [f"- {NAMES[backend]} final check: {p}" for p in final[:20]]
    lines += [f"- {args.rounds} rounds per backend on one store of {args.works} works; each round a new writer "
              "acknowledges 1-3 writes, then is killed (SIGKILL) once it reaches the aimed point: 1 = inside the "
              "write transaction before the commit's first statement, 2 = the revision's rows written, COMMIT about "
              f"to be sent or on its way (chosen at random, seed {args.seed}); this part took "
              f"{time.perf_counter() - started:.0f} s",
              "- after every kill the store is read with SQL: every acknowledged revision present, each work's "
              "revisions 1..n with each parent the previous one, each head its highest revision; a writer killed at 1 "
              "must have left nothing; at the end each head is also read with `wheypoint show`",
              "- died at 1 / at 2: where the writer really was when it died, (its unacknowledged revision committed / "
              "absent); died outside: between transactions", "",
              "| backend | rounds | acknowledged revisions | bad rounds | final check problems | died at 1 "
              "(committed / absent) | died at 2 (committed / absent) | died outside | stale-parent re-reads "
              "| other refusals | s to first ack (median / max) | wheypoint sessions seen after a kill (max) | s |",
              "|---|---:|---:|---:|---:|---|---|---:|---:|---:|---|---:|---:|", *rows, ""]  # fmt: skip
    verdict = "PASS: no acknowledged revision lost, every head its work's highest revision, nothing committed by " \
        "a writer killed before COMMIT." if ok else "FAIL: see below."  # fmt: skip
    lines += [f"**{verdict}**", *details]
    return "\n".join(lines) + "\n", ok
