"""The proximity rule: a secret-looking word a few words from a secret's name in a sentence, whatever joins them."""

# The prose rules of credential_hand.py each know one way a sentence joins a secret's name to its value ("is", ":",
# "as the", a value on the next line).  People find new ones faster than rules can be written: "`K`: `V`",
# "K... V", "V — K, prod only", "did the K (V) leak?", "when it asks for the K, type V".  This rule does not read
# the joining words at all.  It takes each word within a few words of the name, after it (on its line or the next)
# or before it (on its line), and keeps the first that reads as a secret by the value alone, under a stricter
# judgment than the linked rules use, since nothing in the sentence vouches for it:
#   - a name saying password (pass, pwd, pw, psk): a chosen password (credential_values.looks_like_password);
#   - any other name (token, secret, key, credentials): a random string of 12+ characters, or a chosen value
#     holding a symbol people pick;
#   - never code (a call, an index, a member chain, markup, an assignment, a flag, a variable), never what the words
#     next to it name as something else ("the token's commit 3f9a..."), never a placeholder.
# It runs last of the prose rules, so it only adds where none of them found the value.

from __future__ import annotations

from wheypoint.model.credential_values import (
    CHAIN_SRC,
    is_password_name,
    is_placeholder_password,
    is_reference,
    looks_like_password,
    looks_random,
    words_after,
)
from wheypoint.patterns import compiled as regex

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Iterator

AFTER = 8  # words that may stand between the name and a value after it
BEFORE = 4  # ... and between a value and the name after it

# A value as it stands among words: quotes, backticks, brackets or markdown emphasis may wrap it, and a full stop,
# comma, colon or semicolon may close the sentence after it ("!" and "?" stay in it: people end passwords so).
_WRAP = r"[\"'`(\[*]{0,3}"
_VALUE = r"(?P<v>[^\s\"'`()\[\]]{8,}?)(?=\*{0,3}[\"'`)\]]|\*{0,3}[.,;:…]{0,3}(?:\s|$))"
# Between two words: spaces, or line breaks (two at most: a quoted block, a list, a label with its value below).
_GAP = r"(?:[ \t]*(?:\r?\n(?:[ \t]*>)?){1,2}[ \t]*|[ \t]+)"

# Characters no chosen or generated secret holds in running text, and shapes that are code or a reference.  This and
# the other patterns here are compiled on their first use, by the accessors below: a scan that never reaches the
# rule (most texts hold no secret's name) pays nothing for them.
_CODE_SRC = (
    r"[(){}\[\]<>\\|]"  # a call, an index, markup, a regular expression, a pipe
    r"|^--?[A-Za-z][A-Za-z0-9-]*(?:=|$)|^\$[A-Za-z_{(]"  # a flag (--token-file) or a variable ($X)
    r"|^(?:[a-z_][a-z0-9_.-]{2,}|[A-Z_][A-Z0-9_.-]{2,}|[a-z]+(?:[A-Z][a-z]+)+)[:=]"  # a name and an assignment
    r"|://|^[~.]?/|^~[A-Za-z_][\w.]*$|^\.\."  # a URL, a path, a reference (~module.Class, ..module)
    r"|;$"  # a statement's end (references: credential_values.is_reference)
    r"|^[A-Za-z][a-z]{2,}(?:[/._-][A-Za-z][a-z]{2,})+$"  # words joined by a mark (object/source, read-only)
)

# Nouns that say the value next to the name is something else than the secret.
_RENAMING = frozenset(
    {"commit", "sha", "hash", "hashed", "digest", "checksum", "uuid", "id", "ids", "fingerprint", "version", "path",
     "file", "filename", "url", "link", "branch", "tag", "variable", "var", "field", "header", "column",
     "prefix", "public", "format", "length", "name", "count", "size", "issue", "pr", "ticket", "line",
     "example", "sample", "regex", "pattern", "function", "method", "class", "module", "test", "user", "username",
     "login", "email", "account", "host", "hostname", "port", "table", "bucket", "endpoint", "scope", "role",
     "policy", "arn", "label", "key-id", "kid", "alg", "algorithm", "expiry", "ttl", "salt"}
)  # fmt: skip

