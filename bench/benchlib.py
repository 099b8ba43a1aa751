"""Helpers the wheypoint benchmarks share: a clean venv, timed processes, cached stores, the scratch world."""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import platform
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
SRC = ROOT / "src"
CORPUS = ROOT.parent / "shared" / "corpus"
RESULTS_DIR = BENCH_DIR / "results"
STORES_DIR = RESULTS_DIR / "stores"
PROJECT = "bench"  # the scratch repository's folder is named so, which makes it the default project key
WARMUP_ROUNDS = 3
BASELINE_CODE = "import json, sqlite3"
KEEP_VENVS = 3  # clean venvs kept under bench/results (one per source fingerprint), most recently used first

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

# Start-up targets: each command's wall time over the baseline's, per round (median of paired ratios).
# Issue 23's goals (issue 11's were 1.3, 1.4, 1.6, 1.5, 2.0, 2.0 and 1.5x).
TARGETS = {"show": 1.15, "list --grep": 1.15, "resolve": 1.2, "validate": 1.3, "validate, naming a secret": 1.3,
           "checkpoint new": 1.5, "checkpoint update": 1.5, "turns": 1.1}  # fmt: skip


@dataclass
class Series:
    """Wall times in milliseconds of one command, one value per measured round."""

    name: str
    times: list[float] = field(default_factory=list)

    def median(self) -> float:
        return statistics.median(self.times)

    def paired(self, baseline: Series) -> float:
        """Median of per-round ratios: each run over the baseline run of the same round (the headline figure)."""
        return statistics.median(t / b for t, b in zip(self.times, baseline.times, strict=True))

    def of_medians(self, baseline: Series) -> float:
        """Ratio of medians: this command's median over the baseline's median (shown beside, in brackets)."""
        return self.median() / baseline.median()

    def cell(self, baseline: Series) -> str:
        return f"{self.paired(baseline):.2f}x [{self.of_medians(baseline):.2f}x]"


# --------------------------------------------------------------------------------------------- clean venv


@dataclass(frozen=True)
class Venv:
    """A fresh virtual environment holding a real (non-editable) install of the project, as a user's would."""

    path: Path
    base: str  # the interpreter binary it was made from
    fingerprint: str
    facts: dict[str, Any]

    @property
    def python(self) -> str:
        return str(self.path / "bin" / "python")

    @property
    def wheypoint(self) -> str:
        """The console script pip wrote: what a user types."""
        return str(self.path / "bin" / "wheypoint")

    def baseline(self) -> list[str]:
        return [self.python, "-c", BASELINE_CODE]


def _is_binary(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            head = handle.read(4)
    except OSError:
        return False
    return any(head.startswith(magic) for magic in _BINARY_MAGIC)


def base_interpreter() -> str:
    """The interpreter binary running this script (never a pyenv shim script), which the venv is made from."""
    resolved = os.path.realpath(sys.executable)
    if not _is_binary(resolved):
        raise SystemExit(f"{sys.executable} resolves to {resolved}, which is not an executable binary (a shim?); "
                         "run this script with the interpreter binary itself")  # fmt: skip
    return resolved


def _snapshot(dest: Path, root: Path = ROOT) -> None:
    """Copy what a build needs (src/, pyproject.toml, README.md, licence) so pip never writes into the checkout.

    A build from the checkout itself would leave build/ and *.egg-info there, and the tree is edited
    while benchmarks run: the snapshot is what gets fingerprinted and installed, so the two agree. `root`: another
    tree of the project (an older revision, checked out by `revision_tree`).
    """
    junk = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "dist")
    shutil.copytree(root / "src", dest / "src", ignore=junk)
    for name in ("pyproject.toml", "README.md", "LICENSE", "LICENSE.txt", "LICENSE.md"):
        if (root / name).exists():
            shutil.copyfile(root / name, dest / name)


def revision_tree(revision: str, dest: Path) -> Path:
    """The project's files at a git revision (`git archive`), unpacked into `dest`: what `ensure_venv(root=...)`
    builds a clean venv of, to measure this tree against."""
    import tarfile

    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", revision, "src", "pyproject.toml",
                              "README.md"], capture_output=True, check=False)  # fmt: skip
    if archive.returncode != 0:
        raise SystemExit(f"git archive {revision} failed: {archive.stderr.decode(errors='replace')}")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.10.12+, 3.11.4+
            tar.extractall(dest, filter="data")
        else:  # pragma: no cover - the archive is git's own, of this repository
            tar.extractall(dest)
    return dest


# How a clean venv is built (`_build_venv`): a venv built another way is not reused. 2: with a current pip.
VENV_RECIPE = "2"
# The pip a clean venv installs with. `python -m venv` seeds the pip of its Python's release (3.11.7: pip 23.2),
# whose console script imports `re` before the program starts (about 3.5 ms of every command on this kind of
# machine); pip 25.0 (pypa/pip#13166) and uv write one that imports `sys` alone, as a user installing today gets.
CURRENT_PIP = "pip>=25"


