"""The MCP tools, generated from the command table: their input schemas, argument checks and command lines.

A tool is one command (or one action of a command, as `handoff_render`) of the table `cli` hands the
server. Its input schema is built from the command's own declaration: each positional argument is a
required string, each option a property named by its parameter name (`--write-note` is `write_note`): a switch
is a boolean, a repeatable option an array of strings, any other option a string. `checkpoint` and
`validate` take an `intent` object instead of `<target>`, whose schema is the contract's own
(`wheypoint schema checkpoint-intent`), and send it to the command as standard input. Output options
(`--format`, `--json`, `--text`) are not exposed: MCP always gets the JSON reply.

What is checked here is only what the command line cannot see once the arguments are flattened into a
command line: unknown argument names, the type of each argument, a value of `-` (standard input is this
server's protocol, so nothing may ask to read it) and a positional argument starting with `-` (the
command line would take it for a flag). Everything else is the command's to judge, and its refusal is
answered as the command line gives it.
"""

from __future__ import annotations

import json

from wheypoint.model.errors import Refusal
from wheypoint.model.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, Protocol

    class OptionLike(Protocol):
        """An option of the command table, as this package reads it."""

        @property
        def flag(self) -> str: ...
        @property
        def help(self) -> str: ...
        @property
        def value(self) -> str | None: ...
        @property
        def repeat(self) -> bool: ...

    class CommandLike(Protocol):
        """A command of the command table, as this package reads it."""

        @property
        def name(self) -> str: ...
        @property
        def summary(self) -> str: ...
        @property
        def positionals(self) -> Sequence[tuple[str, str]]: ...
        @property
        def options(self) -> Sequence[OptionLike]: ...

    # Runs one command as the command line would: (argv, standard input) -> (exit code, the JSON it printed).
    Runner = Callable[[list[str], bytes], tuple[int, str]]


class Exposed(Record):
    """A command served as a tool: the tool's name, the command, the leading positionals it fixes, and hints."""

    tool: str
    command: str
    fixed: tuple[str, ...] = ()
    read_only: bool = True
    description: str | None = None  # when the command's summary does not say what this tool does
    intent: bool = False  # takes the intent object (sent as standard input) where the command takes <target>
    hidden: tuple[str, ...] = ()  # options of the command this tool does not offer (doctor's --fix: it writes)


# Which commands are tools, in the order tools/list gives them. The schemas are generated, never written here.
EXPOSED: tuple[Exposed, ...] = (
    Exposed("checkpoint", "checkpoint", read_only=False, intent=True,
            description="record a checkpoint of a work: the intent (its schema is the contract's) becomes a new "
                        "immutable revision and a Markdown handoff note; a later write names the work's head in "
                        "intent.base_revision_id (from the reply, show or log), or it is refused"),
    Exposed("validate", "validate", intent=True,
            description="check an intent without writing: every problem at once, or what checkpoint would record"),
    Exposed("show", "show", read_only=False),  # --write-note re-renders a note
    Exposed("log", "log"),
    Exposed("resolve", "resolve"),
    Exposed("list", "list"),
    Exposed("turns", "turns"),
    Exposed("handoff_render", "handoff", ("render",),
            description="a work's resume packet: its handoff preamble, or with budget a packet of at most that "
                        "many characters for a fresh agent to read cold"),
    Exposed("schema", "schema"),
    Exposed("doctor", "doctor", hidden=("--fix",),
            description="is wheypoint working here: which of its hooks each harness has (and whether Codex trusts "
                        "them), when each last fired and what it did, its MCP and skill registrations, the store's "
                        "integrity and every record's digest, and this checkout's notes; `healthy` is false and "
                        "`problems` say why when something is wrong (read only: `wheypoint doctor --fix` in a shell "
                        "does the safe repairs)"),
)  # fmt: skip
# Output options are not offered (MCP always gets the JSON reply), nor `--note-dir`: a model must not choose the
# folder a file goes to (a harness's commands folder would take `<slug>.md` as a slash command), so over MCP a
# note goes only to the checkout's own note folder.
HIDDEN_OPTIONS = frozenset({"--format", "--json", "--text", "--intent", "--note-dir"})
INTENT_CONTRACT = "checkpoint-intent"


