"""wheypoint: revisioned, validated handoff checkpoints for coding agents."""

from __future__ import annotations

import os as _os

from wheypoint import boot as _boot

_boot.install(_os.path.dirname(__file__))  # this package's modules from its start-up image, when it is current

__version__ = "0.1.0"

# The single-file runtime this process runs from, by absolute path: set by the archive's entry point
# (tools/pyz_main.py) before any command runs, whether it imports from the archive or from its unpacked copy.
# None for an installed package. What `hooks install` writes into a harness's settings, and `--version` reports.
RUNNING_ARCHIVE: str | None = None

# The module tools/build_pyz.py writes into the single-file runtime, holding the digest of the sources it packed.
_BUILD_MODULE = "_build"


def source_digest() -> str:
    """sha256 over the sorted (name, bytes) of this package's `.py` files, as tools/build_pyz.py computes it.

    Names are archive paths (`wheypoint/cli/main.py`); each file adds its name, a NUL, its length in decimal,
    a NUL and its bytes. The files are read through `importlib.resources`, so the same code reads a folder
    or a zip archive. Costly (every source file is read): `--version` alone calls it, never a command.
    """
    import hashlib
    from importlib.resources import files

    found: list[tuple[str, bytes]] = []
    pending = [(files(__name__), __name__)]
    while pending:
        folder, prefix = pending.pop()
        for item in folder.iterdir():
            if item.is_dir():
                if item.name != "__pycache__":
                    pending.append((item, f"{prefix}/{item.name}"))
            elif item.name.endswith(".py") and f"{prefix}/{item.name}" != f"{__name__}/{_BUILD_MODULE}.py":
                found.append((f"{prefix}/{item.name}", item.read_bytes()))
    digest = hashlib.sha256()
    for name, data in sorted(found):
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
    return "sha256:" + digest.hexdigest()


def version_facts() -> dict[str, str | None]:
    """What `wheypoint --version` answers: the version, the digest of the sources running, how they run, Python.

    In the single-file runtime (`runtime: pyz`) the digest is the one fixed at build time, and `unpacked` names
    the cached copy it imports from (None when it runs straight from the archive: see tools/pyz_main.py); from an
    installed package (`runtime: package`) the digest is computed now, over the same files, so the two agree.
    """
    import os
    import platform
    from importlib import import_module

    try:
        built: str | None = str(import_module(f"{__name__}.{_BUILD_MODULE}").SOURCE_DIGEST)
    except ImportError:
        built = None
    in_archive = not os.path.isfile(str(__spec__.origin))  # (its modules are read from inside the archive file)
    unpacked = None if in_archive or built is None else os.path.dirname(os.path.dirname(str(__spec__.origin)))
    return {"version": __version__, "source_digest": built or source_digest(),
            "runtime": "package" if built is None else "pyz", "archive": RUNNING_ARCHIVE, "unpacked": unpacked,
            "python": platform.python_version()}  # fmt: skip
