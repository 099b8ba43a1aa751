"""Credential detection: find secret-looking values in checkpoint text so the runtime can refuse it."""

# How it works
# ------------
# Each rule in RULES is a regular expression that marks the secret part of a match (the "value"),
# plus an optional check that the value really looks like a credential.  scan_text() runs every
# rule, throws away values on the ALLOWLIST (documentation example values and placeholders), keeps
# the most specific rule when two rules mark overlapping text, and returns the hits ordered by
# offset.  A hit carries only the rule id and the offsets: callers name the field and the rule and
# never echo the value.
#
# Regexes are compiled on the first scan, not at import: the CLI start-up time is measured.
#
# The rule table is documented for users in docs/credentials.md; keep the two in step.

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable

from wheypoint.model.records import Record

__all__ = ["ALLOWLIST", "RULES", "CredentialHit", "scan_text"]


class CredentialHit(Record):
    """One credential found: the rule that fired and where the secret value sits in the text."""

    rule: str
    start: int
    end: int


# The order is the priority: when two rules mark overlapping text, the earlier rule wins, so the
# specific token formats come first and the generic ones (headers, URLs, assignments) last.
RULES: tuple[tuple[str, str], ...] = (
    (
        "private-key",
        "PEM private key block: '-----BEGIN [RSA|EC|DSA|OPENSSH|ENCRYPTED|PGP] PRIVATE KEY-----' "
        "followed by key material (a bare header with no key body is not a leak).",
    ),
    ("gcp-service-account", 'Google Cloud service-account JSON: a "private_key_id" field holding 40 hex digits.'),
    ("jwt", "JSON Web Token: three base64url parts, the header starting 'eyJ' and decoding to a JSON object."),
    ("github-token", "GitHub token: ghp_/gho_/ghu_/ghs_/ghr_ followed by 36+ letters and digits, or github_pat_..."),
    ("aws-access-key-id", "AWS access key id: AKIA or ASIA followed by 16 upper-case letters and digits."),
    (
        "aws-secret-access-key",
        "AWS secret access key: aws_secret_access_key / SecretAccessKey assigned a 40-character base64 value.",
    ),
    ("anthropic-api-key", "Anthropic API key: sk-ant-... (api/admin keys)."),
    (
        "openai-api-key",
        "OpenAI API key: sk-proj-..., sk-svcacct-..., sk-admin-..., or plain sk- with 20+ letters and digits.",
    ),
    ("stripe-key", "Stripe secret or restricted key: sk_live_, sk_test_, rk_live_, rk_test_."),
    ("slack-token", "Slack token: xoxa-, xoxb-, xoxp-, xoxr-, xoxs-."),
    ("slack-webhook", "Slack incoming webhook URL: https://hooks.slack.com/services/T.../B.../..."),
    ("google-api-key", "Google API key: AIza followed by 35 characters."),
    ("pypi-token", "PyPI upload token: pypi-AgE... (a base64 macaroon)."),
    ("gitlab-token", "GitLab token: glpat- (personal access), gldt- (deploy), glrt- (runner), glptt-, gloas-."),
    ("npm-token", "npm token: an '_authToken=' line in .npmrc, or an npm_ token (npm_ + 36 characters)."),
    ("azure-storage-key", "Azure connection string key: AccountKey= or SharedAccessKey= with a base64 value."),
    ("sendgrid-api-key", "SendGrid API key: SG.<22 chars>.<43 chars>."),
    ("twilio-api-key", "Twilio API key SID: SK followed by 32 lower-case hex digits."),
    ("huggingface-token", "Hugging Face token: hf_ followed by 34+ letters."),
    ("authorization-header", "HTTP Authorization header with a Bearer, Basic or Token credential."),
    ("url-password", "URL with an embedded password: scheme://user:password@host (user@host alone is fine)."),
    (
        "high-entropy-assignment",
        "A random-looking value of 12+ characters assigned (= or :) to a name "
        "containing password, passwd, secret, token, api_key, apikey, access_key, auth_token, client_secret or "
        "private_key (any case; JSON keys, YAML, env vars such as GITHUB_TOKEN=, CLI --flags).",
    ),
)

