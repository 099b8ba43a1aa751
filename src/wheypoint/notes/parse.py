"""Reading a handoff note back into its fields: `parse_handoff_slug` for generated and hand-written notes.

Three layouts are read, and `format` says which one was found:

- `wheypoint`: a note `projection.render` wrote: the preamble at the top of the file with a `wheypoint:`
  block of pins, then `# Wheypoint handoff` and its sections;
- `legacy`: a hand-written note with the same preamble at the top of the file (no pins);
- `legacy-wrapped`: an older hand-written note whose preamble sits in a fenced code block under a
  `## Handoff slug` heading, usually followed by `## Document`.

`parse_note(text).as_json()` gives:

    {"format": "wheypoint" | "legacy" | "legacy-wrapped",
     "status": str | null, "status_kind": "ok" | "gated" | "halt" | null, "status_reason": str | null,
     "next": str | null, "next_items": [{"skill", "arg"}] | null, "order": str | null,
     "mode": "single" | "parallel", "artifact": str | null,
     "session": str | null, "git": str | null, "created": str | null, "parents": [str] | null,
     "baseline": str | null, "orientation": str | null,
     "parallel": {str: str} | null, "tasks": [{str: str}] | null,
     "wheypoint": {"work_id", "slug", "project", "revision_id", "revision_number", "record_digest",
                   "note_digest"} | null,
     "sections": [str], "problems": [{"code", "message"}], "tags": {<entry id>: "certain" | ...}}

`next` holds a single move; the list form `next: [skill "arg", ...]` fills `next_items` instead.
`artifact: none` and `baseline: none` read as null. `sections` lists the level-two headings in order.
Preamble keys are the lowercase names in `shapes.PREAMBLE_KEYS`; the first other line is the orientation.
`tags` holds seed 0's calibrated tag of each tagged decision or directive of a generated note (`tags.py`).
`problems` says what could not be read; judging the note against the rules is `lint.py`'s job.
A bare preamble's lines are read with `escapes.unshield_angles`: the `\\<` a note writes for a `<` that could open a
tag reads back as `<` (a note written before that read the same: it held no such escape).

The parser never raises: bytes are decoded with replacement, input past `MAX_NOTE_BYTES` (1 MiB) is cut
off and a `truncated` problem says so, and NUL bytes are reported as `binary`.
"""

from __future__ import annotations

import re

from wheypoint.model.records import Record
from wheypoint.model.shapes import PREAMBLE_KEYS
from wheypoint.notes.escapes import unshield_angles
from wheypoint.notes.files import MAX_NOTE_BYTES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PIN_KEYS = ("work_id", "slug", "project", "revision_id", "revision_number", "record_digest", "note_digest")
# Keys that may sit after the orientation line: the indented blocks.
TRAILING_KEYS = ("parallel", "tasks", "wheypoint", "baseline")

