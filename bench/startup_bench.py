"""Start-up cost of wheypoint's everyday commands in a clean venv, by store size, as ratios to a same-run baseline.

--notes N also gives the checkout the notes of N of the store's works, as a checkout that wrote them holds them.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import benchlib as bl

# The update target: validated, then checkpointed with --base, every round (show and resolve read another work).
UPDATED = bl.PREFIX
# The single-file runtime's rows: `<interpreter the venv was made from> -I -S wheypoint.pyz ...`, as the skill runs it
# (-S: the runtime needs nothing `site` adds, and that interpreter's own site-packages .pth files cost it tens of
# milliseconds), beside the baseline that interpreter pays on the same terms.
BARE_BASELINE = "bare -I -S baseline"
BARE_CODE = bl.BASELINE_CODE + "; print('{\"ok\": true}')"  # a JSON reply, as every timed step must print
# The same code as a zip archive's `__main__` (`-I -S baseline.pyz`): CPython runs any archive through `runpy`, whose
# imports a `-c` program does not pay, so this is the floor of any single-file Python program on that interpreter.
ZIPAPP_BASELINE = "zipapp -I -S baseline"
PYZ_ROWS = {"pyz show": "show", "pyz checkpoint new": "checkpoint new", "pyz checkpoint update": "checkpoint update"}
PYZ: dict[str, Any] = {}  # the archive the run measures: folder (main), then path, sha256, source_digest
# --notes N: the checkout also holds the notes of N of the store's works, as one that wrote them does (list, which
# looks for hand-written notes among them, and a checkpoint, which writes beside them, then pay what they cost there).
NOTES = {"count": 0}


def ensure_pyz(venv: bl.Venv) -> None:
    """Build wheypoint.pyz once from the checkout's src/ (tools/build_pyz.py), and note the venv's source digest."""
    if "path" in PYZ:
        return
    argv = [sys.executable, str(bl.ROOT / "tools" / "build_pyz.py"), "--out", str(PYZ["folder"] / "wheypoint.pyz")]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"tools/build_pyz.py failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    PYZ.update(json.loads(done.stdout))
    import zipfile

    PYZ["baseline"] = str(PYZ["folder"] / "baseline.pyz")
    with zipfile.ZipFile(PYZ["baseline"], "w") as archive:
        archive.writestr("__main__.py", BARE_CODE + "\n")
    version = subprocess.run([venv.wheypoint, "--version"], capture_output=True, text=True, check=False)
    PYZ["venv_digest"] = json.loads(version.stdout).get("source_digest") if version.returncode == 0 else None


def steps_for(venv: bl.Venv, world: bl.World, size: int) -> list[bl.Step]:
    """The commands of one round, in order, as a user types them (no --project, no --format: off a terminal, JSON)."""
    wp = venv.wheypoint
    rng = random.Random(size)
    head = {"base": world.heads[UPDATED.slug]}

    def validate(n: int) -> list[str]:
        return [wp, "validate", UPDATED.slug, "--base", head["base"],
                "--decision", f"{bl.sentence(rng)} (round {n})", "--rationale", rng.choice(bl.REASONS)]  # fmt: skip

    def naming(n: int) -> list[str]:
        """An update whose texts name secrets (a password, a token) and hold none: what wakes the credential scan's
        proximity rule and the prose rules, as many a real session's words do."""
        return [wp, "validate", UPDATED.slug, "--base", head["base"],
                "--decision", f"Rotate the deploy token before the release (round {n}).",
                "--rationale", "The password manager holds the old one; the API key expires in May."]  # fmt: skip

    def update(n: int) -> list[str]:
        # The work comes first: `checkpoint --base ...` with a flag first is refused as a usage error.
        return [wp, "checkpoint", UPDATED.slug, "--base", head["base"],
                "--orientation", f"{bl.sentence(rng)} (round {n})", "--next", "hold",
                "--decision", f"{bl.sentence(rng)} (round {n})", "--rationale", rng.choice(bl.REASONS)]  # fmt: skip

    def new(n: int, tag: str = "") -> list[str]:
        """A first checkpoint as rich as the stored ones, its line reference pinned to a tracked file."""
        flags = [wp, "checkpoint", f"fresh{tag}-{size}-{n:04d}", "--orientation", f"{bl.sentence(rng)} (new {n})",
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

    bare = [venv.base, "-I", "-S"]
    pyz = [*bare, PYZ["path"]]
    single = [
        bl.Step(BARE_BASELINE, lambda n: [*bare, "-c", BARE_CODE], lambda reply: "ran"),
        bl.Step(ZIPAPP_BASELINE, lambda n: [*bare, PYZ["baseline"]], lambda reply: "ran"),
        bl.Step("pyz show", lambda n: [*pyz, "show", bl.EXACT.slug], bl.check_show),
        bl.Step("pyz checkpoint new", lambda n: [*pyz, *new(n, "-pyz")[1:]], check_new),
        bl.Step("pyz checkpoint update", lambda n: [*pyz, *update(n)[1:]], check_update, moved),
    ]  # fmt: skip
    return [
        bl.Step("show", lambda n: [wp, "show", bl.EXACT.slug], bl.check_show),
        bl.Step("list --grep", lambda n: [wp, "list", "--grep", bl.GREP_WORD], bl.check_list(world)),
        bl.Step("resolve", lambda n: [wp, "resolve", bl.EXACT.ref], bl.check_resolve(bl.EXACT)),
        bl.Step("validate", validate, check_validate),
        bl.Step("validate, naming a secret", naming, check_validate),
        bl.Step("checkpoint update", update, check_update, moved),
        bl.Step("checkpoint new", new, check_new),
        bl.Step("turns", lambda n: [wp, "turns", "--transcript", str(world.transcript)], check_turns),
        *single,
    ]


def measure(venv: bl.Venv, size: int, store: Path | None, how: str, runs: int) -> bl.SizeResult:
    print(f"measuring the store of {size:,} works ...", file=sys.stderr, flush=True)
    ensure_pyz(venv)
    with tempfile.TemporaryDirectory(prefix="wheypoint-startup-") as tmp:
        world = bl.make_world(Path(tmp), venv, store)
        notes = bl.write_notes(venv, world, NOTES["count"])
        rounds = bl.run_rounds(venv, world, steps_for(venv, world, size), runs)
    held = f", and the checkout holds the notes of {notes:,} of its works" if NOTES["count"] else ""
    return bl.SizeResult(size, world.works, how + held, rounds)


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
    lines += ["", *pyz_report(venv, results)]
    return "\n".join(lines) + "\n"


def pyz_report(venv: bl.Venv, results: list[bl.SizeResult]) -> list[str]:
    """The single-file runtime's rows: over the venv's baseline (as every row above), the bare one, the package."""
    rows = list(PYZ_ROWS)
    same = "the same sources as" if PYZ.get("venv_digest") == PYZ["source_digest"] else "NOT the sources of"
    lines = ["## The single-file runtime", "",
             f"`{venv.base} -I -S {PYZ['path']} ...` (built by tools/build_pyz.py; sha256 {PYZ['sha256'][:16]}..., "
             f"source digest {PYZ['source_digest'][:23]}..., {same} the venv's install). `{BARE_BASELINE}` is "
             f"`{venv.base} -I -S -c '{bl.BASELINE_CODE}'`: the interpreter outside the venv, without its "
             f"site-packages (as the pyz runs); `{ZIPAPP_BASELINE}` is the same code as a zip archive's `__main__`, "
             "run as the pyz is (through `runpy`, as CPython runs any archive). Each cell: the median of per-round "
             "ratios [ratio of medians].", "",
             "| store | ratio to | " + " | ".join([BARE_BASELINE, ZIPAPP_BASELINE, *rows]) + " |",
             "|---:|---|" + "---:|" * (len(rows) + 2),
             "| target | | | | " + " | ".join(f"<= {bl.TARGETS[PYZ_ROWS[r]]}x" for r in rows)
             + " |"]  # fmt: skip
    for r in results:
        base, series = r.rounds.baseline, r.rounds.series
        bare, zipapp = series[BARE_BASELINE], series[ZIPAPP_BASELINE]
        for name, under, floors in (("venv baseline", base, f"{bare.cell(base)} | {zipapp.cell(base)}"),
                                    (BARE_BASELINE, bare, f"1.00x | {zipapp.cell(bare)}"),
                                    (ZIPAPP_BASELINE, zipapp, f"{bare.cell(zipapp)} | 1.00x")):  # fmt: skip
            cells = [f"{series[n].cell(under)} {bl.verdict(series[n].paired(under), bl.TARGETS[PYZ_ROWS[n]])}"
                     for n in rows]  # fmt: skip
            lines.append(f"| {r.size:,} | {name} | {floors} | " + " | ".join(cells) + " |")
        package = " | ".join(series[n].cell(series[PYZ_ROWS[n]]) for n in rows)
        lines.append(f"| {r.size:,} | the package's command | | | {package} |")
    floors = [BARE_BASELINE, ZIPAPP_BASELINE]
    lines += ["", "Median wall times (ms):", "", "| store | venv baseline | " + " | ".join([*floors, *rows]) + " |",
              "|---:|---:|" + "---:|" * (len(rows) + 2)]  # fmt: skip
    for r in results:
        ms = " | ".join(f"{r.rounds.series[name].median():.1f}" for name in [*floors, *rows])
        lines.append(f"| {r.size:,} | {r.rounds.baseline.median():.1f} | {ms} |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    extra = argparse.ArgumentParser(add_help=False)
    extra.add_argument("--notes", type=int, default=0)
    known, rest = extra.parse_known_args(sys.argv[1:] if argv is None else argv)
    NOTES["count"] = known.notes
    with tempfile.TemporaryDirectory(prefix="wheypoint-pyz-") as folder:
        PYZ["folder"] = Path(folder)  # built there on the first measure, once the options are read
        return bl.run_sized_bench(rest, __doc__, "startup", "1,10000,100000", measure, report)


if __name__ == "__main__":
    sys.exit(main())
