"""Judging a handoff note: generated notes against their pins and record, hand-written ones against seed 0's rules.

`lint_note(text, record)` returns findings; a note is `clean` when none is gating. Every code, its severity
and what raises it is listed in docs/notes.md. Rules the intent contract already states (next: affinage
needs a PR, next: cook needs an artifact, the list form and the parallel task plan) are not restated here:
the note's slug is converted to an intent's `next` and handed to `rules.check_next`.
"""

from __future__ import annotations

import re

from wheypoint.model.contract import NEXT_MOVES
from wheypoint.model.errors import ADVISORY, GATING, Finding
from wheypoint.model.refs import line_refs
from wheypoint.model.rules import check_next
from wheypoint.model.shapes import DIGEST_PATTERN
from wheypoint.notes.parse import ParsedNote, parse_note
from wheypoint.notes.render import SECTIONS, TITLE, note_digest, render, render_body

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

WORKTREE_STRATEGIES = ("existing", "create", "harness")
MAX_PER_CODE = 64

SEVERITY = {
    # generated notes
    "preamble-malformed": GATING,
    "note-digest-mismatch": GATING,
    "hand-edited": GATING,
    "record-mismatch": GATING,
    "status-mismatch": GATING,
    "sections-missing": GATING,
    "sections-misordered": GATING,
    "section-unknown": ADVISORY,
    # hand-written (legacy) notes
    "next-missing": GATING,
    "next-invalid": GATING,
    "status-invalid": GATING,
    "orientation-missing": GATING,
    "dossier-missing": GATING,
    "dossier-incomplete": ADVISORY,
    "next-list-order-missing": GATING,
    "next-list-not-read-only": GATING,
    "tasks-missing": GATING,
    "tasks-fields": GATING,
    "task-worktree-shared": GATING,
    "affinage-needs-pr": GATING,
    "artifact-required": GATING,
    "required-section-missing": ADVISORY,
    "slug-unreadable": ADVISORY,
    "decision-untagged": ADVISORY,
    # both: seed 0's house style (style.py)
    "style-em-dash": ADVISORY,
    "style-sentences-per-line": ADVISORY,
    "style-incomplete-sentence": ADVISORY,
}
# rules.check_next's problem codes, as this module names them for a note.
_RULE_CODES = {
    "affinage-needs-pr": "affinage-needs-pr",
    "artifact-required": "artifact-required",
    "next-order-required": "next-list-order-missing",
    "next-item-not-read-only": "next-list-not-read-only",
    "tasks-required": "tasks-missing",
    "tasks-without-tasks-move": "tasks-missing",
    "task-fields": "tasks-fields",
    "task-worktree-shared": "task-worktree-shared",
}
_POINTER = re.compile(r"\.cheese/|\bspecs?/|\S+\.md\b|PR#\d+|https?://\S+|\b[0-9a-f]{7,40}\b")
_FINDINGS_REF = re.compile(r"[\w./:-]*findings?[\w./-]*\.(?:md|json|txt)\b|\.cheese/\S*finding", re.IGNORECASE)
_PIN_RECORD_KEYS = {"work_id": "work_id", "revision_id": "revision_id", "revision_number": "revision_number",
                    "record_digest": "record_digest", "slug": "slug", "project": "project_key"}  # fmt: skip


def finding(code: str, detail: str) -> Finding:
    """A finding with the severity this module assigns to its code."""
    return Finding(code, SEVERITY[code], detail)


def clean(findings: list[Finding]) -> bool:
    """A note is clean when no finding gates."""
    return not any(f.severity == GATING for f in findings)


def lint_note(text: str | bytes, record: Mapping[str, Any] | None = None) -> list[Finding]:
    """Every finding for a note; `record` (the head record) is compared with a generated note's pins."""
    parsed = parse_note(text)
    source = text if isinstance(text, str) else bytes(text).decode("utf-8", "replace")
    from wheypoint.notes.style import style_findings

    if parsed.format == "wheypoint":
        return _capped(_lint_generated(source, parsed, record) + style_findings(source))
    findings = _lint_legacy(parsed) + _untagged(source.replace("\r\n", "\n")) + style_findings(source)
    if record is not None:
        findings.append(finding("record-mismatch", "a record was given but the note is hand-written, not its "
                                "generated projection"))  # fmt: skip
    return _capped(findings)


