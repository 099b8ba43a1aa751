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

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Iterator
    from typing import Any, BinaryIO

    from wheypoint.transcripts.model import ReadStats

    SkipTest = Callable[[bytes], "str | None"]

MAX_LINE_BYTES = 10 * 1024 * 1024
DUPLICATE = "duplicate"  # what a skip test returns for a line that repeats another record
_SKIP_CHUNK = 1 << 20
_DECODER = json.JSONDecoder()
_DECODE = _DECODER.decode  # on text: json.loads(bytes) would sniff the encoding of every line
BOM = b"\xef\xbb\xbf"  # a UTF-8 byte-order mark, which some editors write first
_ENCODE = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode


# Before a transcript's first record, this many blank or damaged lines (a cut or garbled first write) are passed
# over when a reader tells whether a file is its own; past them the file is taken for something else.
HEAD_DAMAGE = 4


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
    text = data.decode("utf-8-sig") if isinstance(data, bytes) else data
    value = _DECODE(text)
    return unicode_clean(value) if escaped_surrogate(text) else value


def _records(text: str, stats: ReadStats) -> list[Any]:
    """The JSON values written one after the other on one line (a lost newline); what follows the last whole
    one, when it is not JSON, is counted malformed (the second record was itself cut short)."""
    decode = _DECODER.raw_decode
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


def read_jsonl(
    path: str | os.PathLike[str], stats: ReadStats, max_line: int = MAX_LINE_BYTES, skip: SkipTest | None = None
) -> Iterator[tuple[int, Any]]:
    """(1-based line number, decoded JSON value) for every readable line of a JSONL file.

    `skip`, when given, sees each complete line's raw bytes first; a reason it returns counts the
    line under that reason (or as a duplicate) without decoding it: a reader uses it to pass over
    bulky bookkeeping records it recognises by their opening bytes.
    """
    with open(path, "rb") as handle:
        readline = handle.readline
        number = 0
        while True:
            line = readline(max_line + 1)
            if not line:
                return
            number += 1
            complete = line[-1:] == b"\n"
            if len(line) > max_line and not complete:
                stats.oversized += 1
                while True:  # skip the rest of the long line without holding it
                    rest = readline(_SKIP_CHUNK)
                    if not rest or rest.endswith(b"\n"):
                        break
                continue
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
                except json.JSONDecodeError as error:
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
