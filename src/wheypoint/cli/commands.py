"""Every command of the command line, declared once: its summary, arguments and options with one line of help each.

The parser (grammar.py), the top-level help and each command's own `--help` are all driven by `COMMANDS`, so
they cannot disagree. A small table rather than argparse: argparse costs milliseconds of start-up on every call
of these short commands, and its help and errors would not speak the reply contract.
"""

from __future__ import annotations

from wheypoint.cli.grammar import FORMAT, Command, Option, arguments, usage
from wheypoint.cli.hookline import HOOK
from wheypoint.model.errors import Refusal

PROJECT = Option("--project", "the project key (default: from the git remote, else the checkout's folder)", "KEY")
NOTE_DIR = Option("--note-dir", "the folder of the note (default: <checkout>/.cheese/notes)", "DIR")
# The filters `list` selects works by, and `export` too (values of one filter OR, different filters AND).
FILTERS = (
    Option("--grep", "full-text search, up to 1,000 characters (repeat: any of them)", "TEXT", repeat=True),
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
    HOOK,
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


def unknown_command(name: str) -> Refusal:
    import difflib  # only a miss needs it

    close = difflib.get_close_matches(name, list(BY_NAME), n=1)
    hint = f"; did you mean {close[0]}?" if close else ""
    return usage(f"unknown command {name!r}{hint} Commands: {', '.join(BY_NAME)}")


def _option_line(option: Option) -> str:
    head = f"{option.flag} {option.value}" if option.value else option.flag
    return f"  {head:<30} {option.help}"


def command_help(command: Command) -> str:
    """A command's own usage: its arguments and every option with one line, and an example."""
    lines = [f"usage: wheypoint {command.name} {arguments(command)} [options]".replace("  ", " "), "",
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
