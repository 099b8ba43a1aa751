"""This tree's start-up against an earlier revision's: each command of startup_bench.py, the two interleaved.

Both are installed into clean venvs exactly as startup_bench.py installs the current tree (the older one from
`git archive <revision>`), each given its own scratch world (a store holding the target works, a git checkout,
a transcript). Every round runs the baseline (`python -c "import json, sqlite3"`) and each command once per
venv, the order of the two venvs swapped every round, so both meet the same machine. Reported per command: the
median wall time and CPU time (user + system, the process's own from wait4) of each, and this tree over the
revision as the median of per-round ratios. CPU time is the steadier of the two on a shared machine.

    python3 bench/startup_against.py --against <revision> [--runs 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import benchlib as bl
import startup_bench

WARMUP = 2


def timed(argv: list[str], world: bl.World) -> tuple[float, float, str]:
    """(wall ms, CPU ms: user + system, the process's own, stdout) of one whole process."""
    wall, usage, out = bl.waited(argv, world.env, world.repo)
    return wall, (usage.ru_utime + usage.ru_stime) * 1000, out.decode()


def run(revision: str, runs: int) -> str:
    with tempfile.TemporaryDirectory(prefix="wheypoint-against-") as tmp:
        venvs = {"this tree": bl.ensure_venv(), revision: bl.ensure_venv(bl.revision_tree(revision, Path(tmp) / "old"))}
        worlds, steps = {}, {}
        for name, venv in venvs.items():
            folder = Path(tmp) / f"world-{len(worlds)}"
            folder.mkdir()
            worlds[name] = bl.make_world(folder, venv, None)
            startup_bench.PYZ.setdefault("path", "")  # the single-file runtime's steps are left out
            every = startup_bench.steps_for(venv, worlds[name], 1)
            floors = (startup_bench.BARE_BASELINE, startup_bench.ZIPAPP_BASELINE)
            steps[name] = [s for s in every if not s.name.startswith("pyz") and s.name not in floors]
        commands = [step.name for step in steps["this tree"]]
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        order = list(venvs)
        for number in range(WARMUP + runs):
            for index, command in enumerate(["baseline", *commands]):
                for name in order if number % 2 == 0 else order[::-1]:
                    if command == "baseline":
                        wall, cpu, _ = timed(venvs[name].baseline(), worlds[name])
                    else:
                        step = steps[name][index - 1]
                        wall, cpu, out = timed(step.argv(number), worlds[name])
                        reply = json.loads(out)
                        if number == 0:
                            if reply.get("ok") is not True:
                                raise SystemExit(f"{name}: {command}: not ok: {out[:600]}")
                            step.check(reply)
                        if step.after is not None:
                            step.after(reply)
                    if number >= WARMUP:
                        times.setdefault((name, command), []).append((wall, cpu))
    return report(revision, venvs, commands, times, runs)


def report(revision: str, venvs: dict[str, bl.Venv], commands: list[str],
           times: dict[tuple[str, str], list[tuple[float, float]]], runs: int) -> str:  # fmt: skip
    this, old = list(venvs)
    median = statistics.median

    def paired(command: str, which: int) -> float:
        return median(a[which] / b[which] for a, b in zip(times[(this, command)], times[(old, command)], strict=True))

    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [f"# Start-up of this tree ({bl.git_head()}) against {revision}", "",
             f"Python {sys.version.split()[0]}, {os.cpu_count()} cpus, {when}, "
             f"{runs} kept rounds after {WARMUP}, the two venvs in turn (order swapped each round), a store of one "
             "work each. Median ms; in brackets, over the same venv's baseline median.", "",
             f"| command | this tree, wall | {revision}, wall | this / {revision}, wall | this tree, CPU | "
             f"{revision}, CPU | this / {revision}, CPU |", "|---|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for command in ["baseline", *commands]:
        cells = []
        for which in (0, 1):
            base = {name: median(t[which] for t in times[(name, "baseline")]) for name in venvs}
            mine, theirs = (median(t[which] for t in times[(name, command)]) for name in (this, old))
            cells.append(f"{mine:.1f} [{mine / base[this]:.2f}x] | {theirs:.1f} [{theirs / base[old]:.2f}x] | "
                         f"{paired(command, which):.3f}")  # fmt: skip
        lines.append(f"| {command} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", required=True, help="the git revision to measure this tree against")
    parser.add_argument("--runs", type=int, default=20, help="kept rounds (default 20)")
    parser.add_argument("--out", type=Path, default=None, help="also write the report here")
    args = parser.parse_args()
    text = run(args.against, args.runs)
    bl.publish(text, args.out, "startup-against")
    return 0


if __name__ == "__main__":
    sys.exit(main())
