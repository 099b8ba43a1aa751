"""False positives of the credential scan on ordinary source code: real files scanned line by line, hits per MB."""

# The sources are what this machine has offline: the Python standard library, the site-packages .py files and
# the JavaScript of the installed harness CLIs (WHEYPOINT_E2E_CACHE, default /root/.cache/wheypoint-e2e/clis).
# Each source is read in a fixed order (sorted paths) up to --mb megabytes; each line is scanned as one text
# (a prompt that pastes code pastes lines).  Hits are listed as `rule: context` with the matched value replaced
# by [REDACTED:<rule>]; none of these files should hold a live credential, so every hit is a false positive to
# inspect (test fixtures holding example keys are the exception, and are named so in the listing).
#
#   python3 bench/credential_codefp.py [--mb 20] [--show 40]

from __future__ import annotations

import argparse
import os
import sys
import sysconfig
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from wheypoint.model.credentials import scan_text  # noqa: E402


def sources() -> dict[str, list[Path]]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    site = Path(sysconfig.get_paths()["purelib"])
    clis = Path(os.environ.get("WHEYPOINT_E2E_CACHE", "/root/.cache/wheypoint-e2e/clis")) / "node_modules"
    return {
        "python stdlib": sorted(p for p in stdlib.rglob("*.py") if "site-packages" not in p.parts),
        "site-packages": sorted(site.rglob("*.py")),
        "CLI JavaScript": sorted(p for p in clis.rglob("*.js") if p.is_file()) if clis.is_dir() else [],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--mb", type=float, default=20.0, help="megabytes read from each source")
    ap.add_argument("--show", type=int, default=40, help="hits listed per source")
    ap.add_argument("--max-line", type=int, default=4000, help="longer lines (minified bundles) are cut in pieces")
    args = ap.parse_args()
    print("| source | files | MB | lines | hits | hits per MB | seconds |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    listings: dict[str, list[str]] = {}
    for label, files in sources().items():
        size = lines = hits = used = 0
        rules: Counter[str] = Counter()
        listing: list[str] = []
        start = time.perf_counter()
        for path in files:
            if size >= args.mb * 1e6:
                break
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            used += 1
            size += len(text.encode("utf-8", "surrogatepass"))
            for line in text.splitlines():
                for at in range(0, max(len(line), 1), args.max_line):
                    piece = line[at : at + args.max_line]
                    lines += 1
                    found = scan_text(piece)
                    for h in found:
                        hits += 1
                        rules[h.rule] += 1
                        lo, hi = max(0, h.start - 50), min(len(piece), h.end + 30)
                        context = piece[lo : h.start] + f"[REDACTED:{h.rule}]" + piece[h.end : hi]
                        listing.append(f"- `{h.rule}` {path.name}: {context.strip()[:160]!r}")
        seconds = time.perf_counter() - start
        mb = size / 1e6
        print(f"| {label} | {used} | {mb:.1f} | {lines} | {hits} | {hits / max(mb, 1e-9):.2f} | {seconds:.0f} |")
        listings[label] = [f"rules: {dict(rules.most_common())}", *listing[: args.show]]
    print()
    for label, listing in listings.items():
        print(f"### {label}\n")
        print("\n".join(listing))
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
