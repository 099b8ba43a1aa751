"""The credential scan's rule table: each rule's needles, pattern and judge in priority order, made on first use."""

# credentials.py runs the scan; this module says what it runs. The table is derived from the rule modules alone
# (credential_hand.py, the generated credential_rules.py, and the needle lists below), so it is kept beside the
# start-up image once built (patterns.kept), with the needle index (credential_text.NeedleIndex): a write loads
# both rather than walking some 250 rules, and imports the hand-written rules only when one of them runs.

from __future__ import annotations

import marshal

from wheypoint.model.credential_text import SHAPE_DISCORD, SHAPE_HEX32, SHAPE_SID34, SHAPE_TELEGRAM
from wheypoint.patterns import ASCII
from wheypoint.patterns import compiled as regex
from wheypoint.patterns import kept as kept_table

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable
    from types import ModuleType

    from wheypoint.model.credential_near import Near

# Words that occur inside longer identifiers (dbPassword, githubToken): looked for anywhere in the text.
COMMON_WORDS = frozenset(
    {"pass", "pwd", "password", "passwd", "secret", "token", "key", "api", "access", "auth", "authorization",
     "credential", "creds", "client", "private", "aws", "mysql", "mariadb", "sshpass", "docker", "curl",
     "signing", "encryption", "sig"}
)  # fmt: skip

# The first words of what a sentence calls a secret (credential_hand._PROSE_KEYWORDS).  Words as common in prompts
# as "session" or "master" are looked for only as part of the name ("session key", "master_key").
_PROSE_NEEDLES = (
    "pass", "pwd", "pw", "psk", "secret", "token", "api", "access", "credential", "creds", "hmac", "encryption",
    "signing", "license", "unseal", "decryption", "fernet", "recovery", "cookie", "jwt",
    *(f"{word}{sep}key" for word in ("private", "session", "master", "webhook", "app", "aes", "root", "admin", "shared",
                                     "account", "storage", "service") for sep in (" ", "_", "-", "")),
)  # fmt: skip

# Hand-written rules: literal strings (lower case), one of which must occur for the rule to be able to match.
_NEEDLES: dict[str, tuple[str, ...]] = {
    "private-key": ("private key",),
    "gcp-service-account": ("private_key_id",),
    "jwt": ("eyj",),
    "discord-bot-token": (SHAPE_DISCORD,),
    "telegram-bot-token": (SHAPE_TELEGRAM,),
    "mailgun-api-key": ("key-",),
    "mailgun-api-key-v2": (SHAPE_HEX32,),
    "vault-token": ("hvs.", "hvb.", "hvr."),
    "new-relic-user-key": ("nrak-",),
    "twilio-account-sid": (SHAPE_SID34,),
    "aws-secret-access-key": ("aws", "secret"),
    "aws-key-pair": ("akia", "asia"),
    "discord-webhook": ("discord",),
    "anthropic-api-key": ("sk-ant-",),
    "openai-api-key": ("sk-",),
    "slack-token": ("xox",),
    "pypi-token": ("pypi-",),
    "gitlab-token": ("glpat-", "gldt-", "glrt-", "glptt-", "gloas-"),
    "npm-token": ("_authtoken=", "npm_"),
    "azure-storage-key": ("accountkey=", "sharedaccesskey="),
    "azure-sas-signature": ("sig=",),
    "putty-private-key": ("putty-user-key-file-",),
    "tailscale-key": ("tskey-",),
    "docker-hub-pat": ("dckr_",),
    "supabase-secret-key": ("sb_secret_",),
    "stripe-webhook-secret": ("whsec_",),
    "figma-token": ("figd_", "figo_", "figu_"),
    "notion-token": ("ntn_",),
    "flyio-token": ("flyv1",),
    "okta-api-token": ("ssws",),
    "curl-user": ("curl",),
    "authorization-header": ("authorization",),
    "url-password": ("://",),
    "high-entropy-assignment": ("pass", "secret", "token", "api", "access", "auth", "client", "private"),
    "password-flag": ("mysql", "mariadb", "sshpass", "--password", "docker", "curl"),
    "prose-secret": _PROSE_NEEDLES,
    "prose-secret-after": _PROSE_NEEDLES,
    "prose-secret-bare": _PROSE_NEEDLES,
    "prose-secret-near": _PROSE_NEEDLES,
    "piped-secret": ("echo", "printf"),
}

