"""Tying a checkpoint to its transcript: verbatim quotes are checked and pinned, meat is copied.

A directive's quote is the user's own words, so it must occur, byte for byte, inside one of the
user's turns (typed, queued, shell or slash command); when it does, the record pins the quote to that
turn's id, and when it does not, the checkpoint is refused `quote-not-found` with the closest turn
named, because a quote that is not in the transcript was retyped or invented. Meat turns named by id
are copied from the transcript by this code: the agent only designates them, it never retypes them.
"""

from __future__ import annotations

from wheypoint.model.contract import MAX_MEAT_TEXT
from wheypoint.model.errors import Problem
from wheypoint.model.records import Record
from wheypoint.patterns import compiled as regex
from wheypoint.transcripts.model import USER_KINDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    from wheypoint.transcripts.model import Turn

_WORD = r"\w+"  # a word, as the quote check compares them


class Grounding(Record):
    quote_turns: dict[str, str]  # intent path of the entry -> turn id
    meat: tuple[dict[str, Any], ...]
    problems: list[Problem]


def _quotes(intent: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [
        (f"$.{list_name}[{index}]", entry["quote"])
        for list_name in ("directives", "operator_directives")
        for index, entry in enumerate(intent.get(list_name, []))
    ]


def _closest(quote: str, user_turns: list[Turn]) -> Turn | None:
    """The user turn sharing the most of the quote's words (a hint for the agent, never a pick)."""
    wanted = {w.lower() for w in regex(_WORD).findall(quote)}
    best, best_score = None, 0.0
    for turn in user_turns:
        have = {w.lower() for w in regex(_WORD).findall(turn.text)}
        score = len(wanted & have) / max(len(wanted), 1)
        if score > best_score:
            best, best_score = turn, score
    return best


def _excerpt(text: str, limit: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def ground(intent: Mapping[str, Any], turns: Iterable[Turn], harness: str, session_id: str | None) -> Grounding:
    """Check every quote against the user's turns and copy every meat turn, reading the stream once."""
    quotes = _quotes(intent)
    wanted_meat = {item["turn"] for item in intent.get("meat", [])}
    user_turns: list[Turn] = []
    by_id: dict[str, Turn] = {}
    for turn in turns:
        if turn.kind in USER_KINDS:
            user_turns.append(turn)
        if turn.id in wanted_meat:
            by_id[turn.id] = turn
    problems: list[Problem] = []
    quote_turns: dict[str, str] = {}
    for path, quote in quotes:
        home = next((t for t in user_turns if quote in t.text), None)
        if home is not None:
            quote_turns[path] = home.id
            continue
        near = _closest(quote, user_turns)
        hint = f"; the closest user turn is {near.id}: {_excerpt(near.text)!r}" if near else "; no user turn is close"
        problems.append(
            Problem("quote-not-found", f"{path}.quote", "the quote is not verbatim in any user turn" + hint)
        )
    meat: list[dict[str, Any]] = []
    for index, item in enumerate(intent.get("meat", [])):
        copied = by_id.get(item["turn"])
        if copied is None:
            problems.append(
                Problem("unknown-turn", f"$.meat[{index}].turn", f"no turn {item['turn']} in the transcript")
            )
            continue
        if len(copied.text) > MAX_MEAT_TEXT:
            size = f"turn {copied.id} is {len(copied.text)} characters; meat is at most {MAX_MEAT_TEXT}"
            problems.append(Problem("meat-too-long", f"$.meat[{index}].turn", size))
            continue
        kept = {
            "turn": copied.id, "type": item["type"], "weight": item.get("weight", 2), "kind": copied.kind,
            "timestamp": copied.timestamp, "text": copied.text, "harness": harness, "session_id": session_id,
        }  # fmt: skip
        if item.get("redact"):  # asked for: each credential or personal datum replaced (the record says where)
            from wheypoint.model.pii import redact_spans

            text, spans = redact_spans(copied.text)
            if spans:
                kept.update(text=text, redacted=spans)
        meat.append(kept)
    return Grounding(quote_turns, tuple(meat), problems)
