"""The package packed in wheypoint.pyz: copied out once per source digest, or imported from memory when it cannot be.

Why a copy: zipimport never writes bytecode, so an archive recompiles every module it imports on every start,
which costs more than most commands. The first run of a build copies the package out of the archive into
`<cache>/pyz-<digest>/` (cache: `$WHEYPOINT_PYZ_CACHE`, else `$XDG_CACHE_HOME/wheypoint`, else
`~/.cache/wheypoint`); every later run imports from there, where Python keeps its own `__pycache__` for each
interpreter version. `WHEYPOINT_PYZ_CACHE=off` runs straight from the archive.

Why a package inside the archive (`package.zip`, a stored zip of `wheypoint/...`): CPython reads an archive's
whole table of contents, in Python, before the first line of `__main__.py` runs. The archive's own table holds
three names instead of the package's 150, which spares every command half a millisecond; the copy, made once,
is what imports from there.

Invariants, enforced here and in the archive's `__main__.py` (tools/pyz_main.py), which picks the copy:
- A copy is used only when it is complete: it is written into a private temporary folder, every file flushed to
  disk, and renamed into place in one step, so a crash leaves a stray temporary folder, never a half copy.
- A copy is used only when this user owns it and no one else can write it (nor its parent), so another account
  cannot plant code that the runtime would import.
- The folder is named by the digest of the sources, so a rebuilt archive never runs an old copy.
- Anything that goes wrong while unpacking (read-only home, full disk, a race lost) falls back to the archive:
  the cache only ever makes a start faster, never makes it fail. From the archive, the package's modules are
  compiled from the packed sources in memory, with `__file__` inside the archive (as zipimport would name
  them), tracebacks that show their lines, and `importlib.resources` reading the packed files.

tools/build_pyz.py packs this file into the archive under its own name, beside the package and not in it (it
runs before the package can be imported). The entry imports it only when this build's copy is not there yet or
cannot be used, so the runs after the first never compile it.
"""

from __future__ import annotations

import io
import os
import sys
import zipfile
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec
from importlib.util import decode_source

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import CodeType, ModuleType

PAYLOAD = "package.zip"  # the archive's member that holds the package (tools/build_pyz.py writes it)
PACKAGE = "wheypoint"


def packed(archive: str) -> zipfile.ZipFile:
    """The package's own zip, read out of `archive` into memory."""
    with zipfile.ZipFile(archive) as outer:
        return zipfile.ZipFile(io.BytesIO(outer.read(PAYLOAD)))


def unpack(archive: str, root: str, folder: str) -> None:
    """Copy the package out of `archive` into `folder`, all or nothing (see the invariants above)."""
    import shutil
    import tempfile

    os.makedirs(root, mode=0o700, exist_ok=True)
    temp = tempfile.mkdtemp(prefix=".unpacking-", dir=root)  # (first: a cache that cannot be written reads nothing)
    try:
        source = packed(archive)
        for info in source.infolist():
            parts = info.filename.split("/")
            if parts[0] != PACKAGE or info.is_dir() or ".." in parts or "" in parts:
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


class ArchiveImporter(MetaPathFinder, Loader):
    """Finds and loads `wheypoint` and its modules from the packed sources, held in memory (a meta path finder
    and its loader in one, as zipimport's is)."""

    def __init__(self, archive: str) -> None:
        self.archive = archive
        self.source = packed(archive)
        self.names = frozenset(self.source.namelist())

    def _member(self, fullname: str) -> tuple[str, bool] | None:
        """(the packed file of module `fullname`, whether it is a package), or None when it is not packed here."""
        if fullname.partition(".")[0] != PACKAGE:
            return None
        stem = fullname.replace(".", "/")
        for name, package in ((f"{stem}/__init__.py", True), (f"{stem}.py", False)):
            if name in self.names:
                return name, package
        return None

    def find_spec(self, fullname: str, path: object = None, target: ModuleType | None = None) -> ModuleSpec | None:
        found = self._member(fullname)
        if found is None:
            return None
        name, package = found
        spec = ModuleSpec(fullname, self, origin=os.path.join(self.archive, name), is_package=package)
        spec.has_location = True  # so `__file__` is set, inside the archive as zipimport would name it
        if package:
            spec.submodule_search_locations = [os.path.join(self.archive, os.path.dirname(name))]
        return spec

    def create_module(self, spec: ModuleSpec) -> None:
        return None  # the standard module object

    def exec_module(self, module: ModuleType) -> None:
        exec(self.get_code(module.__name__), module.__dict__)

    def _found(self, fullname: str) -> tuple[str, bool]:
        found = self._member(fullname)
        if found is None:
            raise ImportError(f"{fullname} is not in {self.archive}", name=fullname)
        return found

    def is_package(self, fullname: str) -> bool:
        return self._found(fullname)[1]

    def get_source(self, fullname: str) -> str:
        """The module's source text (what tracebacks and `inspect` show)."""
        return decode_source(self.source.read(self._found(fullname)[0]))

    def get_code(self, fullname: str) -> CodeType:
        name = self._found(fullname)[0]
        return compile(self.source.read(name), os.path.join(self.archive, name), "exec", dont_inherit=True)

    def get_resource_reader(self, fullname: str) -> _Files | None:
        """The packed files of package `fullname`, for `importlib.resources`."""
        name, package = self._found(fullname)
        return _Files(zipfile.Path(self.source, os.path.dirname(name) + "/")) if package else None


class _Files:
    """A package's packed files as `importlib.resources` reads them (`files()`, the traversable reader)."""

    def __init__(self, folder: zipfile.Path) -> None:
        self.folder = folder

    def files(self) -> zipfile.Path:
        return self.folder


def import_from_archive(archive: str) -> None:
    """Import wheypoint from the packed sources from now on (no copy can be used)."""
    if not any(isinstance(finder, ArchiveImporter) for finder in sys.meta_path):
        sys.meta_path.insert(0, ArchiveImporter(archive))
