"""`wheypoint serve` on a store of 10,000 works, SQLite and PostgreSQL: each page's server time and size."""

# What. A real `wheypoint serve` (the clean venv's console script, with the `postgres` extra) on each backend's
# copy of one generated store (servebench_store.py: 10,000 works over 5 projects, 12% gated, 1-4 revisions
# each), asked for six pages: the inbox (`/`), filtered by text (`/?grep=tombstone`), by text in one project
# (`/?project=search&grep=tombstone`, the project of its matches) and by owner (`/?owner=ann`), a gated work's
# page with 4 revisions (`/work/<id>`) and its last change (`/work/<id>/diff`).
# Goals (issue 22): each page in under 50 ms of server time and under 100 KB, and no page that asks anything of
# another host. Goal (issue 23): on PostgreSQL each page's server median within RATIO_GOAL (1.5x) of the same
# page's on SQLite, once connected (the server keeps its connections, so no round counts a connection).
#
# How it is timed. The server runs with WHEYPOINT_SERVE_TIMING=1, which makes each response carry the standard
# `Server-Timing: app;dur=<ms>` header: the time from the request read (line and headers) to the response's
# headers being sent, measured inside the server, so neither the client's own start-up nor the loopback is
# counted. The client's wall time per request (a new connection each: the server speaks HTTP/1.0) is shown
# beside it. Rounds interleave the backends (their order alternates round to round) and the pages; 2 warm-up
# rounds are discarded. "Another host": every src, href and action attribute of each page is a path of this
# server (starts with one `/`), and its Content-Security-Policy says `default-src 'self'`.
#
# Reproduce (from the checkout's root; building the store once takes about 30 s and copying it into
# PostgreSQL about a minute on a busy 2-CPU machine; a throwaway PostgreSQL server is started, fsync on):
#
#     python3 bench/serve_bench.py                       # 10,000 works, 20 rounds, both backends
#     python3 bench/serve_bench.py --works 1000 --rounds 5 --backends sqlite
#     python3 bench/serve_bench.py --url postgresql://USER:PASSWORD@HOST:PORT/postgres   # an existing server
#
# The report is printed and written to bench/results/serve.md: each backend's pages, then (with both backends)
# each page's PostgreSQL/SQLite ratio of server medians (and of p95s) with PASS or FAIL against 1.5x. The exit
# status is 1 when a page missed a goal.

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import benchlib as bl
import servebench_store
from pgbench.server import Server, fresh_database, pg_sql, postgres_server, terminate

GOAL_MS = 50.0
GOAL_BYTES = 100_000
RATIO_GOAL = 1.5  # PostgreSQL's server median over SQLite's, per page
WARMUP = 2
_COPY = "import sys; sys.path.insert(0, sys.argv[1]); import benchlib; benchlib.copy_store_in_batches(*sys.argv[2:])"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--works", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--url", help="a PostgreSQL superuser's URL (else a throwaway server is started)")
    return parser.parse_args(argv)


def serve_store(size: int, venv: bl.Venv) -> tuple[Path, str]:
    """The generated store, cached as bench/results/stores/serve-<size>-<builder>-<schema fingerprint>.sqlite3."""
    target = bl.STORES_DIR / f"serve-{size}-{servebench_store.BUILDER}-{bl.store_fingerprint(venv)}.sqlite3"
    return bl.venv_built_store(target, size, venv, "servebench_store.write_serve_store")


