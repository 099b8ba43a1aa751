"""Start-up cost of wheypoint's everyday commands in a clean venv, by store size, as ratios to a same-run baseline."""

from __future__ import annotations

import random
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import benchlib as bl

# The update target: validated, then checkpointed with --base, every round (show and resolve read another work).
UPDATED = bl.PREFIX


def steps_for(venv: bl.Venv, world: bl.World, size: int) -> list[bl.Step]:
    """The commands of one round, in order, as a user types them (no --project, no --format: off a terminal, JSON)."""
    wp = venv.wheypoint
    rng = random.Random(size)
    head = {"base": world.heads[UPDATED.slug]}

    def validate(n: int) -> list[str]:
        return [wp, "validate", UPDATED.slug, "--base", head["base"],
                "--decision", f"{bl.sentence(rng)} (round {n})", "--rationale", rng.choice(bl.REASONS)]  # fmt: skip

    def update(n: int) -> list[str]:
        # The work comes first: `checkpoint --base ...` with a flag first is refused as a usage error.
        return [wp, "checkpoint", UPDATED.slug, "--base", head["base"],
                "--orientation", f"{bl.sentence(rng)} (round {n})", "--next", "hold",
                "--decision", f"{bl.sentence(rng)} (round {n})", "--rationale", rng.choice(bl.REASONS)]  # fmt: skip

    def new(n: int) -> list[str]:
        """A first checkpoint as rich as the stored ones, its line reference pinned to a tracked file."""
        flags = [wp, "checkpoint", f"fresh-{size}-{n:04d}", "--orientation", f"{bl.sentence(rng)} (new {n})",
                 "--next", "hold"]  # fmt: skip
        for number in range(rng.randint(2, 4)):
            flags += ["--decision", f"{bl.sentence(rng)} (d{number} of {n})", "--rationale", rng.choice(bl.REASONS)]
        return [*flags, "--question", f"{bl.question_text(rng)} (q of {n})", "--notes", bl.notes_text(rng, n),
                "--context", f"src/app.py:{rng.randint(1, 170)}",
                "--context", f"Looked at {rng.choice(bl.OBJECTS)} in src/app.py while checking {n}"]  # fmt: skip

    def moved(reply: dict[str, Any]) -> None:
        head["base"] = reply["revision_id"]

    def check_validate(reply: dict[str, Any]) -> str:
        if reply.get("valid") is not True or reply.get("parent_revision_id") != head["base"]:
            raise SystemExit(f"validate: not a valid update of {head['base']}: {reply}")
        return f"valid (would write revision {reply['revision_number']})"

    def check_update(reply: dict[str, Any]) -> str:
        if reply.get("parent_revision_id") != head["base"]:
            raise SystemExit(f"checkpoint update: not built on {head['base']}: {reply}")
        return f"revision {reply['revision_number']}, note written" if reply.get("note_path") else "no note"

    def check_new(reply: dict[str, Any]) -> str:
        if reply.get("revision_number") != 1:
            raise SystemExit(f"checkpoint new: not a first revision: {reply}")
        return "revision 1, note written" if reply.get("note_path") else "revision 1, no note"

    def check_turns(reply: dict[str, Any]) -> str:
        turns = reply.get("turns", [])
        if len(turns) != world.turns:
            raise SystemExit(f"turns found {len(turns)} user turns, not {world.turns}: {reply}")
        return f"{len(turns)} user turn" + ("" if len(turns) == 1 else "s")

    return [
        bl.Step("show", lambda n: [wp, "show", bl.EXACT.slug], bl.check_show),
        bl.Step("list --grep", lambda n: [wp, "list", "--grep", bl.GREP_WORD], bl.check_list(world)),
        bl.Step("resolve", lambda n: [wp, "resolve", bl.EXACT.ref], bl.check_resolve(bl.EXACT)),
        bl.Step("validate", validate, check_validate),
        bl.Step("checkpoint update", update, check_update, moved),
        bl.Step("checkpoint new", new, check_new),
        bl.Step("turns", lambda n: [wp, "turns", "--transcript", str(world.transcript)], check_turns),
    ]


def measure(venv: bl.Venv, size: int, store: Path | None, how: str, runs: int) -> bl.SizeResult:
    print(f"measuring the store of {size:,} works ...", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(prefix="wheypoint-startup-") as tmp:
        world = bl.make_world(Path(tmp), venv, store)
        rounds = bl.run_rounds(venv, world, steps_for(venv, world, size), runs)
    return bl.SizeResult(size, world.works, how, rounds)


def report(venv: bl.Venv, floor: tuple[float, float], results: list[bl.SizeResult], runs: int) -> str:
    names = list(bl.TARGETS)
    lines = [*bl.report_head("start-up", venv, floor, results, runs),
             "Each cell: the median of per-round ratios (command over the same round's baseline), then the ratio "
             "of medians in brackets, then the verdict against the target (PASS if the first is at most it).", "",
             "| store | works | baseline ms | " + " | ".join(names) + " |",
             "|---:|---:|---:|" + "---:|" * len(names),
             "| target | | | " + " | ".join(f"<= {bl.TARGETS[name]}x" for name in names) + " |"]  # fmt: skip
    for r in results:
        cells = []
        for name in names:
            series = r.rounds.series[name]
            target = bl.TARGETS[name]
            cells.append(f"{series.cell(r.rounds.baseline)} {bl.verdict(series.paired(r.rounds.baseline), target)}")
        lines.append(f"| {r.size:,} | {r.works:,} | {r.rounds.baseline.median():.1f} | " + " | ".join(cells) + " |")
    lines += ["", "Median wall times (ms):", "", "| store | baseline | " + " | ".join(names) + " |",
              "|---:|---:|" + "---:|" * len(names)]  # fmt: skip
    for r in results:
        ms = " | ".join(f"{r.rounds.series[name].median():.1f}" for name in names)
        lines.append(f"| {r.size:,} | {r.rounds.baseline.median():.1f} | {ms} |")
    if len(results) > 1:
        small, large = results[0], results[-1]
        flat = []
        for name in names:
            big, one = large.rounds.series[name], small.rounds.series[name]
            flat.append(f"{name} {big.paired(large.rounds.baseline) / one.paired(small.rounds.baseline):.2f}x")
        lines += ["", f"Flatness (ratio at {large.size:,} over ratio at {small.size:,}): {', '.join(flat)}."]
    lines += ["", "Replies (checked once per size before timing): "
              + "; ".join(f"{r.size:,}: " + ", ".join(f"{k} {v}" for k, v in r.rounds.replies.items())
                          for r in results)]  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    return bl.run_sized_bench(argv, __doc__, "startup", "1,10000,100000", measure, report)


if __name__ == "__main__":
    sys.exit(main())
