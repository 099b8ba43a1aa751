"""Benchmark: `wheypoint turns` throughput against a bare json-decoding loop, and its peak memory.

Builds large transcripts from the corpus sessions (each copy's ids made unique, so nothing is
de-duplicated away), then times whole processes run by the same interpreter binary, interleaved
(bare loop, turns, bare loop, turns, ...), and reads each child's peak RSS from the kernel (wait4).

    python3 bench/turns_bench.py [--mb 100] [--big-mb 400] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
RESULTS = ROOT / "bench" / "results"
BARE = "import json, sys\nwith open(sys.argv[1], 'rb') as f:\n    for line in f:\n        json.loads(line)\n"


def real_python() -> str:
    path = os.path.realpath(sys.executable)
    with open(path, "rb") as handle:
        if handle.read(4) != b"\x7fELF":
            raise SystemExit(f"{path} is not a binary (a shim?): run this with the real interpreter")
    return path


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


def run(command: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of one child process."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"{command} failed: {child.stderr.read().decode() if child.stderr else status}")
    return elapsed, usage.ru_maxrss / 1024


def measure(python: str, transcript: Path, harness: str, runs: int, every: bool) -> dict[str, float]:
    bare = [python, "-c", BARE, str(transcript)]
    turns = [python, "-m", "wheypoint", "turns", "--transcript", str(transcript), "--harness", harness,
             *(["--all", "--limit", "1"] if every else []), "--format", "json"]  # fmt: skip
    run(bare), run(turns)  # warm the page cache
    bare_times, turn_times, ratios, bare_rss, turn_rss = [], [], [], [], []
    for _ in range(runs):
        b, b_rss = run(bare)
        t, t_rss = run(turns)
        bare_times.append(b), turn_times.append(t), ratios.append(b / t)
        bare_rss.append(b_rss), turn_rss.append(t_rss)
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
    python = real_python()
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
    # Build in a child: a child forked from a parent that held the corpus would inherit its peak RSS.
    subprocess.run([python, __file__, "--build-only", "--mb", str(args.mb), "--big-mb", str(args.big_mb)], check=True)
    rows = [
        "| harness | command | MB | bare loop MB/s | turns MB/s | throughput ratio (target >= 0.80) "
        "| peak RSS bare | peak RSS turns (target < 64 MB) |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for (harness, path, _, _), every in [(case, every) for case in cases for every in (False, True)]:
        runs = args.runs if path.stat().st_size < 200_000_000 else max(2, args.runs // 2)
        m = measure(python, path, harness, runs, every)
        command = "turns --all" if every else "turns"
        speeds = f"{m['bare_mb_s']:.1f} | {m['turns_mb_s']:.1f} | {m['ratio']:.2f}"
        rows.append(
            f"| {harness} | {command} | {m['mb']:.0f} | {speeds} | {m['bare_rss']:.1f} MB | {m['turns_rss']:.1f} MB |"
        )
        print(rows[-1], flush=True)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    header = f"python {platform.python_version()} ({python}), {os.cpu_count()} cpus, {when}; "
    header += "ratio = median over runs of bare time / turns time"
    report = "\n".join([header, "", *rows])
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "turns.md").write_text(report + "\n", encoding="utf-8")
    print()
    print(report)


if __name__ == "__main__":
    main()
