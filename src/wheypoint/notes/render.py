"""The Markdown projection of a record: the handoff note a person or a fresh agent reads.

The note is derived: every byte comes from the record, so it can be re-rendered at any time and is
never the authority. Its preamble is a block of `key: value` lines, then the one-line orientation,
then indented keyed blocks (`parallel:`, `tasks:`, `wheypoint:` pins), then a blank line; a reader
takes lines until the first blank one. `note_digest` is the sha256 of the whole note with that
line's value left empty, so a hand edit anywhere is detectable without the store.

No field can forge structure, for this module's readers or for CommonMark. Single-line fields are refused at
intake when they hold a line break or a hidden character (`notes/escapes.py`), and are escaped here as well, for
records that came from elsewhere; in the preamble a `<` that could open a tag is written `\\<` reversibly
(`escapes.shield_angles`: parse.py and the published reader take it back). Multi-line text is split on every line
terminator `str.splitlines` knows and indented under its list item, each line made inert for CommonMark
(`escapes.markdown_line`: no heading, setext underline, rule, fence, HTML or link definition); code spans take a
fence longer than any backtick run in their text. Verbatim text (the user's quotes, meat) sits in a code fence
longer than any backtick run in it, split on `\n` only, with every other line terminator and hidden character
written as `⟪U+XXXX⟫`, so the note holds no line break but `\n`, and `escapes.verbatim_blocks` gives the record's
bytes back.
"""

from __future__ import annotations

from wheypoint.model.canonical import sha256_hex
from wheypoint.model.derived import notes_stale, orientation_stale
from wheypoint.model.shapes import is_work_id
from wheypoint.notes.escapes import disarm_lookalike, escape, markdown_line, opens_block, shield_angles
from wheypoint.notes.escapes import escape_one_line as _line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

TITLE = "# Wheypoint handoff"
SECTIONS = (
    "Gates", "Open entries", "Decisions", "Directives", "Meat", "Notes", "Superseded", "Context", "Artifacts",
    "Decision dossier", "Tasks", "Lineage", "Local references", "Identifiers",
)  # fmt: skip
DIGEST_KEY = "note_digest"
# What each next move asks of the reader, in a line, for a cold reader who does not know the pipeline's names.
MOVE_GLOSSES = {
    "mold": "shape the fuzzy idea into an approved spec",
    "cut": "take the artifact named here as the plan and start on it",
    "cook": "implement the approved spec named in artifact",
    "press": "harden the written code, then have it reviewed",
    "age": "review the finished implementation",
    "cure": "apply the review findings",
    "affinage": "answer the pull request's review comments or failing CI",
    "briesearch": "research before deciding or building (read-only)",
    "culture": "think the problem through, writing nothing (read-only)",
    "hold": "restore orientation and wait: no action is implied",
    "tasks": "run the independent tasks below, each in its own worktree",
    "done": "nothing: the work is finished and this note is its record",
}
_DIGEST_PREFIX = f"  {DIGEST_KEY}: "
# The checks below are plain string tests rather than regular expressions: compiling a pattern costs a few
# tenths of a millisecond of every process that renders a note, and `show` renders one to compare it.


def escape_line(line: str) -> str:
    """A line of field text, hidden characters made visible and inert for CommonMark (`escapes.markdown_line`)."""
    return markdown_line(_line(line))


def _pre(text: str) -> str:
    """A preamble value: one line, its `<` shielded reversibly (the readers of the preamble take it back)."""
    return shield_angles(_line(text))


def code(text: str) -> str:
    """Text as a code span that nothing in it can close early: the fence is longer than any backtick run in it."""
    text = _line(text) or " "
    if "`" not in text:
        return f"`{text}`"
    fence = "`" * (_longest_backtick_run(text) + 1)
    return f"{fence} {text} {fence}"


def _longest_backtick_run(text: str) -> int:
    """The length of the longest run of backticks in `text` (0 without one): a fence must be longer."""
    if "`" not in text:
        return 0
    from wheypoint.patterns import compiled  # (here: a note with no backtick, what `show` mostly reads, needs none)

    return max(len(run) for run in compiled("`+").findall(text))


