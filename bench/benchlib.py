"""Helpers the wheypoint benchmarks share: the interpreter, timed processes, cached stores, machine facts."""

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
STORES_DIR = RESULTS_DIR / "stores"
PROJECT = "bench"
WARMUP_ROUNDS = 3
BASELINE_CODE = "import json, sqlite3"
R = TypeVar("R")

# Executable magic numbers: ELF, Mach-O (32/64, both byte orders, universal). A shim starts with "#!".
_BINARY_MAGIC = (b"\x7fELF", b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe",
                 b"\xca\xfe\xba\xbe", b"MZ")  # fmt: skip

# Word stock for varied, realistic handoff text.
SUBJECTS = ("the store", "the migration runner", "the note renderer", "the flag parser", "the schema checker",
            "the revision chain", "the head index", "the CLI entry point", "the git probe", "the search table",
            "the compaction proof", "the projection", "the intake validator", "the session tag")  # fmt: skip
VERBS = ("keeps", "drops", "caches", "validates", "renders", "rewrites", "defers", "batches", "pins", "splits",
         "merges", "guards", "indexes", "normalises")  # fmt: skip
OBJECTS = ("the head record", "every revision row", "line references", "artifact links", "the project key",
           "decision texts", "open questions", "the WAL file", "the busy timeout", "working context",
           "the Markdown note", "stale parents", "the slug lookup", "full-text rows")  # fmt: skip
REASONS = ("because it is on the hot path of every command", "so a crash leaves either the old head or the new one",
           "since reviewers asked for a smaller diff", "to keep start-up work off the critical path",
           "because the operator wants one file per user", "so the note can always be re-rendered",
           "since the previous approach refused valid intents", "to avoid a git subprocess per checkpoint",
           "because the benchmark showed it dominates", "so concurrent writers see a clear refusal")  # fmt: skip
FILES = ("src/wheypoint/sqlite_store.py", "src/wheypoint/kernel.py", "src/wheypoint/flags.py",
         "src/wheypoint/projection.py", "tests/test_store.py", "docs/design.md", "src/wheypoint/cli.py")  # fmt: skip
QUESTIONS = ("Should {s} keep {o} after compaction?", "Does {s} need to lock before reading {o}?",
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

    def ratio(self, baseline: Series) -> float:
        """Ratio of medians: this command's median over the baseline's median."""
        return self.median() / baseline.median()

    def pair_ratio(self, baseline: Series) -> float:
        """Median of per-round ratios: each run over the baseline run of the same round."""
        return statistics.median(t / b for t, b in zip(self.times, baseline.times, strict=True))


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


# --------------------------------------------------------------------------------------------- text


def sentence(rng: random.Random) -> str:
    return f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(VERBS)} {rng.choice(OBJECTS)}"


def notes_text(rng: random.Random, index: int) -> str:
    """220–480 characters of plausible notes, opening with the record's number."""
    parts = [f"Record {index}."]
    while sum(len(p) + 1 for p in parts) < rng.randint(220, 480):
        parts.append(f"{sentence(rng)} {rng.choice(REASONS)}.")
    return " ".join(parts)


def question_text(rng: random.Random) -> str:
    return rng.choice(QUESTIONS).format(s=rng.choice(SUBJECTS), o=rng.choice(OBJECTS))


# --------------------------------------------------------------------------------------------- stores


def store_fingerprint(builder_version: str) -> str:
    """Fingerprint of the store's schema (its migrations) and of a builder, naming cached stores.

    Only the schema is keyed: a store written by an older kernel is still a valid store of the same
    shape, and rebuilding thousands of records on every edit of the source would make reruns slow.
    """
    import wheypoint

    migrations = Path(wheypoint.__file__).resolve().parent / "migrations.py"
    digest = hashlib.sha256(builder_version.encode())
    digest.update(migrations.read_bytes() if migrations.exists() else b"")
    return digest.hexdigest()[:12]


def count_works(store: Path) -> int:
    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM works").fetchone()[0])
    finally:
        conn.close()


