"""Seed 0's calibrated tags in a note: read back from a generated note, and looked for on a hand-written one.

A decision or a directive may carry `<certain>`, `<speculating>` or `<don't know>` (the record's `confidence`).
A generated note writes the tag as a code span right after the entry's id (`render.tag_span`):

    - `d-0123456789ab` `<certain>` Cap at 30 s. (since r1)

`entry_tags` reads those back, so render -> parse gives the record's field. `untagged_decisions` finds the key
decisions of a hand-written note that carry no tag: the list items under a `Key decisions` heading or label
(`**Key decisions and constraints.**`, `- Key decisions:`), with their line numbers. A tag is recognised in any of
the forms a hand-written note has: bare `<certain>`, in a code span, or escaped `\\<certain>`; seed 0's own text
also writes `<speculative>`, which counts as a tag there.
"""

from __future__ import annotations

import re

from wheypoint.model.shapes import CONFIDENCE_TAGS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

_TAG_WORDS = "|".join(re.escape(tag) for tag in CONFIDENCE_TAGS)
# The tag sections of a generated note and the line shape an entry takes in them.
TAGGED_SECTIONS = ("Decisions", "Directives")
_ENTRY_TAG = re.compile(rf"^- `([a-z]-[0-9a-f]{{12}})` `<({_TAG_WORDS})>` ")
ANY_TAG = re.compile(r"\\?<(?:certain|speculating|speculative|don'?t know)>", re.IGNORECASE)
_KEY_DECISIONS = re.compile(r"key decisions?\b", re.IGNORECASE)
# What may come before a `Key decisions` label: a heading's marks, a list marker, bold or italic marks.
_LEAD = re.compile(r"^\s*(?:#{1,6}\s+|(?:[-*+]|\d+[.)])\s+)?(?:\*\*|__|\*|_)?")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ITEM = re.compile(r"^(?:[-*+]|\d+[.)])\s+(.*)$")
_LABEL_ONLY = re.compile(r"^(?:[-*+]\s+)?(?:\*\*|__)?key decisions?[\w ,&/-]*[.:]?(?:\*\*|__)?[.:]?\s*$", re.IGNORECASE)


def entry_tags(sections: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The calibrated tag of each tagged entry of a generated note, by entry id, from its level-two sections'
    (title, text) pairs (`ParsedNote.outline`)."""
    tags: dict[str, str] = {}
    for title, text in sections:
        if title in TAGGED_SECTIONS:
            for line in text.split("\n"):
                match = _ENTRY_TAG.match(line)
                if match:
                    tags[match.group(1)] = match.group(2)
    return tags


def has_tag(text: str) -> bool:
    """Whether a claim carries a calibrated tag in any form a hand-written note writes it."""
    return ANY_TAG.search(text) is not None


def untagged_decisions(text: str) -> list[tuple[int, str]]:
    """(line number, the claim) of each key decision of a hand-written note without a tag; code fences are skipped."""
    lines = text.split("\n")
    fenced = _fenced(lines)
    found: list[tuple[int, str]] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if index not in fenced and _KEY_DECISIONS.match(_LEAD.sub("", line)):
            heading = _HEADING.match(line)
            if heading is None and not _LABEL_ONLY.match(line.strip()):
                # A label with its claim on the same line: `**Key decisions.** We keep the cache <certain>.`
                if not has_tag(line):
                    found.append((index + 1, line.strip()))
            else:
                level = len(heading.group(1)) if heading else None
                claims, index = _claims(lines, index + 1, level, fenced)
                found += [(number, claim) for number, claim in claims if not has_tag(claim)]
                continue
        index += 1
    return found


def _fenced(lines: list[str]) -> set[int]:
    """The indices of the lines inside code fences, the fences included."""
    inside: set[int] = set()
    fence: str | None = None
    for index, line in enumerate(lines):
        opened = _FENCE.match(line)
        if fence is not None:
            inside.add(index)
            fence = None if opened and opened.group(1)[0] == fence else fence
        elif opened:
            inside.add(index)
            fence = opened.group(1)[0]
    return inside


def _claims(lines: list[str], start: int, level: int | None, fenced: set[int]) -> tuple[list[tuple[int, str]], int]:
    """The list items after a key-decisions heading (to the next heading of its level or higher) or label (to the
    first line that is neither an item, its continuation, nor blank), each with its continuation lines."""
    claims: list[tuple[int, str]] = []
    index = start
    while index < len(lines):
        line = lines[index]
        if index in fenced:
            if level is None:
                break
            index += 1
            continue
        heading = _HEADING.match(line)
        if heading and (level is None or len(heading.group(1)) <= level):
            break
        item = _ITEM.match(line)
        if item:
            claims.append((index + 1, item.group(1).strip()))
        elif line.startswith((" ", "\t")) and claims and line.strip():
            number, claim = claims[-1]
            claims[-1] = (number, f"{claim} {line.strip()}")
        elif line.strip() and level is None:
            break
        index += 1
    return claims, index
