"""The hand-written rules at their edges: each sentence pins which rule finds which value, or that none does.

A finding is named by its rule, not only by its text: most secrets in a sentence can be found by more than one
rule (the linked prose rule, then the proximity rule as a last resort), so a test that asks only "was something
found" lets a broken rule hide behind the next one. Each pair below is one step either side of a rule's judgment:
a length, a word that makes "pass" a verb, the word that names a value as something else, a line too many.
"""

from __future__ import annotations

import random
import string

import pytest

from wheypoint.model.credential_values import is_password_name, looks_like_password, looks_random
from wheypoint.model.credentials import redact_spans, scan_text


def _found(text: str) -> list[tuple[str, str]]:
    return [(hit.rule, text[hit.start : hit.end]) for hit in scan_text(text)]


# A chosen password of four classes, one of three with no symbol people pick, and a random token.
CHOSEN = "Kq7!xzLm9#pQ2w"
PLAIN = "r0fI-oC2x"
RANDOM = "qZ7xK2mP9vL4wR"
PICKED = "Bluebird$3427"

CASES: list[tuple[str, list[tuple[str, str]]]] = [
    # curl's user:password: six characters at least, never a placeholder, never the user name again
    ("curl -u bob:Kq7!xz https://h", [("curl-user", "Kq7!xz")]),
    ("curl -u bob:Kq7!x https://h", []),
    ("curl -u bob:password https://h", []),
    ("curl -u Kq7!xz:Kq7!xz https://h", []),
    ("curl --user=bob:Kq7!xzLm https://h", [("curl-user", "Kq7!xzLm")]),
    # an assignment to a qualified type name is no variable (the JSON form, which no prose rule reads)
    ('{"AWS::IAM::AccessKey": "qZ7xK2mP9vL4wR"}', []),
    ('{"AWS::SecretsManager::Secret": "qZ7xK2mP9vL4wR"}', []),
    ('{"IAM_AccessKey": "qZ7xK2mP9vL4wR"}', [("high-entropy-assignment", "qZ7xK2mP9vL4wR")]),
    ('::AccessKey": "qZ7xK2mP9vL4wR"', []),  # ... from the text's first character
    # an Azure SAS signature: `sig=` starting a word, then base64 of 20 bytes at least once URL-decoded
    ("x?sig=Zq9Xw8Vu7TZq9Xw8Vu7TZq9Xw8V", [("azure-sas-signature", "Zq9Xw8Vu7TZq9Xw8Vu7TZq9Xw8V")]),  # 20 bytes
    ("x?sig=Zq9Xw8Vu7TZq9Xw8Vu7TZq9Xw8", []),  # 19
    ("x?sig=Zq9Xw8Vu7TZq9Xw8Vu7TZq9%21Xw8Vu7TZq9Xw8Vu7T", []),  # `!` once decoded: no base64 (30 bytes without it)
    ("x&xsig=Zq9Xw8Vu7TZq9Xw8Vu7TZq9Xw8Vu7TZq9Xw8Vu7TZq9%3D", []),  # another parameter
    (
        "a&sig=Zq9Xw8Vu7TZq9Xw8Vu7TZq9Xw8V b&xsig=Kq9Xw8Vu7TZq9Xw8Vu7TZq9Xw8V",  # ... even beside a signature
        [("azure-sas-signature", "Zq9Xw8Vu7TZq9Xw8Vu7TZq9Xw8V")],
    ),
    # an Okta API token after SSWS: its 00 prefix vouches for it, else twenty random characters
    ("Authorization: SSWS qZ7xK2mP9vL4wRbT3nYc", [("okta-api-token", "qZ7xK2mP9vL4wRbT3nYc")]),
    ("Authorization: SSWS 00aaaaaaaaaaaaaaaaaaaaaaaa", [("okta-api-token", "00aaaaaaaaaaaaaaaaaaaaaaaa")]),
    ("Authorization: SSWS aaaaaaaaaaaaaaaaaaaaaaaaaaaa", []),
    # a password flag: six characters at least, not a placeholder
    ("mysql -u root -pKq7!xz db", [("password-flag", "Kq7!xz")]),
    ("mysql -u root -pKq7!x db", []),
    ("run --password=password now", []),
    ("run --password=Kq7!xzL now", [("password-flag", "Kq7!xzL")]),
    ("sshpass -p Kq7!xz ssh h", [("password-flag", "Kq7!xz")]),
    ("docker login -u me -p Kq7!xzL reg", [("password-flag", "Kq7!xzL")]),
    # a bare "pass" names a password only after a word that cannot make it a verb
    (f"my pass is {CHOSEN}", [("prose-secret", CHOSEN)]),
    (f"the db pass is {CHOSEN}", [("prose-secret", CHOSEN)]),
    (f"tests pass {CHOSEN}", []),
    (f"we pass {CHOSEN} to it", []),
    (f"to_pass {CHOSEN}", []),
    (f"pass {CHOSEN}", []),
    (f"pass {RANDOM} {CHOSEN}", []),
    (f"the pass for prod-2 {CHOSEN}", []),  # nor for the proximity rule, ever
    # under a password's name, a chosen password: eight characters, three classes, not a word or a placeholder
    ("the db password is Kq7!xzLm", [("prose-secret", "Kq7!xzLm")]),
    ("the db password is Kq7!xzL", []),
    ("the db password is tangerine", []),
    ("the db password is password", []),
    ("the password Kq7!xzLm", [("prose-secret", "Kq7!xzLm")]),
    ("the password Kq7!xzL", []),
    # every name that says password judges so; others ask for more (a random string, or a symbol people pick)
    (f"the db password is {PLAIN}", [("prose-secret", PLAIN)]),
    (f"the db pwd is {PLAIN}", [("prose-secret", PLAIN)]),
    (f"the db pw is {PLAIN}", [("prose-secret", PLAIN)]),
    (f"the wifi psk is {PLAIN}", [("prose-secret", PLAIN)]),
    (f"the wifi psk {PLAIN}", [("prose-secret", PLAIN)]),
    (f"the db pwx is {PLAIN}", []),
    (f"the token is {PLAIN}", []),
    (f"use {PLAIN} as the db pw", [("prose-secret-after", PLAIN)]),
    (f"use {PLAIN} as the token", []),
    (f"the wifi psk for prod-2 {PLAIN}", [("prose-secret-near", PLAIN)]),
    (f"the token for prod-2 {PLAIN}", []),
    # under another name: twelve random characters, or (linked) a value holding a symbol people pick
    ("the token is qZ7xK2mP9vL4", [("prose-secret", "qZ7xK2mP9vL4")]),
    ("the token is qZ7xK2mP9vL", []),
    (f"the token is {PICKED}", [("prose-secret", PICKED)]),
    ("the token is bluebirdtree", []),
    (f"the token: {PICKED}", [("prose-secret", PICKED)]),
    (f"the token (set up last year) is {PICKED}", [("prose-secret", PICKED)]),
    (f"the token {PICKED}", [("prose-secret-near", PICKED)]),  # not linked: only the proximity rule takes it
    ("the token qzxkmpvlwr1t", [("prose-secret", "qzxkmpvlwr1t")]),
    ("the token qzxkmpvlwr1", []),
    # named as something else
    ("the token's commit is 3f9a8b7c6d5e4f3a2b1c", []),
    (f"the token commit is {RANDOM}", []),
    (f"the token's commit {RANDOM}", []),
    (f"the token for prod-2 commit {RANDOM}", []),
    # the value first, the name after
    (f"use {CHOSEN} as the root pw", [("prose-secret-after", CHOSEN)]),
    (f"use {RANDOM} as the signing secret", [("prose-secret-after", RANDOM)]),
    (f"use {PICKED} as the signing secret", [("prose-secret-after", PICKED)]),
    ("use bluebirdtree12 as the signing secret", []),
    ("use qZ7xK2mP9vL4 as the signing secret", [("prose-secret-after", "qZ7xK2mP9vL4")]),  # twelve random
    ("use qZ7xK2mP9vL as the signing secret", []),
    (f"use {CHOSEN} for the root pw table", []),  # "for the K table": a table, not the K
    (f"use {CHOSEN} for the root pw in prod", [("prose-secret-after", CHOSEN)]),
    (f"use {CHOSEN} for the root pw{' ' * 29}in prod", [("prose-secret-after", CHOSEN)]),  # the next word, however far
    (f"{RANDOM} (the token refresh commit)", []),
    (f"{RANDOM} (the signing secret, rotated today)", [("prose-secret-after", RANDOM)]),
    ("use this.accessToken as the token", []),
    (f"note {CHOSEN}: as the root pw", [("prose-secret-near", CHOSEN)]),  # a label's colon: no value of that rule
    (f"note {CHOSEN} as the root pw", [("prose-secret-after", CHOSEN)]),
    (f"{PICKED}, that's the password", [("prose-secret-after", PICKED)]),
    (f"{PICKED} — for the password", [("prose-secret-after", PICKED)]),
    # the name, words of a sentence, the value: words only, and a value that is no code
    (f"here's the signing key you wanted {RANDOM}", [("prose-secret-bare", RANDOM)]),
    (f"here's the signing key you wanted {PICKED}", [("prose-secret-bare", PICKED)]),
    (f"here's the signing key, you wanted {RANDOM}", [("prose-secret-bare", RANDOM)]),
    (f"here's the signing key you wanted {RANDOM} so keep it in env", [("prose-secret-bare", RANDOM)]),  # 5th word
    (f"here's the signing key return {RANDOM}", [("prose-secret-near", RANDOM)]),  # a word of code between
    (f"here's the signing key typeof {RANDOM}", [("prose-secret-near", RANDOM)]),
    (f"here's the signing key you2 wanted {RANDOM}", [("prose-secret-near", RANDOM)]),  # no word of a sentence
    (f"here's the signing key you wanted obj.get({RANDOM})", []),
    ("here's the signing key you wanted a.b.c9", []),
    ("here's the signing key you wanted Abc.dEf9ghij", []),
    (f"here's the signing key you wanted !{RANDOM}", []),
    (f"here's the signing key you wanted \\{RANDOM}", []),
    ("here's the signing key you wanted qZ7xK2m{P9vL4wR", []),
    (f"here's the signing key you wanted {RANDOM} as the commit", []),
    (f"here's the signing key you wanted {RANDOM} as the sha", []),
    (f"here's the signing key you wanted {RANDOM}{' ' * 50}as the commit", []),  # the words after, whole
    (f"here's the signing key you wanted {RANDOM}\nas the commit", [("prose-secret-bare", RANDOM)]),  # its line only
    # echoed into a command that stores a secret: anything but a variable, a flag or a placeholder
    (f"echo {CHOSEN} | wrangler secret put DB", [("piped-secret", CHOSEN)]),
    ("echo qZ7xK2mP9vL4x | wrangler secret put DB", [("piped-secret", "qZ7xK2mP9vL4x")]),
    ("echo $DBPASS123 | wrangler secret put DB", []),
    ("echo $1qZ7xK2mP9vL4 | wrangler secret put DB", []),
    ("echo %qZ7xK2mP9vL4 | wrangler secret put DB", []),
    ("echo <qZ7xK2mP9vL4 | wrangler secret put DB", []),
    ("echo -qZ7xK2mP9vL4 | wrangler secret put DB", []),
    ("echo password | wrangler secret put DB", []),
    ("echo qzxkmpv1 | docker login --password-stdin", [("piped-secret", "qzxkmpv1")]),
    ("echo qzxkmpvl | docker login --password-stdin", []),
    ("printf '%s' qZ7xK2mP9vL4 | gh secret set X", [("piped-secret", "qZ7xK2mP9vL4")]),
    ("echo qZ7xK2mP9vL4 | vercel env add X", [("piped-secret", "qZ7xK2mP9vL4")]),
    ("echo qZ7xK2mP9vL4 | pass insert X", [("piped-secret", "qZ7xK2mP9vL4")]),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_each_rule_at_its_edge(text: str, expected: list[tuple[str, str]]) -> None:
    assert _found(text) == expected


# --- the proximity rule (credential_near.py), where only it can find the value -------------------------------

NEAR_CASES: list[tuple[str, list[tuple[str, str]]]] = [
    # a value before its name: a mark or a linking word, then at most three words of the name
    (f"{PICKED} — laptop login password", [("prose-secret-near", PICKED)]),
    (f"{PICKED} — my old laptop login password", [("prose-secret-near", PICKED)]),  # (my, old: linking words)
    (f"{PICKED} — work laptop login password", [("prose-secret-near", PICKED)]),  # three words of the name
    (f"{PICKED} — spare work laptop login password", []),  # four
    (f"{PICKED} — very old laptop login password here", []),  # a linking word after a word of the name
    (f"{PICKED} the — password", [("prose-secret-near", PICKED)]),
    (f"{PICKED} — the laptop, password", [("prose-secret-near", PICKED)]),
    (f"{PICKED} — laptop — password", []),  # a link after a word of the name
    (f"{PICKED} laptop — password", []),  # a word before any link
    (f"{PICKED} ! the password", []),  # the sentence ended
    (f"{PICKED} . — password", []),  # ... though a mark follows
    (f"{PICKED} — used with signing secret", []),  # a word that is no part of a name
    (f"{PICKED} is. the password", [("prose-secret-near", PICKED)]),
    (f"{PICKED} the password", []),  # no mark and no linking verb before the name
    (f"{PICKED} our new password", []),
    (f"{RANDOM} — the signing secret", [("prose-secret-near", RANDOM)]),
    (f"{RANDOM} — used token", [("prose-secret-near", RANDOM)]),
    (f"{RANDOM} — used with the signing secret", []),
    (f"commit {RANDOM} — the token", []),  # named as something else just before it, from the text's first letter
    (f"see commit {RANDOM} — the token", []),
    # a value on a later line: right below its label, or one blank line below it, never further or past other text
    (f"> the token\n> {RANDOM}", [("prose-secret-near", RANDOM)]),
    (f"the token:\n\n{RANDOM}", [("prose-secret-near", RANDOM)]),
    (f"the token:\n\n\n{RANDOM}", []),
    (f"the token\n\n\n\n{RANDOM}", []),
    (f"the token below\n{RANDOM}", [("prose-secret", RANDOM)]),
    (f"the token below\n\n{RANDOM}", []),
    (f"the token here\nno {RANDOM}", []),
    (f"the token line\none more\n{RANDOM}", []),
    (f'the token "a", "{RANDOM}"', []),  # a list of strings
    (f'the token, then "{RANDOM}"', [("prose-secret-bare", RANDOM)]),
    # judged by the value alone: under a password's name a chosen password, else random or with a picked symbol
    (f"the token for prod-2 {RANDOM}", [("prose-secret-near", RANDOM)]),
    ("the token for prod-2 qZ7xK2mP9vL4", [("prose-secret-near", "qZ7xK2mP9vL4")]),  # twelve random
    ("the token for prod-2 qZ7xK2mP9vL", []),
    (f"the token for prod-2 {PICKED}", [("prose-secret-near", PICKED)]),
    ("the token for prod-2 Bluebird?3427x", [("prose-secret-near", "Bluebird?3427x")]),  # `?`: only this rule's
    ("the token for prod-2 bluebird?3427x", [("prose-secret-near", "bluebird?3427x")]),
    ("the secret Bluebird?3427", []),
    ("the secret Bluebird3427a", []),
    ("the password for prod-2 Kq7!xzLm", [("prose-secret-near", "Kq7!xzLm")]),
    ("the password for prod-2 Kq7!xzL", []),
    ("the token for prod-2 9f3a7c1e5b2d8046af31", [("prose-secret-near", "9f3a7c1e5b2d8046af31")]),  # 20 hex
    ("the token for prod-2 9f3a7c1e5b2d8046af3", []),  # 19 hex: a digest or an id
    ("the token for prod-2 9f3a7c1e5b2d8046a", []),
    ("the token deadbeefdeadbeef0012", []),
    ("the token for prod-2 pkcs7_signed_st1x", []),  # an identifier
    ("the token pkcs7_signed_st1x", [("prose-secret", "pkcs7_signed_st1x")]),
    ("the token for prod-2 password", []),
    ("the token for prod-2 a.b.cdefghij", []),
    ("the token for prod-2 $SECRET_TOKEN1", []),
    ("the token for prod-2 ~mod.Klass9x", []),
    # the rest of the name's word names it as something else, and a name inside a word is none
    (f"the token:commit {RANDOM}", []),
    (f"the token:id {RANDOM}", []),
    (f"the token:{RANDOM}", [("high-entropy-assignment", RANDOM)]),  # code: a name and its value
    (f"xtoken for prod-2 {RANDOM}", []),
    (f"[token for prod-2 {RANDOM}", [("prose-secret-near", RANDOM)]),  # after a bracket, as the patterns allow
]


@pytest.mark.parametrize(("text", "expected"), NEAR_CASES)
def test_the_proximity_rule_at_its_edge(text: str, expected: list[tuple[str, str]]) -> None:
    assert _found(text) == expected


def _random(length: int) -> str:
    rng = random.Random(7)
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(length))