# Hand-written rules whose every match starts with one of its needles: they are tried only at the needles'
# occurrences (re.match there), so their cost follows how often the word occurs, not the length of the text.
_ANCHORED = frozenset(
    {
        "aws-secret-access-key",
        "authorization-header",
        "high-entropy-assignment",
        "password-flag",
        "prose-secret",
        "prose-secret-bare",
        "piped-secret",
        "azure-sas-signature",
        "tailscale-key",
        "docker-hub-pat",
        "supabase-secret-key",
        "stripe-webhook-secret",
        "figma-token",
        "notion-token",
        "flyio-token",
        "okta-api-token",
        "curl-user",
    }
)

# Hand-written rules searched over the whole text: a PEM block may be longer than a window, and the others
# start with a literal, which re finds fast.  Rules with a shape needle are tried where a word of that shape is.
_WHOLE_TEXT = frozenset({"private-key", "putty-private-key", "new-relic-user-key", "vault-token"})

# A gitleaks rule every match of which starts with one of its keywords (the generator works that out from the
# pattern) is tried only where a keyword occurs, like the anchored hand-written rules.  Any other is searched over
# the whole text when its pattern starts with a literal (re finds a literal prefix fast), else only near each
# occurrence of its keywords (credential_text.WINDOW).


class Rule:
    """One rule ready to run: its id, priority, needles, pattern source and how to judge a match."""

    __slots__ = ("allow", "anchored", "check", "entropy", "flags", "group", "kind", "needles", "priority", "rule_id",
                 "src", "stopwords", "whole")  # fmt: skip

    def __init__(self, rule_id: str, priority: int, needles: tuple[str, ...], src: str, flags: int) -> None:
        self.rule_id, self.priority, self.needles, self.src, self.flags = rule_id, priority, needles, src, flags
        self.kind = "hand"
        self.check: Callable[[re.Match[str]], bool] | None = None
        self.group = 0
        self.entropy = 0.0
        self.allow: tuple[tuple[str, str], ...] = ()
        self.stopwords: tuple[str, ...] = ()
        self.whole = True
        self.anchored = False


# A rule as the table keeps it: id, needles, pattern source, flags, kind (`hand` or `gitleaks`), the value's group,
# the entropy floor, the allow rules and stop words (gitleaks'), whether it is searched over the whole text, and
# whether it is tried only where one of its needles starts.
_Row = tuple[str, tuple[str, ...], str, int, str, int, float, tuple[tuple[str, str], ...], tuple[str, ...], bool,
             bool]  # fmt: skip
_Table = tuple[list[_Row], dict[str, list[int]], tuple[str, ...], tuple[str, ...]]


def _rule_table() -> _Table:
    """The rules in priority order, which rules each needle gates, and gitleaks' global allow rules and stop words:
    built from the rule modules, and kept beside the start-up image (see `Compiled`)."""
    from wheypoint.model import credential_hand as hand
    from wheypoint.model import credential_rules as generated

    def own(rule_id: str, src: str) -> _Row:
        return (rule_id, _NEEDLES[rule_id], src, 0, "hand", 0, 0.0, (), (), rule_id in _WHOLE_TEXT,
                rule_id in _ANCHORED)  # fmt: skip

    rows = [own(rule_id, src) for rule_id, src, _ in hand.PATTERNS]
    for rule_id, src, group, entropy, keywords, allow, stopwords, starts_with_keyword in generated.RULES:
        whole = "[\\s\\S" in src or "(?s" in src or src[:1].isalnum()
        rows.append((rule_id, keywords, src, ASCII, "gitleaks", group, entropy, allow, stopwords, whole,
                     starts_with_keyword or rule_id in _ANCHORED))  # fmt: skip
    rows += [own(rule_id, src) for rule_id, src, _ in hand.GENERIC]
    by_needle: dict[str, list[int]] = {}  # needle -> priorities of the rules it gates
    for priority, row in enumerate(rows):
        for needle in row[1]:
            by_needle.setdefault(needle, []).append(priority)
    return rows, by_needle, generated.GLOBAL_ALLOW, generated.GLOBAL_STOPWORDS


# The table as it is kept: each row marshalled on its own, so a scan unmarshals only the rows of the rules its text's
# needles call (a text holding ` s.` calls one rule of some 250), then the needle map and gitleaks' global lists.
_Kept = tuple[tuple[bytes, ...], dict[str, list[int]], tuple[str, ...], tuple[str, ...]]


def _kept_table() -> _Kept:
    rows, by_needle, global_allow, global_stopwords = _rule_table()
    return tuple(marshal.dumps(row) for row in rows), by_needle, global_allow, global_stopwords


def _sound_table(value: object) -> bool:
    """Whether a kept value has the kept table's shape (its containers; what is in them was built by this module,
    and a row that does not load as a row is made again from the rule modules: `Compiled.row`)."""
    return (isinstance(value, tuple) and len(value) == 4 and type(value[0]) is tuple and type(value[1]) is dict
            and type(value[2]) is tuple and type(value[3]) is tuple and len(value[0]) > 0
            and all(type(row) is bytes for row in value[0]))  # fmt: skip