class Running:
    """One `wheypoint serve` process and its session cookie."""

    def __init__(self, venv: bl.Venv, env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen([venv.wheypoint, "serve", "--port", "0"], cwd=cwd, env=env, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"wheypoint serve did not start: {self.proc.stderr.read() if self.proc.stderr else ''}")
        url = urlsplit(json.loads(line)["url"])
        self.host, self.port = url.hostname or "127.0.0.1", url.port or 0
        status, headers, _ = self.get(f"/?{url.query}", cookie="")
        if status != 303:
            raise SystemExit(f"the token was refused: {status}")
        self.cookie = headers["set-cookie"].split(";")[0]

    def get(self, path: str, cookie: str | None = None) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        headers = {"Host": f"{self.host}:{self.port}"}
        if cookie is None:
            headers["Cookie"] = self.cookie
        conn.request("GET", path, headers=headers)
        reply = conn.getresponse()
        body = reply.read()
        conn.close()
        return reply.status, {k.lower(): v for k, v in reply.getheaders()}, body

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def targets(store: Path) -> dict[str, str]:
    """The six pages: a gated work with the most revisions (4), its diff, the inbox, by text (in all projects and in
    one) and by owner."""
    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        (work_id,) = conn.execute("SELECT work_id FROM works WHERE gated = 1 ORDER BY head_number DESC, work_id "
                                  "LIMIT 1").fetchone()  # fmt: skip
        (project,) = conn.execute("SELECT project_key FROM works WHERE orientation LIKE ? ORDER BY work_id LIMIT 1",
                                  (f"%{servebench_store.GREP_WORD}%",)).fetchone()  # fmt: skip
    finally:
        conn.close()
    return {"inbox": "/", "inbox ?grep=": f"/?grep={servebench_store.GREP_WORD}",
            "inbox ?project=&grep=": f"/?project={project}&grep={servebench_store.GREP_WORD}",
            "inbox ?owner=": "/?owner=ann", "work": f"/work/{work_id}", "diff": f"/work/{work_id}/diff"}  # fmt: skip


def elsewhere(headers: dict[str, str], body: bytes) -> list[str]:
    """What in a page could make a browser ask another host: an attribute not a path here, a CSP not 'self'."""
    text = body.decode("utf-8")
    found = [v for v in re.findall(r'\b(?:src|href|action)="([^"]*)"', text) if not re.match(r"^/(?!/)", v)]
    found += re.findall(r"url\(", text)
    if "default-src 'self'" not in headers.get("content-security-policy", ""):
        found.append("a CSP without default-src 'self'")
    return found


@contextmanager
def backend_server(venv: bl.Venv, name: str, store: Path, root: Path, pg: Server | None) -> Iterator[Running]:
    """`wheypoint serve` on this backend's copy of the store, in a scratch checkout; stopped on the way out."""
    home, repo = root / name / "home", root / name / bl.PROJECT
    home.mkdir(parents=True)
    repo.mkdir(parents=True)
    bl.make_repo(repo)
    env = {**bl.bench_env(home), "WHEYPOINT_SERVE_TIMING": "1"}
    if pg is None:
        shutil.copyfile(store, home / "store.sqlite3")
    else:
        _, url = fresh_database(venv, pg, "serve")
        print(f"copying {bl.count_works(store):,} works into PostgreSQL ...", file=sys.stderr, flush=True)
        started = time.perf_counter()
        subprocess.run([venv.python, "-c", _COPY, str(bl.BENCH_DIR), str(store), url], env=env, cwd=repo, check=True)
        pg_sql(venv, url, "VACUUM ANALYZE")
        print(f"  copied in {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
        env["WHEYPOINT_STORE"] = url
    running = Running(venv, env, repo)
    try:
        yield running
    finally:
        running.stop()


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[18] if len(values) > 1 else values[0]


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, terminate)
    backends = [b for b in args.backends.split(",") if b]
    venv = bl.ensure_venv_with("postgres")
    store, how = serve_store(args.works, venv)
    pages = targets(store)
    load = os.getloadavg()
    times: dict[tuple[str, str], list[float]] = {}
    walls: dict[tuple[str, str], list[float]] = {}
    sizes: dict[tuple[str, str], int] = {}
    foreign: dict[tuple[str, str], list[str]] = {}
    with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="wheypoint-servebench-") as tmp:
        pg = stack.enter_context(postgres_server(venv, args.url)) if "postgresql" in backends else None
        servers = {name: stack.enter_context(backend_server(venv, name, store, Path(tmp), pg if name != "sqlite"
                                                            else None)) for name in backends}  # fmt: skip
        for round_number in range(WARMUP + args.rounds):
            order = backends if round_number % 2 == 0 else backends[::-1]
            for name in order:
                for page, path in pages.items():
                    started = time.perf_counter()
                    status, headers, body = servers[name].get(path)
                    wall = (time.perf_counter() - started) * 1000
                    if status != 200:
                        raise SystemExit(f"{name} {path}: {status} {body[:300]!r}")
                    key = (name, page)
                    sizes[key], foreign[key] = len(body), elsewhere(headers, body)
                    if round_number >= WARMUP:
                        dur = re.fullmatch(r"app;dur=([0-9.]+)", headers.get("server-timing", ""))
                        if dur is None:
                            raise SystemExit("no Server-Timing header: is WHEYPOINT_SERVE_TIMING honoured?")
                        times.setdefault(key, []).append(float(dur.group(1)))
                        walls.setdefault(key, []).append(wall)
        load_after = os.getloadavg()
    lines = [f"# wheypoint serve at {args.works:,} works", "",
             f"`python3 bench/serve_bench.py --works {args.works} --rounds {args.rounds} --backends {args.backends}`, "
             f"git HEAD {bl.git_head()}, {time.strftime('%Y-%m-%d %H:%M %Z')}, {os.cpu_count()} CPUs, load average "
             f"{load[0]:.2f} before and {load_after[0]:.2f} after; Python {venv.facts['python']} in the clean venv "
             f"({venv.path.name}); store {how}; pages {', '.join(pages.values())}.", "",
             "| backend | page | size | server median | server p95 | client median | goals (< 50 ms, < 100 KB, "
             "no other host) |", "| --- | --- | ---: | ---: | ---: | ---: | --- |"]  # fmt: skip
    ok = True
    for name in backends:
        for page in pages:
            key = (name, page)
            median, high = statistics.median(times[key]), p95(times[key])
            met = high < GOAL_MS and sizes[key] < GOAL_BYTES and not foreign[key]
            ok = ok and met
            verdict = "met" if met else "MISSED: " + "; ".join(
                [f"p95 {high:.1f} ms"] * (high >= GOAL_MS) + [f"{sizes[key]:,} bytes"] * (sizes[key] >= GOAL_BYTES)
                + [f"asks {', '.join(foreign[key][:3])}"] * bool(foreign[key]))  # fmt: skip
            lines.append(f"| {name} | `{page}` | {sizes[key] / 1000:.1f} KB | {median:.1f} ms | {high:.1f} ms | "
                         f"{statistics.median(walls[key]):.1f} ms | {verdict} |")  # fmt: skip
    if "sqlite" in backends and "postgresql" in backends:
        ratios = ratio_lines(times, list(pages))
        lines += ["", *ratios]
        ok = ok and not any(line.endswith("| FAIL |") for line in ratios)
    bl.publish("\n".join(lines) + "\n", None, "serve")
    return 0 if ok else 1


def ratio_lines(times: dict[tuple[str, str], list[float]], pages: list[str]) -> list[str]:
    """Each page's PostgreSQL server time over SQLite's (medians, then p95s), PASS or FAIL against RATIO_GOAL."""
    lines = [f"PostgreSQL against SQLite, server time (goal: each page's median within {RATIO_GOAL}x):", "",
             "| page | SQLite median | PostgreSQL median | ratio | p95 ratio | within 1.5x |",
             "| --- | ---: | ---: | ---: | ---: | --- |"]  # fmt: skip
    for page in pages:
        lite, pg = times[("sqlite", page)], times[("postgresql", page)]
        ratio = statistics.median(pg) / statistics.median(lite)
        verdict = "PASS" if ratio <= RATIO_GOAL else "FAIL"
        lines.append(f"| `{page}` | {statistics.median(lite):.1f} ms | {statistics.median(pg):.1f} ms | "
                     f"{ratio:.2f}x | {p95(pg) / p95(lite):.2f}x | {verdict} |")  # fmt: skip
    return lines


if __name__ == "__main__":
    sys.exit(main())
