"""Streaming a JSONL file record by record in bounded memory, counting what cannot be read.

Lines are read with a length cap, so a 500 MB line (base64 images are common) is skipped in chunks
rather than loaded. Invalid UTF-8, malformed JSON and a truncated last line (a live file) are counted
in `ReadStats`, never raised: a transcript is evidence, and one bad line must not hide the rest.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from wheypoint.transcripts.model import ReadStats

MAX_LINE_BYTES = 10 * 1024 * 1024
_SKIP_CHUNK = 1 << 20


def read_jsonl(path: Path, stats: ReadStats, max_line: int = MAX_LINE_BYTES) -> Iterator[tuple[int, Any]]:
    """(1-based line number, decoded JSON value) for every readable line of a JSONL file."""
    with path.open("rb") as handle:
        number = 0
        while True:
            line = handle.readline(max_line + 1)
            if not line:
                return
            number += 1
            if len(line) > max_line and not line.endswith(b"\n"):
                stats.oversized += 1
                while True:  # skip the rest of the long line without holding it
                    rest = handle.readline(_SKIP_CHUNK)
                    if not rest or rest.endswith(b"\n"):
                        break
                continue
            if not line.strip():
                continue
            stats.lines += 1
            try:
                value = json.loads(line)
            except UnicodeDecodeError:
                stats.invalid_utf8 += 1
                continue
            except ValueError:
                if line.endswith(b"\n"):
                    stats.malformed += 1
                else:
                    stats.truncated_tail = True
                continue
            yield number, value
