"""The calls part: tool calls of one long-lived `wheypoint mcp` on PostgreSQL against one on SQLite."""

# What a team meets through its agents: not whole processes (each pays the driver's import, lookups.py) but calls
# to a server that is already up. One `wheypoint mcp` per backend runs in the same scratch world as lookups.py
# (the generated store, loaded into PostgreSQL the way a team moves to it, and the three target works), and is
# sent `initialize`, then one `show` outside the clock (where the PostgreSQL one imports its driver and
# connects: reported on its own as "first call"). Each round then sends every call to both servers back to back
# (which goes first alternates round by round): show, list --grep, log, the three resolves, and a checkpoint
# that updates a target work from its head. A call's time is the client's, from writing the request line to
# reading the reply line. The headline per call is the median of per-round ratios PostgreSQL / SQLite (goal
# issue 23: <= 1.5x once connected); the first round's replies are checked, every reply must be no error.

from __future__ import annotations

import argparse
import json
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import benchlib as bl
from pgbench.load import Load, both_worlds, sized_stores
from pgbench.report import NAMES, median, report_head
from pgbench.server import Server

GOAL = 1.5  # PostgreSQL / SQLite per call, once connected
INITIALIZE = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "pg_bench", "version": "1"}}


@dataclass(frozen=True)
class Call:
    """One tool call of a round: its name in the report, and its arguments for this round and world."""

    name: str
    tool: str
    arguments: Callable[[int, bl.World], dict[str, Any]]
    check: Callable[[dict[str, Any]], str]


def _update(number: int, world: bl.World) -> dict[str, Any]:
    intent = {"slug": bl.PREFIX.slug, "base_revision_id": world.heads[bl.PREFIX.slug],
              "notes": f"Round {number}: measured over MCP."}  # fmt: skip
    return {"intent": intent, "no_note": True}


def _written(reply: dict[str, Any]) -> str:
    return f"r{reply['revision_number']} of {reply['slug']}"


def calls_for(world: bl.World) -> list[Call]:
    return [
        Call("show", "show", lambda n, w: {"work": bl.EXACT.slug}, bl.check_show),
        Call("list --grep", "list", lambda n, w: {"grep": [bl.GREP_WORD]}, bl.check_list(world)),
        # A word a third of the generated works hold: every match is ranked before the first page is cut.
        Call("list --grep, a common word", "list", lambda n, w: {"grep": [bl.COMMON_GREP_WORD]}, bl.check_common),
        Call("log", "log", lambda n, w: {"work": bl.EXACT.slug}, lambda r: f"{len(r['revisions'])} revision(s)"),
        *(Call(f"resolve {t.matched_by}", "resolve", lambda n, w, t=t: {"ref": t.ref}, bl.check_resolve(t))
          for t in bl.TARGETS_WORKS),
        Call("checkpoint update", "checkpoint", _update, _written),
    ]  # fmt: skip


