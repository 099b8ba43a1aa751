"""The command line: parse arguments, call the service, print one JSON document (or text for people).

Exit codes: 0 answered, 1 refused, 2 usage. Every reply is `{"ok": true, "command": ...}` or
`{"ok": false, "error": {"code", "message", "problems"?}}` on stdout; a refusal never changes the store.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from wheypoint.errors import Refusal, usage

COMMANDS = (
    "checkpoint", "validate", "show", "log", "turns", "harvest", "snapshot", "resolve", "list", "lint",
    "handoff", "adopt", "schema", "demo",
)  # fmt: skip


USAGE = """usage: wheypoint <command> [arguments]

  checkpoint <slug|work-id> [flags] | checkpoint <intent.json|->   record a checkpoint
  validate   (the same arguments)                                  check without writing
  show <slug|work-id> [--revision R] [--note-dir D] [--write-note] the head record and its note
  log <slug|work-id>                                               the revision chain
  turns [--all] [--kind K]... [--since TURN|TIME] [--limit N]     the user's turns, verbatim
  harvest                                                          the agent's <!-- ckpt --> trailers
  snapshot --stream NAME [--summary T|--summary-file F] [--meat TURN --type T [--weight W]]...
                                                                   write CHECKPOINT-<stream>-llm.md
  resolve <note path|work-id|slug> [--project K] [--workspace-root D]
                                                                   find one handoff and check it
  adopt <legacy note>                                              make a hand-written note a store record
  lint <note path>                                                 check a note (generated or hand-written)
  handoff render|parse|dispatch <ref> [--budget N]                 the resume seam for other tools
  list [--scope project|machine] [--grep T]... [--status S]... [--next M]... [--project P]...
       [--entry-kind K]... [--entry-state S]... [--owner W]... [--gated|--no-gated] [--edge-kind K]...
       [--linked-to REF]... [--forked-from WORK]... [--since TIME] [--limit N]
                                                                   find works (repeats OR, flags AND)
  schema checkpoint-intent|wheypoint-record|wheypoint-revision     a JSON Schema
  demo [--keep]                                                    a worked example in a scratch repo