def _fingerprint(snapshot: Path, base: str) -> str:
    """Hash of the src tree's files (paths and bytes), pyproject.toml, the interpreter's version and path, and the
    venv's recipe."""
    digest = hashlib.sha256(f"{base}\n{sys.version}\n{platform.python_implementation()}\n{VENV_RECIPE}\n".encode())
    files = sorted(p for p in (snapshot / "src").rglob("*") if p.is_file())
    for path in [*files, snapshot / "pyproject.toml"]:
        relative = path.relative_to(snapshot).as_posix()
        data = path.read_bytes()
        digest.update(f"{relative}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()[:12]


@contextmanager
def _locked(lock_file: Path) -> Iterator[None]:
    """An exclusive lock, so two benchmarks started together do not build the same venv twice."""
    import fcntl

    with lock_file.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def _setuptools_floor(pyproject: Path) -> tuple[int, ...] | None:
    """The minimum setuptools version [build-system] requires, or None if it requires anything else as well."""
    text = pyproject.read_text(encoding="utf-8")
    found = re.search(r"^\[build-system\][^\[]*?^requires\s*=\s*\[([^\]]*)\]", text, re.M | re.S)
    requirements = re.findall(r"[\"']([^\"']+)[\"']", found.group(1)) if found else []
    floors = [re.fullmatch(r"setuptools\s*(?:>=\s*([\d.]+))?", r.strip()) for r in requirements]
    if not floors or not all(floors):
        return None
    return max((_version(m.group(1) or "0") for m in floors if m), default=(0,))


def _run(argv: Sequence[str], what: str, **kwargs: Any) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, check=False, **kwargs)
    if done.returncode != 0:
        raise SystemExit(f"{what} failed ({done.returncode}): {' '.join(argv)}\n{done.stdout}{done.stderr}")
    return done.stdout


def _build_venv(base: str, snapshot: Path, path: Path, marker: Path) -> None:
    """`python -m venv`, then `pip install` of the snapshot, non-editable, exactly as a user installs it."""
    if path.exists():
        shutil.rmtree(path)  # a venv whose build was interrupted (no marker)
    print(f"creating a clean venv {path} ...", file=sys.stderr, flush=True)
    started = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    _run([base, "-m", "venv", str(path)], "python -m venv", env=env)
    python = str(path / "bin" / "python")
    _run([python, "-m", "pip", "install", "--quiet", "--upgrade", "--disable-pip-version-check", CURRENT_PIP],
         "pip install --upgrade pip", env=env)  # fmt: skip
    pip_version = _run([python, "-c", "import pip; print(pip.__version__)"], "pip --version", env=env).strip()
    probe = subprocess.run([python, "-c", "import setuptools; print(setuptools.__version__)"], capture_output=True,
                           text=True, env=env, check=False)  # fmt: skip
    have = probe.stdout.strip() if probe.returncode == 0 else None
    need = _setuptools_floor(snapshot / "pyproject.toml")
    pip = [python, "-m", "pip", "install", "--no-deps", "--quiet", "--disable-pip-version-check"]
    if have is not None and need is not None and _version(have) >= need:
        install = f"pip install --no-deps --no-build-isolation (the venv's setuptools {have})"
        pip.append("--no-build-isolation")
    else:
        needed = "setuptools>=" + ".".join(map(str, need)) if need else "the build requirements"
        install = f"pip install --no-deps, isolated build (the venv's setuptools {have or 'absent'} < {needed})"
    _run([*pip, str(snapshot)], "pip install", env=env)
    if have is not None:
        # Python 3.11's venv seeds setuptools, whose distutils-precedence.pth runs at every start; a venv on
        # Python 3.12+ and pipx's do not have it, so it goes once the build no longer needs it.
        _run([python, "-m", "pip", "uninstall", "-y", "-q", "setuptools"], "pip uninstall setuptools", env=env)
    code = "import sysconfig, wheypoint; print(wheypoint.__file__); print(sysconfig.get_paths()['purelib'])"
    where = _run([python, "-c", code], "import wheypoint", env=env, cwd=tempfile.gettempdir())
    package_file, purelib = where.strip().splitlines()
    if not Path(package_file).resolve().is_relative_to(path.resolve()):
        raise SystemExit(f"the venv imports wheypoint from {package_file}, not from its own install")
    version = json.loads(_run([str(path / "bin" / "wheypoint"), "--version"], "wheypoint --version", env=env))
    install = f"pip {pip_version}, {install}"
    facts = {"package": str(Path(package_file).parent), "install": install, "version": version.get("version", "?"),
             "pth": sorted(p.name for p in Path(purelib).glob("*.pth")), "python": platform.python_version(),
             "base": base, "built": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
             "build_seconds": round(time.perf_counter() - started, 1)}  # fmt: skip
    marker.write_text(json.dumps(facts, indent=1) + "\n", encoding="utf-8")
    print(f"  venv ready in {facts['build_seconds']} s ({install})", file=sys.stderr, flush=True)


def _prune_venvs(current: Path) -> None:
    """Remove all but the KEEP_VENVS most recently used clean venvs (each src edit makes a new one)."""
    venvs = [p for p in RESULTS_DIR.glob("venv-*") if p.is_dir()]
    used = sorted(venvs, key=lambda p: (p / "bench-venv.json").stat().st_mtime if (p / "bench-venv.json").exists()
                  else 0.0, reverse=True)  # fmt: skip
    for old in used[KEEP_VENVS:]:
        if old != current:
            shutil.rmtree(old, ignore_errors=True)
            old.with_name(old.name + ".lock").unlink(missing_ok=True)


