"""wheypoint.jsontext answers what `json` answers: the same values, texts and errors, on generated documents."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import ROOT
from wheypoint import jsontext

_SCALARS = (st.none() | st.booleans() | st.integers(min_value=-(10**30), max_value=10**30)
            | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12))  # fmt: skip
_KEYS = st.text(max_size=6)
VALUES = st.recursive(
    _SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4), max_leaves=16
)
_OPTIONS = st.fixed_dictionaries({
    "ensure_ascii": st.booleans(), "sort_keys": st.booleans(),
    "separators": st.sampled_from([None, (",", ":"), (", ", ": ")]),
})  # fmt: skip


def outcome(call: Any, *args: Any, **kwargs: Any) -> tuple[str, Any]:
    """What a call gives: its value (NaN compared as a word), or its error's type, message and position."""
    try:
        value = call(*args, **kwargs)
    except Exception as exc:  # every error is part of what is compared
        return "error", (type(exc), str(exc), getattr(exc, "pos", None))
    return "value", _comparable(value)


def _comparable(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, list):
        return ["list", *map(_comparable, value)]
    if isinstance(value, dict):
        return ["dict", *[(key, _comparable(item)) for key, item in value.items()]]
    return (type(value).__name__, value)


@given(VALUES, _OPTIONS)
@settings(max_examples=300)
def test_a_document_is_written_as_json_writes_it(value: Any, options: dict[str, Any]) -> None:
    assert outcome(jsontext.dumps, value, **options) == outcome(json.dumps, value, **options)


@given(VALUES, _OPTIONS)
@settings(max_examples=300)
def test_a_written_document_reads_back_as_json_reads_it(value: Any, options: dict[str, Any]) -> None:
    text = json.dumps(value, **options)
    assert outcome(jsontext.loads, text) == outcome(json.loads, text)


_DAMAGE = st.sampled_from(["", " ", "\n", "\t\r", "x", "]", "}", ",", ":", '"', "\\", "\ufeff", "nul", "1e", "-",
                           "NaN", "Infinity", "-Infinity", "[", "{", "{}", "[1,]", '{"a":1,"a":2}', "0", "01",
                           '"\\ud800"', '"\x01"', "\u00e9", "  {} x"])  # fmt: skip


@given(VALUES, st.integers(min_value=0, max_value=40), _DAMAGE, st.booleans())
@settings(max_examples=500)
@example(None, 0, "\ufeff", False)
@example(None, 0, "", True)
def test_a_damaged_text_is_refused_as_json_refuses_it(value: Any, at: int, piece: str, cut: bool) -> None:
    text = json.dumps(value)
    at = min(at, len(text))
    damaged = text[:at] + piece + ("" if cut else text[at:])
    assert outcome(jsontext.loads, damaged) == outcome(json.loads, damaged)


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError(f"duplicate key {keys}")
    return dict(pairs)


def _constant(name: str) -> Any:
    raise ValueError(f"{name} refused")


def _integer(digits: str) -> Any:
    if len(digits) > 5:
        raise OverflowError(digits)
    return int(digits)


@given(st.lists(_DAMAGE, max_size=6).map("".join), VALUES)
@settings(max_examples=300)
def test_the_readers_hooks_are_called_as_json_calls_them(noise: str, value: Any) -> None:
    hooks = {"object_pairs_hook": _pairs, "parse_constant": _constant, "parse_int": _integer}
    for text in (json.dumps(value), noise, json.dumps([value, value]) + noise):
        assert outcome(jsontext.loads, text, **hooks) == outcome(json.loads, text, **hooks)
        made = jsontext.decoder(**hooks)
        assert outcome(made, text) == outcome(json.JSONDecoder(**hooks).decode, text)


_ENCODINGS = st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le",
                               "utf-32-be"])  # fmt: skip


@given(VALUES, _ENCODINGS, st.binary(max_size=3), st.booleans())
@settings(max_examples=300)
@example(None, "utf-8", b"\xed\xa0\x80", True)
def test_bytes_are_read_as_json_reads_them(value: Any, encoding: str, noise: bytes, before: bool) -> None:
    data = json.dumps(value, ensure_ascii=False).encode(encoding, "surrogatepass")
    data = noise + data if before else data + noise
    assert outcome(jsontext.loads, data) == outcome(json.loads, data)
    assert outcome(jsontext.loads, bytearray(data)) == outcome(json.loads, bytearray(data))


def test_what_is_neither_text_nor_bytes_is_refused_as_json_refuses_it() -> None:
    for thing in (None, 3, [b"[]"], b"", b"1", b"\x001", b"12"):
        assert outcome(jsontext.loads, thing) == outcome(json.loads, thing)


def test_values_json_has_no_form_for_are_refused_with_its_words() -> None:
    loop: list[Any] = []
    loop.append(loop)
    for value in ({1, 2}, {"a": object()}, [b"x"], loop, {(1, 2): 1}):
        for options in ({}, {"sort_keys": True}):
            assert outcome(jsontext.dumps, value, **options) == outcome(json.dumps, value, **options)
    unchecked = jsontext.encoder(check_circular=False, ensure_ascii=False)
    expected = json.JSONEncoder(check_circular=False, ensure_ascii=False).encode
    for value in ({"b": [1, "\u00e9"], "a": None}, "\u2028", 2**70, -0.0):
        assert unchecked(value) == expected(value)


@pytest.mark.parametrize("name", ["JSONDecodeError"])
def test_the_error_class_is_json_s_own(name: str) -> None:
    assert getattr(jsontext, name) is getattr(json, name)
    with pytest.raises(AttributeError):
        jsontext.nothing_here  # noqa: B018


_FRESH = """
import sys
sys.path.insert(0, sys.argv[1])
from wheypoint import jsontext
assert jsontext.loads(jsontext.dumps({"a": [1, 2.5, None]})) == {"a": [1, 2.5, None]}
print(sorted(m for m in sys.modules if m == "json" or m.startswith("json.")))
for text in sys.argv[2:]:
    try:
        jsontext.loads(text)
    except ValueError as exc:
        print(type(exc).__module__, type(exc).__name__, exc)
"""


def test_reading_and_writing_import_no_json_package_and_its_errors_are_json_s() -> None:
    # In a process where nothing imported json: a damaged text is refused with json's error, not a SystemError.
    damaged = ['{"a": 1', "[1,]", '"\\x"', '{"a" 1}', "", "[] x", "\ufeff[]", '{"a":"\x01"}']
    done = subprocess.run([sys.executable, "-S", "-c", _FRESH, str(ROOT / "src"), *damaged], capture_output=True,
                          text=True, check=True)  # fmt: skip
    lines = done.stdout.splitlines()
    assert lines[0] == "[]", lines
    expected = []
    for text in damaged:
        try:
            json.loads(text)
        except ValueError as exc:
            expected.append(f"{type(exc).__module__} {type(exc).__name__} {exc}")
    assert lines[1:] == expected and len(expected) == len(damaged)
