"""Hand-written credential rules: the formats and contexts the gitleaks rule set lacks, and how each is judged."""

# credentials.py runs these together with the generated gitleaks rules (credential_rules.py).  A rule is
# kept here only where gitleaks has no equivalent; docs/credentials.md says why for each one.  Every
# pattern has a named group "v", the secret value whose offsets are reported.

from __future__ import annotations

from wheypoint import jsontext
from wheypoint.model.credential_near import check as near_check
from wheypoint.model.credential_values import (
    CHAIN_SRC,
    PICKED_SRC,
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
    from collections.abc import Callable

    # Validators get the match and return False to drop it.
    Validator = Callable[[re.Match[str]], bool]


_NB = r"(?<![A-Za-z0-9_])"  # no word character just before
_NA = r"(?![A-Za-z0-9_])"  # no word character just after
_NAH = r"(?![A-Za-z0-9_-])"  # ... nor a hyphen

_ASSIGN_KEYWORDS = (
    r"pass(?:word|wd)|secret|token|api[_-]?key|access[_-]?key|auth[_-]?token|client[_-]?secret|private[_-]?key"
)

# What a sentence calls a secret: a password (a bare "pass" only after a word naming what it opens: "db pass",
# never Python's `pass`), a token, a key named by what it does or opens ("the HMAC key", "the app key").
PROSE_KEYWORDS = (
    r"pass(?:word|wd|phrase|code)|(?<=[A-Za-z0-9][ _])pass(?![A-Za-z0-9_])|pwd\b|(?<![A-Za-z])pw(?![A-Za-z])|psk\b"
    r"|secret|token|credentials?|creds\b"
    r"|(?:api|access|secret|private|hmac|encryption|signing|master|license|unseal|decryption|session|webhook"
    r"|app|fernet|aes|recovery|root|admin|shared|account|storage|service|cookie|jwt)[ _-]?key"
)

# Words that link a name to its value in a sentence: "the X we use in prod: V", "the X ended up being V".
# ("is it", "was it": a question, "the X again? is it V")
_LINKS = (
    r"is it|was it|is|are|was|were|be|being|been|becomes|became|to|now|value|equals|reads|it's|that's|with|using|use"
)

# Nouns that say the value named next is something else than the secret: "the token's commit is 3f9a...".
RENAMING = frozenset(
    {"commit", "sha", "hash", "digest", "checksum", "uuid", "id", "fingerprint", "version", "path", "file", "url",
     "link", "branch", "tag", "env", "variable", "field", "header", "column", "prefix", "public", "format", "length",
     "name", "type", "count", "size", "issue", "pr", "ticket", "line", "example", "sample"}
)  # fmt: skip


def _always(_m: re.Match[str]) -> bool:
    return True


def _b64url_json(part: str) -> object:
    import base64

    padded = part + "=" * (-len(part) % 4)
    try:
        return jsontext.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, UnicodeDecodeError):  # binascii.Error is a ValueError
        return None


def _check_jwt(m: re.Match[str]) -> bool:
    header = _b64url_json(m.group("h"))
    if not isinstance(header, dict) or not ({"alg", "typ", "kid", "enc"} & header.keys()):
        return False
    return isinstance(_b64url_json(m.group("p")), dict)


def is_jwt_io_sample(m: re.Match[str]) -> bool:
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
        return bool(sep) and len(password) >= 1 and not is_placeholder_password(user, password)
    return looks_random(value, min_len=12)


def _check_url_password(m: re.Match[str]) -> bool:
    return not is_placeholder_password(m.group("u"), m.group("v"))


def _check_assignment(m: re.Match[str]) -> bool:
    value = m.group("v")
    start = m.start("n")
    head = m.string[max(0, start - 80) : start].rstrip(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"
    )
    if head.endswith("::"):  # a qualified type name (AWS::IAM::AccessKey), not a variable
        return False
    # (`KEY = rust_openssl.hpke.KEY`, `key: ed25519.Ed25519PrivateKey`: a name in code, unquoted)
    if not m.group("q") and is_reference(value, camel=True):
        return False
    if "pass" in m.group("n").lower():  # a password a person chose is shorter and less random than a token
        # (looks_like_password takes any value random from 8 characters on, so a random 12 needs no test of its own)
        return looks_like_password(value) and not is_placeholder_password("", value)
    return looks_random(value, min_len=12)