class Param(Record):
    """One argument of a tool: how it is checked and where it goes on the command line."""

    kind: str  # positional, intent, switch, value or repeat
    flag: str | None = None  # the option's flag (None for a positional or the intent)


class Tool(Record):
    """A tool: what tools/list says about it, and how a call becomes a command line."""

    name: str
    command: str
    fixed: tuple[str, ...]
    params: dict[str, Param]
    required: tuple[str, ...]
    definition: dict[str, Any]


def build_tools(commands: Sequence[CommandLike]) -> dict[str, Tool]:
    """Every exposed command of `commands` as a tool, by tool name, in EXPOSED's order."""
    by_name = {command.name: command for command in commands}
    tools: dict[str, Tool] = {}
    for exposed in EXPOSED:
        command = by_name.get(exposed.command)
        if command is not None:
            tools[exposed.tool] = _tool(exposed, command)
    return tools


def _key(flag: str) -> str:
    return flag[2:].replace("-", "_")


def _option_schema(option: OptionLike) -> dict[str, Any]:
    text = option.help.replace(" or - for stdin", "").replace(" (- for stdin)", "")
    if option.value is None:
        return {"type": "boolean", "description": text}
    if option.repeat:
        return {"type": "array", "items": {"type": "string"}, "description": text}
    schema: dict[str, Any] = {"type": "string", "description": text}
    choices = option.value.split("|")
    if len(choices) > 1 and all(choice.islower() for choice in choices):  # `project|machine`, not `TURN|TIME`
        schema["enum"] = choices
    return schema


