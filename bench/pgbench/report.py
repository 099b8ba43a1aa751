"""What every part's report shares: its head lines (machine, venv, server settings), backend names, medians."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import benchlib as bl
from pgbench.server import Server

NAMES = {"postgresql": "PostgreSQL", "sqlite": "SQLite"}


def report_head(title: str, venv: bl.Venv, floor: tuple[float, float], server: Server | None) -> list[str]:
    lines = [f"# wheypoint {title}", "", *bl.machine_facts(venv, floor)]
    if server is not None:
        f = server.facts
        lines.append(f"- PostgreSQL {f['server_version']}: {server.how}; fsync={f['fsync']}, synchronous_commit="
                     f"{f['synchronous_commit']}, full_page_writes={f['full_page_writes']}, wal_sync_method="
                     f"{f['wal_sync_method']}, shared_buffers={f['shared_buffers']}, max_connections="
                     f"{f['max_connections']}; SQLite stores run with synchronous=FULL (WAL)")  # fmt: skip
    return [*lines, ""]


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")