# What the table is built from (the rows, and how they are made): its version names these files' sizes and times
# (patterns.kept), so an upgrade, which leaves the kept file behind, never meets a table its old build kept.
_SOURCES = ("model/credential_table.py", "model/credential_hand.py", "model/credential_rules.py")
TABLE_VERSION = "1"  # (raised when the table's layout changes in a way its sources' sizes and times would not show)
_ROW_TYPES = (str, tuple, str, int, str, int, float, tuple, tuple, bool, bool)


class Compiled:
    """The rule table, built on first use; each rule is made, and its regex compiled, when it first runs.

    The table (`_rule_table`) and the needle index are derived from this package's source alone, so both are kept
    beside the start-up image once built (patterns.kept): a write then loads them rather than walking some 250
    rules, and imports the hand-written rules' module only when one of them runs. The index is kept under the
    table's own sources, so it is loaded without the table, which only a text holding a needle needs: most
    scans (a prompt, an intent naming no secret) never load the table's rows (about 0.8 ms).
    """

    def __init__(self) -> None:
        from wheypoint.model.credential_text import NeedleIndex

        self._table: list[_Kept] = []
        self._rows: dict[int, _Row] = {}
        self.index = NeedleIndex(lambda: (n for row in self.rows for n in row[1]), COMMON_WORDS, TABLE_VERSION,
                                 _SOURCES)  # fmt: skip
        self.patterns: dict[int, re.Pattern[str]] = {}
        self._made: dict[int, Rule] = {}
        self._near: list[Near] = []

    def _loaded(self) -> _Kept:
        if not self._table:
            self._table.append(kept_table("credential-rules", TABLE_VERSION, _kept_table, _sound_table, _SOURCES))
        return self._table[0]

    def row(self, priority: int) -> _Row:
        """The row of the rule of this priority, unmarshalled on first use."""
        row = self._rows.get(priority)
        if row is None:
            try:
                row = marshal.loads(self._loaded()[0][priority])
            except (EOFError, ValueError, TypeError):
                row = None
            if not (type(row) is tuple and len(row) == len(_ROW_TYPES)
                    and all(type(value) is kind for value, kind in zip(row, _ROW_TYPES, strict=True))):  # fmt: skip
                row = _rule_table()[0][priority]  # a kept row damaged since it was written: made again
            self._rows[priority] = row
        return row

    @property
    def rows(self) -> list[_Row]:
        """The rules' rows, in priority order."""
        return [self.row(priority) for priority in range(len(self._loaded()[0]))]

    @property
    def by_needle(self) -> dict[str, list[int]]:
        """needle -> the priorities of the rules it gates."""
        return self._loaded()[1]

    @property
    def global_allow(self) -> tuple[str, ...]:
        return self._loaded()[2]

    @property
    def global_stopwords(self) -> tuple[str, ...]:
        return self._loaded()[3]

    @property
    def hand(self) -> ModuleType:
        from wheypoint.model import credential_hand

        return credential_hand

    @property
    def values(self) -> ModuleType:
        from wheypoint.model import credential_values

        return credential_values

    def rule(self, priority: int) -> Rule:
        """The rule of this priority, made from its row on first use."""
        made = self._made.get(priority)
        if made is None:
            rule_id, needles, src, flags, kind, group, entropy, allow, stopwords, whole, anchored = self.row(priority)
            made = self._made[priority] = Rule(rule_id, priority, tuple(needles), src, flags)
            made.kind, made.group, made.entropy, made.allow, made.stopwords = kind, group, entropy, allow, stopwords
            made.whole, made.anchored = whole, anchored
            if kind == "hand":
                made.check = self.hand.CHECKS[rule_id]
        return made

    @property
    def rules(self) -> list[Rule]:
        """Every rule, in priority order."""
        return [self.rule(priority) for priority in range(len(self._loaded()[0]))]

    def near(self) -> Near:
        """The proximity rule's patterns, compiled when it first runs."""
        if not self._near:
            from wheypoint.model.credential_near import Near

            self._near.append(Near(self.hand.PROSE_KEYWORDS))
        return self._near[0]

    def pattern(self, rule: Rule) -> re.Pattern[str]:
        compiled = self.patterns.get(rule.priority)
        if compiled is None:
            compiled = self.patterns[rule.priority] = regex(rule.src, rule.flags)
        return compiled


_CACHE: list[Compiled] = []


def compiled() -> Compiled:
    """The rule table of this process, made on its first scan."""
    if not _CACHE:
        _CACHE.append(Compiled())
    return _CACHE[0]
