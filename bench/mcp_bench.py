"""Start-up of `wheypoint mcp` to its first answer, in a clean venv, as ratios to `python -c "import json"`.

What an agent's harness waits for when it starts the server: spawn `<venv>/bin/wheypoint mcp`, write one
`initialize` line, read the reply line. Each round runs, back to back in the same scratch checkout (the
benchmarks' world: a real git repository and three real works, see bench/README.md):

- `baseline`: `<venv>/bin/python -c "import json"`, the whole process;
- `baseline json, sqlite3`: the other benchmarks' baseline, for comparison with their figures;
- `first answer`: spawn, send `initialize`, read its reply (the clock stops at the reply; the server is then
  told to stop and reaped outside the clock);
- `initialize, exit`: the same, then end the input and wait for the process to exit: a whole process, as the
  baselines are;
- `tools/list`, `tools/call show`: one session that sends `initialize`, `tools/list` and a `tools/call` of
  `show`, each figure the time from the spawn to that reply (what a harness waits before its first real call).

The headline is the median of per-round ratios of `first answer` to `baseline` (target <= 1.5x). Usage:

    python3 bench/mcp_bench.py               # 20 kept rounds after 3 warm-up rounds
    python3 bench/mcp_bench.py --runs 5
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import benchlib as bl

TARGET = 1.5
BASELINE = "baseline"
SERIES = (BASELINE, "baseline json, sqlite3", "first answer", "initialize, exit", "tools/list", "tools/call show")
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "mcp_bench", "version": "1"}}}  # fmt: skip
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
SHOW = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "show", "arguments": {"work": bl.EXACT.slug}}}  # fmt: skip


class Session:
    """A `wheypoint mcp` process and the time since it was spawned."""

    def __init__(self, venv: bl.Venv, world: bl.World) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen([venv.wheypoint, "mcp"], cwd=world.repo, env=world.env, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip

    def ask(self, message: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        """(ms since the spawn when the reply was read, the reply)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        elapsed = (time.perf_counter() - self.started) * 1000
        if not line:
            raise SystemExit(f"wheypoint mcp ended without answering {message['method']}: "
                             f"{self.process.stderr.read().decode() if self.process.stderr else ''}")  # fmt: skip
        reply: dict[str, Any] = json.loads(line)
        if "result" not in reply:
            raise SystemExit(f"wheypoint mcp answered {message['method']} with an error: {reply}")
        return elapsed, reply

    def close(self) -> float:
        """End the input and reap the process: ms since the spawn when it had exited (exit 0 checked)."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        code = self.process.wait(timeout=60)
        elapsed = (time.perf_counter() - self.started) * 1000
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        if code != 0:
            raise SystemExit(f"wheypoint mcp exited {code} at the end of its input")
        return elapsed


def check(initialized: dict[str, Any], listed: dict[str, Any], shown: dict[str, Any]) -> str:
    """The first round's replies must be right before any of them is timed."""
    info = initialized["result"]["serverInfo"]
    tools = [tool["name"] for tool in listed["result"]["tools"]]
    result = shown["result"]
    if info["name"] != "wheypoint" or "show" not in tools or result.get("isError"):
        raise SystemExit(f"unexpected replies: {info}, {tools}, {json.dumps(result)[:600]}")
    return f"{info['name']} {info['version']}, {len(tools)} tools, show: {bl.check_show(result['structuredContent'])}"


def run_rounds(venv: bl.Venv, world: bl.World, runs: int) -> tuple[dict[str, bl.Series], str]:
    series = {name: bl.Series(name) for name in SERIES}
    replies = ""
    for number in range(bl.WARMUP_ROUNDS + runs):
        times: dict[str, float] = {}
        times[BASELINE] = bl.timed([venv.python, "-c", "import json"], world.env, world.repo)[0]
        times["baseline json, sqlite3"] = bl.timed(venv.baseline(), world.env, world.repo)[0]
        alone = Session(venv, world)
        times["first answer"], _ = alone.ask(INITIALIZE)
        times["initialize, exit"] = alone.close()
        session = Session(venv, world)
        _, initialized = session.ask(INITIALIZE)
        times["tools/list"], listed = session.ask(LIST)
        times["tools/call show"], shown = session.ask(SHOW)
        session.close()
        if number == 0:
            replies = check(initialized, listed, shown)
        if number >= bl.WARMUP_ROUNDS:
            for name, value in times.items():
                series[name].times.append(value)
    return series, replies


def report(venv: bl.Venv, floor: tuple[float, float], series: dict[str, bl.Series], replies: str, runs: int) -> str:
    base = series[BASELINE]
    headline = series["first answer"].paired(base)
    lines = ["# wheypoint mcp start-up benchmark", "", *bl.machine_facts(venv, floor),
             f"- rounds: {runs} kept after {bl.WARMUP_ROUNDS} warm-up rounds; each round runs "
             + ", ".join(SERIES), f"- replies (checked in the first round): {replies}", "",
             f"**First answer: {headline:.2f}x `python -c \"import json\"` (target <= {TARGET}x: "
             f"{bl.verdict(headline, TARGET)})**, the median of per-round ratios.", "",
             "| measure | median ms | to `import json` | to `import json, sqlite3` |",
             "|---|---:|---:|---:|"]  # fmt: skip
    other = series["baseline json, sqlite3"]
    for name in SERIES:
        lines.append(f"| {name} | {series[name].median():.1f} | {series[name].cell(base)} | "
                     f"{series[name].cell(other)} |")  # fmt: skip
    lines += ["", "Each ratio: the median of per-round ratios, then the ratio of medians in brackets."]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20, help="measured rounds (default 20)")
    parser.add_argument("--out", type=Path, default=None, help="where to write the report too (default "
                        "bench/results/mcp.md)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    started = time.perf_counter()
    venv = bl.ensure_venv()
    print(f"interpreter {venv.base} (Python {venv.facts['python']}), venv {venv.path}, git HEAD {bl.git_head()}",
          flush=True)  # fmt: skip
    floor = bl.floors(venv)
    with tempfile.TemporaryDirectory(prefix="wheypoint-mcp-") as tmp:
        world = bl.make_world(Path(tmp), venv, None)
        series, replies = run_rounds(venv, world, args.runs)
    bl.publish(report(venv, floor, series, replies, args.runs), args.out, "mcp")
    print(f"wall time {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
