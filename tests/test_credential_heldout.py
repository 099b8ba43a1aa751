"""Issue 20's credential misses, the held-out recall goals, and ordinary code that must pass the scan."""

# Every value here is drawn from a seeded generator and every prefix is joined from pieces: the file holds no
# string shaped like a live credential.  The held-out sets live in bench/credential_heldout.py, written apart
# from tests/credential_formats.py; its "blind" pack was not looked at while these rules were written.

from __future__ import annotations

import base64
import random
import string
import sys
from pathlib import Path

import pytest

from wheypoint.model.credentials import scan_text

ROOT = Path(__file__).resolve().parents[1]
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
B64URL = ALNUM + "_-"
HEX = "0123456789abcdef"


def _r(seed: int, alphabet: str, n: int) -> str:
    rng = random.Random(seed)
    kinds = (string.ascii_lowercase, string.ascii_uppercase, string.digits)
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(n))
        if sum(any(c in k for c in value) for k in kinds) >= min(2, sum(any(c in k for c in alphabet) for k in kinds)):
            return value


def _b64(seed: int, n: int) -> str:
    return base64.b64encode(random.Random(seed).randbytes(n)).decode()


def _sig(seed: int) -> str:
    return _b64(seed, 32).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")


def _ppk(seed: int, escaped: bool = False) -> str:
    nl = "\\n" if escaped else "\n"
    return nl.join(
        [
            "PuTTY-User-Key-File-" + str(2 + seed % 2) + ": ssh-ed25519",
            "Encryption: none",
            "Comment: key",
            "Public-Lines: 2",
            _b64(seed, 48),
            _b64(seed + 1, 12),
            "Private-Lines: 1",
            _b64(seed + 2, 36),
            "Private-MAC: " + _r(seed + 3, HEX, 64),
        ]
    )


PW = "Tq7#" + _r(40, ALNUM, 8) + "!z"
TG = _r(41, string.digits, 10) + ":AA" + _r(42, B64URL, 33)
SAS_QUERY = "sv=2022-11-02&ss=b&srt=sco&sp=rl&se=2026-01-01T00:00:00Z&spr=https&sig="

