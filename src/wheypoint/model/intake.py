"""Reading an intent: bytes to a JSON object, refusing anything malformed with a coded reason."""

from __future__ import annotations

from wheypoint import jsontext
from wheypoint.model.canonical import MAX_SAFE_INTEGER, lone_surrogate, safe_integer
from wheypoint.model.contract import CHECKPOINT_INTENT
from wheypoint.model.errors import Problem, Refusal
from wheypoint.model.rules import RULES
from wheypoint.model.schemacheck import SchemaChecker

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

MAX_INTENT_BYTES = 1024 * 1024


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise Refusal("duplicate-key", f"the key {key!r} appears twice in one object; which one is meant?")
        result[key] = value
    return result


def _no_constants(name: str) -> Any:
    raise Refusal("invalid-json", f"{name} is not JSON")


def strict_loads(text: str) -> Any:
    """JSON as RFC 8259 reads it: a key given twice (`duplicate-key`) and `NaN`, `Infinity`, `-Infinity`
    (`invalid-json`) are refused where Python's reader would keep one value or a float that is not JSON.
    Malformed text raises ValueError, and nesting past the interpreter's limit RecursionError, as json.loads does."""
    return jsontext.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)


def _canonical_int(what: str) -> Callable[[str], int]:
    """An integer reader that refuses what canonical JSON cannot hold, before Python converts a huge one."""

    def read(digits: str) -> int:
        value = safe_integer(digits)
        if value is None:
            raise Refusal("number-out-of-range", f"the {what} holds an integer of {len(digits.lstrip('-'))} digits "
                          f"beyond +-{MAX_SAFE_INTEGER} (2^53-1), the range of canonical JSON (RFC 8785)")  # fmt: skip
        return value

    return read


def parse_json_document(data: bytes, what: str = "intent") -> Any:
    """Decode one JSON document: strict UTF-8, no duplicate keys, no NaN, bounded size."""
    if len(data) > MAX_INTENT_BYTES:
        raise Refusal(f"{what}-too-large", f"the {what} is {len(data)} bytes; the limit is {MAX_INTENT_BYTES}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refusal("invalid-utf8", f"the {what} is not UTF-8 (byte {exc.start})") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        document = jsontext.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants,
                              parse_int=_canonical_int(what))  # fmt: skip
    except jsontext.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise Refusal("invalid-json", f"the {what} is not JSON: {exc.msg} at {where}") from None
    except RecursionError:
        raise Refusal("invalid-json", f"the {what} nests too deeply") from None
    if "\\u" in text:  # a lone surrogate can only come from an escape: the text itself was strict UTF-8
        found = lone_surrogate(document)
        if found:
            raise Refusal("lone-surrogate", f"the {what} holds a lone surrogate {found[1]} at {found[0]}: text is "
                          "Unicode characters, which UTF-8 can encode (I-JSON, RFC 7493)",
                          details={"path": found[0]})  # fmt: skip
    return document


def intent_problems(intent: Any) -> list[Problem]:
    """Every problem with an intent that can be seen without the store, all at once."""
    if not isinstance(intent, dict):
        return [Problem("wrong-type", "$", "an intent is a JSON object")]
    problems = SchemaChecker(CHECKPOINT_INTENT).check(intent)
    shape_ok = not problems
    for rule in RULES:
        try:
            problems += rule(intent)
        except (KeyError, TypeError, AttributeError):
            # Only reachable when the schema already reported the malformed shape this rule tripped on.
            if shape_ok:
                raise
    return problems


def require_valid(intent: Any) -> dict[str, Any]:
    """The intent itself when it is valid, else a refusal listing every problem."""
    problems = intent_problems(intent)
    if problems:
        raise Refusal("invalid-intent", f"the intent has {len(problems)} problem(s)", problems)
    assert isinstance(intent, dict)
    return intent