def ensure_venv(root: Path = ROOT) -> Venv:
    """The clean venv for the project's current sources (or those of the tree at `root`):
    bench/results/venv-<fingerprint>, built on first use."""
    base = base_interpreter()
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="wheypoint-snapshot-") as tmp:
        snapshot = Path(tmp) / "wheypoint"
        _snapshot(snapshot, root)
        fingerprint = _fingerprint(snapshot, base)
        path = RESULTS_DIR / f"venv-{fingerprint}"
        marker = path / "bench-venv.json"
        with _locked(RESULTS_DIR / f"venv-{fingerprint}.lock"):
            if not marker.exists():
                _build_venv(base, snapshot, path, marker)
    os.utime(marker)  # most recently used
    _prune_venvs(path)
    return Venv(path, base, fingerprint, json.loads(marker.read_text(encoding="utf-8")))


KEEP_EXTRA_VENVS = 2  # clean venvs with an extra kept per extra (named <extra>-venv-<fingerprint>)


def extra_requirements(pyproject: Path, extra: str, project: str = "wheypoint") -> list[str]:
    """What `pip install '<project>[<extra>]'` adds: the extra's requirements, its own `<project>[...]` expanded."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        raise SystemExit("reading the project's extras needs Python 3.11+ (tomllib)") from None
    extras = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"].get("optional-dependencies", {})
    if extra not in extras:
        raise SystemExit(f"pyproject.toml has no extra {extra!r} (it has: {', '.join(extras) or 'none'})")
    found: list[str] = []
    for requirement in extras[extra]:
        own = re.fullmatch(rf"{re.escape(project)}\[([^\]]+)\]", requirement.strip())
        names = own.group(1).split(",") if own else []
        expanded = [r for name in names for r in extra_requirements(pyproject, name.strip(), project)]
        found += [r for r in (expanded if own else [requirement]) if r not in found]
    return found


def _install_extra(path: Path, extra: str, requirements: Sequence[str], marker: Path) -> dict[str, Any]:
    """pip install an extra's requirements (with their dependencies, from the index) into a built clean venv."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    python = str(path / "bin" / "python")
    started = time.perf_counter()
    _run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *requirements],
         f"pip install of the {extra} extra", env=env)  # fmt: skip
    listed = json.loads(_run([python, "-m", "pip", "list", "--format", "json", "--disable-pip-version-check"],
                             "pip list", env=env))  # fmt: skip
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = _run([python, "-c", code], "sysconfig", env=env, cwd=tempfile.gettempdir()).strip()
    facts = {"extra": extra, "requirements": list(requirements),
             "packages": {p["name"]: p["version"] for p in listed if p["name"] not in ("pip", "wheypoint")},
             "pth": sorted(p.name for p in Path(purelib).glob("*.pth")),
             "install_seconds": round(time.perf_counter() - started, 1)}  # fmt: skip
    marker.write_text(json.dumps(facts, indent=1) + "\n", encoding="utf-8")
    return facts


def ensure_venv_with(extra: str) -> Venv:
    """`ensure_venv`'s clean venv plus one of the project's extras, as `pip install 'wheypoint[<extra>]'` gives a user.

    Built the same way (a snapshot of the sources, `python -m venv`, a non-editable `pip install --no-deps` of
    the snapshot, setuptools removed), then the extra's requirements are installed from the index with their
    dependencies. It lives in bench/results/<extra>-venv-<fingerprint> (outside `ensure_venv`'s `venv-*` set,
    so neither prunes the other); the fingerprint is the same one `ensure_venv` uses.
    """
    base = base_interpreter()
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="wheypoint-snapshot-") as tmp:
        snapshot = Path(tmp) / "wheypoint"
        _snapshot(snapshot)
        requirements = extra_requirements(snapshot / "pyproject.toml", extra)
        fingerprint = _fingerprint(snapshot, base)
        path = RESULTS_DIR / f"{extra}-venv-{fingerprint}"
        marker, extra_marker = path / "bench-venv.json", path / f"bench-{extra}.json"
        with _locked(RESULTS_DIR / f"{path.name}.lock"):
            if not extra_marker.exists():
                _build_venv(base, snapshot, path, marker)  # starts afresh: removes a half-built one
                print(f"  installing the {extra} extra: {' '.join(requirements)}", file=sys.stderr, flush=True)
                _install_extra(path, extra, requirements, extra_marker)
    os.utime(extra_marker)  # most recently used
    kept = sorted((p for p in RESULTS_DIR.glob(f"{extra}-venv-*") if p.is_dir()), reverse=True,
                  key=lambda p: (p / f"bench-{extra}.json").stat().st_mtime if (p / f"bench-{extra}.json").exists()
                  else 0.0)  # fmt: skip
    for old in kept[KEEP_EXTRA_VENVS:]:
        if old != path:
            shutil.rmtree(old, ignore_errors=True)
            old.with_name(old.name + ".lock").unlink(missing_ok=True)
    facts = json.loads(marker.read_text(encoding="utf-8"))
    added = json.loads(extra_marker.read_text(encoding="utf-8"))
    facts["pth"] = added["pth"]
    facts["install"] += f"; then pip install {' '.join(added['requirements'])} ({added['extra']} extra: " + \
        ", ".join(f"{name} {version}" for name, version in sorted(added["packages"].items())) + ")"  # fmt: skip
    facts["extra"] = added
    return Venv(path, base, fingerprint, facts)


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


