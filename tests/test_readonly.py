"""Stores and notes that cannot be written: reads still work, writes are refused `storage-error`, nothing changes.

The file system must really refuse the write. Permission bits do that for an ordinary account; for root
(CI machines run as root) they do not, so the helper sets the immutable attribute instead, which binds
root too, and checks that a write is actually refused before a test relies on it.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Runner, make_repo, missing

FIRST = ["--orientation", "Store is read-only.", "--next", "hold", "--notes", "Written once."]


@pytest.fixture
def locker() -> Iterator[list[Path]]:
    """Paths made unwritable during a test, made writable again afterwards so the folder can be cleaned."""
    locked: list[Path] = []
    yield locked
    for path in reversed(locked):
        _unlock(path)


def _lock(path: Path, locked: list[Path]) -> None:
    locked.append(path)
    if os.geteuid() == 0:
        done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            _unavailable(f"chattr +i {path} failed: {done.stderr.strip()}")
    else:
        path.chmod(path.stat().st_mode & ~0o222)
    probe = path / ".probe" if path.is_dir() else path
    try:
        with open(probe, "a"):
            pass
    except OSError:
        return
    _unavailable(f"{path} can still be written after locking it")


def _unlock(path: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True, check=False)
    else:
        path.chmod(path.stat().st_mode | 0o200)


def _unavailable(why: str) -> None:
    missing(f"this machine cannot make a path unwritable for this account: {why}")


def _settled(store: Path) -> None:
    """Fold the WAL into the store file and drop it, as a store looks after its last writer has gone."""
    conn = sqlite3.connect(store)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{store}{suffix}").unlink(missing_ok=True)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def written(wp: Runner, tmp_path: Path, home: Path) -> tuple[Path, str]:
    repo = make_repo(tmp_path / "shop")
    done = wp("checkpoint", "ro-work", *FIRST, cwd=repo)
    assert done.code == 0, done.stdout
    _settled(home / "store.sqlite3")
    return repo, done.json["revision_id"]


READS = (("show", "ro-work"), ("list",), ("log", "ro-work"), ("resolve", "ro-work"), ("list", "--grep", "read-only"))


def test_a_store_in_a_folder_that_cannot_be_written_is_still_read(
    wp: Runner, written: tuple[Path, str], home: Path, locker: list[Path]
) -> None:
    repo, base = written
    before = _digest(home / "store.sqlite3")
    _lock(home, locker)
    for args in READS:
        done = wp(*args, cwd=repo)
        assert done.code == 0 and done.json["ok"], (args, done.stdout)
    assert wp("show", "ro-work", cwd=repo).json["record"]["orientation"] == "Store is read-only."
    refused = wp("checkpoint", "ro-work", "--orientation", "Second.", "--base", base, cwd=repo)
    assert refused.code == 1 and refused.json["error"]["code"] == "storage-error", refused.stdout
    assert str(home / "store.sqlite3") in refused.json["error"]["message"]
    assert "folder cannot be written" in refused.json["error"]["message"]
    assert _digest(home / "store.sqlite3") == before
    assert sorted(os.listdir(home)) == ["store.sqlite3"]


def test_a_store_file_that_cannot_be_written_refuses_writes_and_serves_reads(
    wp: Runner, written: tuple[Path, str], home: Path, locker: list[Path]
) -> None:
    repo, base = written
    store = home / "store.sqlite3"
    before = _digest(store)
    _lock(store, locker)
    refused = wp("checkpoint", "ro-work", "--orientation", "Second.", "--base", base, cwd=repo)
    assert refused.code == 1 and refused.json["error"]["code"] == "storage-error", refused.stdout
    assert str(store) in refused.json["error"]["message"] and "readonly" in refused.json["error"]["message"]
    for args in READS:
        done = wp(*args, cwd=repo)
        assert done.code == 0 and done.json["ok"], (args, done.stdout)
    _unlock(store)
    assert _digest(store) == before


def test_a_notes_folder_that_cannot_be_written_is_note_unwritable(
    wp: Runner, written: tuple[Path, str], locker: list[Path]
) -> None:
    """`show --write-note` is refused; a checkpoint is committed and says its note was not written."""
    repo, base = written
    notes = repo / ".cheese" / "notes"
    (notes / "ro-work.md").unlink()
    _lock(notes, locker)
    done = wp("show", "ro-work", "--write-note", cwd=repo)
    assert done.code == 1 and done.json["error"]["code"] == "note-unwritable", done.stdout
    assert str(notes / "ro-work.md") in done.json["error"]["message"]
    later = wp("checkpoint", "ro-work", "--orientation", "Second.", "--base", base, cwd=repo)
    assert later.code == 0 and later.json["durability"] == "canonical-local", later.stdout
    assert [w["code"] for w in later.json["warnings"]] == ["note-unwritable"]
    assert os.listdir(notes) == [".gitignore"]  # the first checkpoint's, for writers' temporaries; no note, no temp
    assert wp("show", "ro-work", cwd=repo).json["record"]["revision_number"] == 2
