"""Fuzz: every front door, counting per surface the replies that break the contract (tracebacks, internal-error).

The long run of tests/test_fuzz_replies.py, with the same generator (tests/fuzzcases.py): intents (JSON on stdin
or `--intent FILE` for validate and checkpoint), command lines of every command of the table, bundles for
`import`, hook payloads and lines for `wheypoint hook`, MCP tool arguments, MCP sessions of many lines (deep,
huge, binary, not requests, unknown methods and tools, credentials as names) through the server's own loop, and
paths that are no regular file (devices, a FIFO with no writer, a folder, a socket) wherever a file is read, all
seeded mutations of valid input. Each case runs in this process through the command line's own dispatch
(`cli.main.answer`), its stdout checked to be UTF-8 holding exactly one JSON object, `ok: true` or a coded error
that is not `internal-error` (a hook: its harness's JSON and exit 0, and no error in the hook's log; an MCP
session: every reply a JSON-RPC object, no -32603, no credential in a reply or the server's log, its closing
ping answered; a file case: answered within fuzzcases.SLOW seconds). A sample also runs as real processes, which
see what the in-process run cannot: the stdout encoding, a traceback on stderr.

    python3 bench/fuzz_bench.py [--seed 1] [--cases 100000] [--processes 300]

Writes bench/results/fuzz_bench.md (counts per surface, the first failures in full) and prints it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))

import fuzzcases  # noqa: E402  (tests/ is put on the path just above)


def _in_process(world: fuzzcases.World, seed: int, count: int) -> tuple[fuzzcases.Tally, float]:
    tally = fuzzcases.Tally()
    started = time.monotonic()
    with fuzzcases.enter(world.root, world.repo):
        for case in fuzzcases.cases(seed, count, world):
            fuzzcases.run_case(world, case, tally)
    return tally, time.monotonic() - started


def _processes(world: fuzzcases.World, seed: int, count: int) -> fuzzcases.Tally:
    """`count` cases (MCP's left out: it is in-process by nature) as `python -m wheypoint` processes."""
    tally = fuzzcases.Tally()
    env = fuzzcases.isolate(world.root)
    env["PYTHONPATH"] = str(ROOT / "src")
    stdin_file = world.root / "process-stdin.json"
    picked = 0
    for case in fuzzcases.cases(seed, count * 3, world):
        if picked == count:
            break
        if case.surface in ("mcp", "mcp-session") or case.tool is not None:
            continue
        argv = [str(stdin_file) if arg == "@stdin-file" else arg for arg in case.argv]
        try:
            for arg in argv:
                if "\x00" in arg:
                    raise UnicodeEncodeError("utf-8", arg, 0, 1, "NUL")
                os.fsencode(arg)
        except UnicodeEncodeError:
            continue  # no process can be given a NUL or a surrogate no byte stands for
        picked += 1
        if "@stdin-file" in case.argv:
            stdin_file.write_bytes(case.stdin)
        tally.runs[case.surface] += 1
        done = subprocess.run([sys.executable, "-m", "wheypoint", *argv], input=case.stdin, capture_output=True,
                              cwd=world.repo, env=env, timeout=120, check=False)  # fmt: skip
        try:
            text = done.stdout.decode("utf-8")
        except UnicodeDecodeError:
            tally.fail(tally.broken, case, "stdout is not UTF-8")
            continue
        if b"Traceback" in done.stderr:
            tally.fail(tally.tracebacks, case, done.stderr.decode("utf-8", "replace")[-300:])
            continue
        why = fuzzcases.verdict(case.surface, argv, done.returncode, text)
        if why is None:
            tally.refused[case.surface] += done.returncode != 0
        elif why.startswith("internal-error"):
            tally.fail(tally.internal, case, why)
        else:
            tally.fail(tally.broken, case, why)
    return tally


def _table(title: str, tally: fuzzcases.Tally) -> list[str]:
    lines = [f"### {title}", "", "| surface | cases | refused (coded) | tracebacks | internal-error | other breaks |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]  # fmt: skip
    for surface in fuzzcases.SURFACES:
        counts = (tally.tracebacks[surface], tally.internal[surface], tally.broken[surface])
        lines.append(f"| {surface} | {tally.runs[surface]:,} | {tally.refused[surface]:,} | "
                     f"{' | '.join(map(str, counts))} |")  # fmt: skip
    total = {name: sum(getattr(tally, name).values()) for name in ("runs", "refused", "tracebacks", "internal",
                                                                  "broken")}  # fmt: skip
    lines.append(f"| **all** | {total['runs']:,} | {total['refused']:,} | {total['tracebacks']} | "
                 f"{total['internal']} | {total['broken']} |")  # fmt: skip
    lines.append("")
    for surface, argv, stdin, why in tally.failures[:20]:
        lines.append(f"- {surface}: `{json.dumps(argv, ensure_ascii=True)[:300]}` stdin "
                     f"`{stdin[:120]!r}`: {why}")  # fmt: skip
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cases", type=int, default=100_000, help="in-process cases, spread over the surfaces")
    parser.add_argument("--processes", type=int, default=300, help="cases run as real processes")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="wheypoint-fuzz-"))
    world = fuzzcases.make_world(root)
    tally, seconds = _in_process(world, args.seed, args.cases)
    processes = _processes(world, args.seed + 1, args.processes)
    report = ["# fuzz_bench", "",
              f"`python3 bench/fuzz_bench.py --seed {args.seed} --cases {args.cases} --processes {args.processes}` "
              f"(Python {sys.version.split()[0]}; in process: {seconds:.0f} s, "
              f"{seconds / max(args.cases, 1) * 1000:.2f} ms a case)", "",
              *_table("In process (cli.main.answer)", tally),
              *_table("Real processes (python -m wheypoint)", processes)]  # fmt: skip
    text = "\n".join(report) + "\n"
    out = ROOT / "bench" / "results" / "fuzz_bench.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(text)
    bad = sum(sum(getattr(t, name).values()) for t in (tally, processes) for name in ("tracebacks", "internal",
                                                                                       "broken"))  # fmt: skip
    if bad:
        print(f"the scratch world is kept for a look: {root}")
    else:
        import shutil

        shutil.rmtree(root, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
