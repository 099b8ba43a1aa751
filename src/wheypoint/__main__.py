"""Entry point for `python -m wheypoint`: the same program as the `wheypoint` command."""

from wheypoint.cli.entry import run

run()
