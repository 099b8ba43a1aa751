"""Intent rules that span several fields: the checks a JSON Schema cannot express.

Each rule reads a schema-valid intent and returns coded problems; none needs the store. Rules that
depend on the head record (unknown entries, a gate without its dossier fork, ...) are the kernel's.
"""

from __future__ import annotations

from wheypoint.model.contract import READ_ONLY_MOVES
from wheypoint.model.errors import Problem
from wheypoint.model.schemacheck import child_path
from wheypoint.model.shapes import ENTRY_ID_PATTERN, PREAMBLE_KEYS
from wheypoint.patterns import compiled as regex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

ENTRY_LISTS = ("directives", "operator_directives", "decisions", "questions", "blockers")

# Keys that open a handoff preamble. An orientation starting with one of them would be read back as a
# key line, so it is refused rather than rendered ambiguously.
# These three are kept as text and compiled by `re` on first use: an intent without an orientation, or whose
# next move is not affinage, never pays for them.
_PREAMBLE_LIKE = r"(?i)^\s*(?:" + "|".join(PREAMBLE_KEYS) + r")\s*:"
_MARKDOWN_BLOCK_START = r"^\s*(?:#|>|[-*+]\s|```|~~~|\d+[.)]\s|<)"
_PR_REFERENCE = r"^(?:PR#\d+|https?://\S+/pull/\d+\S*|https?://\S+/merge_requests/\d+\S*)$"
# Fields that may span lines; every other string is one line, since the projection prints it on one.
MULTILINE_KEYS = frozenset(
    {"text", "quote", "rationale", "notes", "evidence", "breaks", "option", "fork", "prior_leaning"}
)
# C0 controls other than tab, newline and carriage return, DEL and the C1 controls other than NEL (a line
# terminator, refused in one-line fields) have no place in handoff text.
_CONTROL = frozenset([*map(chr, range(0x00, 0x09)), "\x0b", "\x0c", *map(chr, range(0x0E, 0x20)),
                      *map(chr, range(0x7F, 0x85)), *map(chr, range(0x86, 0xA0))])  # fmt: skip


def opens_markdown_block(text: str) -> bool:
    """Whether a line opens a Markdown block (the test `_MARKDOWN_BLOCK_START` states), by string tests.

    A heading, quote, HTML or fence opener, or a list item (`-`, `*`, `+` or a number with `.` or `)`, then white
    space), after any leading white space; or a whole line CommonMark reads as a setext underline (`=` or `-` alone,
    any length) or a thematic break (three or more `*`, `-` or `_`, white space between). Written out so that
    validating an intent compiles no pattern.
    """
    body = text.lstrip()
    if body[:1] in ("#", ">", "<") or body.startswith(("```", "~~~")):
        return True
    marks = "".join(body.split())
    if marks and marks[0] in "=-*_" and marks == marks[0] * len(marks) and (marks[0] in "=-" or len(marks) >= 3):
        return True
    if body[:1] in ("-", "*", "+"):
        return body[1:2].isspace()
    digits = 0
    while digits < len(body) and body[digits].isdecimal():
        digits += 1
    return digits > 0 and body[digits : digits + 1] in (".", ")") and body[digits + 1 : digits + 2].isspace()


def reads_as_key(line: str) -> bool:
    """Whether a line would be read as a `key: value` line: by notes/parse.py (a preamble key, any case, white
    space allowed before the colon), or by the ten-line reader docs/contract.md publishes (any lower-case
    identifier before the first colon)."""
    key, colon, _ = line.partition(":")
    if not colon:
        return False
    return (key.isidentifier() and key.islower()) or regex(_PREAMBLE_LIKE).match(line) is not None


