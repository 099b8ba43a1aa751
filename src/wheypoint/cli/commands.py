"""Every command of the command line, declared once: its summary, arguments and options with one line of help each.

The parser, the top-level help and each command's own `--help` are all generated from `COMMANDS`, so they
cannot disagree. A small table rather than argparse: argparse costs milliseconds of start-up on every call
of these short commands, and its help and errors would not speak the reply contract.
"""

from __future__ import annotations

from wheypoint.model.errors import Refusal
from wheypoint.model.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Option(Record):
    """One option: its flag, what it does, and the name of its value (None for a switch)."""

    flag: str
    help: str
    value: str | None = None
    repeat: bool = False

    @property
    def key(self) -> str:
        """The parameter name the application layer knows it by: `--entry-kind` is `entry_kind`."""
        return self.flag[2:].replace("-", "_")


class Command(Record):
    """One command: what it answers, its positional arguments (name, help), its options, and an example.

    `grammar` is `table` for commands parsed here, `intent` for those whose item flags bind to each other
    (checkpoint, validate, snapshot: see flags.py), or `hook` for `hook`, which parses its own arguments so
    that even a malformed hook line answers the harness and exits 0; all declare their options here.
    """

    name: str
    summary: str
    positionals: tuple[tuple[str, str], ...]
    options: tuple[Option, ...]
    example: str
    grammar: str = "table"
    text_form: str | None = None  # the readable form in textout.py, when there is one
    optional_positionals: int = 0  # how many of the last positionals may be left out (they are then None)
    # Seed 1's flag spellings of a positional (`show --work-id X`): accepted, and the reply says `deprecated`.
    aliases: tuple[tuple[str, str], ...] = ()
    # The flags that write an intent (flags.py binds them); only help lists them, not the MCP tools.
    intent_flags: tuple[Option, ...] = ()


PROJECT = Option("--project", "the project key (default: from the git remote, else the checkout's folder)", "KEY")
FORMAT = Option("--format", "json (the default off a terminal) or text (the default on one)", "json|text")
NOTE_DIR = Option("--note-dir", "the folder of the note (default: <checkout>/.cheese/notes)", "DIR")
# The filters `list` selects works by, and `export` too (values of one filter OR, different filters AND).
FILTERS = (
    Option("--grep", "full-text search (repeat: any of them)", "TEXT", repeat=True),
    Option("--status", "ok, gated, halt, or an exact status line", "S", repeat=True),
    Option("--next", "the next move", "MOVE", repeat=True),
    Option("--entry-kind", "works with an entry of this kind", "KIND", repeat=True),
    Option("--entry-state", "... in this state", "STATE", repeat=True),
    Option("--owner", "... owned by this person", "WHO", repeat=True),
    Option(
        "--author",
        "works with a revision written by this person (git user.email, else the OS user)",
        "WHO",
        repeat=True,
    ),
    Option("--gated", "only works waiting on a person"),
    Option("--no-gated", "only works not waiting"),
    Option("--edge-kind", "works with an edge of this kind", "KIND", repeat=True),
    Option("--linked-to", "works with an edge or link to this reference", "REF", repeat=True),
    Option("--forked-from", "works forked from this work", "WORK", repeat=True),
    Option("--since", "updated at or after this ISO 8601 time", "TIME"),
)
WORKSPACE_ROOT = Option("--workspace-root", "resolve as if run from this folder", "DIR")
TRANSCRIPT = (
    Option("--transcript", "the session transcript file to read", "PATH"),
    Option("--session", "the session id to find among the harnesses' sessions", "ID"),
    Option("--hook-payload", "a hook's JSON (session_id, transcript_path, cwd), from a file or - for stdin", "FILE"),
    Option("--harness", "claude-code, codex, opencode or gemini (default: detected)", "NAME"),
    Option("--latest", "when several sessions fit, take the most recent one"),
)
WRITE_OPTIONS = (
    Option("--intent", "read the intent from this JSON file (- for stdin) instead of flags", "FILE"),
    PROJECT, NOTE_DIR, Option("--no-note", "record only; write no note"), FORMAT,
    Option("--json", "the same as --format json"), Option("--text", "the same as --format text"), *TRANSCRIPT,
)  # fmt: skip

