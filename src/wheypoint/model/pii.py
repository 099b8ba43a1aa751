"""Personal data in handoff text: payment card numbers, US social security numbers and phone numbers.

Seed 0 keeps personal data out of a note as it keeps credentials out: text that holds any of these is refused
(`pii-found`, through rules.secret_problem) or, where the caller asked for it or no agent is there to rewrite it
(a meat turn's `redact`, the PreCompact rescue), kept with each finding replaced by `[redacted <rule>]`.

- `pii-card-number`: 13 to 19 digits, bare or in the usual groups of one separator (space or hyphen), that pass
  the Luhn check and start with a prefix some card network issues for that length. The processors' published
  test numbers are no one's card and are left alone.
- `pii-us-ssn`: `AAA-GG-SSSS` (or with spaces), and nine bare digits right after "SSN" or "social security
  number"; numbers the SSA never issues (area 000, 666 or 900-999, group 00, serial 0000) and the few famous
  specimen numbers are left alone.
- `pii-phone-number`: a number written with its country code (`+44 20 7946 0958`, or `+` and 11 to 15 bare
  digits), a North American number with its area code in a separated form (`(AAA) EEE-LLLL`, `AAA-EEE-LLLL`,
  `AAA.EEE.LLLL`), or any 7 to 15 digit number right after a word that announces one ("phone", "mobile", "call me
  at", ...).
  The North American 555-0100 to 555-0199 numbers, kept for fiction, are left alone in every form.

E-mail addresses are not a rule: they fill pasted `git log` output and commit trailers, and counted on the real
prompts of ../shared/corpus a rule would refuse 0.76% of them (docs/credentials.md, "Personal data").
"""

from __future__ import annotations

from wheypoint.model.records import Record
from wheypoint.patterns import compiled as regex

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Iterator
    from typing import Any

__all__ = ["PiiHit", "redact_spans", "scan_pii"]


class PiiHit(Record):
    rule: str
    start: int
    end: int


# Kept as text and compiled by `re` on first use (its cache): text with fewer than seven digits never needs them.
_CARD = r"(?<![\w.@/+-])\d(?:[ -]?\d){12,18}(?![\w@]|[.,/-]\d)"
_SSN = r"(?<![\w.@/+-])(\d{3})([- ])(\d{2})\2(\d{4})(?![\w@]|[.,/-]\d)"
_SSN_NAMED = (
    r"(?i)\b(?:ssn|social security(?: number| no\.?)?)\s*(?:#|no\.?|number)?\s*(?:is|was|:|=|-)?\s*(\d{9})(?!\w)"
)
_PHONE_PLUS = r"(?<![\w)+\]])\+[1-9]\d{0,2}(?:[ .-]?\(\d{1,4}\)|[ .-]?\d{1,8}){1,6}(?![\w@]|[.,/-]\d)"
_PHONE_NANP = (  # (area) or area then its separator, the exchange, the same separator (any after a bracket), the line
    r"(?<![\w.@/+-])(?:1[ .-]?)?(?:\(([2-9]\d\d)\) ?|([2-9]\d\d)([.-]))([2-9]\d\d)(?(3)\3|[ .-]?)(\d{4})"
    r"(?![\w@]|[.,/-]\d)"
)
_PHONE_NAMED = (
    r"(?i)\b(?:phone|telephone|tel|mobile|cell(?:phone)?|whatsapp|fax|sms|call me|text me|reach me|my number)"
    r"(?: (?:number|no\.?|#))?(?: is| at| on|:| -)? ?(\+?\(?\d[\d ().-]{5,22}\d)(?![\w@]|[.,/-]\d)"
)
# The processors' documented test card numbers (Visa, Mastercard, Amex, Discover, Diners, JCB, UnionPay).
_TEST_CARDS = frozenset((
    "4242424242424242", "4111111111111111", "4000056655665556", "4012888888881881", "4222222222222",
    "5555555555554444", "5200828282828210", "5105105105105100", "2223003122003222", "378282246310005",
    "371449635398431", "6011111111111117", "6011000990139424", "3056930009020004", "36227206271667",
    "3566002020360505", "6200000000000005", "30569309025904", "38520000023237",
))  # fmt: skip
_SPECIMEN_SSNS = frozenset(("078051120", "219099999", "123456789"))


def luhn_valid(digits: str) -> bool:
    """The Luhn check every card number carries in its last digit."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char) * (2 if position % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def issued_prefix(digits: str) -> bool:
    """Whether a card network issues numbers of this length starting with these digits (Visa, Mastercard, Amex,
    Discover, JCB, Diners Club, UnionPay, Maestro, Mir)."""
    length, two, three, four = len(digits), int(digits[:2]), int(digits[:3]), int(digits[:4])
    if digits[0] == "4":
        return length in (13, 16, 19)
    if 51 <= two <= 55 or 2221 <= four <= 2720:
        return length == 16
    if two in (34, 37):
        return length == 15
    if 2200 <= four <= 2204 or 3528 <= four <= 3589 or two in (62, 65) or four == 6011 or 644 <= three <= 649:
        return 16 <= length <= 19
    if 300 <= three <= 305 or two in (36, 38, 39) or three == 309:
        return 14 <= length <= 19
    return (two == 50 or 56 <= two <= 69) and 12 <= length <= 19  # Maestro


_CARD_LAYOUTS = frozenset(((4, 4, 4, 4), (4, 4, 4, 4, 3), (4, 6, 5), (4, 6, 4), (4, 4, 4, 1), (4, 4, 4, 2),
                           (4, 4, 4, 3), (4, 4, 5)))  # fmt: skip


# A run of digits and the separators numbers are written with, long enough for the shortest rule (11 characters):
# the rules below are tried only inside these runs, so text full of short numbers costs one pass.
_RUN = r"[+(\d][\d .()-]{9,}\d"
_NAMED_WORDS = ("ssn", "social", "phone", "tel", "mobile", "cell", "whatsapp", "fax", "sms", "call me", "text me",
                "reach me", "my number")  # fmt: skip


def _in_runs(pattern: str, text: str, runs: list[tuple[int, int]]) -> Iterator[re.Match[str]]:
    """`pattern`'s matches inside each run; the two characters after a run are in view of its lookahead."""
    compiled = regex(pattern)
    for start, end in runs:
        yield from compiled.finditer(text, start, min(len(text), end + 2))


