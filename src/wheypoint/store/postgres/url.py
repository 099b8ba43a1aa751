"""A PostgreSQL store's URL: how it is shown (never with its password) and the connection settings added to it.

Credentials come from the URL, `PGPASSWORD` or `~/.pgpass` (libpq reads the last two itself). A URL is
shown in replies and errors only through `redacted`, and a driver message has the password scrubbed out
before it is shown, so no reply, log line or refusal carries it.
"""

from __future__ import annotations

CONNECT_TIMEOUT_S = 10  # a server that does not answer is refused after this, not waited on for ever
STATEMENT_TIMEOUT_MS = 60_000  # no statement of a command runs longer than this
LOCK_TIMEOUT_MS = 15_000  # a write waits this long for a work's lock (SQLite's busy timeout), then store-busy
APPLICATION = "wheypoint"


def passwords_of(url: str) -> set[str]:
    """The passwords the URL itself carries (in its user part, as `password=`), decoded."""
    from urllib.parse import parse_qsl, unquote, urlsplit

    parts = urlsplit(url)
    found = {unquote(parts.password)} if parts.password else set()
    found.update(value for key, value in parse_qsl(parts.query, keep_blank_values=True) if key == "password")
    return {secret for secret in found if secret}


def redacted(url: str) -> str:
    """The URL with any password replaced by `***` (`postgresql://user:***@host/db`)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        if ":" in userinfo:
            netloc = userinfo.partition(":")[0] + ":***@" + hostport
    query = "&".join("password=***" if pair.startswith("password=") else pair for pair in parts.query.split("&"))
    return f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if parts.query else "")


def scrubbed(message: str, url: str) -> str:
    """A driver message with the URL's password (raw and as written in the URL) removed, and the URL redacted."""
    from urllib.parse import quote

    message = message.replace(url, redacted(url))
    for secret in passwords_of(url):
        for spelling in {secret, quote(secret, safe="")}:
            message = message.replace(spelling, "***")
    return message


def session_options(existing: str | None) -> str:
    """The `options` the backend connects with: the timeouts and UTC, then the URL's own (which win)."""
    ours = f"-c statement_timeout={STATEMENT_TIMEOUT_MS} -c lock_timeout={LOCK_TIMEOUT_MS} -c TimeZone=UTC"
    return f"{ours} {existing}" if existing else ours
