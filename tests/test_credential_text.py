"""The credential scan reads text through every invisible character the note escapes, and searches long text right."""

from __future__ import annotations

import random
import re

import pytest

from credential_formats import FORMATS
from wheypoint.model.characters import INVISIBLE
from wheypoint.model.credentials import scan_text

# One of each kind in characters.INVISIBLE that the scan's first list (soft hyphen, zero-width space, non-joiner,
# joiner, word joiner, BOM) did not hold: grapheme joiner, Arabic letter mark, bidi mark, override and isolate,
# invisible operator, Hangul filler, interlinear annotation, musical format control, tag characters.
MARKS = ["\u034f", "\u061c", "\u200e", "\u202e", "\u2066", "\u2062", "\u3164", "\ufff9", "\U0001d173", "\U000e0041"]


@pytest.mark.parametrize("mark", MARKS, ids=[f"U+{ord(c):04X}" for c in MARKS])
def test_every_invisible_character_inside_a_token_is_seen_through(mark: str) -> None:
    assert re.fullmatch(f"[{INVISIBLE}]", mark)  # the single definition holds it
    value = FORMATS["github-classic-pat"][0](random.Random(mark))
    hidden = value[:5] + mark + value[5:12] + mark + mark + value[12:]
    text = f"é {mark}pushed with {hidden} yesterday{mark}"  # no word naming a secret: only the token's own rule
    hits = scan_text(text)
    assert [h.rule for h in hits] == ["github-pat"]
    start = text.index(hidden)
    assert (hits[0].start, hits[0].end) == (start, start + len(hidden))  # offsets in the text as given


def test_offsets_stay_exact_in_long_text_with_wide_characters() -> None:
    """Needles are searched on UTF-8 bytes; offsets must still be character offsets, across many 4 KB blocks."""
    rng = random.Random(12)
    filler = "naïve café — résumé 日本語 \U0001f600 line of prose about nothing much\n"
    tokens = [FORMATS["github-classic-pat"][0](rng), FORMATS["aws-access-key-id"][0](rng)]
    pieces: list[str] = []
    for i in range(40):
        pieces.append(filler * rng.randint(5, 60))
        pieces.append(f"api_key = {tokens[i % 2]}\n")
    text = "".join(pieces)
    hits = scan_text(text)
    starts = [m.start() for m in re.finditer("|".join(map(re.escape, tokens)), text)]
    assert [h.start for h in hits] == starts
    assert all(text[h.start : h.end] in tokens for h in hits)


def test_a_shape_rule_still_fires_among_many_words_of_its_shape() -> None:
    """Past a few distinct 8-10 digit runs the Telegram rule searches the whole text instead of each run."""
    value = FORMATS["telegram-bot-token"][0](random.Random(3))
    numbers = " ".join(str(10_000_000 + 7919 * i) for i in range(200))
    text = f"{numbers}\nthe bot token is {value}\n{numbers}"
    hits = scan_text(text)
    assert [(h.rule, text[h.start : h.end]) for h in hits] == [("telegram-bot-token", value)]
