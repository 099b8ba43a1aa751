"""What a secret value looks like: placeholders and allow-listed values, chosen passwords, random strings."""

# The credential rules (credential_hand.py) find where a value stands; this module judges the value itself.

from __future__ import annotations

import math
from functools import cache

from wheypoint.patterns import compiled as regex

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

_AWS_DOC_VALUES = frozenset({"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"})


_PLACEHOLDER_PASSWORDS = frozenset(
    {"password", "passwd", "pass", "pwd", "pw", "secret", "pa55word", "passw0rd", "p@ssw0rd", "p@ssword"}
)


def is_placeholder_password(user: str, password: str) -> bool:
    return password.lower() in _PLACEHOLDER_PASSWORDS or password == user


def is_password_name(name: str) -> bool:
    """True when a secret's name says password: pass, pwd, pw or psk (what a chosen password may stand under)."""
    low = name.lower()
    return "pass" in low or "pwd" in low or regex(r"(?<![a-z])(?:pw|psk)(?![a-z])").search(low) is not None


def looks_like_password(value: str) -> bool:
    """A value a person chose as a password: 8+ characters mixing three classes, or random-looking."""
    if len(value) < 8 or regex(_NOT_SECRET_SRC).search(value):
        return False
    classes = (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() for c in value)
    )
    # three classes, unless the value is mostly words: identifiers such as deploy-cache-main_42 mix three too.  A word
    # with digits and a symbol no identifier holds (Bluebird$3427, tangerine.1069!) is a person's pick all the same.
    if classes >= 3 and not _wordy(value, regex(_WORD_SRC), 0.6):
        return True
    if classes >= 3 and regex(PICKED_SRC).search(value) and not regex(CHAIN_SRC).match(value):
        return True
    return looks_random(value, min_len=8)


# A symbol people add to a password and identifiers, paths and versions do not hold (`-`, `_`, `.`, `/` they do).
PICKED_SRC = r"[!@#$%^&*~]"
# code: a member chain such as marked$1.walkTokens, private fields too (this.#pendingAccessToken)
CHAIN_SRC = r"[A-Za-z_$][\w$]*(?:\.#?[A-Za-z_$][\w$]*)+;?$"

# A reference in code, not a value: a member chain that reads as one (two dots or more, a private field, `this.`,
# `self.`), an annotation (@__PURE__), a negation (!certChain, !!token2).  A chain of one dot (Kestrel.x92,
# tangerine.aB3) may be a password a person chose, so it is one only where code is the likelier reading: unquoted on
# the right of an assignment, with a last name in camelCase (key: ed25519.Ed25519PrivateKey).
# Both are compiled on their first use (_reference_patterns): most scans never judge a value.
_REFERENCE = (r"(?:(?=[^.]*\.[^.]*\.)|(?=.*\.#)|(?=(?:this|self|cls)\.))" + CHAIN_SRC
              + r"|@[A-Za-z_]\w*$|!+[A-Za-z_$][\w$.]*$")  # fmt: skip
_CAMEL_CHAIN = r"(?=.*\.#?[A-Za-z_$]\w*[a-z][A-Z])" + CHAIN_SRC


@cache
def _reference_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    return regex(_REFERENCE), regex(_CAMEL_CHAIN)


def is_reference(value: str, camel: bool = False) -> bool:
    """True when the value is a name in code (a member chain, an annotation, a negation) rather than a secret;
    with `camel`, also a chain of one dot whose last name is in camelCase."""
    reference, camel_chain = _reference_patterns()
    return reference.match(value) is not None or (camel and camel_chain.match(value) is not None)


# --- allow-list -----------------------------------------------------------------------------------

_PLACEHOLDER_SRC = (
    r"(?i:example|dummy|placeholder|change[-_]?me|redacted|(?<![A-Za-z0-9])your[-_])"
    r"|<[^<>]*>"
    r"|\$\{|^\$[A-Za-z_]|^\{[^{}\s]+\}|%(?:[A-Z_][A-Z0-9_]*|[a-z_][a-z0-9_]*)%(?![A-Za-z0-9])|\{\{|\}\}|^\{[A-Za-z0-9_.]*\}$"
    r"|%(?:\([A-Za-z0-9_]+\))?s"
    r"|[xX*0]{8,}|[xX*]{4,}$|^[*•]+$|^[xX]{3}$"  # masked: user:***@host
    r"|\.\.\.|…"
)


def words_after(text: str, at: int, count: int) -> list[str]:
    """The next `count` words of `at`'s line, each whole however many spaces stand before it (what the words next
    to a value name it as: "V as the commit")."""
    words = regex(r"(?:[^\S\n]*\S+){0," + str(count) + "}").match(text, at)  # (none at the end: "")
    return words.group().split()  # type: ignore[union-attr]  # zero words match anywhere


def is_allowlisted(value: str) -> bool:
    if value in _AWS_DOC_VALUES:
        return True
    return regex(_PLACEHOLDER_SRC).search(value) is not None