def _heading(text: str) -> str:
    """A `### ` heading's text: inert, and a closing run of `#` kept as text (CommonMark would drop it)."""
    text = _one_line(text)
    end = len(text.rstrip("#"))
    return text if end == len(text) else f"{text[:end]}\\{text[end:]}"


def _digest_value_span(text: str) -> tuple[int, int] | None:
    """Where the value of the `  note_digest: ` line of the `wheypoint:` block sits in a note (start and end).

    Only a line inside that block counts: one earlier in the preamble (an orientation of another note's making)
    must not take the digest's place.
    """
    pins = text.find("\nwheypoint:\n")
    if pins < 0:
        return None
    line = text.find("\n" + _DIGEST_PREFIX, pins)
    if line < 0:
        return None
    start = line + 1 + len(_DIGEST_PREFIX)
    end = text.find("\n", start)
    return start, len(text) if end < 0 else end


def _text_block(text: str, indent: str = "  ") -> str:
    """Multi-line text set under a list item: first line inline, the rest indented and escaped."""
    lines = [escape_line(line) for line in text.splitlines()] or [""]
    return lines[0] + "".join(f"\n{indent}{line}" if line else "\n" for line in lines[1:])


def _blockquote(text: str, indent: str = "  ") -> str:
    """The user's words verbatim, as a fenced block inside a blockquote: nothing in them is read as Markdown."""
    return "\n".join(f"{indent}> {line}" if line else f"{indent}>" for line in fenced(text, "").split("\n"))


def fenced(text: str, indent: str = "  ") -> str:
    """Verbatim text in a code fence longer than any backtick run inside it, so nothing breaks out.

    Lines are split on `\n` alone; any other line terminator or hidden character is escaped (escapes.py).
    """
    text = escape(text)
    fence = "`" * max(3, _longest_backtick_run(text) + 1)
    body = "\n".join(f"{indent}{line}" if line else "" for line in text.split("\n"))
    return f"{indent}{fence}text\n{body}\n{indent}{fence}"


def _meat(item: Mapping[str, Any]) -> str:
    # Turn ids, types and times come from a transcript file, which nothing validated: escaped like any text.
    when = f", {escape_line(item['timestamp'])}" if item["timestamp"] else ""
    kind = escape_line(item["kind"])
    head = f"- {code(item['turn'])} {escape_line(item['type'])}, weight {item['weight']} ({kind}{when})"
    return f"{head}\n{fenced(item['text'])}"


def _one_line(text: str) -> str:
    return escape_line(" ".join(text.split()))


def next_value(nxt: Mapping[str, Any]) -> str:
    """The preamble's `next:` value: one move, or the list form `[skill "arg", ...]`."""
    if "items" in nxt:
        items = ", ".join(f'{_line(i["skill"])} "{_line(i["arg"])}"' for i in nxt["items"])
        return f"[{items}]"
    return _line(str(nxt.get("move", "")))


def _preamble(record: Mapping[str, Any]) -> list[str]:
    nxt = record["next"]
    # Every value is escaped to one line: intake refuses what would need it, but a record may come from a bundle.
    lines = [f"status: {_pre(record['status'])}", f"next: {shield_angles(next_value(nxt))}"]
    if "order" in nxt:
        lines.append(f"order: {_pre(nxt['order'])}")
    # Seeds 1 and 2: `artifact:` comes before `mode: parallel`, and is empty (not `none`) when there is none.
    artifact = nxt.get("artifact")
    lines.append(f"artifact: {_pre(artifact)}" if artifact else "artifact:")
    if nxt.get("move") == "tasks":
        lines.append("mode: parallel")
    if record["session"]:
        lines.append(f"session: {_pre(record['session']['harness'])}:{_pre(record['session']['id'])}")
    git = record["git"]
    if git:
        lines.append(f"git: {_pre(git['branch'] or 'HEAD')}@{_pre(git['commit'][:7])}")
    lines.append(f"created: {_pre(record['updated_at'])}")
    parents = [_pre(parent_slug(e["ref"])) for e in record["edges"] if e["kind"] in ("forked_from", "joined_from")]
    if parents:
        lines.append(f"parents: [{', '.join(parents)}]")
    lines.append(_orientation(record["orientation"]))
    if nxt.get("move") == "tasks":
        lines += _parallel_block(nxt)
    lines += [
        "wheypoint:",
        f"  work_id: {_line(record['work_id'])}",
        f"  slug: {_line(record['slug'])}",
        f"  project: {_line(record['project_key'])}",
        f"  revision_id: {record['revision_id']}",
        f"  revision_number: {record['revision_number']}",
        f"  record_digest: {record['record_digest']}",
        f"  {DIGEST_KEY}: ",
    ]
    return lines


