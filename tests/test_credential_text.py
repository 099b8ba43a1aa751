"""The credential scan reads text through every invisible character the note escapes, and searches long text right."""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import pytest

from credential_formats import FORMATS, texts
from wheypoint.model import credential_text, credentials
from wheypoint.model.characters import INVISIBLE
from wheypoint.model.credential_text import WINDOW
from wheypoint.model.credentials import CredentialHit, scan_text

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


def test_a_telegram_token_is_found_among_many_numbers() -> None:
    """The Telegram rule is tried at each run of 8+ digits ending at a colon, however many other numbers there are."""
    value = FORMATS["telegram-bot-token"][0](random.Random(3))
    numbers = " ".join(str(10_000_000 + 7919 * i) for i in range(200))
    text = f"{numbers}\nthe bot token is {value}\n{numbers}"
    hits = scan_text(text)
    assert [(h.rule, text[h.start : h.end]) for h in hits] == [("telegram-bot-token", value)]


def test_a_hex_shape_rule_still_fires_among_many_words_of_its_shape() -> None:
    """Past a few distinct 32-hex-digit words the newer Mailgun rule searches the whole text instead of each word."""
    value = FORMATS["mailgun-api-key-v2"][0](random.Random(5))
    hashes = " ".join(f"{(7919 * i) ** 9:032x}"[-32:] for i in range(1, 60))
    text = f"{hashes}\nmailgun: {value}\n{hashes}"
    hits = scan_text(text)
    assert [(h.rule, text[h.start : h.end]) for h in hits] == [("mailgun-api-key-v2", value)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("bot 123456789:{t} here", "123456789:{t}"),  # 9 digits
        ("bot 1234567890:{t} here", "1234567890:{t}"),  # 10 digits
        ("bot 12345678:{t}", "12345678:{t}"),  # 8 digits, at the end of the text
        ("12345678:{t}", "12345678:{t}"),  # at the start of the text
        ("bot 12345678901:{t} here", None),  # 11 digits: not a bot id
        ("bot x12345678:{t} here", None),  # not at a word start
        ("bot 1234567:{t} here", None),  # 7 digits
    ],
)
def test_telegram_token_edges(text: str, expected: str | None) -> None:
    body = "AAH" + "x7Kq2" * 6 + "Zp"  # 35 characters, upper, lower and digits
    text, want = text.format(t=body), expected and expected.format(t=body)
    assert [text[h.start : h.end] for h in scan_text(text) if h.rule == "telegram-bot-token"] == (
        [want] if want else []
    )


@pytest.mark.parametrize(
    ("prefix", "found"),
    [(" ", True), ("\n", True), ("(", True), ("x", False), ("_", False), ("é", False)],
    ids=["space", "newline", "bracket", "letter", "underscore", "non-ASCII letter"],
)
def test_discord_token_among_dotted_names(prefix: str, found: bool) -> None:
    """Dotted names with a six-letter middle part (self.client.get) are everywhere in code: the token still shows."""
    value = FORMATS["discord-bot-token"][0](random.Random(8))
    noise = "self.client.get(x); os.module.attr; a.bcdefg.hijklmnopqrstuvwxyzabcdefghij\n" * 300
    text = f"{noise}bot{prefix}{value} ok\n{noise}"
    hits = [text[h.start : h.end] for h in scan_text(text) if h.rule == "discord-bot-token"]
    assert hits == ([value] if found else [])


def _everywhere(text: str, monkeypatch: pytest.MonkeyPatch) -> list[CredentialHit]:
    """The scan with every rule searched over the whole text: no anchoring at keywords, no shape positions."""
    compiled = credentials._compiled()
    with monkeypatch.context() as patch:
        for rule in compiled.rules:
            patch.setattr(rule, "anchored", False)
            patch.setattr(rule, "whole", True)

        def whole_text_shapes(haystack: credential_text.Haystack, shapes: dict[str, list[int] | None]) -> None:
            shapes[credential_text.SHAPE_TELEGRAM] = shapes[credential_text.SHAPE_DISCORD] = None

        patch.setattr(credential_text, "_token_shapes", whole_text_shapes)
        return scan_text(text)


