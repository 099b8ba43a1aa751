"""Recall: how many of the prompts another tool extracted from the corpus sessions come out as user turns.

Each `entire-*.prompts.md` beside a Claude Code corpus session is an independent extraction (the Entire CLI's)
of that session's prompts. It is cruder than wanted: besides what the person typed it lists `<bash-stdout>`
output, skill expansions, compaction summaries, task notifications and interruptions. So every entry is matched
to the turn holding it (exact text, else whitespace-normalised containment, since prompts.md cuts long prompts
with "..."), and the report lists the entries that did not come out as a user turn, with the kind they got, so
that a reader can judge each one. Nothing is judged here by the rules under test.

    python3 bench/prompt_recall.py
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "claude-code"
sys.path.insert(0, str(ROOT / "src"))

from wheypoint.transcripts import claude  # noqa: E402 - after the path to this checkout's sources
from wheypoint.transcripts.model import USER_KINDS, ReadStats, Turn  # noqa: E402


def _normalise(text: str) -> str:
    return " ".join(text.split())


def _match(prompt: str, turns: list[Turn]) -> Turn | None:
    ranked = sorted(turns, key=lambda t: (t.kind not in USER_KINDS, t.position))
    for turn in ranked:
        if turn.text == prompt:
            return turn
    wanted = _normalise(prompt[:-3] if prompt.endswith("...") else prompt)
    for turn in ranked:
        if wanted and wanted in _normalise(turn.text):
            return turn
    return None


def main() -> int:
    if not CORPUS.is_dir():
        print(f"{CORPUS} is absent", file=sys.stderr)
        return 2
    entries = as_user = 0
    others: list[str] = []
    user_turns: Counter[str] = Counter()
    for listing in sorted(CORPUS.glob("entire-*.prompts.md")):
        session = listing.with_name(listing.name.replace(".prompts.md", ".jsonl"))
        turns = list(claude.read_turns(session, ReadStats()))
        user_turns.update(t.kind for t in turns if t.kind in USER_KINDS)
        text = listing.read_text(encoding="utf-8")
        prompts = [p.rstrip("\n") for p in re.split(r"^### Prompt \d+\n\n", text, flags=re.M)[1:]]
        for number, prompt in enumerate(prompts, 1):
            entries += 1
            turn = _match(prompt, turns)
            if turn is not None and turn.kind in USER_KINDS:
                as_user += 1
                continue
            kind = turn.kind if turn is not None else "not found"
            head = _normalise(prompt)[:70]
            others.append(f"  {session.name} prompt {number}: {kind}: {head}")
    print(f"prompts.md entries: {entries}; came out as user turns: {as_user}; as another kind or not found: "
          f"{entries - as_user} (listed, to judge by eye):")  # fmt: skip
    print("\n".join(others))
    print("user turns in these sessions by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(user_turns.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
