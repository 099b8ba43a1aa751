"""Measure wheypoint.model.credentials: recall per format, near-misses, false positives on real prompts, speed."""

# Recall is measured on generated fake credentials: 45 formats in prose and in assignment forms
# (tests/credential_formats.py), and the older per-rule set below.  False positives are counted over the
# user turns of the real transcripts in ../shared/corpus, and the scan speed over the same text.
#
# Run from the repository root:  python3 bench/credentials_eval.py  [--seed N] [--verbose] [--all]
#                                  [--speed-only] [--venv: time the scan in a clean venv holding wheypoint[fast]]
#
# Every fake value is generated here from a fixed seed; nothing realistic is stored in the repository.
# Matched values are never printed: contexts are shown with each hit replaced by [REDACTED:<rule>].

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))  # the format set is shared with the tests

from credential_formats import ALNUM, B64, B64URL, DIGITS, FORMATS, HEX, LOWER, UPPER  # noqa: E402
from credential_formats import texts as format_texts  # noqa: E402
from wheypoint.model.credential_hand import looks_random  # noqa: E402
from wheypoint.model.credentials import CredentialHit, scan_text  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"

PW_SYMBOLS = "!#$%&*+-.=?@^_~"


# --- fake credentials -------------------------------------------------------------------------------


class Faker:
    """Builds fake credentials of every shape from one seeded generator."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def chars(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def pick(self, *options: str) -> str:
        return self.rng.choice(options)

    def b64json(self, obj: object) -> str:
        raw = json.dumps(obj, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    def password(self) -> str:
        n = self.rng.randint(12, 24)
        while True:
            pw = self.chars(ALNUM + PW_SYMBOLS, n)
            if any(c.isdigit() for c in pw) or any(c in PW_SYMBOLS for c in pw):
                return pw

    # Each generator returns (snippet, value): value occurs once in snippet and is what must be found.

    def private_key(self) -> tuple[str, str]:
        kind = self.pick("RSA ", "EC ", "OPENSSH ", "ENCRYPTED ", "", "DSA ")
        body_b64 = base64.b64encode(self.rng.randbytes(self.rng.randint(120, 1200))).decode()
        lines = [body_b64[i : i + 64] for i in range(0, len(body_b64), 64)]
        if kind == "RSA " and self.rng.random() < 0.3:
            lines = ["Proc-Type: 4,ENCRYPTED", f"DEK-Info: AES-128-CBC,{self.chars(HEX, 32).upper()}", "", *lines]
        block_lines = [f"-----BEGIN {kind}PRIVATE KEY-----", *lines, f"-----END {kind}PRIVATE KEY-----"]
        if self.rng.random() < 0.4:  # JSON-escaped, as in a service-account file
            value = "\\n".join(block_lines)
            return f'"private_key": "{value}\\n",', value
        value = "\n".join(block_lines)
        return value + "\n", value

    def gcp_service_account(self) -> tuple[str, str]:
        value = self.chars(HEX, 40)
        project = self.pick("billing-prod", "ml-pipeline-381", "acme-data")
        snippet = (
            f'{{\n  "type": "service_account",\n  "project_id": "{project}",\n  "private_key_id": "{value}",\n'
            f'  "client_email": "runner@{project}.iam.gserviceaccount.com"\n}}'
        )
        return snippet, value

    def jwt(self) -> tuple[str, str]:
        header = {"alg": self.pick("HS256", "RS256", "ES256"), "typ": "JWT"}
        if self.rng.random() < 0.5:
            header["kid"] = self.chars(HEX, 16)
        payload = {
            "sub": self.chars(DIGITS, 8),
            "iss": self.pick("https://auth.internal", "accounts", "api"),
            "iat": self.rng.randint(1_600_000_000, 1_800_000_000),
            "scope": self.pick("read", "read write", "admin"),
        }
        value = f"{self.b64json(header)}.{self.b64json(payload)}.{self.chars(B64URL, self.rng.choice((43, 86, 342)))}"
        return self.pick(f"Cookie: session={value}", f"token: {value}", value), value

    def github_token(self) -> tuple[str, str]:
        if self.rng.random() < 0.25:
            value = f"github_pat_{self.chars(ALNUM, 22)}_{self.chars(ALNUM, 59)}"
        else:
            value = self.pick("ghp_", "gho_", "ghu_", "ghs_", "ghr_") + self.chars(ALNUM, 36)
        return self.pick(f"GH_TOKEN={value}", f"git remote set-url origin https://{value}@github.com/o/r", value), value

    def aws_access_key_id(self) -> tuple[str, str]:
        value = self.pick("AKIA", "ASIA") + self.chars(UPPER + "234567", 16)
        return self.pick(f"aws_access_key_id = {value}", f'"AccessKeyId": "{value}"', value), value

    def aws_secret_access_key(self) -> tuple[str, str]:
        value = self.chars(B64, 40)
        return self.pick(
            f"aws_secret_access_key = {value}",
            f"export AWS_SECRET_ACCESS_KEY={value}",
            f'"SecretAccessKey": "{value}",',
        ), value

    def anthropic_api_key(self) -> tuple[str, str]:
        value = f"sk-ant-{self.pick('api03', 'admin01')}-{self.chars(B64URL, 93)}AA"
        return self.pick(f"ANTHROPIC_API_KEY={value}", f'Anthropic(api_key="{value}")', value), value

    def openai_api_key(self) -> tuple[str, str]:
        kind = self.rng.randrange(3)
        if kind == 0:
            value = f"sk-proj-{self.chars(B64URL, self.rng.randint(48, 156))}"
        elif kind == 1:
            value = f"sk-svcacct-{self.chars(B64URL, 74)}"
        else:
            value = f"sk-{self.chars(ALNUM, 20)}T3BlbkFJ{self.chars(ALNUM, 20)}"
        return self.pick(f"OPENAI_API_KEY={value}", f"openai.api_key = '{value}'", value), value

    def stripe_key(self) -> tuple[str, str]:
        value = self.pick("sk_live_", "sk_test_", "rk_live_") + self.chars(ALNUM, self.rng.choice((24, 99)))
        return self.pick(f"STRIPE_SECRET_KEY={value}", f'stripe.api_key = "{value}"', value), value

    def slack_token(self) -> tuple[str, str]:
        kind = self.pick("xoxb", "xoxp", "xoxa", "xoxr", "xoxs")
        value = f"{kind}-{self.chars(DIGITS, 12)}-{self.chars(DIGITS, 13)}-{self.chars(ALNUM, 24)}"
        return self.pick(f"SLACK_BOT_TOKEN={value}", f'slack_token: "{value}"', value), value

    def slack_webhook(self) -> tuple[str, str]:
        value = (
            f"https://hooks.slack.com/services/T{self.chars(UPPER + DIGITS, 8)}/B{self.chars(UPPER + DIGITS, 10)}/"
            f"{self.chars(ALNUM, 24)}"
        )
        return self.pick(
            f"SLACK_WEBHOOK_URL={value}", f'webhook: "{value}"', f"curl -X POST {value} -d @msg.json"
        ), value

    def google_api_key(self) -> tuple[str, str]:
        value = "AIza" + self.chars(B64URL, 35)
        return self.pick(
            f"GOOGLE_API_KEY={value}", f"https://maps.googleapis.com/maps/api/js?key={value}", value
        ), value

    def pypi_token(self) -> tuple[str, str]:
        value = "pypi-AgEIcHlwaS5vcmc" + self.chars(B64URL, self.rng.randint(60, 160))
        return self.pick(f"[pypi]\n  username = __token__\n  password = {value}", f"TWINE_PASSWORD={value}"), value

    def gitlab_token(self) -> tuple[str, str]:
        value = self.pick("glpat-", "gldt-", "glrt-") + self.chars(B64URL, 20)
        return self.pick(f"GITLAB_TOKEN={value}", f'--header "PRIVATE-TOKEN: {value}"', value), value

    def npm_token(self) -> tuple[str, str]:
        if self.rng.random() < 0.5:
            value = "npm_" + self.chars(ALNUM, 36)
        else:  # legacy tokens were UUIDs
            value = "-".join(self.chars(HEX, n) for n in (8, 4, 4, 4, 12))
        return self.pick(f"//registry.npmjs.org/:_authToken={value}", f"_authToken={value}"), value

    def azure_storage_key(self) -> tuple[str, str]:
        value = base64.b64encode(self.rng.randbytes(64)).decode()
        account = self.pick("acmeprod", "mlartifacts", "logs01")
        return (
            f"DefaultEndpointsProtocol=https;AccountName={account};AccountKey={value};EndpointSuffix=core.windows.net",
            value,
        )

    def sendgrid_api_key(self) -> tuple[str, str]:
        value = f"SG.{self.chars(B64URL, 22)}.{self.chars(B64URL, 43)}"
        return self.pick(f"SENDGRID_API_KEY={value}", value), value

    def twilio_api_key(self) -> tuple[str, str]:
        value = "SK" + self.chars(HEX, 32)
        return self.pick(f"TWILIO_API_KEY={value}", f"api_key_sid: {value}", value), value

    def huggingface_token(self) -> tuple[str, str]:
        value = "hf_" + self.chars(UPPER + LOWER, 34)
        return self.pick(f"HF_TOKEN={value}", f"huggingface-cli login --token {value}", value), value

    def authorization_header(self) -> tuple[str, str]:
        kind = self.rng.randrange(3)
        if kind == 0:
            value = self.chars(B64URL, self.rng.randint(24, 64))
            return self.pick(
                f"Authorization: Bearer {value}", f'curl -H "Authorization: Bearer {value}" https://api/x'
            ), value
        if kind == 1:
            user = self.pick("deploy", "ci-bot", "admin", "svc_reports")
            value = base64.b64encode(f"{user}:{self.password()}".encode()).decode()
            return self.pick(f"Authorization: Basic {value}", f'"Authorization": "Basic {value}"'), value
        value = self.chars(HEX, 40)
        return f'headers = {{"Authorization": "token {value}"}}', value

    def url_password(self) -> tuple[str, str]:
        value = self.chars(ALNUM + "!*-_.~", self.rng.randint(8, 24))
        scheme, host = self.pick(
            ("postgres", "db.internal:5432/app"),
            ("mysql", "10.0.3.7/shop"),
            ("redis", "cache:6379/0"),
            ("amqp", "mq.prod:5672"),
            ("https", "git.corp.net/team/repo.git"),
            ("mongodb+srv", "cluster0.ab1cd.net/x"),
        )
        user = self.pick("app", "admin", "deploy", "svc_etl", "")
        return self.pick(
            f"DATABASE_URL={scheme}://{user}:{value}@{host}", f"connect to {scheme}://{user}:{value}@{host}"
        ), value

    def high_entropy_assignment(self) -> tuple[str, str]:
        kind = self.rng.randrange(5)
        if kind == 0:
            value = self.chars(HEX, self.rng.choice((16, 32, 40, 64)))
        elif kind == 1:
            value = self.chars(ALNUM, self.rng.randint(16, 48))
        elif kind == 2:
            value = self.chars(B64, 43) + "="
        elif kind == 3:
            value = self.password()
        else:
            value = "-".join(self.chars(HEX, n) for n in (8, 4, 4, 4, 12))
        key = self.pick(
            "password",
            "DB_PASSWORD",
            "client_secret",
            "apiKey",
            "api_key",
            "SECRET_KEY",
            "auth_token",
            "passwd",
            "accessKey",
            "private_key",
            "GITHUB_TOKEN",
            "x-api-key",
            "refresh_token",
            "SMTP_PASS" + "WORD",
        )
        return self.pick(
            f"{key}={value}",
            f'{key} = "{value}"',
            f'"{key}": "{value}"',
            f"  {key}: {value}",
            f"export {key}='{value}'",
            f"--{key.lower().replace('_', '-')}={value}",
        ), value


GENERATORS: dict[str, Callable[[Faker], tuple[str, str]]] = {
    "private-key": Faker.private_key,
    "gcp-service-account": Faker.gcp_service_account,
    "jwt": Faker.jwt,
    "github-token": Faker.github_token,
    "aws-access-key-id": Faker.aws_access_key_id,
    "aws-secret-access-key": Faker.aws_secret_access_key,
    "anthropic-api-key": Faker.anthropic_api_key,
    "openai-api-key": Faker.openai_api_key,
    "stripe-key": Faker.stripe_key,
    "slack-token": Faker.slack_token,
    "slack-webhook": Faker.slack_webhook,
    "google-api-key": Faker.google_api_key,
    "pypi-token": Faker.pypi_token,
    "gitlab-token": Faker.gitlab_token,
    "npm-token": Faker.npm_token,
    "azure-storage-key": Faker.azure_storage_key,
    "sendgrid-api-key": Faker.sendgrid_api_key,
    "twilio-api-key": Faker.twilio_api_key,
    "huggingface-token": Faker.huggingface_token,
    "authorization-header": Faker.authorization_header,
    "url-password": Faker.url_password,
    "high-entropy-assignment": Faker.high_entropy_assignment,
}

# Surroundings: the snippet is placed unchanged inside each (so the value offset is known).
SURROUNDINGS = (
    "{s}",
    "# .env for staging\nNODE_ENV=production\n{s}\nLOG_LEVEL=debug\n",
    "The deploy fails with 401 although the config has\n\n```\n{s}\n```\n\nCan you check why?",
    "I rotated it this morning; the old line was {s} and the new one is in the vault now.",
    "2026-02-23T12:40:23Z DEBUG loaded settings: {s} (source=env)",
    "- step 3: put {s} in the CI settings, then rerun the pipeline",
)


def fake_set(seed: int, per_rule: int) -> Iterator[tuple[str, str, int, int]]:
    """Yield (rule, text, value_start, value_end)."""
    faker = Faker(seed)
    for rule, gen in GENERATORS.items():
        for _ in range(per_rule):
            snippet, value = gen(faker)
            surround = faker.rng.choice(SURROUNDINGS)
            text = surround.replace("{s}", snippet)
            start = text.index(value)
            yield rule, text, start, start + len(value)


# Near-misses: text that mentions credentials, or holds placeholders and documentation values, and
# must not be refused.  Built here so the repository holds no realistic literal.
def near_misses() -> list[str]:
    x36 = "x" * 36
    jwt_io = (
        base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
        + "."
        + base64.urlsafe_b64encode(b'{"sub":"1234567890","name":"John Doe","iat":1516239022}').decode().rstrip("=")
        + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
    )
    return [
        "the token is refreshed every hour",
        "set OPENAI_API_KEY in your env before running the tests",
        "password: see 1Password entry 'prod db'",
        "api_key = os.environ['X']",
        'api_key = os.environ["OPENAI_API_KEY"]',
        "token = os.getenv('GITHUB_TOKEN')",
        "const apiKey = process.env.STRIPE_SECRET_KEY;",
        "client_secret = settings.OAUTH_CLIENT_SECRET",
        "password = getpass.getpass()",
        'secret_name = "prod-db-credentials"',
        "token_path = /var/run/secrets/kubernetes.io/serviceaccount/token",
        "private_key_path: ~/.ssh/id_ed25519",
        "max_tokens=4096",
        '"tokens": {"input": 4383, "output": 8, "total": 4419}',
        "token_count: 123456789012345",
        "The secret to fast builds is caching: restore the cache before installing.",
        "Passwords must be at least twelve characters long.",
        "The API key rotation runbook lives in docs/ops/rotation.md",
        "password: correcthorsebatterystaple",
        "password: MySuperSecretPassword",
        "secret: TheQuickBrownFoxJumps",
        "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        f"Authorization: Bearer {jwt_io}",
        jwt_io,
        f"GITHUB_TOKEN=ghp_{x36}",
        "GITHUB_TOKEN=ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
        "OPENAI_API_KEY=sk-your-api-key-here",
        "OPENAI_API_KEY=sk-...",
        "export OPENAI_API_KEY=<your-openai-key>",
        "api_key: ${API_KEY}",
        "token: $GITHUB_TOKEN",
        "password: %DB_PASSWORD%",
        "token: ${{ secrets.GITHUB_TOKEN }}",
        "api_key: {{ vault_api_key }}",
        "password: ********************",
        "password: REDACTED_PASSWORD_VALUE",
        "secret: [REDACTED_SECRET len=32 sha=1a2b3c4d]",
        "client_secret: your_client_secret_here",
        "api_key=YOUR_API_KEY_HERE",
        'token = "dummy-token-for-tests-123"',
        'password = "changeme-please-2024"',
        "DATABASE_URL=postgres://user:password@localhost:5432/app",
        "DATABASE_URL=postgres://postgres:postgres@localhost:5432/app",
        "redis://:<password>@cache:6379",
        "amqp://guest:guest@localhost:5672/",
        'f"postgresql://{user}:{password}@{host}/{db}"',
        "mysql://%s:%s@%s/%s",
        "git clone git@github.com:org/repo.git",
        "ssh://git@gitlab.com:22/group/project.git",
        "https://alice@bitbucket.org/team/repo.git",
        "http://localhost:8080/api/v1/users/@me",
        "-----BEGIN OPENSSH PRIVATE KEY----- is the header you will see at the top of the file",
        "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
        "sk-learn is not a package name; use scikit-learn",
        "the xoxb- prefix marks a Slack bot token",
        "Bearer tokens go in the Authorization header.",
        "Authorization: Bearer <token>",
        "Authorization: Bearer $TOKEN",
        "Authorization: Basic dXNlcjpwYXNzd29yZA==",
        "stripe keys look like sk_live_... and sk_test_...",
        "AKIA0000000000000000",
        "hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "glpat-xxxxxxxxxxxxxxxxxxxx",
        "npmrc: //registry.npmjs.org/:_authToken=${NPM_TOKEN}",
        "AccountKey=<storage-account-key>",
        "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed the token refresh",
        "sessionId: dcbe78d3-ea75-4786-929e-d6cff0fc00ed",
        "The refresh_token flow: exchange the refresh token for a new access token.",
        "tokenizer: meta-llama/Llama-3.1-8B-Instruct",
        "secretsmanager:GetSecretValue",
        "password_reset_url: https://app.internal/reset",
    ]


# Generated near-misses: the same shapes as real keys but with placeholder bodies, and assignments whose
# value is a made-up identifier (a name, not a secret).
PLACEHOLDER_BODIES = (
    "x" * 40,
    "X" * 40,
    "*" * 24,
    "0" * 36,
    "<your-token>",
    "${TOKEN}",
    "your-key-here",
    "YOUR_API_KEY_HERE",
    "{{ secrets.TOKEN }}",
    "%API_TOKEN%",
    "EXAMPLE_EXAMPLE_EXAMPLE_1234",
    "dummy-value-for-tests-1234",
    "REDACTED",
    "changeme-changeme-123",
    "placeholder-0123456789",
)
PREFIXES = (
    "ghp_",
    "github_pat_",
    "AKIA",
    "sk-ant-api03-",
    "sk-proj-",
    "sk-",
    "sk_live_",
    "xoxb-",
    "AIza",
    "pypi-AgEI",
    "glpat-",
    "npm_",
    "SG.",
    "SK",
    "hf_",
    "",
)
KEYS = (
    "password",
    "DB_PASSWORD",
    "client_secret",
    "api_key",
    "apiKey",
    "SECRET_KEY",
    "auth_token",
    "GITHUB_TOKEN",
    "access_key",
    "private_key",
    "token",
    "passwd",
    "secret_name",
    "token_url",
    "api_key_env",
)
WORD_TEXT = (
    "build cache deploy prod staging config service account user admin backend frontend worker queue stream "
    "event handler router session cookie refresh rotate vault store manager default primary secondary local "
    "remote branch release version checkpoint handoff notes summary task agent model provider region bucket "
    "cluster node pool runner pipeline job step stage test unit integration mock fixture sample data schema "
    "table index report metrics logs trace audit policy role group team project workspace tenant org home "
    "main legacy new old next first last final daily weekly nightly backup restore migrate upgrade"
)
WORDS = WORD_TEXT.split()


def generated_near_misses(seed: int) -> dict[str, list[str]]:
    rng = random.Random(seed)
    families: dict[str, list[str]] = {"placeholder bodies": [], "identifier values": []}
    for prefix in PREFIXES:
        for body in PLACEHOLDER_BODIES:
            key = rng.choice(KEYS)
            families["placeholder bodies"].append(rng.choice((f"{key}={prefix}{body}", f'"{key}": "{prefix}{body}"')))
    for _ in range(500):
        words = [rng.choice(WORDS) for _ in range(rng.randint(2, 4))]
        style = rng.randrange(4)
        if style == 0:
            value = "_".join(words)
        elif style == 1:
            value = "-".join(words)
        elif style == 2:
            value = words[0] + "".join(w.capitalize() for w in words[1:])
        else:
            value = "_".join(words).upper()
        if rng.random() < 0.4:
            value += rng.choice(("", "_", "-")) + str(rng.randint(1, 2026))
        key = rng.choice(KEYS)
        families["identifier values"].append(rng.choice((f"{key}={value}", f"{key}: {value}", f'"{key}": "{value}"')))
    return families


# --- corpus user turns ----------------------------------------------------------------------------


def _text_blocks(content: object) -> Iterator[str]:
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") in (None, "text", "input_text"):
                text = block.get("text")
                if isinstance(text, str):
                    yield text


def user_turns(path: Path) -> Iterator[str]:
    """Crude extraction of user-turn text (a proper reader lives elsewhere)."""
    if path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        for msg in data.get("messages", []) if isinstance(data, dict) else []:
            if isinstance(msg, dict) and msg.get("type") == "user":
                text = "\n".join(_text_blocks(msg.get("content")))
                if text:
                    yield text
        return
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if not isinstance(rec, dict):
            continue
        payload = rec.get("payload")
        if rec.get("type") == "user":  # Claude Code
            message = rec.get("message")
            if isinstance(message, dict):
                text = "\n".join(_text_blocks(message.get("content")))
                if text:
                    yield text
        elif isinstance(payload, dict):  # Codex rollout
            if (
                rec.get("type") == "response_item"
                and payload.get("type") == "message"
                and payload.get("role") == "user"
            ):
                text = "\n".join(_text_blocks(payload.get("content")))
                if text:
                    yield text
            elif rec.get("type") == "event_msg" and payload.get("type") == "user_message":
                msg = payload.get("message")
                if isinstance(msg, str) and msg:
                    yield msg


def all_strings(path: Path) -> Iterator[str]:
    """Every JSON string in a transcript: tool output, assistant text, metadata (for --all)."""

    def walk(obj: object) -> Iterator[str]:
        if isinstance(obj, str):
            yield obj
        elif isinstance(obj, dict):
            for v in obj.values():
                yield from walk(v)
        elif isinstance(obj, list):
            for v in obj:
                yield from walk(v)

    if path.suffix == ".json":
        yield from walk(json.loads(path.read_text(encoding="utf-8")))
        return
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            yield from walk(json.loads(line))
        except ValueError:
            continue


def redacted_context(text: str, hit: CredentialHit, hits: list[CredentialHit], width: int = 50) -> str:
    lo, hi = max(0, hit.start - width), min(len(text), hit.end + width)
    out: list[str] = []
    pos = lo
    for h in hits:
        if h.end <= lo or h.start >= hi:
            continue
        out.append(text[pos : max(pos, h.start)])
        out.append(f"[REDACTED:{h.rule}]")
        pos = max(pos, h.end)
    out.append(text[pos:hi] if pos < hi else "")
    return "".join(out).replace("\n", "\\n")


RECORDED = ROOT / "tests" / "data" / "recorded"  # sessions of the current CLIs, recorded by this project's e2e runs


def transcripts() -> list[Path]:
    found = [p for p in CORPUS.rglob("*") if p.suffix in (".jsonl", ".json") and "metadata" not in p.name]
    return sorted(found) + sorted(p for p in RECORDED.glob("*") if p.suffix in (".jsonl", ".json"))


# Issue 23 §4's goals for the 5 MB row, in MB/s: the standard-library scan, and the scan with wheypoint[fast].
GOALS = {"pure": 15.0, "accelerated": 30.0}

# The timing runs in a child interpreter: the project's (with src/ first on its path) or a clean venv's (its own
# install of wheypoint[fast]).  It reads the texts from a JSON file and answers JSON: per batch and path, the best
# wall and the best CPU time over the rounds.  The two paths alternate round by round (which one goes first too),
# so a change of load on a shared machine falls on both alike.
_MEASURE = """
import json, sys, time
if sys.argv[1]:
    sys.path.insert(0, sys.argv[1])
