"""False positives of the personal-data scan (model/pii.py): real prompts, every transcript string, source code.

The same sources the credential benches read: the user turns of ../shared/corpus and tests/data/recorded (as
bench/credentials_eval.py extracts them), every JSON string of those transcripts (tool output, assistant text),
and source code line by line (bench/credential_codefp.py's files: the standard library, site-packages and the
harness CLIs' JavaScript when installed). None of them should hold a real card, SSN or phone number of anyone,
so every hit is listed, its value replaced by [REDACTED:<rule>], to be judged by a person. The e-mail line counts
what an e-mail rule would refuse (model/pii.py has none; docs/credentials.md says why).

    python3 bench/pii_eval.py [--mb 20] [--show 30]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from credential_codefp import sources  # noqa: E402
from credentials_eval import CORPUS, all_strings, transcripts, user_turns  # noqa: E402
from wheypoint.model.pii import PiiHit, scan_pii  # noqa: E402

EMAIL = re.compile(r"(?<![\w.+-])[\w.%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w-])")


def context(text: str, hit: PiiHit) -> str:
    lo, hi = max(0, hit.start - 50), min(len(text), hit.end + 30)
    return (text[lo : hit.start] + f"[REDACTED:{hit.rule}]" + text[hit.end : hi]).replace("\n", "\\n")[:170]


def measure(label: str, texts: Iterable[str], show: int, emails: bool = False) -> None:
    count = flagged = chars = with_email = 0
    rules: Counter[str] = Counter()
    listing: list[str] = []
    start = time.perf_counter()
    for text in texts:
        count += 1
        chars += len(text)
        hits = scan_pii(text)
        if hits:
            flagged += 1
            for hit in hits:
                rules[hit.rule] += 1
                listing.append(f"- `{hit.rule}`: {context(text, hit)!r}")
        if emails and EMAIL.search(text):
            with_email += 1
    seconds = time.perf_counter() - start
    rate = flagged / max(count, 1)
    print(f"| {label} | {count} | {chars / 1e6:.2f} | {flagged} | {rate:.3%} | {dict(rules)} | {seconds:.1f} |")
    if emails:
        print(f"|  ... an e-mail rule would flag | {count} | | {with_email} | {with_email / max(count, 1):.3%} | | |")
    listings.append((label, listing[:show]))


listings: list[tuple[str, list[str]]] = []


def code_lines(files: list[Path], mb: float, max_line: int = 4000) -> Iterable[str]:
    size = 0
    for path in files:
        if size >= mb * 1e6:
            return
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        size += len(text.encode("utf-8", "surrogatepass"))
        for line in text.splitlines():
            for at in range(0, max(len(line), 1), max_line):
                yield line[at : at + max_line]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--mb", type=float, default=20.0, help="megabytes of code read from each source")
    ap.add_argument("--show", type=int, default=30, help="hits listed per source")
    args = ap.parse_args()
    print("| source | texts | MB | flagged | rate | rules | seconds |")
    print("|---|---:|---:|---:|---:|---|---:|")
    if CORPUS.is_dir():
        files = transcripts()
        extract: Callable[[Path], Iterable[str]]
        for label, extract, emails in (("corpus user turns", user_turns, True),
                                       ("corpus, every string", all_strings, False)):  # fmt: skip
            measure(label, (text for path in files for text in extract(path)), args.show, emails)
    for label, paths in sources().items():
        if paths:
            measure(f"{label} (lines)", code_lines(paths, args.mb), args.show)
    print()
    for label, listing in listings:
        print(f"### {label}\n")
        print("\n".join(listing) or "(no hits)")
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