# The flag form of an intent, every flag flags.py reads (a test checks the two agree): item flags, then the
# modifiers that bind to the item before them, then the flags that stand alone.
INTENT_FLAGS = (
    Option("--directive", "an instruction of the user's (then --quote: their exact words)", "TEXT"),
    Option("--operator-directive", "an operator's instruction (then --operator-quote)", "TEXT"),
    Option("--decision", "a decision taken (then --rationale)", "TEXT"),
    Option("--question", "an open question (then --gates, --owner, --when, --rationale)", "TEXT"),
    Option("--blocker", "what stops the work (then --gates, --owner, --when, --rationale)", "TEXT"),
    Option("--resolve", "settle an active entry (then --rationale)", "ID"),
    Option("--supersede", "replace an active entry (then --by ID, --rationale)", "ID"),
    Option("--withdraw", "take back an active entry (then --rationale)", "ID"),
    Option("--link", "an artifact link; with --kind an edge to a work or reference", "REF"),
    Option("--meat", "a transcript turn copied verbatim (then --type, --weight, --redact)", "TURN"),
    Option("--quote", "modifier of --directive: the user's exact words", "TEXT"),
    Option("--operator-quote", "modifier of --operator-directive: the operator's exact words", "TEXT"),
    Option("--label", "modifier of an entry: a short name to refer to it by", "NAME"),
    Option("--confidence", "modifier of --decision/--directive: certain, speculating or \"don't know\" (seed 0's tag)",
           "TAG"),
    Option("--rationale", "modifier: why (a decision, question, blocker, transition or edge)", "TEXT"),
    Option("--gates", "modifier of --question/--blocker: the work waits on a person"),
    Option("--owner", "modifier of --question/--blocker: who settles it", "WHO"),
    Option("--when", "modifier of --question/--blocker: when it must be settled", "TEXT"),
    Option("--by", "modifier of --supersede: the entry that replaces it", "ID"),
    Option("--type", "modifier of --meat: one of seed 3's types (constraint, rejected, pivot, ...)", "T"),
    Option("--weight", "modifier of --meat: 1, 2 or 3", "N"),
    Option("--redact", "modifier of --meat: keep the turn with each credential replaced"),
    Option("--kind", "modifier of --link: the edge's kind (relates_to, blocked_by, ...)", "KIND"),
    Option("--covers", "modifier of --link: an entry it is about (repeat)", "ID", repeat=True),
    Option("--orientation", "the one-line orientation a cold reader starts from", "TEXT"),
    Option("--next", 'the next move (hold, cook, ...; repeat for a list of `skill "arg"`)', "MOVE", repeat=True),
    Option("--artifact", "the artifact of the next move", "PATH"),
    Option("--order", "a list of next moves: parallel or sequential", "parallel|sequential"),
    Option("--notes", "free notes", "TEXT"),
    Option("--notes-file", "read the notes from a file (- for stdin)", "FILE"),
    Option("--context", "a working-context line, e.g. retry.py:2 (repeat)", "REF", repeat=True),
    Option("--remove-link", "drop an artifact link", "REF"),
    Option("--unlink", "drop every edge to this reference", "REF"),
    Option("--slug", "the work's slug (when the target is a work id)", "SLUG"),
    Option("--base", "the work's head revision this write builds on (needed once the work exists)", "REV"),
    Option("--compacted", "the compaction proof's JSON file, after a compaction", "FILE"),
)

