"""Regular expressions compiled once, and tables built once, kept beside the start-up image for later commands."""

# Why. Python compiles a pattern in pure Python (the parser, then the code generator) and keeps the result for the
# life of the process only. The credential scan's rules, its proximity rule and the personal-data patterns cost a
# write 1 ms of compiling, and a text that names a secret ("the password is ...") about 30 ms: the proximity rule
# alone compiles 15 long patterns. What the compiler produces is a list of integers that `_sre.compile` turns into
# a pattern object in microseconds; this module keeps those lists in one file beside the start-up image
# (`__pycache__/patterns.<cache tag>.bin`) and builds the pattern from them, so a pattern costs its compile once
# per install and interpreter, not once per command.
#
# The same file keeps tables the package builds from its own source alone (`kept`): the credential scan's needle
# index, a millisecond of every write to build, a fraction of one to load.
#
# Invariants, enforced here:
# - Only patterns written in this package's source are given to `compiled` (the scan's rule tables, literals),
#   and only values built from that source to `kept`: never one built from input, which would put a user's text on
#   disk. The file therefore holds a bounded set; past _MAX_ENTRIES or _MAX_BYTES it is started again.
# - A kept table is named with a version and the sizes and times of the sources it is built from, so a changed
#   source builds it again; its shape is checked (the caller's `sound`) before it is used, and a table that fails
#   is built again.
# - A kept program is used only by the interpreter that made it: the file's header names the interpreter's
#   version, its bytecode magic number and the regular-expression engine's own constants (`_sre.MAGIC`, its code
#   unit size and limits), and a file of any other is ignored whole. `_sre.compile` validates every program it is
#   given (CPython refuses malformed code rather than run it), and the entry's types are checked before that.
# - The file is only ever a cache, like the image: missing, unreadable, foreign, truncated or not a regular file,
#   it is ignored and every pattern compiles the standard way; a failed write changes nothing. It is written only
#   where the image would be, never when bytecode writing is off, through a temporary file renamed into place.
# - Whatever goes wrong in the interpreter's private compiler interface (another Python, a changed signature),
#   `compiled` answers what `re.compile` answers: the same pattern, only slower.

from __future__ import annotations

import _sre  # type: ignore[import-not-found,unused-ignore]  # built in, like `marshal`
import marshal
import os
import sys

from wheypoint import boot

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable
    from typing import Any, AnyStr, TypeVar

    T = TypeVar("T")

# `re.ASCII`, for callers that need the flag without loading `re` (its engine constant; a test holds it to `re`).
ASCII = 256
_MAGIC = b"WPR1"  # this file's own layout, version 1
_MAX_INDEX = 1 << 22
_MAX_ENTRIES = 4096
_MAX_BYTES = 1 << 25
# A program as kept: (flags, code, the group count less one, group index, index group); its key names the
# pattern's type, its flags and its source.
_Program = tuple[int, list[int], int, dict[str, int], tuple["str | None", ...]]
_state: dict[str, Any] = {"opened": False, "index": None, "file": None, "at": 0, "new": {}, "path": None}
_cache: dict[tuple[type, str | bytes, int], re.Pattern[Any]] = {}


def _engine() -> str:
    """What a kept program depends on: this interpreter's version and the engine's constants (the file's header
    names its bytecode's magic number, which `boot.read_indexed` checks)."""
    return f"{sys.version}|{_sre.MAGIC}|{_sre.CODESIZE}|{_sre.MAXREPEAT}|{_sre.MAXGROUPS}"


