"""A rescue in a crowded project: the last 64 KiB of a session while other sessions' full parts sit beside it.

A rescue first finds the work its session continues among the project's newest works (hooks/rescue.py,
`RECENT_WORKS`). Each round, in a fresh store and checkout: a 1 MB Claude Code session is rescued once, `--others`
other sessions of the project (copies of the 40 MB corpus-built session under their own ids) are each rescued into
a full part of about 100,000 characters, then 64 KiB are appended to the first session and its PreCompact is timed
as a whole process, with the baseline (`python -c "import json, sqlite3"`) in the same round. With `--against REV`
the same rounds run for that revision's build too, the two builds in turn (order swapped each round), and the
report gives this tree over that one as the median of per-round ratios.

    python3 bench/hook_crowded.py [--others 6] [--runs 6] [--against <revision>]
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
import hook_bench as hb


def _round(venv: bl.Venv, session: Path, big: Path, others: int, tmp: Path) -> tuple[float, float]:
    """(baseline ms, the crowded 64 KiB rescue's ms) of one round in a fresh store under `tmp`."""
    home, repo = tmp / "home", tmp / bl.PROJECT
    home.mkdir()
    repo.mkdir()
    bl.make_repo(repo)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "WHEYPOINT_HOME": str(home)}
    folder = home / ".claude" / "projects" / "bench"
    folder.mkdir(parents=True)
    transcript = folder / f"{hb.LONG_ID}.jsonl"
    shutil.copyfile(session, transcript)

    def compact(session_id: str, path: Path) -> str:
        return json.dumps({"session_id": session_id, "transcript_path": str(path), "cwd": str(repo),
                           "permission_mode": "default", "hook_event_name": "PreCompact", "trigger": "auto",
                           "custom_instructions": ""})  # fmt: skip

    argv = hb.installed_hooks(venv, repo, env)["PreCompact"]  # as the harness runs it
    subprocess.run(argv, input=compact(hb.LONG_ID, transcript).encode(), cwd=repo, env=env, capture_output=True,
                   check=True)  # fmt: skip
    text = big.read_bytes()
    for number in range(others):
        other = f"0ther{number:03d}-0000-4000-8000-00000000beef"
        path = folder / f"{other}.jsonl"
        path.write_bytes(text.replace(hb.LONG_ID.encode(), other.encode()))
        subprocess.run(argv, input=compact(other, path).encode(), cwd=repo, env=env, capture_output=True, check=True)
    with transcript.open("ab") as handle:
        handle.write(hb.appended(repo, 1))
    base, _, _ = bl.waited(venv.baseline(), env, repo, b"")
    elapsed, _, out = bl.waited(argv, env, repo, compact(hb.LONG_ID, transcript).encode())
    if b"kept 1 turn(s)" not in out:
        raise SystemExit(f"the crowded rescue did not keep the new prompt: {out!r}")
    return base, elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--others", type=int, default=6, help="other sessions' full parts in the project (default 6)")
    parser.add_argument("--runs", type=int, default=6, help="measured rounds (default 6), after one warm-up round")
    parser.add_argument("--against", default=None, help="also this git revision's build, in turn each round")
    args = parser.parse_args()
    cache = Path(tempfile.gettempdir()) / "wheypoint-bench-sessions"
    session, big = hb.long_session(1, cache), hb.long_session(40, cache)
    builds = {"this tree": bl.ensure_venv()}
    with tempfile.TemporaryDirectory(prefix="wheypoint-against-") as tmp:
        if args.against:
            builds[args.against] = bl.ensure_venv(bl.revision_tree(args.against, Path(tmp) / "old"))
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in builds}
    for number in range(1 + args.runs):
        for name in list(builds) if number % 2 == 0 else list(builds)[::-1]:
            with tempfile.TemporaryDirectory(prefix="wheypoint-crowded-") as tmp:
                measured = _round(builds[name], session, big, args.others, Path(tmp))
            if number:
                times[name].append(measured)
    lines = ["# A rescue in a crowded project", "",
             f"Python {platform.python_version()}, {os.cpu_count()} cpus, git {bl.git_head()}, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {args.runs} kept rounds after 1 warm-up round; "
             f"a 1 MB session's rescue of its last 64 KiB with {args.others} other sessions' full parts in the "
             "project; median ms [median of per-round ratios to the baseline].", "",
             "| build | baseline | crowded rescue of 64 KiB |", "|---|---:|---:|"]  # fmt: skip
    for name, pairs in times.items():
        ratio = statistics.median(t / b for b, t in pairs)
        lines.append(f"| {name} | {statistics.median(b for b, _ in pairs):.0f} | "
                     f"{statistics.median(t for _, t in pairs):.0f} [{ratio:.2f}x] |")  # fmt: skip
    if args.against:
        mine, theirs = times["this tree"], times[args.against]
        paired = statistics.median(a[1] / b[1] for a, b in zip(mine, theirs, strict=True))
        lines += ["", f"This tree over {args.against}, the median of per-round ratios: {paired:.2f}x."]
    bl.publish("\n".join(lines) + "\n", None, "hooks-crowded")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
