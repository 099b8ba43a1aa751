"""The `hook` command line: its declaration, and its answer without any other command's loaded.

A harness waits on its hooks (Stop and UserPromptSubmit on every turn, PreCompact before compacting), so a
hook's process loads only what its own line needs: this declaration and the parser (grammar.py), never the
table of every other command (commands.py) nor the dispatcher that serves them (main.py). `entry.run` sends
a line that starts with `hook` here, and main.py a hook line it reads (`--store X hook ...`).
"""

from __future__ import annotations

from wheypoint.cli.grammar import Command, Option, parse, refuse_undecodable
from wheypoint.model.errors import Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HOOK = Command(
    "hook", "run as a harness's hook: the hook's JSON on stdin, its answer on stdout, always exit 0",
    (("event", "the harness's event: PreCompact (Gemini: PreCompress), SessionStart, Stop, UserPromptSubmit"),),
    (Option("--harness", "claude-code, codex, gemini or opencode", "NAME"),
     Option("--budget", "SessionStart: the resume packet's size in characters (default 10000)", "N")),
    "wheypoint hook PreCompact --harness claude-code", grammar="hook",
)  # fmt: skip


def answer(argv: list[str]) -> int:
    """A harness's hook (`argv`: the line after `hook`): never a refusal, and exit 0 whatever the line or the
    payload (see hooks/); only a harness that stopped reading (1) or an interrupt (130) ends it otherwise."""
    from wheypoint.hooks.events import run_hook

    try:
        refuse_undecodable(argv)
        args: dict[str, Any] | Refusal = parse(HOOK, argv)
    except Refusal as refusal:
        args = refusal
    try:
        return run_hook(args)
    except BrokenPipeError:  # the harness stopped reading: as main.py answers any command then
        return 1
    except KeyboardInterrupt:
        return 130