def _tool(exposed: Exposed, command: CommandLike) -> Tool:
    params: dict[str, Param] = {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    defs: dict[str, Any] | None = None
    if exposed.intent:
        from wheypoint.model.contract import CONTRACTS

        # The contract as published, its $defs lifted to the input schema's root so its `#/$defs/...` refs hold.
        contract = CONTRACTS[INTENT_CONTRACT]
        properties["intent"] = {k: v for k, v in contract.items() if k not in ("$schema", "$id", "$defs")}
        defs = contract.get("$defs")
        params["intent"] = Param("intent")
        required.append("intent")
    else:
        for name, text in command.positionals[len(exposed.fixed) :]:
            properties[name] = {"type": "string", "description": text}
            params[name] = Param("positional")
            required.append(name)
    for option in command.options:
        if option.flag in HIDDEN_OPTIONS or option.flag in exposed.hidden:
            continue
        key = _key(option.flag)
        properties[key] = _option_schema(option)
        params[key] = Param("switch" if option.value is None else "repeat" if option.repeat else "value", option.flag)
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    if defs is not None:
        schema["$defs"] = defs
    annotations = {"title": f"wheypoint {' '.join((command.name, *exposed.fixed))}",
                   "readOnlyHint": exposed.read_only, "destructiveHint": False, "idempotentHint": True,
                   "openWorldHint": False}  # fmt: skip
    definition = {"name": exposed.tool, "title": annotations["title"],
                  "description": _sentence(exposed.description or command.summary), "inputSchema": schema,
                  "annotations": annotations}  # fmt: skip
    return Tool(exposed.tool, command.name, exposed.fixed, params, tuple(required), definition)


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _usage(message: str, parameter: str | None = None) -> Refusal:
    return Refusal("usage", message, usage=True, parameter=parameter)


def command_line(tool: Tool, arguments: dict[str, Any]) -> tuple[list[str], bytes]:
    """The command line and standard input a call means; refused `usage` when an argument does not fit.

    A null argument is taken as not given. Options go as `--flag=value`, one token each, so no value (a
    `--help`, a `-v`) can be read as a flag of its own.
    """
    unknown = sorted(set(arguments) - set(tool.params))
    if unknown:
        takes = ", ".join(tool.params) or "no arguments"
        details = {"unknown_arguments": unknown}
        if len(unknown) == 1:
            message = f"is not an argument of {tool.name}, which takes {takes}"
            raise Refusal("usage", message, details=details, usage=True, parameter=unknown[0])
        message = f"unknown arguments {', '.join(unknown)}: {tool.name} takes {takes}"
        raise Refusal("usage", message, details=details, usage=True)
    given = {name: value for name, value in arguments.items() if value is not None}
    for name in tool.required:
        if name not in given:
            raise _usage("is required", name)
    argv = [tool.command, *tool.fixed]
    stdin = b""
    options: list[str] = []
    for name, param in tool.params.items():
        if name not in given:
            continue
        value = given[name]
        if param.kind == "intent":
            # ASCII with escapes: whatever the client sent (a lone surrogate included) reaches the command's own
            # JSON reader, which judges it as it judges any intent.
            stdin = json.dumps(value, ensure_ascii=True).encode("ascii")
            argv.append("-")
        elif param.kind == "switch":
            if not isinstance(value, bool):
                raise _usage("takes true or false", name)
            if value:
                options.append(str(param.flag))
        elif param.kind == "repeat":
            if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                raise _usage("takes an array of strings", name)
            options += [f"{param.flag}={_text(name, item)}" for item in value]
        elif isinstance(value, int) and not isinstance(value, bool) and param.kind == "value":
            options.append(f"{param.flag}={value}")  # `"limit": 20` means what `--limit 20` means
        elif not isinstance(value, str):
            raise _usage("takes a string", name)
        elif param.kind == "positional":
            if value.startswith("-"):
                raise _usage("cannot start with - (the command line would read it as a flag); write ./" + value
                             if value != "-" else _STDIN, name)  # fmt: skip
            argv.append(value)
        else:
            options.append(f"{param.flag}={_text(name, value)}")
    return argv + options, stdin


_STDIN = "cannot be - (standard input): this server's standard input is the protocol; name a file"


def _text(name: str, value: str) -> str:
    if value == "-":
        raise _usage(_STDIN, name)
    return value


def call_result(code: int, text: str) -> dict[str, Any]:
    """A tools/call result from a command's exit code and the JSON it printed: an error when it refused."""
    text = text.rstrip("\n")
    try:
        reply = json.loads(text)
    except ValueError:
        reply = None
    if not isinstance(reply, dict):
        error = {"code": "internal-error", "message": f"the command answered no JSON object (exit {code})"}
        return refusal_result({"ok": False, "error": error})
    # An answer is not an error even when its exit status carries a verdict (doctor exits 1 when not healthy).
    is_error = code != 0 and reply.get("ok") is not True
    return {"content": [{"type": "text", "text": text}], "structuredContent": reply, "isError": is_error}


def refusal_result(reply: dict[str, Any]) -> dict[str, Any]:
    """A tools/call result for a refusal given here, in the command line's reply shape (and scrubbed as it is)."""
    from wheypoint.model.replies import document_text, scrub

    reply = scrub(reply)
    text = document_text(reply)
    return {"content": [{"type": "text", "text": text}], "structuredContent": reply, "isError": True}


def call(tool: Tool, arguments: dict[str, Any], runner: Runner) -> dict[str, Any]:
    """Run a tool: its command line through `runner`, or the refusal of its arguments."""
    try:
        argv, stdin = command_line(tool, arguments)
    except Refusal as refusal:
        return refusal_result({"ok": False, "error": refusal.as_json()})
    try:
        code, text = runner(argv, stdin)
    except SystemExit as exc:  # the runner answers every refusal and crash itself; an exit is a bug, not ours to take
        error = {"code": "internal-error", "message": f"the command exited ({exc.code}) without answering"}
        return refusal_result({"ok": False, "error": error})
    return call_result(code, text)
