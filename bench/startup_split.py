"""Where a command's start-up milliseconds go: each everyday command split into its parts, in the clean venv.

Each command of `startup_bench.py` (on a store of one work, in the same scratch world) runs `--runs` times as
`<venv>/bin/python -c <probe> <arguments>`, the probe doing what the console script does (`import re, sys`, then
`wheypoint.cli.main`) with clocks around: the import of `wheypoint.cli.main`; every import the command makes
later, as it needs a module (the outermost `import` statements' wall time, nested ones inside it); regular
expressions compiled (`re._compiler.compile`); git runs (`app.gitrun.run_git`); and the rest of the command's
own work. The whole process's wall time is measured from outside, and the baseline (`python -c "import json,
sqlite3"`) in the same rounds; what the process took beyond the command's own time is the interpreter's start
and exit. Like the program, the probe raises the collector's threshold first and, once its figures are out,
writes what the start-up image and the kept patterns lack (so later rounds load them, as a user's commands do).
Medians of `--runs` rounds, in ms.

    python3 bench/startup_split.py [--runs 15]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchlib as bl
import startup_bench

PROBE = r"""
import time
t0 = time.perf_counter()
import re, sys, os, builtins
spent = {"imports": 0.0, "re.compile": 0.0, "git": 0.0}
depth = [0]
real_import = builtins.__import__
def timed_import(*args, **kwargs):
    depth[0] += 1
    start = time.perf_counter()
    try:
        return real_import(*args, **kwargs)
    finally:
        depth[0] -= 1
        if depth[0] == 0:
            spent["imports"] += time.perf_counter() - start
builtins.__import__ = timed_import
def clocked(function, key):
    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent[key] += time.perf_counter() - start
    return timed
import re._compiler as compiler
compiler.compile = clocked(compiler.compile, "re.compile")
t1 = time.perf_counter()
import gc
from wheypoint.cli import entry
gc.set_threshold(entry.YOUNG_THRESHOLD, *gc.get_threshold()[1:])  # as the program's entry sets it
from wheypoint.cli import main as cli
t2 = time.perf_counter()
import wheypoint.app.gitrun as gitrun
gitrun.run_git = clocked(gitrun.run_git, "git")
spent["imports"] = 0.0
t3 = time.perf_counter()
code = cli.main(sys.argv[1:])
t4 = time.perf_counter()
sys.stdout.flush()
modules = sum(1 for name in sys.modules if name == "wheypoint" or name.startswith("wheypoint."))
print(json.dumps({"cli import": (t2 - t1) * 1e3, "command": (t4 - t3) * 1e3, "probe": (t1 - t0) * 1e3,
                  **{k: v * 1e3 for k, v in spent.items()}, "modules": modules, "code": code}), file=sys.stderr)
sys.stderr.flush()
from wheypoint import boot
boot.refresh()  # as the program does once its answer is out: the start-up image and kept patterns, if stale
os._exit(0)
""".replace("json.dumps", "__import__('json').dumps")

PARTS = ("cli import", "imports", "re.compile", "git", "own work", "interpreter start and exit")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args(argv)
    venv = bl.ensure_venv()
    startup_bench.PYZ["path"] = "unused"  # the archive's rows are not split here
    rows: dict[str, dict[str, list[float]]] = {}
    base: list[float] = []
    with tempfile.TemporaryDirectory(prefix="wheypoint-split-") as tmp:
        world = bl.make_world(Path(tmp), venv, None)
        steps = [s for s in startup_bench.steps_for(venv, world, 1) if not s.name.startswith(("pyz", "bare"))]
        env = world.env
        for n in range(args.runs):
            start = time.perf_counter()
            subprocess.run(venv.baseline(), cwd=world.repo, env=env, capture_output=True, check=True)
            base.append((time.perf_counter() - start) * 1e3)
            for step in steps:
                command = step.argv(n)
                start = time.perf_counter()
                done = subprocess.run([venv.python, "-c", PROBE, *command[1:]], cwd=world.repo, env=env,
                                      capture_output=True, text=True, check=False)  # fmt: skip
                wall = (time.perf_counter() - start) * 1e3
                facts = json.loads(done.stderr.strip().splitlines()[-1])
                if facts["code"] != 0:
                    raise SystemExit(f"{step.name} failed: {done.stdout}")
                if step.after is not None:
                    step.after(json.loads(done.stdout))
                parts = rows.setdefault(step.name, {})
                own = facts["command"] - facts["imports"] - facts["re.compile"] - facts["git"]
                for name, value in (("cli import", facts["cli import"]), ("imports", facts["imports"]),
                                    ("re.compile", facts["re.compile"]), ("git", facts["git"]), ("own work", own),
                                    ("interpreter start and exit",
                                     wall - facts["cli import"] - facts["command"] - facts["probe"]),
                                    ("process", wall), ("modules", facts["modules"])):  # fmt: skip
                    parts.setdefault(name, []).append(value)
    baseline = statistics.median(base)
    lines = [f"# Where start-up goes ({args.runs} rounds, store of 1 work, medians in ms; baseline {baseline:.1f} ms)",
             "", f"git {bl.git_head()}, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", "",
             "| command | process | beyond the baseline | " + " | ".join(PARTS) + " | wheypoint modules |",
             "|---|" + "---:|" * (len(PARTS) + 3)]  # fmt: skip
    for name, parts in rows.items():
        cells = [f"{statistics.median(parts[p]):.1f}" for p in PARTS]
        process = statistics.median(parts["process"])
        lines.append(f"| {name} | {process:.1f} | {process - baseline:+.1f} | " + " | ".join(cells)
                     + f" | {statistics.median(parts['modules']):.0f} |")  # fmt: skip
    report = "\n".join(lines) + "\n"
    print(report)
    (bl.RESULTS_DIR / "startup-split.md").write_text(report, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
