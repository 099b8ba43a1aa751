"""Streaming a JSONL file record by record in bounded memory, counting what cannot be read.

Lines are read with a length cap, so a 500 MB line (base64 images are common) is skipped in chunks
rather than loaded. Invalid UTF-8, malformed JSON and a truncated last line (a live file) are counted
in `ReadStats`, never raised: a transcript is evidence, and one bad line must not hide the rest.

Two records written on one line with no newline between them are both read, as that line's. A lone surrogate
(`"\\ud800"`: valid JSON, yet no Unicode text) is not looked for here, where every line would pay for the search:
`discovery.turns_of` drops a turn holding one and counts it as invalid UTF-8; `loads` refuses it outright for the
readers that decode a few records at a time (heads, tails, single files).
"""

from __future__ import annotations

import os

from wheypoint import jsontext
from wheypoint.model.regular import open_regular
from wheypoint.transcripts.model import ReadPoint

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any, BinaryIO

    from wheypoint.transcripts.model import ReadStats

    SkipTest = Callable[[bytes], "str | None"]

MAX_LINE_BYTES = 10 * 1024 * 1024
DUPLICATE = "duplicate"  # what a skip test returns for a line that repeats another record
_SKIP_CHUNK = 1 << 20
_DECODE = jsontext.decoder()  # on text: json.loads(bytes) would sniff the encoding of every line
BOM = b"\xef\xbb\xbf"  # a UTF-8 byte-order mark, which some editors write first
_ENCODE = jsontext.encoder(ensure_ascii=False, check_circular=False)


# Before a transcript's first record, this many blank or damaged lines (a cut or garbled first write) are passed
# over when a reader tells whether a file is its own; past them the file is taken for something else.
HEAD_DAMAGE = 4


