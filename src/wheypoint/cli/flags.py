"""The flag form of an intent: `checkpoint <work> --decision "..." --rationale "..." ...` to JSON.

The form's rules, which `checkpoint --help` prints, are `FLAG_FORM` below.
"""

from __future__ import annotations

import sys

from wheypoint.cli.commands import BY_NAME
from wheypoint.cli.grammar import usage
from wheypoint.model.errors import Refusal
from wheypoint.model.intake import MAX_INTENT_BYTES, parse_json_document
from wheypoint.model.records import Record
from wheypoint.model.shapes import RESERVED_SLUGS, is_slug, is_work_id
from wheypoint.patterns import compiled as regex

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any

# What `checkpoint --help` and `validate --help` print of the flag form (a constant, not this module's docstring:
# `python -OO` drops docstrings).
FLAG_FORM = """\
Binding rule, the one thing to know: a modifier flag binds to the nearest item flag before it, with
only modifiers of that same item in between. Item flags open an item:

    --directive --operator-directive --decision --question --blocker   (entries)
    --resolve ID --supersede ID --withdraw ID                          (transitions)
    --link REF                                                         (links)
    --meat TURN                                                        (verbatim transcript turns)

and each modifier is accepted by these items only (anything else is refused `flag-unbound`):

    --quote (directive)  --operator-quote (operator directive)  --label (any entry)
    --confidence (decision, directive, operator directive: seed 0's tag, certain, speculating or "don't know")
    --rationale (decision, question, blocker, transition, link with --kind)
    --gates --owner --when (question, blocker)   --by (supersede)   --kind --covers (link)
    --type --weight --redact (meat: --redact keeps the turn with each credential replaced by [redacted <rule>])

Any other flag (--orientation, --next, --artifact, --order, --notes, --notes-file, --context,
--remove-link, --unlink, --slug, --base, ...) stands alone and ends the current item. A modifier
given twice to one item is refused `flag-repeated` (except --covers, which repeats).

A `--link` without `--kind` is an artifact link (a file or URL this work produced or uses); with
`--kind` it is an edge to another work or reference. `--covers ID` says which entries either kind is
about. `--remove-link REF` drops an artifact link; `--unlink REF` every edge to REF. A `--gates`
question whose rationale reads `... options: A | B | C; leaning: B` becomes its gate's decision-dossier fork as well.

The transcript is named with --transcript PATH, --session ID, --hook-payload FILE (a hook's JSON:
session_id, transcript_path, cwd), with --harness and --latest to disambiguate. When one is named,
directive quotes are checked against the user's turns and --meat turns are copied from it.
"""

ENTRY_FLAGS = {
    "--directive": "directives",
    "--operator-directive": "operator_directives",
    "--decision": "decisions",
    "--question": "questions",
    "--blocker": "blockers",
}
TRANSITION_FLAGS = {"--resolve": "resolve", "--supersede": "supersede", "--withdraw": "withdraw"}
ITEM_FLAGS = frozenset({*ENTRY_FLAGS, *TRANSITION_FLAGS, "--link", "--meat"})
MODIFIERS: dict[str, tuple[str, ...]] = {
    "--quote": ("directives",),
    "--operator-quote": ("operator_directives",),
    "--label": tuple(ENTRY_FLAGS.values()),
    "--confidence": ("decisions", "directives", "operator_directives"),
    "--rationale": ("decisions", "questions", "blockers", "transition", "link"),
    "--gates": ("questions", "blockers"),
    "--owner": ("questions", "blockers"),
    "--when": ("questions", "blockers"),
    "--by": ("transition",),
    "--type": ("meat",),
    "--weight": ("meat",),
    "--redact": ("meat",),
    "--kind": ("link",),
    "--covers": ("link",),
}
_MODIFIER_KEY = {"--operator-quote": "quote"}
SCALARS = {
    "--orientation", "--next", "--artifact", "--order", "--notes", "--notes-file", "--context", "--remove-link",
    "--unlink", "--slug", "--base", "--compacted",
}  # fmt: skip
# Patterns kept as text: `re` compiles each on its first use, so a command line that has no gate rationale or
# no list of next moves never pays for compiling them.
_DOSSIER = r"(?is)options?\s*:\s*(?P<options>.+?)\s*(?:[;.]\s*)?(?:prior\s+)?leaning\s*:\s*(?P<leaning>.+)$"
_NEXT_ITEM = r'(?s)^(?P<skill>[a-z]+)\s+(?:"(?P<quoted>.*)"|(?P<bare>.+))$'


