"""Wall time of wheypoint show and checkpoint by store size, as ratios to a same-run interpreter baseline."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
STORES_DIR = RESULTS_DIR / "stores"
PROJECT = "bench"
BUILDER_VERSION = "1"  # bump when the generated records change shape
WARMUP_ROUNDS = 3

# Targets from the issue: ratios to the `-c "import json, sqlite3"` baseline, and flatness in store size.
SHOW_TARGET = 1.5
CHECKPOINT_TARGET = 2.5
FLAT_TARGET = 1.2

BASELINE_CODE = "import json, sqlite3"

# Executable magic numbers: ELF, Mach-O (32/64, both byte orders, universal). A shim starts with "#!".
_BINARY_MAGIC = (b"\x7fELF", b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe",
                 b"\xca\xfe\xba\xbe", b"MZ")  # fmt: skip

# Word stock for varied, realistic handoff text.
_SUBJECTS = ("the store", "the migration runner", "the note renderer", "the flag parser", "the schema checker",
             "the revision chain", "the head index", "the CLI entry point", "the git probe", "the search table",
             "the compaction proof", "the projection", "the intake validator", "the session tag")  # fmt: skip
_VERBS = ("keeps", "drops", "caches", "validates", "renders", "rewrites", "defers", "batches", "pins", "splits",
          "merges", "guards", "indexes", "normalises")  # fmt: skip
_OBJECTS = ("the head record", "every revision row", "line references", "artifact links", "the project key",
            "decision texts", "open questions", "the WAL file", "the busy timeout", "working context",
            "the Markdown note", "stale parents", "the slug lookup", "full-text rows")  # fmt: skip
_REASONS = ("because it is on the hot path of every command", "so a crash leaves either the old head or the new one",
            "since reviewers asked for a smaller diff", "to keep start-up work off the critical path",
            "because the operator wants one file per user", "so the note can always be re-rendered",
            "since the previous approach refused valid intents", "to avoid a git subprocess per checkpoint",
            "because the benchmark showed it dominates", "so concurrent writers see a clear refusal")  # fmt: skip
_FILES = ("src/wheypoint/sqlite_store.py", "src/wheypoint/kernel.py", "src/wheypoint/flags.py",
          "src/wheypoint/projection.py", "tests/test_store.py", "docs/design.md", "src/wheypoint/cli.py")  # fmt: skip
_QUESTIONS = ("Should {s} keep {o} after compaction?", "Does {s} need to lock before reading {o}?",
              "Is it worth moving {o} out of {s}?", "Who owns {o} once {s} is split?")  # fmt: skip


@dataclass
class Interpreter:
    """The real interpreter binary that runs both wheypoint and the baseline."""

    path: str
    resolved: str
    note: str


@dataclass
class Series:
    """Wall times in milliseconds of one command, one value per measured round."""

    name: str
    times: list[float] = field(default_factory=list)

    def median(self) -> float:
        return statistics.median(self.times)


@dataclass
class SizeResult:
    size: int
    records: int
    baseline: Series
    show: Series
    update: Series
    new: Series

    def ratio(self, series: Series) -> float:
        """Ratio of medians: the command's median over the baseline's median."""
        return series.median() / self.baseline.median()

    def pair_ratio(self, series: Series) -> float:
        """Median of per-round ratios: each run over the baseline run of the same round."""
        return statistics.median(t / b for t, b in zip(series.times, self.baseline.times, strict=True))


# --------------------------------------------------------------------------------------------- interpreter


def _is_binary(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            head = handle.read(4)
    except OSError:
        return False
    return any(head.startswith(magic) for magic in _BINARY_MAGIC)


def resolve_interpreter() -> Interpreter:
    """The interpreter running this script, as a path the kernel execs directly (never a shim script).

    In a virtual environment `sys.executable` is a symlink whose own location tells Python which
    environment to load, so the symlink is kept (it still execs the same binary, with no shell in
    between); elsewhere the fully resolved binary is used.
    """
    exe = sys.executable
    resolved = os.path.realpath(exe)
    if not _is_binary(resolved):
        raise SystemExit(f"{exe} resolves to {resolved}, which is not an executable binary (a shim?); "
                         "run this script with the interpreter binary itself")  # fmt: skip
    in_venv = sys.prefix != sys.base_prefix
    if in_venv:
        return Interpreter(exe, resolved, "virtual environment: kept the venv link, which execs the binary directly")
    return Interpreter(resolved, resolved, "resolved with realpath")


# --------------------------------------------------------------------------------------------- store build


def _sentence(rng: random.Random) -> str:
    return f"{rng.choice(_SUBJECTS).capitalize()} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)}"


def _notes(rng: random.Random, index: int) -> str:
    parts = [f"Record {index}."]
    while sum(len(p) + 1 for p in parts) < rng.randint(220, 480):
        parts.append(f"{_sentence(rng)} {rng.choice(_REASONS)}.")
    return " ".join(parts)


def record_flags(rng: random.Random, index: int, slug: str) -> list[str]:
    """Checkpoint flags for one realistic first revision: decisions, a question, notes and context."""
    flags = [slug, "--orientation", f"{_sentence(rng)} {rng.choice(_REASONS)} (item {index})",
             "--next", "hold"]  # fmt: skip
    for number in range(rng.randint(2, 4)):
        flags += ["--decision", f"{_sentence(rng)} (d{number} of {index})", "--rationale", rng.choice(_REASONS)]
    question = rng.choice(_QUESTIONS).format(s=rng.choice(_SUBJECTS), o=rng.choice(_OBJECTS))
    flags += ["--question", f"{question} (q of {index})"]
    flags += ["--notes", _notes(rng, index)]
    flags += ["--context", f"{rng.choice(_FILES)}:{rng.randint(1, 400)}"]
    flags += ["--context", f"Looked at {rng.choice(_OBJECTS)} in {rng.choice(_FILES)} while checking {index}"]
    return flags


def slug_for(index: int) -> str:
    return f"work-{index:05d}"


def store_fingerprint() -> str:
    """Fingerprint of the store's schema (its migrations) and of this builder, naming cached stores.

    Only the schema is keyed: a store written by an older kernel is still a valid store of the same
    shape, and rebuilding 10,000 records on every edit of the source would make reruns slow.
    """
    import wheypoint

    migrations = Path(wheypoint.__file__).resolve().parent / "migrations.py"
    digest = hashlib.sha256(BUILDER_VERSION.encode())
    digest.update(migrations.read_bytes() if migrations.exists() else b"")
    return digest.hexdigest()[:12]


def build_store(size: int, home: Path, scratch: Path) -> None:
    """Write `size` works, one first checkpoint each, through wheypoint's own service layer."""
    from wheypoint.flags import parse_intent_command
    from wheypoint.service import Context, NoteOptions

    try:
        from wheypoint.checkpointing import checkpoint
    except ImportError:  # the layout before the write path moved out of service
        from wheypoint.service import checkpoint  # type: ignore[attr-defined,no-redef]

    ctx = Context(cwd=scratch, environ={"WHEYPOINT_HOME": str(home)}, project=PROJECT)
    rng = random.Random(size * 7919 + 17)
    notes = NoteOptions(no_note=True)
    started = time.perf_counter()
    for index in range(size):
        parsed = parse_intent_command(record_flags(rng, index, slug_for(index)), stdin_is_tty=True)
        checkpoint(ctx, parsed.intent, notes)
        if size >= 1000 and (index + 1) % 1000 == 0:
            rate = (index + 1) / (time.perf_counter() - started)
            print(f"  built {index + 1}/{size} records ({rate:.0f}/s)", file=sys.stderr, flush=True)
    # Fold the WAL into the main file so the cached store is a single, self-contained file.
    conn = sqlite3.connect(home / "store.sqlite3")
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


