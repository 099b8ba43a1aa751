"""Build the single-file runtime, wheypoint.pyz, reproducibly from src/wheypoint/ (same tree, same bytes)."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from pyz_payload import PAYLOAD  # (tools/ is this script's folder, first on its path)

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "wheypoint"
DEFAULT_OUT = ROOT / "skill" / "wheypoint" / "scripts" / "wheypoint.pyz"
PACKAGE = "wheypoint"
BUILD_MODULE = f"{PACKAGE}/_build.py"  # generated here; a file of that name in the tree is never packaged
SHEBANG = b"#!/usr/bin/env python3\n"
ZIP_EPOCH_MIN = 315532800  # 1980-01-01T00:00:00Z, the earliest time a zip entry can carry
ZIP_EPOCH_MAX = 4354819198  # 2107-12-31T23:59:58Z, the latest
FILE_MODE = 0o644 << 16
UNIX = 3  # the "made by" system of every entry, whatever system builds the archive

MAIN = ROOT / "tools" / "pyz_main.py"  # becomes the archive's __main__.py, its SOURCE_DIGEST filled in
PAYLOAD_MODULE = ROOT / "tools" / "pyz_payload.py"  # copies the package out, or imports it from the archive
UNBUILT = 'SOURCE_DIGEST = "sha256:unbuilt"'

BUILD = '''"""Facts fixed when tools/build_pyz.py built this single-file runtime (generated, not in the source tree)."""

SOURCE_DIGEST = "{digest}"
'''


def source_digest(files: Sequence[tuple[str, bytes]]) -> str:
    """sha256 over the sorted (archive name, bytes) of the Python sources; `wheypoint.source_digest` agrees.

    Each file adds its name, a NUL, its length in decimal, a NUL, then its bytes, so no two lists of
    files hash alike. Only `.py` files count: they are what every installation of the package carries.
    """
    digest = hashlib.sha256()
    for name, data in sorted(files):
        if name.endswith(".py") and name != BUILD_MODULE:
            digest.update(f"{name}\0{len(data)}\0".encode())
            digest.update(data)
    return "sha256:" + digest.hexdigest()


def collect(source: Path) -> list[tuple[str, bytes]]:
    """(archive name, bytes) of every file of the package: no caches, no bytecode, no hidden files."""
    files = []
    for folder, dirs, names in os.walk(source):
        dirs[:] = [d for d in dirs if d != "__pycache__" and not d.startswith(".")]
        for name in names:
            if name.startswith(".") or name.endswith((".pyc", ".pyo")) or name.endswith("~"):
                continue
            path = Path(folder, name)
            archive_name = f"{PACKAGE}/{path.relative_to(source).as_posix()}"
            if archive_name != BUILD_MODULE:
                files.append((archive_name, path.read_bytes()))
    if not any(name == f"{PACKAGE}/__init__.py" for name, _ in files):
        raise SystemExit(f"{source} is not the wheypoint package (no __init__.py)")
    return sorted(files)


When = tuple[int, int, int, int, int, int]  # a zip entry's date and time: year, month, day, hour, minute, second


def entry_time(environ: Mapping[str, str]) -> When:
    """Every entry's date and time: SOURCE_DATE_EPOCH (UTC) if set, else 1980-01-01, clamped to what zip holds."""
    raw = environ.get("SOURCE_DATE_EPOCH", "").strip()
    try:
        epoch = int(raw) if raw else ZIP_EPOCH_MIN
    except ValueError:
        raise SystemExit(f"SOURCE_DATE_EPOCH must be a whole number of seconds, not {raw!r}") from None
    year, month, day, hour, minute, second = time.gmtime(min(max(epoch, ZIP_EPOCH_MIN), ZIP_EPOCH_MAX))[:6]
    return year, month, day, hour, minute, second


def zip_bytes(files: Sequence[tuple[str, bytes]], when: When, head: bytes = b"") -> bytes:
    """`head`, then a stored (uncompressed) zip of `files`, sorted by name, each entry dated `when`."""
    import io

    buffer = io.BytesIO()
    buffer.write(head)
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, data in sorted(files):
            info = zipfile.ZipInfo(name, date_time=when)
            info.compress_type = zipfile.ZIP_STORED
            info.create_system = UNIX
            info.external_attr = FILE_MODE
            archive.writestr(info, data)
    return buffer.getvalue()


def write_atomically(path: Path, data: bytes) -> None:
    """The runtime's own atomic write (notes/files.py), executable whatever the builder's umask."""
    sys.path.insert(0, str(ROOT / "src"))  # the checkout's package, installed or not
    from wheypoint.notes.files import write_atomic

    write_atomic(str(path), data, mode=0o755)


def build(out: Path, source: Path = SOURCE) -> dict[str, object]:
    """Build the runtime at `out`; returns what was built (the reply printed by the command line)."""
    files = collect(source)
    digest = source_digest(files)
    main = MAIN.read_text(encoding="utf-8")
    if main.count(UNBUILT) != 1:
        raise SystemExit(f"{MAIN} must hold the line {UNBUILT} exactly once")
    files.append((BUILD_MODULE, BUILD.format(digest=digest).encode()))
    when = entry_time(os.environ)
    entries = [("__main__.py", main.replace(UNBUILT, f'SOURCE_DIGEST = "{digest}"').encode()),
               (PAYLOAD_MODULE.name, PAYLOAD_MODULE.read_bytes()), (PAYLOAD, zip_bytes(files, when))]  # fmt: skip
    data = zip_bytes(entries, when, SHEBANG)  # the archive: the shebang line, then the zip
    write_atomically(out, data)
    return {"ok": True, "path": str(out.resolve()), "sha256": hashlib.sha256(data).hexdigest(),
            "source_digest": digest, "entries": len(entries), "packed": len(files)}  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"the file to write (default {DEFAULT_OUT})")
    parser.add_argument("--src", type=Path, default=SOURCE, help=f"the package folder to pack (default {SOURCE})")
    args = parser.parse_args(argv)
    print(json.dumps(build(args.out, args.src)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