def test_the_fast_paths_miss_nothing_a_whole_text_search_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Anchored rules (tried only where a keyword occurs) and shape positions find every hit the plain search does.

    Over every format in both forms, each text alone and all of them joined with code-like filler between; the
    fast paths may find more (a match that starts inside another one), never less.
    """
    rng = random.Random(20261201)
    samples = [text for name in FORMATS for form in ("prose", "assignment") for text, _ in texts(name, rng, form)]
    # tokens glued to what precedes them: the plain search finds them inside the longer run and their checks say no
    for name in ("discord-bot-token", "telegram-bot-token", "mailgun-api-key", "vault-token"):
        value = FORMATS[name][0](rng)
        samples += [f"id x{value} ok", f"id _{value} ok", f"id -{value} ok", f"id 7{value} ok", f"id é{value} ok"]
    filler = "for (i = 0; i < n; i++) self.client.get(key); // tokens: 12345678 s.t. sk is ok\n"
    joined = "".join(f"{text}\n{filler * rng.randint(0, 3)}" for text in samples)
    assert len(samples) > 400
    for text in [*samples, joined]:
        fast = {(h.rule, h.start, h.end) for h in scan_text(text)}
        plain = {(h.rule, h.start, h.end) for h in _everywhere(text, monkeypatch)}
        assert plain <= fast, text[:200]
    assert len({h.rule for h in scan_text(joined)}) > 40


def _generator() -> object:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    try:
        import gen_credential_rules
    finally:
        sys.path.pop(0)
    return gen_credential_rules


@pytest.mark.parametrize(
    ("pattern", "keywords", "anchored"),
    [
        (r"\b(ghp_[0-9a-zA-Z]{36})\b", ("ghp_",), True),
        (r"(?i)\b((?:sk|rk)_(?:test|live)_[a-z0-9]{10,})", ("sk_test", "sk_live", "rk_test", "rk_live"), True),
        (r"(?i)\b((?:sk|rk)_(?:test|live)_[a-z0-9]{10,})", ("sk_test", "sk_live"), False),  # rk_ has none
        (r"\b((?:hvs\.[\w-]{90}|s\.[a-z0-9]{24}))", ("hvs.", "s."), True),
        (r"[\w.-]{0,50}?(?:adafruit)[ =]+([a-z0-9]{32})", ("adafruit",), False),  # starts before the keyword
        (r"(?:[Mm]eraki)=([a-f0-9]{40})", ("meraki",), True),  # a small set, case folded
        (r"[a-z0-9]{14}\.atlasv1\.[a-z0-9]{60}", ("atlasv1",), False),
        (r"(?<![a-z])AKIA[A-Z2-7]{16}", ("akia",), True),  # a look-behind takes no width
        (r"(?:ab)?cd_[0-9]{8}", ("cd_",), False),  # an optional start: `ab` may be there or not
    ],
)
def test_the_generator_knows_which_rules_start_with_a_keyword(
    pattern: str, keywords: tuple[str, ...], anchored: bool
) -> None:
    assert _generator()._starts_with_keyword(pattern, keywords) is anchored  # type: ignore[attr-defined]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the generator reads TOML with tomllib (Python 3.11+)")
def test_the_generated_rules_are_up_to_date() -> None:
    """credential_rules.py is what tools/gen_credential_rules.py makes from the vendored gitleaks file."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "tools/gen_credential_rules.py", "--check"], cwd=root, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_a_token_that_is_the_whole_text_is_found_whole() -> None:
    """Nothing before or after it: the first and the last character of the text are searched like any other."""
    # These values carry their secret inside (a URL, a header, a connection string): the hit is the secret alone.
    carriers = {"postgres-url-password", "bearer-header", "azure-storage-key"}
    rng = random.Random(4)
    bare = [name for name, (_, _, _, needs_noun) in FORMATS.items() if not needs_noun and name not in carriers]
    assert len(bare) > 25 and "private-key" in bare
    missed = []
    for name in bare:
        value = FORMATS[name][0](rng)
        spans = [(h.start, h.end) for h in scan_text(value)]
        if spans != [(0, len(value))]:
            missed.append((name, spans))
    assert missed == []