# --------------------------------------------------------------------------------------------- generated stores

STORE_BUILDER = "find-1"  # bump when the generated records change shape
CAPTURED_AT = "2026-11-30T00:00:00Z"
CHUNK = 500  # records a build worker prepares per task

# Slug words. None starts with "zephyr" or contains "quokka", so the targets below are the only matches.
_WORDS = ("amber", "birch", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper", "kelp",
          "lantern", "meadow", "nickel", "onyx", "pepper", "quartz", "raven", "saffron", "tundra", "umber",
          "velvet", "willow", "xenon", "yarrow", "zinc", "atlas", "beacon", "comet", "drift", "falcon", "glacier",
          "hollow", "iris", "jasper", "kestrel", "lumen", "marble", "nova", "orbit", "prism", "quill", "ripple",
          "summit", "timber", "vortex", "wren", "aspen", "bramble", "cinder")  # fmt: skip

# The grep word: planted in the notes of exactly GREP_HITS generated records at every size (and of the
# `show` target), found nowhere else.
GREP_WORD = "tombstone"
GREP_HITS = 36
_GREP_SENTENCES = ("The tombstone sweep keeps deleted works out of list results",
                   "Each tombstone row outlives compaction so a resolve can say why a slug is gone",
                   "A tombstone is written before the head index drops the work")  # fmt: skip


# A word of one of REASONS: a third or so of the generated works hold it (each decision and the orientation draw one).
COMMON_GREP_WORD = "benchmark"


def check_common(reply: dict[str, Any]) -> str:
    """`list --grep COMMON_GREP_WORD` (its first page) must be full: the word matches more works than a page."""
    if reply["count"] != 50:
        raise SystemExit(f"list --grep {COMMON_GREP_WORD} found {reply['count']} works: not a common word here")
    return f"{reply['count']} works (a full page)"