@pytest.mark.parametrize(
    ("length", "after", "near"),
    [(151, True, True), (152, True, True), (153, False, True), (154, False, False)],
)
def test_a_value_before_its_name_is_looked_for_160_characters_back(length: int, after: bool, near: bool) -> None:
    """Both rules that look back from a name look 160 characters back on its line, no further."""
    value = _random(length)
    text = f"use {value} as the token"  # the name starts length + 8 characters after the value
    assert _found(text) == ([("prose-secret-after", value)] if after else [])
    text = f"{value} — the token"  # ... length + 7
    assert _found(text) == ([("prose-secret-near", value)] if near else [])


def test_what_a_chosen_password_and_a_password_name_are() -> None:
    # three classes, mostly a word, with a symbol people pick: chosen, though no random string
    for value in ("bluebird$3427", "tangerine.1069!", "summerhouse$24"):
        assert looks_like_password(value) is True and not looks_random(value, min_len=8), value
    assert looks_like_password("bluebird$$$$") is False and looks_like_password("deploy.cache$main") is False
    for name in ("pass", "PWD", "pw", "psk", "db-pw", "passphrase", "Password", "api_psk"):
        assert is_password_name(name) is True, name
    for name in ("pwx", "token", "spw", "pskx", "secret"):
        assert is_password_name(name) is False, name