def _cards(text: str, runs: list[tuple[int, int]]) -> Iterator[PiiHit]:
    for match in _in_runs(_CARD, text, runs):
        found = match.group()
        separators = {char for char in found if not char.isdigit()}
        if len(separators) > 1:
            continue
        groups = tuple(len(part) for part in regex(r"[ -]").split(found))
        if separators and groups not in _CARD_LAYOUTS:
            continue
        digits = found.replace(" ", "").replace("-", "")
        if len(set(digits)) > 1 and digits not in _TEST_CARDS and luhn_valid(digits) and issued_prefix(digits):
            yield PiiHit("pii-card-number", match.start(), match.end())


def _ssn_issued(area: str, group: str, serial: str) -> bool:
    return (area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"
            and area + group + serial not in _SPECIMEN_SSNS)  # fmt: skip


def _ssns(text: str, runs: list[tuple[int, int]], named: bool) -> Iterator[PiiHit]:
    for match in _in_runs(_SSN, text, runs):
        if _ssn_issued(match.group(1), match.group(3), match.group(4)):
            yield PiiHit("pii-us-ssn", match.start(), match.end())
    for match in regex(_SSN_NAMED).finditer(text) if named else ():
        number = match.group(1)
        if _ssn_issued(number[:3], number[3:5], number[5:]):
            yield PiiHit("pii-us-ssn", match.start(1), match.end(1))


def _phones(text: str, runs: list[tuple[int, int]], named: bool) -> Iterator[PiiHit]:
    for match in _in_runs(_PHONE_PLUS, text, runs):
        found = match.group()
        digits = "".join(char for char in found if char.isdigit())
        plain = found[1:].isdigit()
        paired = found.replace(") ", ")").replace(" (", "(")  # only ` (` and `) ` may pair
        doubled = regex(r"[ .()-]{2}").search(paired)
        fiction = digits.startswith("1") and digits[4:9] == "55501"  # +1 AAA 555-01xx
        if (11 if plain else 10) <= len(digits) <= 15 and not doubled and not fiction:
            yield PiiHit("pii-phone-number", match.start(), match.end())
    for match in _in_runs(_PHONE_NANP, text, runs):
        area = match.group(1) or match.group(2)
        exchange, line = match.group(4), match.group(5)
        if area[1:] != "11" and exchange[1:] != "11" and not (exchange == "555" and line.startswith("01")):
            yield PiiHit("pii-phone-number", match.start(), match.end())
    for match in regex(_PHONE_NAMED).finditer(text) if named else ():
        number = match.group(1)
        if 7 <= sum(char.isdigit() for char in number) <= 15 and "555-01" not in number:
            yield PiiHit("pii-phone-number", match.start(1), match.end(1))


def _enough_digits(text: str) -> bool:
    """Seven digits at least: every rule needs them, and most text has far fewer (a quick refusal of the rest)."""
    return len(text) >= 7 and sum(map(text.count, "0123456789")) >= 7


def scan_pii(text: str) -> list[PiiHit]:
    """Every card number, social security number and phone number in a text, by start; overlaps kept once (the
    rule listed first wins: card, then SSN, then phone)."""
    if not _enough_digits(text):
        return []
    runs = [match.span() for match in regex(_RUN).finditer(text)]
    lower = text.lower()
    named = any(word in lower for word in _NAMED_WORDS)
    kept: list[PiiHit] = []
    for hit in (*_cards(text, runs), *_ssns(text, runs, named), *_phones(text, runs, named)):
        if all(hit.end <= other.start or hit.start >= other.end for other in kept):
            kept.append(hit)
    return sorted(kept, key=lambda hit: (hit.start, hit.end))


def redact_spans(text: str, mark: str = "[redacted {rule}]") -> tuple[str, list[dict[str, Any]]]:
    """Every credential and every personal datum outside them replaced by `mark` naming its rule: the text, and
    where every marker now stands in it (`{rule, start, end}`, in order). The rest is kept byte for byte."""
    from wheypoint.model.credentials import redactable, replace_hits

    credentials = redactable(text)
    hits = [*credentials, *(hit for hit in scan_pii(text)
                            if all(hit.end <= c.start or hit.start >= c.end for c in credentials))]  # fmt: skip
    return replace_hits(text, sorted(hits, key=lambda hit: hit.start), mark)