def parent_slug(ref: str) -> str:
    """The slug seed 0's `parents:` line names: a work id (`<slug>.<8 hex>`) ends a lineage ref, and its slug is
    the part before the dot. A ref of another shape is kept whole; the ref itself stays in Lineage either way."""
    tail = ref.rpartition("/")[2]
    return tail.rpartition(".")[0] if is_work_id(tail) else ref


def _orientation(text: str) -> str:
    """The orientation line. Intake refuses one that opens a block; one from elsewhere gets a backslash first."""
    text = _pre(text)
    return f"\\{text}" if opens_block(text) else text


def _parallel_block(nxt: Mapping[str, Any]) -> list[str]:
    lines = ["parallel:"]
    lines += [f"  {_pre(key)}: {_pre(str(value))}" for key, value in nxt.get("parallel", {}).items()]
    lines.append("tasks:")
    for task in nxt.get("tasks", []):
        first = True
        for key in ("slug", "intent", "repo", "worktree", "branch", "branch_from", "command"):
            if key in task:
                lines.append(f"  {'- ' if first else '  '}{key}: {_pre(task[key])}")
                first = False
    return lines


def tag_span(tag: str) -> str:
    """Seed 0's calibrated tag as the note writes it before the claim: `<certain>` in a code span, so CommonMark
    shows it rather than reading an HTML tag (`parse.entry_tags` reads it back)."""
    return code(f"<{tag}>")


def _entry_line(entry: Mapping[str, Any], *, with_rationale: bool = True) -> str:
    if "confidence" in entry:
        line = f"- {code(entry['id'])} {tag_span(entry['confidence'])} {_text_block(entry['text'])}"
    else:
        line = f"- {code(entry['id'])} {disarm_lookalike(_text_block(entry['text']))}"
    facts = [f"{key}: {_one_line(entry[key])}" for key in ("owner", "when") if key in entry]
    facts.append(f"since r{entry['added_in']}")
    line += f" ({'; '.join(facts)})"
    if with_rationale and "rationale" in entry:
        line += f"\n  Why: {_text_block(entry['rationale'])}"
    return line


def _section(title: str, body: Iterable[str]) -> list[str]:
    parts = list(body)
    return [f"## {title}", "", *parts, ""] if parts else []


def _active(record: Mapping[str, Any], kinds: tuple[str, ...], gates: bool | None = None) -> list[Any]:
    return [
        e for e in record["entries"]
        if e["state"] == "active" and e["kind"] in kinds and (gates is None or e["gates"] == gates)
    ]  # fmt: skip


def _notes(record: Mapping[str, Any]) -> list[str]:
    if not record["notes"]:
        return []
    lines: list[str] = []
    if notes_stale(record):
        lines += [_stale_warning("Stale notes", "written", record["notes_revision"], record), ""]
    lines += [escape_line(line) for line in record["notes"].splitlines()]
    return lines


