"""The store serve_bench.py serves: N works over several projects, a share of them gated, most with revisions."""

# Built like benchlib's generated stores (the kernel's `apply` in worker processes, the store's own `commit` in
# the writer, the store opened non-durable), but shaped like a team's inbox rather than a search corpus:
# - PROJECTS projects, works spread evenly over them;
# - GATED_SHARE of the works end gated by one question (a quarter of those by two), each gate with the rationale,
#   owner, `when` and a two-option decision dossier that `serve` draws under it, and a directive with its quote;
# - HALT_SHARE end halted by a blocker that does not gate; the rest are ok;
# - every work has 1 to 4 revisions (a first checkpoint, then updates adding decisions and, for a gate, the
#   question in a later revision), captured over 60 days, so ages and the newest-first order mean something.
# Runs inside the clean venv (see serve_bench.py), so the records are written by the code being measured.

from __future__ import annotations

import os
import random
import sys
import time
from typing import Any

import benchlib as bl

BUILDER = "serve-2"  # bump when the generated records change shape
PROJECTS = ("shop", "billing", "search", "mobile", "infra")
GATED_SHARE = 0.12
HALT_SHARE = 0.05
START = 1_790_000_000  # 2026-09-21: the first capture; each work's revisions fall within the next 60 days
GREP_WORD = "tombstone"  # in the orientation of every 200th work (50 at 10,000), whichever status it has


def _when(rng: random.Random, index: int, step: int) -> str:
    seconds = START + (index * 517) % (50 * 86400) + step * rng.randint(3600, 3 * 86400)
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _gate(rng: random.Random, index: int, label: str) -> dict[str, Any]:
    return {"text": f"{bl.question_text(rng)} ({label} of {index})", "gates": True, "label": label,
            "owner": rng.choice(("payments lead", "ann", "the on-call", "release manager")),
            "when": rng.choice(("before release", "before the migration", "this week")),
            "rationale": f"{bl.sentence(rng)} {rng.choice(bl.REASONS)}."}  # fmt: skip


def _dossier(rng: random.Random, label: str) -> dict[str, Any]:
    return {"fork": f"{bl.sentence(rng)}?", "gate": label, "prior_leaning": "keep it",
            "options": [{"option": "keep it", "evidence": [f"{rng.choice(bl.FILES)}:{rng.randint(1, 400)}"],
                         "breaks": f"{rng.choice(bl.OBJECTS)}"},
                        {"option": "drop it", "evidence": [bl.sentence(rng)], "breaks": "nothing known"}]}  # fmt: skip


def intents(index: int) -> tuple[str, list[dict[str, Any]]]:
    """(project, the work's intents in order): a first checkpoint, then 0-3 updates (`work_id`/base left out)."""
    rng = random.Random(f"{BUILDER}-{index}")
    project = PROJECTS[index % len(PROJECTS)]
    roll = rng.random()
    kind = "gated" if roll < GATED_SHARE else "halt" if roll < GATED_SHARE + HALT_SHARE else "ok"
    planted = f" ({GREP_WORD} sweep)" if index % 200 == 7 else ""
    first: dict[str, Any] = {
        "slug": f"{rng.choice(bl._WORDS)}-{rng.choice(bl._WORDS)}-{index}",
        "orientation": f"{bl.sentence(rng)} {rng.choice(bl.REASONS)} (item {index}){planted}",
        "next": {"move": "hold"}, "notes": bl.notes_text(rng, index),
        "decisions": [{"text": f"{bl.sentence(rng)} (d0 of {index})", "rationale": rng.choice(bl.REASONS)}],
        "directives": [{"text": f"{bl.sentence(rng)}.", "quote": "keep the diff small"}],
        "working_context": [f"{rng.choice(bl.FILES)}:{rng.randint(1, 400)}"],
    }  # fmt: skip
    updates: list[dict[str, Any]] = []
    for number in range(rng.randint(0, 3)):
        updates.append({"decisions": [{"text": f"{bl.sentence(rng)} (d{number + 1} of {index})",
                                       "rationale": rng.choice(bl.REASONS)}],
                        "working_context": [f"{rng.choice(bl.FILES)}:{rng.randint(1, 400)}"]})  # fmt: skip
    where = updates[-1] if updates else first
    if kind == "gated":
        labels = ["cap", "owner"] if rng.random() < 0.25 else ["cap"]
        where["questions"] = [_gate(rng, index, label) for label in labels]
        where["decision_dossier"] = [_dossier(rng, label) for label in labels]
    elif kind == "halt":
        where["blockers"] = [{"text": f"Waiting on {rng.choice(bl.OBJECTS)} (b of {index})", "gates": False}]
    return project, [first, *updates]


def _prepare(task: tuple[int, int]) -> list[tuple[str, list[tuple[str | None, str, Any]]]]:
    """Per work of start..stop: (work id, [(base, revision id, outcome), ...]), built by the kernel off the writer."""
    from wheypoint.model.intake import require_valid
    from wheypoint.model.kernel import Provenance, apply, genesis_identity, request_digest, revision_id_for

    start, stop = task
    prepared = []
    for index in range(start, stop):
        project, chain = intents(index)
        rng = random.Random(f"{BUILDER}-when-{index}")
        _, work_id = genesis_identity(chain[0], project)
        head: dict[str, Any] | None = None
        writes = []
        for step, raw in enumerate(chain):
            base = head["revision_id"] if head else None
            intent = require_valid(dict(raw) if base is None else {"work_id": work_id, "base_revision_id": base, **raw})
            outcome = apply(head, intent, Provenance(project_key=project, captured_at=_when(rng, index, step)))
            writes.append((base, revision_id_for(work_id, base, request_digest(intent)), outcome))
            head = outcome.record
        prepared.append((work_id, writes))
    return prepared


def write_serve_store(size: int, store_file: str) -> None:
    """Write `size` generated works (with their revisions) into a new SQLite store, in process."""
    import multiprocessing

    from wheypoint.store.sqlite.backend import SqliteStore

    tasks = [(start, min(start + bl.CHUNK, size)) for start in range(0, size, bl.CHUNK)]
    store = SqliteStore.open(store_file, create=True, durable=False)
    started, done = time.perf_counter(), 0
    try:
        with multiprocessing.Pool(max(1, min(len(tasks), os.cpu_count() or 1))) as pool:
            for prepared in pool.imap(_prepare, tasks):
                for work_id, writes in prepared:
                    for base, candidate, outcome in writes:
                        store.commit(work_id, base, candidate, lambda head, outcome=outcome: outcome)
                done += len(prepared)
                if done % 2000 == 0 or done == size:
                    rate = done / (time.perf_counter() - started)
                    print(f"  built {done}/{size} works ({rate:.0f}/s)", file=sys.stderr, flush=True)
    finally:
        store.close()