from wheypoint.model import credential_text
from wheypoint.model.credentials import scan_text
batches = json.loads(open(sys.argv[2], encoding="utf-8").read())
fast = credential_text.accelerator()
credential_text.ACCELERATE_FROM = 0  # each path's own speed on every text, short ones included
engines = {"pure": None, **({"accelerated": fast} if fast else {})}
out = {"python": sys.executable, "wheypoint": credential_text.__file__, "accelerated": bool(fast), "rows": []}
for label, batch, rounds in batches:
    best = {name: [float("inf"), float("inf")] for name in engines}
    for name, engine in engines.items():  # the first scan loads the rules and compiles what the texts need
        credential_text._ENGINE[:] = [engine]
        for text in batch:
            scan_text(text)
    for round_ in range(rounds):
        for name in (list(engines) if round_ % 2 == 0 else list(engines)[::-1]):
            credential_text._ENGINE[:] = [engines[name]]
            wall, cpu = time.perf_counter(), time.process_time()
            for text in batch:
                scan_text(text)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            best[name] = [min(best[name][0], wall), min(best[name][1], cpu)]
    out["rows"].append({"label": label, "best": best})
print(json.dumps(out))
"""


def speed(files: list[Path], clean_venv: bool) -> None:
    """Scan speed: each real user turn scanned alone, all of them as one text, and 5 MB of every kind of string.

    The 5 MB are the transcripts' JSON strings in order (tool output, code, assistant text), joined by newlines:
    text far denser in token-like words than prompts. The standard-library scan and the accelerated one
    (wheypoint[fast]) run on the same texts for the same rounds, side by side. Wall time and the process's CPU
    time are both shown: on a shared machine the CPU time is the fairer figure.
    """
    prompts = [t for path in files for t in user_turns(path)]
    joined = "\n\n".join(prompts)
    strings: list[str] = []
    for path in files:
        strings.extend(all_strings(path))
        if sum(map(_mb, strings)) >= 5:
            break
    while strings and sum(map(_mb, strings)) > 5:
        strings.pop()
    mixed = "\n".join(strings)
    batches = [
        ("each user turn alone", prompts, 7),
        ("all user turns as one text", [joined], 7),
        ("5 MB of corpus strings as one text", [mixed], 5),
    ]
    if clean_venv:
        sys.path.insert(0, str(ROOT / "bench"))
        import benchlib

        venv = benchlib.ensure_venv_with("fast")
        argv, where = [venv.python, "-I", "-c", _MEASURE, ""], f"a clean venv, {venv.path} ({venv.facts['install']})"
    else:
        argv, where = [sys.executable, "-c", _MEASURE, str(ROOT / "src")], f"{sys.executable}, src/ of the checkout"
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="wheypoint-credspeed-") as tmp:
        texts = Path(tmp) / "texts.json"
        texts.write_text(json.dumps(batches), encoding="utf-8")
        load_before = _load()
        done = subprocess.run([*argv, str(texts)], capture_output=True, text=True, env=env, cwd=tmp, check=False)
        load_after = _load()
    if done.returncode != 0:
        raise SystemExit(f"the timing run failed:\n{done.stderr}")
    answer = json.loads(done.stdout)
    print("## Scan speed\n")
    print(
        f"{len(prompts)} user turns of the corpus; {len(strings)} corpus strings; measured with {where}, wheypoint"
        f" from {Path(answer['wheypoint']).parents[1]}; load average {load_before} before, {load_after} after"
        f" ({os.cpu_count()} CPUs);"
        f" {time.strftime('%Y-%m-%d')}\n"
    )
    paths = ["pure", "accelerated"]
    print("| how | MB | rounds | " + " | ".join(f"{p} MB/s (wall) | {p} MB/s (CPU)" for p in paths) + " |")
    print("|---|---:|---:|" + "---:|" * 2 * len(paths))
    for (label, batch, rounds), row in zip(batches, answer["rows"], strict=True):
        size = sum(map(_mb, batch))
        cells = []
        for name in paths:
            best = row["best"].get(name)
            if best is None:
                cells += ["not installed", "not installed"]
                continue
            for seconds in best:
                rate = size / seconds
                goal = GOALS[name] if label.startswith("5 MB") else None
                cells.append(f"{rate:.1f}" + ("" if goal is None else f" {'PASS' if rate >= goal else 'FAIL'}"))
        print(f"| {label} | {size:.3f} | best of {rounds} | " + " | ".join(cells) + " |")
    goals = ", ".join(f"{name} >= {goal:g} MB/s" for name, goal in GOALS.items())
    print(f"\nGoals (issue 23 §4) on the 5 MB row, wall and CPU alike: {goals}.")
    if not answer["accelerated"]:
        print("The accelerator (pip install -e '.[fast]') is not installed in that interpreter: its goal is not met.")
    print()


def _mb(text: str) -> float:
    return len(text.encode("utf-8", "surrogatepass")) / 1e6


def _load() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "unknown"


# --- report -----------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--seed", type=int, default=20260223)
    ap.add_argument("--per-rule", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=5, help="rounds of every template per format")
    ap.add_argument("--all", action="store_true", help="also scan every string in the transcripts, not just user turns")
    ap.add_argument("--verbose", action="store_true", help="list misses (rule and shape only)")
    ap.add_argument("--speed-only", action="store_true", help="only the scan speed (needs ../shared/corpus)")
    ap.add_argument(
        "--venv", action="store_true", help="time the scan in a clean venv with wheypoint[fast] (bench/results)"
    )
    args = ap.parse_args()
    t0 = time.perf_counter()
    if args.speed_only:
        if not CORPUS.is_dir():
            raise SystemExit(f"{CORPUS} is absent: the scan speed is measured on the corpus")
        speed(transcripts(), args.venv)
        print(f"_elapsed {time.perf_counter() - t0:.2f} s_")
        return 0

    # (a) recall per format, prose and assignment forms
    rng = random.Random(args.seed)
    print("## Recall per format (prose and assignment forms)\n")
    print(f"seed {args.seed}, {args.rounds} rounds of every template\n")
    print("| format | prose | found | assignment | found |")
    print("|---|---:|---:|---:|---:|")
    sums = {"prose": [0, 0], "assignment": [0, 0]}
    for name in FORMATS:
        cells = []
        for form in ("prose", "assignment"):
            n = found_n = 0
            for _ in range(args.rounds):
                for text, value in format_texts(name, rng, form):
                    start = text.index(value)
                    n += 1
                    hit = any(h.start < start + len(value) and h.end > start for h in scan_text(text))
                    found_n += hit
                    if not hit and args.verbose:
                        print(f"MISS {name} {form}: {text.replace(value, '<value>')[:100]}", file=sys.stderr)
            sums[form][0] += n
            sums[form][1] += found_n
            cells += [str(n), f"{found_n / n:.1%}"]
        print(f"| {name} | " + " | ".join(cells) + " |")
    (pn, pf), (an, af) = sums["prose"], sums["assignment"]
    print(f"| **{len(FORMATS)} formats** | **{pn}** | **{pf / pn:.1%}** | **{an}** | **{af / an:.1%}** |\n")
    print(f"all forms: {pf + af}/{pn + an} = {(pf + af) / (pn + an):.2%}\n")

    # (a') the older per-rule set: snippets in .env files, logs, Markdown, JSON
    per_rule: dict[str, list[int]] = {rule_id: [0, 0] for rule_id in GENERATORS}  # total, found
    for rule, text, start, end in fake_set(args.seed, args.per_rule):
        hits = [h for h in scan_text(text) if h.start < end and h.end > start]
        stats = per_rule[rule]
        stats[0] += 1
        stats[1] += bool(hits)
        if not hits and args.verbose:
            shape = "".join(
                "a" if c.islower() else "A" if c.isupper() else "9" if c.isdigit() else c for c in text[start:end]
            )
            print(f"MISS {rule}: {shape[:60]}", file=sys.stderr)
    total = sum(s[0] for s in per_rule.values())
    found = sum(s[1] for s in per_rule.values())
    print("## Recall on the per-rule fake set\n")
    print(f"seed {args.seed}, {args.per_rule} per shape\n")
    print("| shape | fakes | detected | recall |")
    print("|---|---:|---:|---:|")
    for rule_id, (n, f) in per_rule.items():
        print(f"| {rule_id} | {n} | {f} | {f / n:.1%} |")
    print(f"| **all** | **{total}** | **{found}** | **{found / total:.1%}** |\n")

    # The generic rule on bare random values: what share of random strings it would miss.
    rng = random.Random(args.seed)
    alphabets = {
        "hex": HEX,
        "a-z0-9": LOWER + DIGITS,
        "A-Za-z0-9": ALNUM,
        "base64": B64,
        "password": ALNUM + PW_SYMBOLS,
    }
    lengths = (12, 16, 24, 32, 40)
    print("## high-entropy-assignment: share of random values judged not random (misses)\n")
    print("| alphabet | " + " | ".join(f"len {n}" for n in lengths) + " |")
    print("|---|" + "---:|" * len(lengths))
    for name, alphabet in alphabets.items():
        cells = []
        for n in lengths:
            misses = sum(not looks_random("".join(rng.choice(alphabet) for _ in range(n)), 12) for _ in range(2000))
            cells.append(f"{misses / 2000:.1%}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()

    near = near_misses()
    fired = [(i, scan_text(t)) for i, t in enumerate(near)]
    fired = [(i, h) for i, h in fired if h]
    print("## Near-misses (placeholders, documentation values, prose, code)\n")
    print(f"{len(near)} near-miss texts, {len(fired)} fire")
    for i, hits in fired:
        print(f"- near-miss #{i}: {', '.join(h.rule for h in hits)}: {redacted_context(near[i], hits[0], hits)}")
    print()
    for family, texts in generated_near_misses(args.seed).items():
        fired_texts = [t for t in texts if scan_text(t)]
        print(f"generated near-misses, {family}: {len(texts)} texts, {len(fired_texts)} fire")
        if args.verbose:
            for t in fired_texts:
                hits = scan_text(t)
                print(f"  - {', '.join(h.rule for h in hits)}: {redacted_context(t, hits[0], hits)}")
    print()

    # (b) false positives over the corpus
    if not CORPUS.is_dir():
        print(f"## Corpus\n\n{CORPUS} is absent: false-positive rate not measured.")
        return 0
    files = transcripts()
    modes = [("user turns", user_turns)] + ([("all strings", all_strings)] if args.all else [])
    for label, extract in modes:
        turns = flagged = chars = flagged_chars = 0
        listing: list[str] = []
        for path in files:
            for text in extract(path):
                turns += 1
                chars += len(text)
                hits = scan_text(text)
                if hits:
                    flagged += 1
                    flagged_chars += len(text)
                    for h in hits:
                        listing.append(
                            f"- {path.relative_to(CORPUS)}: `{h.rule}` (len {h.end - h.start}): "
                            f"{redacted_context(text, h, hits)}"
                        )
        print(f"## False positives over the corpus: {label}\n")
        print("| transcripts | texts scanned | characters | texts flagged | % texts | % characters |")
        print("|---:|---:|---:|---:|---:|---:|")
        print(
            f"| {len(files)} | {turns} | {chars} | {flagged} | {flagged / max(turns, 1):.2%} | "
            f"{flagged_chars / max(chars, 1):.2%} |\n"
        )
        for line in listing:
            print(line)
        if listing:
            print()
    speed(files, args.venv)
    print(f"_elapsed {time.perf_counter() - t0:.2f} s_")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
