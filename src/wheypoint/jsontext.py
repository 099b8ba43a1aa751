"""JSON read and written by the C scanner and encoder the `json` package runs on, without importing the package."""

# Why. `import json` loads four modules and compiles six regular expressions (the pure-Python fallbacks'
# patterns), 1 to 1.5 ms of every command measured as whole processes, while what a command calls is `_json`'s
# scanner and encoder. This module builds that same scanner and encoder from `_json`, with the defaults
# `json.JSONDecoder` and `json.JSONEncoder` give them, so each function answers exactly what its `json`
# counterpart answers: the same values, the same text, the same `JSONDecodeError` (message and position) for
# malformed text, the same `TypeError` for a value JSON has no form for. What only the pure-Python code does
# (`indent`, a `default` hook, a `cls`) is not offered here: callers needing it use `json`; bytes in another
# encoding than UTF-8 are handed to `json.loads`, which sniffs it.
#
# Invariants, enforced here and held to `json` by property tests on generated documents and damaged texts
# (tests/test_jsontext.py):
# - `decoder(...)(text)` is `json.JSONDecoder(...).decode(text)`; `loads(text, ...)` is `json.loads(text, ...)`
#   whatever `text` is; `encoder(...)(value)` is `json.JSONEncoder(...).encode(value)`; `dumps(value, ...)` is
#   `json.dumps(value, ...)`.
# - The `json` package is imported only on an error's path (its `JSONDecodeError` is the error raised, as the
#   C scanner itself does: up to Python 3.11 the scanner looks the class up among loaded modules only, and fails
#   with a SystemError when `json.decoder` is not one, so such a text is scanned again once it is), or when `_json`
#   is missing, where every function is `json`'s own.

from __future__ import annotations