# (rule, text): one per class issue 20 names as missed.  Each was missed by the scanner of commit 098e650.
ISSUE_MISSES = [
    ("azure-sas-signature", "https://acme.blob.core.windows.net/dumps/x.tar?" + SAS_QUERY + _sig(1)),
    (
        "azure-sas-signature",
        "BlobEndpoint=https://a.blob.core.windows.net/;SharedAccess" + "Signature=" + SAS_QUERY + _sig(2),
    ),
    (
        "azure-sas-signature",
        "SharedAccessSignature sr=https%3A%2F%2Fns.servicebus.windows.net&sig=" + _sig(3) + "&se=1735689600&skn=send",
    ),
    ("putty-private-key", _ppk(4)),
    ("putty-private-key", '{"key": "' + _ppk(5, escaped=True) + '"}'),
    ("putty-private-key", "ppk: |\n  " + _ppk(6).replace("\n", "\n  ")),
    ("tailscale-key", "ts" + "key-auth-k" + _r(7, ALNUM, 10) + "CNTRL-" + _r(8, ALNUM, 32)),
    ("tailscale-key", "export TS_API_KEY=ts" + "key-api-k" + _r(9, ALNUM, 10) + "CNTRL-" + _r(10, ALNUM, 32)),
    ("tailscale-key", "use ts" + "key-client-k" + _r(11, ALNUM, 10) + "CNTRL-" + _r(12, ALNUM, 32) + " for the runner"),
    ("curl-user", "curl -u admin:" + PW + " https://es.internal:9200/_cat/indices"),
    ("curl", "curl -s --user 'ci-bot:" + PW + "' https://nexus.acme.io/service/rest/v1/status"),
    ("curl-user", '{"cmd": "curl --user=\\"ops:' + PW + '\\" http://localhost:8080/api/json"}'),
    ("curl-user", "curl -u ops:-" + PW + " http://localhost"),  # a password may start with a hyphen
    ("docker-hub-pat", "the docker hub PAT ended up being dck" + "r_pat_" + _r(13, B64URL, 27)),
    ("docker-hub-pat", "echo dck" + "r_pat_" + _r(14, B64URL, 27) + " | docker login -u acme --password-stdin"),
    ("supabase-secret-key", "Rotated the supabase key. New one: sb" + "_secret_" + _r(15, B64URL, 31)),
    ("supabase-secret-key", "SUPA=sb" + "_secret_" + _r(16, B64URL, 31) + " npm run seed"),
    ("wireguard", "[Interface]\nAddress = 10.0.0.2/32\nPrivateKey = " + _b64(17, 32) + "\nListenPort = 51820"),
    ("wireguard", "the wireguard private key on the laptop → " + _b64(18, 32)),
    ("telegram-bot-token", "curl https://api.telegram.org/bot" + TG + "/sendMessage -d chat_id=1"),
    ("telegram-bot-token", '{"webhook": "https://api.telegram.org/bot' + TG + '/getUpdates"}'),
    ("okta-api-token", "Authorization: SS" + "WS 00" + _r(19, B64URL, 40)),
    (
        "okta-api-token",
        'curl -H "Authorization: SS' + "WS 00" + _r(20, B64URL, 40) + '" https://acme.okta.com/api/v1/users',
    ),
    ("prose", "the db password we use in prod: " + PW),
    ("prose", "the secret access key for the backup user is " + _r(21, B64, 40)),
    ("prose", "the API secret for staging, which Dana rotated last week, is " + _r(22, HEX, 40)),
    ("prose", "use " + PW + " as the root pw"),
    ("prose", "my gmail password is Bluebird$3427"),
    ("prose", "can you update the signing secret? new value " + _r(23, ALNUM, 24)),
    ("prose", "the AWS secret access key ended up being " + _r(24, B64, 40) + " - can you wire it in?"),
    ("prose", "Can you check why " + _r(25, B64, 40) + " gets a 401? it's our AWS secret access key."),
    ("assignment", '[{"name": "AWS_SECRET_ACCESS_KEY", "value": "' + _r(26, B64, 40) + '"}]'),
    ("assignment", "- name: DB_PASSWORD\n  value: '" + PW + "'"),
    ("assignment", 'gh secret set DEPLOY_TOKEN --body "' + _r(27, ALNUM, 32) + '"'),
    # found missed by the fresh pack's only run (so no longer held out): --name NAME --value value, R's <-
    ("assignment", "az keyvault secret set --vault-name kv --name db_password --value '" + PW + "'"),
    ("assignment", 'aws ssm put-parameter --name /prod/api_token --value "' + _r(33, ALNUM, 32) + '"'),
    ("assignment", 'aws_secret_access_key <- "' + _r(34, B64, 40) + '"'),
    # prefixed tokens the held-out set found missed as well (gitleaks lacks them or pins them too narrowly)
    ("stripe-webhook-secret", "STRIPE_HOOK=wh" + "sec_" + _r(29, ALNUM, 32)),
    ("figma-token", "figma → fig" + "d_" + _r(30, B64URL, 40)),
    ("notion-token", '{"notion": "nt' + "n_" + _r(31, ALNUM, 46) + '"}'),
    ("flyio-token", "FLY=FlyV1 fm" + "2_" + _r(32, B64URL, 120)),
    # issue 20 §4, second pass: no link word, the name after the value with "for", a value piped into a command
    ("prose-secret-bare", "here's the signing key you wanted " + _r(35, ALNUM, 20) + "7"),
    ("prose-secret-after", "we went with " + _r(36, HEX, 32) + " for the webhook secret in the end"),
    ("piped-secret", "echo '" + _r(37, ALNUM, 24) + "' | docker login -u ci --password-stdin ghcr.io"),
]
# classes several rules may find (prose and assignments, WireGuard's key, curl's quoted --user, which gitleaks knows)
_ANY = {"wireguard", "prose", "assignment", "curl"}


@pytest.mark.parametrize(("rule", "text"), ISSUE_MISSES, ids=[f"{r}-{i}" for i, (r, _) in enumerate(ISSUE_MISSES)])
def test_each_class_issue_20_names_is_found(rule: str, text: str) -> None:
    hits = scan_text(text)
    assert hits, "missed"
    if rule not in _ANY:
        assert rule in [h.rule for h in hits]


