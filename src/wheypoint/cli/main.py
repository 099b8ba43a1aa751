"""The command line's entry point: parse with the command table, run the command, print one reply.

Exit codes: 0 answered, 1 refused, 2 usage. Every reply is `{"ok": true, "command": ...}` or
`{"ok": false, "error": {"code", "message", "parameter"?, "problems"?}}` on stdout; a refusal never changes
the store. This is the only place that turns a refusal into an exit code and a parameter into a flag.
"""

from __future__ import annotations

import os
import sys

from wheypoint import jsontext
from wheypoint.cli.commands import BY_NAME, COMMANDS, command_help, overview, unknown_command
from wheypoint.cli.grammar import Command, asks_help, parse, refuse_undecodable, spell, usage, whole_number
from wheypoint.model.errors import Refusal
from wheypoint.model.replies import document_text, internal_error, scrub

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from wheypoint.app.context import TranscriptChoice


def print_document(document: Any, indent: int | None = None) -> None:
    """Print one JSON document, in the form stdout can carry whatever text it holds (see model/replies.py)."""
    print(document_text(document, indent, getattr(sys.stdout, "encoding", None)))


def _wants_text(fmt: str | None) -> bool:
    return fmt == "text" or (fmt is None and sys.stdout.isatty())


def _format_asked(argv: list[str]) -> str | None:
    """The reply format a command line asks for (`--format X`, `--format=X`, `--text`, `--json`), else None."""
    asked = None
    for index, arg in enumerate(argv):
        if arg == "--":
            break
        if arg in ("--text", "--json"):
            asked = arg[2:]
        elif arg == "--format" and index + 1 < len(argv):
            asked = argv[index + 1]
        elif arg.startswith("--format="):
            asked = arg.partition("=")[2]
    return asked


# Seed 1's spellings this run accepted (`show --work-id X`, `validate < intent.json`): each reply names them.
_DEPRECATED: list[dict[str, str]] = []


def _emit(command: Command, reply: dict[str, Any], fmt: str | None, name: str | None = None) -> int:
    """Print a reply: JSON, or on a terminal (or --format text) the command's readable form."""
    full = {"ok": True, "command": name or command.name, **reply}
    if _DEPRECATED:
        full["deprecated"] = list(_DEPRECATED)
    if command.text_form is not None and _wants_text(fmt):
        from wheypoint.cli import textout

        print(getattr(textout, command.text_form)(full))
        for note in _DEPRECATED:
            print(f"wheypoint: deprecated: {note['message']}", file=sys.stderr)
        if reply.get("found_elsewhere"):  # the work came from another project (app/lookup.py): said, never hidden
            print(f"wheypoint: {reply['found_elsewhere']['message']}", file=sys.stderr)
    else:
        print_document(full, indent=2 if sys.stdout.isatty() else None)
    return 0


def _context(project: str | None = None) -> Any:
    from wheypoint.app.context import Context

    return Context(project=project)


def transcript_choice(options: dict[str, Any]) -> TranscriptChoice:
    """The transcript a command names, from its options (a hook payload is read here)."""
    from wheypoint.app.context import TranscriptChoice

    hook = None
    if options.get("hook_payload"):
        from wheypoint.cli.flags import read_input
        from wheypoint.model.intake import parse_json_document

        hook = parse_json_document(read_input(options["hook_payload"], "hook-payload"), "hook-payload")
        if not isinstance(hook, dict):
            raise Refusal(
                "invalid-hook-payload", "a hook payload is a JSON object with session_id, transcript_path, cwd"
            )
    return TranscriptChoice(options.get("transcript"), options.get("session"), options.get("harness"),
                            bool(options.get("latest")), hook)  # fmt: skip


def _show(command: Command, args: dict[str, Any]) -> int:
    from wheypoint.app.context import NoteOptions
    from wheypoint.app.show import show

    notes = NoteOptions(args["note_dir"])
    reply = show(_context(args["project"]), args["work"], args["revision"], notes, args["write_note"])
    return _emit(command, reply, args["format"])


def _log(command: Command, args: dict[str, Any]) -> int:
    from wheypoint.app.show import log

    return _emit(command, log(_context(args["project"]), args["work"]), args["format"])


