"""Wall time of wheypoint show and checkpoint by store size, as ratios to a same-run interpreter baseline."""

from __future__ import annotations

import json
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchlib import (
    FILES,
    OBJECTS,
    PROJECT,
    REASONS,
    STORES_DIR,
    WARMUP_ROUNDS,
    Interpreter,
    Series,
    baseline_label,
    bench_env,
    cached_store,
    commands,
    count_works,
    machine_facts,
    measure_sizes,
    notes_text,
    parse_bench_args,
    publish,
    question_text,
    resolve_interpreter,
    sentence,
    site_floor,
    store_fingerprint,
    timed,
    verdict,
)

BUILDER_VERSION = "1"  # bump when the generated records change shape

# Targets from the issue: ratios to the `-c "import json, sqlite3"` baseline, and flatness in store size.
SHOW_TARGET = 1.5
CHECKPOINT_TARGET = 2.5
FLAT_TARGET = 1.2


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
        return series.ratio(self.baseline)

    def pair_ratio(self, series: Series) -> float:
        """Median of per-round ratios: each run over the baseline run of the same round."""
        return series.pair_ratio(self.baseline)


# --------------------------------------------------------------------------------------------- store build


def record_flags(rng: random.Random, index: int, slug: str) -> list[str]:
    """Checkpoint flags for one realistic first revision: decisions, a question, notes and context."""
    flags = [slug, "--orientation", f"{sentence(rng)} {rng.choice(REASONS)} (item {index})",
             "--next", "hold"]  # fmt: skip
    for number in range(rng.randint(2, 4)):
        flags += ["--decision", f"{sentence(rng)} (d{number} of {index})", "--rationale", rng.choice(REASONS)]
    flags += ["--question", f"{question_text(rng)} (q of {index})"]
    flags += ["--notes", notes_text(rng, index)]
    flags += ["--context", f"{rng.choice(FILES)}:{rng.randint(1, 400)}"]
    flags += ["--context", f"Looked at {rng.choice(OBJECTS)} in {rng.choice(FILES)} while checking {index}"]
    return flags


def slug_for(index: int) -> str:
    return f"work-{index:05d}"


def build_store(size: int, home: Path, scratch: Path) -> None:
    """Write `size` works, one first checkpoint each, through wheypoint's own service layer."""
    from wheypoint.app.context import Context, NoteOptions
    from wheypoint.cli.flags import parse_intent_command

    try:
        from wheypoint.app.checkpoint import checkpoint
    except ImportError:  # the layout before the write path moved out of service
        from wheypoint.app.context import checkpoint  # type: ignore[attr-defined,no-redef]

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


def _build(size: int, tmp: Path) -> Path:
    home, scratch = tmp / "home", tmp / "cwd"
    scratch.mkdir()
    build_store(size, home, scratch)
    return home / "store.sqlite3"


def core_store(size: int, fingerprint: str) -> Path:
    """Path of a built store of `size` records, built once and cached under bench/results/stores/."""
    return cached_store(STORES_DIR / f"store-{size}-{fingerprint}.sqlite3", size, lambda tmp: _build(size, tmp))


# --------------------------------------------------------------------------------------------- measuring


def measure_size(python: str, source: Path, size: int, runs: int, no_site: bool = False) -> SizeResult:
    """Interleave baseline / show / checkpoint(update) / checkpoint(new) rounds on a fresh copy of the store."""
    with tempfile.TemporaryDirectory(prefix="wheypoint-bench-") as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "cwd"
        home.mkdir()
        cwd.mkdir()
        shutil.copyfile(source, home / "store.sqlite3")
        records = count_works(home / "store.sqlite3")
        env = bench_env(home)
        slug = slug_for(size // 2)
        baseline_argv, wp = commands(python, no_site)
        _, out = timed([*wp, "show", slug, "--project", PROJECT, "--format", "json"], env, cwd)
        base = json.loads(out)["record"]["revision_id"]
        rng = random.Random(size)
        baseline, show, update, new = Series("baseline"), Series("show"), Series("update"), Series("new")
        for round_number in range(WARMUP_ROUNDS + runs):
            keep = round_number >= WARMUP_ROUNDS
            elapsed, _ = timed(baseline_argv, env, cwd)
            if keep:
                baseline.times.append(elapsed)
            elapsed, _ = timed([*wp, "show", slug, "--project", PROJECT, "--format", "json"], env, cwd)
            if keep:
                show.times.append(elapsed)
            # The work comes first: `checkpoint --base ...` with a flag first is refused as a usage error.
            update_argv = [*wp, "checkpoint", slug, "--base", base,
                           "--orientation", f"{sentence(rng)} (round {round_number})", "--next", "hold",
                           "--decision", f"{sentence(rng)} (round {round_number})",
                           "--rationale", rng.choice(REASONS), "--project", PROJECT, "--no-note"]  # fmt: skip
            elapsed, out = timed(update_argv, env, cwd)
            base = json.loads(out)["revision_id"]
            if keep:
                update.times.append(elapsed)
            new_argv = [*wp, "checkpoint", *record_flags(rng, size + round_number, f"fresh-{round_number:04d}"),
                        "--project", PROJECT, "--no-note"]  # fmt: skip
            elapsed, _ = timed(new_argv, env, cwd)
            if keep:
                new.times.append(elapsed)
    return SizeResult(size, records, baseline, show, update, new)


# --------------------------------------------------------------------------------------------- report


def report(interp: Interpreter, site: tuple[float, float], results: list[SizeResult], runs: int, no_site: bool) -> str:
    lines = ["# wheypoint core benchmark", "", *machine_facts(interp, site), f"- runs per command per size: {runs} "
             f"(after {WARMUP_ROUNDS} warm-up rounds), interleaved baseline / show / update / new", "",
             f"Baseline: {baseline_label(interp, no_site)}"
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
            lines.append(f"| {label} / baseline @ {r.size:,} | {value:.2f}x | < {target}x | {verdict(value, target)} |")
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
                         f"| < {FLAT_TARGET}x | {verdict(value, FLAT_TARGET)} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args, sizes = parse_bench_args(argv, __doc__, "core", "1,1000,10000")
    interp = resolve_interpreter()
    fingerprint = store_fingerprint(BUILDER_VERSION)
    stores = {size: core_store(size, fingerprint) for size in sizes}  # every build happens before any timing
    site = site_floor(interp.path)
    results = measure_sizes(interp.path, stores, args.runs, args.no_site, measure_size)
    publish(report(interp, site, results, args.runs, args.no_site), args.out, "core", args.no_site)
    return 0


if __name__ == "__main__":
    sys.exit(main())