Common options: --project KEY, --format json|text. `wheypoint checkpoint --help` explains the flag form.
Naming a transcript (turns, harvest, snapshot, checkpoint, validate): --transcript PATH | --session ID |
--hook-payload FILE|- (a hook's JSON), with --harness claude-code|codex|opencode|gemini and --latest.
Replies are one JSON document on stdout; exit 0 answered, 1 refused, 2 usage."""

# Each command's positional arguments, options taking a value, and switches. A small table rather than
# argparse, which costs several milliseconds of start-up on every call of these short commands.
_TRANSCRIPT = frozenset({"--transcript", "--session", "--harness", "--hook-payload"})
_SPECS: dict[str, tuple[tuple[str, ...], frozenset[str], frozenset[str]]] = {
    "schema": (("name",), frozenset(), frozenset()),
    "show": (("work",), frozenset({"--revision", "--note-dir", "--project", "--format"}), frozenset({"--write-note"})),
    "log": (("work",), frozenset({"--project", "--format"}), frozenset()),
    "demo": ((), frozenset(), frozenset({"--keep"})),
    "turns": ((), _TRANSCRIPT | {"--since", "--limit", "--format"}, frozenset({"--all", "--latest"})),
    "harvest": ((), _TRANSCRIPT | {"--format"}, frozenset({"--latest"})),
    "list": ((), frozenset({"--scope", "--since", "--limit", "--format"}), frozenset({"--gated", "--no-gated"})),
    "resolve": (("ref",), frozenset({"--project", "--workspace-root", "--format"}), frozenset()),
    "lint": (("path",), frozenset({"--project", "--format"}), frozenset()),
    "adopt": (("path",), frozenset({"--project", "--note-dir", "--format"}), frozenset({"--no-note"})),
    "handoff": (("action", "ref"), frozenset({"--project", "--workspace-root", "--budget", "--format"}), frozenset()),
}
_REPEATABLE = {
    "turns": frozenset({"--kind"}),
    "list": frozenset({
        "--grep", "--status", "--next", "--project", "--entry-kind", "--entry-state", "--edge-kind", "--linked-to",
        "--forked-from", "--owner",
    }),
}  # fmt: skip


def parse_command(argv: list[str]) -> tuple[str, dict[str, Any]]:
    """(command, arguments) for the short commands; refused `usage` when anything does not fit."""
    if not argv:
        raise usage("name a command: " + ", ".join(COMMANDS))
    command, rest = argv[0], argv[1:]
    if command not in _SPECS:
        raise usage(f"unknown command {command!r}; commands: {', '.join(COMMANDS)}")
    positional_names, options, switches = _SPECS[command]
    repeatable = _REPEATABLE.get(command, frozenset())
    args: dict[str, Any] = {name[2:].replace("-", "_"): [] for name in repeatable}
    args.update({name[2:].replace("-", "_"): None for name in options})
    args.update({name[2:].replace("-", "_"): False for name in switches})
    positional: list[str] = []
    index = 0
    while index < len(rest):
        token = rest[index]
        name, eq, inline = token.partition("=")
        if name in options or name in repeatable:
            if not eq and index + 1 >= len(rest):
                raise usage(f"{name} needs a value")
            value = inline if eq else rest[index + 1]
            key = name[2:].replace("-", "_")
            if name in repeatable:
                args[key].append(value)
            else:
                args[key] = value
            index += 1 if eq else 2
        elif token in switches:
            args[token[2:].replace("-", "_")] = True
            index += 1
        elif token.startswith("-") and token != "-":
            raise usage(f"{command}: unknown flag {token}")
        else:
            positional.append(token)
            index += 1
    if len(positional) != len(positional_names):
        raise usage(f"{command} takes {' '.join(f'<{n}>' for n in positional_names) or 'no arguments'}")
    args.update(zip(positional_names, positional, strict=True))
    if args.get("format") not in (None, "json", "text"):
        raise usage("--format is json or text")
    return command, args


def _wants_text(fmt: str | None) -> bool:
    return fmt == "text" or (fmt is None and sys.stdout.isatty())


def _emit(reply: dict[str, Any], text: str | None, fmt: str | None) -> None:
    """Print a reply: JSON, or on a terminal (or --format text) the readable form named `text` in textout."""
    if text is not None and _wants_text(fmt):
        from wheypoint import textout

        print(getattr(textout, text)(reply))
    else:
        print(json.dumps(reply, ensure_ascii=False, indent=None if not sys.stdout.isatty() else 2))


def _run(argv: list[str]) -> int:
    from wheypoint.service import Context, NoteOptions

    if argv and argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    if argv and argv[0] == "--version":
        from wheypoint import __version__

        print(json.dumps({"ok": True, "command": "version", "version": __version__}))
        return 0
    if argv and argv[0] in ("validate", "checkpoint"):
        return _write_command(argv[0], argv[1:])
    if argv and argv[0] == "snapshot":
        return _snapshot_command(argv[1:])
    if len(argv) > 1 and argv[1] in ("-h", "--help"):
        print(USAGE)
        return 0
    command, args = parse_command(argv)
    if command == "schema":
        from wheypoint.contract import CONTRACT_ALIASES, CONTRACTS

        name = CONTRACT_ALIASES.get(args["name"], args["name"])
        if name not in CONTRACTS:
            raise Refusal("unknown-contract", f"no contract {args['name']!r}; known: {', '.join(CONTRACTS)}")
        print(json.dumps(CONTRACTS[name], ensure_ascii=False, indent=2))
        return 0
    if command == "demo":
        from wheypoint.demo import run_demo

        return run_demo(keep=args["keep"])
    if command in ("turns", "harvest"):
        return _transcript_command(command, args)
    if command == "resolve":
        from wheypoint.resolving import resolve

        reply = resolve(Context(project=args["project"]), args["ref"], args["workspace_root"])
        _emit({"ok": True, "command": "resolve", **reply}, "resolution", args["format"])
        return 0
    if command == "adopt":
        from wheypoint.notes_service import adopt

        reply = adopt(Context(project=args["project"]), args["path"], NoteOptions(args["note_dir"], args["no_note"]))
        _emit({"ok": True, "command": "adopt", **reply}, "checkpoint", args["format"])
        return 0
    if command in ("lint", "handoff"):
        return _note_command(command, args)
    if command == "list":
        from wheypoint.listing import list_works

        if args["gated"] and args["no_gated"]:
            raise usage("--gated and --no-gated exclude each other")
        args["gated"] = True if args["gated"] else False if args["no_gated"] else None
        _emit({"ok": True, "command": "list", **list_works(Context(), args)}, "listing", args["format"])
        return 0
    from wheypoint import service

    ctx = Context(project=args["project"])
    if command == "show":
        reply = service.show(ctx, args["work"], args["revision"], NoteOptions(args["note_dir"]), args["write_note"])
        _emit({"ok": True, "command": "show", **reply}, "show", args["format"])
    else:
        _emit({"ok": True, "command": "log", **service.log(ctx, args["work"])}, "log", args["format"])
    return 0


def _note_command(command: str, args: dict[str, Any]) -> int:
    from wheypoint import notes_service
    from wheypoint.service import Context

    ctx = Context(project=args["project"])
    if command == "lint":
        _emit({"ok": True, "command": "lint", **notes_service.lint_path(ctx, args["path"])}, "lint", args["format"])
        return 0
    action, ref, root = args["action"], args["ref"], args["workspace_root"]
    if action == "parse":
        reply = notes_service.handoff_parse(ctx, ref, root)
    elif action == "render":
        reply = notes_service.handoff_render(ctx, ref, root, args["budget"])
    elif action == "dispatch":
        reply = notes_service.handoff_dispatch(ctx, ref, root)
    else:
        raise usage(f"handoff {action!r}: render, parse or dispatch")
    _emit({"ok": True, "command": f"handoff {action}", **reply}, None, args["format"])
    return 0


def transcript_choice(options: dict[str, Any]) -> Any:
    """The transcript a command names, from its options (a hook payload is read here)."""
    from wheypoint.checkpointing import TranscriptChoice

    hook = None
    if options.get("hook_payload"):
        from wheypoint.flags import read_input
        from wheypoint.intake import parse_json_document

        hook = parse_json_document(read_input(options["hook_payload"], "hook-payload"), "hook-payload")
        if not isinstance(hook, dict):
            raise Refusal(
                "invalid-hook-payload", "a hook payload is a JSON object with session_id, transcript_path, cwd"
            )
    return TranscriptChoice(options.get("transcript"), options.get("session"), options.get("harness"),
                            bool(options.get("latest")), hook)  # fmt: skip


def _transcript_command(command: str, args: dict[str, Any]) -> int:
    from wheypoint import transcript_service
    from wheypoint.service import Context

    ctx, choice = Context(), transcript_choice(args)
    if command == "turns":
        limit = args["limit"]
        if limit is not None and not (limit.isdigit() and int(limit) > 0):
            raise usage("--limit takes a positive whole number")
        reply = transcript_service.turns(ctx, choice, every=args["all"], kinds=args["kind"], since=args["since"],
                                         limit=int(limit) if limit else None)  # fmt: skip
    else:
        reply = transcript_service.harvest_trailers(ctx, choice)
    _emit({"ok": True, "command": command, **reply}, command, args["format"])
    return 0


def _snapshot_command(rest: list[str]) -> int:
    from wheypoint import transcript_service
    from wheypoint.flags import parse_snapshot_command
    from wheypoint.service import Context

    meat, options = parse_snapshot_command(rest)
    if "stream" not in options:
        raise usage("snapshot needs --stream NAME")
    choice = transcript_choice(options)
    summary, out = options.get("summary", ""), options.get("out")
    reply = transcript_service.snapshot(
        Context(), choice, stream=options["stream"], summary=summary, meat=meat, out=out
    )
    _emit({"ok": True, "command": "snapshot", **reply}, "snapshot", options.get("format"))
    return 0


def _write_command(command: str, rest: list[str]) -> int:
    """checkpoint and validate: the intent comes from JSON or from the flag form (see flags.py)."""
    from wheypoint import checkpointing
    from wheypoint.flags import __doc__ as flag_help
    from wheypoint.flags import parse_intent_command
    from wheypoint.service import Context, NoteOptions

    if rest and rest[0] in ("-h", "--help"):
        print(f"usage: wheypoint {command} <slug|work-id> [flags] | {command} <intent.json|->\n\n{flag_help}")
        return 0
    parsed = parse_intent_command(rest, stdin_is_tty=sys.stdin.isatty())
    fmt = "text" if parsed.options.get("text") else "json" if parsed.options.get("json") else None
    fmt = parsed.options.get("format", fmt)
    if fmt not in (None, "json", "text"):
        raise usage("--format is json or text")
    ctx = Context(project=parsed.options.get("project"))
    choice = transcript_choice(parsed.options)
    if choice.hook is not None and parsed.source == "-" and parsed.options.get("hook_payload") == "-":
        raise usage("the intent and the hook payload cannot both come from stdin")
    if command == "validate":
        reply = checkpointing.validate(ctx, parsed.intent, choice)
    else:
        notes = NoteOptions(parsed.options.get("note_dir"), bool(parsed.options.get("no_note")))
        reply = checkpointing.checkpoint(ctx, parsed.intent, notes, choice)
    _emit({"ok": True, "command": command, **reply}, command, fmt)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    fmt = "text" if "--text" in argv or ("--format" in argv and "text" in argv) else None
    try:
        return _run(argv)
    except Refusal as refusal:
        error = refusal.as_json()
        if _wants_text(fmt):
            from wheypoint.textout import refusal as readable

            print(readable(error), file=sys.stderr)
        print(json.dumps({"ok": False, "error": error}, ensure_ascii=False))
        return refusal.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 1
    except Exception as exc:  # a bug: answer in the contract's shape, never with a traceback
        if os.environ.get("WHEYPOINT_DEBUG"):
            raise
        error = {"code": "internal-error", "message": f"{type(exc).__name__}: {exc}"}
        print(json.dumps({"ok": False, "error": error}, ensure_ascii=False))
        return 1
