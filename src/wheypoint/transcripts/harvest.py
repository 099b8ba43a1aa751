"""Author trailers: the `<!-- ckpt ... -->` comments an agent writes into its own messages.

An agent tags the signal in its own reply as it writes it, so a later snapshot copies the tag's text
verbatim instead of asking a model to recall it. The grammar (documented in docs/transcripts.md):

    <!-- ckpt TYPE [w=WEIGHT]: TEXT -->

- TYPE is one of constraint, rejected, correction, thread, learning, pivot, question;
- WEIGHT is 1 (background), 2 (default) or 3 (load-bearing); `weight=` is accepted for `w=`;
- the colon after the head is optional; TEXT runs to the first `-->` and may span lines; it is kept
  exactly as written (only the single space or newline after the colon is not part of it).

A comment that starts `<!-- ckpt` but does not fit is still listed, with a parse status saying why,
so a malformed tag is seen rather than silently lost.
"""

from __future__ import annotations

from wheypoint.model.records import Record
from wheypoint.model.shapes import MEAT_TYPES
from wheypoint.transcripts.model import ASSISTANT

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from wheypoint.transcripts.model import Turn

TRAILER_TYPES = MEAT_TYPES  # a trailer names one of seed 3's meat types, the same ones `--type` takes
DEFAULT_WEIGHT = 2
# Patterns, compiled on first use (patterns.compiled: kept for later commands), only for a text naming `ckpt`.
_OPEN = r"(?i)<!--\s*ckpt\b"
_HEAD = r"(?s)\s*(?P<type>[A-Za-z_-]+)?(?:\s+(?:w|weight)\s*=\s*(?P<weight>\S+?))?\s*(?::|(?=\s))\s?"


class Trailer(Record):
    turn_id: str
    type: str | None
    weight: int | None
    text: str
    status: str  # ok | unknown-type | bad-weight | empty-text | unterminated
    raw: str

    def as_json(self) -> dict[str, Any]:
        return dict(self._asdict())


def parse_trailers(text: str, turn_id: str) -> list[Trailer]:
    """Every `<!-- ckpt` comment in a text, parsed or with the reason it does not parse."""
    from wheypoint.patterns import compiled

    found: list[Trailer] = []
    head_match = compiled(_HEAD).match
    for opening in compiled(_OPEN).finditer(text):
        start, body_start = opening.start(), opening.end()
        end = text.find("-->", body_start)
        if end < 0:
            found.append(Trailer(turn_id, None, None, text[body_start:], "unterminated", text[start:]))
            continue
        body, raw = text[body_start:end], text[start : end + 3]
        head = head_match(body)
        kind = head.group("type") if head else None
        weight_text = head.group("weight") if head else None
        content = body[head.end() :] if head else body
        content = content[:-1] if content.endswith(" ") else content
        status = "ok"
        weight: int | None = DEFAULT_WEIGHT
        if weight_text is not None:
            weight = int(weight_text) if weight_text in ("1", "2", "3") else None
            status = "ok" if weight is not None else "bad-weight"
        if kind is None or kind.lower() not in TRAILER_TYPES:
            status = "unknown-type"
        if status == "ok" and not content.strip():
            status = "empty-text"
        found.append(Trailer(turn_id, kind.lower() if kind else None, weight, content, status, raw))
    return found


def harvest(turns: Iterable[Turn], kinds: tuple[str, ...] = (ASSISTANT,)) -> list[Trailer]:
    """Every trailer in the agent's own messages, in transcript order."""
    found: list[Trailer] = []
    for turn in turns:
        if turn.kind in kinds and "ckpt" in turn.text:
            found += parse_trailers(turn.text, turn.id)
    return found