def walk_strings(value: Any, path: str = "$") -> Iterator[tuple[str, str]]:
    """Every string in a JSON value with its path, keys excluded."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from walk_strings(item, child_path(path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from walk_strings(item, child_path(path, index))


def _entries(intent: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for list_name in ENTRY_LISTS:
        for index, entry in enumerate(intent.get(list_name, [])):
            yield list_name, f"$.{list_name}[{index}]", entry


def check_gates(intent: dict[str, Any]) -> list[Problem]:
    """A gating question or blocker says why it gates: a person must be able to decide from its rationale.

    Seed 2 makes a plain `--gates --rationale "<why>"` a valid gate; a decision-dossier fork (the options,
    their evidence and the leaning) is the richer form and stays optional.
    """
    problems: list[Problem] = []
    for list_name, path, entry in _entries(intent):
        if list_name in ("questions", "blockers") and entry.get("gates") and not entry.get("rationale"):
            problems.append(Problem("gate-needs-rationale", f"{path}.rationale", "a gating entry needs a rationale"))
    return problems


def check_next(intent: dict[str, Any]) -> list[Problem]:
    """The next move's shape: one move or a read-only list, and what each move needs."""
    nxt = intent.get("next")
    if nxt is None:
        return []
    problems: list[Problem] = []
    move, items = nxt.get("move"), nxt.get("items")
    if (move is None) == (items is None):
        problems.append(Problem("next-shape", "$.next", "give exactly one of `move` or a list of `items`"))
    if items is not None and "order" not in nxt:
        problems.append(Problem("next-order-required", "$.next.order", "a list of next moves needs an order"))
    if items is None and "order" in nxt:
        problems.append(Problem("next-shape", "$.next.order", "order belongs to a list of next moves"))
    artifact = nxt.get("artifact")
    if isinstance(artifact, str) and artifact.strip().lower() == "none":
        # Older notes wrote `artifact: none` for no artifact, and every reader still takes it so (notes/parse.py).
        problems.append(Problem("bad-value", "$.next.artifact", "`none` reads as no artifact in a note: leave "
                                "artifact out, or name the file"))  # fmt: skip
    if move == "affinage" and not (artifact and regex(_PR_REFERENCE).match(artifact.strip())):
        problems.append(Problem("affinage-needs-pr", "$.next.artifact", "next: affinage needs PR#<n> or a PR URL"))
    if move in ("cook", "cut") and not artifact:
        problems.append(Problem("artifact-required", "$.next.artifact", f"next: {move} needs an artifact"))
    if items is not None:
        for index, item in enumerate(items):
            if item.get("skill") not in READ_ONLY_MOVES:
                problems.append(
                    Problem(
                        "next-item-not-read-only", f"$.next.items[{index}].skill", "only read-only moves may be listed"
                    )
                )
    problems += _check_tasks(nxt, move)
    return problems


def _check_tasks(nxt: dict[str, Any], move: str | None) -> list[Problem]:
    tasks, parallel = nxt.get("tasks"), nxt.get("parallel")
    if move != "tasks":
        return [
            Problem("tasks-without-tasks-move", f"$.next.{key}", f"{key} belongs only to next: tasks")
            for key in ("tasks", "parallel")
            if key in nxt
        ]
    problems: list[Problem] = []
    if not tasks:
        problems.append(Problem("tasks-required", "$.next.tasks", "next: tasks needs a task list"))
    if parallel is None:
        problems.append(Problem("tasks-required", "$.next.parallel", "next: tasks needs a parallel plan"))
    if not tasks or parallel is None:
        return problems
    strategy = parallel["worktree_strategy"]
    if strategy == "create" and not parallel.get("worktree_root"):
        problems.append(Problem("task-fields", "$.next.parallel.worktree_root", "strategy create needs worktree_root"))
    needed = ("worktree", "branch", "branch_from") if strategy == "existing" else ("branch", "branch_from")
    worktrees: dict[str, int] = {}
    for index, task in enumerate(tasks):
        for key in needed:
            if not task.get(key):
                problems.append(
                    Problem(
                        "task-fields",
                        f"$.next.tasks[{index}].{key}",
                        f"worktree strategy {strategy} needs {key} on every task",
                    )
                )
        worktree = task.get("worktree")
        if strategy == "existing" and worktree:
            if worktree in worktrees:
                problems.append(
                    Problem(
                        "task-worktree-shared",
                        f"$.next.tasks[{index}].worktree",
                        f"shares a checkout with task {worktrees[worktree]}",
                    )
                )
            worktrees.setdefault(worktree, index)
    return problems


def check_labels(intent: dict[str, Any]) -> list[Problem]:
    """Labels are unique in an intent; a reference that is not an entry id must name one of them."""
    problems: list[Problem] = []
    labels: set[str] = set()
    for _, path, entry in _entries(intent):
        label = entry.get("label")
        if label is None:
            continue
        if label in labels:
            problems.append(Problem("duplicate-label", f"{path}.label", f"label {label!r} is used twice"))
        labels.add(label)
    for path, ref in _label_references(intent):
        if not regex(ENTRY_ID_PATTERN).match(ref) and ref not in labels:
            problems.append(Problem("unknown-label", path, f"{ref!r} is neither an entry id nor a label here"))
    return problems