def _capped(findings: list[Finding]) -> list[Finding]:
    """At most MAX_PER_CODE findings of one code, then one saying how many more there were."""
    seen: dict[str, int] = {}
    kept: list[Finding] = []
    for item in findings:
        seen[item.code] = seen.get(item.code, 0) + 1
        if seen[item.code] <= MAX_PER_CODE:
            kept.append(item)
    for code, count in seen.items():
        if count > MAX_PER_CODE:
            kept.append(finding(code, f"{count - MAX_PER_CODE} more {code} findings were left out"))
    return kept


def lint_report(text: str | bytes, record: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The JSON answer for `lint`: the note's format, whether it is clean, and the findings."""
    findings = lint_note(text, record)
    return {"format": parse_note(text).format, "clean": clean(findings), "findings": [f.as_json() for f in findings]}


# Generated notes ------------------------------------------------------------------------------------


def _lint_generated(text: str, parsed: ParsedNote, record: Mapping[str, Any] | None) -> list[Finding]:
    findings = _generated_preamble(parsed)
    pins = parsed.wheypoint or {}
    stored = pins.get("note_digest")
    if isinstance(stored, str) and re.match(DIGEST_PATTERN, stored):
        try:
            actual = note_digest(text)
        except UnicodeEncodeError:
            actual = "unencodable"
        if actual != stored:
            findings.append(finding("note-digest-mismatch", "the note_digest pin does not verify: the note was "
                                    "changed after it was rendered"))  # fmt: skip
    findings += _generated_status(parsed, record)
    expected: list[str] | None = None
    if record is not None:
        mismatched = _record_mismatch(pins, record)
        if mismatched:
            findings.append(finding("record-mismatch", f"pins differ from the record given: {', '.join(mismatched)}"))
        try:
            expected = [line[3:] for line in render_body(record) if line.startswith("## ")]
            rendered = render(record)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            findings.append(finding("record-mismatch", f"the record given cannot be rendered ({type(exc).__name__})"))
        else:
            if not mismatched and rendered != text:
                findings.append(finding("hand-edited", _first_difference(rendered, text)))
    findings += _generated_sections(parsed, expected)
    return findings


def _generated_preamble(parsed: ParsedNote) -> list[Finding]:
    details = [f"{p.code}: {p.message}" for p in parsed.problems]
    if parsed.status_kind is None:
        details.append("status: is missing or unknown")
    if parsed.next is None and parsed.next_items is None:
        details.append("next: is missing")
    elif parsed.next is not None and parsed.next not in NEXT_MOVES:
        details.append(f"next: {parsed.next!r} is not a move")
    if not parsed.orientation:
        details.append("the orientation line is missing")
    stored = (parsed.wheypoint or {}).get("note_digest")
    if stored is not None and not (isinstance(stored, str) and re.match(DIGEST_PATTERN, stored)):
        details.append("note_digest is not a sha256 digest")
    if not re.search(rf"^{re.escape(TITLE)}$", parsed.body, re.MULTILINE):
        details.append(f"the title `{TITLE}` is missing")
    return [finding("preamble-malformed", detail) for detail in details]


def _generated_status(parsed: ParsedNote, record: Mapping[str, Any] | None) -> list[Finding]:
    if record is not None:
        if parsed.status != record.get("status"):
            return [finding("status-mismatch", f"the note says {parsed.status!r}, the record {record.get('status')!r}")]
        return []
    gates = parsed.find("^Gates$")
    count = len([line for line in gates.text.splitlines() if line.startswith("- ")]) if gates else 0
    if parsed.status_kind == "gated" and not count:
        return [finding("status-mismatch", "the status is gated but the note lists no gate")]
    if parsed.status_kind == "ok" and count:
        return [finding("status-mismatch", f"the status is ok but the Gates section lists {count} gate(s)")]
    if parsed.status_kind == "halt" and (count or not _open_blockers(parsed)):
        listed = f"the Gates section lists {count} gate(s)" if count else "the note lists no open blocker"
        return [finding("status-mismatch", f"the status is halt but {listed}")]
    more = re.search(r"\(\+(\d+) more\)$", parsed.status_reason or "")
    if parsed.status_kind == "gated" and more and int(more.group(1)) + 1 != count:
        return [finding("status-mismatch", f"the status counts {int(more.group(1)) + 1} gates, the note lists {count}")]
    return []


def _open_blockers(parsed: ParsedNote) -> int:
    """How many blockers a generated note lists under `## Open entries` (a blocker's id starts `b-`)."""
    section = parsed.find("^Open entries$")
    return len([line for line in section.text.splitlines() if line.startswith("- `b-")]) if section else 0


def _record_mismatch(pins: Mapping[str, Any], record: Mapping[str, Any]) -> list[str]:
    return [
        pin for pin, key in _PIN_RECORD_KEYS.items()
        if pin in pins and str(pins[pin]) != str(record.get(key))
    ]  # fmt: skip


def _first_difference(expected: str, actual: str) -> str:
    want, have = expected.split("\n"), actual.split("\n")
    for number, (a, b) in enumerate(zip(want, have, strict=False), start=1):
        if a != b:
            return f"the note differs from what its record renders to, first at line {number}"
    return f"the note differs from what its record renders to in length ({len(have)} lines, expected {len(want)})"


def _generated_sections(parsed: ParsedNote, expected: list[str] | None) -> list[Finding]:
    found = parsed.sections
    findings = [finding("section-unknown", f"`## {s}` is not a section of a generated note")
                for s in found if s not in SECTIONS]  # fmt: skip
    required = ["Identifiers"] if expected is None else expected
    if expected is None and parsed.next == "tasks":
        required.append("Tasks")
    if expected is None and parsed.status_kind == "gated":
        required.append("Decision dossier")
    missing = [s for s in required if s not in found]
    if missing:
        findings.append(finding("sections-missing", f"missing: {', '.join(missing)}"))
    known = [s for s in found if s in SECTIONS]
    if len(set(known)) != len(known):
        findings.append(finding("sections-misordered", "a section appears twice"))
    elif known != sorted(known, key=SECTIONS.index):
        findings.append(finding("sections-misordered", f"found {', '.join(known)}; the order is {', '.join(SECTIONS)}"))
    if "Identifiers" in found and found[-1] != "Identifiers":
        findings.append(finding("sections-misordered", "Identifiers must be the last section"))
    return findings


# Hand-written notes ---------------------------------------------------------------------------------


def _lint_legacy(parsed: ParsedNote) -> list[Finding]:
    findings = [finding("slug-unreadable", f"{p.code}: {p.message}") for p in parsed.problems
                if p.code not in ("status-unknown",)]  # fmt: skip
    findings += _legacy_slug(parsed)
    findings += next_findings(parsed)
    findings += _required_sections(parsed)
    return findings


def _untagged(text: str) -> list[Finding]:
    """A hand-written note's key decisions without seed 0's calibrated tag (`tags.py`)."""
    from wheypoint.notes.tags import untagged_decisions

    return [finding("decision-untagged", f"line {number}: a key decision without a calibrated tag (<certain>, "
                    f"<speculating> or <don't know>): {claim[:80]}") for number, claim in untagged_decisions(text)]


def _legacy_slug(parsed: ParsedNote) -> list[Finding]:
    findings: list[Finding] = []
    if parsed.next is None and parsed.next_items is None:
        findings.append(finding("next-missing", "malformed handoff: next: required"))
    elif parsed.next is not None and parsed.next not in NEXT_MOVES:
        findings.append(finding("next-invalid", f"next: {parsed.next!r} is not one of {' | '.join(NEXT_MOVES)}"))
    if parsed.status is None:
        findings.append(finding("status-invalid", "status: required (ok | gated: <decision> | halt: <reason>)"))
    elif parsed.status_kind is None:
        findings.append(finding("status-invalid", f"status {parsed.status!r} is not ok | gated: <decision> | "
                                "halt: <reason>"))  # fmt: skip
    elif parsed.status_kind != "ok" and not parsed.status_reason:
        findings.append(finding("status-invalid", f"status {parsed.status_kind}: needs its one-line reason"))
    if not parsed.orientation:
        findings.append(finding("orientation-missing", "the slug has no orientation line after its keys"))
    return findings


def next_findings(parsed: ParsedNote) -> list[Finding]:
    """The next-move rules of the intent contract and seed 0's parallel mode, applied to a note's slug."""
    findings: list[Finding] = []
    if parsed.mode == "parallel" and parsed.next != "tasks":
        findings.append(finding("tasks-missing", "mode: parallel needs next: tasks"))
    if parsed.next == "tasks" and parsed.mode != "parallel":
        findings.append(finding("tasks-missing", "next: tasks needs mode: parallel"))
    nxt = intent_next(parsed)
    if nxt is None:
        return findings
    parallel = nxt.get("parallel")
    if parallel is not None and parallel.get("worktree_strategy") not in WORKTREE_STRATEGIES:
        findings.append(finding("tasks-fields", "parallel: needs worktree_strategy: existing | create | harness"))
        nxt.pop("tasks", None)
        nxt.pop("parallel")
        if parsed.next == "tasks":
            return findings
    for index, task in enumerate(nxt.get("tasks") or []):
        for key in ("slug", "command"):
            if not task.get(key):
                findings.append(finding("tasks-fields", f"task {index + 1} needs {key}:"))
    for problem in check_next({"next": nxt}):
        code = _RULE_CODES.get(problem.code)
        if code is not None:
            findings.append(finding(code, f"{problem.path.replace('$.next', 'next')}: {problem.message}"))
    return findings


def intent_next(parsed: ParsedNote) -> dict[str, Any] | None:
    """A note's slug in the shape of an intent's `next`, so the contract's rules can judge it."""
    nxt: dict[str, Any] = {}
    if parsed.next_items is not None:
        nxt["items"] = [dict(item) for item in parsed.next_items]
    elif parsed.next is not None:
        nxt["move"] = parsed.next
    else:
        return None
    if parsed.order is not None:
        nxt["order"] = parsed.order
    if parsed.artifact is not None:
        nxt["artifact"] = parsed.artifact
    if parsed.parallel is not None:
        nxt["parallel"] = dict(parsed.parallel)
    if parsed.tasks is not None:
        nxt["tasks"] = [dict(task) for task in parsed.tasks]
    return nxt


def _required_sections(parsed: ParsedNote) -> list[Finding]:
    """Seed 0's "Required body sections by state", read as documented in docs/notes.md."""
    findings: list[Finding] = []
    if parsed.status_kind == "gated":
        findings += _dossier(parsed)
    move = parsed.next
    if move in ("hold", "done") or (move is None and parsed.next_items is None):
        return findings
    if parsed.find("^Document$") is None:
        findings.append(finding("required-section-missing", "the note has no ## Document section"))
    if move == "culture":
        if not parsed.has_part(r"\bagenda\b"):
            findings.append(finding("required-section-missing", "next: culture needs an agenda"))
        if not parsed.has_part(r"\bopen[- ]threads?\b|\bopen questions\b|\bstate\b"):
            findings.append(finding("required-section-missing", "next: culture needs the open-thread state"))
    elif move == "cure" and not (parsed.artifact or _FINDINGS_REF.search(parsed.body)):
        findings.append(finding("required-section-missing", "next: cure needs a findings artifact reference"))
    elif move in ("press", "age") and not (parsed.artifact or _POINTER.search(parsed.body)):
        findings.append(finding("required-section-missing", f"next: {move} needs a spec or slug pointer"))
    return findings


def _dossier(parsed: ParsedNote) -> list[Finding]:
    section = parsed.find(r"^decision dossier$")
    if section is None:
        return [finding("dossier-missing", "status gated: needs a ## Decision dossier section with an entry per "
                        "open fork")]  # fmt: skip
    entries = _dossier_entries(section.text)
    if not entries:
        return [finding("dossier-missing", "the ## Decision dossier section has no fork entry")]
    findings: list[Finding] = []
    for title, text in entries:
        lacking = [name for name, ok in (
            ("options", re.search(r"\boption", text, re.IGNORECASE)),
            ("evidence file:line", line_refs(text) or re.search(r"\S+:\d+", text)),
            ("what each option breaks", re.search(r"\bbreak", text, re.IGNORECASE)),
            ("prior leaning", re.search(r"\blean", text, re.IGNORECASE)),
        ) if not ok]  # fmt: skip
        if lacking:
            findings.append(finding("dossier-incomplete", f"fork {title!r} lacks {', '.join(lacking)}"))
    return findings


def _dossier_entries(text: str) -> list[tuple[str, str]]:
    """Forks of a dossier: its `###` subsections, else its top-level list items."""
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if re.match(r"^ {0,3}#{3,6}\s", line)]
    if not starts:
        starts = [i for i, line in enumerate(lines) if re.match(r"^(?:[-*+]|\d+[.)])\s", line)]
    entries = []
    for position, start in enumerate(starts):
        end = starts[position + 1] if position + 1 < len(starts) else len(lines)
        title = re.sub(r"^\s*(?:#+|[-*+]|\d+[.)])\s*", "", lines[start]).strip()
        entries.append((title[:80], "\n".join(lines[start:end])))
    return entries
