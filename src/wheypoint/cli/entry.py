"""The `wheypoint` program's entry: the collector tuned for a short process, then the command line."""

from __future__ import annotations

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
    """
    import gc

    gc.set_threshold(YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    from wheypoint.cli.main import run as program

    program()
