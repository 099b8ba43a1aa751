"""Wall time of wheypoint show, list --grep and resolve (slug, prefix, substring) by store size, in a clean venv."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import benchlib as bl

# Flatness: each command's ratio at the largest size within this factor of its ratio at the smallest.
FLAT_TARGET = 1.5
# Each command's start-up target: the start-up benchmark's, every kind of resolve held to resolve's.
TARGET_OF = {"show": bl.TARGETS["show"], "list --grep": bl.TARGETS["list --grep"]}


def steps_for(venv: bl.Venv, world: bl.World) -> list[bl.Step]:
    """show, list --grep and the three kinds of resolve, as a user types them (off a terminal, replies are JSON)."""
    wp = venv.wheypoint
    return [
        bl.Step("show", lambda n: [wp, "show", bl.EXACT.slug], bl.check_show),
        bl.Step("list --grep", lambda n: [wp, "list", "--grep", bl.GREP_WORD], bl.check_list(world)),
        *(bl.Step(f"resolve {t.matched_by}", lambda n, t=t: [wp, "resolve", t.ref], bl.check_resolve(t))
          for t in bl.TARGETS_WORKS),
    ]  # fmt: skip


def measure(venv: bl.Venv, size: int, store: Path | None, how: str, runs: int) -> bl.SizeResult:
    print(f"measuring the store of {size:,} works ...", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(prefix="wheypoint-find-") as tmp:
        world = bl.make_world(Path(tmp), venv, store)
        rounds = bl.run_rounds(venv, world, steps_for(venv, world), runs)
    return bl.SizeResult(size, world.works, how, rounds)


def _target(name: str) -> float:
    return TARGET_OF.get(name, bl.TARGETS["resolve"])


def _checks(results: list[bl.SizeResult]) -> Iterator[str]:
    for r in results:
        for name, series in r.rounds.series.items():
            value, target = series.paired(r.rounds.baseline), _target(name)
            yield f"| {name} / baseline @ {r.size:,} | {value:.2f}x | <= {target}x | {bl.verdict(value, target)} |"
    if len(results) > 1:
        small, large = results[0], results[-1]
        for name in large.rounds.series:
            big, one = large.rounds.series[name], small.rounds.series[name]
            # A ratio of ratios: a drift of the machine between the two sizes cancels out.
            value = big.paired(large.rounds.baseline) / one.paired(small.rounds.baseline)
            raw = big.median() / one.median()
            yield (f"| {name} flatness {large.size:,} / {small.size:,} | {value:.2f}x (raw ms {raw:.2f}x) "
                   f"| <= {FLAT_TARGET}x | {bl.verdict(value, FLAT_TARGET)} |")  # fmt: skip


def report(venv: bl.Venv, floor: tuple[float, float], results: list[bl.SizeResult], runs: int) -> str:
    lines = [*bl.report_head("find", venv, floor, results, runs),
             "Ratios: the median of per-round ratios (command over the same round's baseline), then the ratio of "
             "medians in brackets.", "",
             "| store | works | baseline ms | command | ms | ratio | reply |",
             "|---:|---:|---:|---|---:|---:|---|"]  # fmt: skip
    for r in results:
        base = r.rounds.baseline
        for name, series in r.rounds.series.items():
            lines.append(f"| {r.size:,} | {r.works:,} | {base.median():.1f} | {name} | {series.median():.1f} | "
                         f"{series.cell(base)} | {r.rounds.replies[name]} |")  # fmt: skip
    lines += ["", "## Targets", "", "| check | value | target | verdict |", "|---|---:|---:|---|", *_checks(results)]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    return bl.run_sized_bench(argv, __doc__, "find", "1000,10000,100000", measure, report)


if __name__ == "__main__":
    sys.exit(main())
