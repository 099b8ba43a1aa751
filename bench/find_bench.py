"""Wall time of wheypoint show, list --grep and resolve (slug, prefix, substring) by store size, as baseline ratios."""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import benchlib as bl

BUILDER_VERSION = "find-1"  # bump when the generated records change shape
CAPTURED_AT = "2026-11-30T00:00:00Z"
CHUNK = 500  # records a build worker prepares per task

# Targets from the issue: ratios to the `-c "import json, sqlite3"` baseline, and flatness in store size.
SHOW_TARGET = 1.5
LIST_TARGET = 1.5
RESOLVE_TARGET = 2.0
FLAT_TARGET = 1.5

# Slug words. None starts with "zephyr" or contains "quokka", so the targets below are the only matches.
_WORDS = ("amber", "birch", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper", "kelp",
          "lantern", "meadow", "nickel", "onyx", "pepper", "quartz", "raven", "saffron", "tundra", "umber",
          "velvet", "willow", "xenon", "yarrow", "zinc", "atlas", "beacon", "comet", "drift", "falcon", "glacier",
          "hollow", "iris", "jasper", "kestrel", "lumen", "marble", "nova", "orbit", "prism", "quill", "ripple",
          "summit", "timber", "vortex", "wren", "aspen", "bramble", "cinder")  # fmt: skip

# The grep word: planted in the notes of exactly GREP_HITS records at every size, found nowhere else.
GREP_WORD = "tombstone"
GREP_HITS = 36
_GREP_SENTENCES = ("The tombstone sweep keeps deleted works out of list results",
                   "Each tombstone row outlives compaction so a resolve can say why a slug is gone",
                   "A tombstone is written before the head index drops the work")  # fmt: skip


@dataclass(frozen=True)
class Target:
    """A work written into each measured copy of the store, and the reference that must find it."""

    slug: str
    ref: str
    matched_by: str


EXACT = Target("cobalt-ledger-handoff", "cobalt-ledger-handoff", "slug")
PREFIX = Target("zephyr-retry-budget", "zephyr-", "prefix")
SUBSTRING = Target("tune-quokka-cache", "quokka", "substring")
TARGETS = (EXACT, PREFIX, SUBSTRING)

# The scratch repository each measurement runs in: files the targets' context lines pin.
_REPO_FILES = {"src/app.py": "".join(f"def step_{n}() -> int:\n    return {n}\n\n" for n in range(60)),
               "docs/design.md": "".join(f"Design note {n}: keep the head small.\n" for n in range(40)),
               "README.md": "A scratch repository for wheypoint's find benchmark.\n"}  # fmt: skip

# (name, arguments after `wheypoint`), measured in this order in every round after the baseline.
COMMANDS: tuple[tuple[str, list[str]], ...] = (
    ("show", ["show", EXACT.slug, "--project", bl.PROJECT, "--format", "json"]),
    ("list --grep", ["list", "--grep", GREP_WORD, "--project", bl.PROJECT, "--format", "json"]),
    ("resolve slug", ["resolve", EXACT.ref, "--project", bl.PROJECT, "--format", "json"]),
    ("resolve prefix", ["resolve", PREFIX.ref, "--project", bl.PROJECT, "--format", "json"]),
    ("resolve substring", ["resolve", SUBSTRING.ref, "--project", bl.PROJECT, "--format", "json"]),
)
TARGET_OF = {"show": SHOW_TARGET, "list --grep": LIST_TARGET}


@dataclass
class SizeResult:
    size: int
    records: int
    baseline: bl.Series
    series: dict[str, bl.Series]
    checks: dict[str, str] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------- store build


