"""A full disk under a store that does not exist yet is `storage-full`, as it is under one that does."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import make_repo

FLAGS = ("checkpoint", "retry-backoff", "--orientation", "Backoff.", "--next", "hold", "--notes", "N.", "--no-note")


def _run(home: Path, cwd: Path, code: str | None = None, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_")}
    env.update(WHEYPOINT_HOME=str(home), WHEYPOINT_PROJECT="shop")

    def cap() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    program = ["-c", code] if code else ["-m", "wheypoint"]
    return subprocess.run([sys.executable, *program, *FLAGS], cwd=cwd, env=env, capture_output=True, text=True,
                          preexec_fn=cap, timeout=60, check=False)  # fmt: skip


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path | None]:
    """A 256 KiB tmpfs of our own, when this machine lets us mount one (root with CAP_SYS_ADMIN); else None."""
    mount = tmp_path / "disk"
    mount.mkdir()
    tool = shutil.which("mount")
    done = subprocess.run([tool or "mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)],
                          capture_output=True, check=False) if tool and os.geteuid() == 0 else None  # fmt: skip
    if done is None or done.returncode != 0:
        yield None
        return
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True, check=False)


def _fill(disk: Path, leave: int) -> None:
    stat = os.statvfs(disk)
    room = stat.f_bavail * stat.f_frsize
    (disk / "filler").write_bytes(b"\0" * max(room - leave, 0))


@pytest.mark.parametrize("leave", [0, 8 * 1024, 32 * 1024])
def test_a_new_store_on_a_full_disk_is_storage_full(tmp_path: Path, small_disk: Path | None, leave: int) -> None:
    repo = make_repo(tmp_path / "shop")
    if small_disk is None:
        # No mount here: the same path through the backend, the disk's answers given by the kernel's file size
        # limit (the write fails, SQLite says "disk I/O error") and a file system reporting no room.
        code = ("import os, sys\nfrom wheypoint.store.sqlite import backend\n"
                "class Full:\n    f_bavail = 0\n    f_frsize = 4096\n"
                "os.statvfs = lambda path: Full()\n"
                "from wheypoint.cli.main import main\nsys.exit(main(sys.argv[1:]))\n")  # fmt: skip
        done = _run(tmp_path / "home", repo, code=code, limit=leave or 1)
    else:
        _fill(small_disk, leave)
        done = _run(small_disk / "home", repo)
    assert "Traceback" not in done.stderr, done.stderr
    error = json.loads(done.stdout)["error"]
    assert done.returncode == 1 and error["code"] == "storage-full", done.stdout
    assert "nothing was written" in error["message"]


def test_an_io_error_with_room_left_stays_storage_error_and_is_answered_at_once(tmp_path: Path) -> None:
    """The kernel refuses the write (the file size limit), the disk has room: not a full disk. Nor is it a lock
    to wait out: the refusal comes well inside the busy timeout (the switch to WAL once retried it 15 s)."""
    from wheypoint.store.sqlite.backend import BUSY_TIMEOUT_MS

    started = time.monotonic()
    done = _run(tmp_path / "home", make_repo(tmp_path / "shop"), limit=1)
    elapsed = time.monotonic() - started
    error = json.loads(done.stdout)["error"]
    assert done.returncode == 1 and error["code"] == "storage-error", done.stdout
    assert elapsed < BUSY_TIMEOUT_MS / 1000 / 3, elapsed