def _check_discord(m: re.Match[str]) -> bool:
    """A Discord bot token starts with the bot's numeric id in base64, after no word character."""
    import base64

    start = m.start("v")
    if start and (m.string[start - 1].isalnum() or m.string[start - 1] in "_-"):
        return False
    part = m.group("v").split(".", 1)[0]
    try:
        return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)).isdigit()
    except ValueError:  # binascii.Error is a ValueError
        return False


def _check_telegram(m: re.Match[str]) -> bool:
    start = m.start("v")
    # after no letter or digit, except in the Bot API's URL: https://api.telegram.org/bot<token>/method
    if start and m.string[start - 1].isalnum() and not m.string.endswith("/bot", 0, start):
        return False
    body = m.group("v").partition(":")[2]
    return sum((any(c.isupper() for c in body), any(c.islower() for c in body), any(c.isdigit() for c in body))) >= 2


def _check_word_start(m: re.Match[str], group: str | int = "v") -> bool:
    """True when the group (the value, unless another is named; 0 the whole match) starts a word: no letter, digit,
    `_`, `-` or `.` before it."""
    start = m.start(group)
    return not (start and (m.string[start - 1].isalnum() or m.string[start - 1] in "_-."))


def value_group(m: re.Match[str]) -> str:
    """The name of the group holding the secret: "v", or the one of v1, v2, ... that matched."""
    if "v" in m.re.groupindex:
        return "v"
    return next(name for name in m.re.groupindex if name[0] == "v" and m.group(name) is not None)


def _check_password_flag(m: re.Match[str]) -> bool:
    value = m.group(value_group(m))
    return len(value) >= 6 and not value.startswith("-") and not is_placeholder_password("", value)


def _check_curl_user(m: re.Match[str]) -> bool:
    """curl's user:password: 6+ characters (it may start with a hyphen), not a placeholder, not the user."""
    return len(m.group("v")) >= 6 and not is_placeholder_password(m.group("u"), m.group("v"))


def _renamed(words: str) -> bool:
    """True when the words between a secret's name and a value name it as something else (a commit, a path)."""
    return any(word.strip(".,:;!?()'`\"").lower() in RENAMING for word in words.split())


# Words after which "pass" is the verb, not a password's name: "arguments to pass to ...", "tests pass", "for pass_if".
_VERB_BEFORE_PASS = frozenset(
    {"to", "for", "and", "or", "not", "will", "would", "should", "can", "could", "must", "may", "might", "shall",
     "do", "does", "did", "don't", "doesn't", "didn't", "won't", "it", "they", "we", "you", "i", "that", "which",
     "then", "also", "just", "never", "always", "tests", "test", "checks", "check", "builds", "please", "a"}
)  # fmt: skip


def _verb_pass(m: re.Match[str]) -> bool:
    """True when the name matched is a bare "pass" that the word before it makes a verb."""
    if m.group("k").lower() != "pass":
        return False
    before = m.string[max(0, m.start("k") - 20) : m.start("k")].replace("_", " ").split()
    return not before or before[-1].lower() in _VERB_BEFORE_PASS


def _check_prose(m: re.Match[str]) -> bool:
    value = m.group("v")
    if _verb_pass(m) or is_reference(value, camel=m.group("l") is not None):  # `key: ed25519.Ed25519PrivateKey`
        return False
    if _renamed((m.group("g") or "") + " " + (m.group("a") or "")):
        return False
    if is_placeholder_password("", value):
        return False
    if is_password_name(m.group("k")):
        return looks_like_password(value)
    # a value linked to the name ("is", ":", "=", an aside between) may be a chosen one; one that follows the name
    # bare must be random
    linked = m.group("l") is not None or m.group("l2") is not None or m.group("a") is not None
    return looks_random(value, min_len=12) or (linked and _chosen(value))


