"""The `wheypoint` program's entry: the collector tuned for a short process, then the command line."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn

# The collector's first threshold while the program runs (see `run`); its two others stay Python's.
YOUNG_THRESHOLD = 20_000


def run() -> None:
    """The `wheypoint` program's entry (the console script, `python -m wheypoint`, the single-file runtime).

    A command's start creates some tens of thousands of objects that live until it ends (modules, classes,
    functions, the rule tables) and almost no garbage, yet under Python's default threshold (a collection of the
    young objects every 700 allocations, of everything every hundred of those) the collector walks them again
    and again: 1.5-2.5 ms of a 20 ms start. So the young generation is collected every 20,000 allocations
    instead, before anything else is imported. Objects freed by their reference count are freed as before;
    what waits longer is garbage in cycles, at most that many young objects' worth.

    A `hook` line (without `--help`) goes to hookline.py, which loads no other command's declaration.
    """
    import gc

    gc.set_threshold(YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    from wheypoint.cli.grammar import asks_help

    line = sys.argv[1:]
    if line[:1] == ["hook"] and not asks_help(line[1:]):
        from wheypoint.cli.hookline import answer

        _end(lambda: answer(line[1:]))
    from wheypoint.cli.main import main

    _end(main)


def _end(command: Callable[[], int]) -> NoReturn:
    """Run the command, then end the program: flush what it printed, and end the process at once.

    By the time a command returns, the store is closed (every command closes it in a `finally`; on Python 3.10
    and 3.11 a SQLite writer's connection is left for this exit to drop instead, which spares SQLite's
    close-time checkpoint: store/sqlite/backend.py), every note or file written is flushed, fsynced and
    closed, and no thread runs. What is left of an ordinary exit is the interpreter tearing down every
    module and object one by one, about 5 ms that nobody waits for usefully, so the process ends with
    `os._exit` once its two output streams are flushed.
    """
    from wheypoint.app.context import Context

    Context.ends_with_command = True
    code = command()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # a reader that went away (e.g. `| head`): what could be written was written
        code = code or 1
    from wheypoint import boot

    boot.refresh()  # the answer is out: a missing or stale start-up image is written for the next command
    os._exit(code)
