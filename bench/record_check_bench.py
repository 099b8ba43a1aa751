"""What checking a stored record against its digest costs each read: the check beside the JSON parse it follows.

Every read of a record for use (show, resolve, export, the head a write builds on) parses the row's JSON and,
since issue 20, checks it (model/integrity.intact). This measures both on records of three sizes written by the
real command line into a scratch store: a typical flag-form checkpoint, one of about 64 KiB (a long session's
verbatim words), and one near the contract's limits (64 directives of 8,000-character quotes, 64 decisions).
Rounds interleave the baseline (json.loads alone) and the checked read, so a noisy machine shifts both alike;
the figures are the medians over rounds, per read.

Run from the repository root:  python3 bench/record_check_bench.py [--rounds 30] [--reads 200]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from wheypoint.model.integrity import intact  # noqa: E402


def _intents() -> dict[str, dict[str, object]]:
    words = [
        "the",
        "retry",
        "backoff",
        "of",
        "the",
        "gateway",
        "client",
        "stays",
        "capped,",
        "and",
        "every",
        "POST",
        "is",
        "sent",
        "once",
    ]
    prose = " ".join(words[n % len(words)] for n in range(1400))[:7900]  # a pasted paragraph, verbatim
    decisions = [{"text": f"Decision {n}: keep the retry cap at {n} seconds for the gateway client.",
                  "rationale": "The gateway gives up later than that. " * 40} for n in range(64)]  # fmt: skip
    directives = [{"text": f"Directive {n}: follow the pasted rules.", "quote": f"{n} {prose}"} for n in range(64)]
    return {
        "typical": {"slug": "typical", "orientation": "Backoff is designed, not built.", "next": {"move": "hold"},
                    "decisions": decisions[:3], "notes": "Started on the retry backoff."},
        "long session": {"slug": "medium", "orientation": "A long session.", "next": {"move": "hold"},
                         "directives": directives[:8], "notes": "n" * 5000},
        "near the limit": {"slug": "large", "orientation": "A very long session.", "next": {"move": "hold"},
                           "directives": directives, "decisions": decisions, "notes": "n" * 6000},
    }  # fmt: skip


def _store(folder: Path) -> dict[str, tuple[str, str, str, str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_")}
    env.update(WHEYPOINT_HOME=str(folder / "home"), WHEYPOINT_PROJECT="bench")
    rows = {}
    for label, intent in _intents().items():
        done = subprocess.run([sys.executable, "-m", "wheypoint", "checkpoint", "-", "--no-note"], cwd=folder,
                              input=json.dumps(intent).encode(), env=env, capture_output=True, check=False)  # fmt: skip
        if done.returncode:
            raise SystemExit(f"the {label} checkpoint was refused: {done.stdout.decode()[:500]}")
        work_id = json.loads(done.stdout)["work_id"]
        with sqlite3.connect(folder / "home" / "store.sqlite3") as conn:
            [(revision_id, column, text)] = conn.execute(
                "SELECT revision_id, record_digest, record_json FROM revisions WHERE work_id = ?", (work_id,)
            ).fetchall()
        rows[label] = (work_id, revision_id, column, text)
    return rows


def _time(reads: int, read: object) -> float:
    start = time.perf_counter()
    for _ in range(reads):
        read()  # type: ignore[operator]
    return (time.perf_counter() - start) / reads


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--reads", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        rows = _store(Path(scratch))
    print(f"record check, median over {args.rounds} rounds of {args.reads} reads (python {sys.version.split()[0]})")
    print("| record | bytes | json.loads | loads + check | check alone | ratio |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for label, (work_id, revision_id, column, text) in rows.items():
        assert intact(work_id, revision_id, column, text) is not None
        base, checked = [], []
        for _ in range(args.rounds):
            base.append(_time(args.reads, lambda text=text: json.loads(text)))
            checked.append(_time(args.reads, lambda r=(work_id, revision_id, column, text): intact(*r)))
        b, c = statistics.median(base), statistics.median(checked)
        print(f"| {label} | {len(text.encode()):,} | {b * 1e6:,.1f} us | {c * 1e6:,.1f} us | "
              f"{(c - b) * 1e6:,.1f} us | {c / b:.2f}x |")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