def _check_prose_reversed(m: re.Match[str]) -> bool:
    """The value comes first and the sentence names it after: "use V as the root pw"."""
    value = m.group("v")
    if _verb_pass(m) or is_reference(value):
        return False
    if _renamed(m.group("g")) or is_placeholder_password("", value) or value.endswith(":"):
        return False
    if (m.groupdict().get("lk") or "").lower() == "for":  # "V for the K", not "V for the K table"
        word = regex(r"[ \t]+([A-Za-z]+)").match(m.string, m.end())  # the word after the name, whole
        if word and word.group(1).lower() not in _AFTER_NAME:
            return False
    if m.groupdict().get("lp") and _renamed(regex(r"[),;]").split(m.string[m.end() : m.end() + 60], maxsplit=1)[0]):
        return False  # "V (the token refresh commit)": the parentheses name it as something else
    if is_password_name(m.group("k")):
        return looks_like_password(value)
    return looks_random(value, min_len=12) or _chosen(value)


def _check_prose_bare(m: re.Match[str]) -> bool:
    """No link word: the words in between are words of a sentence, and the value is no code (a member chain)."""
    value, words = m.group("v"), m.group("g").replace(",", " ").split()
    after = words_after(m.string, m.end(), 4)  # "... uses V as the commit"
    if any(not regex(r"[A-Za-z'’]+").fullmatch(w) or w in _CODE_WORDS for w in words) or _renamed(" ".join(after)):
        return False
    if regex(r"^[!\\]|[\\(){}\[\]]").search(value) or regex(CHAIN_SRC).match(value):
        return False
    return _check_prose_reversed(m)


_AFTER_NAME = frozenset({"in", "on", "at", "and", "but", "so", "then", "now", "from", "since", "until", "key", "too"})
_CODE_WORDS = frozenset({"instanceof", "typeof", "return", "await", "yield", "new", "def", "let", "const", "var"})


def _check_piped(m: re.Match[str]) -> bool:
    """A value echoed into a command that stores a secret or logs in from stdin: anything but a variable."""
    value = m.group("v")
    bad = value[0] in "$%<-" or is_placeholder_password("", value)
    return not bad and looks_like_password(value)  # (which takes any value random from 8 characters on)


def _chosen(value: str) -> bool:
    """A chosen value under a name that is not a password's: one holding a symbol people pick (identifiers do not)."""
    return regex(PICKED_SRC).search(value) is not None and looks_like_password(value)


def _check_sas(m: re.Match[str]) -> bool:
    """An Azure SAS signature: `sig=` after no word character (`xsig=` is another parameter), then a URL-encoded
    base64 HMAC of 32 bytes."""
    import base64

    if not _check_word_start(m, 0):
        return False
    raw = regex(r"%([0-9A-Fa-f]{2})").sub(lambda e: chr(int(e.group(1), 16)), m.group("v"))  # URL-decoded
    try:
        return len(base64.b64decode(raw + "=" * (-len(raw) % 4), validate=True)) >= 20
    except ValueError:  # binascii.Error is a ValueError
        return False


def _check_token_body(m: re.Match[str]) -> bool:
    """A prefixed token after no word character, its body mixing two of lower, upper and digits."""
    if not _check_word_start(m):
        return False
    body = m.group("v").split("_")[-1].split("-")[-1]
    return sum((any(c.isupper() for c in body), any(c.islower() for c in body), any(c.isdigit() for c in body))) >= 2


def _check_okta(m: re.Match[str]) -> bool:
    value = m.group("v")
    return value.startswith("00") or looks_random(value, min_len=20)


