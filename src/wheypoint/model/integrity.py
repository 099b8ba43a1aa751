"""Whether a stored record is the one its row names: the check every read for use and `doctor` share."""

from __future__ import annotations

from wheypoint import jsontext
from wheypoint.model.canonical import CanonicalError, digest, sha256_hex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def intact(work_id: str, revision_id: str, column_digest: Any, text: Any) -> dict[str, Any] | None:
    """The record stored as `text`, or None unless it is whole: JSON, naming the row's work and revision, with
    the row's `record_digest` column (None: not read) its own, and that digest true of its content.

    A record's bytes can change inside a database page that the database's own integrity check still calls
    sound (a bad disk, a stray write, a hand edit); only its digest tells.
    """
    try:
        record = jsontext.loads(text)
    except (TypeError, ValueError, RecursionError):
        return None
    if not (
        isinstance(record, dict)
        and record.get("work_id") == work_id
        and record.get("revision_id") == revision_id
        and (column_digest is None or column_digest == record.get("record_digest"))
        and (_text_carries(text, record.get("record_digest")) or _content_carries(record))
    ):
        return None
    return record


def _text_carries(text: str, expected: Any) -> bool:
    """Whether the stored text, less its `record_digest` member, hashes to that digest: the cheap proof.

    The store writes a record as compact, key-sorted JSON, which is its canonical text (model/canonical.py:
    wheypoint's keys are ASCII and its numbers integers). Outside a string a member `"record_digest":"..."` is
    structure (inside one every quote is escaped), so when it occurs once it is the top-level one; the text
    without it (and one comma beside it) hashing to the digest is then the canonical text of the content the
    digest was taken over, and the record read from `text` holds exactly that content. One pass of SHA-256
    over the text, no re-encoding (bench/record_check_bench.py: about 0.1 ms for a typical record).
    """
    if not isinstance(expected, str) or not expected.startswith("sha256:"):
        return False
    member = f'"record_digest":{jsontext.dumps(expected)}'
    if text.count(member) != 1:
        return False
    at = text.find(member)
    end = at + len(member)
    if text[at - 1] == ",":
        at -= 1
    elif text[end] == ",":
        end += 1
    return "sha256:" + sha256_hex((text[:at] + text[end:]).encode("utf-8")) == expected


def _content_carries(record: dict[str, Any]) -> bool:
    """Whether the record's content, less its digest, hashes to its `record_digest`: the exact test, for a text
    `_text_carries` cannot read (stored in another form, or changed)."""
    try:
        return digest({k: v for k, v in record.items() if k != "record_digest"}) == record.get("record_digest")
    except (CanonicalError, TypeError, ValueError, RecursionError):
        return False
