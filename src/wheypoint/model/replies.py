"""Printing a reply as one JSON document that any text leaves whole, and refusals scrubbed of what they echo.

Every reply of every front door goes through here: the command line's answers and refusals, the MCP tools'
refusals and the hooks' answers. A refusal often quotes the input it refuses (an unknown flag, a ref that names
no work, a key the contract does not define), so two things are done to it, in this one place:

- credentials and personal data are redacted: the input may be a token or a card number pasted in the wrong
  place, and a reply is read by an agent and kept in its transcript. The scans are the checkpoint's own
  (`credentials.scan_text`, `pii.scan_pii`, both behind `pii.redact_spans`), so whatever an intent would be
  refused for never comes back in a refusal either;
- lone surrogates (from undecodable bytes, or `\\udXXX` escapes in JSON) are written as the visible text
  `\\udXXX`: UTF-8 cannot encode them, so printed as they are they end the process with a traceback, or (with
  the C locale's surrogateescape) put bytes on stdout that are not UTF-8, and strict JSON readers refuse them.
"""

from __future__ import annotations

from wheypoint import jsontext

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _encodes(text: str, encoding: str) -> bool:
    """Whether `encoding` carries `text` as it is (strictly: surrogateescape would write bytes that are not UTF-8)."""
    if text.isascii():
        return True
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def document_text(document: Any, indent: int | None = None, encoding: str | None = "utf-8") -> str:
    """The JSON text of a reply: as it is when the output's `encoding` carries it, else every non-ASCII escaped."""
    text = _dumps(document, False, indent)
    return text if _encodes(text, encoding or "utf-8") else _dumps(document, True, indent)


def _dumps(document: Any, ensure_ascii: bool, indent: int | None) -> str:
    if indent is None:
        return jsontext.dumps(document, ensure_ascii=ensure_ascii)
    import json  # laid out for a person: json's own pure-Python writer

    return json.dumps(document, ensure_ascii=ensure_ascii, indent=indent)


def _surrogates_visible(text: str) -> str:
    return "".join(f"\\u{ord(ch):04x}" if "\ud800" <= ch <= "\udfff" else ch for ch in text)


def scrub_text(text: str) -> str:
    """A string fit for a refusal: credentials and personal data redacted (named by rule, never shown), lone
    surrogates made visible."""
    from wheypoint.model.canonical import surrogate_at

    if surrogate_at(text) is not None:
        text = _surrogates_visible(text)
    from wheypoint.model.pii import redact_spans  # a refusal's cost only: answers never load the scans

    return redact_spans(text)[0]


def excerpt(value: str, length: int = 60) -> str:
    """The start of `value`, to quote in a refusal. Scrubbed whole before it is cut: a cut token (the first 60
    characters of a fine-grained GitHub token or a JWT) no longer matches its rule, and the reply's scrub misses it."""
    return value[:length] if len(value) <= length else scrub_text(value)[:length]


def scrub(value: Any) -> Any:
    """A refusal's JSON with every string and key scrubbed (see scrub_text)."""
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, dict):
        return {scrub(key): scrub(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub(item) for item in value]
    return value


def internal_error(exc: BaseException) -> dict[str, Any]:
    """A bug's answer in the contract's shape; its text may hold input too, so it is scrubbed like a refusal's."""
    return {"code": "internal-error", "message": scrub_text(f"{type(exc).__name__}: {exc}")}