__all__ = ["JSONDecodeError", "decoder", "dumps", "encode_basestring", "encode_basestring_ascii", "encoder", "loads"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from json import JSONDecodeError as JSONDecodeError
    from typing import Any, NoReturn

try:
    import _json
except ImportError:  # pragma: no cover - an interpreter without the accelerator: `json` itself, below
    _json = None  # type: ignore[assignment]

if _json is not None:  # the string writers JCS (model/canonical.py) is built on: `json.encoder`'s own, from C
    encode_basestring = _json.encode_basestring
    encode_basestring_ascii = _json.encode_basestring_ascii
else:  # pragma: no cover
    from json.encoder import encode_basestring, encode_basestring_ascii

_BLANK = " \t\n\r"  # JSON's white space, what `json.decoder.WHITESPACE` matches
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


def __getattr__(name: str) -> Any:
    """`JSONDecodeError`, json's own class, imported when an `except` clause first names it."""
    if name == "JSONDecodeError":
        from json import JSONDecodeError

        return JSONDecodeError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Options:
    """What `_json.make_scanner` reads from its decoder: json.JSONDecoder's attributes, with its defaults."""

    __slots__ = ("object_hook", "object_pairs_hook", "parse_constant", "parse_float", "parse_int", "strict")

    def __init__(self, object_pairs_hook: Any, parse_int: Any, parse_constant: Any) -> None:
        self.object_hook = None
        self.object_pairs_hook = object_pairs_hook
        self.parse_float = float
        self.parse_int = parse_int or int
        self.parse_constant = parse_constant or _CONSTANTS.__getitem__
        self.strict = True


def _error(message: str, text: str, at: int) -> NoReturn:
    from json import JSONDecodeError

    raise JSONDecodeError(message, text, at) from None


def decoder(
    *, object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
    parse_int: Callable[[str], Any] | None = None, parse_constant: Callable[[str], Any] | None = None,
) -> Callable[[str], Any]:  # fmt: skip
    """`json.JSONDecoder(...).decode`: a whole text holding one JSON value, white space around it allowed."""
    if _json is None:  # pragma: no cover
        import json

        made = json.JSONDecoder(object_pairs_hook=object_pairs_hook, parse_int=parse_int, parse_constant=parse_constant)
        return made.decode
    scan = _json.make_scanner(_Options(object_pairs_hook, parse_int, parse_constant))  # type: ignore[arg-type]

    def decode(text: str) -> Any:
        at = len(text) - len(text.lstrip(_BLANK)) if text[:1] in _BLANK else 0
        try:
            value, end = scan(text, at)
        except StopIteration as stop:
            _error("Expecting value", text, stop.value)
        except SystemError:  # Python 3.10-3.11: the scanner finds json's error class only if json.decoder is loaded
            import json.decoder  # noqa: F401  # (then the same scan raises json's own JSONDecodeError)

            value, end = scan(text, at)
        if end != len(text):
            rest = text[end:]
            end += len(rest) - len(rest.lstrip(_BLANK))
            if end != len(text):
                _error("Extra data", text, end)
        return value

    return decode


_plain = decoder()


def loads(
    text: str | bytes | bytearray, *, object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
    parse_int: Callable[[str], Any] | None = None, parse_constant: Callable[[str], Any] | None = None,
) -> Any:  # fmt: skip
    """`json.loads(text, ...)`: a `str` read here (one starting with a byte-order mark is refused, as there), and
    bytes that `json` would read as UTF-8 (no byte-order mark, no NUL in the first two bytes: its encoding sniff);
    anything else is handed to `json.loads` (other encodings, other types, which it refuses)."""
    if isinstance(text, (bytes, bytearray)) and _plain_utf8(text):
        text = text.decode("utf-8", "surrogatepass")  # what json.loads does with such bytes
    if not isinstance(text, str):
        import json

        return json.loads(text, object_pairs_hook=object_pairs_hook, parse_int=parse_int, parse_constant=parse_constant)
    if text.startswith("\ufeff"):
        _error("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    if object_pairs_hook is None and parse_int is None and parse_constant is None:
        return _plain(text)
    return decoder(object_pairs_hook=object_pairs_hook, parse_int=parse_int, parse_constant=parse_constant)(text)


def _plain_utf8(data: bytes | bytearray) -> bool:
    """Whether `json.detect_encoding` calls these bytes UTF-8 without a byte-order mark (checked without it)."""
    return len(data) >= 2 and bool(data[0]) and bool(data[1]) and not data.startswith((b"\xff\xfe", b"\xfe\xff",
                                                                                      b"\xef\xbb\xbf"))  # fmt: skip


def _no_form(value: Any) -> NoReturn:
    """json.JSONEncoder.default: a value of a type JSON has no form for."""
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def encoder(
    *, ensure_ascii: bool = True, separators: tuple[str, str] | None = None, sort_keys: bool = False,
    check_circular: bool = True,
) -> Callable[[Any], str]:  # fmt: skip
    """`json.JSONEncoder(...).encode`, without `indent` or `default`."""
    if _json is None:  # pragma: no cover
        import json

        return json.JSONEncoder(ensure_ascii=ensure_ascii, separators=separators, sort_keys=sort_keys,
                                check_circular=check_circular).encode  # fmt: skip
    item, key = separators if separators is not None else (", ", ": ")
    string = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring
    shared = None if check_circular else _json.make_encoder(None, _no_form, string, None, key, item, sort_keys,
                                                            False, True)  # fmt: skip

    def encode(value: Any) -> str:
        if isinstance(value, str):
            return str(string(value))
        # a circular check keeps its markers in a dict of its own, as each JSONEncoder.iterencode makes one
        made = shared or _json.make_encoder({}, _no_form, string, None, key, item, sort_keys, False, True)
        return "".join(made(value, 0))

    return encode


_ENCODERS: dict[tuple[bool, tuple[str, str] | None, bool], Callable[[Any], str]] = {}


def dumps(value: Any, *, ensure_ascii: bool = True, separators: tuple[str, str] | None = None,
          sort_keys: bool = False) -> str:  # fmt: skip
    """`json.dumps(value, ...)` without `indent` (that one is `json`'s pure-Python encoder: call `json.dumps`)."""
    options = (ensure_ascii, separators, sort_keys)
    encode = _ENCODERS.get(options)
    if encode is None:
        encode = _ENCODERS[options] = encoder(ensure_ascii=ensure_ascii, separators=separators, sort_keys=sort_keys)
    return encode(value)