def _resolve(command: Command, args: dict[str, Any]) -> int:
    from wheypoint.app.resolve import resolve

    page = whole_number(args["page"] or "1", "page", "takes a page number from 1")
    reply = resolve(_context(args["project"]), args["ref"], args["workspace_root"], page)
    return _emit(command, reply, args["format"])


def _list(command: Command, args: dict[str, Any]) -> int:
    from wheypoint.app.listing import list_works

    return _emit(command, list_works(_context(), _gated(args)), args["format"])


def _gated(args: dict[str, Any]) -> dict[str, Any]:
    """`--gated` / `--no-gated` as the one three-way filter (True, False, or None: either)."""
    if args["gated"] and args["no_gated"]:
        raise usage("--gated and --no-gated exclude each other")
    args["gated"] = True if args["gated"] else False if args["no_gated"] else None
    return args


def _lint(command: Command, args: dict[str, Any]) -> int:
    from wheypoint.app.notes import lint_path

    reply = lint_path(_context(args["project"]), args["path"])
    _emit(command, reply, args["format"])
    # Like any linter in a CI step: a note that is not clean fails the step, unless asked not to. The reply is
    # still an answer (`ok: true`); the exit status alone carries the verdict.
    return 0 if reply["clean"] or args["exit_zero"] else 1


def _handoff(command: Command, args: dict[str, Any]) -> int:
    from wheypoint.app import notes

    ctx, action, ref, root = _context(args["project"]), args["action"], args["ref"], args["workspace_root"]
    if action == "parse":
        reply = notes.handoff_parse(ctx, ref, root)
    elif action == "render":
        reply = notes.handoff_render(ctx, ref, root, args["budget"])
    elif action == "dispatch":
        reply = notes.handoff_dispatch(ctx, ref, root)
    else:
        raise usage(f"takes render, parse or dispatch, not {action!r}", parameter="action")
    return _emit(command, reply, args["format"], f"handoff {action}")


def _adopt(command: Command, args: dict[str, Any]) -> int:
    from wheypoint.app.adopt import adopt
    from wheypoint.app.context import NoteOptions

    notes = NoteOptions(args["note_dir"], args["no_note"])
    return _emit(command, adopt(_context(args["project"]), args["path"], notes), args["format"])


def _fork(command: Command, args: dict[str, Any]) -> int:
    from wheypoint.app.context import NoteOptions
    from wheypoint.app.fork import fork_work, request_of

    if not args["orientation"]:
        raise Refusal("usage", "takes the child's orientation", usage=True, parameter="orientation")
    request = request_of(args["child"], args["orientation"], args["next"], args["artifact"], args["move"],
                         args["copy"], args["dossier"])  # fmt: skip
    notes = NoteOptions(args["note_dir"], args["no_note"])
    reply = fork_work(_context(args["project"]), args["parent"], request, args["base"], notes)
    return _emit(command, reply, args["format"])


def _link(command: Command, args: dict[str, Any]) -> int:
    from wheypoint.app.context import NoteOptions
    from wheypoint.app.links import edge_intent, write_edge

    ctx = _context(args["project"])
    remove = command.name == "unlink"
    intent = edge_intent(ctx, args["work"], args["ref"], kind=args["kind"], covers=args.get("covers") or [],
                         rationale=args.get("rationale"), base=args["base"], remove=remove)  # fmt: skip
    reply = write_edge(ctx, intent, NoteOptions(args["note_dir"], args["no_note"]))
    return _emit(command, reply, args["format"])


def _export(command: Command, args: dict[str, Any]) -> int:
    from wheypoint.app.bundle import export_bundle

    reply = export_bundle(_context(args["project"]), args["work"], args["out"], all_works=args["all"],
                          include_operator=args["include_operator"], include_local=args["include_local"],
                          filters=_gated(args))  # fmt: skip
    return _emit(command, reply, args["format"])


def _import(command: Command, args: dict[str, Any]) -> int:
    from wheypoint.app.bundle import import_bundle
    from wheypoint.app.context import NoteOptions

    reply = import_bundle(_context(), args["bundle"], args["as"], NoteOptions(args["note_dir"], args["no_note"]))
    return _emit(command, reply, args["format"])


