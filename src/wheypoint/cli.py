"""The command line: parse arguments, call the service, print one JSON document (or text for people).

Exit codes: 0 answered, 1 refused, 2 usage. Every reply is `{"ok": true, "command": ...}` or
`{"ok": false, "error": {"code", "message", "problems"?}}` on stdout; a refusal never changes the store.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, NoReturn

from wheypoint.errors import Refusal, usage

COMMANDS = ("schema", "validate", "checkpoint", "show", "log", "demo")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise usage(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="wheypoint", description="Revisioned, validated handoff checkpoints for coding agents.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--project", help="project key (default: from the git remote or checkout)")
        p.add_argument("--format", choices=("json", "text"), help="output form (default: text on a terminal)")

    p = sub.add_parser("schema", help="print a contract's JSON Schema")
    p.add_argument("name", help="checkpoint-intent | wheypoint-record | wheypoint-revision")
    for name, text in (("validate", "check an intent without writing"), ("checkpoint", "record a checkpoint")):
        p = sub.add_parser(name, help=text, add_help=False)
        p.add_argument("rest", nargs=argparse.REMAINDER)
    p = sub.add_parser("show", help="the head record of a work (or an earlier revision)")
    p.add_argument("work", help="work id or slug")
    p.add_argument("--revision", help="an earlier revision id")
    p.add_argument("--note-dir", help="where the note lives (default: <checkout>/.cheese/notes)")
    p.add_argument("--write-note", action="store_true", help="re-render the note when it is stale or missing")
    common(p)
    p = sub.add_parser("log", help="the revision chain of a work")
    p.add_argument("work", help="work id or slug")
    common(p)
    p = sub.add_parser("demo", help="write real checkpoints in a scratch git repository and print the note")
    p.add_argument("--keep", action="store_true", help="keep the scratch folder")
    return parser


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

    args = _parser().parse_args(argv)
    if args.version:
        from wheypoint import __version__

        print(json.dumps({"ok": True, "command": "version", "version": __version__}))
        return 0
    if args.command is None:
        raise usage("name a command: " + ", ".join(COMMANDS))
    if args.command == "schema":
        from wheypoint.contract import CONTRACT_ALIASES, CONTRACTS

        name = CONTRACT_ALIASES.get(args.name, args.name)
        if name not in CONTRACTS:
            raise Refusal("unknown-contract", f"no contract {args.name!r}; known: {', '.join(CONTRACTS)}")
        print(json.dumps(CONTRACTS[name], ensure_ascii=False, indent=2))
        return 0
    if args.command == "demo":
        from wheypoint.demo import run_demo

        return run_demo(keep=args.keep)
    if args.command in ("validate", "checkpoint"):
        from wheypoint import checkpointing
        from wheypoint.flags import parse_intent_command

        parsed = parse_intent_command(args.rest, stdin_is_tty=sys.stdin.isatty())
        fmt = "text" if parsed.options.get("text") else "json" if parsed.options.get("json") else None
        fmt = parsed.options.get("format", fmt)
        ctx = Context(project=parsed.options.get("project"))
        if args.command == "validate":
            reply = checkpointing.validate(ctx, parsed.intent)
            _emit({"ok": True, "command": "validate", **reply}, "validate", fmt)
        else:
            notes = NoteOptions(parsed.options.get("note_dir"), bool(parsed.options.get("no_note")))
            reply = checkpointing.checkpoint(ctx, parsed.intent, notes)
            _emit({"ok": True, "command": "checkpoint", **reply}, "checkpoint", fmt)
        return 0
    from wheypoint import service

    ctx = Context(project=args.project)
    if args.command == "show":
        reply = service.show(ctx, args.work, args.revision, NoteOptions(args.note_dir), args.write_note)
        _emit({"ok": True, "command": "show", **reply}, "show", args.format)
    else:
        _emit({"ok": True, "command": "log", **service.log(ctx, args.work)}, "log", args.format)
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
