"""Seed 3's two-layer CHECKPOINT file: a Summary the agent writes, and Meat copied verbatim.

The Meat layer never passes through a model: it is the text of author trailers harvested from the
agent's own messages and of turns the agent designated by id, copied byte for byte by this code and
fenced so that nothing inside can close the fence.
"""

from __future__ import annotations

from collections import Counter

from wheypoint.model.records import Record
from wheypoint.notes.render import escape_line, fenced

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any


class MeatItem(Record):
    turn: str
    type: str
    weight: int
    text: str
    origin: str  # "trailer" or "designated"
    timestamp: str | None


def check_designations(meat: Sequence[Mapping[str, Any]]) -> None:
    """Each designated turn has one of seed 3's meat types (MEAT_TYPES), else `unknown-meat-type` lists them."""
    from wheypoint.model.errors import bad_parameter
    from wheypoint.model.shapes import MEAT_TYPES

    for item in meat:
        kind = item.get("type")
        if kind not in MEAT_TYPES:
            given = f"not {kind!r}" if kind is not None else "and none was given"
            raise bad_parameter("type", f"of --meat {item.get('turn')} takes one of seed 3's types: "
                                f"{', '.join(MEAT_TYPES)} ({given})", "unknown-meat-type")  # fmt: skip


def histogram(items: Sequence[MeatItem]) -> str:
    """`constraint w3 x2, pivot w2 x1`: counts by type and weight, most first."""
    counts = Counter((item.type, item.weight) for item in items)
    return ", ".join(f"{kind} w{weight} x{n}" for (kind, weight), n in counts.most_common()) or "none"


def status_of(items: Sequence[MeatItem], failed_trailers: int) -> str:
    """parse-failed when a trailer did not parse, lean when there is no meat, else full."""
    if failed_trailers:
        return "parse-failed"
    return "full" if items else "lean"


def render_snapshot(stream: str, summary: str, items: Sequence[MeatItem], facts: Mapping[str, Any]) -> str:
    lines = [f"# CHECKPOINT {stream}", ""]
    lines += [f"- {key}: {value}" for key, value in facts.items() if value is not None]
    lines += ["", "## Summary", ""]
    lines += [escape_line(line) for line in summary.splitlines()] or ["(no summary given)"]
    lines += ["", "## Meat", ""]
    if not items:
        lines.append("(no meat: no trailers were harvested and no turns were designated)")
    for number, item in enumerate(items, start=1):
        when = f", {item.timestamp}" if item.timestamp else ""
        lines.append(f"{number}. {item.type}, weight {item.weight}: turn `{item.turn}` ({item.origin}{when})")
        lines.append("")
        lines.append(fenced(item.text, indent="   "))
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
