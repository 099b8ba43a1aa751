"""Canonical JSON: RFC 8785 ordering and escaping, refusals, and round trips (Hypothesis)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wheypoint.model.canonical import (
    CanonicalError,
    canonical_bytes,
    canonical_text,
    digest,
    lone_surrogate,
    safe_integer,
    short_hash,
)


def test_keys_sort_by_utf16_code_units_as_rfc8785_shows() -> None:
    # The RFC's own sorting example: U+1F600 is a surrogate pair (D83D DE00), so it sorts before U+FB33,
    # although its code point is larger. Sorting by code point would get this wrong.
    keys = ["\u20ac", "\r", "\ufb33", "1", "\U0001f600", "\u0080", "\u00f6"]
    text = canonical_text(dict.fromkeys(keys, 0))
    order = list(json.loads(text))
    assert order == ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]


def test_escapes_only_what_rfc8785_escapes() -> None:
    assert canonical_text('"\\\b\f\n\r\t') == '"\\"\\\\\\b\\f\\n\\r\\t"'
    assert canonical_text("\x0f\x1f") == '"\\u000f\\u001f"'
    assert canonical_text("\x7f é € 😀") == '"\x7f é € 😀"'
    assert canonical_text("</script>") == '"</script>"'


def test_structure_has_no_white_space() -> None:
    value = {"b": [1, True, None, {"z": "x", "a": False}], "a": -5}
    assert canonical_text(value) == '{"a":-5,"b":[1,true,null,{"a":false,"z":"x"}]}'


@pytest.mark.parametrize("bad", [1.5, float("nan"), 2**53, {"k": {1, 2}}, "\ud800", {1: "x"}])
def test_values_without_a_canonical_form_are_refused(bad: Any) -> None:
    with pytest.raises(CanonicalError):
        canonical_text(bad)


def test_digest_is_sha256_of_the_canonical_bytes() -> None:
    value = {"work": "a", "n": 1}
    assert digest(value) == "sha256:" + hashlib.sha256(b'{"n":1,"work":"a"}').hexdigest()
    assert short_hash(value, 8) == digest(value)[7:15]


_text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=20)
_json = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1) | _text,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_text, inner, max_size=5),
    max_leaves=30,
)


@given(_json)
def test_round_trip_and_idempotence(value: Any) -> None:
    text = canonical_text(value)
    parsed = json.loads(text)
    assert parsed == value
    assert canonical_text(parsed) == text
    assert canonical_bytes(value) == text.encode("utf-8")


@given(st.dictionaries(_text, st.integers(min_value=0, max_value=9), min_size=2, max_size=8), st.randoms())
def test_key_insertion_order_does_not_matter(value: dict[str, int], rnd: Any) -> None:
    items = list(value.items())
    rnd.shuffle(items)
    assert canonical_text(dict(items)) == canonical_text(value)


def _rfc8785_string(value: str) -> str:
    """RFC 8785's string rule written out character by character, to check the fast encoder against."""
    short = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    out = []
    for ch in value:
        out.append(short.get(ch) or (f"\\u{ord(ch):04x}" if ord(ch) < 0x20 else ch))
    return '"' + "".join(out) + '"'


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",))))
def test_strings_escape_exactly_as_rfc8785_says(text: str) -> None:
    assert canonical_text(text) == _rfc8785_string(text)


@pytest.mark.parametrize("lone", ["\ud800", "a\udfffb", "\udc00"])
def test_a_lone_surrogate_anywhere_is_refused(lone: str) -> None:
    with pytest.raises(CanonicalError):
        canonical_text({"k": lone})


@pytest.mark.parametrize("edge", [2**53 - 1, -(2**53 - 1), 0])
def test_integers_up_to_the_safe_limit_are_accepted(edge: int) -> None:
    # The refused side (2**53) is above; this is the accepted side of the same boundary, on both signs.
    assert canonical_text({"n": edge}) == '{"n":' + str(edge) + "}"


def test_an_integer_just_past_the_safe_limit_is_refused_on_both_signs() -> None:
    for bad in (2**53, -(2**53)):
        with pytest.raises(CanonicalError, match="safe range"):
            canonical_text([bad])


@pytest.mark.parametrize("char", ["\ud7ff", "\ue000", "\uffff", "\U0010ffff"])
def test_the_code_points_beside_the_surrogate_block_are_accepted(char: str) -> None:
    # U+D7FF and U+E000 border U+D800-U+DFFF, which alone is refused: they are ordinary characters, kept as is.
    assert canonical_bytes(char) == b'"' + char.encode("utf-8") + b'"'
    assert canonical_text({char: char}) == '{"' + char + '":"' + char + '"}'


def test_a_short_hash_is_twelve_hex_digits_unless_told() -> None:
    value = {"work": "a"}
    assert short_hash(value) == digest(value)[7:19] and len(short_hash(value, 16)) == 16


@pytest.mark.parametrize(
    ("digits", "value"),
    [("9007199254740991", 2**53 - 1), ("-9007199254740991", -(2**53 - 1)), ("0", 0), ("-0", 0),
     ("0009007199254740991", None),  # more digits than the limit has: refused before converting, even if small
     ("9007199254740992", None), ("-9007199254740992", None), ("9" * 5000, None)],
)  # fmt: skip
def test_a_json_integer_is_safe_up_to_the_limit_judged_before_converting(digits: str, value: int | None) -> None:
    assert safe_integer(digits) == value


@pytest.mark.parametrize(
    ("document", "found"),
    [({"a": ["ok", "x\ud800"]}, ("$[\"a\"][1]", "U+D800")),
     ({"ok": 1, "k\udfff": "v"}, ("$[\"k\\udfff\"]", "U+DFFF")),  # a key: its path is printed escaped
     ({"a": {"b": "\udc00"}}, ("$[\"a\"][\"b\"]", "U+DC00")),
     ("\ud83d", ("$", "U+D83D")),
     ({"a": ["é", "\ud7ff\ue000", "😀"], "n": 1}, None), ([], None), ("ascii", None)],
)  # fmt: skip
def test_a_lone_surrogate_is_found_with_its_path(document: Any, found: tuple[str, str] | None) -> None:
    assert lone_surrogate(document) == found