# (a name ends its word, and is no code: `pwd.getpwuid`, `token(`, `Credential=`)
_NAME_END = r"(?:s|'s|’s)?(?![A-Za-z0-9_(]|\.\w|[ \t]*=)"
# A name in running text starts a word: after a space, a quote, a bracket or markdown, never inside an identifier
# (`AWS::SecretsManager::Secret`, `db.password`, `API_TOKEN`).
_WORD_START = r"(?<![^\s\"'`*(\[>|])"

# What may stand between a value and its name after it: marks ("V — K", "V <- K", "V (K)") and linking words
# ("V, that's the K", "V is our K"); other words make it a sentence about something else ("X for short passwords").
_BACK_LINKS = frozenset({"is", "was", "as", "that's", "thats", "that", "it's", "its", "it", "the", "our", "my", "your",
                         "new", "old", "current", "into", "still", "now", "also", "just", "probably", "really",
                         "actually"})  # fmt: skip
_MARKS = frozenset("—–-<>=→←:,;(")
# Words that are no part of a secret's name: "X for short passwords", "X uses the password".
_NOT_MODIFIERS = frozenset({"for", "and", "or", "of", "with", "to", "in", "on", "at", "by", "from", "uses", "use",
                            "using", "than", "when", "if", "not", "no", "all", "any", "some", "can", "will", "should",
                            "must", "this", "these", "those", "a", "an"})  # fmt: skip


def _after(names: str, words: int) -> re.Pattern[str]:
    # the name, the rest of its word (`token`: or password...), then exactly `words` words, then the value
    return regex(
        _WORD_START + r"(?P<k>(?i:" + names + r"))" + _NAME_END + r"(?P<tail>\S{0,6}?)"
        r"(?P<g>(?:" + _GAP + r"\S+){" + str(words) + r"})" + _GAP + _WRAP + _VALUE
    )


def _before(names: str, words: int) -> re.Pattern[str]:
    # the value, then exactly `words` words (the last may hold an opening bracket or a mark), then the name
    return regex(
        r"(?<![^\s\"'`(\[*])" + _WRAP + r"(?P<v>[^\s\"'`()\[\]*]{8,}?)[\"'`)\]*]{0,3}[.,;:!?…]{0,3}"
        r"(?P<g>(?:[ \t]+\S+){" + str(words) + r"})[ \t]+[\"'`(\[*]{0,3}(?:the[ \t]+|our[ \t]+|my[ \t]+)?"
        r"(?:[A-Za-z'’-]{1,20}[ \t]+){0,3}?" + _WORD_START + r"(?P<k>(?i:" + names + r"))" + _NAME_END
    )


class Near:
    """The compiled patterns for one set of names: one per count of words in between, in each direction."""

    def __init__(self, names: str) -> None:
        self.name = regex(r"(?i:" + names + r")" + _NAME_END)
        self.after = [_after(names, n) for n in range(AFTER + 1)]
        self.before = [_before(names, n) for n in range(BEFORE + 1)]

    def matches(self, text: str, at: int) -> Iterator[re.Match[str]]:
        """Every candidate value near the name that starts at `at`: after it first, nearest first."""
        if regex(_WORD_START).match(text, at) is None or self.name.match(text, at) is None:
            return  # inside an identifier (input_tokens, db.password), or no name here
        for pattern in self.after:
            m = pattern.match(text, at)
            if m is not None:
                yield m
        lo = max(text.rfind("\n", 0, at) + 1, at - 160)
        if regex(_BACK_HINT_SRC).search(text, lo, at) is None:
            return  # no mark or linking word before the name: no value before it is linked to it
        for pattern in self.before:
            for m in pattern.finditer(text, lo, min(len(text), at + 40)):
                if m.start("k") == at:
                    yield m


# What must stand before a name for it to start a word (the patterns' own _WORD_START, tried once before them all),
# and what must stand in the words before a name for a value before it to be linked to it (_linked_back decides for
# certain).
_BACK_HINT_SRC = r"[—–<>=→←:,;(-]|(?i:\b(?:is|was|as|that|it|its|it's|into)\b)"


