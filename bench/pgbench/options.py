"""The command line: the parts (subcommands), each one's options with their defaults, and their checks."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from pgbench.stores import BACKENDS
from pgbench.together import STARTS

PART_NAMES = ("race", "throughput", "lookups", "calls", "kill")


def listed(text: str) -> list[str]:
    """The items of a comma-separated option."""
    return [item.strip() for item in text.split(",") if item.strip()]


def parse_args(argv: Sequence[str] | None, description: str = "") -> argparse.Namespace:
    """The options of the part named in `argv`; `description` heads --help (the entry module's docstring)."""
    server = argparse.ArgumentParser(add_help=False)
    server.add_argument("--url", default=None, help="a PostgreSQL superuser's URL to use instead of starting a "
                        "throwaway server (databases are created on it and dropped)")  # fmt: skip
    common = argparse.ArgumentParser(add_help=False, parents=[server])
    common.add_argument("--out", type=Path, default=None, help="where to write the report too "
                        "(default bench/results/pg-<part>.md)")  # fmt: skip
    parser = argparse.ArgumentParser(description=description)
    parts = parser.add_subparsers(dest="part", required=True)

    def part(name: str, text: str) -> argparse.ArgumentParser:
        return parts.add_parser(name, parents=[server if name == "all" else common], help=text, description=text)

    def backends(p: argparse.ArgumentParser, default: str) -> None:
        p.add_argument("--backends", default=default, help=f"comma separated, of {', '.join(BACKENDS)} "
                       f"(default {default})")  # fmt: skip

    race = part("race", "N processes racing on one base: exactly one commit")
    race.add_argument("--rounds", type=int, default=5, help="rounds per backend, start and kind (default 5)")
    throughput = part("throughput", "N processes on N works: commits per second")
    throughput.add_argument("--runs", type=int, default=5, help="kept runs per backend and start (default 5)")
    for p in (race, throughput):
        p.add_argument("--writers", type=int, default=32, help="processes at once (default 32)")
        p.add_argument("--starts", default="gate,spawn", help="gate, spawn or both (default gate,spawn)")
        backends(p, "postgresql,sqlite")
    race.add_argument("--kinds", default="base,first", help="base (updates of one head), first (one new work), or "
                      "both (default base,first)")  # fmt: skip
    lookups = part("lookups", "show, list --grep and resolve at 10k and 100k works")
    calls = part("calls", "tool calls of one long-lived `wheypoint mcp` per backend, once connected")
    for p, sizes in ((lookups, "10000,100000"), (calls, "10000")):
        p.add_argument("--sizes", default=sizes, help=f"store sizes in works (default {sizes})")
        p.add_argument("--runs", type=int, default=20, help="kept rounds per size (default 20)")
        p.add_argument("--load-timeout", type=float, default=1800, help="seconds the import into PostgreSQL may "
                       "take before the benchmark gives up (default 1800)")  # fmt: skip
        p.add_argument("--loader", choices=("auto", "import", "batched"), default="auto",
                       help="how the PostgreSQL store is loaded: `wheypoint import` of an export, falling back to "
                       "a batched copy through the store API when it fails (auto), or only one")  # fmt: skip
    kill = part("kill", "kill -9 of a writer mid-transaction: nothing acknowledged lost")
    kill.add_argument("--rounds", type=int, default=200, help="kills per backend (default 200)")
    kill.add_argument("--works", type=int, default=4, help="works the writer updates in turn (default 4)")
    kill.add_argument("--seed", type=int, default=20261201, help="the random seed of where kills are aimed")
    backends(kill, "postgresql")
    part("all", "race, throughput, lookups, calls and kill, each with its defaults, on one server")
    args = parser.parse_args(argv)
    for name in ("rounds", "runs", "writers", "works"):
        if getattr(args, name, 1) < 1:
            parser.error(f"--{name} must be at least 1")
    for option, known in (("backends", BACKENDS), ("starts", STARTS), ("kinds", ("base", "first"))):
        unknown = set(listed(getattr(args, option, ""))) - set(known)
        if unknown:
            parser.error(f"--{option}: unknown {', '.join(sorted(unknown))} (known: {', '.join(known)})")
    return args


def defaults_of(part: str) -> argparse.Namespace:
    return parse_args([part])