def compiled(source: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """`re.compile(source, flags)`, from the kept program when there is one (see the invariants above)."""
    key = (type(source), source, flags)
    found = _cache.get(key)
    if found is None:
        found = _cache[key] = _load(source, int(flags))  # (a RegexFlag is an int the file cannot hold)
    return found


def kept(
    name: str, version: str, build: Callable[[], T], sound: Callable[[object], bool], sources: tuple[str, ...] = ()
) -> T:
    """`build()`, from the file when this install kept it: a marshallable value built from this package's source
    alone, named `name` at `version` (see the invariants above). `sources`: the package's modules it is built from
    (`model/credential_hand.py`), whose sizes and times then belong to its version too; where one is not a file
    (a zipapp), nothing is kept. `sound` says whether a kept value has the shape `build` gives; one that has not
    is built again."""
    stamps = _stamps(sources)
    if stamps is None:
        return build()
    if not _state["opened"]:
        _open()
    key = f"v:{name}:{version}{stamps}"  # (a pattern's key starts with `s` or b`b`)
    entry = _state["index"].get(key) if _state["index"] is not None else None
    value: Any = _entry(entry) if entry is not None else None
    if value is not None and sound(value):
        found: T = value
        return found
    made = build()
    if _state["path"] is not None:
        _state["new"][key] = marshal.dumps(made)  # type: ignore[arg-type]  # (marshallable: the caller's promise)
    return made


def _stamps(sources: tuple[str, ...]) -> str | None:
    """`:size.mtime_ns` of each of the package's source files named, or None when one cannot be looked at."""
    folder = os.path.dirname(boot.__file__)
    try:
        found = [os.stat(os.path.join(folder, *source.split("/"))) for source in sources]
    except OSError:
        return None
    return "".join(f":{st.st_size}.{st.st_mtime_ns}" for st in found)


def _key(source: str | bytes, flags: int) -> str | bytes:
    """The index's key for a pattern: its type, flags and source in one string or bytes."""
    return f"s{flags}:{source}" if isinstance(source, str) else b"b%d:%s" % (flags, source)


def _load(source: AnyStr, flags: int) -> re.Pattern[AnyStr]:
    if not _state["opened"]:
        _open()
    key = _key(source, flags)
    entry = _state["index"].get(key) if _state["index"] is not None else None
    kept = _from_file(source, entry) if entry is not None else None
    if kept is not None:
        return kept
    try:
        program = _program(source, flags)
        made: re.Pattern[AnyStr] = _sre.compile(source, *program)
    except Exception:  # the private interface moved (another Python): the standard way, with the same answer
        import re

        return re.compile(source, flags)
    if _state["path"] is not None:
        _state["new"][key] = marshal.dumps(program)
    return made


def _program(source: str | bytes, flags: int) -> _Program:
    """What `re.compile` hands `_sre.compile`: the parse, then the generated code, by the interpreter's own compiler."""
    try:
        from re import _compiler, _parser  # type: ignore[attr-defined,unused-ignore]
    except ImportError:  # Python 3.10
        import sre_compile as _compiler  # type: ignore[no-redef,unused-ignore]
        import sre_parse as _parser  # type: ignore[no-redef,unused-ignore]
    parsed = _parser.parse(source, flags)
    code = [int(unit) for unit in _compiler._code(parsed, flags)]  # the opcodes are int subclasses: plain ints
    groups = dict(parsed.state.groupdict)
    names: list[str | None] = [None] * parsed.state.groups
    for name, number in groups.items():
        names[number] = name
    return (int(flags | parsed.state.flags), code, int(parsed.state.groups - 1), groups, tuple(names))


def _sound_program(program: object) -> bool:
    if not (isinstance(program, tuple) and len(program) == 5):
        return False
    flags, code, groups, index, names = program
    # (each code unit is left to `_sre.compile`, which refuses one that is not an integer or out of range: a check
    # here would walk thousands of units of every pattern loaded)
    return (type(flags) is int and type(groups) is int and isinstance(code, list) and isinstance(index, dict)
            and isinstance(names, tuple) and all(isinstance(k, str) and type(v) is int for k, v in index.items())
            and all(name is None or isinstance(name, str) for name in names))  # fmt: skip


def _entry(entry: tuple[int, int]) -> Any:
    """A kept entry's value (at its offset and length in the open file), or None when it cannot be read whole."""
    try:
        data = os.pread(_state["file"], entry[1], _state["at"] + entry[0])
        return marshal.loads(data) if len(data) == entry[1] else None
    except (OSError, EOFError, ValueError, TypeError):
        return None


def _from_file(source: AnyStr, entry: tuple[int, int]) -> re.Pattern[AnyStr] | None:
    program = _entry(entry)
    if not _sound_program(program):
        return None
    try:
        pattern: re.Pattern[AnyStr] = _sre.compile(source, *program)
    except (ValueError, TypeError, RuntimeError, OverflowError):
        return None
    return pattern


def _path() -> str | None:
    image = boot.image_path(os.path.dirname(boot.__file__))
    if (
        image is None
        or os.environ.get("WHEYPOINT_IMAGE", "").lower() == "off"
        or not os.path.isdir(os.path.dirname(boot.__file__))
    ):
        return None
    return os.path.join(os.path.dirname(image), f"patterns.{sys.implementation.cache_tag}.bin")


def _open() -> None:
    """Read the file's index once, keeping the file open for the programs (nothing when there is no usable file)."""
    _state["opened"] = True
    path = _state["path"] = _path()
    if path is None:
        return
    read = boot.read_indexed(path, _MAGIC, _MAX_INDEX)
    if read is None:
        return
    descriptor, index, at, room = read
    if not isinstance(index, dict) or index.get("") != _engine() or not all(
        isinstance(k, (str, bytes)) and isinstance(v, tuple) and len(v) == 2 and all(type(n) is int for n in v)
        and 0 <= v[0] <= v[0] + v[1] <= room for k, v in index.items() if k != ""
    ):  # fmt: skip
        os.close(descriptor)
        return
    _state["file"], _state["index"], _state["at"] = descriptor, index, at


def refresh() -> bool:
    """Keep the programs this process compiled that the file lacked; True when it wrote the file."""
    new: dict[str | bytes, bytes] = _state["new"]
    path = _state["path"]
    if not new or path is None or sys.dont_write_bytecode:
        return False
    _state["new"] = {}
    kept: dict[str | bytes, bytes] = {}
    index = _state["index"] or {}
    if len(index) + len(new) <= _MAX_ENTRIES:
        for key, entry in index.items():
            if key == "":
                continue
            try:
                data = os.pread(_state["file"], entry[1], _state["at"] + entry[0])
            except OSError:
                break
            if len(data) == entry[1]:
                kept[key] = data
    kept.update(new)
    if sum(len(data) for data in kept.values()) > _MAX_BYTES:
        kept = dict(new)
    written: dict[str | bytes, object] = {"": _engine()}
    at = 0
    for key, data in kept.items():
        written[key] = (at, len(data))
        at += len(data)
    return boot.write_indexed(path, _MAGIC, written, list(kept.values()))


boot.keep_at_refresh(refresh)