def mtime_stamp(mtime: float) -> str:
    """A file's modification time as a transcript writes its times: ISO 8601 in UTC, to the millisecond, `Z`.

    What a reader answers for a session's last activity when no record of its tail carries a time; `datetime`
    (a C module and a 100 KB Python one) is imported here, when that happens, not by every reader's import."""
    from datetime import datetime, timezone

    return datetime.fromtimestamp(mtime, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def head_record(handle: BinaryIO, limit: int) -> tuple[dict[str, Any] | None, int]:
    """The first record of a JSONL head (a line holding a whole JSON object), decoded, and the offset it starts at.

    A UTF-8 byte-order mark, blank lines and up to HEAD_DAMAGE lines that are not a whole JSON object (cut or
    garbled) are passed over, as the readers pass over such lines when reading. (None, -1) when there is none so
    soon, or a line is longer than `limit`. The offset is past the mark.
    """
    offset = handle.tell()
    damaged = 0
    while damaged <= HEAD_DAMAGE:
        line = handle.readline(limit)
        if not line:
            return None, -1
        start, offset = offset, offset + len(line)
        if line.startswith(BOM):
            line, start = line[len(BOM) :], start + len(BOM)
        if not line.strip():
            continue
        if len(line) >= limit and not line.endswith(b"\n"):
            return None, -1  # a head is looked at within bounds: past an over-long line the caller cannot tell
        if line.lstrip()[:1] == b"{":
            try:
                record = loads(line)
            except (ValueError, RecursionError):
                record = None
            if isinstance(record, dict):
                return record, start
        damaged += 1
    return None, -1


class LoneSurrogate(UnicodeError):
    """Decoded JSON holding a lone surrogate: a ValueError, so callers count it with the other bad input."""


def unicode_clean(value: Any) -> Any:
    """`value` itself, or LoneSurrogate when one of its strings (keys too) holds a lone surrogate.

    Only called on text that holds a `\\ud` escape: JSON decoding joins escaped pairs into one character, so
    a surrogate can only survive it alone, and re-encoding the value as UTF-8 is where that shows.
    """
    try:
        _ENCODE(value).encode("utf-8")
    except UnicodeEncodeError:
        raise LoneSurrogate("a string holds a lone surrogate") from None
    except (ValueError, RecursionError):  # nesting too deep to re-encode: no string of it reaches a reply whole
        raise LoneSurrogate("too deep to check for lone surrogates") from None
    return value


def escaped_surrogate(text: str) -> bool:
    """Whether JSON text may decode to a lone surrogate (it holds a `\\ud` escape): only then is a check due."""
    return "\\ud" in text or "\\uD" in text


def loads(data: str | bytes) -> Any:
    """json.loads of UTF-8 (bytes are decoded strictly: json.loads would let surrogate bytes through), and
    LoneSurrogate, a ValueError, for a value no UTF-8 reply could carry."""
    if isinstance(data, bytes):  # a leading byte-order mark dropped, as "utf-8-sig" would (without its codec)
        text = data.decode("utf-8")
        text = text[1:] if text.startswith("\ufeff") else text
    else:
        text = data
    value = _DECODE(text)
    return unicode_clean(value) if escaped_surrogate(text) else value


def _records(text: str, stats: ReadStats) -> list[Any]:
    """The JSON values written one after the other on one line (a lost newline); what follows the last whole
    one, when it is not JSON, is counted malformed (the second record was itself cut short)."""
    from json import JSONDecoder  # (here: a lost newline is rare)

    decode = JSONDecoder().raw_decode
    found: list[Any] = []
    at, end = 0, len(text)
    while True:
        while at < end and text[at] in " \t\r\n":
            at += 1
        if at >= end:
            return found
        try:
            value, at = decode(text, at)
        except ValueError:
            stats.malformed += 1
            return found
        found.append(value)


_TAIL_CHECK = 4096  # the bytes before a read point that must be unchanged for a resumed read


def read_mark(path: str | os.PathLike[str], point: ReadPoint) -> dict[str, Any] | None:
    """What to remember of a read that stopped at `point`, to tell later whether the file only grew since: its
    device and inode, the offset and line count, and a checksum of the bytes just before the offset (CRC-32: it
    tells a rewrite from growth, and zlib loads in a tenth of the time hashlib's OpenSSL takes on every hook)."""

    try:
        with open_regular(path) as handle:
            facts = os.fstat(handle.fileno())
            handle.seek(max(0, point.offset - _TAIL_CHECK))
            tail = handle.read(min(point.offset, _TAIL_CHECK))
    except OSError:
        return None
    return {"offset": point.offset, "line": point.line, "dev": facts.st_dev, "ino": facts.st_ino,
            "tail": _checksum(tail)}  # fmt: skip


def resume_point(path: str | os.PathLike[str], mark: Any) -> ReadPoint | None:
    """Where to resume reading `path` after the read `mark` remembers (see read_mark), or None to read it whole:
    when the mark is missing or malformed, or the file is another one (replaced or rotated: another inode),
    shorter than the offset (truncated), or changed before it (rewritten in place)."""
    if not isinstance(mark, dict) or not all(type(mark.get(k)) is int for k in ("offset", "line", "dev", "ino")):
        return None
    offset = mark["offset"]
    if offset < 0 or mark["line"] < 0:
        return None
    try:
        with open_regular(path) as handle:
            facts = os.fstat(handle.fileno())
            if (facts.st_dev, facts.st_ino) != (mark["dev"], mark["ino"]) or facts.st_size < offset:
                return None
            handle.seek(max(0, offset - _TAIL_CHECK))
            tail = handle.read(min(offset, _TAIL_CHECK))
    except OSError:
        return None
    return ReadPoint(offset, mark["line"]) if _checksum(tail) == mark.get("tail") else None


_REST_CHECK = 65536  # the longest unfinished last line whose bytes a read mark's holder may remember (rest_after)


def rest_after(path: str | os.PathLike[str], mark: Any) -> str | None:
    """A checksum of the bytes past the offset a read mark remembers (an unfinished last line the read left for
    the next one), or None when there are none, more than _REST_CHECK of them, a line break among them (a whole
    line no read has taken yet), or the file cannot be read: with the mark's own test it tells that the file has
    not changed by a byte, though its read stopped short. The checksum holds the bytes' length."""
    if not isinstance(mark, dict) or type(mark.get("offset")) is not int or mark["offset"] < 0:
        return None
    try:
        with open_regular(path) as handle:
            end = os.fstat(handle.fileno()).st_size
            if not 0 < end - mark["offset"] <= _REST_CHECK:
                return None
            handle.seek(mark["offset"])
            rest = handle.read(_REST_CHECK + 1)
    except OSError:
        return None
    return None if b"\n" in rest else _checksum(rest)


def _checksum(data: bytes) -> str:
    import zlib

    return f"crc32:{zlib.crc32(data):08x}:{len(data)}"


def read_jsonl(
    path: str | os.PathLike[str], stats: ReadStats, max_line: int = MAX_LINE_BYTES, skip: SkipTest | None = None,
    start: ReadPoint | None = None,
) -> Iterator[tuple[int, Any]]:  # fmt: skip
    """(1-based line number, decoded JSON value) for every readable line of a JSONL file.

    `skip`, when given, sees each complete line's raw bytes first; a reason it returns counts the
    line under that reason (or as a duplicate) without decoding it: a reader uses it to pass over
    bulky bookkeeping records it recognises by their opening bytes.

    `start` resumes a read where an earlier one stopped (lines keep their numbers); when the file is read to its
    end, `stats.read_point` says where this one stopped: past the last complete line, so a line still being
    written is read whole next time. Whether the file is still the one read before is the caller's to check.
    """
    with open_regular(path) as handle:
        readline = handle.readline
        number = 0
        position = 0  # the offset just past the last complete line
        if start is not None:
            handle.seek(start.offset)
            number, position = start.line, start.offset
        while True:
            line = readline(max_line + 1)
            if not line:
                # A last line without its newline (still being written) is not counted: it is read again whole.
                stats.read_point = ReadPoint(position, number - (position != handle.tell()))
                return
            number += 1
            complete = line[-1:] == b"\n"
            if len(line) > max_line and not complete:
                stats.oversized += 1
                size = len(line)
                while True:  # skip the rest of the long line without holding it
                    rest = readline(_SKIP_CHUNK)
                    size += len(rest)
                    if not rest or rest.endswith(b"\n"):
                        break
                if rest:
                    position += size
                continue
            if complete:
                position += len(line)
            if len(line) < 4 and not line.strip():
                continue
            if skip is not None and complete:
                reason = skip(line)
                # A line holding two records (`}{"`: a lost newline) is decoded whatever its opening bytes say.
                if reason is not None and b'}{"' not in line:
                    stats.lines += 1
                    if reason == DUPLICATE:
                        stats.duplicates += 1
                    else:
                        stats.skipped[reason] += 1
                    continue
            stats.lines += 1
            if number == 1 and line.startswith(BOM):
                line = line[3:]
            try:
                text = line.decode()
                line = b""  # hold a long line once at a time: bytes, then text, then value
                try:
                    values = [_DECODE(text)]
                except jsontext.JSONDecodeError as error:
                    if not error.msg.startswith("Extra data"):
                        raise
                    values = _records(text, stats)  # the newline between two records was lost
                    stats.lines += len(values) - 1
                text = ""
            except UnicodeDecodeError:
                stats.invalid_utf8 += 1
                continue
            except RecursionError:  # nesting deeper than the decoder follows
                stats.malformed += 1
                continue
            except ValueError:
                if complete:
                    stats.malformed += 1
                else:
                    stats.truncated_tail = True
                continue
            for value in values:
                yield number, value