def _next_item(value: str) -> re.Match[str] | None:
    """`skill "arg"` (or `skill arg`) split into its parts; None for a bare move such as `hold`."""
    return regex(_NEXT_ITEM).match(value) if any(ch.isspace() for ch in value) else None


class Item:
    """An item flag being filled in by the modifiers that follow it."""

    __slots__ = ("data", "flag", "kind", "seen")

    def __init__(self, kind: str, flag: str, data: dict[str, Any]) -> None:
        self.kind = kind  # an entry list name, "transition", "link" or "meat"
        self.flag = flag
        self.data = data
        self.seen: set[str] = set()


class ParsedCommand(Record):
    """A checkpoint or validate command line: the intent and the command's own options."""

    intent: dict[str, Any] | None
    source: str | None  # a path, "-" or None when the intent came from flags
    options: dict[str, Any]
    deprecated: tuple[dict[str, str], ...] = ()  # seed 1's `validate < intent.json`, when that is how it came


def _value(argv: list[str], index: int, flag: str) -> str:
    if index + 1 >= len(argv):
        raise usage(f"{flag} needs a value")
    return argv[index + 1]


def read_input(path: str, what: str) -> bytes:
    """The bytes of a file, or of stdin for `-`, refused with a code when unreadable.

    Only a regular file is read (model/regular.py): a device, a FIFO or a folder named here is refused
    `<what>-unreadable` at once, never waited on or read without end."""
    from wheypoint.model.regular import open_regular

    try:
        if path == "-":
            return sys.stdin.buffer.read(MAX_INTENT_BYTES + 1)
        with open_regular(path) as handle:
            return handle.read(MAX_INTENT_BYTES + 1)
    except OSError as exc:
        raise Refusal(f"{what}-unreadable", f"cannot read {path}: {exc.strerror}") from None


