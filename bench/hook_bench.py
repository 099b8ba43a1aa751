"""Benchmark: how long each `wheypoint hook` event keeps a harness waiting, on real corpus sessions.

A harness blocks on its hooks (PreCompact before compacting, SessionStart before the first turn, Stop and
UserPromptSubmit on every turn), so the figure that matters is the wall time of the whole process, and the
issue's bound is one second on a normal session. Each round, in the benchmarks' clean venv
(benchlib.ensure_venv), in a fresh scratch checkout and store that already hold one other work (a user's
store exists before their first compaction), with the Claude Code session placed where Claude Code keeps it:

- `baseline`: `python -c "import json, sqlite3"` run by the venv, as in the other benchmarks;
- `PreCompact`: the rescue: reads the transcript, copies the user's turns, writes a revision and its note;
- `PreCompact again`: nothing new since: reads the transcript, writes nothing;
- `SessionStart`: renders the resume packet of the pending work;
- `Stop`: the transcript did not grow: a size check;
- `UserPromptSubmit`: the packet was delivered already: a state read.

    python3 bench/hook_bench.py [--runs 10]
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

SESSIONS = ("entire-37-995ebed6e4-0.jsonl", "entire-18-4069756ffc-0.jsonl")  # 3 prompts, 2 KB; 3.3 MB
EVENTS = ("PreCompact", "PreCompact again", "SessionStart", "Stop", "UserPromptSubmit")
BOUND_MS = 1000.0


def session_id(path: Path) -> str:
    for line in path.open(encoding="utf-8"):
        record = json.loads(line)
        if isinstance(record.get("sessionId"), str):
            return str(record["sessionId"])
    raise SystemExit(f"{path} names no sessionId")


def timed(argv: list[str], stdin: str, cwd: Path, env: dict[str, str]) -> tuple[float, dict[str, object]]:
    start = time.perf_counter()
    done = subprocess.run(argv, input=stdin.encode(), cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{argv} exited {done.returncode}: {done.stdout!r} {done.stderr!r}")
    reply = json.loads(done.stdout) if done.stdout.strip() else {}
    return elapsed, reply


def one_round(venv: bl.Venv, source: Path, tmp: Path) -> dict[str, tuple[float, dict[str, object]]]:
    home, repo = tmp / "home", tmp / bl.PROJECT
    home.mkdir()
    repo.mkdir()
    bl.make_repo(repo)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "WHEYPOINT_HOME": str(home)}
    sid = session_id(source)
    transcript = home / ".claude" / "projects" / str(repo).replace("/", "-") / f"{sid}.jsonl"
    transcript.parent.mkdir(parents=True)
    shutil.copyfile(source, transcript)
    subprocess.run([venv.wheypoint, "checkpoint", "earlier-work", "--orientation", "An earlier work.", "--next",
                    "hold", "--decision", "Keep it.", "--rationale", "It is there."], cwd=repo, env=env,
                   capture_output=True, check=True)  # fmt: skip
    common = {"session_id": sid, "transcript_path": str(transcript), "cwd": str(repo), "permission_mode": "default"}
    payloads = {
        "PreCompact": {**common, "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""},
        "SessionStart": {**common, "hook_event_name": "SessionStart", "source": "compact"},
        "Stop": {**common, "hook_event_name": "Stop", "stop_hook_active": False},
        "UserPromptSubmit": {**common, "hook_event_name": "UserPromptSubmit", "prompt": "go on"},
    }
    results = {"baseline": timed(venv.baseline(), "", repo, env)}
    for name in EVENTS:
        event = name.split()[0]
        argv = [venv.wheypoint, "hook", event, "--harness", "claude-code"]
        results[name] = timed(argv, json.dumps(payloads[event]), repo, env)
    return results


def check(results: dict[str, tuple[float, dict[str, object]]]) -> str:
    """What the first round's replies say, so a fast failure is never reported as a fast hook."""
    message = str(results["PreCompact"][1].get("systemMessage", ""))
    if "verbatim" not in message:
        raise SystemExit(f"PreCompact did not rescue: {results['PreCompact'][1]}")
    if "systemMessage" in results["PreCompact again"][1]:
        raise SystemExit(f"the second PreCompact wrote again: {results['PreCompact again'][1]}")
    context = results["SessionStart"][1].get("hookSpecificOutput")
    if not isinstance(context, dict) or "additionalContext" not in context:
        raise SystemExit(f"SessionStart gave no packet: {results['SessionStart'][1]}")
    return f"{message}; packet {len(context['additionalContext'])} chars"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="measured rounds per session (default 10)")
    args = parser.parse_args()
    venv = bl.ensure_venv()
    lines = ["# wheypoint hook latency", "",
             f"Python {platform.python_version()}, {os.cpu_count()} cpus, git {bl.git_head()}, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {args.runs} kept rounds after "
             f"{bl.WARMUP_ROUNDS} warm-up rounds; median wall time in ms [median of per-round ratios to the "
             "baseline]; bound: 1,000 ms.", "",
             "| session | baseline | " + " | ".join(EVENTS) + " |", "|---|---:|" + "---:|" * len(EVENTS)]  # fmt: skip
    replies: list[str] = []
    for name in SESSIONS:
        source = bl.CORPUS / "claude-code" / name
        times: dict[str, list[float]] = {key: [] for key in ("baseline", *EVENTS)}
        said = ""
        for number in range(bl.WARMUP_ROUNDS + args.runs):
            with tempfile.TemporaryDirectory(prefix="wheypoint-hook-") as tmp:
                results = one_round(venv, source, Path(tmp))
            if number == 0:
                said = check(results)
            if number >= bl.WARMUP_ROUNDS:
                for key, (elapsed, _) in results.items():
                    times[key].append(elapsed)
        base = times["baseline"]
        cells = []
        for event in EVENTS:
            median = statistics.median(times[event])
            ratio = statistics.median(t / b for t, b in zip(times[event], base, strict=True))
            cells.append(f"{median:.0f} [{ratio:.2f}x]" + ("" if median <= BOUND_MS else " OVER"))
        size = source.stat().st_size / 1e6
        lines.append(f"| {name} ({size:.1f} MB) | {statistics.median(base):.0f} | " + " | ".join(cells) + " |")
        replies.append(f"- {name}: {said}")
    report = "\n".join([*lines, "", "Replies (checked in the first round):", "", *replies]) + "\n"
    bl.publish(report, None, "hooks")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
