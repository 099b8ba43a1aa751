"""The start-up image: the package's compiled modules in one file, so a command reads one file, not one per module.

Why. A command imports 35 to 70 of this package's modules before it does any work. The standard path pays, for
each, a lookup through every finder on `sys.meta_path`, a directory check, a stat, and an open, read and check
of its `.pyc`: about half of a command's import time (measured in docs/design.md's start-up section). The image
holds every module's code object, marshalled, in one file beside the package's own bytecode
(`<package>/__pycache__/image.<cache tag>.bin`, or under `sys.pycache_prefix`); `install()` puts a finder at the
front of `sys.meta_path` that serves `wheypoint.*` from it.

Invariants, enforced here:
- A module is served from the image only when its source's size and modification time (in nanoseconds) are the
  ones the image was built from: CPython's check of a `.pyc`, one stat per module, but to the nanosecond, so an
  edited, reinstalled or mutated source is never run from an old image. The image takes a module's code from
  its `.pyc` only when that one was written in a later second than the source's last change; else it compiles.
  Any other module, or any doubt, goes down the standard path (the finder answers None), and the image is
  rebuilt when the command ends (`refresh()`).
- The image is only ever a cache: a missing, unreadable, truncated or foreign file (another interpreter's
  magic number, another format) is ignored, and a failed write (read-only install, full disk) leaves the
  standard path. It is written where CPython would write bytecode and not when bytecode writing is off
  (`sys.dont_write_bytecode`), to a temporary file renamed into place, so no reader sees half an image.
- Loading is the standard loader's in all but where the code comes from (`SourceFileLoader.get_code`), so
  `__file__`, `__spec__`, resources, tracebacks and `inspect` see ordinary source files.
"""

from __future__ import annotations

import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from importlib.machinery import ModuleSpec
    from types import CodeType, ModuleType
    from typing import Any

try:  # the bootstrap's own machinery, already loaded in every CPython process: no import cost
    import _frozen_importlib_external as _bootstrap
    from _frozen_importlib import ModuleSpec as _ModuleSpec
except ImportError:  # pragma: no cover - another interpreter: the standard path only
    _bootstrap = None  # type: ignore[assignment]

PACKAGE = __name__.partition(".")[0]

# The file: _MAGIC, the interpreter's bytecode magic number, the index's length (8 bytes, little-endian), the
# index (marshalled), then each module's marshalled code. The index maps a module's name to (the path of its
# source relative to the package's folder, so a copied or moved install reads its own files; whether it is a
# package; the source's mtime_ns and size; where its code starts after the index, and its length): a command
# reads the index and only the code of the modules it imports.
_MAGIC = b"WPI1"  # the image's own layout, version 1: a file of another is ignored
_HEAD = 16
_MAX_INDEX = 1 << 22  # an index of 4 MiB would name tens of thousands of modules: anything larger is not ours
_Entry = tuple[str, bool, int, int, int, int]
_state: dict[str, Any] = {"entries": None, "stale": False, "path": None, "dir": None, "file": None, "codes": 0}
_state["room"] = 0  # the bytes of code the image holds after its index (an entry must lie within them)


def image_path(package_dir: str) -> str | None:
    """Where the image of the package in `package_dir` lives, or None when this interpreter keeps no bytecode."""
    if _bootstrap is None or sys.implementation.cache_tag is None:
        return None
    try:
        pycache = os.path.dirname(_bootstrap.cache_from_source(os.path.join(package_dir, "__init__.py")))
    except (NotImplementedError, ValueError):
        return None
    return os.path.join(pycache, f"image.{sys.implementation.cache_tag}.bin")


def _read(path: str) -> dict[str, _Entry] | None:
    """The image's index, its file kept open for the code (None when there is no usable image)."""
    read = read_indexed(path, _MAGIC, _MAX_INDEX)
    if read is None:
        return None
    descriptor, entries, at, room = read
    if not isinstance(entries, dict):
        os.close(descriptor)
        return None
    _state["file"], _state["codes"], _state["room"] = descriptor, at, room
    return entries


