"""Benchmark: `export --all` and `import` of whole stores, their wall time and peak memory, by store size.

The claim to check is bounded memory: both commands hold one work at a time, so peak RSS must stay flat as the
store grows from 1,000 to 10,000 works (and beyond). Each size uses the benchmarks' generated store
(benchlib.bulk_store, every work a realistic first checkpoint) copied into a scratch home, run by the clean
venv's `wheypoint` (benchlib.ensure_venv) in a scratch checkout named after the stores' project; the child's
peak RSS is the kernel's own figure (wait4). Each import goes into an empty store, then once more into the
same store (nothing to write: the idempotent path).

    python3 bench/bundle_bench.py [--sizes 1000,10000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import benchlib as bl


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, dict[str, object]]:
    """(wall seconds, peak RSS in MB, reply) of one whole process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.stdout.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    reply = json.loads(out)
    if proc.returncode != 0 or not reply.get("ok"):
        raise SystemExit(f"{argv[1:3]} failed: {reply}")
    return wall, usage.ru_maxrss / 1024, reply


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="store sizes in works (default 1000,10000)")
    parser.add_argument("--runs", type=int, default=3, help="runs per size (default 3)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    venv = bl.ensure_venv()
    stores = bl.stores_for(sizes, venv)
    lines = ["# wheypoint export / import", "",
             f"Python {platform.python_version()}, {os.cpu_count()} cpus, git {bl.git_head()}, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; median of {args.runs} runs each; peak RSS of "
             "the whole process (wait4).", "",
             "| works | revisions | bundle MB | export s | export peak MB | import s | import peak MB | "
             "import again s | again peak MB |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for size in sizes:
        store, how = stores[size]
        assert store is not None, "sizes above 1 only"
        print(f"{size:,} works ({how}) ...", flush=True)
        rows: dict[str, list[float]] = {k: [] for k in ("export", "export_mb", "import", "import_mb", "again",
                                                           "again_mb")}  # fmt: skip
        facts: dict[str, object] = {}
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="wheypoint-bundle-") as tmp:
                root = Path(tmp)
                home, fresh, repo = root / "home", root / "fresh", root / bl.PROJECT
                home.mkdir()
                repo.mkdir()
                bl.make_repo(repo)
                shutil.copyfile(store, home / "store.sqlite3")
                env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root), "WHEYPOINT_HOME": str(home)}
                bundle = root / "all.bundle.json"
                wall, peak, reply = timed([venv.wheypoint, "export", "--all", "--out", str(bundle)], repo, env)
                rows["export"].append(wall)
                rows["export_mb"].append(peak)
                facts = {"works": reply["works"], "revisions": reply["revisions"], "mb": bundle.stat().st_size / 1e6}
                env["WHEYPOINT_HOME"] = str(fresh)
                for key in ("import", "again"):
                    wall, peak, reply = timed([venv.wheypoint, "import", str(bundle), "--no-note"], repo, env)
                    rows[key].append(wall)
                    rows[f"{key}_mb"].append(peak)
                    expected = (size, 0) if key == "import" else (0, size)
                    if (reply["written"], reply["already_present"]) != expected:
                        raise SystemExit(f"import {key}: {reply}")
        med = {k: statistics.median(v) for k, v in rows.items()}
        lines.append(f"| {facts['works']:,} | {facts['revisions']:,} | {facts['mb']:.1f} | {med['export']:.2f} | "
                     f"{med['export_mb']:.1f} | {med['import']:.2f} | {med['import_mb']:.1f} | {med['again']:.2f} | "
                     f"{med['again_mb']:.1f} |")  # fmt: skip
    report = "\n".join(lines) + "\n"
    bl.publish(report, None, "bundle")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