def test_a_sas_signature_must_decode() -> None:
    assert scan_text("verify(sig=signature_bytes, key=public)") == []
    assert scan_text("?sig=" + "abcdefghijklmnopqrstuvwxyz") == []  # not base64 of a digest's length


# --- ordinary code and masked values ---------------------------------------------------------------

CODE = [
    "postgresql://user:***@host:5432/db",
    "postgresql://app:****@db.internal/main",
    "redis://default:<password>@cache:6379",
    "mysql://root:${MYSQL_ROOT_PASSWORD}@db/app",
    "amqp://guest:$RABBIT_PASS@mq:5672",
    "postgres://svc:xxxx@10.0.0.3/main",
    "mongodb://admin:changeme@localhost",
    "from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey",
    "key = Ed25519PrivateKey.generate()",
    "def load(pem: bytes) -> RSAPrivateKey:",
    "const privateKeyPem = await fs.readFile(keyPath, 'utf8');",
    "SecretAccessKeyId: string;",
    "password = getpass()",
    "password: str",
    'token = os.environ["TOKEN"]',
    "api_key=settings.API_KEY",
    "self.password = password_hash(password)",
    "if (!token) throw new Error('token is required');",
    "const secretKey = process.env.SECRET_KEY ?? '';",
    "password_reset_token_expires_in: 3600",
    "the token is refreshed every hour and the secret rotates monthly",
    "Access token refresh uses 3f786850e387550fdab836ed7e6dc881de23001b as the commit",
]


@pytest.mark.parametrize("text", CODE)
def test_ordinary_code_and_masked_values_pass(text: str) -> None:
    assert scan_text(text) == []


# --- held-out recall -------------------------------------------------------------------------------


def _heldout() -> object:
    sys.path.insert(0, str(ROOT / "bench"))
    import credential_heldout

    return credential_heldout


@pytest.mark.parametrize("pack", ["dev", "blind"])
def test_held_out_formats_reach_99_percent_in_every_form(pack: str) -> None:
    heldout = _heldout()
    cases = heldout.format_cases(pack, heldout.SEEDS[pack], 1)  # type: ignore[attr-defined]
    assert len(cases) >= 1000 and len({c[0] for c in cases}) >= 40
    for form in heldout.FORMS:  # type: ignore[attr-defined]
        mine = [c for c in cases if c[1] == form]
        found = sum(heldout._found(text, core, scan_text) for _, _, text, core in mine)  # type: ignore[attr-defined]
        assert found >= 0.99 * len(mine), (form, found, len(mine))


@pytest.mark.parametrize("pack", ["dev", "blind"])
def test_held_out_prefix_less_secrets_reach_90_percent(pack: str) -> None:
    heldout = _heldout()
    cases = heldout.named_cases(pack, heldout.SEEDS[pack] + 1, 300)  # type: ignore[attr-defined]
    found = sum(heldout._found(text, value, scan_text) for _, text, value in cases)  # type: ignore[attr-defined]
    assert found >= 0.9 * len(cases), found


# The packs written last and run once each (docs/credentials.md), with the figures of that one run: below the goals
# in part, they must not drop. fresh: 1,157 credentials at 99.4%, 400 sentences at 77.8%; fourth (after the second
# pass): 1,212 at 99.0%, 400 at 66.5%.  Third pass: fifth's one run found 1,148 of 1,157 and 193 of 400 (48.2%);
# after the fixes made on its misses it finds 1,157 and 387, and its floor sits a little under those; sixth, run once
# after those fixes, found 1,149 of 1,157 (99.3%) and 191 of 400 (47.8%).  Fourth pass (the proximity rule,
# credential_near.py): seventh's one run found 1,154 and 301 (75.2%), eighth's (after the fixes made on seventh's
# misses) 1,150 and 324 (81.0%), ninth's (after the fixes made on eighth's misses) 1,155 and 383 (95.8%); the floors
# of the packs fixed on since sit a little under what they find now (sixth 384, seventh 394, eighth 361).
@pytest.mark.parametrize(
    ("pack", "formats", "sentences"),
    [("fresh", 1150, 311), ("fourth", 1200, 266), ("fifth", 1150, 380), ("sixth", 1145, 378),
     ("seventh", 1150, 388), ("eighth", 1150, 355), ("ninth", 1150, 378)],
)  # fmt: skip
def test_a_pack_run_once_holds_its_first_measured_figures(pack: str, formats: int, sentences: int) -> None:
    heldout = _heldout()
    cases = heldout.format_cases(pack, heldout.SEEDS[pack], 1)  # type: ignore[attr-defined]
    found = sum(heldout._found(text, core, scan_text) for _, _, text, core in cases)  # type: ignore[attr-defined]
    assert found >= formats, found
    named = heldout.named_cases(pack, heldout.SEEDS[pack] + 1, 400)  # type: ignore[attr-defined]
    found = sum(heldout._found(text, value, scan_text) for _, text, value in named)  # type: ignore[attr-defined]
    assert found >= sentences, found


