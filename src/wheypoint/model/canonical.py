"""Canonical JSON (RFC 8785, JCS) and the sha256 digests computed over it.

Every id and digest wheypoint derives is a SHA-256 over the canonical form defined here, so another
language can recompute them byte for byte:

- objects: keys sorted by their UTF-16 code units, no white space, `,` and `:` as separators;
- strings: UTF-8, escaping only `"`, `\\` and the C0 controls (`\\b \\f \\n \\r \\t` short forms, the
  rest as lowercase `\\u00xx`); lone surrogates are refused, since they cannot be encoded in UTF-8;
- numbers: wheypoint documents hold integers only (within the IEEE-754 safe range, so a JavaScript
  implementation agrees); a float is refused rather than serialised in some dialect;
- literals: `true`, `false`, `null`.

That is exactly RFC 8785 restricted to integer numbers. A digest is written `sha256:<64 lowercase hex>`.
"""

from __future__ import annotations

from wheypoint.jsontext import encode_basestring, encode_basestring_ascii

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


MAX_SAFE_INTEGER = 2**53 - 1

# JSON's own C string encoder (the one `ensure_ascii=False` uses) escapes exactly what RFC 8785 does: `"` and
# `\\` and the C0 controls, as \b \f \n \r \t or \u00xx in lower-case hex, and nothing else. It lets lone
# surrogates through, which RFC 8785 refuses: UTF-8 cannot encode them, so an encode finds them (in C).


class CanonicalError(ValueError):
    """A value that has no canonical form (a float, a lone surrogate, a foreign type)."""


def _string(value: str) -> str:
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise CanonicalError("lone surrogate in string") from None
    return encode_basestring(value)


def _utf16_key(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def _emit(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise CanonicalError("integer outside the safe range")
        out.append(str(value))
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _emit(item, out)
        out.append("]")
    elif isinstance(value, dict):
        out.append(_object(value))
    else:
        raise CanonicalError(f"no canonical form for {type(value).__name__}")


# A key's spelling with its colon, for the keys met most (a record's own, repeated in every entry and turn it
# holds); bounded, since a long-lived process may meet any number of keys of a document's own.
_KEY_TEXTS: dict[str, str] = {}
_KEY_TEXTS_HELD = 1024


def _object(value: dict[Any, Any]) -> str:
    """An object's canonical text, its members joined once: what a record's digest costs is mostly per member (a
    record holds hundreds of entries and turns), so a key's spelling is looked up, not escaped again, and a string
    or integer member is spelled without a call of `_emit`."""
    try:
        keys = sorted(value)
    except TypeError:  # keys of kinds that do not compare: not all strings
        raise CanonicalError("object key is not a string") from None
    members = []
    for key in keys:
        spelled = _KEY_TEXTS.get(key) if type(key) is str else None
        if spelled is None:
            if not isinstance(key, str):
                raise CanonicalError("object key is not a string")
            if not key.isascii():  # JCS orders keys by their UTF-16 code units: for ASCII, the strings' own order
                return _object_by_code_units(value)
            spelled = _string(key) + ":"
            if len(_KEY_TEXTS) < _KEY_TEXTS_HELD and type(key) is str:
                _KEY_TEXTS[key] = spelled
        members.append(_member(spelled, value[key]))
    return "{" + ",".join(members) + "}"


def _object_by_code_units(value: dict[str, Any]) -> str:
    """An object with a key outside ASCII: its members ordered by their keys' UTF-16 code units."""
    if not all(isinstance(key, str) for key in value):
        raise CanonicalError("object key is not a string")
    keys = sorted(value, key=_utf16_key)
    return "{" + ",".join(_member(_string(key) + ":", value[key]) for key in keys) + "}"


def _member(spelled: str, item: Any) -> str:
    """A member's text: its key `spelled` (with the colon), then its value's canonical text."""
    kind = type(item)
    if kind is str:
        return spelled + _string(item)
    if kind is int and -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
        return spelled + str(item)
    inner = [spelled]  # anything else, subclasses of str and int among them, as `_emit` spells it
    _emit(item, inner)
    return "".join(inner)


def lone_surrogate(document: Any) -> tuple[str, str] | None:
    """The first lone surrogate in a parsed JSON document's strings or keys, as (its path, `U+XXXX`), or None.

    JSON's `\\udXXX` escapes can write one, and Python's reader keeps it: a front door refuses it by its path,
    before it reaches a check that would echo it or a digest that cannot encode it. Walked without recursion,
    since the document may nest as deeply as the reader allowed.
    """
    stack: list[tuple[str, Any]] = [("$", document)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                inner = f"{path}[{encode_basestring_ascii(key)}]"  # escaped, so the path itself can be printed
                found = _surrogate_in(key)
                if found:
                    return inner, found
                stack.append((inner, item))
        elif isinstance(value, list):
            stack.extend((f"{path}[{index}]", item) for index, item in enumerate(value))
        elif isinstance(value, str):
            found = _surrogate_in(value)
            if found:
                return path, found
    return None


def surrogate_at(text: str) -> int | None:
    """Where the first lone surrogate of `text` is (the first character UTF-8 cannot encode), or None."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def _surrogate_in(text: str) -> str | None:
    at = surrogate_at(text)
    return None if at is None else f"U+{ord(text[at]):04X}"


def safe_integer(digits: str) -> int | None:
    """A JSON integer's value when canonical JSON can hold it (within +-(2^53-1)), else None.

    Judged on the digits before converting: thousands of them are slow to convert, and past 4,300 Python refuses.
    """
    if len(digits.lstrip("-")) > len(str(MAX_SAFE_INTEGER)):
        return None
    value = int(digits)
    return value if abs(value) <= MAX_SAFE_INTEGER else None


def canonical_text(value: Any) -> str:
    """The canonical JSON text of a value."""
    out: list[str] = []
    _emit(value, out)
    return "".join(out)


def canonical_bytes(value: Any) -> bytes:
    """The canonical JSON of a value, UTF-8 encoded: the bytes every digest is taken over."""
    return canonical_text(value).encode("utf-8")


def new_sha256() -> Any:
    """A SHA-256 hasher. The builtin one when present: hashlib initialises OpenSSL, several ms per process."""
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]  # CPython <= 3.11
    except ImportError:
        try:
            from _sha2 import sha256  # type: ignore[import-not-found]  # CPython >= 3.12
        except ImportError:
            from hashlib import sha256
    return sha256()


def sha256_hex(data: bytes) -> str:
    hasher = new_sha256()
    hasher.update(data)
    return str(hasher.hexdigest())


def digest(value: Any) -> str:
    """`sha256:<hex>` over the canonical bytes of a JSON value."""
    return "sha256:" + sha256_hex(canonical_bytes(value))


def short_hash(value: Any, length: int = 12) -> str:
    """The first `length` hex digits of a value's digest: the suffix of derived ids."""
    return sha256_hex(canonical_bytes(value))[:length]