COMMANDS: tuple[Command, ...] = (
    Command("checkpoint", "record a checkpoint", (("target", "a slug or work id with flags, an intent.json, or -"),),
            WRITE_OPTIONS, 'wheypoint checkpoint retry-backoff --orientation "..." --next hold --notes "..."',
            grammar="intent", text_form="checkpoint", intent_flags=INTENT_FLAGS),
    Command("validate", "check an intent without writing: every problem at once",
            (("target", "a slug or work id with flags, an intent.json, or -"),), WRITE_OPTIONS,
            "wheypoint validate intent.json", grammar="intent", text_form="validate", intent_flags=INTENT_FLAGS),
    Command("show", "the head record (or an earlier one) and its note's state", (("work", "a slug or work id"),),
            (Option("--revision", "an earlier revision: its id, its number (2) or its label (r2)", "REV"), NOTE_DIR,
             Option("--write-note", "re-render a stale or missing note"), PROJECT, FORMAT),
            "wheypoint show retry-backoff", text_form="show", aliases=(("--work-id", "work"),)),
    Command("log", "the revision chain: what each revision added and moved", (("work", "a slug or work id"),),
            (PROJECT, FORMAT), "wheypoint log retry-backoff", text_form="log", aliases=(("--work-id", "work"),)),
    Command("turns", "the user's turns of a session, verbatim", (),
            (*TRANSCRIPT, Option("--all", "every kind of turn, the agent's included"),
             Option("--kind", "only turns of this kind (repeat for several)", "KIND", repeat=True),
             Option("--since", "only turns after this turn id or ISO 8601 time", "TURN|TIME"),
             Option("--limit", "at most this many turns", "N"), FORMAT),
            "wheypoint turns --session 5f0c... --limit 20", text_form="turns"),
    Command("harvest", "the agent's <!-- ckpt --> trailers, each with its turn and parse status", (),
            (*TRANSCRIPT, FORMAT), "wheypoint harvest --latest", text_form="harvest"),
    Command("snapshot", "write seed 3's two-layer CHECKPOINT-<stream>-llm.md", (),
            (Option("--stream", "the stream name in the file name", "NAME"),
             Option("--summary", "the summary layer's text", "TEXT"),
             Option("--summary-file", "read the summary from a file (- for stdin)", "FILE"),
             Option("--out", "the folder to write to (default: the checkout's top)", "DIR"),
             Option("--meat", "a turn id to copy verbatim (then --type T, optionally --weight W)", "TURN"),
             *TRANSCRIPT, FORMAT),
            "wheypoint snapshot --stream auth --summary '...' --meat u-12 --type constraint --weight 3",
            grammar="intent", text_form="snapshot",
            intent_flags=tuple(o for o in INTENT_FLAGS if o.flag in ("--type", "--weight", "--redact"))),
    Command("resolve", "the one handoff a reference means, and whether to trust it",
            (("ref", "a note path, work id, slug, slug prefix or part of a slug"),),
            (PROJECT, WORKSPACE_ROOT, Option("--page", "if ambiguous, this page of its candidates (50 each)", "N"),
             FORMAT),
            "wheypoint resolve retry", text_form="resolution", aliases=(("--ref", "ref"),)),
    Command("list", "works by status, next move, entries, owners, edges, links and full text", (),
            (Option("--scope", "project (default in a checkout) or machine", "project|machine"),
             Option("--project", "only this project (repeat for several)", "KEY", repeat=True), *FILTERS,
             Option("--limit", "at most this many works (default 50, at most 1000)", "N"), FORMAT),
            "wheypoint list --gated --owner 'payments lead'", text_form="listing"),
    Command("lint", "check a note, generated or hand-written (exit 1 when it is not clean)",
            (("path", "the note's path"),),
            (PROJECT, FORMAT, Option("--exit-zero", "exit 0 even when the note has findings that make it unclean")),
            "wheypoint lint .cheese/notes/retry-backoff.md", text_form="lint"),
    Command("handoff", "the resume seam for other tools",
            (("action", "render (the preamble, or a packet with --budget), parse (any note's preamble as JSON) or "
                        "dispatch (what to run next)"), ("ref", "a note path, work id or slug")),
            (PROJECT, WORKSPACE_ROOT, Option("--budget", "render: a resume packet of at most N characters", "N"),
             FORMAT),
            "wheypoint handoff render retry-backoff --budget 4000"),
    Command("adopt", "make a hand-written legacy note a store record", (("path", "the legacy note's path"),),
            (PROJECT, NOTE_DIR, Option("--no-note", "record only; write no note"), FORMAT),
            "wheypoint adopt .cheese/notes/old-plan.md", text_form="checkpoint"),
    Command("fork", "split entries of a work into a new child work (both revisions in one transaction)",
            (("parent", "the work to fork: a slug or work id"), ("child", "the new work's slug")),
            (Option("--orientation", "the child's one-line orientation", "TEXT"),
             Option("--next", "the child's next move (default hold)", "MOVE"),
             Option("--artifact", "the artifact of the child's next move", "PATH"),
             Option("--move", "an active entry that leaves the parent for the child (repeat)", "ID", repeat=True),
             Option("--copy", "an active directive or decision kept in both (repeat)", "ID", repeat=True),
             Option("--dossier", "copy the decision dossier of a gate that stays (repeat)", "ID", repeat=True),
             Option("--base", "the parent's head revision this fork is taken from (checked if given)", "REV"),
             PROJECT, NOTE_DIR, Option("--no-note", "record only; write no notes"), FORMAT),
            'wheypoint fork retry-backoff retry-jitter --orientation "Jitter is split off." --move <question-id>'),
    Command("split", "make two children of a work, every active entry given to one side or both (one transaction)",
            (("work", "the work to split: a slug or work id"), ("first", "the first child's slug"),
             ("second", "the second child's slug")),
            (Option("--first-orientation", "the first child's orientation", "TEXT"),
             Option("--second-orientation", "the second child's orientation", "TEXT"),
             Option("--to-first", "an active entry that goes to the first child (repeat)", "ID", repeat=True),
             Option("--to-second", "an active entry that goes to the second child (repeat)", "ID", repeat=True),
             Option("--both", "a directive or decision copied into both (repeat)", "ID", repeat=True),
             Option("--base", "the work's head revision (checked if given)", "REV"),
             PROJECT, NOTE_DIR, Option("--no-note", "record only; write no notes"), FORMAT),
            "wheypoint split <work> retry-api retry-ui --first-orientation T --second-orientation T --to-first <id>"),
    Command("join", "merge two works into a new one; contradictions become its gates (one transaction)",
            (("first", "a work to join: a slug or work id"), ("second", "the other work"),
             ("slug", "the joined work's slug")),
            (Option("--orientation", "the joined work's one-line orientation", "TEXT"),
             Option("--next", "the joined work's next move (default hold)", "MOVE"),
             Option("--artifact", "the artifact of its next move", "PATH"),
             PROJECT, NOTE_DIR, Option("--no-note", "record only; write no notes"), FORMAT),
            'wheypoint join <first-work> <second-work> retry-all --orientation "Both threads in one."'),
    Command("link", "add an edge from a work to another work or any reference (a checkpoint of one edge)",
            (("work", "the work the edge starts from: a slug or work id"),
             ("ref", "the other work (slug, work id or wheypoint:<project>/<work>) or any reference")),
            (Option("--kind", "relates_to, implements, informs, checkpoints, blocked_by, supersedes or superseded_by",
                    "KIND"),
             Option("--covers", "an entry the edge is about (repeat)", "ID", repeat=True),
             Option("--rationale", "why the two are linked", "TEXT"),
             Option("--base", "the work's head revision this write builds on", "REV"),
             PROJECT, NOTE_DIR, Option("--no-note", "record only; write no note"), FORMAT),
            "wheypoint link retry-jitter payments-gateway --kind blocked_by --base <revision_id>",
            text_form="checkpoint"),
    Command("unlink", "remove a work's edges to a reference (a checkpoint)",
            (("work", "the work the edge starts from: a slug or work id"), ("ref", "the reference, as linked")),
            (Option("--kind", "only the edge of this kind", "KIND"),
             Option("--base", "the work's head revision this write builds on", "REV"),
             PROJECT, NOTE_DIR, Option("--no-note", "record only; write no note"), FORMAT),
            "wheypoint unlink retry-jitter payments-gateway --base <revision_id>", text_form="checkpoint"),
    Command("export", "works' whole revision chains as one canonical JSON bundle",
            (("work", "a slug or work id (or --all)"),),
            (Option("--all", "every work of the project (or, with filters below, those they select)"), *FILTERS,
             Option("--out", "the bundle's path (default: .cheese/bundles/<slug>.bundle.json in a checkout, "
                    "git-ignored; else <slug>.bundle.json here)", "FILE"),
             Option("--include-operator", "keep operator directives (left out by default)"),
             Option("--include-local", "keep references to this machine's files (left out by default)"),
             PROJECT, FORMAT),
            "wheypoint export retry-backoff --out retry-backoff.bundle.json", optional_positionals=1),
    Command("import", "a bundle's works into this store, verified, all or nothing",
            (("bundle", "the bundle's path"),),
            (Option("--as", "import the bundle's one work under this slug", "SLUG"), NOTE_DIR,
             Option("--no-note", "record only; write no notes"), FORMAT),
            "wheypoint import retry-backoff.bundle.json"),
    Command("diff", "what changed between two revisions of a work (default: the head and its parent)",
            (("work", "a slug or work id"), ("from", "the earlier revision: id, number or rN"),
             ("to", "the later revision (default: the head)")),
            (PROJECT, FORMAT), "wheypoint diff retry-backoff r1", text_form="diff", optional_positionals=2),
    Command("graph", "the works around a work and their edges, as Mermaid, DOT or JSON",
            (("work", "a slug or work id"),),
            (Option("--depth", "how many edges away to go (default 1, at most 5)", "N"),
             Option("--format", "mermaid (the default), dot or json", "mermaid|dot|json"), PROJECT),
            "wheypoint graph retry-backoff --depth 2"),
    Command("schema", "a contract as JSON Schema (draft 2020-12)",
            (("name", "checkpoint-intent, wheypoint-record or wheypoint-revision"),), (),
            "wheypoint schema checkpoint-intent"),
    Command("demo", "two real checkpoints in a scratch git repository, then their note", (),
            (Option("--keep", "keep the scratch folder"),), "wheypoint demo"),
    Command("hook", "run as a harness's hook: the hook's JSON on stdin, its answer on stdout, always exit 0",
            (("event", "the harness's event: PreCompact (Gemini: PreCompress), SessionStart, Stop, UserPromptSubmit"),),
            (Option("--harness", "claude-code, codex, gemini or opencode", "NAME"),
             Option("--budget", "SessionStart: the resume packet's size in characters (default 10000)", "N")),
            "wheypoint hook PreCompact --harness claude-code", grammar="hook"),
    Command("hooks", "install, remove or check wheypoint's hooks in a harness's settings",
            (("action", "install, uninstall or status"),),
            (Option("--harness", "claude-code, codex or gemini (opencode: a plugin file)", "NAME"),
             Option("--scope", "user (the default: your home's settings) or project (this checkout's)",
                    "user|project"),
             Option("--command", "what the hooks run (default: this runtime, by its absolute path)", "CMD"),
             FORMAT),
            "wheypoint hooks install --harness claude-code"),
    Command("doctor", "is wheypoint working here: hooks, their trust and log, MCP and skills, the store, the notes",
            (), (Option("--fix", "do the safe repairs: render stale notes again, remove writers' temporaries"),
                 PROJECT, FORMAT),
            "wheypoint doctor --format text", text_form="doctor"),
    Command("store", "copy works from one store into another (SQLite file or PostgreSQL), verified, idempotent",
            (("action", "copy"),),
            (Option("--from", "the store to read: a file path, sqlite:///path or postgresql://...", "STORE"),
             Option("--to", "the store to write (made if it does not exist)", "STORE"),
             Option("--project", "only this project (repeat for several; default: every project)", "KEY",
                    repeat=True), *FILTERS, FORMAT),
            "wheypoint store copy --from ~/.local/share/wheypoint/store.sqlite3 --to postgresql://<team-host>/wheypoint"),
    Command("mcp", "serve the commands as MCP tools over stdio (newline-delimited JSON-RPC)", (), (),
            "wheypoint mcp"),
    Command("serve", "a local web view of the store where a person answers gates (until interrupted)", (),
            (Option("--port", "the port to listen on (default 0: any free port)", "N"),
             Option("--host", "the address to bind (default 127.0.0.1; another one is warned about)", "HOST"),
             Option("--store", "the store to serve (as the global --store)", "STORE"),
             Option("--open", "open the URL in the default browser")),
            "wheypoint serve --port 8765"),
)  # fmt: skip