# --- issue 20 §4, second pass: the classes the fresh pack's one run missed, generated ------------------------


def _pick(seed: int) -> str:
    """A prefix-less secret of a kind people paste: a chosen password, hex, base64, letters and digits."""
    rng = random.Random(seed)
    kind = seed % 4
    if kind == 0:
        return rng.choice(("Heron", "juniper", "Copper", "walrus")) + rng.choice("!#@&*") + str(rng.randint(100, 9999))
    if kind == 1:
        return _r(seed, HEX, rng.choice((24, 32, 40)))
    if kind == 2:
        return _b64(seed, rng.choice((18, 24, 32)))
    return _r(seed, ALNUM, rng.choice((16, 20, 24))) + str(seed % 10)


NAMES = ("vault unseal key", "ftp password", "signing secret", "broker passphrase", "api token", "nas pw")
NO_LINK = ("here's the {K} you wanted {V}", "sending the {K} you asked about {V} now", "{K} from the old box {V}")
FOR_AFTER = ("we went with {V} for the {K} in the end", "I picked {V} for the {K}", "try {V} for our {K}")
PIPED = (
    "printf '%s' \"{V}\" | wrangler secret put {N}",
    "echo -n {V} | gh secret set {N} --repo acme/api",
    "echo '{V}' | docker login -u ci --password-stdin registry.acme.io",
    "printf \"%s\\n\" '{V}' | fly secrets set {N}=-",
)