class McpServer:
    """A `wheypoint mcp` process of one world, after its handshake."""

    def __init__(self, venv: bl.Venv, world: bl.World) -> None:
        self.process = subprocess.Popen([venv.wheypoint, "mcp"], cwd=world.repo, env=world.env, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        self.ident = 0
        self.ask("initialize", INITIALIZE)

    def ask(self, method: str, params: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        """(ms from writing the request to reading its reply, the reply's result)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.ident += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.ident, "method": method, "params": params}).encode() + b"\n"
        started = time.perf_counter()
        self.process.stdin.write(line)
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        elapsed = (time.perf_counter() - started) * 1000
        if not answer:
            raise SystemExit(f"wheypoint mcp ended without answering {method}")
        reply: dict[str, Any] = json.loads(answer)
        if "result" not in reply:
            raise SystemExit(f"wheypoint mcp answered {method} with an error: {reply}")
        return elapsed, reply["result"]

    def call(self, tool: str, arguments: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        elapsed, result = self.ask("tools/call", {"name": tool, "arguments": arguments})
        if result.get("isError"):
            raise SystemExit(f"{tool} {arguments}: {json.dumps(result)[:600]}")
        structured: dict[str, Any] = result["structuredContent"]
        return elapsed, structured

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        code = self.process.wait(timeout=60)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        if code != 0:
            raise SystemExit(f"wheypoint mcp exited {code}")


@dataclass
class CallResult:
    size: int
    load: Load
    first: dict[str, float] = field(default_factory=dict)  # backend -> ms of the first call (driver, connection)
    series: dict[tuple[str, str], bl.Series] = field(default_factory=dict)  # (backend, call)
    replies: dict[tuple[str, str], str] = field(default_factory=dict)


def call_rounds(venv: bl.Venv, worlds: dict[str, bl.World], runs: int, result: CallResult) -> None:
    servers = {backend: McpServer(venv, world) for backend, world in worlds.items()}
    try:
        for backend, server in servers.items():
            result.first[backend] = server.call("show", {"work": bl.EXACT.slug})[0]
        calls = {backend: calls_for(world) for backend, world in worlds.items()}
        for round_number in range(bl.WARMUP_ROUNDS + runs):
            order = list(worlds) if round_number % 2 == 0 else list(reversed(worlds))
            for index, call in enumerate(calls["postgresql"]):
                for backend in order:
                    mine, world = calls[backend][index], worlds[backend]
                    elapsed, reply = servers[backend].call(mine.tool, mine.arguments(round_number, world))
                    if mine.tool == "checkpoint":
                        world.heads[bl.PREFIX.slug] = reply["revision_id"]
                    if round_number == 0:
                        result.replies[backend, call.name] = mine.check(reply)
                    if round_number >= bl.WARMUP_ROUNDS:
                        result.series.setdefault((backend, call.name), bl.Series(call.name)).times.append(elapsed)
    finally:
        for server in servers.values():
            server.close()


def run_calls(args: argparse.Namespace, venv: bl.Venv, server: Server | None, floor: tuple[float, float]) -> tuple[
    str, bool
]:  # fmt: skip
    started = time.perf_counter()
    server, sizes, sources = sized_stores(args, venv, server, "calls")
    results: list[CallResult] = []
    for size in sizes:
        source, _ = sources[size]
        with both_worlds(venv, server, size, source, args, "calls") as (worlds, load):
            result = CallResult(size, load)
            call_rounds(venv, worlds, args.runs, result)
            results.append(result)
    text, ok = calls_report(args, venv, floor, server, results, time.perf_counter() - started)
    return text, ok


def calls_report(args: argparse.Namespace, venv: bl.Venv, floor: tuple[float, float], server: Server,
                 results: list[CallResult], seconds: float) -> tuple[str, bool]:  # fmt: skip
    lines = [*report_head("PostgreSQL tool-call benchmark", venv, floor, server),
             f"- one `wheypoint mcp` per backend, {args.runs} kept rounds after {bl.WARMUP_ROUNDS} warm-up rounds; "
             "each round sends every call to both servers back to back (which goes first alternates); a call's "
             "time is from writing its request line to reading its reply line; the first round's replies are "
             f"checked; this part took {seconds:.0f} s", "",
             f"Goal (issue 23): PostgreSQL / SQLite <= {GOAL}x per call once connected (the median of per-round "
             "ratios, then the ratio of medians in brackets).", "",
             "| works | call | SQLite ms | PostgreSQL ms | PostgreSQL / SQLite | goal | replies (SQLite; PostgreSQL) |",
             "|---:|---|---:|---:|---:|---|---|"]  # fmt: skip
    ok = True
    for r in results:
        lines.append(f"| {r.size:,} | first call (`show`: the driver's import and the connection) | "
                     f"{r.first['sqlite']:.1f} | {r.first['postgresql']:.1f} | "
                     f"{r.first['postgresql'] / r.first['sqlite']:.2f}x | - | - |")  # fmt: skip
        for (backend, name), pg in r.series.items():
            if backend != "postgresql":
                continue
            sq = r.series["sqlite", name]
            ratio = pg.paired(sq)
            ok = ok and ratio <= GOAL
            lines.append(f"| {r.size:,} | {name} | {median(sq.times):.1f} | {median(pg.times):.1f} | {ratio:.2f}x "
                         f"[{pg.of_medians(sq):.2f}x] | {bl.verdict(ratio, GOAL)} | "
                         f"{r.replies['sqlite', name]}; {r.replies['postgresql', name]} |")  # fmt: skip
    lines += ["", f"{NAMES['postgresql']} store loaded as lookups.py loads it: "
              + "; ".join(f"{r.size:,} works, {r.load.database}" for r in results)]  # fmt: skip
    return "\n".join(lines) + "\n", ok