# (rule id, pattern, validator).  Every pattern has a named group "v": the secret value whose
# offsets are reported and which the allow-list is checked against.
PATTERNS: tuple[tuple[str, str, Validator], ...] = (
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
    (
        "aws-secret-access-key",
        # an assignment, or a sentence: "the AWS secret access key is ..."
        r"(?i:aws[_ ]?secret[_ ]?(?:access[_ ]?)?key|secret[_ ]?access[_ ]?key)[\"']?[ \t]*"
        r"(?:[:=]|\s(?:is|was|=)\s|\s)[ \t]*[\"'`]?"
        r"(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        _always,
    ),
    (
        "discord-bot-token",
        r"(?P<v>[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38})(?![A-Za-z0-9_-])",
        _check_discord,
    ),
    ("telegram-bot-token", r"(?P<v>[0-9]{8,10}:[A-Za-z0-9_-]{35})(?![A-Za-z0-9_-])", _check_telegram),
    ("mailgun-api-key", r"(?P<v>key-[0-9a-f]{32})(?![A-Za-z0-9_-])", _check_word_start),
    ("mailgun-api-key-v2", r"(?P<v>[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8})(?![A-Za-z0-9_-])", _check_word_start),
    ("vault-token", r"(?P<v>hv[sbr]\.[A-Za-z0-9_-]{24,})(?![A-Za-z0-9_-])", _check_word_start),
    ("new-relic-user-key", r"(?P<v>NRAK-[A-Z0-9]{27})(?![A-Za-z0-9_-])", _check_word_start),
    ("twilio-account-sid", r"(?P<v>AC[0-9a-f]{32})(?![A-Za-z0-9_])", _check_word_start),
    (
        # an access key id and, a few characters on, its secret: "aws keys: AKIA... / ..."
        "aws-key-pair",
        r"A(?:KI|SI)A[A-Z2-7]{16}[\s,;:/|\"'=]{1,5}(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        _always,
    ),
    (
        "discord-webhook",
        r"(?P<v>https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/[A-Za-z0-9_-]{60,})",
        _always,
    ),
    ("anthropic-api-key", _NB + r"(?P<v>sk-ant-[A-Za-z0-9_-]{20,})" + _NAH, _always),
    (
        "openai-api-key",
        _NB + r"(?P<v>sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|sk-[A-Za-z0-9]{20,})" + _NAH,
        _check_openai,
    ),
    ("slack-token", _NB + r"(?P<v>xox[abprs]-[A-Za-z0-9-]{10,})" + _NAH, _check_has_digit),
    ("pypi-token", _NB + r"(?P<v>pypi-AgE[A-Za-z0-9_-]{50,})" + _NAH, _always),
    ("gitlab-token", _NB + r"(?P<v>gl(?:pat|dt|rt|ptt|oas)-[A-Za-z0-9_-]{20,})" + _NAH, _check_two_classes),
    ("npm-token", r"(?P<v>(?<=_authToken=)[^\s\"']{8,}|" + _NB + r"npm_[A-Za-z0-9]{36}" + _NA + ")", _always),
    ("azure-storage-key", r"(?:AccountKey|SharedAccessKey)=(?P<v>[A-Za-z0-9+/]{30,}={0,2})", _always),
    # the signature of a shared access signature, in a URL's query or a connection string's SharedAccessSignature=
    ("azure-sas-signature", r"sig=(?P<v>[A-Za-z0-9%+/=]{20,}(?<!%)(?<!%[0-9A-Fa-f]))", _check_sas),
    (
        # a PuTTY key file: the header line, then (in any layout: lines, JSON-escaped, indented) its Private-Lines
        "putty-private-key",
        r"(?P<v>PuTTY-User-Key-File-[0-9]+:(?:(?!PuTTY-User-Key-File-)[\s\S]){0,6000}?Private-Lines:[ \t]*[0-9]+"
        r"(?:(?:\\r)?(?:\\n|\r?\n)[ \t]*[A-Za-z0-9+/=]{4,})+"
        r"(?:(?:\\r)?(?:\\n|\r?\n)[ \t]*Private-MAC:[ \t]*[0-9a-fA-F]+)?)",
        _always,
    ),
    (
        "tailscale-key",
        r"(?P<v>tskey-(?:[a-z]+-)?[A-Za-z0-9]{6,}(?:-[A-Za-z0-9]{8,})?)" + _NAH,
        _check_token_body,
    ),
    ("docker-hub-pat", r"(?P<v>dckr_(?:pat|oat)_[A-Za-z0-9_-]{20,})" + _NAH, _check_word_start),
    ("supabase-secret-key", r"(?P<v>sb_secret_[A-Za-z0-9_-]{20,})" + _NAH, _check_token_body),
    ("stripe-webhook-secret", r"(?P<v>whsec_[A-Za-z0-9+/=]{24,})" + _NAH, _check_token_body),
    ("figma-token", r"(?P<v>fig[dou]_[A-Za-z0-9_-]{30,})" + _NAH, _check_word_start),
    ("notion-token", r"(?P<v>ntn_[A-Za-z0-9]{40,})" + _NAH, _check_token_body),
    ("flyio-token", r"(?P<v>FlyV1[ \t]+fm[0-9][a-z]?_[A-Za-z0-9+/=_,-]{40,})", _always),
    ("okta-api-token", r"SSWS[ \t]+(?P<v>[A-Za-z0-9_-]{20,})" + _NAH, _check_okta),
    (
        # curl -u user:password / --user=user:password, quoted or not, JSON-escaped quotes too.  Before the gitleaks
        # rules: their curl rule allow-lists any password starting with x, *, test, pass or token (its allow-list
        # patterns are not anchored), and an allow-listed finding claims its text.
        "curl-user",
        r"\bcurl\b[^\n]{0,200}?[ \t](?:-u|--user)(?:[ \t]+|=)\\?['\"]?(?P<u>[^\s:'\"\\]{1,64}):(?P<v>[^\s'\"\\]+)",
        _check_curl_user,
    ),
)

