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


def _split(url: str) -> tuple[str, str, str, str]:
    """(scheme, user info, the rest of the authority and path, query), by hand: urllib refuses odd hosts."""
    scheme, _, rest = url.partition("://")
    rest, _, query = rest.partition("?")
    authority, slash, path = rest.partition("/")
    userinfo, at, hostport = authority.rpartition("@")
    return scheme, userinfo if at else "", hostport + slash + path, query


def passwords_of(url: str) -> set[str]:
    """The passwords the URL itself carries (in its user part, as `password=`), decoded."""
    from urllib.parse import unquote

    _, userinfo, _, query = _split(url)
    found = {unquote(userinfo.partition(":")[2])} if ":" in userinfo else set()
    found.update(unquote(pair[9:]) for pair in query.split("&") if pair.startswith("password="))
    return {secret for secret in found if secret}


def redacted(url: str) -> str:
    """The URL with any password replaced by `***` (`postgresql://user:***@host/db`)."""
    scheme, userinfo, rest, query = _split(url)
    if ":" in userinfo:
        userinfo = userinfo.partition(":")[0] + ":***"
    shown = f"{scheme}://" + (f"{userinfo}@" if userinfo else "") + rest
    if query:
        shown += "?" + "&".join("password=***" if pair.startswith("password=") else pair for pair in query.split("&"))
    return shown


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
