"""Who may talk to the local server: the run's token, the session cookie, the CSRF token, Host and Origin."""

from __future__ import annotations

import hashlib
import hmac
import secrets

COOKIE = "wheypoint_session"
LIVE_SCRIPT = "/live.js"  # the one script a page may run (web/live.py); every other response may run none


def policy(script: str | None = None) -> str:
    """The Content-Security-Policy: nothing from another host, never inside a frame; `script` the one script
    address (this server's /live.js, in full) a page may run, else no script at all."""
    allowed = script or "'none'"
    return (f"default-src 'self'; script-src {allowed}; connect-src 'self'; "
            "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


def security_headers(script: str | None = None) -> tuple[tuple[str, str], ...]:
    """Sent with every response: the CSP above, no sniffing, no frame, no Referer to another host, never cached."""
    return (
        ("Content-Security-Policy", policy(script)),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        # A Referer for this server's own pages only. Not no-referrer: under it a browser sends a form's POST with
        # `Origin: null`, which post_ok refuses, so no answer could be sent (tests/test_browser.py found this).
        ("Referrer-Policy", "same-origin"),
        ("Cache-Control", "no-store"),
        ("Cross-Origin-Opener-Policy", "same-origin"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
    )



class Guard:
    """One run's secrets: the token printed in the URL, the sessions it opened, and the address it is bound to."""

    def __init__(self, host: str, port: int, token: str | None = None) -> None:
        self.token = token or secrets.token_urlsafe(32)
        self._key = secrets.token_bytes(32)
        self._sessions: set[str] = set()
        self.authority = f"{host}:{port}"  # what Host must say (a DNS-rebinding page sends its own name)
        self.origin = f"http://{self.authority}"

    def host_ok(self, host: str | None) -> bool:
        return host is not None and hmac.compare_digest(host.strip().lower().encode(), self.authority.lower().encode())

    def token_ok(self, token: str | None) -> bool:
        return token is not None and hmac.compare_digest(token.encode(), self.token.encode())

    def open_session(self) -> str:
        """A new session for a browser that showed the token: its cookie value."""
        session = secrets.token_urlsafe(32)
        self._sessions.add(session)
        return session

    def session_ok(self, session: str | None) -> bool:
        return session is not None and any(hmac.compare_digest(session.encode(), s.encode()) for s in self._sessions)

    def csrf_for(self, session: str) -> str:
        """The CSRF token of a session: bound to it, so another session's token is refused."""
        return hmac.new(self._key, session.encode(), hashlib.sha256).hexdigest()

    def post_ok(self, session: str, csrf: str | None, origin: str | None) -> bool:
        """A POST is this page's own: its Origin is this server and its CSRF token is its session's."""
        if origin is None or not hmac.compare_digest(origin.encode(), self.origin.encode()):
            return False
        return csrf is not None and hmac.compare_digest(csrf.encode(), self.csrf_for(session).encode())


def cookie_header(session: str) -> str:
    return f"{COOKIE}={session}; HttpOnly; SameSite=Strict; Path=/"


def session_of(cookie: str | None) -> str | None:
    """The session cookie's value in a Cookie header, if it holds one."""
    from http.cookies import CookieError, SimpleCookie

    if not cookie:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(cookie)
    except CookieError:
        return None
    morsel = jar.get(COOKIE)
    return morsel.value if morsel is not None else None