_KEY_LINE = re.compile(r"^([a-z][a-z_]*)[ \t]*:(.*)$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_STATUS = re.compile(r"^(ok|gated|halt)\b[ \t]*:?[ \t]*(.*)$", re.IGNORECASE)
_MAPPING_LINE = re.compile(r"^\s*(?:-\s+)?([A-Za-z_][\w-]*)\s*:\s?(.*)$")
_ITEM_SKILL = re.compile(r"\s*/?([A-Za-z][\w-]*)\s*")
_QUOTED_ARG = re.compile(r'"(.*?)"\s*(?:,|$)', re.DOTALL)
_LIST_MARK = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
_LABEL = re.compile(r"^(?:\*\*|__)?([A-Za-z][\w '/&()-]{0,47}?)(?:\*\*|__)?\s*[.:](?:\*\*|__)?(?:\s|$)")
_SLUG_HEADING = re.compile(r"^handoff slug$", re.IGNORECASE)


class NoteProblem(Record):
    """Something in a note that could not be read as the layout expects."""

    code: str
    message: str

    def as_json(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


class Section(Record):
    """A heading outside code fences and the text under it, up to the next heading of its level or higher."""

    level: int
    title: str
    text: str
    line: int


class ParsedNote(Record):
    """The fields of a note's handoff slug, its section outline, and what could not be read."""

    format: str
    status: str | None
    status_kind: str | None
    status_reason: str | None
    next: str | None
    next_items: list[dict[str, str]] | None
    order: str | None
    mode: str
    artifact: str | None
    session: str | None
    git: str | None
    created: str | None
    parents: list[str] | None
    baseline: str | None
    orientation: str | None
    parallel: dict[str, str] | None
    tasks: list[dict[str, str]] | None
    wheypoint: dict[str, Any] | None
    sections: list[str]
    problems: list[NoteProblem]
    # Not part of the JSON form: every heading with its text, the labels that open body lines
    # (`**Goal.**`, `Agenda:`), and the body after the preamble.
    outline: tuple[Section, ...] = ()
    labels: tuple[str, ...] = ()
    body: str = ""

    def as_json(self) -> dict[str, Any]:
        """The documented JSON shape (see the module docstring)."""
        data = self._asdict()
        for key in ("outline", "labels", "body"):
            del data[key]
        data["problems"] = [p.as_json() for p in self.problems]
        from wheypoint.notes.tags import entry_tags

        data["tags"] = entry_tags((s.title, s.text) for s in self.outline if s.level == 2)
        return data

    def find(self, pattern: str) -> Section | None:
        """The first heading below the title whose text matches `pattern` (case-insensitive search)."""
        compiled = re.compile(pattern, re.IGNORECASE)
        return next((s for s in self.outline if s.level >= 2 and compiled.search(s.title)), None)

    def has_part(self, pattern: str) -> bool:
        """Whether a heading or a body label (`**Agenda.**`, `- State: ...`) matches `pattern`."""
        compiled = re.compile(pattern, re.IGNORECASE)
        return self.find(pattern) is not None or any(compiled.search(label) for label in self.labels)


def parse_note(text: str | bytes) -> ParsedNote:
    """Read a note's handoff slug and outline; never raises (see the module docstring)."""
    problems: list[NoteProblem] = []
    try:
        return _parse(_as_text(text, problems), problems)
    except Exception as exc:  # the contract is "never raises": report rather than crash a caller
        problems.append(NoteProblem("internal-error", f"the note could not be parsed ({type(exc).__name__})"))
        return _empty(problems)


def _empty(problems: list[NoteProblem]) -> ParsedNote:
    return ParsedNote(
        "legacy", None, None, None, None, None, None, "single", None, None, None, None, None, None, None,
        None, None, None, [], problems,
    )  # fmt: skip


def _as_text(text: str | bytes, problems: list[NoteProblem]) -> str:
    """Text capped at MAX_NOTE_BYTES of UTF-8, line endings normalised, a leading BOM dropped."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        data = bytes(text)
        cut = len(data) > MAX_NOTE_BYTES
        if cut:
            problems.append(_truncated(len(data)))
            data = data[:MAX_NOTE_BYTES]
        text = _decode(data, cut, problems)
    elif not isinstance(text, str):
        text = str(text)
    elif len(text) > MAX_NOTE_BYTES // 4:
        encoded = text[: MAX_NOTE_BYTES + 1].encode("utf-8", "surrogatepass")
        if len(encoded) > MAX_NOTE_BYTES:
            problems.append(_truncated(len(encoded) if len(text) <= MAX_NOTE_BYTES else None))
            text = encoded[:MAX_NOTE_BYTES].decode("utf-8", "ignore")
    if "\x00" in text:
        problems.append(NoteProblem("binary", "the note contains NUL bytes; it is probably not a text note"))
    return text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def _decode(data: bytes, cut: bool, problems: list[NoteProblem]) -> str:
    """UTF-8 text; a character split by the 1 MiB cut is dropped silently, other bad bytes are reported."""
    for trim in range(4 if cut else 1):
        try:
            return data[: len(data) - trim].decode("utf-8")
        except UnicodeDecodeError:
            continue
    problems.append(NoteProblem("invalid-utf8", "the note is not valid UTF-8; bad bytes were read as U+FFFD"))
    return data.decode("utf-8", "replace")


def _truncated(size: int | None) -> NoteProblem:
    told = f"{size} bytes" if size else "more than 1 MiB"
    return NoteProblem("truncated", f"the note is {told}; only its first {MAX_NOTE_BYTES} bytes (1 MiB) were read")


def _outline(lines: list[str]) -> tuple[list[tuple[int, int, str]], list[tuple[int, int]]]:
    """Headings (line, level, title) and fenced blocks (open line, close line) outside code fences."""
    headings: list[tuple[int, int, str]] = []
    fences: list[tuple[int, int]] = []
    fence: tuple[str, int, int] | None = None  # (character, length, opening line)
    for index, line in enumerate(lines):
        match = _FENCE.match(line)
        if fence is not None:
            closes = match and match.group(1)[0] == fence[0] and len(match.group(1)) >= fence[1]
            if closes and match and not match.group(2).strip():
                fences.append((fence[2], index))
                fence = None
            continue
        if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            fence = (match.group(1)[0], len(match.group(1)), index)
            continue
        heading = _HEADING.match(line)
        if heading:
            headings.append((index, len(heading.group(1)), (heading.group(2) or "").rstrip("#").strip()))
    if fence is not None:
        fences.append((fence[2], len(lines)))
    return headings, fences


def _parse(text: str, problems: list[NoteProblem]) -> ParsedNote:
    lines = text.split("\n")
    headings, fences = _outline(lines)
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    wrapped = False
    fields: dict[str, Any] = {}
    body_start = 0
    if first is not None and _is_key_line(lines[first]):
        fields, body_start = _read_preamble(lines, first, len(lines), True, problems)
    else:
        slug = next((h for h in headings if _SLUG_HEADING.match(h[2])), None)
        if slug is None:
            problems.append(NoteProblem("no-preamble", "no handoff slug: neither a preamble at the top of the file "
                                        "nor a `## Handoff slug` section"))  # fmt: skip
        else:
            wrapped = True
            start = next((i for i in range(slug[0] + 1, len(lines)) if lines[i].strip()), len(lines))
            block = next((f for f in fences if f[0] == start), None)
            if block is not None:
                fields, _ = _read_preamble(lines, block[0] + 1, block[1], False, problems)
            else:
                stop = next((h[0] for h in headings if h[0] > slug[0]), len(lines))
                problems.append(NoteProblem("slug-not-fenced", "the `## Handoff slug` section has no fenced block; "
                                            "its lines were read as the preamble"))  # fmt: skip
                fields, _ = _read_preamble(lines, start, stop, False, problems)
            body_start = slug[0]
    outline = tuple(_sections(lines, headings))
    labels = tuple(_labels(lines, body_start, fences))
    return _build(fields, wrapped, outline, labels, "\n".join(lines[body_start:]), problems)


def _is_key_line(line: str) -> bool:
    match = _KEY_LINE.match(line)
    return match is not None and match.group(1) in PREAMBLE_KEYS


def _is_block_line(line: str) -> bool:
    return bool(line) and (line[0] in " \t" or line.startswith("- ")) and bool(line.strip())


def _read_preamble(
    lines: list[str], start: int, stop: int, bare: bool, problems: list[NoteProblem]
) -> tuple[dict[str, Any], int]:
    """Key lines, the orientation and the keyed blocks from `start`; returns them and where they end.

    A bare preamble ends at its first blank line or heading; a fenced one at the fence. A bare one is Markdown,
    whose `\\<` reads as `<`; a fenced one is code, read as it stands.
    """
    plain = unshield_angles if bare else str
    fields: dict[str, Any] = {}
    index = start
    while index < stop:
        line = plain(lines[index])
        if not line.strip():
            if bare:
                break
            index += 1
            continue
        if bare and _HEADING.match(line):
            break
        match = _KEY_LINE.match(line)
        if match and match.group(1) in PREAMBLE_KEYS:
            key, value = match.group(1), match.group(2).strip()
            index += 1
            block: list[str] = []
            if not value:
                while index < stop and _is_block_line(lines[index]):
                    block.append(plain(lines[index]))
                    index += 1
            if key in fields:
                problems.append(NoteProblem("duplicate-key", f"`{key}:` is given twice; the first counts"))
                continue
            if "orientation" in fields and key not in TRAILING_KEYS:
                problems.append(NoteProblem("key-after-orientation", f"`{key}:` follows the orientation line; "
                                            "every key but the blocks belongs above it"))  # fmt: skip
            fields[key] = (value, block)
            continue
        if _is_block_line(line):
            problems.append(NoteProblem("stray-block-line", f"line {index + 1}: an indented line under no block"))
        elif "orientation" not in fields:
            fields["orientation"] = line.strip()
        else:
            problems.append(NoteProblem("preamble-extra-line", f"line {index + 1}: a second free line after the "
                                        "orientation; a blank line should end the preamble"))  # fmt: skip
            if bare:
                break
        index += 1
    return fields, index


def _sections(lines: list[str], headings: list[tuple[int, int, str]]) -> list[Section]:
    """Each heading with its text, which runs to the next heading of the same or a higher level."""
    ends: list[int] = [len(lines)] * len(headings)
    later: list[tuple[int, int]] = []  # (level, line) of following headings, nearest last
    for position in range(len(headings) - 1, -1, -1):
        line, level, _ = headings[position]
        while later and later[-1][0] > level:
            later.pop()
        ends[position] = later[-1][1] if later else len(lines)
        later.append((level, line))
    return [
        Section(level, title, "\n".join(lines[line + 1 : end]).strip("\n"), line + 1)
        for (line, level, title), end in zip(headings, ends, strict=True)
    ]


def _labels(lines: list[str], start: int, fences: list[tuple[int, int]]) -> list[str]:
    """Leading phrases such as `**Goal.**`, `- State:` or `Agenda.` that name a part of the body."""
    fenced = {i for first, last in fences for i in range(first, last + 1)}
    labels: list[str] = []
    for index in range(start, len(lines)):
        if index in fenced:
            continue
        line = _LIST_MARK.sub("", lines[index]).strip()
        match = _LABEL.match(line)
        if match:
            labels.append(match.group(1).strip().lower())
    return labels


def _build(
    fields: dict[str, Any],
    wrapped: bool,
    outline: tuple[Section, ...],
    labels: tuple[str, ...],
    body: str,
    problems: list[NoteProblem],
) -> ParsedNote:
    def scalar(key: str) -> str | None:
        value, block = fields.get(key, ("", []))
        if block and key not in TRAILING_KEYS and key != "next":
            problems.append(NoteProblem("unexpected-block", f"`{key}:` takes a value on its line, not a block"))
        return value or None

    status = scalar("status")
    status_kind = status_reason = None
    if status is not None:
        match = _STATUS.match(status)
        if match:
            status_kind, status_reason = match.group(1).lower(), match.group(2).strip() or None
        else:
            problems.append(NoteProblem("status-unknown", f"status {status!r} is not ok, gated: or halt:"))
    nxt, items = _next(fields, problems)
    mode = scalar("mode")
    if mode not in (None, "single", "parallel"):
        problems.append(NoteProblem("mode-unknown", f"mode {mode!r} is not single or parallel; read as single"))
    orientation = fields.get("orientation")
    wheypoint = _pins(fields, problems) if "wheypoint" in fields else None
    fmt = "legacy-wrapped" if wrapped else "wheypoint" if wheypoint is not None else "legacy"
    return ParsedNote(
        format=fmt,
        status=status,
        status_kind=status_kind,
        status_reason=status_reason,
        next=nxt,
        next_items=items,
        order=scalar("order"),
        mode="parallel" if mode == "parallel" else "single",
        artifact=_none_is_null(scalar("artifact")),
        session=scalar("session"),
        git=scalar("git"),
        created=scalar("created"),
        parents=_parents(scalar("parents")),
        baseline=_none_is_null(_baseline(fields)),
        orientation=orientation if isinstance(orientation, str) else None,
        parallel=_mapping(fields["parallel"][1], "parallel", problems) if "parallel" in fields else None,
        tasks=_tasks(fields["tasks"][1], problems) if "tasks" in fields else None,
        wheypoint=wheypoint,
        sections=[s.title for s in outline if s.level == 2],
        problems=problems,
        outline=outline,
        labels=labels,
        body=body,
    )


def _none_is_null(value: str | None) -> str | None:
    """An empty value (what wheypoint writes) or `none` (what older notes wrote) is null."""
    return None if value is None or value.strip().lower() in ("", "none") else value


def _next(fields: dict[str, Any], problems: list[NoteProblem]) -> tuple[str | None, list[dict[str, str]] | None]:
    value, block = fields.get("next", ("", []))
    if not value and block:
        value = "[" + ", ".join(_LIST_MARK.sub("", line).strip() for line in block) + "]"
    if not value:
        return None, None
    if not value.startswith("["):
        return value, None
    items = parse_next_items(value)
    if items is None:
        from wheypoint.model.replies import excerpt  # scrubbed before the cut: a cut token escapes the scan

        problems.append(
            NoteProblem("next-list-unreadable", f'next {excerpt(value, 80)!r} is not a list of `skill "arg"`')
        )
        return value, None
    return None, items


def parse_next_items(value: str) -> list[dict[str, str]] | None:
    """The list form `[briesearch "q1", culture "q2"]` as items, or None when it cannot be read."""
    inner = value.strip()
    if not (inner.startswith("[") and inner.endswith("]")):
        return None
    inner = inner[1:-1].strip()
    items: list[dict[str, str]] = []
    pos = 0
    while pos < len(inner):
        skill = _ITEM_SKILL.match(inner, pos)
        if skill is None:
            return None
        pos = skill.end()
        if inner.startswith('"', pos):
            quoted = _QUOTED_ARG.match(inner, pos)
            if quoted is None:
                return None
            arg, pos = quoted.group(1), quoted.end()
        else:
            comma = inner.find(",", pos)
            comma = len(inner) if comma < 0 else comma
            arg, pos = inner[pos:comma].strip(), comma + 1
        items.append({"skill": skill.group(1), "arg": arg})
        while pos < len(inner) and inner[pos] in " \t,":
            pos += 1
    return items


def _parents(value: str | None) -> list[str] | None:
    if value is None:
        return None
    inner = value.strip()
    if inner.startswith("[") and inner.endswith("]"):
        inner = inner[1:-1]
    return [part.strip().strip("'\"") for part in inner.split(",") if part.strip().strip("'\"")]


def _baseline(fields: dict[str, Any]) -> str | None:
    if "baseline" not in fields:
        return None
    value, block = fields["baseline"]
    if not block:
        return str(value) or None
    indent = min(len(line) - len(line.lstrip()) for line in block)
    return "\n".join([value, *(line[indent:] for line in block)] if value else [line[indent:] for line in block])


def _mapping(block: list[str], key: str, problems: list[NoteProblem]) -> dict[str, str]:
    mapping: dict[str, str] = {}
    for line in block:
        match = _MAPPING_LINE.match(line)
        if match is None:
            problems.append(NoteProblem("block-line-unreadable", f"`{key}:` holds a line that is not `key: value`"))
        elif match.group(1) not in mapping:
            mapping[match.group(1)] = match.group(2).strip()
    return mapping


def _tasks(block: list[str], problems: list[NoteProblem]) -> list[dict[str, str]]:
    tasks: list[dict[str, str]] = []
    for line in block:
        match = _MAPPING_LINE.match(line)
        if match is None:
            problems.append(NoteProblem("block-line-unreadable", "`tasks:` holds a line that is not `key: value`"))
            continue
        if line.lstrip().startswith("-") or not tasks:
            tasks.append({})
        tasks[-1].setdefault(match.group(1), match.group(2).strip())
    return tasks


def _pins(fields: dict[str, Any], problems: list[NoteProblem]) -> dict[str, Any]:
    pins: dict[str, Any] = dict(_mapping(fields["wheypoint"][1], "wheypoint", problems))
    missing = [key for key in PIN_KEYS if key not in pins]
    if missing:
        problems.append(NoteProblem("pins-incomplete", f"the wheypoint: block lacks {', '.join(missing)}"))
    number = pins.get("revision_number")
    if isinstance(number, str) and number.isdigit() and len(number) < 19:
        pins["revision_number"] = int(number)
    return pins


# The name the seeds give this reader.
parse_handoff_slug = parse_note