BY_NAME = {command.name: command for command in COMMANDS}


def usage(message: str, parameter: str | None = None) -> Refusal:
    """A malformed command line (exit 2)."""
    return Refusal("usage", message, usage=True, parameter=parameter)


def unknown_command(name: str) -> Refusal:
    import difflib  # only a miss needs it

    close = difflib.get_close_matches(name, list(BY_NAME), n=1)
    hint = f"; did you mean {close[0]}?" if close else ""
    return usage(f"unknown command {name!r}{hint} Commands: {', '.join(BY_NAME)}")


def parse(command: Command, argv: list[str]) -> dict[str, Any]:
    """The arguments of a `table` command by parameter name; refused `usage` when anything does not fit."""
    by_flag = {option.flag: option for option in command.options}
    args: dict[str, Any] = {o.key: [] if o.repeat else None if o.value else False for o in command.options}
    positional: list[str] = []
    aliased: dict[str, str] = {}
    args["deprecated"] = deprecated = []
    index = 0
    while index < len(argv):
        token = argv[index]
        name, eq, inline = token.partition("=")
        option = by_flag.get(name)
        alias = dict(command.aliases).get(name)
        if alias is not None:
            if not eq and index + 1 >= len(argv):
                raise usage(f"{name} needs a value")
            aliased[alias] = inline if eq else argv[index + 1]
            current = f"wheypoint {command.name} <{alias}>"
            deprecated.append(deprecation(f"{command.name} {name}", current, f"{name} is seed 1's spelling"))
            index += 1 if eq else 2
        elif option is not None and option.value is not None:
            if not eq and index + 1 >= len(argv):
                raise usage(f"{name} needs a value ({option.value})")
            value = inline if eq else argv[index + 1]
            if option.repeat:
                args[option.key].append(value)
            else:
                args[option.key] = value
            index += 1 if eq else 2
        elif option is not None and not eq:
            args[option.key] = True
            index += 1
        elif token.startswith("-") and token != "-":
            raise unknown_flag(command, name)
        else:
            positional.append(token)
            index += 1
    names = [name for name, _ in command.positionals]
    if aliased:  # a positional given by its old flag takes its place among the others
        rest = iter(positional)
        positional = [aliased[n] if n in aliased else next(rest, "") for n in names]
        positional = [value for value in positional if value] + list(rest)
    if not len(names) - command.optional_positionals <= len(positional) <= len(names):
        raise usage(f"{command.name} takes {_arguments(command) or 'no arguments'}; see "
                    f"wheypoint {command.name} --help")  # fmt: skip
    args.update(zip(names, positional + [None] * (len(names) - len(positional)), strict=True))
    if FORMAT in command.options and args.get("format") not in (None, "json", "text"):
        raise usage("takes json or text", parameter="format")
    return args