def read_indexed(path: str, magic: bytes, max_index: int) -> tuple[int, Any, int, int] | None:
    """(the open file, its marshalled index, where its entries start, the room they have) of a file `write_indexed`
    wrote with `magic` under this interpreter, or None (the file is then closed).

    Only a regular file is read (opened without blocking, so a FIFO or a device planted there cannot hang every
    command: model/regular.py's guard, done here by hand because this module loads before any layer may be
    imported), and an index is taken only when it fits in the file and in `max_index`."""
    import stat

    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        facts = os.fstat(descriptor)
        head = os.pread(descriptor, _HEAD, 0) if stat.S_ISREG(facts.st_mode) else b""
        if len(head) != _HEAD or head[:4] != magic or head[4:8] != _bootstrap.MAGIC_NUMBER:
            raise ValueError("not a file of this format and interpreter")
        size = int.from_bytes(head[8:16], "little")
        if size > min(max_index, facts.st_size - _HEAD):
            raise ValueError("an index larger than the file")
        index = marshal.loads(os.pread(descriptor, size, _HEAD))
    except (OSError, EOFError, ValueError, TypeError):
        os.close(descriptor)
        return None
    return descriptor, index, _HEAD + size, facts.st_size - _HEAD - size


def write_indexed(path: str, magic: bytes, index: dict[Any, Any], blobs: list[bytes]) -> bool:
    """Write `magic`, this interpreter's magic number, the marshalled `index` and the `blobs` to `path`, through a
    temporary file renamed into place (no reader sees half a file); True when written."""
    try:
        data = marshal.dumps(index)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temporary = f"{path}.{os.getpid()}.tmp"
        try:
            with open(temporary, "xb") as handle:  # never through a file or link already there
                handle.write(magic + _bootstrap.MAGIC_NUMBER + len(data).to_bytes(8, "little") + data)
                handle.writelines(blobs)
            os.replace(temporary, path)
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise
    except (OSError, ValueError):
        return False
    return True


def _entry(name: str) -> _Entry | None:
    """The image's entry for module `name` when it is one `refresh` writes: (relative path, is a package, mtime_ns,
    size, start, length), its code within the room the file holds after the index. Checked when the module is
    asked for, not the whole index at start (a command imports a third of the package); an entry of another shape
    is not used, and the image is written again."""
    entries = _state["entries"]
    entry = entries.get(name) if entries is not None else None
    if entry is None:
        return None
    if isinstance(entry, tuple) and len(entry) == 6:
        path, package, _, _, start, length = entry
        if (isinstance(path, str) and isinstance(package, bool) and all(type(n) is int for n in entry[2:])
                and not path.startswith(("/", "..")) and 0 <= start <= start + length <= _state["room"]):  # fmt: skip
            return entry
    _state["stale"] = True
    return None


def _code(entry: _Entry) -> CodeType | None:
    """A module's code from the image, or None when the image cannot give it."""
    try:
        data = os.pread(_state["file"], entry[5], _state["codes"] + entry[4])
        if len(data) != entry[5]:
            return None
        code = marshal.loads(data)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return code if isinstance(code, type(_code.__code__)) else None


class _Loader(_bootstrap.SourceFileLoader if _bootstrap is not None else object):  # type: ignore[misc]
    """The standard source loader, but for the code object, which comes from the image when it is current."""

    def get_code(self, fullname: str) -> CodeType | None:
        entry = _entry(fullname)
        if entry is not None:
            try:
                facts = os.stat(self.path)
            except OSError:
                facts = None
            if facts is not None and (facts.st_mtime_ns, facts.st_size) == (entry[2], entry[3]):
                code = _code(entry)
                if code is not None:
                    return code
        _state["stale"] = True
        standard: CodeType | None = super().get_code(fullname)
        return standard


class _Finder:
    """Finds `wheypoint.*` modules in the image; answers None for anything else, which the standard path finds."""

    @staticmethod
    def find_spec(name: str, path: object = None, target: ModuleType | None = None) -> ModuleSpec | None:
        if not name.startswith(PACKAGE + "."):
            return None
        entry = _entry(name)
        if entry is None:  # not in the image (a new file, or no such module): the standard path answers
            return None
        source, is_package = os.path.join(_state["dir"], entry[0]), entry[1]
        # The spec `spec_from_file_location` makes of a source file, built without its generic steps (a
        # millisecond over a command's modules). Its `cached` (the module's `__cached__`) is spelled as
        # `cache_from_source` spells it where that is plain (no `sys.pycache_prefix`, no `-O`); else the spec
        # asks `cache_from_source` itself when the module is set up.
        folder = os.path.dirname(source)
        spec = _ModuleSpec(name, _Loader(name, source), origin=source, is_package=is_package)
        spec.has_location = True
        if is_package:
            spec.submodule_search_locations = [folder]
        if sys.pycache_prefix is None and not sys.flags.optimize:
            stem = os.path.basename(source)[:-3]  # (the image holds `.py` files only)
            spec.cached = os.path.join(folder, "__pycache__", f"{stem}.{sys.implementation.cache_tag}.pyc")
        return spec

    @staticmethod
    def invalidate_caches() -> None:
        return None


