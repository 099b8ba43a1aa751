"""Seed 0's house style in a note's prose: no em-dashes, complete sentences, one sentence per line.

`style_findings(text)` gives advisory findings (never gating, never a refusal), each detail opening with its line
number, for generated and hand-written notes alike. What counts as prose:

- Code is never judged: fenced blocks (the user's verbatim words sit in them) and code spans are taken out first.
- `style-em-dash`: an em-dash (U+2014) anywhere else, the preamble and blockquotes included.
- `style-sentences-per-line`: a line of prose or a list item holding more than one sentence. A sentence ends at
  `.`, `!` or `?` (a closing quote, bracket or emphasis mark may follow) before a space and a capital letter;
  common abbreviations (`e.g.`, `i.e.`, `vs.`, `Dr.`, ...) and capital initials do not end one, and a bold label
  opening the line (`**Goal.**`) is not a sentence of its own.
- `style-incomplete-sentence`: a paragraph of prose whose last line does not end with `.`, `!`, `?` or `:`, nor
  with a pointer (a path, a file name, a URL or `PR#<n>`, as in `**Suggested skills.** /cook specs/retry.md`).
  Headings, list items, tables, HTML comments, the preamble and blockquotes (quoted matter and the runtime's
  banners) are not paragraphs of prose.
"""

from __future__ import annotations

import re

from wheypoint.model.errors import ADVISORY, Finding

EM_DASH = "\u2014"
CODES = ("style-em-dash", "style-sentences-per-line", "style-incomplete-sentence")

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:\s|$)")
_ITEM = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
_BOUNDARY = re.compile(r"(\S+?)[.!?][\"')\]*_]*\s+[\"'(*_]*[A-Z]")
_ABBREVIATIONS = frozenset(("e.g", "i.e", "etc", "vs", "cf", "mr", "mrs", "ms", "dr", "st", "no", "approx", "fig"))
# A bold label opening a line (`**Goal.** ...`, seed 0's body parts) names the part; it is not a sentence.
_LABEL = re.compile(r"^(?:\*\*|__)[^*_]{1,48}?[.:](?:\*\*|__)\s*")
# A line that ends on a path, a URL or a PR is a pointer (`**Suggested skills.** /cook specs/a.md`), not prose.
_POINTER = re.compile(r"(?:\S*/\S*|\S+\.[A-Za-z0-9]{1,8}|PR#\d+)$")
_ENDS_SENTENCE = re.compile(r"[.!?:][\"')\]*_]*$")


def style_findings(text: str) -> list[Finding]:
    """Every house-style warning for a note, in line order (see the module docstring)."""
    lines = text.replace("\r\n", "\n").split("\n")
    findings: list[Finding] = []
    preamble = _preamble_end(lines)
    fence: str | None = None
    paragraph: tuple[int, str] | None = None  # the last line of the prose paragraph being read
    for index, raw in enumerate(lines):
        number = index + 1
        opened = _FENCE.match(raw)
        if fence is not None or opened:
            if fence is None and opened:
                fence = opened.group(1)[0]
            elif opened and opened.group(1)[0] == fence:
                fence = None
            _close(paragraph, findings)
            paragraph = None
            continue
        line = _CODE_SPAN.sub("", raw)
        if EM_DASH in line:
            findings.append(_finding("style-em-dash", number, "an em-dash; write a comma, a colon or two sentences"))
        stripped = line.strip()
        quoted = stripped.startswith(">")
        if index < preamble or not stripped or quoted or _HEADING.match(line) or stripped.startswith(("|", "<!--")):
            _close(paragraph, findings)
            paragraph = None
            continue
        if _sentences(stripped) > 1:
            findings.append(_finding("style-sentences-per-line", number, "more than one sentence on the line; "
                                     "put each sentence on a line of its own"))  # fmt: skip
        if _ITEM.match(line):
            _close(paragraph, findings)
            paragraph = None
        elif paragraph is None and raw.startswith((" ", "\t")):
            continue  # an item's continuation line
        else:
            paragraph = (number, stripped)
    _close(paragraph, findings)
    return findings


def _finding(code: str, number: int, detail: str) -> Finding:
    return Finding(code, ADVISORY, f"line {number}: {detail}")


def _close(paragraph: tuple[int, str] | None, findings: list[Finding]) -> None:
    """Judge the prose paragraph that just ended by its last line (one that ends on a pointer is not prose)."""
    if paragraph is not None and not _ENDS_SENTENCE.search(paragraph[1]) and not _POINTER.search(paragraph[1]):
        findings.append(_finding("style-incomplete-sentence", paragraph[0], "the paragraph does not end a sentence "
                                 "(no closing `.`, `!`, `?` or `:`)"))  # fmt: skip


def _sentences(line: str) -> int:
    """How many sentences a line holds, by the boundaries between them."""
    count = 1
    for match in _BOUNDARY.finditer(_LABEL.sub("", _ITEM.sub("", line), count=1)):
        word = match.group(1).lstrip("\"'(*_")
        if word.lower() in _ABBREVIATIONS or (len(word) == 1 and word.isupper()):
            continue
        count += 1
    return count


def _preamble_end(lines: list[str]) -> int:
    """Where a bare preamble ends (its first blank line), or 0 when the note opens with something else."""
    first = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    if first == len(lines) or not re.match(r"^[a-z][a-z_]*[ \t]*:", lines[first]):
        return 0
    return next((i for i in range(first, len(lines)) if not lines[i].strip()), len(lines))