def _stale_warning(what: str, done: str, since: int, record: Mapping[str, Any]) -> str:
    """The blockquote saying a text written at r`since` predates the decisions that changed after it."""
    changed = [
        e["id"] for e in record["entries"]
        if e["kind"] == "decision"
        and (e["added_in"] > since or e.get("settled", {}).get("revision_number", 0) > since)
    ]  # fmt: skip
    return (f"> **{what}:** {done} at r{since}; decisions changed at r{record['decisions_revision']} "
            f"({', '.join(changed)}). Read the Decisions section.")  # fmt: skip


def _settled(entry: Mapping[str, Any]) -> str:
    settled = entry["settled"]
    line = f"- {code(entry['id'])} ({entry['kind']}, {entry['state']} at r{settled['revision_number']}"
    line += f" by {code(settled['by'])})" if "by" in settled else ")"
    return f"{line} {_text_block(entry['text'])}\n  Why: {_text_block(settled['rationale'])}"


def _dossier(record: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    # A fork is decided once its gate is no longer active; the gate is the gating entry that asked the fork.
    settled = {e["text"]: e for e in record["entries"] if e["gates"] and e["state"] != "active"}
    by_id = {e["id"]: e for e in record["entries"]}
    for fork in record["decision_dossier"]:
        lines.append(f"### {_heading(fork['fork'])}")
        lines.append("")
        if fork["gate"]:
            lines.append(f"Gate: {code(fork['gate'])}")
            lines.append("")
        gate = settled.get(fork["fork"])
        if gate is not None and "settled" in gate:
            how = gate["settled"]
            successor = by_id.get(how.get("by", ""))
            by = f" by {code(successor['id'])} {_one_line(successor['text'])}" if successor else ""
            lines.append(f"**Decided** in r{how['revision_number']} ({gate['state']}{by}): "
                         f"{_text_block(how['rationale'])}")  # fmt: skip
            lines.append("")
        for option in fork["options"]:
            lines.append(f"- **Option:** {_text_block(option['option'])}")
            for evidence in option.get("evidence", []):
                lines.append(f"  - Evidence: {_text_block(evidence, '    ')}")
            if "breaks" in option:
                lines.append(f"  - Breaks: {_text_block(option['breaks'], '    ')}")
        if "prior_leaning" in fork:
            lines.append(f"- **Prior leaning:** {_text_block(fork['prior_leaning'])}")
        lines.append("")
    return lines[:-1]


def _artifact(link: Mapping[str, Any]) -> str:
    line = f"- {escape_line(link.get('pinned', link['ref']))}"
    if link["covers"]:
        line += f" (covers {', '.join(map(code, link['covers']))})"
    if link["digest"]:
        line += f" {code(link['digest'][:19])}"
    return line


LINEAGE_KINDS = ("forked_from", "forked_to", "joined_from", "joined_into")


def _edge_line(edge: Mapping[str, Any]) -> str:
    line = f"- {escape_line(edge['kind'])}: {escape_line(edge['ref'])}"
    if edge.get("covers"):
        line += f" (covers {', '.join(map(code, edge['covers']))})"
    return line


def _lineage(record: Mapping[str, Any]) -> list[str]:
    """Where this work came from and what was split off it (written by `fork`, never by an agent)."""
    lines = []
    for edge in record["edges"]:
        if edge["kind"] in ("forked_from", "joined_from"):
            taken = f" at {code(edge['revision'])}" if "revision" in edge else ""
            how = "forked" if edge["kind"] == "forked_from" else "joined"
            lines.append(f"- parent: {escape_line(edge['ref'])}{taken} ({how} in r{edge['added_in']})")
    moved: dict[str, list[str]] = {}
    for entry in record["entries"]:
        if entry["state"] == "moved":
            moved.setdefault(entry["settled"]["to"], []).append(code(entry["id"]))
    for edge in record["edges"]:
        if edge["kind"] in ("forked_to", "joined_into"):
            child = edge["ref"].rpartition("/")[2]
            took = f": took {', '.join(moved[child])}" if child in moved else ""
            how = "forked" if edge["kind"] == "forked_to" else "joined"
            lines.append(f"- child: {escape_line(edge['ref'])} ({how} at r{edge['added_in']}){took}")
    return lines


def _identifiers(record: Mapping[str, Any]) -> list[str]:
    lines = [
        f"- work_id: {code(record['work_id'])}",
        f"- slug: {code(record['slug'])}",
        f"- project: {code(record['project_key'])}",
        f"- revision: {code(record['revision_id'])} (r{record['revision_number']}, parent "
        f"{code(record['parent_revision_id'] or 'none')})",
        f"- record_digest: {code(record['record_digest'])}",
    ]
    lines += [f"- {code(e['id'])}: {e['kind']}, {e['state']}" for e in record["entries"]]
    move = record["next"].get("move")
    gloss = MOVE_GLOSSES.get(move or "") if move else "run the listed moves in order"
    lines.append(f"- next: {escape_line(next_value(record['next']))}: {gloss}")
    resume = f"wheypoint checkpoint {record['slug']} --base {record['revision_id']} ..."
    lines.append(f"- continue: {code(resume)}")
    return lines


def render_body(record: Mapping[str, Any]) -> list[str]:
    """The note's sections after the title, in their fixed order."""
    directives = []
    for entry in _active(record, ("directive", "operator_directive")):
        who = " (operator, private)" if entry["kind"] == "operator_directive" else ""
        where = f" (quoted from turn {code(entry['quote_turn'])})" if "quote_turn" in entry else ""
        directives.append(_entry_line(entry) + who + where + "\n" + _blockquote(entry.get("quote", "")))
    edges = [_edge_line(e) for e in record["edges"] if e["kind"] not in LINEAGE_KINDS]
    tasks = [f"- {code(t['slug'])} ({escape_line(t['intent'])}): {escape_line(t['command'])}"
             for t in record["next"].get("tasks", [])]  # fmt: skip
    body: list[str] = []
    if orientation_stale(record):
        stated = record["orientation_revision"]
        body += [_stale_warning("Stale orientation", "the orientation at the top was stated", stated, record), ""]
    body += _section("Gates", map(_entry_line, _active(record, ("question", "blocker"), gates=True)))
    body += _section("Open entries", map(_entry_line, _active(record, ("question", "blocker"), gates=False)))
    body += _section("Decisions", map(_entry_line, _active(record, ("decision",))))
    body += _section("Directives", directives)
    body += _section("Meat", map(_meat, record["meat"]))
    body += _section("Notes", _notes(record))
    body += _section("Superseded", [_settled(e) for e in record["entries"] if e["state"] != "active"])
    body += _section("Context", [f"- {escape_line(item)}" for item in record["working_context"]])
    body += _section("Artifacts", [*map(_artifact, record["artifact_links"]), *edges])
    body += _section("Decision dossier", _dossier(record))
    body += _section("Tasks", tasks)
    body += _section("Lineage", _lineage(record))
    body += _section("Local references", [f"- {escape_line(ref)}" for ref in record["local_references"]])
    body += _section("Identifiers", _identifiers(record))
    return body


def note_digest(text: str) -> str:
    """sha256 of a note with its own note_digest value blanked."""
    span = _digest_value_span(text)
    blank = text if span is None else text[: span[0]] + text[span[1] :]
    return "sha256:" + sha256_hex(blank.encode("utf-8"))


def carries_own_digest(text: str) -> bool:
    """Whether a note is a generated one left as rendered: its `note_digest` matches its own text.

    Cheaper than parsing it, and exact for the question "can this note be passed over as generated and
    unedited": a hand-written note cannot carry the sha256 of itself by chance.
    """
    span = _digest_value_span(text)
    return span is not None and text[span[0] : span[1]] == note_digest(text)


def render(record: Mapping[str, Any]) -> str:
    """The complete note for a record."""
    text = "\n".join([*_preamble(record), "", TITLE, "", *render_body(record)]).rstrip("\n") + "\n"
    span = _digest_value_span(text)
    return text if span is None else text[: span[0]] + note_digest(text) + text[span[1] :]
