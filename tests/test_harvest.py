"""Author trailers: the `<!-- ckpt ... -->` grammar, verbatim text, and a parse status for every tag."""

from __future__ import annotations

import pytest

from wheypoint.transcripts.harvest import harvest, parse_trailers
from wheypoint.transcripts.model import ASSISTANT, PROMPT, Turn


@pytest.mark.parametrize(
    ("text", "kind", "weight", "body", "status"),
    [
        ("done. <!-- ckpt constraint w=3: Never push to main -->", "constraint", 3, "Never push to main", "ok"),
        ("<!-- ckpt pivot:\nfirst line\n  second -->", "pivot", 2, "first line\n  second", "ok"),
        ("<!-- CKPT Rejected weight=1 dropped redis: too heavy -->", "rejected", 1, "dropped redis: too heavy", "ok"),
        ("<!--ckpt learning w=2:x -->", "learning", 2, "x", "ok"),
        ("<!-- ckpt bogus: text -->", "bogus", 2, "text", "unknown-type"),
        ("<!-- ckpt thread w=7: text -->", "thread", None, "text", "bad-weight"),
        ("<!-- ckpt question -->", "question", 2, "", "empty-text"),
    ],
)
def test_trailer_grammar(text: str, kind: str, weight: int | None, body: str, status: str) -> None:
    [trailer] = parse_trailers(text, "t1")
    assert (trailer.type, trailer.weight, trailer.text, trailer.status) == (kind, weight, body, status)
    assert trailer.raw in text and trailer.turn_id == "t1"


def test_an_unterminated_trailer_is_listed_not_lost() -> None:
    [trailer] = parse_trailers("text <!-- ckpt thread: still open", "t9")
    assert trailer.status == "unterminated" and "still open" in trailer.text


def test_several_trailers_in_one_message_keep_their_order() -> None:
    text = "a <!-- ckpt correction: use UTC --> b <!-- ckpt learning w=1: pytest -x is fast -->"
    assert [t.type for t in parse_trailers(text, "t")] == ["correction", "learning"]


def test_harvest_reads_the_agents_messages_only() -> None:
    turns = [
        Turn("u1", PROMPT, None, "<!-- ckpt constraint: typed by the user -->", 1),
        Turn("a1", ASSISTANT, None, "ok <!-- ckpt pivot w=3: switch to SQLite -->", 2),
    ]
    found = harvest(turns)
    assert [(t.turn_id, t.text) for t in found] == [("a1", "switch to SQLite")]


def test_recent_ids_stay_bounded() -> None:
    from wheypoint.transcripts.model import RecentCounts, RecentIds

    ids = RecentIds(limit=3)
    for item in "abcd":
        ids.add(item)
    assert "a" not in ids and all(x in ids for x in "bcd")
    counts = RecentCounts(limit=2)
    counts["x"], counts["y"], counts["z"] = 1, 2, 3
    assert (counts.get("x"), counts.get("z")) == (0, 3)