def grep_indices(size: int) -> frozenset[int]:
    """The generated records that mention GREP_WORD: GREP_HITS of them, spread evenly over the store."""
    count = min(GREP_HITS, size)
    return frozenset((k * size) // count + size // (2 * count) for k in range(count))


def bulk_intent(index: int, planted: bool) -> dict[str, Any]:
    """A realistic first checkpoint of work `index`: decisions, a question, notes and context lines."""
    rng = random.Random(f"{STORE_BUILDER}-{index}")
    slug = f"{rng.choice(_WORDS)}-{rng.choice(_WORDS)}-{index}"
    notes = notes_text(rng, index)
    if planted:
        notes += f" {rng.choice(_GREP_SENTENCES)}."
    decisions = [{"text": f"{sentence(rng)} (d{n} of {index})", "rationale": rng.choice(REASONS)}
                 for n in range(rng.randint(2, 4))]  # fmt: skip
    return {
        "slug": slug,
        "orientation": f"{sentence(rng)} {rng.choice(REASONS)} (item {index})",
        "next": {"move": "hold"},
        "decisions": decisions,
        "questions": [{"text": f"{question_text(rng)} (q of {index})"}],
        "notes": notes,
        "working_context": [f"{rng.choice(FILES)}:{rng.randint(1, 400)}",
                            f"Looked at {rng.choice(OBJECTS)} in {rng.choice(FILES)} while checking {index}"],
    }  # fmt: skip


def _prepare(task: tuple[int, int, frozenset[int]]) -> list[tuple[str, str, Any]]:
    """(work id, revision id, outcome) of records start..stop: validation and the kernel, off the writer."""
    from wheypoint.model.intake import require_valid
    from wheypoint.model.kernel import Provenance, apply, genesis_identity, request_digest, revision_id_for

    start, stop, planted = task
    prov = Provenance(project_key=PROJECT, captured_at=CAPTURED_AT)
    prepared = []
    for index in range(start, stop):
        intent = require_valid(bulk_intent(index, index in planted))
        _, work_id = genesis_identity(intent, PROJECT)
        # A first checkpoint's head is None, so applying it here gives what the store's build would.
        prepared.append((work_id, revision_id_for(work_id, None, request_digest(intent)), apply(None, intent, prov)))
    return prepared


def _first(outcome: Any) -> Callable[[dict[str, Any] | None], Any]:
    def build(head: dict[str, Any] | None) -> Any:
        if head is not None:
            raise SystemExit(f"the generated work {outcome.record['slug']} already exists: slugs must be unique")
        return outcome

    return build


def write_bulk_store(size: int, store_file: str) -> None:
    """Write `size` generated works in process, the store opened non-durable; workers prepare, this commits.

    Runs inside the clean venv (see `bulk_store`), so the records are written by the code being measured.
    """
    import multiprocessing

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


def copy_store_in_batches(source_file: str, target: str, batch: int = 5000) -> None:
    """Copy every revision of a SQLite store into another store (any `open_store` location), `batch` works a
    transaction, through the target's own `commit_stream` (the path `wheypoint import` takes, minus the bundle).

    For a bulk load that one transaction cannot hold (see pg_bench.py). Runs inside the clean venv.
    """
    from wheypoint.model.kernel import Outcome
    from wheypoint.store import open_store
    from wheypoint.store.rows import Write

    def stored(outcome: Any) -> Callable[[dict[str, Any] | None], Any]:
        return lambda head: outcome

    source = sqlite3.connect(f"file:{source_file}?mode=ro", uri=True)
    store = open_store(target, create=True)
    started, done = time.perf_counter(), 0
    try:
        work_ids = [row[0] for row in source.execute("SELECT work_id FROM works ORDER BY work_id")]
        for start in range(0, len(work_ids), batch):
            chunk = work_ids[start : start + batch]

            def writes(chunk: list[str] = chunk) -> Iterator[Any]:
                for work_id in chunk:
                    parent = None
                    rows = source.execute("SELECT record_json, revision_json FROM revisions WHERE work_id = ? "
                                          "ORDER BY number", (work_id,))  # fmt: skip
                    for record_json, revision_json in rows:
                        record, receipt = json.loads(record_json), json.loads(revision_json)
                        yield Write(work_id, parent, record["revision_id"], stored(Outcome(record, receipt, [])))
                        parent = record["revision_id"]

            store.commit_stream(writes())
            done += len(chunk)
            rate = done / (time.perf_counter() - started)
            print(f"  copied {done}/{len(work_ids)} works ({rate:.0f}/s)", file=sys.stderr, flush=True)
    finally:
        store.close()
        source.close()


# Prints the schema an empty store gets (its user_version and every sqlite_master row), made by the venv's code.
_SCHEMA_PROBE = """
import json, os, sqlite3, tempfile
from wheypoint.store.sqlite.backend import SqliteStore
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "store.sqlite3")
    SqliteStore.open(path, create=True, durable=False).close()
    conn = sqlite3.connect(path)
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").fetchall()
    conn.close()
print(json.dumps([version, rows]))
"""


def store_fingerprint(venv: Venv) -> str:
    """Names cached stores: the schema the installed migrations (store/sqlite/migrations.py) create, and the builder.

    The schema is taken as built (an empty store's user_version and DDL), not as the file's bytes: the
    file is refactored often without changing the schema, and each change would cost a 5-minute rebuild
    of the 100,000-work store. Only the schema is keyed: a store written by an older kernel is still a
    valid store of the same shape.
    """
    schema = _run([venv.python, "-c", _SCHEMA_PROBE], "the schema probe", cwd=tempfile.gettempdir())
    digest = hashlib.sha256(STORE_BUILDER.encode())
    digest.update(schema.encode())
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
    print(f"building a store of {size:,} records (cached as {target.name}) ...", file=sys.stderr, flush=True)
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


def bulk_store(size: int, venv: Venv, fingerprint: str) -> tuple[Path, str]:
    """(store, how it came about) of `size` generated works, cached as bench/results/stores/find-<size>-<fp>.sqlite3."""
    return venv_built_store(STORES_DIR / f"find-{size}-{fingerprint}.sqlite3", size, venv, "benchlib.write_bulk_store")


def venv_built_store(target: Path, size: int, venv: Venv, writer: str) -> tuple[Path, str]:
    """(store, how it came about): a store of `size` works that `writer` (`module.function` of bench/, called with
    the size and a path) writes, cached at `target`. The build runs in the clean venv's interpreter, so it uses
    the installed code, not the checkout's."""
    module = writer.split(".", 1)[0]
    cached = target.exists()

    def build(tmp: Path) -> Path:
        store_file = tmp / "store.sqlite3"
        code = (f"import sys; sys.path.insert(0, {str(BENCH_DIR)!r}); import {module}; "
                f"{writer}({size}, {str(store_file)!r})")  # fmt: skip
        subprocess.run([venv.python, "-c", code], check=True, cwd=tmp)
        return store_file

    store = cached_store(target, size, build)
    seconds = build_facts(store).get("build_seconds", "?")
    return store, f"{'cached, ' if cached else ''}built in {seconds} s"


def build_facts(store: Path) -> dict[str, object]:
    """What `cached_store` noted about a store's build (empty for a store cached by an older version)."""
    try:
        facts: dict[str, object] = json.loads(store.with_name(store.name + ".json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return facts


def stores_for(sizes: Sequence[int], venv: Venv) -> dict[int, tuple[Path | None, str]]:
    """Every size's generated store, built before any timing; size 1 means the target works alone."""
    fingerprint = store_fingerprint(venv) if max(sizes) > 1 else ""
    return {
        size: (None, "the target works only") if size == 1 else bulk_store(size, venv, fingerprint) for size in sizes
    }


# --------------------------------------------------------------------------------------------- scratch world


@dataclass(frozen=True)
class Target:
    """A work written into each measured copy of the store, and the reference that must find it."""

    slug: str
    ref: str
    matched_by: str


EXACT = Target("cobalt-ledger-handoff", "cobalt-ledger-handoff", "slug")
PREFIX = Target("zephyr-retry-budget", "zephyr-", "prefix")
SUBSTRING = Target("tune-quokka-cache", "quokka", "substring")
TARGETS_WORKS = (EXACT, PREFIX, SUBSTRING)

# The scratch repository each measurement runs in: files the targets' context lines pin.
_REPO_FILES = {"src/app.py": "".join(f"def step_{n}() -> int:\n    return {n}\n\n" for n in range(60)),
               "docs/design.md": "".join(f"Design note {n}: keep the head small.\n" for n in range(40)),
               "README.md": "A scratch repository for wheypoint's benchmarks.\n"}  # fmt: skip
_GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid", "GIT_COMMITTER_NAME": "bench",
            "GIT_COMMITTER_EMAIL": "bench@example.invalid"}  # fmt: skip


@dataclass
class World:
    """A fresh copy of a store, a real git checkout holding the target works' notes, and a transcript."""

    home: Path
    repo: Path
    env: dict[str, str]
    heads: dict[str, str]  # slug -> head revision id of each target work
    transcript: Path
    turns: int  # user turns `turns --transcript` must find
    works: int
    grep_hits: int  # works `list --grep GREP_WORD` must find


def make_repo(root: Path) -> None:
    """A real git repository with one commit, so resolve runs its git checks against the targets' anchor."""
    env = {**os.environ, **_GIT_ENV}
    for relative, text in _REPO_FILES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    steps = (["init", "-q", "-b", "main"], ["add", "-A"], ["-c", "commit.gpgsign=false", "commit", "-q", "-m", "start"])
    for argv in steps:
        subprocess.run(["git", "-C", str(root), *argv], env=env, check=True, capture_output=True)


def add_targets(venv: Venv, world: World) -> None:
    """Checkpoint the target works with the venv's `wheypoint checkpoint <intent.json>`, from the repository.

    Each one is recorded against the repository's HEAD, with line references into tracked files that
    get pinned, and its note is written under .cheese/notes/, so resolving it asks git whether the
    commit exists, how far HEAD moved and whether the pinned files changed, and compares the note, as
    it would for a handoff written in a real checkout. The `show` target also mentions GREP_WORD.
    """
    intents = world.home.parent / "intents"
    intents.mkdir()
    for number, target in enumerate(TARGETS_WORKS):
        rng = random.Random(f"target-{target.slug}")
        intent = bulk_intent(10**7 + number, planted=target is EXACT)
        intent["slug"] = target.slug
        intent["working_context"] = [f"src/app.py:{rng.randint(1, 170)}", f"docs/design.md:{rng.randint(1, 40)}",
                                     f"Looked at {rng.choice(OBJECTS)} in src/app.py"]  # fmt: skip
        path = intents / f"{target.slug}.json"
        path.write_text(json.dumps(intent), encoding="utf-8")
        reply = json.loads(timed([venv.wheypoint, "checkpoint", str(path)], world.env, world.repo)[1])
        if reply.get("ok") is not True:
            raise SystemExit(f"checkpoint of the target {target.slug} refused: {reply}")
        world.heads[target.slug] = reply["revision_id"]


def write_transcript(path: Path, cwd: Path) -> int:
    """A ~2 KB Claude Code session (a prompt, a tool call, its result, an answer); returns its user turns."""
    session, version = "5b0e6f4c-2d1a-4c7e-9a55-3f0c1d2e8b71", "2.1.42"
    common = {"isSidechain": False, "userType": "external", "cwd": str(cwd), "sessionId": session,
              "version": version, "gitBranch": "main"}  # fmt: skip
    usage = {"input_tokens": 6, "cache_read_input_tokens": 3057, "output_tokens": 48}
    lines: list[dict[str, Any]] = []
    parent: str | None = None

    def add(kind: str, message: dict[str, Any], **extra: Any) -> None:
        nonlocal parent
        uuid = f"00000000-0000-4000-8000-{len(lines):012d}"
        lines.append({"parentUuid": parent, **common, "type": kind, "message": message, "uuid": uuid,
                      "timestamp": f"2026-11-30T10:00:{len(lines) * 7:02d}.000Z", **extra})  # fmt: skip
        parent = uuid

    def said(text: str, n: int) -> dict[str, Any]:
        return {"model": "claude-opus-4-5", "id": f"msg_01bench{n}", "type": "message", "role": "assistant",
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "usage": usage}  # fmt: skip

    add("user", {"role": "user", "content": "Why does the retry budget reset after each deploy?"},
        permissionMode="default")  # fmt: skip
    add("assistant", {"model": "claude-opus-4-5", "id": "msg_01bench0", "type": "message", "role": "assistant",
                      "content": [{"type": "tool_use", "id": "toolu_01bench", "name": "Read",
                                   "input": {"file_path": str(cwd / "src" / "app.py")}}], "usage": usage},
        requestId="req_01bench0")  # fmt: skip
    add("user", {"role": "user", "content": [{"tool_use_id": "toolu_01bench", "type": "tool_result",
                                             "content": "def step_0() -> int:\n    return 0\n"}]})  # fmt: skip
    add("assistant", said("The budget lives in process memory, so a restart starts it from zero.", 1),
        requestId="req_01bench1")  # fmt: skip
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines), encoding="utf-8")
    return 1