def _class_cases(templates: tuple[str, ...]) -> list[tuple[str, str]]:
    out = []
    for i, template in enumerate(templates * 8):
        value = _pick(1000 + i)
        out.append(
            (
                template.format(
                    K=NAMES[i % len(NAMES)], N=("DB_PASSWORD", "APP_SECRET")[i // len(templates) % 2], V=value
                ),
                value,
            )
        )
    return out


# ... and the classes the fourth pack's one run missed (other templates than that pack's)
CLAUSE = ("the {K}, as far as I know, {V}", "{K}: the old one expired, the new one is {V}", "the {K}? we use {V} now")
PSK = ("the wifi psk is {V}", "router psk -> {V}", "{V} is the site psk")
NAME_VALUE = ('{{"Name": "{N}", "Value": "{V}"}}', '[{{"name": "{N}", "Value": "{V}"}}]')


@pytest.mark.parametrize(
    "templates",
    [NO_LINK, FOR_AFTER, PIPED, CLAUSE, PSK, NAME_VALUE],
    ids=["no-link", "for-after", "piped", "clause", "psk", "name-value"],
)
def test_each_class_the_fresh_run_missed_is_found(templates: tuple[str, ...]) -> None:
    for text, value in _class_cases(templates):
        start = text.index(value)
        hits = scan_text(text)
        assert any(h.start < start + len(value) and h.end > start for h in hits), text


@pytest.mark.parametrize(
    "text",
    [
        "if (credential instanceof jwtclient_1.JWT) {",
        "if (!r2.credentials || r2.credentials && !r2.credentials.access_token) {",
        "the token you gave me expires in 3600s",
        "I used the password reset flow for build 20240611 yesterday",
        "echo $GITHUB_TOKEN | docker login ghcr.io -u ci --password-stdin",
        'echo "${NPM_TOKEN}" | gh secret set NPM_TOKEN',
        "ran migrate_2024_01 for the session key table",
    ],
)
def test_the_new_classes_leave_code_and_variables_alone(text: str) -> None:
    assert scan_text(text) == []


# --- issue 20 §4, third pass: the classes the fifth pack's one run missed, generated (other templates and names) --

# markdown emphasis around a secret's name or its link
EMPHASIS = ("**{K}**: {V}", "*{K}:* {V}", "***{K}*** = {V}", "- **{K}** → {V}")
# the value first, then the name in parentheses
PAREN_AFTER = ("try {V} (our {K})", "{V} (it's the {K} for staging)", "new one: {V} (the {K}, rotated today)")
# a question whose link is "is it" / "was it"
IS_IT = ("the {K} for prod? is it {V}", "what was the {K} again? was it '{V}'", '{K} - now? is it "{V}" still')
# an aside in parentheses between the name and the value
ASIDE = ("{K} (set up by IT in 2023, nobody rotated it) {V}", "the {K} (prod) {V}", "{K} (see the runbook): {V}")
# names a sentence gives a secret that the scan did not read as one: "... pass", "... app key", "... fernet key"
NEW_NAMES = ("wifi pass", "mail app key", "fernet key", "root pass", "app key", "shared key")
NAMED_NEW = ("the {K} is {V}", "{K}: {V}", "the {K} we use: {V}")


def _named_cases(templates: tuple[str, ...], names: tuple[str, ...] = NAMES) -> list[tuple[str, str]]:
    out = []
    for i, template in enumerate(templates * 8):
        value = _pick(2000 + i)
        out.append((template.format(K=names[i % len(names)], V=value), value))
    return out


@pytest.mark.parametrize(
    ("templates", "names"),
    [(EMPHASIS, NAMES), (PAREN_AFTER, NAMES), (IS_IT, NAMES), (ASIDE, NAMES), (NAMED_NEW, NEW_NAMES)],
    ids=["emphasis", "paren-after", "is-it", "aside", "new-names"],
)
def test_each_class_the_fifth_run_missed_is_found(templates: tuple[str, ...], names: tuple[str, ...]) -> None:
    missed = []
    for text, value in _named_cases(templates, names):
        start = text.index(value)
        if not any(h.start < start + len(value) and h.end > start for h in scan_text(text)):
            missed.append(text)
    assert not missed, missed


# the formats the fifth run missed: a subscript assignment, a name/data pair, curl's user:password whatever the
# password starts with (the gitleaks curl rule allow-lists `user:x...`, `user:*...`), a %XX% inside a password
SUBSCRIPT = ('os.environ["API_TOKEN"] = "{V}"', "ENV['DB_PASSWORD'] = '{V}'", "$_ENV['APP_SECRET'] = '{V}';")
DATA_PAIR = ('{{"id": "db_password", "data": "{V}"}}', '[{{"key": "API_TOKEN", "data": "{V}"}}]')
CURL = ("curl -u 'ops:x{V}' https://ci.internal", 'curl --user="bot:*{V}" http://localhost:9000', "curl -u a:{V}%AB%c")


@pytest.mark.parametrize("templates", [SUBSCRIPT, DATA_PAIR, CURL], ids=["subscript", "data-pair", "curl"])
def test_each_format_the_fifth_run_missed_is_found(templates: tuple[str, ...]) -> None:
    missed = []
    for i, template in enumerate(templates * 6):
        value = _r(3000 + i, ALNUM, 20)
        text = template.format(V=value)
        start = text.index(value)
        if not any(h.start < start + len(value) and h.end > start for h in scan_text(text)):
            missed.append(text)
    assert not missed, missed


@pytest.mark.parametrize(
    "text",
    [
        "make the tests pass: run pytest -q",
        "the key (see models.py) UserProfile2 is fine",
        "3f786850e387550fdab836ed7e6dc881de23001b (the token refresh commit)",
        "is the password field required? is it optional_field_2",
        "**token**: the one from the env file",
        "if (app_key) { return secret_store(app_key); }",
        "    pass  # nothing to do for the session key",
        'os.environ["API_TOKEN"] = os.environ["FALLBACK_TOKEN"]',
        # "pass" as a verb (site-packages lines the first version of the bare "pass" name flagged)
        "Command line arguments to pass to :py:func:`pytest.main`.",
        "# Specific for !Ref AWS::NoValue, no callback even for pass_if_null=True",
        "make sure the tests pass: tox -e py311-django42",
    ],
)
def test_the_fifth_run_classes_leave_code_and_prose_alone(text: str) -> None:
    assert scan_text(text) == []
