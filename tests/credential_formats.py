"""Fake credentials in 46 formats, generated from a seed, and the prose and assignment texts that carry them."""

# Shared by tests/test_credentials.py and bench/credentials_eval.py.  Nothing here is a real secret: every
# value is drawn from a seeded generator at run time and each prefix is built by concatenation, so the
# repository holds no string that looks like a live credential (GitHub push protection blocks those).

from __future__ import annotations

import base64
import json
import random
import string

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = UPPER + LOWER + DIGITS
B64 = ALNUM + "+/"
B64URL = ALNUM + "_-"
HEX = "0123456789abcdef"
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l".upper()


def _s(rng: random.Random, alphabet: str, n: int) -> str:
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(n))
        # a fake must look like the real thing: mixed classes when the alphabet has them
        if alphabet in (HEX, DIGITS, BECH32) or sum(any(c in a for c in value) for a in (UPPER, LOWER, DIGITS)) >= 2:
            return value


def _b64json(obj: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode().rstrip("=")


def _jwt(rng: random.Random) -> str:
    header = _b64json({"alg": "HS256", "typ": "JWT"})
    payload = _b64json({"sub": _s(rng, DIGITS, 8), "iat": rng.randint(1_600_000_000, 1_800_000_000)})
    return f"{header}.{payload}.{_s(rng, B64URL, 43)}"


def _pem(rng: random.Random) -> str:
    body = base64.b64encode(rng.randbytes(rng.randint(200, 600))).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return "\n".join(["-----BEGIN " + "RSA PRIVATE KEY-----", *lines, "-----END " + "RSA PRIVATE KEY-----"])


def _discord(rng: random.Random) -> str:
    bot_id = base64.b64encode(str(rng.randint(10**17, 10**18)).encode()).decode().rstrip("=")
    return f"{bot_id}.{_s(rng, B64URL, 6)}.{_s(rng, B64URL, 38)}"


def _password(rng: random.Random) -> str:
    while True:
        # no '%': a value holding %s or %NAME% reads as a format string or a variable (documented allow-list)
        value = _s(rng, ALNUM + "!#&*+-=?@^_", rng.randint(10, 18))
        if any(not c.isalnum() for c in value) and any(c.isdigit() for c in value):
            return value


# name -> (generator, noun a person would use in a sentence, env var name, prefix-free: needs the noun)
Format = tuple["Callable[[random.Random], str]", str, str, bool]
FORMATS: dict[str, Format] = {
    "aws-access-key-id": (
        lambda r: "AK" + "IA" + _s(r, UPPER + "234567", 16),
        "AWS access key id",
        "AWS_ACCESS_KEY_ID",
        False,
    ),
    "aws-secret-access-key": (lambda r: _s(r, B64, 40), "AWS secret access key", "AWS_SECRET_ACCESS_KEY", True),
    "github-classic-pat": (lambda r: "gh" + "p_" + _s(r, ALNUM, 36), "GitHub token", "GITHUB_TOKEN", False),
    "github-fine-grained-pat": (
        lambda r: "github" + "_pat_" + _s(r, ALNUM, 22) + "_" + _s(r, ALNUM, 59),
        "GitHub token",
        "GH_TOKEN",
        False,
    ),
    "github-oauth": (lambda r: "gh" + "o_" + _s(r, ALNUM, 36), "GitHub OAuth token", "GITHUB_OAUTH", False),
    "gitlab-pat": (lambda r: "gl" + "pat-" + _s(r, B64URL, 20), "GitLab token", "GITLAB_TOKEN", False),
    "openai-project-key": (lambda r: "sk-" + "proj-" + _s(r, B64URL, 64), "OpenAI key", "OPENAI_API_KEY", False),
    "anthropic-api-key": (
        lambda r: "sk-" + "ant-api03-" + _s(r, B64URL, 93) + "AA",
        "Anthropic key",
        "ANTHROPIC_API_KEY",
        False,
    ),
    "stripe-secret-key": (lambda r: "sk" + "_live_" + _s(r, ALNUM, 24), "Stripe key", "STRIPE_SECRET_KEY", False),
    "slack-bot-token": (
        lambda r: "xo" + "xb-" + _s(r, DIGITS, 12) + "-" + _s(r, DIGITS, 13) + "-" + _s(r, ALNUM, 24),
        "Slack bot token",
        "SLACK_BOT_TOKEN",
        False,
    ),
    "slack-webhook": (
        lambda r: (
            "https://hooks."
            + "slack.com/services/T"
            + _s(r, UPPER + DIGITS, 8)
            + "/B"
            + _s(r, UPPER + DIGITS, 10)
            + "/"
            + _s(r, ALNUM, 24)
        ),
        "Slack webhook",
        "SLACK_WEBHOOK_URL",
        False,
    ),
    "google-api-key": (lambda r: "AI" + "za" + _s(r, B64URL, 35), "Google API key", "GOOGLE_API_KEY", False),
    "sendgrid-api-key": (
        lambda r: "S" + "G." + _s(r, B64URL, 22) + "." + _s(r, B64URL, 43),
        "SendGrid key",
        "SENDGRID_API_KEY",
        False,
    ),
    "twilio-api-key": (lambda r: "S" + "K" + _s(r, HEX, 32), "Twilio API key", "TWILIO_API_KEY", False),
    "twilio-account-sid": (lambda r: "A" + "C" + _s(r, HEX, 32), "Twilio account SID", "TWILIO_ACCOUNT_SID", False),
    "twilio-auth-token": (lambda r: _s(r, HEX, 32), "Twilio auth token", "TWILIO_AUTH_TOKEN", True),
    "huggingface-token": (lambda r: "h" + "f_" + _s(r, UPPER + LOWER, 34), "Hugging Face token", "HF_TOKEN", False),
    "npm-token": (lambda r: "np" + "m_" + _s(r, ALNUM, 36), "npm token", "NPM_TOKEN", False),
    "pypi-token": (lambda r: "pypi-" + "AgEIcHlwaS5vcmc" + _s(r, B64URL, 70), "PyPI token", "PYPI_TOKEN", False),
    "digitalocean-pat": (lambda r: "do" + "p_v1_" + _s(r, HEX, 64), "DigitalOcean token", "DIGITALOCEAN_TOKEN", False),
    "discord-bot-token": (_discord, "Discord bot token", "DISCORD_BOT_TOKEN", False),
    "telegram-bot-token": (
        lambda r: _s(r, DIGITS, 10) + ":" + "AA" + _s(r, B64URL, 33),
        "Telegram bot token",
        "TELEGRAM_TOKEN",
        False,
    ),
    "shopify-access-token": (lambda r: "sh" + "pat_" + _s(r, HEX, 32), "Shopify token", "SHOPIFY_TOKEN", False),
    "vault-token": (lambda r: "hv" + "s." + _s(r, B64URL, r.choice((24, 95))), "Vault token", "VAULT_TOKEN", False),
    "doppler-token": (lambda r: "dp" + ".pt." + _s(r, ALNUM, 43), "Doppler token", "DOPPLER_TOKEN", False),
    "databricks-token": (lambda r: "da" + "pi" + _s(r, HEX, 32), "Databricks token", "DATABRICKS_TOKEN", False),
    "mailgun-api-key": (lambda r: "ke" + "y-" + _s(r, HEX, 32), "Mailgun key", "MAILGUN_API_KEY", False),
    "mailgun-api-key-v2": (
        lambda r: _s(r, HEX, 32) + "-" + _s(r, HEX, 8) + "-" + _s(r, HEX, 8),
        "Mailgun key",
        "MAILGUN_API_KEY",
        False,
    ),
    "linear-api-key": (lambda r: "lin" + "_api_" + _s(r, ALNUM, 40), "Linear key", "LINEAR_API_KEY", False),
    "atlassian-api-token": (
        lambda r: "ATA" + "TT3" + _s(r, B64URL, 186),
        "Atlassian token",
        "ATLASSIAN_API_TOKEN",
        False,
    ),
    "jwt": (_jwt, "session token", "SESSION_TOKEN", False),
    "private-key": (_pem, "private key", "PRIVATE_KEY", False),
    "heroku-api-key": (lambda r: "HR" + "KU-AA" + _s(r, B64URL, 58), "Heroku key", "HEROKU_API_KEY", False),
    "planetscale-token": (lambda r: "pscale" + "_tkn_" + _s(r, ALNUM, 43), "PlanetScale token", "PSCALE_TOKEN", False),
    "postman-api-key": (
        lambda r: "PM" + "AK-" + _s(r, HEX, 24) + "-" + _s(r, HEX, 34),
        "Postman key",
        "POSTMAN_API_KEY",
        False,
    ),
    "grafana-service-account": (
        lambda r: "gl" + "sa_" + _s(r, ALNUM, 32) + "_" + _s(r, HEX, 8),
        "Grafana token",
        "GRAFANA_TOKEN",
        False,
    ),
    "pulumi-token": (lambda r: "pu" + "l-" + _s(r, HEX, 40), "Pulumi token", "PULUMI_ACCESS_TOKEN", False),
    "rubygems-key": (lambda r: "ruby" + "gems_" + _s(r, HEX, 48), "RubyGems key", "GEM_HOST_API_KEY", False),
    "age-secret-key": (lambda r: "AGE-" + "SECRET-KEY-1" + _s(r, BECH32, 58), "age key", "AGE_KEY", False),
    "onepassword-service-token": (
        lambda r: "op" + "s_eyJ" + _s(r, ALNUM, 300),
        "1Password token",
        "OP_SERVICE_ACCOUNT_TOKEN",
        False,
    ),
    "postgres-url-password": (
        lambda r: "postgresql://app:" + _password(r).replace("@", "") + "@db.internal:5432/prod",
        "database URL",
        "DATABASE_URL",
        False,
    ),
    "bearer-header": (lambda r: "Authorization: Bearer " + _s(r, B64URL, 40), "auth header", "AUTH_HEADER", False),
    "generic-password": (_password, "root password", "DB_PASSWORD", True),
    "gitlab-runner-token": (lambda r: "gl" + "rt-" + _s(r, B64URL, 20), "GitLab runner token", "RUNNER_TOKEN", False),
    "azure-storage-key": (
        lambda r: "DefaultEndpointsProtocol=https;AccountName=acme;Account" + "Key=" + _s(r, B64, 86) + "==",
        "storage connection string",
        "AZURE_STORAGE",
        False,
    ),
    "newrelic-user-key": (
        lambda r: "NR" + "AK-" + _s(r, UPPER + DIGITS, 27),
        "New Relic key",
        "NEW_RELIC_API_KEY",
        False,
    ),
}

# Sentences a person types around a credential.  Formats without a prefix of their own are recognisable
# only by what the sentence calls them, so they get the noun templates only.
PROSE_NOUN = (
    "my {noun} is {v}",
    "here is the {noun}: {v} - keep it safe.",
    "I rotated it, the new {noun} is `{v}`. can you update the config?",
    "the {noun} for staging is {v}, prod is in the vault",
)
PROSE_BARE = (
    "use {v} to log in",
    "try again with {v}.",
    "it failed with {v} (expired?)",
)
ASSIGNMENT = (
    "{env}={v}",
    'export {env}="{v}"',
    '{{"{key}": "{v}"}}',
    "{key}: {v}",
)

# The command-line form of a password: mysql -p'...' and friends.
PASSWORD_COMMANDS = ("mysql -u root -p'{v}' -h db.internal", "mysqldump -uadmin -p{v} shop > dump.sql")


def texts(name: str, rng: random.Random, form: str) -> list[tuple[str, str]]:
    """(text, value) pairs for one format in one form ("prose" or "assignment"), one value per template."""
    make, noun, env, needs_noun = FORMATS[name]
    templates = (PROSE_NOUN if needs_noun else PROSE_NOUN + PROSE_BARE) if form == "prose" else ASSIGNMENT
    if name == "generic-password" and form == "prose":
        templates = (*templates, *PASSWORD_COMMANDS)
    out = []
    for template in templates:
        value = make(rng)
        if form == "assignment" and "\n" in value:
            value_text = value.replace("\n", "\\n") if template.startswith("{{") else value
        else:
            value_text = value
        out.append((template.format(noun=noun, v=value_text, env=env, key=env.lower()), value_text))
    return out
