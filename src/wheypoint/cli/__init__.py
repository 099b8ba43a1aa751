"""The command-line front door: parse arguments, call the application layer, print the reply.

A front door imports the application layer and the model only. It alone maps a refusal's kind to an exit
code and a parameter name to its flag spelling.
"""

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
