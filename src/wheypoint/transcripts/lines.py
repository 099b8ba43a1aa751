"""Streaming a JSONL file record by record in bounded memory, counting what cannot be read.

Lines are read with a length cap, so a 500 MB line (base64 images are common) is skipped in chunks
rather than loaded. Invalid UTF-8, malformed JSON and a truncated last line (a live file) are counted
in `ReadStats`, never raised: a transcript is evidence, and one bad line must not hide the rest.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Iterator
    from typing import Any

    from wheypoint.transcripts.model import ReadStats

    SkipTest = Callable[[bytes], "str | None"]

MAX_LINE_BYTES = 10 * 1024 * 1024
DUPLICATE = "duplicate"  # what a skip test returns for a line that repeats another record
_SKIP_CHUNK = 1 << 20
_DECODE = json.JSONDecoder().decode  # on text: json.loads(bytes) would sniff the encoding of every line
_BOM = b"\xef\xbb\xbf"


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
                if reason is not None:
                    stats.lines += 1
                    if reason == DUPLICATE:
                        stats.duplicates += 1
                    else:
                        stats.skipped[reason] += 1
                    continue
            stats.lines += 1
            if number == 1 and line.startswith(_BOM):
                line = line[3:]
            try:
                text = line.decode()
                line = b""  # hold a long line once at a time: bytes, then text, then value
                value = _DECODE(text)
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
            yield number, value
