"""The note-forging property of tests/test_note_forging.py with many more examples than CI runs, and its figures.

    python bench/forging_fuzz.py [--examples 20000]

Runs the property (arbitrary Unicode, every line terminator, bidi and zero-width character, Markdown openers in
every field, verbatim quotes and meat) through pytest with `WHEYPOINT_FUZZ_EXAMPLES` set, and reports how many
examples ran, how many failed, and the wall time, in bench/results/forging_fuzz.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20000)
    args = parser.parse_args()
    env = {**os.environ, "WHEYPOINT_FUZZ_EXAMPLES": str(args.examples)}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--hypothesis-show-statistics",
         "tests/test_note_forging.py::test_no_text_can_forge_the_note"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    seconds = time.monotonic() - started
    passing = next((line.strip() for line in done.stdout.splitlines() if " passing, " in line), "?")
    verdict = "0 failures" if done.returncode == 0 else "FAILED"
    report = (f"# Note forging fuzz\n\n- examples asked: {args.examples}\n- Hypothesis: {passing}\n"
              f"- verdict: {verdict}\n- wall time: {seconds:.0f} s\n")  # fmt: skip
    if done.returncode != 0:
        report += "\n```\n" + done.stdout[-4000:] + "\n```\n"
    out = ROOT / "bench" / "results" / "forging_fuzz.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report, encoding="utf-8")
    print(report)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