def cached_store(size: int, fingerprint: str) -> Path:
    """Path of a built store of `size` records, built once and cached under bench/results/stores/."""
    target = STORES_DIR / f"store-{size}-{fingerprint}.sqlite3"
    if target.exists() and _count_works(target) == size:
        return target
    STORES_DIR.mkdir(parents=True, exist_ok=True)
    print(f"building a store of {size} records (cached as {target.name}) ...", file=sys.stderr, flush=True)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="wheypoint-build-") as tmp:
        home, scratch = Path(tmp) / "home", Path(tmp) / "cwd"
        scratch.mkdir()
        build_store(size, home, scratch)
        partial = target.with_suffix(".partial")
        shutil.copyfile(home / "store.sqlite3", partial)
        partial.replace(target)
    print(f"  built in {time.perf_counter() - started:.1f}s", file=sys.stderr, flush=True)
    return target


# --------------------------------------------------------------------------------------------- measuring


def _timed(argv: Sequence[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    """(wall ms, stdout) of one whole process."""
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=False)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])} ... failed ({done.returncode}):\n{done.stdout.decode()}"
                         f"{done.stderr.decode()}")  # fmt: skip
    return elapsed, done.stdout.decode()


def bench_env(home: Path) -> dict[str, str]:
    """The environment every measured process gets: the bench store, nothing that changes Python's start."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WHEYPOINT_", "PYTHON"))}
    env["WHEYPOINT_HOME"] = str(home)
    return env


def _count_works(store: Path) -> int:
    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM works").fetchone()[0])
    finally:
        conn.close()


def commands(python: str, no_site: bool) -> tuple[list[str], list[str]]:
    """(baseline argv, wheypoint argv prefix); with `no_site`, both skip site-packages start-up (`-S`).

    Without `site` the editable install's .pth is not read, so wheypoint is run through runpy (what
    `-m` does) after putting its import root on sys.path.
    """
    if not no_site:
        return [python, "-c", BASELINE_CODE], [python, "-m", "wheypoint"]
    import wheypoint

    root = str(Path(wheypoint.__file__).resolve().parent.parent)
    boot = (f"import sys; sys.path.insert(0, {root!r}); sys.argv[0] = 'wheypoint'; "
            "import runpy; runpy.run_module('wheypoint', run_name='__main__', alter_sys=True)")  # fmt: skip
    return [python, "-S", "-c", BASELINE_CODE], [python, "-S", "-c", boot]


def measure_size(python: str, source: Path, size: int, runs: int, no_site: bool = False) -> SizeResult:
    """Interleave baseline / show / checkpoint(update) / checkpoint(new) rounds on a fresh copy of the store."""
    with tempfile.TemporaryDirectory(prefix="wheypoint-bench-") as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "cwd"
        home.mkdir()
        cwd.mkdir()
        shutil.copyfile(source, home / "store.sqlite3")
        records = _count_works(home / "store.sqlite3")
        env = bench_env(home)
        slug = slug_for(size // 2)
        baseline_argv, wp = commands(python, no_site)
        _, out = _timed([*wp, "show", slug, "--project", PROJECT, "--format", "json"], env, cwd)
        base = json.loads(out)["record"]["revision_id"]
        rng = random.Random(size)
        baseline, show, update, new = Series("baseline"), Series("show"), Series("update"), Series("new")
        for round_number in range(WARMUP_ROUNDS + runs):
            keep = round_number >= WARMUP_ROUNDS
            elapsed, _ = _timed(baseline_argv, env, cwd)
            if keep:
                baseline.times.append(elapsed)
            elapsed, _ = _timed([*wp, "show", slug, "--project", PROJECT, "--format", "json"], env, cwd)
            if keep:
                show.times.append(elapsed)
            # The work comes first: `checkpoint --base ...` with a flag first is refused as a usage error.
            update_argv = [*wp, "checkpoint", slug, "--base", base,
                           "--orientation", f"{_sentence(rng)} (round {round_number})", "--next", "hold",
                           "--decision", f"{_sentence(rng)} (round {round_number})",
                           "--rationale", rng.choice(_REASONS), "--project", PROJECT, "--no-note"]  # fmt: skip
            elapsed, out = _timed(update_argv, env, cwd)
            base = json.loads(out)["revision_id"]
            if keep:
                update.times.append(elapsed)
            new_argv = [*wp, "checkpoint", *record_flags(rng, size + round_number, f"fresh-{round_number:04d}"),
                        "--project", PROJECT, "--no-note"]  # fmt: skip
            elapsed, _ = _timed(new_argv, env, cwd)
            if keep:
                new.times.append(elapsed)
    return SizeResult(size, records, baseline, show, update, new)


# --------------------------------------------------------------------------------------------- report


def _verdict(value: float, target: float) -> str:
    return "PASS" if value < target else "MISS"


def site_cost(python: str, cwd: Path, rounds: int = 10) -> tuple[float, float]:
    """(baseline ms, same without `site`) medians: how much of the floor is site-packages start-up (.pth files)."""
    env = bench_env(cwd)
    with_site, without = [], []
    for _ in range(rounds):
        with_site.append(_timed([python, "-c", BASELINE_CODE], env, cwd)[0])
        without.append(_timed([python, "-S", "-c", BASELINE_CODE], env, cwd)[0])
    return statistics.median(with_site), statistics.median(without)


def machine_facts(interp: Interpreter, site: tuple[float, float]) -> list[str]:
    return [
        f"- python: {platform.python_version()} ({platform.python_implementation()}), binary `{interp.path}`"
        + (f" -> `{interp.resolved}`" if interp.resolved != interp.path else "")
        + f" ({interp.note})",
        f"- sqlite: {sqlite3.sqlite_version}",
        f"- cpus: {os.cpu_count()}; platform: {platform.platform()}",
        f"- date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}",
        f"- interpreter floor: baseline {site[0]:.1f} ms, of which site-packages start-up (`-S` saves it) "
        f"{site[0] - site[1]:.1f} ms",
    ]


def report(interp: Interpreter, site: tuple[float, float], results: list[SizeResult], runs: int, no_site: bool) -> str:
    baseline = " ".join([*commands(interp.path, no_site)[0][1:-2], f'-c "{BASELINE_CODE}"'])
    lines = ["# wheypoint core benchmark", "", *machine_facts(interp, site), f"- runs per command per size: {runs} "
             f"(after {WARMUP_ROUNDS} warm-up rounds), interleaved baseline / show / update / new", "",
             f"Baseline: `{interp.path} {baseline}`"
             + (" (DIAGNOSTIC --no-site run: not the issue's figure)" if no_site else "")
             + ". Ratios are ratio of medians; "
             "the per-round (paired) ratio median is in brackets.", "",
             "| store | works | baseline ms | show ms | show ratio | ckpt update ms | ratio | ckpt new ms | ratio |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for r in results:
        cells = [f"{r.size:,}", f"{r.records:,}", f"{r.baseline.median():.1f}"]
        for series in (r.show, r.update, r.new):
            cells += [f"{series.median():.1f}", f"{r.ratio(series):.2f}x [{r.pair_ratio(series):.2f}x]"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "## Targets", "", "| check | value | target | verdict |", "|---|---:|---:|---|"]
    for r in results:
        for label, series, target in (("show", r.show, SHOW_TARGET), ("checkpoint update", r.update, CHECKPOINT_TARGET),
                                      ("checkpoint new", r.new, CHECKPOINT_TARGET)):  # fmt: skip
            value = r.ratio(series)
            verdict = _verdict(value, target)
            lines.append(f"| {label} / baseline @ {r.size:,} | {value:.2f}x | < {target}x | {verdict} |")
    if len(results) > 1:
        small, large = results[0], results[-1]
        for label, attr in (("show", "show"), ("checkpoint update", "update"), ("checkpoint new", "new")):
            big: Series = getattr(large, attr)
            one: Series = getattr(small, attr)
            # Flatness compares ratios, so a drift of the machine between the two sizes cancels out;
            # the raw ratio of median milliseconds is shown beside it.
            value = large.ratio(big) / small.ratio(one)
            raw = big.median() / one.median()
            lines.append(f"| {label} flatness {large.size:,} / {small.size:,} | {value:.2f}x (raw ms {raw:.2f}x) "
                         f"| < {FLAT_TARGET}x | {_verdict(value, FLAT_TARGET)} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1,1000,10000", help="store sizes in records, comma separated")
    parser.add_argument("--runs", type=int, default=20, help="measured runs per command per size (default 20)")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="where to write the table too (default bench/results/core.md, or core-no-site.md with --no-site)",
    )
    parser.add_argument(
        "--no-site",
        action="store_true",
        help="diagnostic: run baseline and wheypoint with -S, "
        "so site-packages .pth files cannot pre-import modules wheypoint would otherwise pay for",
    )
    args = parser.parse_args(argv)
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    if args.runs < 1 or not sizes or min(sizes) < 1:
        parser.error("--runs and every size must be at least 1")
    interp = resolve_interpreter()
    fingerprint = store_fingerprint()
    stores = {size: cached_store(size, fingerprint) for size in sizes}  # every build happens before any timing
    with tempfile.TemporaryDirectory(prefix="wheypoint-site-") as tmp:
        site = site_cost(interp.path, Path(tmp))
    results = []
    for size in sizes:
        print(f"measuring store of {size:,} records ...", file=sys.stderr, flush=True)
        results.append(measure_size(interp.path, stores[size], size, args.runs, args.no_site))
    text = report(interp, site, results, args.runs, args.no_site)
    print(text)
    out: Path = args.out or RESULTS_DIR / ("core-no-site.md" if args.no_site else "core.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