def deprecation(used: str, instead: str, why: str) -> dict[str, str]:
    """A reply's note that an old spelling was accepted, and the current form to use instead."""
    return {"used": used, "instead": instead, "message": f"{why}; it still works, but use `{instead}`"}


def whole_number(value: str, parameter: str, expectation: str, least: int = 1) -> int:
    """A count from the command line (`shapes.count_of`), at least `least`."""
    from wheypoint.model.shapes import count_of

    count = count_of(value)
    if count is None or count < least:
        raise usage(expectation, parameter=parameter)
    return count


def refuse_undecodable(argv: list[str]) -> None:
    """Arguments are text: bytes the locale cannot decode arrive as lone surrogates, which no reply could print."""
    for number, arg in enumerate(argv, start=1):
        if "\x00" in arg:  # only an in-process caller (MCP) can pass one: no process's arguments can hold it
            raise Refusal("usage", f"argument {number} holds a NUL character, which no argument can carry", usage=True)
        if arg.isascii():
            continue
        from wheypoint.model.canonical import surrogate_at  # only for an argument that is not plain ASCII

        at = surrogate_at(arg)
        if at is not None:
            char = ord(arg[at])
            what = f"byte 0x{char - 0xDC00:02x}" if 0xDC80 <= char <= 0xDCFF else f"a lone surrogate U+{char:04X}"
            raise Refusal("invalid-utf8", f"argument {number} is not UTF-8 text ({what} at character {at + 1})",
                          usage=True)  # fmt: skip


