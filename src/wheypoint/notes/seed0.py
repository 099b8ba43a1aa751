"""A hand-written (seed 0) note's body read into record fields, for `adopt`: what each section means, not its text.

Seed 0 writes a `## Document` with parts a cold reader needs (Goal, State, Key decisions and constraints, Open
questions and blockers, Artifacts, Suggested skills, Environment), as `###` headings, bold labels or label
bullets, and for a gated note a `## Decision dossier` with one `### <fork>` per open fork whose bullets are
Options, Evidence, What each breaks and Prior leaning (inline after the label or as items under it). Each part
with a field of its own goes to that field: key decisions become decisions (a calibrated tag read as their
confidence, the words after it as the why), open questions become questions, forks become dossier forks. The
rest (Goal, State, Environment, prose, code) stays as notes, with its headings turned into bold labels so that
nothing in the notes reads as a heading of the generated note. Nothing here reads files or the clock.
"""

from __future__ import annotations

import re

from wheypoint.model.records import Record
from wheypoint.notes.tags import ANY_TAG

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ITEM = re.compile(r"^( *)(?:[-*+]|\d+[.)])\s+(.*)$")
_LABEL = re.compile(r"^(?:\*\*|__)?([A-Za-z][A-Za-z ,&/'-]{1,40}?)(?:\*\*|__)?\s*[:.]\s*(?:\*\*|__)?\s*(.*)$")
_BOLD_LABEL = re.compile(r"^(?:\*\*|__)([A-Za-z][A-Za-z ,&/'-]{1,40}?)[:.]?(?:\*\*|__)\s*[:.]?\s*(.*)$")
_FORK_PARTS = {"options": "options", "option": "options", "evidence": "evidence", "what each breaks": "breaks",
               "what it breaks": "breaks", "breaks": "breaks", "prior leaning": "leaning",
               "prior leanings": "leaning", "leaning": "leaning"}  # fmt: skip
MAX_OPTIONS = 16
_INLINE_LABEL = re.compile(r"^(\*\*[^*\n]+\.\*\*)\n(?![ \t]*(?:[-*+]\s|\d+[.)]\s|`{3}|~{3}|#|\n|$))", re.MULTILINE)


class Seed0Fields(Record):
    """What a seed-0 body holds, by field: the intent's parts `adopt` writes."""

    notes: str
    decisions: list[dict[str, Any]]
    questions: list[dict[str, Any]]
    forks: list[dict[str, Any]]
    loose_options: list[str]  # a dossier written as a plain list of options, with no `###` fork


def seed0_fields(body: str) -> Seed0Fields:
    """The fields of a hand-written note's body (the text after its slug block)."""
    kept: list[str] = []
    decisions: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    forks: list[dict[str, Any]] = []
    loose: list[str] = []
    for title, level, lines in _parts(body.splitlines()):
        kind = _kind(title)
        if kind == "dossier":
            forks += [_fork(name, text) for name, text in _subparts(lines)]
            loose += [item for item, _ in _items(lines) if not any(name for name, _ in _subparts(lines))]
            continue
        if kind == "decisions" and _items(lines):
            decisions += [_decision(item) for item, _ in _items(lines)]
            kept += _rest(lines)
            continue
        if kind == "questions" and _items(lines):
            questions += [{"text": _plain(item)} for item, _ in _items(lines)]
            kept += _rest(lines)
            continue
        if title and not (level == 2 and title.lower() == "document"):
            kept += ["", f"**{title.rstrip('.:')}.**"]
        kept += lines
    notes = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip("\n")
    notes = _INLINE_LABEL.sub(r"\1 ", notes)  # `**Goal.**` then a line of prose: one line, as seed 0 writes it
    return Seed0Fields(notes, decisions, questions, [f for f in forks if len(f["options"]) >= 2], loose)


def _kind(title: str | None) -> str:
    name = (title or "").lower()
    if "decision dossier" in name or name == "dossier":
        return "dossier"
    if "key decision" in name or name == "decisions":
        return "decisions"
    if "open question" in name or name in ("questions", "open questions and blockers", "blockers"):
        return "questions"
    return "text"


def _parts(lines: list[str]) -> list[tuple[str | None, int, list[str]]]:
    """The body cut at headings and at label lines (`**Key decisions.**`), outside code fences: (title, level,
    lines). A label line that holds text after the label keeps it as the part's first line."""
    parts: list[tuple[str | None, int, list[str]]] = [(None, 0, [])]
    fence: str | None = None
    for line in lines:
        opened = _FENCE.match(line)
        if fence is not None:
            parts[-1][2].append(line)
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            parts[-1][2].append(line)
            continue
        heading = _HEADING.match(line)
        label = _BOLD_LABEL.match(line.strip())
        if heading and len(heading.group(1)) <= 3 and not (parts[-1][0] and _kind(parts[-1][0]) == "dossier"
                                                         and len(heading.group(1)) == 3):  # fmt: skip
            parts.append((heading.group(2), len(heading.group(1)), []))
        elif label and _kind(label.group(1)) != "text" and not line.startswith(" "):
            parts.append((label.group(1), 4, [label.group(2)] if label.group(2) else []))
        else:
            parts[-1][2].append(line)
    return [part for part in parts if part[0] is not None or any(line.strip() for line in part[2])]


