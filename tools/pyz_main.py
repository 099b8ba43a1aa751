"""Entry point packed into wheypoint.pyz: unpack the archive once per source digest, then run from that copy.

Why: zipimport never writes bytecode, so an archive recompiles every module it imports on every start, which
costs more than most commands. The first run of a build copies the package out of the archive into
`<cache>/pyz-<digest>/` (cache: `$WHEYPOINT_PYZ_CACHE`, else `$XDG_CACHE_HOME/wheypoint`, else
`~/.cache/wheypoint`); every later run imports from there, where Python keeps its own `__pycache__` for each
interpreter version. `WHEYPOINT_PYZ_CACHE=off` runs straight from the archive.

Invariants, enforced below:
- A copy is used only when it is complete: it is written into a private temporary folder, every file flushed to
  disk, and renamed into place in one step, so a crash leaves a stray temporary folder, never a half copy.
- A copy is used only when this user owns it and no one else can write it (nor its parent), so another account
  cannot plant code that the runtime would import.
- The folder is named by the digest of the sources, so a rebuilt archive never runs an old copy.
- Anything that goes wrong while unpacking (read-only home, full disk, a race lost) falls back to the archive:
  the cache only ever makes a start faster, never makes it fail.
This file is copied into the archive by tools/build_pyz.py, which fills in SOURCE_DIGEST.
"""

from __future__ import annotations

import os
import sys

SOURCE_DIGEST = "sha256:unbuilt"  # replaced by tools/build_pyz.py with the digest of the sources it packs
PACKAGE = "wheypoint/"


def cache_root() -> str | None:
    """The folder that holds unpacked copies, or None when the user turned the cache off."""
    chosen = os.environ.get("WHEYPOINT_PYZ_CACHE", "")
    if chosen.lower() == "off":
        return None
    if chosen:
        return chosen
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "wheypoint")


def private(path: str) -> bool:
    """True when `path` is a folder of this user that no other user can write into."""
    try:
        facts = os.stat(path)
    except OSError:
        return False
    return facts.st_uid == os.getuid() and not facts.st_mode & 0o022 and os.path.isdir(path)


def unpack(archive: str, root: str, folder: str) -> None:
    """Copy the package out of `archive` into `folder`, all or nothing (see the invariants above)."""
    import shutil
    import tempfile
    import zipfile

    os.makedirs(root, mode=0o700, exist_ok=True)
    temp = tempfile.mkdtemp(prefix=".unpacking-", dir=root)
    try:
        with zipfile.ZipFile(archive) as source:
            for info in source.infolist():
                parts = info.filename.split("/")
                if not info.filename.startswith(PACKAGE) or info.is_dir() or ".." in parts or "" in parts:
                    continue
                target = os.path.join(temp, *parts)
                os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
                with open(target, "xb") as handle:
                    handle.write(source.read(info))
                    handle.flush()
                    os.fsync(handle.fileno())
        os.rename(temp, folder)  # atomic; fails if another process renamed its complete copy there first
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    descriptor = os.open(root, os.O_RDONLY)
    try:
        os.fsync(descriptor)  # the rename itself survives a crash
    finally:
        os.close(descriptor)


def unpacked_copy(archive: str) -> str | None:
    """The folder to import wheypoint from instead of `archive`, or None to import from the archive itself."""
    root = cache_root()
    if root is None or not hasattr(os, "getuid"):
        return None
    folder = os.path.join(root, "pyz-" + SOURCE_DIGEST.partition(":")[2][:32])
    ready = os.path.join(folder, "wheypoint", "_build.py")
    if not os.path.isfile(ready):
        try:
            unpack(archive, root, folder)
        except Exception:  # a read-only home, a full disk, a race lost to another first run: see the invariants
            pass
    if os.path.isfile(ready) and private(folder) and private(root):
        return folder
    return None


if __name__ == "__main__":
    archive = os.path.abspath(sys.path[0])
    copy = unpacked_copy(archive)
    if copy is not None:
        sys.path[0] = copy
    import wheypoint

    wheypoint.RUNNING_ARCHIVE = archive
    from wheypoint.cli.entry import run

    run()