def grep_indices(size: int) -> frozenset[int]:
    """The records that mention GREP_WORD: GREP_HITS of them, spread evenly over the store."""
    count = min(GREP_HITS, size)
    return frozenset((k * size) // count + size // (2 * count) for k in range(count))


def bulk_intent(index: int, planted: bool) -> dict[str, Any]:
    """A realistic first checkpoint of work `index`: decisions, a question, notes and context lines."""
    rng = random.Random(f"{BUILDER_VERSION}-{index}")
    slug = f"{rng.choice(_WORDS)}-{rng.choice(_WORDS)}-{index}"
    notes = bl.notes_text(rng, index)
    if planted:
        notes += f" {rng.choice(_GREP_SENTENCES)}."
    decisions = [{"text": f"{bl.sentence(rng)} (d{n} of {index})", "rationale": rng.choice(bl.REASONS)}
                 for n in range(rng.randint(2, 4))]  # fmt: skip
    return {
        "slug": slug,
        "orientation": f"{bl.sentence(rng)} {rng.choice(bl.REASONS)} (item {index})",
        "next": {"move": "hold"},
        "decisions": decisions,
        "questions": [{"text": f"{bl.question_text(rng)} (q of {index})"}],
        "notes": notes,
        "working_context": [f"{rng.choice(bl.FILES)}:{rng.randint(1, 400)}",
                            f"Looked at {rng.choice(bl.OBJECTS)} in {rng.choice(bl.FILES)} while checking {index}"],
    }  # fmt: skip


def _prepare(task: tuple[int, int, frozenset[int]]) -> list[tuple[str, str, Any]]:
    """(work id, revision id, outcome) of records start..stop: validation and the kernel, off the writer."""
    from wheypoint.model.intake import require_valid
    from wheypoint.model.kernel import Provenance, apply, genesis_identity, request_digest, revision_id_for

    start, stop, planted = task
    prov = Provenance(project_key=bl.PROJECT, captured_at=CAPTURED_AT)
    prepared = []
    for index in range(start, stop):
        intent = require_valid(bulk_intent(index, index in planted))
        _, work_id = genesis_identity(intent, bl.PROJECT)
        # A first checkpoint's head is None, so applying it here gives what the store's build would.
        prepared.append((work_id, revision_id_for(work_id, None, request_digest(intent)), apply(None, intent, prov)))
    return prepared


def build_store(size: int, store_file: Path) -> None:
    """Write `size` works in process, the store opened non-durable; workers prepare, this process commits."""
    from wheypoint.store.sqlite.backend import SqliteStore

    planted = grep_indices(size)
    tasks = [(start, min(start + CHUNK, size), planted) for start in range(0, size, CHUNK)]
    store = SqliteStore.open(store_file, create=True, durable=False)
    started = time.perf_counter()
    done = 0
    workers = max(1, min(len(tasks), os.cpu_count() or 1))
    try:
        with multiprocessing.Pool(workers) as pool:
            for prepared in pool.imap(_prepare, tasks):
                for work_id, candidate, outcome in prepared:
                    store.commit(work_id, None, candidate, _first(outcome))
                done += len(prepared)
                if done % 10000 == 0 or done == size:
                    rate = done / (time.perf_counter() - started)
                    print(f"  built {done}/{size} records ({rate:.0f}/s)", file=sys.stderr, flush=True)
    finally:
        store.close()


def _first(outcome: Any) -> Callable[[dict[str, Any] | None], Any]:
    def build(head: dict[str, Any] | None) -> Any:
        if head is not None:
            raise SystemExit(f"the generated work {outcome.record['slug']} already exists: slugs must be unique")
        return outcome

    return build


def find_store(size: int, fingerprint: str) -> Path:
    """A cached store of `size` generated works (bench/results/stores/find-<size>-<fingerprint>.sqlite3)."""

    def build(tmp: Path) -> Path:
        store_file = tmp / "store.sqlite3"
        build_store(size, store_file)
        return store_file

    return bl.cached_store(bl.STORES_DIR / f"find-{size}-{fingerprint}.sqlite3", size, build)


# --------------------------------------------------------------------------------------------- scratch world


def make_repo(root: Path) -> None:
    """A real git repository with one commit, so resolve runs its git checks against the targets' anchor."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}  # fmt: skip
    for relative, text in _REPO_FILES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    steps = (["init", "-q", "-b", "main"], ["add", "-A"], ["-c", "commit.gpgsign=false", "commit", "-q", "-m", "start"])
    for argv in steps:
        subprocess.run(["git", "-C", str(root), *argv], env=env, check=True, capture_output=True)


def add_targets(home: Path, repo: Path) -> None:
    """Checkpoint the target works through wheypoint's own write path, from the repository (notes written).

    Each one is recorded against the repository's HEAD, with line references into tracked files that
    get pinned, so resolving it asks git whether the commit exists, how far HEAD moved and whether the
    pinned files changed, as it would for a handoff written in a real checkout.
    """
    from wheypoint.app.checkpoint import checkpoint
    from wheypoint.app.context import Context, NoteOptions

    ctx = Context(cwd=repo, environ={"WHEYPOINT_HOME": str(home)}, project=bl.PROJECT)
    for number, target in enumerate(TARGETS):
        rng = random.Random(f"target-{target.slug}")
        intent = bulk_intent(10**7 + number, planted=False)
        intent["slug"] = target.slug
        intent["working_context"] = [f"src/app.py:{rng.randint(1, 170)}", f"docs/design.md:{rng.randint(1, 40)}",
                                     f"Looked at {rng.choice(bl.OBJECTS)} in src/app.py"]  # fmt: skip
        checkpoint(ctx, intent, NoteOptions())


# --------------------------------------------------------------------------------------------- measuring


def check_reply(name: str, out: str, size: int) -> str:
    """Refuse a reply that is not the expected answer; otherwise a short description of it."""
    reply = json.loads(out)
    if reply.get("ok") is not True:
        raise SystemExit(f"{name}: not ok: {out[:400]}")
    if name == "show":
        if reply["record"]["slug"] != EXACT.slug:
            raise SystemExit(f"show answered {reply['record']['slug']}, not {EXACT.slug}")
        return f"note {reply['note']['state']}"
    if name == "list --grep":
        expected = min(GREP_HITS, size)
        if reply["count"] != expected:
            raise SystemExit(f"list --grep {GREP_WORD} found {reply['count']} works, not {expected}")
        return f"{reply['count']} works"
    target = {"resolve slug": EXACT, "resolve prefix": PREFIX, "resolve substring": SUBSTRING}[name]
    if reply.get("matched_by") != target.matched_by or reply["outcome"] not in ("authoritative", "gated"):
        raise SystemExit(f"{name}: expected matched_by {target.matched_by}, authoritative or gated: {out[:600]}")
    if reply["slug"] != target.slug:
        raise SystemExit(f"{name}: resolved {reply['slug']}, not {target.slug}")
    codes = ", ".join(sorted({f["code"] for f in reply["findings"]})) or "no findings"
    return f"{reply['outcome']} ({codes})"


def measure_size(python: str, source: Path, size: int, runs: int, no_site: bool = False) -> SizeResult:
    """Interleaved rounds (baseline, then each command) on a fresh copy of the store, from a scratch repository."""
    with tempfile.TemporaryDirectory(prefix="wheypoint-find-") as tmp:
        home, repo = Path(tmp) / "home", Path(tmp) / "repo"
        home.mkdir()
        repo.mkdir()
        make_repo(repo)
        shutil.copyfile(source, home / "store.sqlite3")
        add_targets(home, repo)
        records = bl.count_works(home / "store.sqlite3")
        env = bl.bench_env(home)
        baseline_argv, wp = bl.commands(python, no_site)
        result = SizeResult(size, records, bl.Series("baseline"), {name: bl.Series(name) for name, _ in COMMANDS})
        for name, args in COMMANDS:
            result.checks[name] = check_reply(name, bl.timed([*wp, *args], env, repo)[1], size)
        for round_number in range(bl.WARMUP_ROUNDS + runs):
            keep = round_number >= bl.WARMUP_ROUNDS
            elapsed, _ = bl.timed(baseline_argv, env, repo)
            if keep:
                result.baseline.times.append(elapsed)
            for name, args in COMMANDS:
                elapsed, _ = bl.timed([*wp, *args], env, repo)
                if keep:
                    result.series[name].times.append(elapsed)
    return result


# --------------------------------------------------------------------------------------------- report


def _target(name: str) -> float:
    return TARGET_OF.get(name, RESOLVE_TARGET)


def _checks(results: list[SizeResult]) -> Iterator[str]:
    for r in results:
        for name, series in r.series.items():
            value, target = series.ratio(r.baseline), _target(name)
            yield f"| {name} / baseline @ {r.size:,} | {value:.2f}x | < {target}x | {bl.verdict(value, target)} |"
    if len(results) > 1:
        small, large = results[0], results[-1]
        for name in large.series:
            big, one = large.series[name], small.series[name]
            # A ratio of ratios: a drift of the machine between the two sizes cancels out.
            value = big.ratio(large.baseline) / one.ratio(small.baseline)
            raw = big.median() / one.median()
            yield (f"| {name} flatness {large.size:,} / {small.size:,} | {value:.2f}x (raw ms {raw:.2f}x) "
                   f"| < {FLAT_TARGET}x | {bl.verdict(value, FLAT_TARGET)} |")  # fmt: skip


def report(
    interp: bl.Interpreter,
    site: tuple[float, float],
    results: list[SizeResult],
    builds: dict[int, str],
    runs: int,
    no_site: bool,
) -> str:
    lines = ["# wheypoint find benchmark", "", *bl.machine_facts(interp, site),
             f"- runs per command per size: {runs} (after {bl.WARMUP_ROUNDS} warm-up rounds), interleaved baseline / "
             + " / ".join(name for name, _ in COMMANDS),
             "- stores: " + "; ".join(f"{size:,}: {how}" for size, how in builds.items()), "",
             f"Baseline: {bl.baseline_label(interp, no_site)}"
             + (" (DIAGNOSTIC --no-site run: not the issue's figure)" if no_site else "")
             + ". Ratios are ratio of medians; the per-round (paired) ratio median is in brackets.", "",
             "| store | works | baseline ms | command | ms | ratio | reply |",
             "|---:|---:|---:|---|---:|---:|---|"]  # fmt: skip
    for r in results:
        for name, series in r.series.items():
            ratio = f"{series.ratio(r.baseline):.2f}x [{series.pair_ratio(r.baseline):.2f}x]"
            lines.append(f"| {r.size:,} | {r.records:,} | {r.baseline.median():.1f} | {name} | "
                         f"{series.median():.1f} | {ratio} | {r.checks[name]} |")  # fmt: skip
    lines += ["", "## Targets", "", "| check | value | target | verdict |", "|---|---:|---:|---|", *_checks(results)]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args, sizes = bl.parse_bench_args(argv, __doc__, "find", "1000,10000,100000")
    interp = bl.resolve_interpreter()
    fingerprint = bl.store_fingerprint(BUILDER_VERSION)
    stores, builds = {}, {}
    for size in sizes:  # every build happens before any timing
        cached = (bl.STORES_DIR / f"find-{size}-{fingerprint}.sqlite3").exists()
        stores[size] = find_store(size, fingerprint)
        seconds = bl.build_facts(stores[size]).get("build_seconds", "?")
        builds[size] = f"{'cached, ' if cached else ''}built in {seconds} s"
    site = bl.site_floor(interp.path)
    results = bl.measure_sizes(interp.path, stores, args.runs, args.no_site, measure_size)
    bl.publish(report(interp, site, results, builds, args.runs, args.no_site), args.out, "find", args.no_site)
    return 0


if __name__ == "__main__":
    sys.exit(main())