def _subparts(lines: list[str]) -> list[tuple[str, list[str]]]:
    """A dossier's `### <fork>` parts: (the fork, its lines)."""
    found: list[tuple[str, list[str]]] = []
    for line in lines:
        heading = _HEADING.match(line)
        if heading and len(heading.group(1)) >= 3:
            found.append((heading.group(2), []))
        elif found:
            found[-1][1].append(line)
    return found


def _items(lines: list[str]) -> list[tuple[str, list[str]]]:
    """Top-level list items with the items nested under each (their text only), in order."""
    items: list[tuple[str, list[str]]] = []
    top: int | None = None
    for line in lines:
        item = _ITEM.match(line)
        if item is None:
            if items and line.strip() and line.startswith(" ") and not items[-1][1]:
                items[-1] = (items[-1][0] + " " + line.strip(), items[-1][1])  # a wrapped item's next line
            continue
        indent = len(item.group(1))
        if top is None or indent <= top:
            top = indent
            items.append((item.group(2).strip(), []))
        elif items:
            items[-1][1].append(item.group(2).strip())
    return items


def _rest(lines: list[str]) -> list[str]:
    """A part's lines that are not list items (prose around them stays in the notes)."""
    return [line for line in lines if not _ITEM.match(line) and not (line.startswith(" ") and line.strip())]


def _plain(text: str) -> str:
    """An item's text without wrapping bold marks."""
    return text.replace("**", "").strip()


def _decision(item: str) -> dict[str, Any]:
    """A key-decision item: the claim, its calibrated tag, and the why after it (seed 0: one line each)."""
    text = _plain(item)
    tag = ANY_TAG.search(text)  # the forms a hand-written note writes a tag in (notes/tags.py)
    confidence = None
    if tag:
        word = tag.group(0).lstrip("\\<").rstrip(">").lower().replace("speculative", "speculating")
        confidence = "don't know" if word.startswith("don") else word
        claim, why = text[: tag.start()].rstrip(" `"), text[tag.end() :].lstrip("` ")
    else:
        claim, why = _split_why(text)
    why = why.lstrip(":;,.-\u2014\u2013 ").strip()
    if not why:
        claim, why = _split_why(claim)
    decision: dict[str, Any] = {"text": claim.rstrip(" :;,-\u2014\u2013") or text,
                                "rationale": why or "As the adopted note records it."}  # fmt: skip
    if confidence:
        decision["confidence"] = confidence
    return decision


def _split_why(text: str) -> tuple[str, str]:
    for mark in (" \u2014 ", " -- ", " - ", ": ", "; ", " because "):
        claim, sep, why = text.partition(mark)
        if sep and claim and why:
            return claim, (why if mark != " because " else "Because " + why)
    return text, ""


def _fork(name: str, lines: list[str]) -> dict[str, Any]:
    """One `### <fork>` of a dossier: its labelled bullets, or a plain list of its options."""
    parts: dict[str, list[str]] = {}
    plain: list[str] = []
    for item, nested in _items(lines):
        label = _LABEL.match(item)
        part = _FORK_PARTS.get(label.group(1).strip().lower()) if label else None
        if label and part:
            inline = label.group(2).strip()
            values = nested or (_split_values(inline) if part in ("options", "evidence") else [inline])
            parts.setdefault(part, []).extend(v for v in (_plain(v) for v in values) if v)
        else:
            plain.append(_plain(item))
    options = parts.get("options") or plain
    breaks = parts.get("breaks", [])
    built: list[dict[str, Any]] = [{"option": option} for option in options[:MAX_OPTIONS]]
    unmatched = []
    for text in breaks:
        owner = next((o for o in built if text.lower().startswith(o["option"].lower()) and "breaks" not in o), None)
        if owner is not None:
            owner["breaks"] = text[len(owner["option"]) :].lstrip(":;,.-\u2014\u2013 ") or text
        else:
            unmatched.append(text)
    if unmatched and len(unmatched) == len(built) and not any("breaks" in o for o in built):
        for option, text in zip(built, unmatched, strict=True):
            option["breaks"] = text
    elif unmatched:
        for option in built:
            option.setdefault("breaks", "; ".join(unmatched))
    fork: dict[str, Any] = {"fork": _plain(name), "options": built}
    if parts.get("evidence"):
        for option in built:
            option["evidence"] = [e.strip("`") for e in parts["evidence"]][:16]
    if parts.get("leaning"):
        fork["prior_leaning"] = " ".join(parts["leaning"])
    return fork


def _split_values(text: str) -> list[str]:
    """An inline list of values: split on `|`, else `;`, else `,` (a single value stays whole)."""
    for mark in ("|", ";", ","):
        if mark in text:
            return [part.strip() for part in text.split(mark) if part.strip()]
    return [text] if text else []