def cached_store(target: Path, size: int, build: Callable[[Path], Path]) -> Path:
    """`target`, a store of `size` works: built once by `build(scratch folder) -> store file`, then reused.

    The build's time is kept beside the store (`<target>.json`), so a report can state it later.
    """
    if target.exists() and count_works(target) == size:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    print(f"building a store of {size} records (cached as {target.name}) ...", file=sys.stderr, flush=True)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="wheypoint-build-") as tmp:
        built = build(Path(tmp))
        # Fold the WAL into the main file so the cached store is a single, self-contained file.
        conn = sqlite3.connect(built)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
        seconds = time.perf_counter() - started
        partial = target.with_suffix(".partial")
        shutil.copyfile(built, partial)
        partial.replace(target)
    facts = {"records": size, "build_seconds": round(seconds, 1), "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    target.with_name(target.name + ".json").write_text(json.dumps(facts) + "\n", encoding="utf-8")
    print(f"  built in {seconds:.1f}s", file=sys.stderr, flush=True)
    return target


def build_facts(store: Path) -> dict[str, object]:
    """What `cached_store` noted about a store's build (empty for a store cached by an older version)."""
    try:
        facts: dict[str, object] = json.loads(store.with_name(store.name + ".json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return facts


# --------------------------------------------------------------------------------------------- measuring


def timed(argv: Sequence[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    """(wall ms, stdout) of one whole process; a failing process stops the benchmark."""
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


# --------------------------------------------------------------------------------------------- report


def verdict(value: float, target: float) -> str:
    return "PASS" if value < target else "MISS"


def site_cost(python: str, cwd: Path, rounds: int = 10) -> tuple[float, float]:
    """(baseline ms, same without `site`) medians: how much of the floor is site-packages start-up (.pth files)."""
    env = bench_env(cwd)
    with_site, without = [], []
    for _ in range(rounds):
        with_site.append(timed([python, "-c", BASELINE_CODE], env, cwd)[0])
        without.append(timed([python, "-S", "-c", BASELINE_CODE], env, cwd)[0])
    return statistics.median(with_site), statistics.median(without)


def machine_facts(interp: Interpreter, site: tuple[float, float]) -> list[str]:
    return [
        f"- python: {platform.python_version()} ({platform.python_implementation()}), binary `{interp.path}`"
        + (f" -> `{interp.resolved}`" if interp.resolved != interp.path else "")
        + f" ({interp.note})",
        f"- sqlite: {sqlite3.sqlite_version}",
        f"- cpus: {os.cpu_count()}; platform: {platform.platform()}; load average: "
        + " ".join(f"{x:.2f}" for x in os.getloadavg()),
        f"- date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}",
        f"- interpreter floor: baseline {site[0]:.1f} ms, of which site-packages start-up (`-S` saves it) "
        f"{site[0] - site[1]:.1f} ms",
    ]


def baseline_label(interp: Interpreter, no_site: bool) -> str:
    """The baseline command as the report names it."""
    flags = " ".join(commands(interp.path, no_site)[0][1:-2])
    return f'`{interp.path} {flags + " " if flags else ""}-c "{BASELINE_CODE}"`'


# --------------------------------------------------------------------------------------------- command line


def parse_bench_args(
    argv: Sequence[str] | None, description: str | None, name: str, default_sizes: str
) -> tuple[argparse.Namespace, list[int]]:
    """The options every store-size benchmark takes: --sizes, --runs, --out, --no-site."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--sizes", default=default_sizes, help="store sizes in records, comma separated")
    parser.add_argument("--runs", type=int, default=20, help="measured runs per command per size (default 20)")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"where to write the table too (default bench/results/{name}.md, or {name}-no-site.md "
                        "with --no-site)")  # fmt: skip
    parser.add_argument("--no-site", action="store_true",
                        help="diagnostic: run baseline and wheypoint with -S, so site-packages .pth files cannot "
                        "pre-import modules wheypoint would otherwise pay for")  # fmt: skip
    args = parser.parse_args(argv)
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    if args.runs < 1 or not sizes or min(sizes) < 1:
        parser.error("--runs and every size must be at least 1")
    return args, sizes


def site_floor(python: str) -> tuple[float, float]:
    with tempfile.TemporaryDirectory(prefix="wheypoint-site-") as tmp:
        return site_cost(python, Path(tmp))


def measure_sizes(
    python: str, stores: dict[int, Path], runs: int, no_site: bool, measure: Callable[[str, Path, int, int, bool], R]
) -> list[R]:
    """`measure(python, store, size, runs, no_site)` for each size in turn."""
    results = []
    for size, store in stores.items():
        print(f"measuring store of {size:,} records ...", file=sys.stderr, flush=True)
        results.append(measure(python, store, size, runs, no_site))
    return results


def publish(text: str, out: Path | None, name: str, no_site: bool) -> None:
    """Print the report and write it (by default to bench/results/<name>.md or <name>-no-site.md)."""
    print(text)
    target = out or RESULTS_DIR / (f"{name}-no-site.md" if no_site else f"{name}.md")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
