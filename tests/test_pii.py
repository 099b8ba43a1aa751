"""Personal data (model/pii.py): card numbers, US social security numbers and phone numbers are refused like
credentials, or redacted where a meat turn asks for it and in the PreCompact rescue.

Every value is generated here from a fixed seed (a card number gets its Luhn digit computed), so nothing that
could be a person's is stored in the repository. The near-misses are the digit runs real prompts and code are
full of: versions, dates, times, addresses, ids, hashes, sums.
"""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest

from conftest import Runner, shared_path
from test_rescue_incremental import Scene
from wheypoint.model.credentials import redact_spans as redact_credentials
from wheypoint.model.pii import luhn_valid, redact_spans, scan_pii
from wheypoint.model.rules import secret_problem

RNG = random.Random(2112)
# (prefix, length, grouping) of each network the scan knows; the rest of each number is drawn at random.
NETWORKS = [("4", 16, (4, 4, 4, 4)), ("4", 13, ()), ("4", 19, (4, 4, 4, 4, 3)), ("53", 16, (4, 4, 4, 4)),
            ("2720", 16, (4, 4, 4, 4)), ("37", 15, (4, 6, 5)), ("34", 15, ()), ("6011", 16, (4, 4, 4, 4)),
            ("65", 16, ()), ("3530", 16, (4, 4, 4, 4)), ("36", 14, (4, 6, 4)), ("62", 19, ()),
            ("2201", 16, (4, 4, 4, 4))]  # fmt: skip


def luhn_digit(partial: str) -> str:
    """The check digit that makes `partial` + it Luhn-valid."""
    return next(d for d in "0123456789" if luhn_valid(partial + d))


def card(prefix: str, length: int, rng: random.Random) -> str:
    body = prefix + "".join(rng.choice("0123456789") for _ in range(length - len(prefix) - 1))
    return body + luhn_digit(body)


def grouped(digits: str, groups: tuple[int, ...], separator: str) -> str:
    if not groups:
        return digits
    parts, at = [], 0
    for size in groups:
        parts.append(digits[at : at + size])
        at += size
    return separator.join(parts)


def ssn(rng: random.Random) -> tuple[str, str, str]:
    area = rng.choice([n for n in range(1, 900) if n != 666])
    return f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"


def phones(rng: random.Random) -> list[str]:
    """Phone numbers in the written forms the scan takes; the 555 exchange is avoided (its 01xx lines are fiction)."""
    area, exchange, line = rng.randint(201, 989), rng.randint(201, 989), f"{rng.randint(0, 9999):04d}"
    if area % 100 == 11:
        area += 1
    if exchange % 100 == 11 or exchange == 555:
        exchange += 1
    return [f"+1 {area} {exchange} {line}", f"+1{area}{exchange}{line}", f"({area}) {exchange}-{line}",
            f"{area}-{exchange}-{line}", f"{area}.{exchange}.{line}", f"1-{area}-{exchange}-{line}",
            f"+44 20 {rng.randint(7000, 8999)} {rng.randint(1000, 9999)}",
            f"+49 (0)30 {rng.randint(1000000, 9999999)}",
            "+33 6 " + " ".join(str(rng.randint(10, 99)) for _ in range(4))]  # fmt: skip


SENTENCES = ("Please charge {v} for the renewal.", "my card is {v}, exp 09/29", "use `{v}` in the form",
             "The customer (card {v}) called twice.", "{v}\nthat's the one on file", "- billing: {v}")  # fmt: skip


def found(text: str) -> list[tuple[str, str]]:
    return [(hit.rule, text[hit.start : hit.end]) for hit in scan_pii(text)]


def test_a_luhn_valid_card_number_of_a_known_network_is_found_in_any_usual_layout() -> None:
    rng = random.Random(7)
    for prefix, length, groups in NETWORKS:
        for _ in range(20):
            number = card(prefix, length, rng)
            for layout in {number, grouped(number, groups, " "), grouped(number, groups, "-")}:
                text = rng.choice(SENTENCES).format(v=layout)
                assert found(text) == [("pii-card-number", layout)], text


