"""The note-forging property of tests/test_note_forging.py with many more examples than CI runs, and its figures.

    python bench/forging_fuzz.py [--examples 20000] [--notes 3000] [--seed 20] [--before REV]

Runs the property (arbitrary Unicode, every line terminator, bidi and zero-width character, Markdown and
CommonMark openers and raw HTML in every field, verbatim quotes and meat; markdown-it-py in CommonMark mode is an
oracle beside notes/parse.py and the published reader) through pytest with `WHEYPOINT_FUZZ_EXAMPLES` set, and
reports how many examples ran, how many failed, and the wall time. Then it renders `--notes` seeded notes with
hostile fields (raw HTML of every form, setext underlines, rules, fences, link definitions, backticks) with this
tree's src/ and with `--before`'s (default: the tree before markdown-it-py became the oracle), and counts the
notes CommonMark reads HTML in (`html_block`, `html_inline`) and the notes with a heading the renderer did not
write. The report goes to bench/results/forging_fuzz.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HTML = ["<img src=x onerror=alert(1)>", "<script>alert(1)</script>", '<a href="javascript:alert(1)">x</a>',
        "<!-- hidden -->", "<?php echo 1; ?>", "<![CDATA[ x ]]>", "<!DOCTYPE html>", "<javascript:alert(1)>",
        "<div>", "</div>", "<b>bold</b>", "<br/>", "<pre>", "<style>", "<textarea>", "<iframe src=x>"]  # fmt: skip
BLOCKS = ["-", "--", "---", "=", "===", "  -  ", "\t=", "***", "___", "* * *", "- - -", "```", "~~~", "# h",
          "## Identifiers", "> # h", "- # h", "1. ```", "[x]: /u", "`", "``", "> q", "- item"]  # fmt: skip
WORDS = ["Identifiers", "Keep it", "x", "plain words", "a < b", "`code <b>`", "\\", "\u27ea"]


def hostile(rng: random.Random) -> str:
    """A text of 1-5 pieces joined by newlines or spaces: raw HTML, block openers and words."""
    pieces = [rng.choice(rng.choice((HTML, BLOCKS, WORDS))) for _ in range(rng.randint(1, 5))]
    return "".join(piece + rng.choice(("\n", " ", "")) for piece in pieces).strip(" ") or "x"


def count_notes(count: int, seed: int) -> dict[str, int]:
    """Render `count` notes with hostile fields; how many CommonMark reads HTML or an extra heading in."""
    sys.path.insert(0, str(ROOT / "tests"))
    from markdown_it import MarkdownIt

    from test_note_forging import valid_intent
    from wheypoint.model.kernel import Provenance, apply
    from wheypoint.notes.render import render

    rng = random.Random(seed)
    reader = MarkdownIt("commonmark")
    html = headings = 0
    for _ in range(count):
        keys = ("orientation", "arg", "text", "rationale", "quote", "notes", "context")
        texts = {key: hostile(rng) for key in keys}
        texts["orientation"] = " ".join(texts["orientation"].split())  # one line: intake refuses the rest anyway
        intent = valid_intent(texts, rng.random() < 0.5)
        prov = Provenance(project_key="shop", captured_at="2026-12-01T10:00:00Z",
                          meat=({"turn": "t1", "type": "constraint", "weight": 2, "kind": "prompt",
                                 "timestamp": None, "text": hostile(rng), "harness": "codex",
                                 "session_id": "s1"},))  # fmt: skip
        note = render(apply(None, intent, prov).record)
        tokens = reader.parse(note)
        every = [*tokens, *(child for token in tokens for child in token.children or [])]
        html += any(t.type in ("html_block", "html_inline") for t in every)
        written = {line for line in note.split("\n") if line.startswith(("# ", "## ", "### "))}
        found = [(t.markup, note.split("\n")[t.map[0]]) for t in tokens if t.type == "heading_open" and t.map]
        headings += any(not markup.startswith("#") or line not in written for markup, line in found)
    return {"notes": count, "html": html, "headings": headings}


def before_tree(rev: str | None, folder: Path) -> tuple[str, Path]:
    """The src/ of `rev` (default: the parent of the commit that made markdown-it-py a test dependency)."""
    if rev is None:
        added = subprocess.run(["git", "log", "--format=%H", "-S", '"markdown-it-py>=3"', "--", "pyproject.toml"],
                               cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
        rev = f"{added[-1]}^" if added else "HEAD"
    commit = subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip()  # fmt: skip
    archive = subprocess.run(["git", "archive", commit, "src"], cwd=ROOT, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return commit, folder / "src"


def counted(src: Path, count: int, seed: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run([sys.executable, __file__, "--count-only", str(count), "--seed", str(seed)], cwd=ROOT,
                          env=env, capture_output=True, text=True, check=False)  # fmt: skip
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:]}
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20000)
    parser.add_argument("--notes", type=int, default=3000, help="seeded hostile notes to count HTML in (0: none)")
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--before", default=None, help="the revision to count against (default: see above)")
    parser.add_argument("--count-only", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.count_only is not None:
        print(json.dumps(count_notes(args.count_only, args.seed)))
        return 0
    env = {**os.environ, "WHEYPOINT_FUZZ_EXAMPLES": str(args.examples)}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--hypothesis-show-statistics",
         "tests/test_note_forging.py::test_no_text_can_forge_the_note"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    seconds = time.monotonic() - started
    passing = next((line.strip() for line in done.stdout.splitlines() if " passing examples, " in line), "?")
    verdict = "0 failures" if done.returncode == 0 else "FAILED"
    report = (f"# Note forging fuzz\n\n- examples asked: {args.examples}\n- Hypothesis: {passing}\n"
              f"- verdict: {verdict}\n- wall time: {seconds:.0f} s\n")  # fmt: skip
    if args.notes:
        with tempfile.TemporaryDirectory() as scratch:
            commit, old = before_tree(args.before, Path(scratch))
            then, now = counted(old, args.notes, args.seed), counted(ROOT / "src", args.notes, args.seed)
        for name, figures in ((f"at {commit}", then), ("this tree", now)):
            if "error" in figures:
                report += f"- hostile notes {name}: could not be counted: {figures['error']}\n"
                continue
            report += (
                f"- hostile notes {name} (seed {args.seed}): CommonMark reads HTML in {figures['html']} "
                f"of {figures['notes']}, a heading the renderer did not write in {figures['headings']}\n"
            )
    if done.returncode != 0:
        report += "\n```\n" + done.stdout[-4000:] + "\n```\n"
    out = ROOT / "bench" / "results" / "forging_fuzz.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report, encoding="utf-8")
    print(report)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
