"""Benchmark: `wheypoint turns` throughput against a bare json-decoding loop, and its peak memory."""

# Builds large transcripts from the corpus sessions (each copy's ids made unique, so nothing is
# de-duplicated away), then times whole processes in the benchmarks' clean venv (benchlib.ensure_venv:
# the bare loop run by the venv's python, `turns` by its `wheypoint` console script), interleaved
# (bare loop, turns, bare loop, turns, ...), and reads each child's peak RSS from the kernel (wait4).
#
#     python3 bench/turns_bench.py [--mb 100] [--big-mb 400] [--runs 5]

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import time
from pathlib import Path

import benchlib as bl

CORPUS = bl.CORPUS
RESULTS = bl.RESULTS_DIR
BARE = "import json, sys\nwith open(sys.argv[1], 'rb') as f:\n    for line in f:\n        json.loads(line)\n"


def _unique(record: dict[str, object], suffix: str) -> None:
    for key in ("uuid", "parentUuid", "leafUuid", "promptId"):
        if isinstance(record.get(key), str):
            record[key] = f"{record[key]}-{suffix}"
    message = record.get("message")
    if isinstance(message, dict) and isinstance(message.get("id"), str):
        message["id"] = f"{message['id']}-{suffix}"


def build_claude(target: Path, megabytes: int) -> Path:
    """A Claude Code transcript of about `megabytes` MB from the corpus sessions."""
    if target.exists() and target.stat().st_size >= megabytes * 1_000_000:
        return target
    sources = sorted((CORPUS / "claude-code").glob("entire-*.jsonl"))
    records = [[json.loads(line) for line in s.read_text(encoding="utf-8").splitlines() if line.strip()]
               for s in sources]  # fmt: skip
    written, copy = 0, 0
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", encoding="utf-8") as out:
        while written < megabytes * 1_000_000:
            for session in records:
                for record in session:
                    record = json.loads(json.dumps(record))
                    _unique(record, str(copy))
                    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"  # as Claude writes
                    out.write(line)
                    written += len(line.encode("utf-8"))
                copy += 1
    return target


def build_codex(target: Path, megabytes: int) -> Path:
    """A Codex rollout of about `megabytes` MB: the corpus rollouts' bodies repeated after one header."""
    if target.exists() and target.stat().st_size >= megabytes * 1_000_000:
        return target
    sources = sorted((CORPUS / "codex").glob("localpush-rollout-*.jsonl"))
    header = sources[0].read_text(encoding="utf-8").splitlines()[0]
    bodies = [s.read_text(encoding="utf-8").splitlines()[1:] for s in sources]
    written = 0
    with target.open("w", encoding="utf-8") as out:
        out.write(header + "\n")
        while written < megabytes * 1_000_000:
            for body in bodies:
                for line in body:
                    out.write(line + "\n")
                    written += len(line) + 1
    return target


# The timing loop runs in a lean child of its own. On Linux a process starts with its parent's resident
# memory as its peak (fork or vfork, then exec, keeps the old image's high-water mark in ru_maxrss), so
# children spawned from this script, which holds benchlib and its imports, would never read below ~20 MB.
_LOOP = r"""
import json, os, resource, subprocess, sys, time
def run(command):
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    if status != 0:
        sys.exit(f"{command} failed: {child.stderr.read().decode()}")
    return elapsed, usage.ru_maxrss / 1024
bare, turns, runs = json.loads(sys.argv[1])
run(bare), run(turns)  # warm the page cache
rounds = [[*run(bare), *run(turns)] for _ in range(runs)]
print(json.dumps({"rounds": rounds, "floor": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def measure(venv: bl.Venv, transcript: Path, harness: str, runs: int, every: bool) -> dict[str, float]:
    """Interleaved bare loop / turns runs: (wall seconds, peak RSS in MB) of each, from a lean spawner."""
    bare = [venv.python, "-c", BARE, str(transcript)]
    turns = [venv.wheypoint, "turns", "--transcript", str(transcript), "--harness", harness,
             *(["--all", "--limit", "1"] if every else []), "--format", "json"]  # fmt: skip
    done = subprocess.run([venv.python, "-c", _LOOP, json.dumps([bare, turns, runs])], capture_output=True,
                          text=True, check=False)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"the timing loop failed: {done.stderr}")
    loop = json.loads(done.stdout)
    bare_times, bare_rss, turn_times, turn_rss = zip(*loop["rounds"], strict=True)
    ratios = [b / t for b, t in zip(bare_times, turn_times, strict=True)]
    size = transcript.stat().st_size / 1_000_000
    return {
        "mb": size,
        "bare_s": statistics.median(bare_times),
        "turns_s": statistics.median(turn_times),
        "bare_mb_s": size / statistics.median(bare_times),
        "turns_mb_s": size / statistics.median(turn_times),
        "ratio": statistics.median(ratios),
        "bare_rss": max(bare_rss),
        "turns_rss": max(turn_rss),
        "floor_rss": loop["floor"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--big-mb", type=int, default=400, help="a larger transcript, to show memory stays flat")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--build-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not CORPUS.exists():
        raise SystemExit(f"{CORPUS} is absent: the benchmark builds its transcripts from the corpus")
    scratch = RESULTS / "transcripts"
    cases = [
        ("claude-code", scratch / f"claude-{args.mb}mb.jsonl", args.mb, build_claude),
        ("codex", scratch / f"codex-{args.mb}mb.jsonl", args.mb, build_codex),
        ("claude-code", scratch / f"claude-{args.big_mb}mb.jsonl", args.big_mb, build_claude),
    ]
    if args.build_only:
        for _, path, size, build in cases:
            build(path, size)
        return
    venv = bl.ensure_venv()
    # Build in a child: a child forked from a parent that held the corpus would inherit its peak RSS.
    build_only = [venv.python, __file__, "--build-only", "--mb", str(args.mb), "--big-mb", str(args.big_mb)]
    subprocess.run(build_only, check=True)
    rows = [
        "| harness | command | MB | bare loop MB/s | turns MB/s | throughput ratio (target >= 0.80) "
        "| peak RSS bare | peak RSS turns (target < 64 MB) |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for (harness, path, _, _), every in [(case, every) for case in cases for every in (False, True)]:
        runs = args.runs if path.stat().st_size < 200_000_000 else max(2, args.runs // 2)
        m = measure(venv, path, harness, runs, every)
        command = "turns --all" if every else "turns"
        speeds = f"{m['bare_mb_s']:.1f} | {m['turns_mb_s']:.1f} | {m['ratio']:.2f}"
        rows.append(
            f"| {harness} | {command} | {m['mb']:.0f} | {speeds} | {m['bare_rss']:.1f} MB | {m['turns_rss']:.1f} MB |"
        )
        print(rows[-1], flush=True)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    header = f"python {platform.python_version()} ({venv.base}), clean venv {venv.path} (`{venv.wheypoint} turns`), "
    header += f"{os.cpu_count()} cpus, {when}; ratio = median over runs of bare time / turns time; "
    header += f"peak RSS cannot read below the spawner's {m['floor_rss']:.1f} MB"
    report = "\n".join([header, "", *rows])
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "turns.md").write_text(report + "\n", encoding="utf-8")
    print()
    print(report)


if __name__ == "__main__":
    main()