# Documented allow-list: values never reported, whatever rule marked them.  Each entry is
# (name, what it suppresses).  The checks themselves live in _is_allowlisted().
ALLOWLIST: tuple[tuple[str, str], ...] = (
    ("aws-docs-access-key", "AWS documentation example key id AKIAIOSFODNN7EXAMPLE."),
    ("aws-docs-secret-key", "AWS documentation example secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY."),
    ("jwt-io-sample", 'The jwt.io sample token (payload sub "1234567890", name "John Doe"), any signature.'),
    ("marker-words", "Values containing example, dummy, placeholder, changeme / change-me, redacted (any case)."),
    ("angle-brackets", "Values containing <...>, e.g. <your-token>, <password>."),
    (
        "variable-reference",
        "Shell/template variables: a value starting with $NAME, or containing ${...}, %NAME%, "
        "{{...}}, or a lone {name} format field, or %s / %(name)s.",
    ),
    ("filler-runs", "Runs of 8 or more x, X, * or 0 (ghp_xxxxxxxx..., ********, AKIA0000000000000000)."),
    ("your-here", "'your-...-here' style: values containing your- / your_ / YOUR_ (your-api-key-here, YOUR_TOKEN)."),
    ("ellipsis", "Values shortened with ... or … (sk-proj-abc...wxyz): a truncated key is not a usable key."),
    (
        "url-placeholder-password",
        "URL passwords that are a placeholder word (password, pass, passwd, pwd, secret, "
        "pw) or equal the user name (guest:guest, postgres:postgres).",
    ),
)

_AWS_DOC_VALUES = frozenset({"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"})

# Validators get the match and return False to drop it.
_Validator = Callable[[re.Match[str]], bool]

_NB = r"(?<![A-Za-z0-9_])"  # no word character just before
_NA = r"(?![A-Za-z0-9_])"  # no word character just after
_NAH = r"(?![A-Za-z0-9_-])"  # ... nor a hyphen

_ASSIGN_KEYWORDS = (
    r"pass(?:word|wd)|secret|token|api[_-]?key|access[_-]?key|auth[_-]?token|client[_-]?secret|private[_-]?key"
)


def _always(_m: re.Match[str]) -> bool:
    return True


def _b64url_json(part: str) -> object:
    import base64

    padded = part + "=" * (-len(part) % 4)
    try:
        return json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, UnicodeDecodeError):  # binascii.Error is a ValueError
        return None


def _check_jwt(m: re.Match[str]) -> bool:
    header = _b64url_json(m.group("h"))
    if not isinstance(header, dict) or not ({"alg", "typ", "kid", "enc"} & header.keys()):
        return False
    return isinstance(_b64url_json(m.group("p")), dict)


def _is_jwt_io_sample(m: re.Match[str]) -> bool:
    """Allow-list: the jwt.io sample token, whatever its signature or extra claims."""
    payload = _b64url_json(m.group("p"))
    return isinstance(payload, dict) and payload.get("sub") == "1234567890" and payload.get("name") == "John Doe"


def _check_openai(m: re.Match[str]) -> bool:
    value = m.group("v")
    if value.startswith(("sk-proj-", "sk-svcacct-", "sk-admin-")):
        return True
    body = value[3:]
    return any(c.isdigit() for c in body) and any(c.isalpha() for c in body)


def _check_has_digit(m: re.Match[str]) -> bool:
    return any(c.isdigit() for c in m.group("v"))


def _check_two_classes(m: re.Match[str]) -> bool:
    body = m.group("v").partition("-")[2]
    return sum((any(c.isupper() for c in body), any(c.islower() for c in body), any(c.isdigit() for c in body))) >= 2


def _check_mixed_case(m: re.Match[str]) -> bool:
    body = m.group("v")[3:]
    return any(c.isupper() for c in body) and any(c.islower() for c in body)


