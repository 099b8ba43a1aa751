"""How a command line is read: a command's declaration (its arguments and options) and the parser it drives.

The declarations themselves are in commands.py (every command) and hookline.py (`hook`, which a harness runs on
every turn and which reads nothing else of the command line).
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

    `grammar` is `table` for commands `parse` reads, `intent` for those whose item flags bind to each other
    (checkpoint, validate, snapshot: see flags.py), or `hook` for `hook` (hookline.py), which reads its own
    arguments so that even a malformed hook line answers the harness and exits 0; all declare their options.
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


FORMAT = Option("--format", "json (the default off a terminal) or text (the default on one)", "json|text")


def asks_help(rest: list[str]) -> bool:
    """Whether a command's arguments ask for its help: `-h` or `--help` anywhere before a `--` (`handoff render
    --help` asks for help, not for a note named --help)."""
    before_dashes = rest[: rest.index("--")] if "--" in rest else rest
    return any(arg in ("-h", "--help") for arg in before_dashes)


def usage(message: str, parameter: str | None = None) -> Refusal:
    """A malformed command line (exit 2)."""
    return Refusal("usage", message, usage=True, parameter=parameter)


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
        raise usage(f"{command.name} takes {arguments(command) or 'no arguments'}; see "
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


def arguments(command: Command) -> str:
    """The positionals as usage shows them: `<a> <b>`, the optional ones in brackets."""
    required = len(command.positionals) - command.optional_positionals
    return " ".join(f"<{name}>" if n < required else f"[<{name}>]" for n, (name, _) in enumerate(command.positionals))