def _diff(command: Command, args: dict[str, Any]) -> int:
    from wheypoint.app.graph import diff_revisions

    reply = diff_revisions(_context(args["project"]), args["work"], args["from"], args["to"])
    return _emit(command, reply, args["format"])


def _graph(command: Command, args: dict[str, Any]) -> int:
    from wheypoint.app.graph import graph

    depth = whole_number(args["depth"] or "1", "depth", "takes a whole number", least=0)
    fmt = args["format"] or "mermaid"
    reply = graph(_context(args["project"]), args["work"], depth, fmt)
    if fmt != "json" and sys.stdout.isatty():  # a person at a terminal gets the picture itself
        print(reply[fmt], end="")
        return 0
    return _emit(command, reply, "json")


def _split(command: Command, args: dict[str, Any]) -> int:
    from wheypoint.app.context import NoteOptions
    from wheypoint.app.fork import request_of, split_work
    from wheypoint.model.fork import Split

    sides = []
    for side in ("first", "second"):
        if not args[f"{side}_orientation"]:
            raise Refusal("usage", f"takes the {side} child's orientation", usage=True,
                          parameter=f"{side}_orientation")  # fmt: skip
        sides.append(request_of(args[side], args[f"{side}_orientation"], None, None, args[f"to_{side}"] or [],
                                args["both"] or [], []))  # fmt: skip
    notes = NoteOptions(args["note_dir"], args["no_note"])
    reply = split_work(_context(args["project"]), args["work"], Split(sides[0], sides[1]), args["base"], notes)
    return _emit(command, reply, args["format"])


def _join(command: Command, args: dict[str, Any]) -> int:
    from wheypoint.app.context import NoteOptions
    from wheypoint.app.join import join_request, join_works

    if not args["orientation"]:
        raise Refusal("usage", "takes the joined work's orientation", usage=True, parameter="orientation")
    request = join_request(args["slug"], args["orientation"], args["next"], args["artifact"])
    notes = NoteOptions(args["note_dir"], args["no_note"])
    return _emit(command, join_works(_context(args["project"]), args["first"], args["second"], request, notes),
                 args["format"])  # fmt: skip


def _turns(command: Command, args: dict[str, Any]) -> int:
    from wheypoint.app.transcript import turns

    limit = None if args["limit"] is None else whole_number(args["limit"], "limit", "takes a positive whole number")
    reply = turns(_context(), transcript_choice(args), every=args["all"], kinds=args["kind"], since=args["since"],
                  limit=limit)  # fmt: skip
    return _emit(command, reply, args["format"])


def _harvest(command: Command, args: dict[str, Any]) -> int:
    from wheypoint.app.transcript import harvest_trailers

    return _emit(command, harvest_trailers(_context(), transcript_choice(args)), args["format"])


def _schema(command: Command, args: dict[str, Any]) -> int:
    from wheypoint.model.contract import CONTRACT_ALIASES, CONTRACTS

    name = CONTRACT_ALIASES.get(args["name"], args["name"])
    if name not in CONTRACTS:
        raise Refusal("unknown-contract", f"no contract {args['name']!r}; known: {', '.join(CONTRACTS)}")
    print_document(CONTRACTS[name], indent=2)
    return 0


def _demo(command: Command, args: dict[str, Any]) -> int:
    from wheypoint.cli.demo import run_demo

    return run_demo(keep=args["keep"])


def _snapshot(command: Command, argv: list[str]) -> int:
    from wheypoint.app.transcript import snapshot
    from wheypoint.cli.flags import parse_snapshot_command

    meat, options = parse_snapshot_command(argv)
    if "stream" not in options:
        raise usage("snapshot needs --stream NAME")
    reply = snapshot(_context(), transcript_choice(options), stream=options["stream"],
                     summary=options.get("summary", ""), meat=meat, out=options.get("out"))  # fmt: skip
    return _emit(command, reply, options.get("format"))