# The generic rules run after the gitleaks rules: a specific format found at the same place wins.
GENERIC: tuple[tuple[str, str, Validator], ...] = (
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
        # NAME=value, NAME: value; a name/value pair ({"name": "NAME", "value": ...}, "- name: NAME" then
        # "value: ..."); a CLI storing a named secret (gh secret set NAME --body value, ... --name NAME --value value)
        # (a subscript too: os.environ["NAME"] = value; and a name/data pair: {"id": "NAME", "data": ...}; a YAML
        # mapping under the name: "NAME:" then "value: ..." on the next line)
        r"(?P<n>(?i:" + _ASSIGN_KEYWORDS + r"))[A-Za-z0-9_.-]{0,30}[\"']?\]?[ \t]*"
        r"(?::=|=>|<-|=|:?[ \t]*\r?\n[ \t]+value[ \t]*:|:|,[ \t]*[\"']?(?i:value|data)[\"']?[ \t]*:"
        r"|:[ \t]*\r?\n[ \t]*-[ \t]+|[ \t]*<<<"  # a YAML list under the name; a here-string (read -r NAME <<< value)
        r"|[ \t]+(?:--body|-b|--value)(?:[ \t]+|=))[ \t]*"
        r"(?:[>|][-+]?[ \t]*\r?\n[ \t]*)?"  # a YAML block scalar: the value on the next line
        r"(?P<q>[\"'`]?)(?P<v>[^\s\"'`,;]{8,})",
        _check_assignment,
    ),
    (
        "password-flag",
        # mysql -p'...' / -pvalue (no space: "-p name" names a database), sshpass -p value, --password=value
        r"(?:\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]{0,200}?\s-p(?P<q1>['\"]?)(?P<v1>[^\s'\"]+)(?P=q1)"
        r"|\bsshpass\s+-p\s*(?P<q2>['\"]?)(?P<v2>[^\s'\"]+)(?P=q2)"
        r"|--password[= ](?P<q3>['\"]?)(?P<v3>[^\s'\"]+)(?P=q3)"
        r"|\bdocker\s+login\b[^\n]{0,200}?\s-p\s+(?P<q4>['\"]?)(?P<v4>[^\s'\"]+)(?P=q4))",
        _check_password_flag,
    ),
    (
        "prose-secret",
        # a sentence naming a secret, then up to ten words and a link ("is", ":", "=", "ended up being", "->"), then
        # the value: "the root password is ...", "the db password we use in prod: ...".  With no link, the value
        # must follow the name at once ("twilio token 3f9a...").  A value on the next line after the link counts.
        # (markdown emphasis may close after the name or after its link: "**db password:** ...", "**token**: ...";
        # an aside in parentheses may stand between the name and the rest: "the X (set up last year) ...")
        r"(?P<k>(?i:" + PROSE_KEYWORDS + r"))(?:s|'s|’s)?[?!)\]]?\*{0,3}(?P<a>[ \t]+\([^()\n]{1,80}\))?"
        # (a link is a word, or a sign with a space after it: `key:value` and `a=b` are code, not a sentence)
        r"(?:(?P<l>[ \t]*(?::|(?<![=!<>])=(?!=)))\*{0,3}[ \t]*"
        # (each word taken whole, as an atomic group would: a lookahead, then a reference to what it saw)
        r"|(?P<g>(?:[ \t]*[,;:]?[ \t]+(?=(?P<t>[^\s:=]{1,25}))(?P=t)){0,10}?)"
        r"(?P<l2>[ \t]*(?::|(?<![=!<>])=(?!=)|->|=>|→|—|–)(?=\s)|[ \t]+(?i:" + _LINKS + r"|-)(?![\w-])"
        r"|[ \t]*(?=\r?\n[ \t]*[^\s]{8,}[ \t]*(?:\r?\n|$)))"  # or the line ends and the value is the next line
        r"\*{0,3}[ \t]*(?:\r?\n[ \t]*)?"
        r"|[?!)]?[ \t]+)"
        r"(?P<q>[\"'`]?)"
        r"(?P<v>[^\s\"'`]{8,}?)(?=[\"'`]|[.,;!?)]?(?:\s|$))",
        _check_prose,
    ),
    (
        "prose-secret-after",
        # the value first, the name after: "use ... as the root pw", "..., that's the signing secret"
        r"(?<![^\s\"'`(\[])(?P<q>[\"'`]?)(?P<v>[^\s\"'`]{8,}?)(?P=q)[,;]?"
        # (or the name in parentheses after it: "... (the signing secret, rotated today)", "... (that's our db pw)")
        r"(?P<g>(?:[ \t]+[^\s]{1,20}){0,4}?)[ \t]+"
        r"(?:\(?(?P<lk>(?i:is|as|was|it's|it is|that's|that is|for))[ \t]+|(?P<lp>\())"
        r"(?:(?i:the|my|our|your|a|an|his|her|their)[ \t]+)?(?:[\w.'’-]{1,20}[ \t]+){0,3}?"
        r"(?P<k>(?i:" + PROSE_KEYWORDS + r"))(?![A-Za-z])",
        _check_prose_reversed,
    ),
    (
        "prose-secret-bare",
        # the name, a few words and the value with no link between: "here's the signing key you wanted ..."
        # (the value holds a digit, so the words in between are not taken for it)
        r"(?P<k>(?i:" + PROSE_KEYWORDS + r"))(?:s|'s|’s)?[?!]?(?P<g>(?:,?[ \t]+(?=(?P<t>[^\s:=]{1,25}))(?P=t)){1,6}?)"
        r"[ \t]+(?P<q>[\"'`]?)(?=[^\s\"'`]*[0-9])(?P<v>[^\s\"'`]{8,}?)(?=[\"'`]|[.,;!?)]?(?:\s|$))",
        _check_prose_bare,
    ),
    (
        "prose-secret-near",
        # a secret-looking word a few words from the name, whatever joins them (credential_near.py): the pattern
        # here is the name only; credentials.py asks credential_near for the candidates at each name
        r"(?<![A-Za-z])(?P<k>(?i:" + PROSE_KEYWORDS + r"))(?P<v>)",
        near_check,
    ),
    (
        "piped-secret",
        # echo/printf of a value into a command storing a named secret or logging in from stdin:
        # printf '%s' "..." | wrangler secret put NAME, echo ... | docker login --password-stdin
        r"(?:echo|printf)(?:[ \t]+-[neE]{1,3})*(?:[ \t]+(?P<f>['\"])%s(?:\\n)?(?P=f))?[ \t]+(?P<q>['\"]?)"
        r"(?P<v>[^\s'\"|;]{8,})(?P=q)[ \t]*\|[ \t]*[^\n|;&]{0,120}?"
        r"(?:\bsecrets?[ \t:]+(?:put|set|add|create|store)\b|--(?:password|token|secret)-stdin\b"
        r"|\benv[ \t:]+(?:add|set)\b|\bpass[ \t]+insert\b)",
        _check_piped,
    ),
)

# Each rule's judge by its id: credentials.py makes a rule from the row its kept table holds, and takes it here.
CHECKS: dict[str, Validator] = {rule_id: check for rule_id, _, check in (*PATTERNS, *GENERIC)}
