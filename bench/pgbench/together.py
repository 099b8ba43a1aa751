"""Starts N `wheypoint` processes at once (gated or spawned) and collects how each one ended."""

# N processes start in one of two ways: `spawn`, all launched at once as a user's shell would (each pays its
# own start-up, so they arrive over a few seconds); `gate`, each started first as `python -c` that imports
# the CLI and the store's driver, then waits on one pipe, which the benchmark closes to release all of them at
# once into `wheypoint.cli.main.main`: the tightest race a machine this size can make.

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import benchlib as bl
from pgbench.stores import Store

STARTS = ("gate", "spawn")

# A gated `wheypoint <argv>`: imports the CLI and the store's driver, says it is ready on the fd in argv[1],
# waits for its stdin to close (the benchmark closes it for every writer at once), then runs the command as
# the console script does (main, flush, os._exit).
_GATE = """
import os, sys
ready = int(sys.argv.pop(1))
import wheypoint.cli.main as cli
if os.environ.get("WHEYPOINT_STORE", "").startswith("postgres"):
    import psycopg, wheypoint.store.postgres.backend
else:
    import sqlite3, wheypoint.store.sqlite.backend
os.write(ready, b"r")
os.close(ready)
os.read(0, 1)
code = cli.main(sys.argv[1:])
sys.stdout.flush()
os._exit(code)
"""


@dataclass
class Exit:
    """How one of N processes ended: exit code, its reply, and seconds from the start to its exit."""

    code: int
    reply: dict[str, Any]
    seconds: float
    stderr: str

    @property
    def outcome(self) -> str:
        """`commit` for a new revision, else the refusal's code (or what went wrong)."""
        if self.reply.get("ok") is True:
            return "replayed" if self.reply.get("replayed") else "commit"
        return str(self.reply.get("error", {}).get("code", "no-reply"))


def reply_of(out: bytes, err: bytes) -> dict[str, Any]:
    try:
        reply = json.loads(out)
    except ValueError:
        reply = None
    if not isinstance(reply, dict):
        text = (out.decode(errors="replace") + err.decode(errors="replace")).strip()
        return {"ok": False, "error": {"code": "no-reply", "message": text[-400:]}}
    return reply


def run_together(venv: bl.Venv, argvs: Sequence[Sequence[str]], store: Store, cwd: Path, start: str) -> tuple[
    list[Exit], float
]:  # fmt: skip
    """One `wheypoint <argv>` process per argv, started together (see the module's `gate` and `spawn`).

    Answers each process's exit and the wall seconds from the start (the gate opening, or the first spawn)
    to the last exit.
    """
    procs: list[subprocess.Popen[bytes]] = []
    pipe = subprocess.PIPE
    if start == "gate":
        ready_r, ready_w = os.pipe()
        go_r, go_w = os.pipe()
        try:
            for argv in argvs:
                procs.append(subprocess.Popen([venv.python, "-c", _GATE, str(ready_w), *argv], stdin=go_r, stdout=pipe,
                                              stderr=pipe, env=store.env, cwd=cwd, pass_fds=(ready_w,)))  # fmt: skip
        finally:
            os.close(ready_w)
            os.close(go_r)
        ready = 0
        while ready < len(argvs):
            chunk = os.read(ready_r, 64)
            if not chunk:  # every process has closed its end: some died before they were ready
                break
            ready += len(chunk)
        os.close(ready_r)
        started = time.perf_counter()
        os.close(go_w)  # the gate opens for every process at once
    else:
        started = time.perf_counter()
        for argv in argvs:
            procs.append(subprocess.Popen([venv.wheypoint, *argv], stdin=subprocess.DEVNULL, stdout=pipe, stderr=pipe,
                                          env=store.env, cwd=cwd))  # fmt: skip
    exits: list[Exit | None] = [None] * len(procs)

    def wait(index: int, proc: subprocess.Popen[bytes]) -> None:
        out, err = proc.communicate()
        ended = time.perf_counter() - started
        exits[index] = Exit(proc.returncode, reply_of(out, err), ended, err.decode(errors="replace")[-400:])

    threads = [threading.Thread(target=wait, args=(i, p)) for i, p in enumerate(procs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done = [e for e in exits if e is not None]
    return done, max(e.seconds for e in done)