def test_a_card_number_that_fails_luhn_or_no_network_issues_is_not_one() -> None:
    rng = random.Random(8)
    for prefix, length, groups in NETWORKS:
        number = card(prefix, length, rng)
        wrong = number[:-1] + str((int(number[-1]) + 1) % 10)
        assert found(f"card {grouped(wrong, groups, ' ')}") == []
    for prefix in ("1", "7", "8", "9"):  # no network issues these
        number = card(prefix, 16, rng)
        assert found(f"order {number}") == [] and found(f"order {grouped(number, (4, 4, 4, 4), ' ')}") == []
    number = card("4", 16, rng)
    assert found(f"card {number[:4]} {number[4:8]}-{number[8:12]} {number[12:]}") == []  # mixed separators
    assert found(f"card {number[:3]} {number[3:9]} {number[9:]}") == []  # no card is written 3-6-7
    for test_card in ("4242 4242 4242 4242", "4111111111111111", "5555-5555-5555-4444", "378282246310005"):
        assert found(f"use the test card {test_card}") == []


SSN_SHAPES = ("SSN {a}-{g}-{s}", "her social is {a}-{g}-{s}.", "{a} {g} {s} is on the W-2", "ssn: {a}{g}{s}",
              "Social Security number {a}{g}{s}", "SSN#{a}{g}{s}")  # fmt: skip


def test_a_social_security_number_is_found_dashed_spaced_or_bare_after_its_name() -> None:
    rng = random.Random(9)
    for _ in range(50):
        area, group, serial = ssn(rng)
        shape = rng.choice(SSN_SHAPES)
        text = shape.format(a=area, g=group, s=serial)
        value = text[text.index(area) : text.index(serial, text.index(area) + 3) + 4]
        assert found(text) == [("pii-us-ssn", value)], text


def test_numbers_the_ssa_never_issues_and_bare_nine_digits_are_not_social_security_numbers() -> None:
    for never in ("000-12-3456", "666-12-3456", "912-34-5678", "123-00-4567", "123-45-0000", "078-05-1120",
                  "123-45-6789"):  # fmt: skip
        assert found(f"SSN {never}") == [], never
    assert found("build 482913745 passed") == [] and found("order 482-91-37456") == []


def test_a_phone_number_in_prose_is_found_in_each_written_form() -> None:
    rng = random.Random(10)
    for _ in range(20):
        for number in phones(rng):
            shape = rng.choice(("call me at {v} after six", "My cell: {v}", "({v})", "the office is {v}."))
            text = shape.format(v=number)
            assert found(text) == [("pii-phone-number", number)], text
    for named in ("my phone is 020 {a} {b}", "Mobile: 07{a}{b}", "text me on 0{a} {b}"):
        text = named.format(a=rng.randint(1000, 9999), b=rng.randint(100000, 999999))
        [(rule, value)] = found(text)
        assert rule == "pii-phone-number" and value[0] == "0", text


NEAR_MISSES = (
    "python 3.11.7 and node 20.10.0", "released 2024-11-30, tagged v2.1.42", "at 2026-12-02T05:20:51Z",
    "listen on 127.0.0.1:8080 and 192.168.100.254", "id 123e4567-e89b-12d3-a456-426614174000",
    "sha 4069756ffc0a3e28002a1a0b4e0b39e6ef5b7059", "took 3,456,789 ms (1234567 bytes)", "PR #4821, issue 19302",
    "port 5432, timeout 30000", "x = 1234567890123", "ticket 415-555-0132-77", "call (415) 555-0132 in the story",
    "+1 212 555 0188 on the poster",
    "line 1024 of 65536", "pid 2817 2818 2819 2820", "ISBN 978-3-16-148410-0", "1 << 48 == 281474976710656",
    "amount: 1200.50 USD, ref 20241130-0042", "crc 0x1F2E3D4C5B6A7988", "range 10000000-19999999",
)  # fmt: skip


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_the_digit_runs_of_everyday_prompts_and_code_are_not_personal_data(text: str) -> None:
    assert found(text) == []