def install(package_dir: str) -> None:
    """Serve this package's modules from its image, when there is a current one (else note it is to be built)."""
    path = image_path(package_dir)
    if path is None or os.environ.get("WHEYPOINT_IMAGE", "").lower() == "off" or not os.path.isdir(package_dir):
        return  # no bytecode kept, the image turned off, or the package is in an archive (zipimport)
    _state["path"], _state["dir"] = path, package_dir
    entries = _read(path)
    if entries is None:
        _state["stale"] = True
        return
    _state["entries"] = entries
    sys.meta_path.insert(0, _Finder)


def refresh() -> bool:
    """Write the image again when this process found it missing or stale, then whatever else asked to be kept once
    a command is answered (`keep_at_refresh`: the compiled patterns); True when the image was written."""
    written = _refresh_image()
    for keep in _kept:
        keep()
    return written


_kept: list[Callable[[], object]] = []


def keep_at_refresh(keep: Callable[[], object]) -> None:
    """Run `keep` when `refresh` runs: a cache beside the image written once a command's answer is out."""
    _kept.append(keep)


def _refresh_image() -> bool:
    """Write the image again when this process found it missing or stale; True when it wrote one.

    Called once a command's answer is out. Every `.py` of the package is compiled (from its current `.pyc` when
    there is one, else from the source) and stamped with its source's size and mtime_ns.
    """
    path, package_dir = _state["path"], _state["dir"]
    if path is None or sys.dont_write_bytecode or not (_state["stale"] or _strays()):
        return False
    _state["stale"] = False
    entries: dict[str, _Entry] = {}
    codes: list[bytes] = []
    at = 0
    try:
        for folder, subfolders, names in os.walk(package_dir):
            subfolders[:] = sorted(d for d in subfolders if d != "__pycache__" and "." not in d)
            relative = os.path.relpath(folder, package_dir)
            prefix = PACKAGE if relative == "." else PACKAGE + "." + relative.replace(os.sep, ".")
            for name in sorted(names):
                if not name.endswith(".py") or not name[:-3].isidentifier():
                    continue
                source = os.path.join(folder, name)
                module = prefix if name == "__init__.py" else f"{prefix}.{name[:-3]}"
                facts = os.stat(source)
                code = _compiled(source, facts)
                where = os.path.relpath(source, package_dir)
                entries[module] = (where, name == "__init__.py", facts.st_mtime_ns, facts.st_size, at, len(code))
                codes.append(code)
                at += len(code)
    except (OSError, SyntaxError, ValueError):
        return False
    return write_indexed(path, _MAGIC, entries, codes)


def _strays() -> bool:
    """Whether a module of the package (past the two that load before the image can) came by the standard path:
    one the image does not hold yet."""
    early = (PACKAGE, __name__)
    for name, module in list(sys.modules.items()):
        spec = getattr(module, "__spec__", None)
        if name.startswith(PACKAGE + ".") and name not in early and spec and not isinstance(spec.loader, _Loader):
            return True
    return False


def _compiled(source: str, facts: os.stat_result) -> bytes:
    """The marshalled code of `source`: its `.pyc` when CPython's own check passes (the source's mtime in seconds
    and its size) and the `.pyc` was written in a later second than the source's last change (so no edit of the
    same second and size can hide behind it), else compiled now."""
    try:
        cached = _bootstrap.cache_from_source(source)
        with open(cached, "rb") as handle:
            pyc = handle.read()
            written = os.fstat(handle.fileno()).st_mtime_ns
        if (pyc[:4] == _bootstrap.MAGIC_NUMBER and int.from_bytes(pyc[4:8], "little") == 0
                and int.from_bytes(pyc[8:12], "little") == int(facts.st_mtime) & 0xFFFFFFFF
                and int.from_bytes(pyc[12:16], "little") == facts.st_size & 0xFFFFFFFF
                and written // 10**9 > facts.st_mtime_ns // 10**9):  # fmt: skip
            return pyc[16:]
    except (OSError, NotImplementedError, ValueError):
        pass
    with open(source, "rb") as handle:
        return marshal.dumps(compile(handle.read(), source, "exec", dont_inherit=True))