def _label_references(intent: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for index, transition in enumerate(intent.get("transitions", [])):
        if "by" in transition:
            yield f"$.transitions[{index}].by", transition["by"]
    for index, link in enumerate(intent.get("artifact_links", [])):
        for position, ref in enumerate(link.get("covers", [])):
            yield f"$.artifact_links[{index}].covers[{position}]", ref
    for index, fork in enumerate(intent.get("decision_dossier", [])):
        if "gate" in fork:
            yield f"$.decision_dossier[{index}].gate", fork["gate"]


def check_transitions(intent: dict[str, Any]) -> list[Problem]:
    """Only supersede names a successor (seed 2 lets it stand without one); an entry moves once per intent."""
    problems: list[Problem] = []
    seen: set[str] = set()
    for index, transition in enumerate(intent.get("transitions", [])):
        path = f"$.transitions[{index}]"
        if transition["action"] != "supersede" and "by" in transition:
            problems.append(Problem("successor-without-supersede", f"{path}.by", "only supersede takes `by`"))
        if transition["entry"] in seen:
            problems.append(Problem("duplicate-transition", f"{path}.entry", "this entry already moves here"))
        seen.add(transition["entry"])
    return problems


def check_text_shape(intent: dict[str, Any]) -> list[Problem]:
    """The orientation is one plain line; one-line fields hold no line break or hidden character (the note prints
    them on a preamble line, which the ten-line reader splits with `str.splitlines`); no text carries control
    characters. Multi-line text may hold hidden characters: the note shows them escaped."""
    from wheypoint.model.characters import LINE_TERMINATORS, first_hidden

    problems: list[Problem] = []
    orientation = intent.get("orientation")
    if isinstance(orientation, str):
        if "\n" in orientation or not set(LINE_TERMINATORS).isdisjoint(orientation):
            problems.append(Problem("orientation-shape", "$.orientation", "the orientation is one line"))
        elif orientation != orientation.strip():
            problems.append(Problem("orientation-shape", "$.orientation", "starts or ends with white space"))
        elif reads_as_key(orientation) or opens_markdown_block(orientation):
            problems.append(
                Problem(
                    "orientation-shape",
                    "$.orientation",
                    "would read as a preamble key or Markdown block; start it with a word",
                )
            )
        elif not orientation.strip():
            problems.append(Problem("orientation-shape", "$.orientation", "must not be blank"))
    for path, text in walk_strings(intent):
        if text.isascii() and text.isprintable():
            continue  # nearly every string: nothing below can apply
        if not _CONTROL.isdisjoint(text):
            problems.append(Problem("control-character", path, "contains a control character"))
        elif path == "$.orientation" or _field_name(path) not in MULTILINE_KEYS:
            at = first_hidden(text)
            if at is None:
                continue
            if text[at] == "\n" or text[at] in LINE_TERMINATORS:
                if path != "$.orientation":
                    problems.append(Problem("single-line-field", path, "this field is one line"))
            else:
                why = f"holds U+{ord(text[at]):04X}, which is invisible or reorders text; a one-line field is plain"
                problems.append(Problem("hidden-character", path, why))
    return problems


def _field_name(path: str) -> str:
    """The last key of a JSON path, ignoring list positions: `$.a[2].evidence[0]` -> `evidence`."""
    return regex(r"\[\d+\]$").sub("", path).rsplit(".", 1)[-1]


def secret_problem(path: str, text: str) -> Problem | None:
    """`secret-pattern` when a text looks like it holds a credential, else `pii-found` when it holds personal data
    (model/pii.py: a card, social security or phone number): the rules are named, the value never."""
    from wheypoint.model.credentials import scan_text
    from wheypoint.model.pii import scan_pii

    rules = sorted({hit.rule for hit in scan_text(text)})
    personal = sorted({hit.rule for hit in scan_pii(text)})
    if rules:
        return Problem("secret-pattern", path, f"looks like a credential (rule: {', '.join(rules + personal)}); "
                       "reference where it lives")  # fmt: skip
    if personal:
        return Problem("pii-found", path, f"holds personal data (rule: {', '.join(personal)}); leave it out or "
                       "say what it is without the number")  # fmt: skip
    return None


def check_credentials(intent: dict[str, Any]) -> list[Problem]:
    """Every string of the intent that looks like a credential is refused."""
    return [p for path, text in walk_strings(intent) if (p := secret_problem(path, text)) is not None]


def check_record(record: dict[str, Any]) -> list[Problem]:
    """What a checkpoint's intake would refuse, asked of a record that arrives whole (an imported bundle's): no
    string holds a credential (meat included), one-line fields hold no line break or hidden character, no typed
    text a control character. A bundle's digests are unkeyed, so a record re-sealed with new ones passes the
    chain check; these are the rules it cannot pass by re-sealing. Meat is the transcript's text verbatim and
    may hold any character (the note escapes it): only the credential scan reads it."""
    typed = {key: value for key, value in record.items() if key != "meat"}
    return check_text_shape(typed) + check_credentials(record)


def check_identity(intent: dict[str, Any]) -> list[Problem]:
    """A work id and a slug given together must name the same work."""
    work_id, slug = intent.get("work_id"), intent.get("slug")
    if work_id and slug and work_id.rsplit(".", 1)[0] != slug:
        return [Problem("work-slug-mismatch", "$.slug", f"work {work_id} is not named {slug!r}")]
    return []


RULES = (check_identity, check_gates, check_next, check_labels, check_transitions, check_text_shape, check_credentials)
