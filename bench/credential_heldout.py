"""Held-out credential sets: 55 formats in five forms, and prefix-less secrets named in a sentence, in nine packs."""

# Written apart from tests/credential_formats.py (other templates, names, separators, sentence shapes) so the
# recall it gives was not tuned for.  Nine packs: "dev" was looked at while the rules were fixed; "blind" and
# "fresh" were each run once and then fixed on; "fourth" (issue 20 §4, second pass) was written before that pass's
# fixes were measured on it, run once, and then fixed on.  "fifth" and "sixth" (issue 20 §4, third pass) were both
# written before either was run: "fifth" was run once on the detector as it stood and then its misses were fixed,
# "sixth" was run once after those fixes and never fixed on.  "seventh" (fourth pass) was written and committed
# before the proximity rule (credential_near.py) was tried on anything, run once, then fixed on; "eighth" was
# written after that run and before those fixes, run once after them, then fixed on; "ninth" likewise after the
# eighth; the first run of each is the honest figure
# (docs/credentials.md).  Every value is drawn from a seeded generator at run time and every prefix is joined from
# pieces, so the repository holds no string shaped like a live credential.
#
#   python3 bench/credential_heldout.py                  # every pack, a table per format and form
#   python3 bench/credential_heldout.py --pack fifth --misses 20

from __future__ import annotations

import argparse
import base64
import json
import random
import string
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

AZ, UP, NUM = string.ascii_lowercase, string.ascii_uppercase, string.digits
AN = AZ + UP + NUM
B64C = AN + "+/"
URLC = AN + "-_"
HEXC = "0123456789abcdef"
BECH = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
FORMS = ("prose", "assignment", "json", "yaml", "shell")


def rnd(rng: random.Random, alphabet: str, n: int) -> str:
    """n characters of alphabet, mixing at least two of lower/upper/digit when the alphabet has them."""
    while True:
        out = "".join(rng.choice(alphabet) for _ in range(n))
        kinds = sum(any(c in k for c in out) for k in (AZ, UP, NUM))
        if kinds >= min(2, sum(any(c in k for c in alphabet) for k in (AZ, UP, NUM))):
            return out


def b64bytes(rng: random.Random, n: int) -> str:
    return base64.b64encode(rng.randbytes(n)).decode()