def make_world(tmp: Path, venv: Venv, store: Path | None) -> World:
    """The scratch world in `tmp`: a copy of `store` (or none), the repository, the target works, a transcript."""
    home, repo = tmp / "home", tmp / PROJECT
    home.mkdir()
    repo.mkdir()
    make_repo(repo)
    if store is not None:
        shutil.copyfile(store, home / "store.sqlite3")
    world = World(home, repo, bench_env(home), {}, tmp / "session.jsonl", 0, 0, 0)
    add_targets(venv, world)
    world.turns = write_transcript(world.transcript, repo)
    world.works = count_works(home / "store.sqlite3")
    generated = world.works - len(TARGETS_WORKS)
    world.grep_hits = len(grep_indices(generated)) + 1 if generated else 1
    return world


_NOTES_WRITER = """
import os, sys
from wheypoint.notes.render import render
from wheypoint.store.sqlite.backend import SqliteStore
store_file, folder, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = SqliteStore.open(store_file, create=False)
try:
    ids = [row[0] for row in store.works_to_check()][:count]
    os.makedirs(folder, exist_ok=True)
    for start in range(0, len(ids), 500):
        for record in store.records(ids[start : start + 500]).values():
            with open(os.path.join(folder, record["slug"] + ".md"), "w", encoding="utf-8", newline="") as handle:
                handle.write(render(record))
finally:
    store.close()
print(len(ids))
"""