def unknown_flag(command: Command, flag: str) -> Refusal:
    import difflib

    close = difflib.get_close_matches(flag, [o.flag for o in command.options], n=1)
    hint = f"; did you mean {close[0]}?" if close else ""
    return usage(f"{command.name}: unknown flag {flag}{hint}")


def spell(command: Command | None, parameter: str) -> str:
    """How the command line writes a parameter: `<ref>` for a positional, else its flag."""
    if command is not None and any(name == parameter for name, _ in command.positionals):
        return f"<{parameter}>"
    return "--" + parameter.replace("_", "-")


def _option_line(option: Option) -> str:
    head = f"{option.flag} {option.value}" if option.value else option.flag
    return f"  {head:<30} {option.help}"


def _arguments(command: Command) -> str:
    """The positionals as usage shows them: `<a> <b>`, the optional ones in brackets."""
    required = len(command.positionals) - command.optional_positionals
    return " ".join(f"<{name}>" if n < required else f"[<{name}>]" for n, (name, _) in enumerate(command.positionals))


def command_help(command: Command) -> str:
    """A command's own usage: its arguments and every option with one line, and an example."""
    lines = [f"usage: wheypoint {command.name} {_arguments(command)} [options]".replace("  ", " "), "",
             command.summary + "."]  # fmt: skip
    if command.positionals:
        lines += ["", "arguments:", *(f"  <{name}>{' ' * max(1, 29 - len(name))}{text}"
                                      for name, text in command.positionals)]  # fmt: skip
    if command.options:
        lines += ["", "options:", *(_option_line(option) for option in command.options)]
    if command.intent_flags:
        lines += ["", "the intent as flags (each modifier binds to the item flag just before it):",
                  *(_option_line(option) for option in command.intent_flags)]  # fmt: skip
    lines += ["", "example:", f"  {command.example}"]
    return "\n".join(lines)


def overview() -> str:
    """The top-level help: one line per command."""
    lines = ["usage: wheypoint [--store STORE] <command> [arguments]", ""]
    lines += [f"  {command.name:<11} {command.summary}" for command in COMMANDS]
    lines += [
        "",
        "`wheypoint <command> --help` shows a command's arguments and options; `wheypoint --version` the version.",
        "Replies are one JSON document on stdout; exit 0 answered, 1 refused, 2 usage.",
        "--store (or WHEYPOINT_STORE) names the store: a SQLite file path, sqlite:///path, or postgresql://... for",
        "a team's shared store (pip install 'wheypoint[postgres]'); the default is the per-user SQLite file.",
    ]
    return "\n".join(lines)