@pytest.mark.parametrize(("newline_at", "found"), [(407, True), (408, False)])
def test_a_rule_that_does_not_hold_its_keyword_looks_400_characters_around_it(newline_at: int, found: bool) -> None:
    """Airtable's token does not contain its keyword: it is looked for on the lines within 400 characters of it.

    `airtable` ends at 8, so the window reaches 408: a token on the line starting there is in it, one on the line
    after a newline at 408 is not (docs/credentials.md, "Cost").
    """
    token = "pat" + "Ab3dE5gH7jK9mN" + "." + "0123456789abcdef" * 4
    text = "airtable " + "x" * (newline_at - 9) + "\n" + token + " ok\n"
    assert text[newline_at] == "\n"
    assert ([h.rule for h in scan_text(text)] == ["airtable-personnal-access-token"]) is found


def test_a_window_starts_at_the_start_of_its_first_line() -> None:
    """The keyword sits 580 characters after the token, on the token's line: the window reaches back to that
    line's first character, where the token starts (just after a newline, not at the text's start)."""
    token = "pat" + "Ab3dE5gH7jK9mN" + "." + "0123456789abcdef" * 4
    text = "a" * 50 + "\n" + token + " " + "b" * 500 + " airtable\n"
    assert text.index("airtable") - text.index(token) > WINDOW
    assert [(h.rule, h.start) for h in scan_text(text)] == [("airtable-personnal-access-token", 51)]


def test_windows_that_meet_on_one_line_keep_the_first_one_whole() -> None:
    """Two mentions of the keyword 800 characters apart: the first window reaches the end of the long line the
    second starts on, so the two merge, and the merged window still starts where the first one did."""
    token = "pat" + "Ab3dE5gH7jK9mN" + "." + "0123456789abcdef" * 4
    text = token + "\n" + "airtable " + "y " * 300 + "\n" + "z " * 100 + "airtable\n"
    assert text.rindex("airtable") - text.index("airtable") > 2 * WINDOW
    assert [(h.rule, h.start) for h in scan_text(text)] == [("airtable-personnal-access-token", 0)]


def test_byte_offsets_map_to_character_offsets_across_blocks() -> None:
    """Every character start of a text of 1-, 2-, 3- and 4-byte characters (a lone surrogate too) maps to its index."""
    rng = random.Random(9)
    text = "".join(rng.choice(["a", "é", "語", "\U0001f600", "\ud800", "\n"]) for _ in range(9000))
    haystack = credential_text.Haystack(text)
    starts, at = [], 0
    for char in text:
        starts.append(at)
        at += len(char.encode("utf-8", "surrogatepass"))
    assert haystack.chars(starts) == list(range(len(text)))
    assert credential_text.Haystack("ascii only").chars([0, 3, 9]) == [0, 3, 9]


def _present(text: str) -> set[str]:
    """The needles the standard-library path finds in text."""
    engine = list(credential_text._ENGINE)
    credential_text._ENGINE[:] = [None]
    try:
        return credential_text.present(credentials._compiled().index, credential_text.Haystack(text), {})
    finally:
        credential_text._ENGINE[:] = engine


def test_a_needle_counts_when_it_occurs_at_every_text_size() -> None:
    """Past 64 KB needles are tested on the text's distinct tokens, not the text: the answer is the short text's.

    Each needle of the index is put in a sentence alone, glued to a letter before and after, and inside a token; the
    needles found are the same with 70 KB of other words after it.
    """
    index = credentials._compiled().index
    filler = "plain words of no interest, said twice; plain words of no interest.\n" * 1100
    assert len(filler) > 1 << 16
    for needle in sorted(n for n in index.needles if not n.startswith("\x00")):
        for text in (f"we said {needle} then", f"x{needle}y", f"a.b-{needle}_c:d"):
            assert _present(text) == _present(text + "\n" + filler), (needle, text)
            assert needle in _present(text) or needle in index.head_of, (needle, text)


def test_a_needle_only_its_head_suggests_does_not_count_in_a_long_text() -> None:
    """`live` begins a word, yet `sk_live` is not in the text: no rule keyed on it runs, however long the text."""
    index = credentials._compiled().index
    assert index.head_of.get("sk_live") == ("live", 3)
    text = "a live demo, sk then live again\n" * 3000
    assert len(text) > 1 << 16
    assert "sk_live" not in _present(text)
    assert "sk_live" in _present(text + "sk_live_")