def write_notes(venv: Venv, world: World, count: int) -> int:
    """Give the checkout the notes of `count` of the store's works (as the venv renders them), as a checkout that
    wrote them holds them: commands that read the notes folder then pay what a real one costs. Returns how many."""
    if count <= 0:
        return 0
    folder = world.repo / ".cheese" / "notes"
    argv = [venv.python, "-c", _NOTES_WRITER, str(world.home / "store.sqlite3"), str(folder), str(count)]
    return int(_run(argv, "writing the works' notes").strip().splitlines()[-1])


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


def waited(argv: Sequence[str], env: dict[str, str], cwd: Path, stdin: bytes = b"") -> tuple[float, Any, bytes]:
    """(wall ms, the process's own resource usage from wait4, stdout) of one whole process; a failing process
    stops the benchmark. Replies are short, so stdout and stderr are read one after the other."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
                               env=env)  # fmt: skip
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    process.stdin.write(stdin)
    process.stdin.close()
    out, err = process.stdout.read(), process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)  # reaped here, for its own CPU time and peak memory
    elapsed = (time.perf_counter() - started) * 1000
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{list(argv)} exited {process.returncode}: {out!r} {err!r}")
    return elapsed, usage, out


def bench_env(home: Path) -> dict[str, str]:
    """The environment every measured process gets: the bench store, nothing that changes Python's start."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WHEYPOINT_", "PYTHON", "VIRTUAL_ENV"))}
    env["WHEYPOINT_HOME"] = str(home)
    return env


@dataclass
class Step:
    """One command of a round: its argv for a round number, a check of its first reply, a hook on each reply."""

    name: str
    argv: Callable[[int], list[str]]
    check: Callable[[dict[str, Any]], str]
    after: Callable[[dict[str, Any]], None] | None = None


@dataclass
class Rounds:
    """The baseline's and each command's kept times, and what each command's first reply was."""

    baseline: Series
    series: dict[str, Series]
    replies: dict[str, str]


def run_rounds(venv: Venv, world: World, steps: Sequence[Step], runs: int) -> Rounds:
    """WARMUP_ROUNDS discarded rounds, then `runs` kept ones: the baseline, then every step, back to back.

    The first round's replies are checked (a wrong answer stops the benchmark, so a fast failure is never
    timed); every reply goes to its step's `after` hook (a checkpoint's new head for the next round).
    """
    result = Rounds(Series("baseline"), {step.name: Series(step.name) for step in steps}, {})
    for round_number in range(WARMUP_ROUNDS + runs):
        keep = round_number >= WARMUP_ROUNDS
        elapsed, _ = timed(venv.baseline(), world.env, world.repo)
        if keep:
            result.baseline.times.append(elapsed)
        for step in steps:
            elapsed, out = timed(step.argv(round_number), world.env, world.repo)
            reply = json.loads(out)
            if round_number == 0:
                if reply.get("ok") is not True:
                    raise SystemExit(f"{step.name}: not ok: {out[:600]}")
                result.replies[step.name] = step.check(reply)
            if step.after is not None:
                step.after(reply)
            if keep:
                result.series[step.name].times.append(elapsed)
    return result


def check_resolve(target: Target) -> Callable[[dict[str, Any]], str]:
    """A check of `resolve <target.ref>`: that work, matched that way, authoritative or gated (never ambiguous)."""

    def check(reply: dict[str, Any]) -> str:
        if reply.get("matched_by") != target.matched_by or reply.get("outcome") not in ("authoritative", "gated"):
            raise SystemExit(f"resolve {target.ref}: expected matched_by {target.matched_by}, authoritative or "
                             f"gated: {json.dumps(reply)[:600]}")  # fmt: skip
        if reply["slug"] != target.slug:
            raise SystemExit(f"resolve {target.ref}: resolved {reply['slug']}, not {target.slug}")
        codes = ", ".join(sorted({f["code"] for f in reply.get("findings", [])})) or "no findings"
        return f"{reply['outcome']} ({codes})"

    return check


def check_show(reply: dict[str, Any]) -> str:
    if reply["record"]["slug"] != EXACT.slug:
        raise SystemExit(f"show answered {reply['record']['slug']}, not {EXACT.slug}")
    return f"note {reply['note']['state']}"