def _write(command: Command, argv: list[str]) -> int:
    """checkpoint and validate: the intent comes from JSON or from the flag form (see flags.py)."""
    from wheypoint.app import checkpoint
    from wheypoint.app.context import NoteOptions
    from wheypoint.cli.flags import parse_intent_command

    parsed = parse_intent_command(argv, command=command.name)
    _DEPRECATED.extend(parsed.deprecated)
    fmt = "text" if parsed.options.get("text") else "json" if parsed.options.get("json") else None
    fmt = parsed.options.get("format", fmt)
    if fmt not in (None, "json", "text"):
        raise usage("takes json or text", parameter="format")
    ctx = _context(parsed.options.get("project"))
    choice = transcript_choice(parsed.options)
    if choice.hook is not None and parsed.source == "-" and parsed.options.get("hook_payload") == "-":
        raise usage("the intent and the hook payload cannot both come from stdin")
    if command.name == "validate":
        reply = checkpoint.validate(ctx, parsed.intent, choice)
    else:
        notes = NoteOptions(parsed.options.get("note_dir"), bool(parsed.options.get("no_note")))
        reply = checkpoint.checkpoint(ctx, parsed.intent, notes, choice)
    return _emit(command, reply, fmt)


def _hooks(command: Command, args: dict[str, Any]) -> int:
    from wheypoint.hooks.install import hooks_command

    reply = hooks_command(_context(), args["action"], harness=args["harness"], scope=args["scope"],
                          command=args["command"])  # fmt: skip
    return _emit(command, reply, args["format"], f"hooks {args['action']}")


def _doctor(command: Command, args: dict[str, Any]) -> int:
    from wheypoint.app.doctor import doctor

    reply = doctor(_context(args["project"]), fix=bool(args["fix"]))
    _emit(command, reply, args["format"])
    return 0 if reply["healthy"] else 1  # like lint: an answer (`ok: true`) whose exit status is the verdict


def _store(command: Command, args: dict[str, Any]) -> int:
    if args["action"] != "copy":
        raise usage(f"takes copy, not {args['action']!r}", parameter="action")
    from wheypoint.app.storecopy import copy_store

    reply = copy_store(_context(), args["from"] or "", args["to"] or "", _gated(args))
    return _emit(command, reply, args["format"], "store copy")


def _mcp(command: Command, args: dict[str, Any]) -> int:
    from wheypoint.mcp.server import serve

    def kept(argv: list[str], stdin: bytes = b"") -> tuple[int, str]:
        from wheypoint.app.context import Context  # at the first call: the server answers `initialize` before

        Context.keep_connections = True  # every tool call of this process reuses the team store's connection
        Context.ends_with_command = False  # nor does this process end with one command
        return answer(argv, stdin)

    return serve(COMMANDS, kept)


def _serve(command: Command, args: dict[str, Any]) -> int:
    from wheypoint.web.server import serve

    port = whole_number(args["port"] or "0", "port", "takes a port number from 0 to 65535", least=0)
    if port > 65535:
        raise usage("takes a port number from 0 to 65535", parameter="port")
    if args["store"]:
        os.environ["WHEYPOINT_STORE"] = args["store"]
    from wheypoint.app.context import Context

    Context.ends_with_command = False  # a server answers request after request, in threads of its own
    host = args["host"] or "127.0.0.1"
    if host != "127.0.0.1":
        print(f"wheypoint: warning: serving on {host}, not only this machine's loopback", file=sys.stderr)
    return serve(_context(), host, port, bool(args["open"]))


def _hook(command: Command, argv: list[str]) -> int:
    """A harness's hook line reached here (after `--store`, say): read as the program reads it (hookline.py)."""
    from wheypoint.cli.hookline import answer

    return answer(argv)


def answer(argv: list[str], stdin: bytes = b"") -> tuple[int, str]:
    """Run one command as the command line would: (exit code, the one JSON document it printed).

    For front doors that speak another protocol over this process's own stdin and stdout (MCP): the command
    reads `stdin` where it would read standard input, and its output is captured, never written.
    """
    import io

    saved = sys.stdin, sys.stdout
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout = captured = io.StringIO()
    try:
        code = main(argv)
    finally:
        sys.stdin, sys.stdout = saved
    return code, captured.getvalue()


