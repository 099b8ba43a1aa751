"""The textual shapes of ids and names, defined once for the contract and for lookups alike."""

from __future__ import annotations

# A slug names the note file, so the names Windows reserves for devices (`con.md` opens the console there) are
# not slugs on any system: a note must be readable wherever the checkout is cloned.
RESERVED_SLUGS = frozenset(
    ("con", "prn", "aux", "nul", *(f"com{n}" for n in range(10)), *(f"lpt{n}" for n in range(10)))
)
SLUG_PATTERN = r"^(?!(?:con|prn|aux|nul|com[0-9]|lpt[0-9])$)[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$"
WORK_ID_PATTERN = r"^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?\.[0-9a-f]{8}$"
REVISION_ID_PATTERN = r"^rev-[0-9a-f]{16}$"
ENTRY_ID_PATTERN = r"^[dqbvo]-[0-9a-f]{12}$"
LABEL_PATTERN = r"^[a-z][a-z0-9_-]{0,31}$"
DIGEST_PATTERN = r"^sha256:[0-9a-f]{64}$"

# Each pattern's shape in words, for the refusal a value that misses it gets (`bad-format`).
PATTERN_SHAPES = {
    SLUG_PATTERN: "a slug: 1 to 48 of a-z, 0-9 and -, not starting or ending with -, and not a device name "
    "Windows reserves (con, prn, aux, nul, com0-9, lpt0-9)",
    WORK_ID_PATTERN: "a work id: <slug>.<8 lowercase hex digits>, e.g. retry-backoff.1a2b3c4d",
    REVISION_ID_PATTERN: "a revision id: rev- and 16 lowercase hex digits, e.g. rev-0123456789abcdef",
    ENTRY_ID_PATTERN: "an entry id: d-, q-, b-, v- or o- and 12 lowercase hex digits, e.g. d-0123456789ab",
    LABEL_PATTERN: "a label: a lowercase letter, then up to 31 of a-z, 0-9, _ and -",
    DIGEST_PATTERN: "a digest: sha256: and 64 lowercase hex digits",
}

# Seed 0's calibrated tags, a decision's or directive's `confidence`: here, where the note's reader and writer
# find them without loading the whole contract.
CONFIDENCE_TAGS = ("certain", "speculating", "don't know")

# Seed 3's meat types: what a turn copied into a record is (`--type`), and what an author trailer may name.
MEAT_TYPES = ("constraint", "rejected", "correction", "thread", "learning", "pivot", "question")

# The harnesses whose transcripts wheypoint reads; a record's session may also name "other".
READABLE_HARNESSES = ("claude-code", "codex", "opencode", "gemini")

# The keys of a note's preamble (`status: ...`, `next: ...`), lowercase, in their usual order.
PREAMBLE_KEYS = (
    "status",
    "next",
    "mode",
    "artifact",
    "order",
    "session",
    "git",
    "created",
    "parents",
    "baseline",
    "parallel",
    "tasks",
    "wheypoint",
)


_SLUG_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
_HEX_DIGITS = frozenset("0123456789abcdef")


def is_work_id(text: str) -> bool:
    """Whether a reference has a work id's shape (`<slug>.<8 hex>`) rather than a slug's: `re.match` of
    WORK_ID_PATTERN (whose `$` lets one final newline through), told by string tests (held to the pattern by a
    property test in tests/test_validation.py), so that reading a record's references needs no `re`."""
    if "." not in text:
        return False
    name, _, tail = (text[:-1] if text.endswith("\n") else text).rpartition(".")
    return (len(tail) == 8 and _HEX_DIGITS.issuperset(tail) and 0 < len(name) <= 48
            and _SLUG_CHARACTERS.issuperset(name) and name[0] != "-" and name[-1] != "-")  # fmt: skip


def is_slug(text: str) -> bool:
    """Whether a text is a slug (SLUG_PATTERN): 1 to 48 of [a-z0-9-], no dash at either end, not reserved."""
    return (0 < len(text) <= 48 and _SLUG_CHARACTERS.issuperset(text) and text[0] != "-" and text[-1] != "-"
            and text not in RESERVED_SLUGS)  # fmt: skip


def reserved_slug_message(slug: str) -> str:
    """Why a device name is no slug, in the words a refusal gives (the rule is RESERVED_SLUGS)."""
    devices = "CON, PRN, AUX, NUL, COM0-COM9, LPT0-LPT9"
    where = f"a note named {slug}.md could not be opened in a checkout cloned there"
    return f"{slug!r} is a device name Windows reserves ({devices}): {where}; add a word, e.g. {slug}-work"


def count_of(text: object) -> int | None:
    """A count written on a command line or in a hook's line, or None when `text` is not one.

    ASCII digits only (`'²'.isdigit()` holds, yet int() refuses it), and at most nine of them: no count means
    more, and thousands of digits would take Python's int() seconds before it refused them.
    """
    if not (isinstance(text, str) and text.isascii() and text.isdigit() and len(text) <= 9):
        return None
    return int(text)