def _check_auth_header(m: re.Match[str]) -> bool:
    scheme = m.group("s").lower()
    value = m.group("v")
    if value.startswith("eyJ") and value.count(".") == 2:
        return False  # a JWT: the jwt rule judges it (and knows the allow-listed samples)
    if scheme == "basic":
        import base64

        try:
            decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):  # binascii.Error is a ValueError
            return False
        user, sep, password = decoded.partition(":")
        return bool(sep) and len(password) >= 1 and not _is_placeholder_password(user, password)
    return _looks_random(value, min_len=12)


_PLACEHOLDER_PASSWORDS = frozenset(
    {"password", "passwd", "pass", "pwd", "pw", "secret", "pa55word", "passw0rd", "p@ssw0rd", "p@ssword"}
)


def _is_placeholder_password(user: str, password: str) -> bool:
    return password.lower() in _PLACEHOLDER_PASSWORDS or password == user


def _check_url_password(m: re.Match[str]) -> bool:
    return not _is_placeholder_password(m.group("u"), m.group("v"))


def _check_assignment(m: re.Match[str]) -> bool:
    return _looks_random(m.group("v"), min_len=12)


# (rule id, pattern, validator).  Every pattern has a named group "v": the secret value whose
# offsets are reported and which the allow-list is checked against.
_PATTERNS: tuple[tuple[str, str, _Validator], ...] = (
    (
        "private-key",
        r"(?P<v>-----BEGIN[ A-Z0-9]{0,20} PRIVATE KEY(?: BLOCK)?-----"
        r"(?:(?!-----)[\s\S]){0,400}?[A-Za-z0-9+/=]{40}"
        # ... through the END line when there is one, else to the end of the first run of key material
        r"(?:(?:(?!-----)[\s\S]){0,20000}?-----END[ A-Z0-9]{0,20} PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=]*))",
        _always,
    ),
    ("gcp-service-account", r"\"private_key_id\"\s*:\s*\"(?P<v>[0-9a-f]{40})\"", _always),
    (
        "jwt",
        _NB + r"(?P<v>(?P<h>eyJ[A-Za-z0-9_-]{8,})\.(?P<p>[A-Za-z0-9_-]{8,})\.[A-Za-z0-9_-]{10,})" + _NAH,
        _check_jwt,
    ),
    ("github-token", _NB + r"(?P<v>gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,247})" + _NA, _always),
    ("aws-access-key-id", r"(?<![A-Za-z0-9])(?P<v>A(?:KI|SI)A[A-Z0-9]{16})(?![A-Za-z0-9])", _always),
    (
        "aws-secret-access-key",
        r"(?i:aws_?secret_?access_?key|secret_?access_?key)[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        _always,
    ),
    ("anthropic-api-key", _NB + r"(?P<v>sk-ant-[A-Za-z0-9_-]{20,})" + _NAH, _always),
    (
        "openai-api-key",
        _NB + r"(?P<v>sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|sk-[A-Za-z0-9]{20,})" + _NAH,
        _check_openai,
    ),
    ("stripe-key", _NB + r"(?P<v>[sr]k_(?:live|test)_[A-Za-z0-9]{16,})" + _NA, _always),
    ("slack-token", _NB + r"(?P<v>xox[abprs]-[A-Za-z0-9-]{10,})" + _NAH, _check_has_digit),
    (
        "slack-webhook",
        r"(?P<v>https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_]{6,}/[A-Za-z0-9_]{6,}"
        r"(?:/[A-Za-z0-9_]{6,})?)",
        _always,
    ),
    ("google-api-key", _NB + r"(?P<v>AIza[0-9A-Za-z_-]{35})" + _NAH, _always),
    ("pypi-token", _NB + r"(?P<v>pypi-AgE[A-Za-z0-9_-]{50,})" + _NAH, _always),
    ("gitlab-token", _NB + r"(?P<v>gl(?:pat|dt|rt|ptt|oas)-[A-Za-z0-9_-]{20,})" + _NAH, _check_two_classes),
    ("npm-token", r"(?P<v>(?<=_authToken=)[^\s\"']{8,}|" + _NB + r"npm_[A-Za-z0-9]{36}" + _NA + ")", _always),
    ("azure-storage-key", r"(?:AccountKey|SharedAccessKey)=(?P<v>[A-Za-z0-9+/]{30,}={0,2})", _always),
    ("sendgrid-api-key", _NB + r"(?P<v>SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})" + _NAH, _always),
    ("twilio-api-key", _NB + r"(?P<v>SK[0-9a-f]{32})" + _NA, _always),
    ("huggingface-token", _NB + r"(?P<v>hf_[A-Za-z]{34,})" + _NA, _check_mixed_case),
    (
        "authorization-header",
        r"(?i:authorization)[\"']?[ \t]*[:=][ \t]*[\"']?(?P<s>(?i:bearer|basic|token))[ \t]+"
        r"(?P<v>[A-Za-z0-9._~+/=-]+)",
        _check_auth_header,
    ),
    (
        "url-password",
        r"\b[A-Za-z][A-Za-z0-9+.-]{1,20}://(?P<u>[^\s:/@\"'<>]*):(?P<v>[^\s/@\"'`]+)@[A-Za-z0-9_\[][^\s/\"'`]*",
        _check_url_password,
    ),
    (
        "high-entropy-assignment",
        r"(?i:" + _ASSIGN_KEYWORDS + r")[A-Za-z0-9_.-]{0,30}[\"']?[ \t]*(?::=|=>|=|:)[ \t]*"
        r"(?P<q>[\"'`]?)(?P<v>[^\s\"'`,;]{12,})",
        _check_assignment,
    ),
)