def test_each_marker_of_a_redaction_is_said_where_it_stands() -> None:
    """redact_spans (the one replacing loop, which a kept turn's `redacted` list comes from): after the first marker,
    each span is counted in the redacted text, not the original."""
    first, second = "ghp_" + "Zq9Xw8Vu7T" * 3 + "s6R5p4", "ghp_" + "Kq9Xw8Vu7T" * 3 + "s6R5p4"
    redacted, spans = redact_spans(f"a {first} and b {second} end", "[redacted {rule}]")
    assert redacted == "a [redacted github-pat] and b [redacted github-pat] end"
    assert [(span["rule"], span["start"], span["end"]) for span in spans] == [("github-pat", 2, 23),
                                                                              ("github-pat", 30, 51)]  # fmt: skip
    assert all(redacted[span["start"] : span["end"]] == "[redacted github-pat]" for span in spans)


BRACKETED: list[tuple[str, list[tuple[str, str]]]] = [
    # a bracket the sentence opened before the value closes after it: it is the sentence's, never the secret's
    (f"[the password is {CHOSEN}]", [("prose-secret", CHOSEN)]),
    (f"see [password: {CHOSEN}] here", [("high-entropy-assignment", CHOSEN)]),
    (f"(the password is {CHOSEN})", [("prose-secret", CHOSEN)]),
    (f"- [ ] rotate it (token: {RANDOM})", [("prose-secret", RANDOM)]),
    # no bracket opened before it on its line: the closing one may be the secret's own last character
    (f"password: {CHOSEN}]", [("high-entropy-assignment", CHOSEN + "]")]),
    (f"[draft]\npassword: {CHOSEN}]", [("high-entropy-assignment", CHOSEN + "]")]),
]


@pytest.mark.parametrize(("text", "expected"), BRACKETED)
def test_a_closing_bracket_of_the_sentence_is_not_redacted_with_the_value(
    text: str, expected: list[tuple[str, str]]
) -> None:
    assert _found(text) == expected
    kept, _ = redact_spans(text)
    value = expected[0][1]
    assert kept.endswith(text[text.index(value) + len(value) :]) and value not in kept  # the rest, byte for byte