def test_redaction_replaces_credentials_and_personal_data_and_says_where_each_marker_stands() -> None:
    rng = random.Random(11)
    number = grouped(card("4", 16, rng), (4, 4, 4, 4), " ")
    token = "ghp_" + "".join(rng.choice("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(36))
    phone = phones(rng)[3]
    text = f"Card {number}; deploy key {token}. Call {phone} if it fails."
    assert redact_credentials(text)[1] and scan_pii(text)  # each kind is there
    kept, spans = redact_spans(text)
    marks = ("[redacted pii-card-number]", "[redacted github-pat]", "[redacted pii-phone-number]")
    assert kept == "Card {}; deploy key {}. Call {} if it fails.".format(*marks)
    assert [s["rule"] for s in spans] == ["pii-card-number", "github-pat", "pii-phone-number"]
    assert all(kept[s["start"] : s["end"]] == f"[redacted {s['rule']}]" for s in spans)
    assert redact_spans("nothing here") == ("nothing here", [])


def test_intake_names_the_rule_and_never_the_value() -> None:
    number = grouped(card("53", 16, random.Random(12)), (4, 4, 4, 4), "-")
    problem = secret_problem("$.notes", f"Refund {number} today.")
    assert problem is not None and problem.code == "pii-found" and "pii-card-number" in problem.message
    assert number not in problem.message and secret_problem("$.notes", "Refund the order today.") is None


def test_checkpoint_refuses_personal_data_in_typed_text(wp: Runner, tmp_path: Path) -> None:
    area, group, serial = ssn(random.Random(13))
    value = f"{area}-{group}-{serial}"
    refused = wp("checkpoint", "payroll", "--orientation", "Payroll import.", "--next", "hold",
                 "--notes", f"The failing row is SSN {value}.", cwd=tmp_path)  # fmt: skip
    assert refused.code == 1 and refused.json["error"]["code"] == "invalid-intent", refused.stdout
    assert [(p["code"], p["path"]) for p in refused.json["error"]["problems"]] == [("pii-found", "$.notes")]
    assert value not in refused.stdout and value not in refused.stderr


def test_a_meat_turn_with_personal_data_is_refused_unless_redacted(wp: Runner, tmp_path: Path) -> None:
    scene = Scene(tmp_path)
    phone = phones(random.Random(14))[2]
    scene.append(scene.record("user", f"Never text the on-call phone {phone} before 8am."))
    turn = "00000000-0000-4000-8000-000000000001"
    base = ["checkpoint", "oncall", "--orientation", "On-call rules.", "--next", "hold", "--notes", "N.",
            "--transcript", str(scene.path), "--meat", turn, "--type", "constraint"]  # fmt: skip
    refused = wp(*base, cwd=scene.repo)
    assert refused.code == 1 and [p["code"] for p in refused.json["error"]["problems"]] == ["pii-found"]
    assert phone not in refused.stdout
    assert wp(*base, "--redact", cwd=scene.repo).code == 0
    [item] = wp("show", "oncall", cwd=scene.repo).json["record"]["meat"]
    assert item["text"] == "Never text the on-call phone [redacted pii-phone-number] before 8am."
    assert [s["rule"] for s in item["redacted"]] == ["pii-phone-number"]


def test_the_rescue_keeps_a_turn_with_personal_data_redacted(tmp_path: Path) -> None:
    scene = Scene(tmp_path)
    number = grouped(card("37", 15, random.Random(15)), (4, 6, 5), " ")
    scene.append(scene.record("user", "First: the refund script."), scene.record("assistant", "On it."),
                 scene.record("user", f"Refund the card {number} first, then the rest."))  # fmt: skip
    scene.hook()
    kept = scene.kept()
    assert kept == ["First: the refund script.", "Refund the card [redacted pii-card-number] first, then the rest."]
    db = sqlite3.connect(scene.home / "store.sqlite3")
    try:
        texts = [text for (text,) in db.execute("SELECT record_json FROM revisions")]
    finally:
        db.close()
    assert texts and all(number not in text for text in texts)
    meat = json.loads(texts[-1])["meat"]
    assert any(s["rule"] == "pii-card-number" for item in meat for s in item.get("redacted", []))


def test_no_prompt_of_the_corpus_is_taken_for_personal_data() -> None:
    """bench/pii_eval.py's first figure as a floor: 0 of the corpus's user turns flagged (the goal is <= 0.1%)."""
    import sys

    shared_path("corpus")
    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "bench"))
    try:
        from credentials_eval import transcripts, user_turns
    finally:
        sys.path.remove(str(root / "bench"))
    prompts = [text for path in transcripts() for text in user_turns(path)]
    assert len(prompts) > 200
    assert [found(text) for text in prompts if scan_pii(text)] == []


def test_a_refusal_that_quotes_its_input_never_echoes_personal_data(wp: Runner, tmp_path: Path) -> None:
    number = grouped(card("4", 16, random.Random(16)), (4, 4, 4, 4), " ")
    for args in (("show", number), ("log", f"card {number}"), ("resolve", number)):
        done = wp(*args, cwd=tmp_path)
        assert number not in done.stdout and number not in done.stderr, done.stdout
        assert "[redacted pii-card-number]" in done.stdout, done.stdout