def _words(text: str) -> list[str]:
    return [w.strip(".,:;!?()'`\"*").lower() for w in text.split()]


def _renamed(m: re.Match[str]) -> bool:
    """True when a word between the name and the value, or next to the value on its far side, names it otherwise."""
    start, end = m.span("v")
    if start > m.start("k"):  # the name, then the value: "the token's commit 3f9a...", "K is V as the commit"
        near = _words((m.group("tail") or "") + " " + (m.group("g") or ""))
        near += _words(" ".join(words_after(m.string, end, 3)))
    else:  # the value, then the name: "the commit 3f9a... (the token's)"
        near = _words(m.group("g") or "") + _words(m.string[max(0, start - 40) : start])[-2:]
        closing = regex(r"[),;.\n]").split(m.string[m.end() : m.end() + 40], maxsplit=1)[0]
        near += _words(closing)[:3]  # "(the K commit)"
        if not _linked_back(m.string[end : m.start("k")]):
            return True  # nothing links the value to the name after it: the sentence is about something else
    return any(w in _RENAMING for w in near)


def _linked_back(between: str) -> bool:
    """True when the words between a value and the name after it link the two: a mark or a linking word, then at
    most three words of the name ("V — laptop login password", "V, that's the K", "V (our K)")."""
    linked, modifiers = False, 0
    for word in between.split():
        if all(c in ".!?…" for c in word):
            return False  # the sentence ended
        bare = word.strip("\"'`*()[].,;:!?").lower()
        if not bare.strip("".join(_MARKS)) or bare in _BACK_LINKS:
            if modifiers:
                return False  # a link after words of the name
            linked = True
            continue
        if not linked or bare in _NOT_MODIFIERS or not bare.replace("-", "").replace("'", "").isalpha():
            return False
        modifiers += 1
    return linked and modifiers <= 3


def _verb_pass(m: re.Match[str]) -> bool:
    """A bare "pass" in running text is mostly the verb ("tests pass", "pass it to"): never taken as a name here."""
    return m.group("k").lower() == "pass"


# An identifier in snake_case or CONSTANT_CASE: code, however random its parts look (pkcs7_signed_st, PBKDF2_HMAC).
_IDENTIFIER_SRC = r"_*[a-z0-9]+(?:_+[a-z0-9]+)+_*|_*[A-Z0-9]+(?:_+[A-Z0-9]+)+_*"


def _in_code(m: re.Match[str]) -> bool:
    """True when the stretch between the name and the value is code: a list of quoted strings, or lines of it.

    The stretch may break one line, and only right before the value ("new K below\\nV", "> K\\n> V")."""
    lo, hi = (m.end("k"), m.start("v")) if m.start("v") > m.start("k") else (m.end("v"), m.start("k"))
    between = m.string[lo:hi]
    if regex(r"[\"'][ \t]*,").search(between):
        return True
    if "\n" in between:
        if not between.strip(" \t\r\n>:\"'`*(-—–"):
            return False  # a label, then the value alone below it (_GAP allows a blank line between at most)
        head, _, last = between.rpartition("\n")
        return "\n" in head or last.strip(" \t>\"'`*(") != ""
    return False


def check(m: re.Match[str]) -> bool:
    """Judge a candidate of Near.matches by the value alone, under the strict rules above."""
    value = m.group("v")
    if _verb_pass(m) or regex(_CODE_SRC).search(value) or regex(CHAIN_SRC).match(value) or is_reference(value):
        return False
    if is_placeholder_password("", value):
        return False
    if regex(_IDENTIFIER_SRC).fullmatch(value) or _in_code(m):
        return False
    if _renamed(m):
        return False
    if is_password_name(m.group("k")):
        return looks_like_password(value)
    if len(value) < 20 and all(c in "0123456789abcdefABCDEF" for c in value):
        return False  # a short hex string is a digest or an id far more often than a key
    # (a chosen value: a symbol people pick, `?`, `=` and `+` among them here, since no name or path holds them)
    return looks_random(value, min_len=12) or (regex(r"[!@#$%^&*~?=+]").search(value) is not None
                                               and looks_like_password(value))  # fmt: skip