def check_list(world: World) -> Callable[[dict[str, Any]], str]:
    def check(reply: dict[str, Any]) -> str:
        if reply["count"] != world.grep_hits:
            raise SystemExit(f"list --grep {GREP_WORD} found {reply['count']} works, not {world.grep_hits}")
        return f"{reply['count']} work" + ("" if reply["count"] == 1 else "s")

    return check


# --------------------------------------------------------------------------------------------- report


def verdict(value: float, target: float) -> str:
    return "PASS" if value <= target else "MISS"


def git_head() -> str:
    """HEAD's short sha, and whether the installed sources differ from it (they are being edited)."""
    sha = _run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], "git rev-parse").strip()
    dirty = _run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "src", "pyproject.toml"], "git status")
    return f"{sha}{' (src/ has uncommitted changes: the venv holds the working tree)' if dirty.strip() else ''}"


def floors(venv: Venv, rounds: int = 10) -> tuple[float, float]:
    """(venv baseline ms, the machine interpreter's) medians: what the venv leaves out of every start."""
    with tempfile.TemporaryDirectory(prefix="wheypoint-floor-") as tmp:
        env = bench_env(Path(tmp))
        clean, machine = [], []
        for _ in range(rounds):
            clean.append(timed(venv.baseline(), env, Path(tmp))[0])
            machine.append(timed([venv.base, "-c", BASELINE_CODE], env, Path(tmp))[0])
    return statistics.median(clean), statistics.median(machine)


def machine_facts(venv: Venv, floor: tuple[float, float]) -> list[str]:
    pth = ", ".join(venv.facts["pth"]) or "none"
    return [
        f"- interpreter: Python {platform.python_version()} ({platform.python_implementation()}), `{venv.base}`",
        f"- venv: `{venv.path}` (clean, `python -m venv`; {venv.facts['install']}; .pth files: {pth}); "
        f"commands run as `{venv.wheypoint} ...`",
        f"- wheypoint: {venv.facts['version']}, git HEAD {git_head()}",
        f"- sqlite: {sqlite3.sqlite_version}; cpus: {os.cpu_count()}; platform: {platform.platform()}; "
        "load average: " + " ".join(f"{x:.2f}" for x in os.getloadavg()),
        f"- date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}",
        f"- baseline `{' '.join(venv.baseline()[:2])} '{BASELINE_CODE}'`: {floor[0]:.1f} ms; the same from the "
        "machine's "
        f"interpreter outside the venv (its site-packages .pth files included): {floor[1]:.1f} ms",
    ]


# --------------------------------------------------------------------------------------------- command line


def parse_bench_args(
    argv: Sequence[str] | None, description: str | None, name: str, default_sizes: str
) -> tuple[argparse.Namespace, list[int]]:
    """The options every store-size benchmark takes: --sizes, --runs, --out."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--sizes", default=default_sizes,
                        help=f"store sizes in works, comma separated (default {default_sizes})")  # fmt: skip
    parser.add_argument("--runs", type=int, default=20, help="measured rounds per size (default 20)")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"where to write the report too (default bench/results/{name}.md)")  # fmt: skip
    args = parser.parse_args(argv)
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    if args.runs < 1 or not sizes or min(sizes) < 1:
        parser.error("--runs and every size must be at least 1")
    return args, sizes


def publish(text: str, out: Path | None, name: str) -> None:
    """Print the report and write it (by default to bench/results/<name>.md)."""
    print(text)
    target = out or RESULTS_DIR / f"{name}.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


Result = TypeVar("Result")


def run_sized_bench(
    argv: Sequence[str] | None, doc: str | None, name: str, default_sizes: str,
    measure: Callable[[Venv, int, Path | None, str, int], Result],
    report: Callable[[Venv, tuple[float, float], list[Result], int], str],
) -> int:  # fmt: skip
    """The whole run of a benchmark over store sizes: venv, stores (built before any timing), rounds, report."""
    started = time.perf_counter()
    args, sizes = parse_bench_args(argv, doc, name, default_sizes)
    venv = ensure_venv()
    print(f"interpreter {venv.base} (Python {venv.facts['python']}), venv {venv.path}, git HEAD {git_head()}",
          flush=True)  # fmt: skip
    stores = stores_for(sizes, venv)  # every build happens before any timing
    floor = floors(venv)
    results = [measure(venv, size, store, how, args.runs) for size, (store, how) in stores.items()]
    publish(report(venv, floor, results, args.runs), args.out, name)
    print(f"wall time {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


@dataclass
class SizeResult:
    """What one store size measured: its size, its works, how the store was had, and the timed rounds."""

    size: int
    works: int
    how: str
    rounds: Rounds


def report_head(title: str, venv: Venv, floor: tuple[float, float], results: list[SizeResult], runs: int) -> list[str]:
    """The opening lines every sized benchmark's report shares: title, machine, rounds and stores."""
    return [f"# wheypoint {title} benchmark", "", *machine_facts(venv, floor),
            f"- rounds per size: {runs} kept after {WARMUP_ROUNDS} warm-up rounds; each round runs the baseline, "
            "then " + ", ".join(results[0].rounds.series),
            "- stores: " + "; ".join(f"{r.size:,}: {r.how}" for r in results), ""]  # fmt: skip
