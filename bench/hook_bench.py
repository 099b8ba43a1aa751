"""Benchmark: how long each `wheypoint hook` event keeps a harness waiting, on real corpus sessions.

A harness blocks on its hooks (PreCompact before compacting, SessionStart before the first turn, Stop and
UserPromptSubmit on every turn), so the figure that matters is the wall time of the whole process, and the
issue's bound is one second on a normal session. Each round, in the benchmarks' clean venv
(benchlib.ensure_venv), in a fresh scratch checkout and store that already hold one other work (a user's
store exists before their first compaction), with the Claude Code session placed where Claude Code keeps it,
each hook run by the command `wheypoint hooks install` registers for it (`<the venv's python> -m wheypoint hook
<event> --harness claude-code`), which is what the harness runs:

- `baseline`: `python -c "import json, sqlite3"` run by the venv, as in the other benchmarks;
- `PreCompact`: the rescue: reads the transcript, copies the user's turns, writes a revision and its note;
- `PreCompact again`: nothing new since: reads the transcript, writes nothing;
- `SessionStart`: renders the resume packet of the pending work;
- `Stop`: the transcript did not grow: a size check;
- `UserPromptSubmit`: the packet was delivered already: a state read.

Then long sessions, built from the corpus's Claude Code sessions (their records repeated with fresh ids until
the file has the size asked for: 1, 40 and 400 MB by default), each round in a fresh store:

- `first rescue`: the first PreCompact of the session (wall time and peak memory of the process; goal: 400 MB
  under 5 s and 64 MB);
- `Stop, nothing new` and `PreCompact, nothing new`: the transcript did not change since the rescue (goal: under
  1.2x the baseline at every size);
- `rescue of 64 KiB`: a PreCompact after 64 KiB were appended, one of them a new prompt, and `Stop after 64 KiB`
  the same through the Stop hook's growth gate (goal: under 1.5x at every size, flat in the session's size);
- `SessionStart`: the packet the session starts with after its compaction (no goal of its own);
- `64 KiB into a full part`: the rescue of 64 KiB again, into a part of the session's rescue work filled first
  to within two turns and 300 characters of what a part holds (both near their bounds): what a rescue costs at
  its dearest (goal: under 1.5x).

    python3 bench/hook_bench.py [--runs 10] [--long-runs 5] [--sizes 1,40,400] [--long-only]
    python3 bench/hook_bench.py --against <revision> [--long-runs 5] [--sizes 1,40,400]  # this tree against that
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

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


def installed_hooks(venv: bl.Venv, repo: Path, env: dict[str, str]) -> dict[str, list[str]]:
    """Each event's command as `wheypoint hooks install` registers it in Claude Code's settings (`<python> -m
    wheypoint hook ...` for an installed package): what the harness runs, rather than the console script."""
    done = subprocess.run([venv.wheypoint, "hooks", "install", "--harness", "claude-code"], cwd=repo, env=env,
                          capture_output=True, text=True, check=True)  # fmt: skip
    return {item["event"]: shlex.split(item["command"]) for item in json.loads(done.stdout)["events"]}


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
    commands = installed_hooks(venv, repo, env)
    results = {"baseline": timed(venv.baseline(), "", repo, env)}
    for name in EVENTS:
        event = name.split()[0]
        results[name] = timed(commands[event], json.dumps(payloads[event]), repo, env)
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


LONG_ID = "5e55e55e-0000-4000-8000-00000000beef"
LONG_EVENTS = ("first rescue", "Stop, nothing new", "PreCompact, nothing new", "rescue of 64 KiB",
               "Stop after 64 KiB", "SessionStart", "64 KiB into a full part")  # fmt: skip
GOALS = {"Stop, nothing new": 1.2, "PreCompact, nothing new": 1.2, "rescue of 64 KiB": 1.5, "Stop after 64 KiB": 1.5,
         "64 KiB into a full part": 1.5}  # fmt: skip
FIRST_GOAL_MS, FIRST_GOAL_MB = 5000.0, 64.0


def long_session(megabytes: int, cache: Path) -> Path:
    """A Claude Code session of about `megabytes` MB: the corpus sessions' records, repeated with fresh uuids,
    message ids and timestamps under one session id, written compactly as Claude Code writes them. Cached."""
    target = cache / f"claude-{megabytes}mb.jsonl"
    if target.exists():
        return target
    records = []
    for source in sorted((bl.CORPUS / "claude-code").glob("entire-*.jsonl")):
        for line in source.open(encoding="utf-8"):
            try:
                records.append(json.loads(line))
            except ValueError:
                continue
    start, size, count = datetime.datetime(2026, 1, 1), 0, 0
    cache.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    with partial.open("w", encoding="utf-8") as handle:
        for copy in itertools.count():
            for record in records:
                count += 1
                record = dict(record)
                for key in ("uuid", "parentUuid"):
                    if isinstance(record.get(key), str):
                        record[key] = f"{record[key][:24]}{copy:012d}"
                if "sessionId" in record:
                    record["sessionId"] = LONG_ID
                record["timestamp"] = (start + datetime.timedelta(seconds=count)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
                message = record.get("message")
                if isinstance(message, dict) and isinstance(message.get("id"), str):
                    record["message"] = {**message, "id": f"{message['id']}-{copy}"}
                line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
                handle.write(line)
                size += len(line.encode("utf-8"))
                if size >= megabytes * 1_000_000:
                    break
            else:
                continue
            break
    partial.replace(target)
    return target


def prompts(cwd: Path, number: int, count: int, length: int) -> bytes:
    """`count` new prompts of the person's, stamped now, each lines of prose `length` characters long: what fills
    the part a rescue writes to."""
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() + 1))
    common = {"parentUuid": None, "isSidechain": False, "cwd": str(cwd), "sessionId": LONG_ID, "timestamp": now}
    lines = []
    for index in range(count):
        text = "".join(f"Step {index}.{line}: check the retry helper's backoff, then run the tests again.\n"
                       for line in range(length // 60 + 1))[:length]  # fmt: skip
        prompt = {**common, "type": "user", "uuid": f"f1110000-0000-4000-8000-{number:06d}{index:06d}",
                  "message": {"role": "user", "content": text}}  # fmt: skip
        lines.append(json.dumps(prompt, separators=(",", ":")) + "\n")
    return "".join(lines).encode("utf-8")


def appended(cwd: Path, number: int) -> bytes:
    """64 KiB of new records stamped now: one prompt of the person's, then the agent's long reply."""
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() + 1))
    common = {"parentUuid": None, "isSidechain": False, "cwd": str(cwd), "sessionId": LONG_ID, "timestamp": now}
    text = f"New prompt {number}: keep going with the retry helper."
    prompt = {**common, "type": "user", "uuid": f"a99e0000-0000-4000-8000-{number:012d}",
              "message": {"role": "user", "content": text}}  # fmt: skip
    lines = [json.dumps(prompt, separators=(",", ":")) + "\n"]
    filler = 64 * 1024 - len(lines[0])  # the reply's own JSON takes it just past 64 KiB, what a Stop waits for
    reply = {**common, "type": "assistant", "uuid": f"a99e0000-0000-4000-9000-{number:012d}",
             "message": {"id": f"msg_bench_{number}", "role": "assistant",
                         "content": [{"type": "text", "text": "x" * filler}]}}  # fmt: skip
    lines.append(json.dumps(reply, separators=(",", ":")) + "\n")
    return "".join(lines).encode("utf-8")


def long_round(venv: bl.Venv, session: Path, tmp: Path) -> dict[str, tuple[float, float, dict[str, Any]]]:
    home, repo = tmp / "home", tmp / bl.PROJECT
    home.mkdir()
    repo.mkdir()
    bl.make_repo(repo)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "WHEYPOINT_HOME": str(home)}
    transcript = home / ".claude" / "projects" / "bench" / f"{LONG_ID}.jsonl"
    transcript.parent.mkdir(parents=True)
    shutil.copyfile(session, transcript)
    subprocess.run([venv.wheypoint, "checkpoint", "earlier-work", "--orientation", "An earlier work.", "--next",
                    "hold", "--decision", "Keep it.", "--rationale", "It is there."], cwd=repo, env=env,
                   capture_output=True, check=True)  # fmt: skip
    common = {"session_id": LONG_ID, "transcript_path": str(transcript), "cwd": str(repo), "permission_mode": "default"}
    compact = json.dumps({**common, "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""})
    stop = json.dumps({**common, "hook_event_name": "Stop", "stop_hook_active": False})

    commands = installed_hooks(venv, repo, env)

    def hook(event: str, payload: str) -> tuple[float, float, dict[str, Any]]:
        return rss_of(commands[event], payload, repo, env)

    results = {"first rescue": hook("PreCompact", compact)}
    results["baseline"] = rss_of(venv.baseline(), "", repo, env)
    results["Stop, nothing new"] = hook("Stop", stop)
    results["PreCompact, nothing new"] = hook("PreCompact", compact)
    with transcript.open("ab") as handle:
        handle.write(appended(repo, 1))
    results["rescue of 64 KiB"] = hook("PreCompact", compact)
    with transcript.open("ab") as handle:
        handle.write(appended(repo, 2))
    elapsed, peak, _ = hook("Stop", stop)  # a Stop answers nothing: what it did is in the hook log
    logged = (home / "hooks" / "hook.log").read_text(encoding="utf-8").splitlines()[-1]
    results["Stop after 64 KiB"] = (elapsed, peak, json.loads(logged))
    # the packet the session starts with after its compaction: the newest part's turns, within the budget
    start = json.dumps({**common, "hook_event_name": "SessionStart", "source": "compact"})
    results["SessionStart"] = hook("SessionStart", start)
    # The dearest 64 KiB: a rescue's cost grows with the part it writes to (its record and note are written whole),
    # so the part is first filled to within a prompt of what a part holds, then the 64 KiB are rescued into it.
    work = fill_part(venv, repo, env, transcript, lambda: hook("PreCompact", compact))
    with transcript.open("ab") as handle:
        handle.write(appended(repo, 3))
    results["64 KiB into a full part"] = hook("PreCompact", compact)
    if results["64 KiB into a full part"][2].get("systemMessage", "").split()[-2:-1] != [work.rpartition(".")[0]]:
        raise SystemExit(f"the rescue into a full part wrote elsewhere: {results['64 KiB into a full part'][2]}")
    return results


def part_size(venv: bl.Venv) -> tuple[int, int | None]:
    """What a part of a session's rescue work holds in the build measured: (characters, turns) of kept turns, turns
    None for a build that bounds a part by its characters alone."""
    asked = [str(venv.python), "-c", "from wheypoint.hooks import rescue; "
             "print(rescue.PART_TEXT, getattr(rescue, 'PART_TURNS', 0))"]  # fmt: skip
    characters, turns = subprocess.run(asked, capture_output=True, text=True, check=True).stdout.split()
    return int(characters), int(turns) or None


def fill_part(venv: bl.Venv, repo: Path, env: dict[str, str], transcript: Path, rescue: Any) -> str:
    """Fill the part the session's rescues write to until it holds all but two turns and a few hundred characters
    of what a part holds, the characters left shared among the turns left (so both are near their bounds: the
    dearest part), beginning the next part first when too little room is left: the part's work id."""
    most, turns = part_size(venv)
    for number in range(4):  # (a part too full to fill is filled to its bound, then one more prompt begins the next)
        logged = json.loads((env_home(env) / "hooks" / "hook.log").read_text(encoding="utf-8").splitlines()[-1])
        shown = subprocess.run([venv.wheypoint, "show", logged["work_id"], "--format", "json"], cwd=repo, env=env,
                               capture_output=True, check=True)  # fmt: skip
        meat = json.loads(shown.stdout)["record"]["meat"]
        characters = most - sum(len(item["text"]) for item in meat) - 300
        room = turns - len(meat) - 2 if turns else characters // 750  # (750: a build without a bound on turns)
        fits = room > 0 and characters // max(room, 1) >= 100
        with transcript.open("ab") as handle:
            handle.write(prompts(repo, number, room, min(characters // room, 12_000)) if fits else
                         prompts(repo, number, max((turns or 0) - len(meat), 1), 100 if turns else 1_500))  # fmt: skip
        rescue()
        if fits:
            return str(logged["work_id"])
    raise SystemExit("the session's part could not be filled")


def env_home(env: dict[str, str]) -> Path:
    return Path(env["WHEYPOINT_HOME"])


def rss_of(argv: list[str], stdin: str, cwd: Path, env: dict[str, str]) -> tuple[float, float, dict[str, Any]]:
    """(wall ms, peak resident MB of this process alone, its JSON reply), the memory from wait4's own accounting."""
    elapsed, usage, out = bl.waited(argv, env, cwd, stdin.encode())
    return elapsed, usage.ru_maxrss / 1024, json.loads(out) if out.strip() else {}


def check_long(results: dict[str, tuple[float, float, dict[str, Any]]]) -> str:
    """What the first round's replies say: each rescue rescued, each nothing-new wrote nothing."""
    first = str(results["first rescue"][2].get("systemMessage", ""))
    if "verbatim" not in first:
        raise SystemExit(f"the first rescue kept nothing: {results['first rescue'][2]}")
    for name in ("Stop, nothing new", "PreCompact, nothing new"):
        if results[name][2]:
            raise SystemExit(f"{name} answered {results[name][2]}")
    if "kept 1 turn(s)" not in str(results["rescue of 64 KiB"][2]):
        raise SystemExit(f"the rescue of 64 KiB did not keep the new prompt: {results['rescue of 64 KiB'][2]}")
    context = results["SessionStart"][2].get("hookSpecificOutput", {}).get("additionalContext", "")
    if "New prompt 2" not in context:
        raise SystemExit(f"SessionStart gave no packet holding the newest prompt: {results['SessionStart'][2]}")
    if "kept 1 turn(s)" not in str(results["64 KiB into a full part"][2]):
        raise SystemExit(f"the rescue into a full part did not keep the prompt: {results['64 KiB into a full part']}")
    if results["Stop after 64 KiB"][2].get("kept") != 1:
        raise SystemExit(f"the Stop after 64 KiB did not keep the new prompt: {results['Stop after 64 KiB'][2]}")
    return first


def long_sessions(venv: bl.Venv, sizes: list[int], runs: int) -> list[str]:
    cache = Path(tempfile.gettempdir()) / "wheypoint-bench-sessions"
    lines = ["", "## Long sessions", "",
             f"Claude Code sessions built from the corpus; {runs} kept rounds after 1 warm-up round, each in a fresh "
             "store; median wall time in ms [median of per-round ratios to the baseline], the first rescue's peak "
             "memory; goals: nothing new <= 1.2x, 64 KiB <= 1.5x, first rescue of 400 MB <= 5,000 ms and 64 MB.", "",
             "| session | baseline | first rescue | first rescue, peak MB | " + " | ".join(LONG_EVENTS[1:]) + " |",
             "|---|---:|---:|---:|" + "---:|" * (len(LONG_EVENTS) - 1)]  # fmt: skip
    said = []
    for megabytes in sizes:
        session = long_session(megabytes, cache)
        times: dict[str, list[float]] = {key: [] for key in ("baseline", *LONG_EVENTS)}
        peaks: list[float] = []
        for number in range(1 + runs):
            with tempfile.TemporaryDirectory(prefix="wheypoint-hook-long-") as tmp:
                results = long_round(venv, session, Path(tmp))
            if number == 0:
                said.append(f"- {megabytes} MB: {check_long(results)}")
                continue
            for key, (elapsed, _, _) in results.items():
                times[key].append(elapsed)
            peaks.append(results["first rescue"][1])
        base = times["baseline"]
        first = statistics.median(times["first rescue"])
        peak = max(peaks)
        first_ok = megabytes < 400 or (first <= FIRST_GOAL_MS and peak <= FIRST_GOAL_MB)
        cells = [f"{first:.0f}" + ("" if first_ok else " OVER"), f"{peak:.1f}"]
        for event in LONG_EVENTS[1:]:
            ratio = statistics.median(t / b for t, b in zip(times[event], base, strict=True))
            over = ratio > GOALS.get(event, ratio)  # (SessionStart has no goal of its own)
            cells.append(f"{statistics.median(times[event]):.0f} [{ratio:.2f}x]" + (" OVER" if over else ""))
        size = session.stat().st_size / 1e6
        lines.append(f"| {size:.0f} MB | {statistics.median(base):.0f} | " + " | ".join(cells) + " |")
    return [*lines, "", "Replies (checked in the first round):", "", *said]


def long_against(venv: bl.Venv, other: bl.Venv, revision: str, sizes: list[int], runs: int) -> list[str]:
    """Each long-session event of this tree against `revision`'s build, the two in turn each round (order swapped
    every round), each in a fresh store: the median of per-round ratios, this over that, by wall time."""
    cache = Path(tempfile.gettempdir()) / "wheypoint-bench-sessions"
    lines = ["", f"## Long sessions, this tree against {revision}", "",
             f"{runs} kept rounds after 1 warm-up round; median of per-round ratios of this tree's wall time over "
             f"{revision}'s, each round's two runs back to back; in brackets, each one's median ms.", "",
             "| session | baseline | " + " | ".join(LONG_EVENTS) + " |",
             "|---|" + "---:|" * (len(LONG_EVENTS) + 1)]  # fmt: skip
    for megabytes in sizes:
        session = long_session(megabytes, cache)
        times: dict[str, dict[str, list[float]]] = {"this": {}, "that": {}}
        for number in range(1 + runs):
            for which in ("this", "that") if number % 2 == 0 else ("that", "this"):
                with tempfile.TemporaryDirectory(prefix="wheypoint-hook-long-") as tmp:
                    results = long_round(venv if which == "this" else other, session, Path(tmp))
                if number == 0:
                    check_long(results)
                    continue
                for key, (elapsed, _, _) in results.items():
                    times[which].setdefault(key, []).append(elapsed)
        cells = []
        for key in ("baseline", *LONG_EVENTS):
            mine, theirs = times["this"][key], times["that"][key]
            ratio = statistics.median(a / b for a, b in zip(mine, theirs, strict=True))
            cells.append(f"{ratio:.2f} [{statistics.median(mine):.0f} / {statistics.median(theirs):.0f}]")
        lines.append(f"| {session.stat().st_size / 1e6:.0f} MB | " + " | ".join(cells) + " |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="measured rounds per corpus session (default 10)")
    parser.add_argument("--long-runs", type=int, default=5, help="measured rounds per long session (default 5)")
    parser.add_argument("--sizes", default="1,40,400", help="long sessions' sizes in MB (default 1,40,400)")
    parser.add_argument("--long-only", action="store_true", help="only the long sessions")
    parser.add_argument("--against", default=None, help="the long sessions, this tree against this git revision")
    args = parser.parse_args()
    venv = bl.ensure_venv()
    sizes = [int(size) for size in args.sizes.split(",") if size]
    if args.against:
        with tempfile.TemporaryDirectory(prefix="wheypoint-against-") as tmp:
            other = bl.ensure_venv(bl.revision_tree(args.against, Path(tmp) / "old"))
        report = "\n".join(["# wheypoint hook latency", "", f"Python {platform.python_version()}, {os.cpu_count()} "
                            f"cpus, git {bl.git_head()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.",
                            *long_against(venv, other, args.against, sizes, args.long_runs)]) + "\n"  # fmt: skip
        bl.publish(report, None, "hooks-long-against")
        return 0
    if args.long_only:
        report = "\n".join(["# wheypoint hook latency", "", f"Python {platform.python_version()}, {os.cpu_count()} "
                            f"cpus, git {bl.git_head()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.",
                            *long_sessions(venv, sizes, args.long_runs)]) + "\n"  # fmt: skip
        bl.publish(report, None, "hooks-long")
        return 0
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
    long = long_sessions(venv, sizes, args.long_runs) if sizes else []
    report = "\n".join([*lines, "", "Replies (checked in the first round):", "", *replies, *long]) + "\n"
    bl.publish(report, None, "hooks")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