# --- "looks random" heuristic ----------------------------------------------------------------------

_NOT_SECRET_SRC = (
    r"\(|\)|\[$"  # a call: getpass(), os.getenv(...)
    r"|\[[^\]]*\]|\\[dwsbDWSB]"  # an index or a regular expression: tokens[i], [0-9A-F]{1,4}, \d+
    r"|^[a-z][a-z0-9+.-]*://"  # a URL (credentials in URLs are url-password's job)
    r"|^\d{4}-\d\d-\d\d|^\d\d?:\d\d"  # a date or a time
    r"|^v?\d+\.\d+(?:\.\d+)?(?:[-+.][A-Za-z0-9.]*)?$"  # a version number
)
_PATH_SRC = r"(?P<rel>~|\.\.?|[A-Za-z]:)?[/\\]"

# Letter runs as identifiers split them: Capitalised or lower-case runs, ALL-CAPS runs.
_WORD_SRC = r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])"

# Frequent English letter pairs (255 of the 676).  Random letters hit this set about 38% of the
# time; the letters of words, identifiers and passphrases hit it far more often.
_BIGRAM_TEXT = (
    "th he in er an re on at en nd ti es or te of ed is it al ar st to nt ng se ha as ou io le ve co me de hi "
    "ri ro ic ne ea ra ce li ch ll be ma si om ur ca el ta la ns di fo ho pe ec pr no ct us ac ot il tr ly nc "
    "et ut ss so rs un lo wa ge ie wh ee wi em ad ol rt po we na ul ni ts mo ow pa im mi ai sh ir su id os iv "
    "ia am fi ci vi pl ig tu ev ld ry mp fe bl ab gh ty op wo sa ay ex ke fr oo av ag if ap gr od bo sp rd do "
    "uc bu ei ov by qu ck ow wn ox um ps br ok ey pp tt ff rr mm nn cc ml ym ue ga gi hu ub ys fu ph og ms ye "
    "ud mb ip rl gu dr hr tw ft nu af vo rv nf xp gn sm fl iz nl my gl aw ju sy sl jo lf nv nk kn gs dy hy "
    "ks xt lu go ht ru ug ds lt pi rc eg au ew mu bi pt ak pu ui rg ib tl ny ki rk ob ba cl cr cu da dd ef ep "
    "fa oc oi rm rn sc up va wr yo ua ls"
)
_COMMON_BIGRAMS = frozenset(_BIGRAM_TEXT.split())


def _wordy(value: str, word_re: re.Pattern[str], share: float) -> bool:
    """True when most of value is made of English-looking words (identifiers, paths, passphrases)."""
    covered = 0
    for run in word_re.findall(value):
        if len(run) < 3:
            continue
        low = run.lower()
        common = sum(low[i : i + 2] in _COMMON_BIGRAMS for i in range(len(low) - 1))
        if common >= 0.65 * (len(low) - 1):
            covered += len(run)
    return covered >= share * len(value)


def shannon(value: str) -> float:
    counts: dict[str, int] = {}
    for c in value:
        counts[c] = counts.get(c, 0) + 1
    n = len(value)
    return -sum(k / n * math.log2(k / n) for k in counts.values())


def looks_random(value: str, min_len: int) -> bool:
    """True when value reads like a generated secret rather than a word, a path, a name or code."""
    if len(value) < min_len:
        return False
    word_re = regex(_WORD_SRC)
    if regex(_NOT_SECRET_SRC).search(value):
        return False
    has_lower = any(c.islower() for c in value)
    has_upper = any(c.isupper() for c in value)
    has_digit = any(c.isdigit() for c in value)
    has_other = any(not c.isalnum() for c in value)
    if not (has_lower or has_upper) or has_lower + has_upper + has_digit + has_other < 2:
        return False  # one class only (a word, a number), or no letters at all (ids, dates)
    # Half a short value in word-like runs reads as words; a long random value reaches half by chance (three
    # random letters look like a word one time in seven), so long values need more of it.
    if _wordy(value, word_re, 0.5 if len(value) < 32 else 0.65):
        return False
    path = regex(_PATH_SRC).match(value)
    if path and (path["rel"] or _wordy(value, word_re, 0.25) or value.rfind(".") > len(value) - 6):
        return False  # a relative path, or an absolute one with words in it or a file extension
    # Shannon entropy against the best a string of this length and alphabet could reach: random
    # values sit near it, structured ones (timestamps, repeated patterns) well below.
    if all(c in "0123456789abcdefABCDEF-" for c in value):
        alphabet = 16
    else:
        alphabet = 26 * has_lower + 26 * has_upper + 10 * has_digit + 16 * has_other
    best = math.log2(min(alphabet, len(value)))
    return shannon(value) >= 0.62 * best if alphabet == 16 else shannon(value) >= 0.7 * best