# The handler of each command in commands.py (a test checks that the two name the same commands).
TABLE_HANDLERS: dict[str, Callable[[Command, dict[str, Any]], int]] = {
    "show": _show, "log": _log, "resolve": _resolve, "list": _list, "lint": _lint, "handoff": _handoff,
    "adopt": _adopt, "fork": _fork, "turns": _turns, "harvest": _harvest, "schema": _schema, "demo": _demo,
    "hooks": _hooks, "mcp": _mcp, "store": _store, "link": _link, "unlink": _link, "export": _export, "import": _import,
    "diff": _diff, "graph": _graph, "join": _join, "split": _split, "doctor": _doctor, "serve": _serve,
}  # fmt: skip
# Commands that read their own argument list (the `intent` and `hook` grammars).
INTENT_HANDLERS: dict[str, Callable[[Command, list[str]], int]] = {
    "checkpoint": _write, "validate": _write, "snapshot": _snapshot, "hook": _hook,
}  # fmt: skip


def _help(command: Command) -> str:
    text = command_help(command)
    if command.name in ("checkpoint", "validate"):
        from wheypoint.cli.flags import FLAG_FORM

        text += f"\n\nThe flag form:\n\n{FLAG_FORM}"
    return text


def _global_options(argv: list[str]) -> list[str]:
    """`--store URL` before the command names the store for this run (as `WHEYPOINT_STORE` does); the rest."""
    while argv and (argv[0] == "--store" or argv[0].startswith("--store=")):
        if argv[0] == "--store":
            if len(argv) < 2 or not argv[1]:
                raise usage("takes a store: a file path, sqlite:///path or postgresql://...", parameter="store")
            value, argv = argv[1], argv[2:]
        else:
            value, argv = argv[0].partition("=")[2], argv[1:]
        os.environ["WHEYPOINT_STORE"] = value  # every Context reads the store from its environment
    return argv


def _run(argv: list[str]) -> int:
    if not argv:  # a person's first call: the command list, as `--help` shows it (exit 2: no command was named)
        if sys.stdout.isatty():
            print(overview())
            return 2
        raise usage("name a command (`wheypoint --help` says what each does): " + ", ".join(BY_NAME))
    if argv[0] in ("-h", "--help", "help"):
        topic = BY_NAME.get(argv[1]) if len(argv) > 1 and argv[0] == "help" else None
        print(_help(topic) if topic else overview())
        return 0
    if argv[0] == "--version":
        from wheypoint import version_facts

        print(jsontext.dumps({"ok": True, "command": "version", **version_facts()}))
        return 0
    command = BY_NAME.get(argv[0])
    if command is None:
        raise unknown_command(argv[0])
    rest = argv[1:]
    if asks_help(rest):
        print(_help(command))
        return 0
    if command.grammar != "table":
        return INTENT_HANDLERS[command.name](command, rest)
    args = parse(command, rest)
    _DEPRECATED.extend(args.pop("deprecated"))
    return TABLE_HANDLERS[command.name](command, args)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    _DEPRECATED.clear()  # one run's notes (MCP runs many commands in one process)
    try:
        return _answer(argv)
    except BrokenPipeError:  # the reader went away (`| head -1`), whichever reply was being printed
        return 1


def _answer(argv: list[str]) -> int:
    """Run a command line and print its one reply; a refusal or a bug is printed here, in the contract's shape."""
    fmt = _format_asked(argv)
    command = None
    try:
        if argv[:1] != ["hook"]:  # a hook answers its harness whatever its line holds (see _hook)
            refuse_undecodable(argv)
        argv = _global_options(argv)
        command = BY_NAME.get(argv[0]) if argv else None  # for the refusal's flag spellings
        return _run(argv)
    except Refusal as refusal:
        # The one place a refusal becomes a reply: scrubbed here, so no path can echo a credential it was given.
        error = scrub(refusal.as_json(lambda parameter: spell(command, parameter)))
        if fmt == "text" or (fmt != "json" and sys.stdout.isatty()):
            # A person reads it once: the readable form on stderr, never followed by the same refusal as JSON.
            from wheypoint.cli.textout import refusal as readable

            print(readable(error), file=sys.stderr)
        else:
            print_document({"ok": False, "error": error, **({"deprecated": _DEPRECATED} if _DEPRECATED else {})})
        return 2 if refusal.usage else 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        raise
    except Exception as exc:  # a bug: answer in the contract's shape, never with a traceback
        if os.environ.get("WHEYPOINT_DEBUG"):
            raise
        print_document({"ok": False, "error": internal_error(exc)})
        return 1
