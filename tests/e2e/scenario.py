"""What every harness's end-to-end test types and looks for: the prompts, the packet's first words, JSON walks.

The same five prompts in each harness (one a rule, one of two lines with quotes, backticks and non-ASCII), so the
harnesses are compared on one script: three in one session, a compaction, P4, then P5 in a new session.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

P1 = "Please add a small retry helper for the payments client."
P2 = "remember: never retry a POST without an idempotency key — the gateway double-charges otherwise."
P3 = 'Also: cap the backoff at 30 s ("full jitter" for now).\nSecond line with `code` and ünïcödé.'
P4 = "After the compaction: what should I keep in mind?"
P5 = "New session: where were we?"
TYPED = (P1, P2, P3)  # what the rescue before the compaction must hold, byte for byte
PACKET_HEAD = "wheypoint: the handoff of work"  # the first words of every packet a hook hands the model


def strings(value: Any) -> Iterator[str]:
    """Every string inside a decoded JSON value (a request body), depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def text_of(content: Any) -> str:
    """A chat message's text: a string, or the `text` of each part of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""