def b64json(obj: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode().rstrip("=")


def chosen_password(rng: random.Random) -> str:
    while True:
        pw = rnd(rng, AN + "!#%&*+-=?@^_~", rng.randint(9, 20))
        if any(not c.isalnum() for c in pw) and any(c.isdigit() for c in pw) and "%" not in pw[-2:]:
            return pw


# A format: make(rng) -> (carrier, core).  The carrier is what a person pastes (a token, a URL, a command line,
# a key file); core is the part of it that must be found (a substring JSON escaping leaves alone).  label is what a
# sentence calls it, names are variable names it is stored under, wrapped says the carrier is not a bare token
# (it goes into forms as it is, not behind a name a person chose).
class Fmt:
    def __init__(
        self,
        make: Callable[[random.Random], tuple[str, str]],
        label: str,
        names: tuple[str, ...],
        wrapped: bool = False,
    ) -> None:
        self.make, self.label, self.names, self.wrapped = make, label, names, wrapped


def tok(fn: Callable[[random.Random], str]) -> Callable[[random.Random], tuple[str, str]]:
    def make(rng: random.Random) -> tuple[str, str]:
        value = fn(rng)
        return value, value

    return make


def _pem(rng: random.Random) -> tuple[str, str]:
    kind = rng.choice(("", "RSA ", "EC ", "OPENSSH "))
    body = b64bytes(rng, rng.randint(180, 700))
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    head, foot = "-----BEGIN " + kind + "PRIVATE" + " KEY-----", "-----END " + kind + "PRIVATE" + " KEY-----"
    return "\n".join([head, *lines, foot]), lines[1]


def _ppk(rng: random.Random) -> tuple[str, str]:
    version = rng.choice(("2", "3"))
    algo = rng.choice(("ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256"))
    pub = b64bytes(rng, 51 if algo == "ssh-ed25519" else 120)
    priv = b64bytes(rng, rng.choice((48, 96, 160)))
    priv_lines = [priv[i : i + 64] for i in range(0, len(priv), 64)]
    pub_lines = [pub[i : i + 64] for i in range(0, len(pub), 64)]
    lines = [
        "PuTTY-User-Key-File-" + version + ": " + algo,
        "Encryption: none",
        "Comment: " + rng.choice(("imported-openssh-key", "deploy@bastion", "rsa-key-20240611")),
        f"Public-Lines: {len(pub_lines)}",
        *pub_lines,
        f"Private-Lines: {len(priv_lines)}",
        *priv_lines,
        "Private-MAC: " + rnd(rng, HEXC, 64 if version == "3" else 40),
    ]
    if version == "3":
        lines.insert(3, "Key-Derivation: none") if rng.random() < 0.0 else None
    return "\n".join(lines), priv_lines[0]


def _sas_sig(rng: random.Random) -> str:
    # a base64 HMAC-SHA256, URL-encoded as it appears in a SAS query string
    raw = b64bytes(rng, 32)
    return raw.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")


def _sas_query(rng: random.Random, sig: str) -> str:
    return (
        f"sv=2022-11-02&ss={rng.choice(('b', 'bfqt', 'f'))}&srt=sco&sp={rng.choice(('rl', 'rwdlacup', 'r'))}"
        f"&se=2025-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T0{rng.randint(0, 9)}:00:00Z&st=2024-01-01T00:00:00Z"
        f"&spr=https&sig={sig}"
    )


def _sas_url(rng: random.Random) -> tuple[str, str]:
    sig = _sas_sig(rng)
    acct = rng.choice(("acmebackups", "stlogs01", "mediaprod"))
    return (
        f"https://{acct}.blob.core.windows.net/{rng.choice(('dumps', 'raw'))}/file.tar?{_sas_query(rng, sig)}",
        sig,
    )


def _sas_conn(rng: random.Random) -> tuple[str, str]:
    sig = _sas_sig(rng)
    return (
        "BlobEndpoint=https://acme.blob.core.windows.net/;QueueEndpoint=https://acme.queue.core.windows.net/;"
        "SharedAccess" + "Signature=" + _sas_query(rng, sig),
        sig,
    )


def _servicebus(rng: random.Random) -> tuple[str, str]:
    key = b64bytes(rng, 32)
    ns = rng.choice(("orders-bus", "telemetry", "acme-events"))
    return (
        f"Endpoint=sb://{ns}.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
        "SharedAccess" + "Key=" + key,
        key,
    )


def _storage_conn(rng: random.Random) -> tuple[str, str]:
    key = b64bytes(rng, 64)
    return (
        f"DefaultEndpointsProtocol=https;AccountName={rng.choice(('acmedata', 'stprod7'))};Account"
        + "Key="
        + key
        + ";EndpointSuffix=core.windows.net",
        key,
    )


def _tailscale(rng: random.Random) -> str:
    kind = rng.choice(("auth", "api", "client"))
    return "ts" + "key-" + kind + "-" + "k" + rnd(rng, AN, 10) + "CNTRL-" + rnd(rng, AN, 32)


def _curl_user(rng: random.Random) -> tuple[str, str]:
    pw = chosen_password(rng).replace("'", "").replace('"', "")
    user = rng.choice(("admin", "ci-bot", "jenkins", "elastic", "ops"))
    flag = rng.choice(("-u", "--user", "-u"))
    url = rng.choice(("https://es.internal:9200/_cat/indices", "https://nexus.acme.io/service/rest/v1/status",
                      "http://localhost:8080/api/json"))  # fmt: skip
    sep = "=" if flag == "--user" and rng.random() < 0.4 else " "
    quote = rng.choice(("", "'", '"'))
    return f"curl -s {flag}{sep}{quote}{user}:{pw}{quote} {url}", pw


def _supabase_jwt(rng: random.Random) -> str:
    header = b64json({"alg": "HS256", "typ": "JWT"})
    iat = rng.randint(1_650_000_000, 1_700_000_000)
    claims = {"iss": "supabase", "ref": rnd(rng, AZ, 20), "role": "service_role", "iat": iat, "exp": iat + 10**8}
    payload = b64json(claims)
    return f"{header}.{payload}.{rnd(rng, URLC, 43)}"


def _telegram_url(rng: random.Random) -> tuple[str, str]:
    token = rnd(rng, NUM, rng.choice((9, 10))) + ":" + "AA" + rnd(rng, URLC, 33)
    method = rng.choice(("sendMessage", "getUpdates", "setWebhook", "sendDocument"))
    return f"https://api.telegram.org/bot{token}/{method}", token


def _okta(rng: random.Random) -> tuple[str, str]:
    token = "00" + rnd(rng, URLC, 40)
    return "Authorization: SS" + "WS " + token, token


def _pg(rng: random.Random) -> tuple[str, str]:
    pw = chosen_password(rng).replace("@", "").replace("/", "").replace(":", "").replace("'", "")
    scheme = rng.choice(("postgresql", "postgres", "mysql", "mongodb+srv", "redis", "amqp"))
    return (
        f"{scheme}://{rng.choice(('svc', 'app_rw', 'root'))}:{pw}@{rng.choice(('10.0.3.7', 'db.prod.lan'))}:5432/main",
        pw,
    )


def _discord(rng: random.Random) -> str:
    first = base64.b64encode(str(rng.randint(10**17, 10**18)).encode()).decode().rstrip("=")
    return f"{first}.{rnd(rng, URLC, 6)}.{rnd(rng, URLC, 38)}"


def _jwt(rng: random.Random) -> str:
    header = b64json({"alg": rng.choice(("HS256", "RS256")), "typ": "JWT"})
    payload = b64json(
        {"sub": rnd(rng, HEXC, 12), "scope": "read write", "exp": rng.randint(1_800_000_000, 1_900_000_000)}
    )
    return f"{header}.{payload}.{rnd(rng, URLC, 43)}"


J = "".join  # prefixes are joined from pieces at run time
FORMATS: dict[str, Fmt] = {
    "aws-access-key-id": Fmt(
        tok(lambda r: J(("AK", "IA")) + rnd(r, UP + "234567", 16)),
        "AWS key id",
        ("AWS_ACCESS_KEY_ID", "aws_access_key"),
    ),
    "aws-secret-key": Fmt(
        tok(lambda r: rnd(r, B64C, 40)), "AWS secret access key", ("AWS_SECRET_ACCESS_KEY", "aws_secret_key")
    ),
    "github-classic": Fmt(tok(lambda r: J(("gh", "p_")) + rnd(r, AN, 36)), "github PAT", ("GH_PAT", "github_token")),
    "github-fine-grained": Fmt(
        tok(lambda r: J(("github", "_pat_")) + rnd(r, AN, 22) + "_" + rnd(r, AN, 59)),
        "fine-grained github token",
        ("GITHUB_PAT", "gh_token"),
    ),
    "github-oauth": Fmt(
        tok(lambda r: J(("gh", "o_")) + rnd(r, AN, 36)), "github oauth token", ("GH_OAUTH", "oauth_token")
    ),
    "gitlab-pat": Fmt(
        tok(lambda r: J(("gl", "pat-")) + rnd(r, URLC, 20)), "gitlab access token", ("CI_GITLAB_TOKEN", "gitlab_pat")
    ),
    "openai": Fmt(
        tok(lambda r: J(("sk-", "proj-")) + rnd(r, URLC, 58)), "openai key", ("OPENAI_KEY", "openai_api_key")
    ),
    "anthropic": Fmt(
        tok(lambda r: J(("sk-", "ant-", "api03-")) + rnd(r, URLC, 93) + "AA"),
        "claude api key",
        ("ANTHROPIC_KEY", "anthropic"),
    ),
    "stripe-live": Fmt(
        tok(lambda r: J(("sk", "_live_")) + rnd(r, AN, r.choice((24, 99)))),
        "stripe secret key",
        ("STRIPE_KEY", "stripe_secret"),
    ),
    "stripe-webhook-secret": Fmt(
        tok(lambda r: J(("wh", "sec_")) + rnd(r, AN, 32)),
        "stripe webhook signing secret",
        ("STRIPE_WEBHOOK_SECRET", "webhook_secret"),
    ),
    "slack-bot": Fmt(
        tok(lambda r: J(("xo", "xb-")) + rnd(r, NUM, 11) + "-" + rnd(r, NUM, 13) + "-" + rnd(r, AN, 24)),
        "slack bot token",
        ("SLACK_TOKEN", "slack_bot_token"),
    ),
    "slack-webhook": Fmt(
        tok(
            lambda r: (
                J(("https://hooks.", "slack.com/services/T"))
                + rnd(r, UP + NUM, 10)
                + "/B"
                + rnd(r, UP + NUM, 10)
                + "/"
                + rnd(r, AN, 24)
            )
        ),
        "slack webhook url",
        ("SLACK_HOOK", "slack_webhook"),
    ),
    "google-api-key": Fmt(
        tok(lambda r: J(("AI", "za")) + rnd(r, URLC, 35)), "google maps key", ("MAPS_API_KEY", "google_key")
    ),
    "sendgrid": Fmt(
        tok(lambda r: J(("S", "G.")) + rnd(r, URLC, 22) + "." + rnd(r, URLC, 43)),
        "sendgrid key",
        ("SENDGRID_KEY", "sendgrid"),
    ),
    "twilio-api-key": Fmt(
        tok(lambda r: J(("S", "K")) + rnd(r, HEXC, 32)), "twilio api key", ("TWILIO_KEY_SID", "twilio_key")
    ),
    "huggingface": Fmt(
        tok(lambda r: J(("h", "f_")) + rnd(r, AZ + UP, 34)), "hugging face token", ("HUGGINGFACE_TOKEN", "hf_token")
    ),
    "npm": Fmt(tok(lambda r: J(("np", "m_")) + rnd(r, AN, 36)), "npm publish token", ("NPM_AUTH", "npm_token")),
    "pypi": Fmt(
        tok(lambda r: J(("py", "pi-", "AgEIcHlwaS5vcmc")) + rnd(r, URLC, 80)),
        "pypi upload token",
        ("TWINE_PASSWORD", "pypi_token"),
    ),
    "digitalocean": Fmt(
        tok(lambda r: J(("do", "p_v1_")) + rnd(r, HEXC, 64)), "digitalocean token", ("DO_TOKEN", "do_api_token")
    ),
    "discord-bot": Fmt(tok(_discord), "discord bot token", ("DISCORD_TOKEN", "bot_token")),
    "telegram-bot": Fmt(
        tok(lambda r: rnd(r, NUM, 10) + ":" + "AA" + rnd(r, URLC, 33)),
        "telegram bot token",
        ("TG_BOT_TOKEN", "telegram"),
    ),
    "telegram-url": Fmt(_telegram_url, "telegram webhook url", ("TG_WEBHOOK", "notify_url"), wrapped=True),
    "shopify": Fmt(
        tok(lambda r: J(("sh", "pat_")) + rnd(r, HEXC, 32)), "shopify admin token", ("SHOPIFY_ADMIN", "shopify_token")
    ),
    "vault": Fmt(
        tok(lambda r: J(("hv", "s.")) + rnd(r, URLC, r.choice((26, 92)))), "vault token", ("VAULT_TOKEN", "vault")
    ),
    "doppler": Fmt(
        tok(lambda r: J(("dp", ".pt.")) + rnd(r, AN, 43)), "doppler service token", ("DOPPLER_TOKEN", "doppler")
    ),
    "databricks": Fmt(
        tok(lambda r: J(("da", "pi")) + rnd(r, HEXC, 32)), "databricks PAT", ("DATABRICKS_TOKEN", "dbx_token")
    ),
    "mailgun": Fmt(tok(lambda r: J(("ke", "y-")) + rnd(r, HEXC, 32)), "mailgun api key", ("MAILGUN_KEY", "mailgun")),
    "linear": Fmt(tok(lambda r: J(("lin", "_api_")) + rnd(r, AN, 40)), "linear api key", ("LINEAR_KEY", "linear")),
    "atlassian": Fmt(
        tok(lambda r: J(("ATA", "TT3")) + rnd(r, URLC, 186)), "jira api token", ("JIRA_API_TOKEN", "jira_token")
    ),
    "postman": Fmt(
        tok(lambda r: J(("PM", "AK-")) + rnd(r, HEXC, 24) + "-" + rnd(r, HEXC, 34)),
        "postman key",
        ("POSTMAN_KEY", "postman"),
    ),
    "grafana-sa": Fmt(
        tok(lambda r: J(("gl", "sa_")) + rnd(r, AN, 32) + "_" + rnd(r, HEXC, 8)),
        "grafana service account token",
        ("GRAFANA_SA_TOKEN", "grafana"),
    ),
    "pulumi": Fmt(
        tok(lambda r: J(("pu", "l-")) + rnd(r, HEXC, 40)), "pulumi access token", ("PULUMI_ACCESS_TOKEN", "pulumi")
    ),
    "rubygems": Fmt(
        tok(lambda r: J(("ruby", "gems_")) + rnd(r, HEXC, 48)), "rubygems api key", ("GEM_HOST_API_KEY", "rubygems")
    ),
    "age": Fmt(
        tok(lambda r: J(("AGE-", "SECRET-", "KEY-1")) + rnd(r, BECH, 58).upper()),
        "age identity",
        ("SOPS_AGE_KEY", "age_key"),
    ),
    "newrelic": Fmt(
        tok(lambda r: J(("NR", "AK-")) + rnd(r, UP + NUM, 27)), "new relic user key", ("NEW_RELIC_KEY", "newrelic")
    ),
    "jwt": Fmt(tok(_jwt), "bearer jwt", ("ACCESS_JWT", "jwt")),
    "pem": Fmt(_pem, "ssh private key", ("DEPLOY_KEY", "ssh_key"), wrapped=True),
    "ppk": Fmt(_ppk, "putty key", ("PUTTY_KEY", "ppk"), wrapped=True),
    "db-url": Fmt(_pg, "database url", ("DB_URL", "dsn"), wrapped=True),
    "azure-storage": Fmt(
        _storage_conn, "storage connection string", ("AZURE_STORAGE_CONNECTION_STRING", "storage"), wrapped=True
    ),
    "azure-sas-url": Fmt(_sas_url, "SAS url", ("BACKUP_SAS_URL", "sas_url"), wrapped=True),
    "azure-sas-conn": Fmt(_sas_conn, "SAS connection string", ("AZURE_BLOB_SAS", "blob_sas"), wrapped=True),
    "azure-servicebus": Fmt(
        _servicebus, "service bus connection string", ("SERVICEBUS_CONN", "servicebus"), wrapped=True
    ),
    "tailscale": Fmt(tok(_tailscale), "tailscale auth key", ("TS_AUTHKEY", "tailscale_key")),
    "curl-user": Fmt(_curl_user, "curl basic auth", ("HEALTHCHECK_CMD", "probe"), wrapped=True),
    "docker-pat": Fmt(
        tok(lambda r: J(("dck", "r_pat_")) + rnd(r, URLC, 27)), "docker hub PAT", ("DOCKERHUB_TOKEN", "docker_pat")
    ),
    "supabase-secret": Fmt(
        tok(lambda r: J(("sb", "_secret_")) + rnd(r, URLC, 31)),
        "supabase secret key",
        ("SUPABASE_SECRET_KEY", "supabase_secret"),
    ),
    "supabase-service-role": Fmt(
        tok(_supabase_jwt), "supabase service_role key", ("SUPABASE_SERVICE_ROLE_KEY", "service_role")
    ),
    "wireguard": Fmt(tok(lambda r: b64bytes(r, 32)), "wireguard private key", ("WG_PRIVATE_KEY", "wg_private_key")),
    "okta-ssws": Fmt(_okta, "okta api token header", ("OKTA_HEADER", "okta_auth"), wrapped=True),
    "sentry-user": Fmt(
        tok(lambda r: J(("sntr", "yu_")) + rnd(r, HEXC, 64)), "sentry auth token", ("SENTRY_AUTH_TOKEN", "sentry")
    ),
    "figma": Fmt(tok(lambda r: J(("fig", "d_")) + rnd(r, URLC, 40)), "figma token", ("FIGMA_TOKEN", "figma")),
    "flyio": Fmt(
        tok(lambda r: J(("Fly", "V1 fm2_")) + rnd(r, URLC, 120)), "fly.io deploy token", ("FLY_API_TOKEN", "fly_token")
    ),
    "notion": Fmt(
        tok(lambda r: J(("nt", "n_")) + rnd(r, AN, 46)), "notion integration secret", ("NOTION_TOKEN", "notion")
    ),
    "square": Fmt(
        tok(lambda r: J(("sq0", "atp-")) + rnd(r, URLC, 22)), "square access token", ("SQUARE_TOKEN", "square")
    ),
}


# --- the five forms -------------------------------------------------------------------------------
# Each pack: per form a tuple of templates.  {L} the label, {N} a variable name, {n} its lower-case form,
# {V} the carrier.  Wrapped carriers (URLs, commands, key files) use the WRAPPED_* lists in prose and shell.

PACKS: dict[str, dict[str, tuple[str, ...]]] = {
    "dev": {
        "prose": (
            "ok so the {L} ended up being {V} - can you wire it into the deploy?",
            "{L} → {V}",
            "Rotated the {L} this morning. New one: {V}",
            "for the record, {L} = {V} (don't commit it)",
            "Can you check why {V} gets a 401? it's our {L}.",
        ),
        "assignment": ("{N}={V}", "{N} = '{V}'", "set {N}={V}", 'const {n} = "{V}";', '{n} := "{V}"'),
        "json": (
            '{{"{n}": "{V}"}}',
            '{{"env": {{"{N}": "{V}"}}, "region": "eu-west-1"}}',
            '[{{"name": "{N}", "value": "{V}"}}]',
            '{{\n  "service": "billing",\n  "{n}": "{V}",\n  "retries": 3\n}}',
        ),
        "yaml": (
            "{n}: {V}",
            'env:\n  {N}: "{V}"',
            "- name: {N}\n  value: '{V}'",
            "secrets:\n  {n}: {V}\n  region: us-east-1",
        ),
        "shell": (
            'export {N}="{V}"',
            "{N}={V} npm run release",
            "echo '{N}={V}' >> .env.production",
            'gh secret set {N} --body "{V}"',
            "docker run -e {N}={V} ghcr.io/acme/worker:latest",
        ),
    },
    "blind": {
        "prose": (
            "hey, here's the {L} you asked for: {V}",
            "pasting the {L} so you have it {V} thanks!",
            "{L} (Marta generated it yesterday for the nightly job): {V}",
            "the build fails with our {L} `{V}` - is it scoped wrong?",
            "I think the {L} is {V} but double check",
        ),
        "assignment": ("{N} := {V}", "{n}='{V}'", '$env:{N} = "{V}"', 'private val {n} = "{V}"', '{N}="{V}" # prod'),
        "json": (
            '{{"credentials": {{"{n}": "{V}"}}}}',
            '{{"{N}":"{V}","debug":false}}',
            '{{"variables": [{{"key": "{n}", "value": "{V}", "secret": true}}]}}',
        ),
        "yaml": (
            '  {n}: "{V}"',
            "config:\n  auth:\n    {n}: {V}",
            "environment:\n  - {N}={V}",
            "{N}: >-\n  {V}",
        ),
        "shell": (
            "export {N}='{V}'",
            'fly secrets set {N}="{V}"',
            "kubectl create secret generic app --from-literal={n}={V}",
            "printf '%s' \"{V}\" | wrangler secret put {N}",
            "heroku config:set {N}={V} -a acme-api",
            'curl -H "Authorization: Bearer {V}" https://api.acme.dev/v2/me',
        ),
    },
}

# A third pack, written after the rules were fixed on "dev" and on the misses of the first "blind" run, and run
# only once, for the figures docs/credentials.md reports as held out.
PACKS["fresh"] = {
    "prose": (
        "quick q - is {V} still valid as our {L}?",
        "Posting the {L} here until vault is back up: {V}",
        "{L}, copied from the old wiki page, reads {V}",
        "we swapped the {L} to {V} on friday",
        "got '{V}' as the {L} from Priyanka",
    ),
    "assignment": ("{N}:={V}", "let {n} = '{V}'", '{n} <- "{V}"', "SET {N}={V}", "{N} ?= {V}"),
    "json": (
        '{{"spec": {{"{n}": "{V}"}}}}',
        '{{"name": "{N}", "value": "{V}"}}',
        '{{"data": [{{"{N}": "{V}"}}], "ok": true}}',
    ),
    "yaml": ("stringData:\n  {n}: '{V}'", '{n}:\n  "{V}"', "- {N}: {V}", "vars:\n    {N}: {V}  # rotate monthly"),
    "shell": (
        "set -x; export {N}={V}",
        "env {N}='{V}' python manage.py migrate",
        "az keyvault secret set --vault-name kv --name {n} --value '{V}'",
        'aws ssm put-parameter --name /prod/{n} --value "{V}" --type SecureString',
        "docker login -u svc-deploy -p '{V}' registry.acme.io",
    ),
}

# A fourth pack (issue 20 §4, second pass), written before the second round of fixes was measured on it, with
# its own seed, sentence shapes, names and separators, and run once for the figures reported as held out.
PACKS["fourth"] = {
    "prose": (
        "Sorry for the delay!! {L} attached -- {V} -- ping me if it bounces",
        "can u double-check the {L}? I have {V} in my notes",
        "{L} rotated (old one leaked in a screenshot), now {V}",
        "per Tomás, the {L} should be {V}; not sure it's the prod one",
        "Note to self >> {L} :: {V}",
    ),
    "assignment": (
        "{N}: {V}",
        "var {n} = `{V}`",
        '{n} = "{V}"  # TODO move to vault',
        '{N}="{V}"; export {N}',
        "$Env:{N}='{V}'",
    ),
    "json": (
        '{{"auth": {{"type": "token", "{n}": "{V}"}}}}',
        '{{"Parameters": [{{"Name": "{N}", "Value": "{V}"}}]}}',
        '{{\n    "{N}" : "{V}"\n}}',
        '{{"profiles": {{"prod": {{"{n}": "{V}", "timeout": 30}}}}}}',
    ),
    "yaml": (
        '# staging\n{n}: "{V}"',
        "spec:\n  template:\n    env:\n      - name: {N}\n        value: {V}",
        "{N}: '{V}'  # expires Q3",
        "global:\n  {n}: >\n    {V}",
    ),
    "shell": (
        "echo -n '{V}' | gh secret set {N} --repo acme/api",
        "vercel env add {N} production <<< '{V}'",
        'docker run --rm -e {N}="{V}" -p 8080:8080 acme/app',
        "op item edit deploy {n}='{V}'",
        "sudo -E env {N}={V} systemctl restart worker",
    ),
}

# Two more packs (issue 20 §4, third pass), written together before either was run, each with its own seed,
# templates, variable names, separators, secret names and sentence shapes: "fifth" is run once on the detector as
# it stood and then fixed on, "sixth" is run once after those fixes and never fixed on.
PACKS["fifth"] = {
    "prose": (
        "hey can you plug the {L} into the CI? it's {V}",
        "**{L}**: {V}",
        "{L} from the 1password vault (shared folder) -> {V} , thx",
        "pls dont log this anywhere, {L} is `{V}`",
        "Here you go: {V} (the {L}, staging scope)",
    ),
    "assignment": (
        "{N}={V}  # from ops",
        "export const {n} = '{V}'",
        '{n}: str = "{V}"',
        'os.environ["{N}"] = "{V}"',
        "[default]\n{n} = {V}",
    ),
    "json": (
        '{{"secrets": [{{"id": "{n}", "data": "{V}"}}]}}',
        '{{"config": {{"api": {{"{n}": "{V}", "base_url": "https://api.internal"}}}}}}',
        '{{\n\t"{N}": "{V}",\n\t"LOG_LEVEL": "info"\n}}',
    ),
    "yaml": (
        'env:\n  - name: {N}\n    value: "{V}"',
        '{n}: "{V}" # do not commit',
        "credentials:\n  default:\n    {n}: '{V}'",
        "---\n{N}: {V}\n...",
    ),
    "shell": (
        'export {N}="{V}" && ./deploy.sh',
        "railway variables set {N}={V}",
        'echo "{N}={V}" | tee -a ~/.profile',
        "helm upgrade app ./chart --set secrets.{n}={V}",
        "{N}='{V}' docker compose up -d",
    ),
}

PACKS["sixth"] = {
    "prose": (
        "so the {L} they sent over is {V} - does that look valid to you?",
        "Context: nightly export broke.\n{L} = {V}\nwhat am I missing?",
        "the {L} ({V}) stopped working after the migration",
        "i'm using `{V}` as the {L} rn, is that the right one??",
        "{L} — {V} — rotate after the demo",
    ),
    "assignment": (
        'define("{N}", "{V}");',
        "local {n} = '{V}'",
        'config.{n} = "{V}"',
        'setx {N} "{V}"',
        "{n}={V}",
    ),
    "json": (
        '{{"type": "service_account", "{n}": "{V}"}}',
        '{{"env": [{{"name": "{N}", "valueFrom": null, "value": "{V}"}}]}}',
        '{{"prod": {{"{N}": "{V}"}}, "dev": {{"{N}": ""}}}}',
    ),
    "yaml": (
        "{n}: {V}   # from Ravi",
        'services:\n  api:\n    environment:\n      {N}: "{V}"',
        "- key: {n}\n  value: {V}",
        "data:\n  {n}: {V}\n  user: svc",
    ),
    "shell": (
        "export {N}={V}; ./run.sh",
        "doppler secrets set {N}='{V}'",
        'gcloud secrets versions add {n} --data-file=- <<< "{V}"',
        "docker compose run -e {N}={V} api pytest",
        "echo {N}={V} >> .env",
    ),
}

# A seventh pack (issue 20 §4, fourth pass), written before the proximity rule was tried on anything, to measure
# it once: its own seed, templates, variable names, separators, secret names and sentence shapes.
PACKS["seventh"] = {
    "prose": (
        "quick q - is {L} {V} still valid or was it revoked?",
        "ok so I dug the {L} out of an old email: {V}",
        "{L} for the partner integration below\n{V}\nplease keep it out of git",
        "Got a fresh {L} from support ({V}), testing now",
        "> {L}: {V}",
    ),
    "assignment": (
        '{N} := "{V}"',
        'let {n} = "{V}";',
        '{n} <- "{V}"',
        "{N}={V} # rotated 2026-11",
        "set {N}={V}",
    ),
    "json": (
        '{{"credentials": {{"{n}": "{V}"}}, "region": "eu-west-1"}}',
        '[{{"key": "{N}", "value": "{V}", "secure": true}}]',
        '{{"{n}":"{V}"}}',
    ),
    "yaml": (
        'secrets:\n  {n}:\n    value: "{V}"',
        "{N}: >-\n  {V}",
        'vars:\n  {n}: "{V}"  # vault later',
        "environment:\n  - {N}={V}",
    ),
    "shell": (
        "fly secrets set {N}={V}",
        "kubectl create secret generic app --from-literal={n}={V}",
        "aws ssm put-parameter --name /app/{n} --value '{V}' --type SecureString",
        "heroku config:set {N}='{V}' -a api",
        "{N}={V} npm run deploy",
    ),
}

# An eighth pack, written after the seventh's one run and before the fixes made on its misses, to measure those once.
PACKS["eighth"] = {
    "prose": (
        "hmm, the {L} I copied earlier ({V}) gives 401 now",
        "Steps: open settings, paste {V} into the {L} box, save",
        "{L} -> {V} (valid until the 30th)",
        "we still have the old {L} around somewhere... found it: {V}",
        "* {L}: {V}\n* region: us-east-2",
    ),
    "assignment": (
        "{N} ?= {V}",
        '$config["{n}"] = "{V}";',
        "const {N}: string = '{V}'",
        "{n} = '{V}'  ; ini",
        '{N}="{V}" # local only',
    ),
    "json": (
        '{{"data": {{"attributes": {{"{n}": "{V}"}}}}}}',
        '{{"name": "{N}", "secret": true, "value": "{V}"}}',
        '{{ "{N}" : "{V}" , "debug" : false }}',
    ),
    "yaml": (
        "stringData:\n  {n}: {V}",
        "{n}:\n  - {V}",
        '"{N}": "{V}"',
        "auth:\n  {n}: |\n    {V}",
    ),
    "shell": (
        "gh secret set {N} --body '{V}' --env prod",
        'az keyvault secret set --vault-name kv1 --name {n} --value "{V}"',
        "env {N}={V} python manage.py check",
        "launchctl setenv {N} {V}",
        "read -r {N} <<< '{V}'",
    ),
}

# A ninth pack, written after the eighth's one run and before the fixes made on its misses, to measure those once.
PACKS["ninth"] = {
    "prose": (
        "the {L} the contractor left in the README is {V}, should we revoke it?",
        "I'm pretty sure {V} is our {L} for sandbox",
        "Pasting for reference -- {L}: {V}",
        "{L}\n{V}\n(from the old wiki page)",
        "rotate {L} {V} asap, it was in a public gist",
    ),
    "assignment": (
        "{n} => '{V}',",
        "{N} = {V}",
        'final String {n} = "{V}";',
        "{n}: '{V}'",
        "export {N}='{V}' # pragma: allowlist secret",
    ),
    "json": (
        '{{"env": {{"{N}": "{V}"}}}}',
        '{{"kind": "Secret", "stringData": {{"{n}": "{V}"}}}}',
        '[{{"{n}": "{V}"}}]',
    ),
    "yaml": (
        "{n}: {V} # prod",
        "- name: {n}\n  value: '{V}'",
        "settings:\n  {N}: {V}",
        "{N}: |-\n  {V}",
    ),
    "shell": (
        "export {N}={V}",
        "podman run -e {N}='{V}' img",
        'gh variable set {N} --body "{V}"',
        "echo '{N}={V}' >> $GITHUB_ENV",
        "sops set secrets.yaml '[\"{n}\"]' '\"{V}\"'",
    ),
}

# Wrapped carriers in prose and shell: the thing itself, in a sentence or a command.
WRAPPED: dict[str, dict[str, tuple[str, ...]]] = {
    "dev": {
        "prose": ("here's the {L}:\n{V}\nthanks", "the {L} is {V}", "I used {V} and it hangs"),
        "shell": ('echo "{V}" > /tmp/x && ./import.sh /tmp/x', 'export {N}="{V}"'),
    },
    "blind": {
        "prose": ("pasting the {L} below\n\n{V}\n\nlet me know", "{L}: {V}", "got this from ops: {V}"),
        "shell": ("cat > creds.txt <<'EOF'\n{V}\nEOF", "{N}='{V}' ./sync"),
    },
    "fresh": {
        "prose": ("this is what I have for the {L}: {V}", "{V}\n^ the {L}, is it right?", "see {L} -> {V}"),
        "shell": ("printf '%s\\n' \"{V}\" > ./secret.txt", '{N}="{V}" make deploy'),
    },
    "fourth": {
        "prose": ("Ok -- {L} follows:\n\n    {V}\n", "does {V} look right to you? ({L})", "{L} => {V} (staging)"),
        "shell": ("tee ./cred >/dev/null <<EOF\n{V}\nEOF", "env {N}='{V}' ./bin/check"),
    },
    "fifth": {
        "prose": (
            "here's the {L}, straight from the portal:\n\n{V}\n\nlmk if it works",
            "{L} → `{V}`",
            "tried {V} but got a timeout",
        ),
        "shell": ("cat <<EOF > ./key.txt\n{V}\nEOF", '{N}="{V}" ./scripts/smoke.sh'),
    },
    "sixth": {
        "prose": ("```\n{V}\n```\nthat's the {L}", "fyi {L}: {V} (prod)", "Why does {V} give me a 403?"),
        "shell": ("echo '{V}' | pbcopy", "export {N}='{V}'; make test"),
    },
    "seventh": {
        "prose": ("the {L} came back as\n\n{V}\n\nis that normal?", "is {V} the right {L}?", "{V} <- worked once"),
        "shell": ("printf %s '{V}' > ~/.secret && chmod 600 ~/.secret", '{N}="{V}" ./scripts/rotate.sh'),
    },
    "eighth": {
        "prose": ("my {L}, copied from the dashboard just now:\n{V}", "{V} is what ops sent as the {L}", "try {V}?"),
        "shell": ("echo -n '{V}' > ./secrets/{n} && kubectl apply -k .", 'SECRET="{V}" make release'),
    },
    "ninth": {
        "prose": ("{L} (keep private):\n\n{V}\n", "why is {V} rejected by the API?", "{V}\nthat one is the {L}"),
        "shell": ("cat > ./cred.txt << 'X'\n{V}\nX", "TOKEN='{V}' ./smoke"),
    },
}

# Carriers with a command of their own in the shell form.
SHELL_OWN: dict[str, tuple[str, ...]] = {
    "curl-user": ("{V}",),
    "okta-ssws": ('curl -H "Accept: application/json" -H "{V}" https://acme.okta.com/api/v1/users',),
    "azure-sas-url": ('azcopy copy ./backup.tar "{V}"', 'curl -T dump.sql "{V}"'),
    "telegram-url": ('curl -s -X POST "{V}" -d chat_id=-100123 -d text=done', "wget -qO- {V}"),
    "db-url": ('psql "{V}" -c "select 1"',),
}


def _names(fmt: Fmt, rng: random.Random) -> tuple[str, str]:
    name = rng.choice(fmt.names)
    return name.upper(), name.lower()


def _wireguard_config(value: str, rng: random.Random) -> str:
    return (
        f"[Interface]\nAddress = 10.{rng.randint(0, 200)}.0.2/32\nPrivateKey = {value}\nListenPort = 51820\n\n"
        f"[Peer]\nPublicKey = {b64bytes(rng, 32)}\nAllowedIPs = 0.0.0.0/0"
    )


def format_cases(pack: str, seed: int, rounds: int) -> list[tuple[str, str, str, str]]:
    """(format, form, text, core) for every format, form and template, `rounds` times over."""
    rng = random.Random(seed)
    out: list[tuple[str, str, str, str]] = []
    templates = PACKS[pack]
    for _ in range(rounds):
        for name, fmt in FORMATS.items():
            for form in FORMS:
                own = SHELL_OWN.get(name) if form == "shell" else None
                pool = own or (WRAPPED[pack][form] if fmt.wrapped and form in WRAPPED[pack] else templates[form])
                for template in pool:
                    carrier, core = fmt.make(rng)
                    upper, lower = _names(fmt, rng)
                    if name == "wireguard" and form == "assignment" and rng.random() < 0.5:
                        out.append((name, form, _wireguard_config(carrier, rng), core))
                        continue
                    shown = carrier
                    if form == "json":
                        shown = json.dumps(carrier)[1:-1]
                    elif "\n" in carrier and form == "yaml":
                        shown = "|\n    " + carrier.replace("\n", "\n    ")
                    elif "\n" in carrier and form == "assignment":
                        shown = '"' + carrier + '"'
                    text = template.format(L=fmt.label, N=upper, n=lower, V=shown)
                    if form == "json":
                        json.loads(text)  # the JSON form is JSON
                    out.append((name, form, text, core))
    return out


# --- prefix-less secrets named in a sentence --------------------------------------------------------


def _value(rng: random.Random) -> str:
    kind = rng.choice(("password", "password", "chosen", "hex", "b64", "alnum"))
    if kind == "password":
        return chosen_password(rng)
    if kind == "chosen":  # a person's pick: a word, digits, a symbol
        word = rng.choice(("Kestrel", "tangerine", "Bluebird", "marmot", "Orchard", "velvet", "Quasar", "pumpkin"))
        return word + rng.choice("!#@$&*.") + str(rng.randint(10, 9999)) + rng.choice(("", "x", "Q", "!"))
    if kind == "hex":
        return rnd(rng, HEXC, rng.choice((24, 32, 40, 64)))
    if kind == "b64":
        return b64bytes(rng, rng.choice((18, 24, 32)))
    return rnd(rng, AN, rng.choice((16, 20, 24, 32)))


NAMED: dict[str, dict[str, tuple[str, ...]]] = {
    "dev": {
        "names": (
            "gmail password",
            "root pw",
            "db password",
            "API secret",
            "wifi password",
            "admin passphrase",
            "signing secret",
            "HMAC key",
            "encryption key",
            "webhook secret",
            "SMTP password",
            "client secret",
            "secret access key",
            "session secret",
            "master password",
            "jenkins password",
            "redis password",
        ),
        "sentences": (
            "my {K} is {V}",
            "the {K} we use in prod: {V}",
            "the {K} for the backup user is {V}",
            "use {V} as the {K}",
            "{K} for staging, which Dana rotated last week, is {V}",
            "I set the {K} to {V} yesterday",
            "{V} is the {K}, don't share it",
            "can you update the {K}? new value {V}",
            "fyi the {K} on the old box was {V} and it still works",
            "The {K} — {V}",
        ),
    },
    "fresh": {
        "names": (
            "s3 secret",
            "email password",
            "pgbouncer password",
            "signing key",
            "jenkins api token",
            "console password",
            "oauth client secret",
            "backup encryption key",
            "kafka sasl password",
            "root passphrase",
            "deploy secret",
            "minio secret key",
            "portal pw",
            "smtp creds",
        ),
        "sentences": (
            "the {K} is now {V}",
            "I've put {V} in as the {K} for now",
            "ok {K} updated, it's {V} until we rotate",
            "{K} for the eu cluster (ask Lena if it fails): {V}",
            "can you try {V}? I think that's the {K}",
            "Heads up, the {K} changed: {V}",
            "here's the {K} you wanted {V}",
            "{K}: `{V}`",
            "we went with {V} for the {K} in the end",
            "the {K} that the installer printed was {V}",
        ),
    },
    "blind": {
        "names": (
            "postgres password",
            "admin pw",
            "vpn password",
            "bot secret",
            "jwt secret",
            "ldap bind password",
            "router password",
            "app secret",
            "private key passphrase",
            "token secret",
            "sudo password",
            "mongo password",
            "keystore password",
            "service account secret",
            "grafana admin password",
            "shared secret",
            "api secret key",
        ),
        "sentences": (
            "hey the {K} is {V} fyi",
            "{K} that Omar gave me over chat: {V}",
            "try logging in with {V}, that's the {K}",
            "so for the {K} on the staging cluster we went with {V}",
            "please store {V} somewhere safe, it is the {K}",
            "the {K} got changed to {V} after the incident",
            "{K}? it's {V}",
            "new {K} below\n{V}",
            "for the {K} (prod, eu-1) -> {V}",
            "remember: {K} = {V}",
        ),
    },
}


NAMED["fourth"] = {
    "names": (
        "vpn psk",
        "nas admin password",
        "rabbitmq password",
        "pfx password",
        "bitwarden master password",
        "cloudflare api secret",
        "mysql root password",
        "elastic password",
        "zoom client secret",
        "ssh passphrase",
        "wp admin pass",
        "splunk hec token",
        "gpg passphrase",
        "sftp password",
        "oidc client secret",
    ),
    "sentences": (
        "Reminder that the {K} was reset to {V} this morning",
        "{K} -> {V}",
        "i typed {V} for the {K} and it said invalid",
        "the {K}, in case you need it, {V}",
        "could you set {V} as our {K} on the new host?",
        "Jon says {K} = '{V}' now",
        "login failing even w/ {K} {V}",
        "{V} <- that's the {K}",
        'changed the {K}: old one gone, new one is "{V}"',
        "our {K} is still {V}, we never rotated it",
    ),
}


NAMED["fifth"] = {
    "names": (
        "staging db pass",
        "jira password",
        "cognito client secret",
        "twitch client secret",
        "snowflake password",
        "airflow fernet key",
        "django secret key",
        "keycloak admin password",
        "ftp password",
        "samba password",
        "openvpn passphrase",
        "datadog app key",
        "artifactory password",
        "couchdb admin password",
        "rails master key",
    ),
    "sentences": (
        "hi! quick one, the {K} for the reporting box got changed again and it's now {V} if anyone asks",
        "**{K}:** {V}",
        "- host: db-2.internal\n- user: reporting\n- {K}: {V}",
        "{V} (that's the {K}, the new one)",
        'whats the {K} again? is it "{V}" or did someone change it',
        "teh {K} is {V}\nand the username is just admin",
        "setting up the runner now — {K} `{V}` — will report back",
        "{K} (rotated by Kwame on monday, stored nowhere else yet) {V}",
        "for {K} use '{V}' pls",
        "Can you log into grafana with the {K} I gave you yesterday, {V}, and look at the alerts?",
        "ok here goes. {K} = {V}. don't lose it",
    ),
}

NAMED["sixth"] = {
    "names": (
        "proxy password",
        "nexus password",
        "unifi password",
        "pgadmin password",
        "salesforce security token",
        "mqtt password",
        "ansible vault password",
        "jks password",
        "harbor robot secret",
        "clickhouse password",
        "teamcity token",
        "auth0 client secret",
        "cookie secret",
        "laptop login password",
        "influxdb token",
        "windows admin pw",
    ),
    "sentences": (
        "so um the {K} we set up for the contractors is {V} i think",
        "1. ssh in\n2. run the migration\n3. when it asks for the {K}, type {V}",
        "`{K}`: `{V}`",
        "{V} — {K}, prod only",
        "did the {K} ({V}) get into the logs?",
        "the {K} shoudl be {V} now, lmk if not",
        "re: {K} -- {V} -- expires end of month",
        "Could you add the {K} to the vault? Value: {V}",
        "the {K} from the onboarding doc still works: {V}\nthe other one doesn't",
        '**{K}** = "{V}"',
        "{K}... {V}",
        "i rotated the {K} after the offboarding, new value is {V}, old one is dead",
    ),
}


NAMED["seventh"] = {
    "names": (
        "hetzner robot password",
        "gitea admin password",
        "pihole web password",
        "plex token",
        "sonarqube token",
        "nextcloud app password",
        "kibana password",
        "replication password",
        "backup zip password",
        "printer admin password",
        "wordpress db password",
        "synology password",
        "matrix access token",
        "mailchimp api secret",
        "bastion passphrase",
        "terraform cloud token",
    ),
    "sentences": (
        "the {K}?? it's literally {V}",
        "> {K}\n> {V}\n\nthat's what the runbook says",
        "I think {V} is still the {K} but double check",
        "{K} was wrong in the .env, correct one: {V}",
        "after rotating, the {K} became {V}",
        "| {K} | {V} |",
        "can't log in: tried {K} {V} twice",
        "the {K} for acme-prod is set to {V} on the server and in CI",
        "ssh worked, but the {K} {V} didn't",
        "so {K} changed. now: {V}",
        "sending the {K} separately, here you go {V}",
        "{K} (don't paste in slack): {V}",
    ),
}


NAMED["eighth"] = {
    "names": (
        "opnsense root password",
        "unraid password",
        "gitlab runner token",
        "redash api secret",
        "metabase password",
        "coolify token",
        "proxmox password",
        "vaultwarden admin token",
        "sentry dsn secret",
        "rundeck password",
        "bitbucket app password",
        "dokku secret",
        "esxi root pw",
        "mosquitto passphrase",
        "pagerduty api secret",
        "mattermost token",
    ),
    "sentences": (
        "btw {K} is the usual one, {V}, unless someone changed it",
        "{K}\n\n    {V}\n",
        "ugh, typo: the {K} should read {V} not what I sent",
        "**{K}** {V}",
        "The vendor emailed the {K} ({V}); can you store it?",
        "{V} (= {K})",
        "ok the {K} works: {V} - logged in fine",
        "whoever set the {K} to {V} please rotate",
        "what is {V}? it was next to the {K} in the wiki",
        "{K} for tonight: {V} / user: ops",
        "- [x] reset {K} to {V}",
        "note {K}={V} in the runbook",
    ),
}


NAMED["ninth"] = {
    "names": (
        "home assistant token",
        "octoprint api secret",
        "weblate password",
        "grafana cloud token",
        "drone secret",
        "netbox token",
        "zabbix admin password",
        "traefik dashboard password",
        "portainer password",
        "jellyfin api token",
        "ovh application secret",
        "mikrotik password",
        "truenas root password",
        "concourse password",
        "n8n encryption key",
        "umami secret",
    ),
    "sentences": (
        "the {K} is in 1password but here it is anyway: {V}",
        "{K}:\n\n{V}",
        "found an old {K} in my notes, {V}, does it still work?",
        "{V} ← {K}",
        "So I reset the {K}. New one: {V}",
        "The {K} (the one in the wiki is outdated) is {V}",
        "I'm getting 'access denied' with {K} = {V}",
        "{K}, as requested: {V}",
        "we need to change {K} {V} before the audit",
        "the {K}, which Priya set, {V}",
        "Yes, {V}. That's the {K}.",
        "{K} is `{V}` and the user is admin",
    ),
}


def named_cases(pack: str, seed: int, n: int) -> list[tuple[str, str, str]]:
    """(sentence template, text, value) for n prefix-less secrets introduced by a name in a sentence."""
    rng = random.Random(seed)
    names, sentences = NAMED[pack]["names"], NAMED[pack]["sentences"]
    out = []
    for i in range(n):
        template = sentences[i % len(sentences)]
        key = rng.choice(names)
        value = _value(rng)
        text = template.format(K=key, V=value)
        if rng.random() < 0.3 and not template.startswith("{V}"):
            text = text[0].upper() + text[1:]
        if rng.random() < 0.3:
            text += rng.choice((".", "!", " thanks", " :)", "\n\nalso the build is red again"))
        out.append((template, text, value))
    return out


SEEDS = {
    "dev": 7101,
    "blind": 99173,
    "fresh": 31337,
    "fourth": 52829,
    "fifth": 60493,
    "sixth": 17929,
    "seventh": 84211,
    "eighth": 40127,
    "ninth": 73319,
}


def _found(text: str, core: str, scan: Callable[[str], list[object]]) -> bool:
    start = text.index(core)
    end = start + len(core)
    return any(h.start < end and h.end > start for h in scan(text))  # type: ignore[attr-defined]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--pack", choices=(*SEEDS, "all"), default="all")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--named", type=int, default=400, help="prefix-less cases per pack")
    ap.add_argument("--misses", type=int, default=0, help="show this many misses (values masked)")
    args = ap.parse_args()
    from wheypoint.model.credentials import scan_text

    packs = tuple(SEEDS) if args.pack == "all" else (args.pack,)
    for pack in packs:
        cases = format_cases(pack, SEEDS[pack], args.rounds)
        table: dict[str, dict[str, list[int]]] = {}
        misses: list[str] = []
        for name, form, text, core in cases:
            cell = table.setdefault(name, {f: [0, 0] for f in FORMS})[form]
            cell[0] += 1
            if _found(text, core, scan_text):
                cell[1] += 1
            else:
                misses.append(f"{name}/{form}: " + text.replace(core, "<V>")[:160].replace("\n", "\\n"))
        print(f"## Pack {pack!r}: {len(FORMATS)} formats in five forms (seed {SEEDS[pack]})\n")
        print("| format | " + " | ".join(FORMS) + " | all |")
        print("|---|" + "---:|" * (len(FORMS) + 1))
        totals = {f: [0, 0] for f in FORMS}
        for name, cells in table.items():
            row = []
            for form in FORMS:
                n, f = cells[form]
                totals[form][0] += n
                totals[form][1] += f
                row.append(f"{f}/{n}")
            n_all, f_all = sum(c[0] for c in cells.values()), sum(c[1] for c in cells.values())
            print(f"| {name} | " + " | ".join(row) + f" | {f_all / n_all:.1%} |")
        n_all, f_all = sum(t[0] for t in totals.values()), sum(t[1] for t in totals.values())
        print(
            "| **all** | "
            + " | ".join(f"{t[1] / t[0]:.1%}" for t in totals.values())
            + f" | **{f_all}/{n_all} = {f_all / n_all:.2%}** |\n"
        )
        named = named_cases(pack, SEEDS[pack] + 1, args.named)
        by_template: dict[str, list[int]] = {}
        for template, text, value in named:
            cell = by_template.setdefault(template, [0, 0])
            cell[0] += 1
            if _found(text, value, scan_text):
                cell[1] += 1
            else:
                misses.append("named: " + text.replace(value, "<V:" + _shape(value) + ">").replace("\n", "\\n"))
        print(f"### Pack {pack!r}: prefix-less secrets named in a sentence\n")
        print("| sentence | cases | found |")
        print("|---|---:|---:|")
        for template, (n, f) in by_template.items():
            print(f"| `{template!r}` | {n} | {f / n:.0%} |")
        n_named, f_named = sum(c[0] for c in by_template.values()), sum(c[1] for c in by_template.values())
        print(f"| **all** | **{n_named}** | **{f_named / n_named:.1%}** |\n")
        for line in misses[: args.misses]:
            print("MISS", line, file=sys.stderr)
    return 0


def _shape(value: str) -> str:
    kinds = sum(any(c in k for c in value) for k in (AZ, UP, NUM)) + any(not c.isalnum() for c in value)
    return f"len{len(value)},{kinds}cls"


if __name__ == "__main__":
    raise SystemExit(main())