# --- allow-list -----------------------------------------------------------------------------------

_PLACEHOLDER_SRC = (
    r"(?i:example|dummy|placeholder|change[-_]?me|redacted|your[-_])"
    r"|<[^<>]*>"
    r"|\$\{|^\$[A-Za-z_]|%[A-Za-z_][A-Za-z0-9_]*%|\{\{|\}\}|^\{[A-Za-z0-9_.]*\}$"
    r"|%(?:\([A-Za-z0-9_]+\))?s"
    r"|[xX*0]{8,}|[xX*]{4,}$"
    r"|\.\.\.|…"
)


def _is_allowlisted(value: str) -> bool:
    if value in _AWS_DOC_VALUES:
        return True
    return _compiled().placeholder.search(value) is not None


# --- "looks random" heuristic ----------------------------------------------------------------------

_NOT_SECRET_SRC = (
    r"\(|\)|\[$"  # a call: getpass(), os.getenv(...)
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


def _shannon(value: str) -> float:
    counts: dict[str, int] = {}
    for c in value:
        counts[c] = counts.get(c, 0) + 1
    n = len(value)
    return -sum(k / n * math.log2(k / n) for k in counts.values())


def _looks_random(value: str, min_len: int) -> bool:
    """True when value reads like a generated secret rather than a word, a path, a name or code."""
    if len(value) < min_len:
        return False
    compiled = _compiled()
    word_re = compiled.word
    if compiled.not_secret.search(value):
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
    path = compiled.path.match(value)
    if path and (path["rel"] or _wordy(value, word_re, 0.25) or value.rfind(".") > len(value) - 6):
        return False  # a relative path, or an absolute one with words in it or a file extension
    # Shannon entropy against the best a string of this length and alphabet could reach: random
    # values sit near it, structured ones (timestamps, repeated patterns) well below.
    if all(c in "0123456789abcdefABCDEF-" for c in value):
        alphabet = 16
    else:
        alphabet = 26 * has_lower + 26 * has_upper + 10 * has_digit + 16 * has_other
    best = math.log2(min(alphabet, len(value)))
    return _shannon(value) >= 0.62 * best if alphabet == 16 else _shannon(value) >= 0.7 * best


# --- compilation and scan --------------------------------------------------------------------------


# Literal strings (lower case) at least one of which must occur in the lower-cased text for a rule
# to be able to match: a cheap substring test that skips most regex passes on ordinary text.
_NEEDLES: dict[str, tuple[str, ...]] = {
    "private-key": ("private key",),
    "gcp-service-account": ("private_key_id",),
    "jwt": ("eyj",),
    "github-token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "aws-access-key-id": ("akia", "asia"),
    "aws-secret-access-key": ("secret",),
    "anthropic-api-key": ("sk-ant-",),
    "openai-api-key": ("sk-",),
    "stripe-key": ("k_live_", "k_test_"),
    "slack-token": ("xox",),
    "slack-webhook": ("hooks.slack.com",),
    "google-api-key": ("aiza",),
    "pypi-token": ("pypi-",),
    "gitlab-token": ("glpat-", "gldt-", "glrt-", "glptt-", "gloas-"),
    "npm-token": ("_authtoken=", "npm_"),
    "azure-storage-key": ("accountkey=", "sharedaccesskey="),
    "sendgrid-api-key": ("sg.",),
    "twilio-api-key": ("sk",),
    "huggingface-token": ("hf_",),
    "authorization-header": ("authorization",),
    "url-password": ("://",),
    "high-entropy-assignment": ("pass", "secret", "token", "key"),
}


class _Compiled:
    """The helper regexes, compiled once on first use; rule regexes compile when first needed."""

    def __init__(self) -> None:
        self.rules = tuple(
            (rule_id, priority, src, check, _NEEDLES[rule_id])
            for priority, (rule_id, src, check) in enumerate(_PATTERNS)
        )
        self.patterns: dict[str, re.Pattern[str]] = {}

    # The helpers are needed only once a rule has matched something, so they compile then (re caches them).
    @property
    def placeholder(self) -> re.Pattern[str]:
        return re.compile(_PLACEHOLDER_SRC)

    @property
    def not_secret(self) -> re.Pattern[str]:
        return re.compile(_NOT_SECRET_SRC)

    @property
    def word(self) -> re.Pattern[str]:
        return re.compile(_WORD_SRC)

    @property
    def path(self) -> re.Pattern[str]:
        return re.compile(_PATH_SRC)

    def pattern(self, rule_id: str, src: str) -> re.Pattern[str]:
        compiled = self.patterns.get(rule_id)
        if compiled is None:
            compiled = self.patterns[rule_id] = re.compile(src)
        return compiled


_CACHE: list[_Compiled] = []


def _compiled() -> _Compiled:
    if not _CACHE:
        _CACHE.append(_Compiled())
    return _CACHE[0]


def scan_text(text: str) -> list[CredentialHit]:
    """Return every credential found in text, allow-listed values removed, ordered by start offset.

    When several rules mark overlapping text, only the most specific (earliest in RULES) counts.
    An allow-listed value still claims its text, so a generic rule cannot report it again: the
    jwt.io sample is not reported as a "high-entropy-assignment" either.
    """
    compiled = _compiled()
    lowered = text.lower()
    found: list[tuple[int, int, int, str, bool]] = []  # (priority, start, end, rule, allow-listed)
    for rule_id, priority, src, check, needles in compiled.rules:
        if not any(needle in lowered for needle in needles):
            continue
        for m in compiled.pattern(rule_id, src).finditer(text):
            start, end = m.span("v")
            if _is_allowlisted(m.group("v")) or (rule_id == "jwt" and _is_jwt_io_sample(m)):
                found.append((priority, start, end, rule_id, True))
            elif check(m):
                found.append((priority, start, end, rule_id, False))
    found.sort()
    kept: list[tuple[int, int, int, str, bool]] = []
    for hit in found:
        if all(hit[2] <= k[1] or hit[1] >= k[2] for k in kept):
            kept.append(hit)
    hits = [CredentialHit(rule=r, start=s, end=e) for _, s, e, r, allowed in kept if not allowed]
    hits.sort(key=lambda h: (h.start, h.end))
    return hits
