"""The proximity rule: a secret a few words from its name, whatever joins them, and the code it leaves alone."""

from __future__ import annotations

import random
import string
from pathlib import Path

import pytest

from conftest import Runner, make_repo
from wheypoint.model.credentials import scan_text

AN = string.ascii_letters + string.digits


def _random(seed: int, n: int = 20) -> str:
    rng = random.Random(seed)
    while True:
        value = "".join(rng.choice(AN) for _ in range(n))
        if any(c.isdigit() for c in value) and any(c.isupper() for c in value) and any(c.islower() for c in value):
            return value


def _password(seed: int) -> str:
    rng = random.Random(seed)
    return rng.choice(("Kestrel", "marmot", "Quasar")) + rng.choice("!#@") + str(rng.randint(100, 9999)) + "x"


# Joinings no other prose rule knows (each shape failed before the proximity rule): the name in backticks, a dash
# before or around the value, the value in parentheses, an ellipsis, a verb between, a quoted block, a table row,
# a label with the value below a blank line, the value first and the name after a mark.
SHAPES = (
    "`{K}`: `{V}`",
    "re: {K} -- {V} -- expires end of month",
    "did the {K} ({V}) get into the logs?",
    "{K}... {V}",
    "when it asks for the {K}, type {V}",
    "> {K}\n> {V}\n\nthat's what the runbook says",
    "| {K} | {V} |",
    "{K}\n\n    {V}\n",
    "{V} — {K}, prod only",
    "{V} (= {K})",
    "I think {V} is still the {K} but double check",
    "paste {V} into the {K} box, then save",
    "{K} was wrong in the .env, correct one: {V}",
)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize(("name", "value"), [("cookie secret", _random(1)), ("proxy password", _password(2)),
                                             ("influxdb token", _random(3, 32))])  # fmt: skip
def test_a_secret_near_its_name_is_found_whatever_joins_them(shape: str, name: str, value: str) -> None:
    text = shape.format(K=name, V=value)
    start = text.index(value)
    hits = [h for h in scan_text(text) if h.start < start + len(value) and h.end > start]
    assert hits, f"not found: {text!r}"
    assert all(h.start >= start and h.end <= start + len(value) + 1 for h in hits)  # the value, not the sentence


def test_the_rule_that_finds_them_is_the_proximity_rule() -> None:
    value = _random(4)
    assert [h.rule for h in scan_text(f"`harbor robot secret`: `{value}`")] == ["prose-secret-near"]


HEX16 = "48205d4ffd7feba3"
SHA = "3f786850e387550fdab836ed7e6dc881de23001b"


# Code and prose the first version of the rule flagged (the standard library, site-packages and the harnesses'
# JavaScript as one text per line and per file, and sentences about secrets that hold none).
@pytest.mark.parametrize(
    "text",
    [
        f'"AWS::SecretsManager::Secret": "{HEX16}",',  # a name inside a qualified identifier, a short digest
        ":raises ~anyio.WouldBlock: if there are no tokens available",  # a reference to a class
        "# bpo-10496: Catch pwd.getpwuid() error",  # the name is code (pwd.getpwuid)
        "as OpenSSL's PKCS5_PBKDF2_HMAC for short passwords and much faster",  # words between, no link
        "from ..fixer_util import FromImport, syms, token",  # a relative import
        "auth_str = [f'AWS4-HMAC-SHA256 Credential={self.scope(request)}']",  # the name is assigned to
        '"sk-ssh-ed25519 private keys cannot be loaded"',  # a value that qualifies the name
        "'AES_KEY', 'PKCS7_ISSUER_AND_SERIAL',\n           'BN_CTX', '__darwin_blkcnt_t', 'key_t',",  # a list
        'def login_cram_md5(self, user, password):\n        """ Force use of CRAM-MD5 authentication.',
        "this.#storageKeys = storageKeys;",  # a private field
        "* GCP access tokens are retrieved from authclient object/source credential.",  # words joined by a mark
        "if (privateKey && !certChain) {",  # a negation
        "line.map((token, tokenIndex) => /* @__PURE__ */ (0, jsx)(",  # an annotation
        f"Access token refresh uses {SHA} as the commit",  # named as something else after it
        f"{SHA} (the token refresh commit)",  # ... in the parentheses after the name
        "the token bucket limiter in ratelimit_v2_buckets is broken",  # an identifier
        "rotate the api key in src/settings/production.py and redeploy",  # a path
        "the password must be at least 12 characters. The session key TTL is 3600",  # a number, a sentence end
        "the token refresh fails: see https://example.com/issues/12345678",  # a URL
        "make the tests pass: tox -e py311-django42",  # "pass" the verb
    ],
)
def test_code_and_prose_about_secrets_are_left_alone(text: str) -> None:
    assert [h.rule for h in scan_text(text) if h.rule == "prose-secret-near"] == []


# References in code, which every rule leaves alone (credential_values.is_reference): the site-packages and CLI lines
# the assignment and prose rules flagged before it.
@pytest.mark.parametrize(
    "text",
    [
        "MLKEM768X25519PrivateKey = rust_openssl.hpke.MLKEM768X25519PrivateKey",
        "self, private_key: ed25519.Ed25519PrivateKey, f_priv: _FragList",
        'const clientSecret = this.#clientAuthentication.clientSecret || "";',
        "this.#pendingAccessToken = this.#pendingAccessToken || this.#internalRefreshAccessTokenAsync();",
        "this.tokenExpiresAt = (/* @__PURE__ */ new Date()).getTime() + (token2.expires_in ?? 0) * 1e3;",
        'var isScalar = (token2) => !!token2 && (token2.type === "scalar");',
    ],
)
def test_references_in_code_are_no_secret_for_any_rule(text: str) -> None:
    assert scan_text(text) == []


@pytest.mark.parametrize("text", ["my gmail password is xK9mQ2.pL7vR3zT", 'API_TOKEN = "xK9mQ2.pL7vR3zT"'])
def test_a_random_value_with_one_dot_is_still_a_secret(text: str) -> None:
    assert [text[h.start : h.end] for h in scan_text(text)] == ["xK9mQ2.pL7vR3zT"]


def test_a_checkpoint_naming_such_a_secret_is_refused_and_writes_nothing(tmp_path: Path, wp: Runner) -> None:
    """Through the command line (package and pyz): refused with a code, the secret not echoed, no note written."""
    repo = make_repo(tmp_path / "repo")
    value = _random(5)
    done = wp("checkpoint", "rotate-keys", "--orientation", "Keys are being rotated.", "--next", "hold",
              "--notes", f"We rotate the cookie secret -- {value} -- at month end.", cwd=repo)  # fmt: skip
    assert done.code != 0 and done.json["ok"] is False
    assert [p["code"] for p in done.json["error"]["problems"]] == ["secret-pattern"]
    assert value not in done.stdout + done.stderr
    assert not (repo / ".cheese").exists() or not any(value in p.read_text() for p in repo.rglob("*.md"))
    assert wp("list", "--json", cwd=repo).json.get("works", []) == []