def read_text_file(path: str, what: str) -> str:
    """A UTF-8 text file (or stdin for `-`), refused with a code when unreadable."""
    data = read_input(path, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refusal("invalid-utf8", f"{path} is not UTF-8 (byte {exc.start})") from None


def dossier_from_rationale(text: str) -> tuple[list[str], str] | None:
    """(options, leaning) from a rationale written `... options: A | B; leaning: A`, else None."""
    match = regex(_DOSSIER).search(text) if "eaning" in text.lower() else None
    if not match:
        return None
    options = [o.strip(" ;,.") for o in match.group("options").split("|")]
    options = [o for o in options if o]
    leaning = match.group("leaning").strip().rstrip(".")
    return (options, leaning) if len(options) >= 2 and leaning else None


def _next_from_flags(values: list[str], artifact: str | None, order: str | None) -> dict[str, Any]:
    nxt: dict[str, Any] = {}
    if len(values) == 1 and _next_item(values[0]) is None:
        nxt["move"] = values[0]
    elif values:
        items = []
        for value in values:
            match = _next_item(value)
            if match is None:
                raise Refusal("flag-value", f'--next {value!r}: in a list each move is `skill "arg"`')
            items.append({"skill": match.group("skill"), "arg": match.group("quoted") or match.group("bare")})
        nxt["items"] = items
    if artifact is not None:
        nxt["artifact"] = artifact
    if order is not None:
        nxt["order"] = order
    return nxt


class _FlagParser:
    def __init__(self, command: str) -> None:
        # The command's own options (not the intent's) are those commands.py declares for it.
        declared = [o for o in BY_NAME[command].options if o.flag not in ITEM_FLAGS]
        self.command = command
        self.command_options = {o.flag for o in declared if o.value}
        self.command_switches = {o.flag for o in declared if not o.value}
        self.intent: dict[str, Any] = {}
        self.items: list[Item] = []
        self.current: Item | None = None
        self.next_values: list[str] = []
        self.artifact: str | None = None
        self.order: str | None = None
        self.options: dict[str, Any] = {}
        self.positional: list[str] = []
        self.intent_flags = False

    def feed(self, argv: list[str]) -> None:
        index = 0
        while index < len(argv):
            flag = argv[index]
            name, eq, inline = flag.partition("=")
            if eq and name.startswith("--"):
                flag, argv = name, [*argv[:index], name, inline, *argv[index + 1 :]]
            if flag in ITEM_FLAGS:
                self._open(flag, _value(argv, index, flag))
                index += 2
            elif flag in MODIFIERS:
                index += self._modify(flag, argv, index)
            elif flag in SCALARS:
                self.current = None
                self._scalar(flag, _value(argv, index, flag))
                index += 2
            elif flag in self.command_options:
                self.current = None
                self.options[flag[2:].replace("-", "_")] = _value(argv, index, flag)
                index += 2
            elif flag in self.command_switches:
                self.current = None
                self.options[flag[2:].replace("-", "_")] = True
                index += 1
            elif flag.startswith("-") and flag != "-":
                from wheypoint.cli.grammar import unknown_flag

                raise unknown_flag(BY_NAME[self.command], flag)
            else:
                self.current = None
                self.positional.append(flag)
                index += 1

    def _open(self, flag: str, value: str) -> None:
        self.intent_flags = True
        if flag in ENTRY_FLAGS:
            item = Item(ENTRY_FLAGS[flag], flag, {"text": value})
        elif flag in TRANSITION_FLAGS:
            item = Item("transition", flag, {"entry": value, "action": TRANSITION_FLAGS[flag]})
        elif flag == "--meat":
            item = Item("meat", flag, {"turn": value})
        else:
            item = Item("link", flag, {"ref": value})
        self.items.append(item)
        self.current = item

    def _modify(self, flag: str, argv: list[str], index: int) -> int:
        item = self.current
        allowed = MODIFIERS[flag]
        if item is None or item.kind not in allowed:
            before = f"the item before it is {item.flag}" if item else "no item flag comes before it"
            raise Refusal("flag-unbound", f"{flag} binds to the item flag just before it, and {before}")
        if flag in item.seen and flag != "--covers":
            raise Refusal("flag-repeated", f"{flag} is given twice to {item.flag} {next(iter(item.data.values()))!r}")
        item.seen.add(flag)
        if flag in ("--gates", "--redact"):  # switches
            item.data[flag[2:]] = True
            return 1
        value = _value(argv, index, flag)
        if flag == "--covers":
            item.data.setdefault("covers", []).append(value)
        elif flag == "--weight":
            if value not in ("1", "2", "3"):
                raise Refusal("flag-value", f"--weight is 1, 2 or 3, not {value!r}")
            item.data["weight"] = int(value)
        else:
            item.data[_MODIFIER_KEY.get(flag, flag[2:])] = value
        return 2

    def _scalar(self, flag: str, value: str) -> None:
        self.intent_flags = self.intent_flags or flag not in ("--base", "--compacted")
        if flag == "--next":
            self.next_values.append(value)
        elif flag == "--artifact":
            self.artifact = value
        elif flag == "--order":
            self.order = value
        elif flag == "--notes":
            self.intent["notes"] = value
        elif flag == "--notes-file":
            self.intent["notes"] = read_text_file(value, "notes")
        elif flag == "--context":
            self.intent.setdefault("working_context", []).append(value)
        elif flag == "--remove-link":
            self.intent.setdefault("remove_artifact_links", []).append(value)
        elif flag == "--unlink":
            self.intent.setdefault("remove_links", []).append({"ref": value})
        elif flag == "--base":
            self.options["base"] = value
        elif flag == "--compacted":
            self.options["compacted"] = value
        else:
            self.intent[flag[2:]] = value

    def build(self) -> dict[str, Any]:
        intent = dict(self.intent)
        if self.next_values or self.artifact is not None or self.order is not None:
            intent["next"] = _next_from_flags(self.next_values, self.artifact, self.order)
        gate_number = 0
        for item in self.items:
            if item.kind == "transition":
                intent.setdefault("transitions", []).append(item.data)
            elif item.kind == "meat":
                intent.setdefault("meat", []).append(item.data)
            elif item.kind == "link":
                key = "links" if "kind" in item.data else "artifact_links"
                if key == "artifact_links" and "rationale" in item.data:
                    raise Refusal(
                        "flag-unbound", f"--rationale binds to a --link only with --kind ({item.data['ref']})"
                    )
                intent.setdefault(key, []).append(item.data)
            else:
                intent.setdefault(item.kind, []).append(item.data)
                if item.data.get("gates") and "rationale" in item.data:
                    gate_number += 1
                    self._gate_fork(intent, item.data, gate_number)
        return intent

    @staticmethod
    def _gate_fork(intent: dict[str, Any], entry: dict[str, Any], number: int) -> None:
        parsed = dossier_from_rationale(entry["rationale"])
        if parsed is None:
            return
        options, leaning = parsed
        label = entry.setdefault("label", f"gate-{number}")
        fork = {"fork": entry["text"], "gate": label, "options": [{"option": o} for o in options],
                "prior_leaning": leaning}  # fmt: skip
        intent.setdefault("decision_dossier", []).append(fork)


def parse_intent_command(argv: list[str], command: str = "checkpoint") -> ParsedCommand:
    """Turn `checkpoint`/`validate` arguments into an intent (from JSON or flags) and options."""
    parser = _FlagParser(command)
    parser.feed(argv)
    if len(parser.positional) > 1:
        raise usage(f"one work or intent file at most, got {len(parser.positional)}: {parser.positional}")
    target = parser.positional[0] if parser.positional else None
    # An intent file is `-` (stdin), a name ending in .json, or what --intent names; anything else is a slug or
    # a work id, even where a file or folder of that name exists. Standard input is read when asked for, or
    # (seed 1's form, with a `deprecated` note) when nothing else names an intent and a file or pipe feeds it.
    source: str | None = parser.options.get("intent")
    if source is not None and target is not None:
        raise usage(f"two intents: {target} and --intent {source}; give one")
    if target is not None and (target == "-" or target.lower().endswith(".json")):
        source = target
    deprecated: tuple[dict[str, str], ...] = ()
    waiting = None
    if source is None and target is None and not parser.intent_flags and parser.options.get("hook_payload") != "-":
        waiting = _redirected_stdin()
    if waiting:
        from wheypoint.cli.grammar import deprecation

        # Seed 1's `validate < intent.json`: the intent on standard input, with no `-` to ask for it.
        deprecated = (deprecation(f"{command} < intent.json", f"wheypoint {command} - < intent.json",
                                  "reading the intent from standard input without `-` is seed 1's form"),)  # fmt: skip
        return _finish(parse_json_document(waiting), "-", parser, deprecated)
    if source is not None:
        if parser.intent_flags:
            raise Refusal("intent-ambiguous", "give the intent as JSON or as flags, not both")
        intent: Any = parse_json_document(read_input(source, "intent"))
    else:
        if target is None and not parser.intent_flags:
            raise usage("give an intent: <work> with flags, a .json file, --intent FILE, or - for stdin")
        intent = parser.build()
        if target is not None:
            if is_work_id(target):
                intent["work_id"] = target
            elif is_slug(target) or target in RESERVED_SLUGS:  # a device name is refused by the slug's own rule
                if intent.get("slug", target) != target:
                    raise Refusal("flag-conflict", f"--slug {intent['slug']} differs from the target {target}")
                intent["slug"] = target
            else:
                raise usage(f"{target!r} is neither a work id, a slug nor an intent file")
    return _finish(intent, source, parser, deprecated)


def _finish(intent: Any, source: str | None, parser: _FlagParser, deprecated: tuple[dict[str, str], ...]
            ) -> ParsedCommand:  # fmt: skip
    """The intent with what `--base` and `--compacted` add to it."""
    if "base" in parser.options and isinstance(intent, dict):
        if intent.get("base_revision_id", parser.options["base"]) != parser.options["base"]:
            raise Refusal("flag-conflict", "--base differs from the intent's base_revision_id")
        intent["base_revision_id"] = parser.options["base"]
    if "compacted" in parser.options and isinstance(intent, dict):
        proof = parse_json_document(read_input(parser.options["compacted"], "compaction-proof"), "compaction-proof")
        intent["compaction"] = proof
    return ParsedCommand(intent, source, parser.options, deprecated)


def _redirected_stdin() -> bytes | None:
    """What standard input holds when it is a file redirected in (`< intent.json`) or a pipe already written to.

    Only then is an intent read from it without `-`: a terminal, or a pipe nobody writes to (as a harness may
    leave one), would hold the command forever, so those (and an empty input) still get the usage refusal."""
    import os
    import stat

    try:
        descriptor = sys.stdin.fileno()
        mode = os.fstat(descriptor).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
            return None
        if stat.S_ISFIFO(mode):
            import select

            if not select.select([descriptor], [], [], 0.5)[0]:
                return None
    except (OSError, ValueError, AttributeError):  # no descriptor (MCP's captured stdin), or no select on pipes
        return None
    return read_input("-", "intent") or None


def parse_snapshot_command(argv: list[str]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """`snapshot` arguments: designated meat turns (with the same binding rule) and the options."""
    parser = _FlagParser("snapshot")
    parser.feed(argv)
    if parser.positional:
        raise usage(f"snapshot takes no positional arguments, got {parser.positional}")
    intent = parser.build()
    stray = sorted(set(intent) - {"meat"})
    if stray:
        raise usage(f"snapshot does not take {', '.join('--' + k for k in stray)}")
    options = dict(parser.options)
    if "summary_file" in options:
        options["summary"] = read_text_file(options.pop("summary_file"), "summary")
    return intent.get("meat", []), options
