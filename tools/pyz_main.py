"""wheypoint.pyz's entry: run this build's unpacked copy of the package, made by the first run, else the archive.

Short on purpose: CPython runs an archive's `__main__.py` from source, compiled afresh on every start (zipimport
keeps no bytecode), so every line here is paid by every command. The unpacking, why the copy is safe to import,
and the import from the archive itself are in tools/pyz_payload.py (packed beside this file under that name),
which only a run without a usable copy imports. This file is copied into the archive by tools/build_pyz.py,
which fills in SOURCE_DIGEST.
"""

from __future__ import annotations

import os
import sys

SOURCE_DIGEST = "sha256:unbuilt"  # replaced by tools/build_pyz.py with the digest of the sources it packs


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


def unpacked_copy(archive: str) -> str | None:
    """The folder to import wheypoint from instead of `archive`, or None to import from the archive itself."""
    root = cache_root()
    if root is None or not hasattr(os, "getuid"):
        return None
    folder = os.path.join(root, "pyz-" + SOURCE_DIGEST.partition(":")[2][:32])
    ready = os.path.join(folder, "wheypoint", "_build.py")
    if not os.path.isfile(ready):
        try:
            from pyz_payload import unpack  # the first run of this build: the archive is sys.path[0]

            unpack(archive, root, folder)
        except Exception:  # a read-only home, a full disk, a race lost to another first run: the archive runs
            pass
    if os.path.isfile(ready) and private(folder) and private(root):
        return folder
    return None


if __name__ == "__main__":
    archive = os.path.abspath(sys.path[0])
    copy = unpacked_copy(archive)
    try:
        if copy is not None:
            sys.path[0] = copy
        else:
            from pyz_payload import import_from_archive

            import_from_archive(archive)
        import wheypoint

        wheypoint.RUNNING_ARCHIVE = archive
        from wheypoint.cli.entry import run
    except Exception as error:  # a broken zip, a module missing: the archive or its copy is not whole
        import json

        said = f"{archive} cannot run: its package cannot be read ({type(error).__name__}); get or build it again"
        print(json.dumps({"ok": False, "error": {"code": "runtime-damaged", "message": said}}))
        sys.exit(1)
    run()
