"""Damaged transcripts: every reader answers with counted bad lines or a coded refusal, never an exception."""

from __future__ import annotations

import json
import random
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, Runner, shared_path

CLAUDE = "entire-00-c9e2351016-0.jsonl"
CODEX = "localpush-rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"


def fuzz_engine() -> Any:
    """bench/transcript_fuzz.py, whose mutations and verdicts the bounded run here shares with the long one."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import transcript_fuzz
    finally:
        sys.path.remove(str(ROOT / "bench"))
    return transcript_fuzz


def corpus(harness: str, name: str) -> Path:
    return shared_path("corpus", harness, name)


def gemini_jsonl(target: Path) -> Path:
    """The corpus's Gemini session in the JSONL form: its metadata record, then one record per message."""
    document = json.loads(corpus("gemini", "agenthistory-gemini-session.json").read_bytes())
    lines = [{k: v for k, v in document.items() if k != "messages"}, *document["messages"]]
    target.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return target


def rewrite(source: Path, target: Path, change: dict[int, bytes]) -> Path:
    """A copy of a JSONL file with the lines numbered in `change` (1-based) replaced by the given bytes."""
    lines = source.read_bytes().splitlines()
    for number, line in change.items():
        lines[number - 1] = line
    target.write_bytes(b"\n".join(lines) + b"\n")
    return target


def edited(source: Path, number: int, edit: Any) -> bytes:
    record = json.loads(source.read_bytes().splitlines()[number - 1])
    edit(record)
    return json.dumps(record, ensure_ascii=False).encode("utf-8", "surrogatepass")


def turns(wp: Runner, path: Path, *args: str) -> dict[str, Any]:
    reply = wp("turns", "--transcript", str(path), *args, "--format", "json")
    assert reply.code == 0, reply.stdout + reply.stderr
    return dict(reply.json)


def agent_lines(path: Path, harness: str, count: int) -> list[int]:
    """Line numbers of records that hold none of the user's turns (so damaging them must cost the user nothing)."""
    found = []
    for number, line in enumerate(path.read_bytes().splitlines(), 1):
        record = json.loads(line)
        if harness == "claude-code" and record.get("type") == "assistant":
            found.append(number)
        elif harness == "codex" and record.get("type") == "response_item" and number > 1:
            if record["payload"].get("type") in ("function_call", "reasoning"):
                found.append(number)
        elif harness == "gemini" and record.get("type") == "gemini":
            found.append(number)
    return found[:count]


# ---------------------------------------------------------------- one bad record is one counted bad line


SOURCES = [("claude-code", CLAUDE), ("codex", CODEX), ("gemini", "jsonl")]


def source_file(harness: str, name: str, tmp_path: Path) -> Path:
    return gemini_jsonl(tmp_path / "session.jsonl") if harness == "gemini" else corpus(harness, name)


@pytest.mark.parametrize(("harness", "name"), SOURCES)
def test_a_record_typed_as_a_list_or_an_object_is_one_bad_line(
    wp: Runner, tmp_path: Path, harness: str, name: str
) -> None:
    source = source_file(harness, name, tmp_path)
    lines = agent_lines(source, harness, 2)
    swaps: list[Any] = [["user"], {"type": "user"}]
    change = {n: edited(source, n, lambda r, v=swaps[i]: r.__setitem__("type", v)) for i, n in enumerate(lines)}
    damaged = rewrite(source, tmp_path / f"damaged{source.suffix}", change)
    assert turns(wp, damaged)["turns"] == turns(wp, source)["turns"]  # the user's words all survive
    before, after = turns(wp, source, "--all"), turns(wp, damaged, "--all")  # every line decoded
    assert after["stats"]["malformed"] == before["stats"]["malformed"] + len(lines)


@pytest.mark.parametrize("raw", [False, True], ids=["escaped", "raw-bytes"])
@pytest.mark.parametrize(("harness", "name"), SOURCES)
def test_a_lone_surrogate_is_one_bad_line(wp: Runner, tmp_path: Path, harness: str, name: str, raw: bool) -> None:
    source = source_file(harness, name, tmp_path)
    (line,) = agent_lines(source, harness, 1)
    record = json.loads(source.read_bytes().splitlines()[line - 1])
    record["timestamp"] = "2026-02-03T04:33:55.743Z\ud800"  # a lone surrogate: valid JSON, no Unicode text
    text = json.dumps(record, ensure_ascii=not raw)
    damaged = rewrite(source, tmp_path / f"damaged{source.suffix}", {line: text.encode("utf-8", "surrogatepass")})
    assert turns(wp, damaged)["turns"] == turns(wp, source)["turns"]
    before, after = turns(wp, source, "--all"), turns(wp, damaged, "--all")
    assert after["stats"]["invalid_utf8"] == before["stats"]["invalid_utf8"] + 1


def test_a_lone_surrogate_in_a_single_json_gemini_session_costs_one_message(wp: Runner, tmp_path: Path) -> None:
    document = json.loads(corpus("gemini", "agenthistory-gemini-session.json").read_bytes())
    document["messages"][1]["content"] += "\udc00"
    path = tmp_path / "session-2026-06-05T04-59-dcbe78d3.json"
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")  # ensure_ascii: written as `\udc00`
    every = turns(wp, path, "--all")
    assert [t["text"] for t in every["turns"]] == ["[REDACTED_PROMPT]"]
    assert every["stats"]["invalid_utf8"] == 1


def test_bad_text_in_an_opencode_database_costs_one_part(wp: Runner, tmp_path: Path) -> None:
    from test_transcripts_opencode import MAIN, build_db

    db = build_db(tmp_path / "opencode.db", MAIN)
    before = turns(wp, db, "--all")
    conn = sqlite3.connect(db)
    conn.execute("UPDATE part SET data = ? WHERE id = 'prt_002b'", ('{"type":"reasoning","text":"a\\ud800"}',))
    conn.execute("UPDATE part SET data = CAST(? AS TEXT) WHERE id = 'prt_002f'", (b'{"type":"text","text":"\xff"}',))
    conn.commit()
    conn.close()
    after = turns(wp, db, "--all")
    lost = ("prt_002b", "prt_002f")
    assert [t["id"] for t in after["turns"]] == [t["id"] for t in before["turns"] if t["id"] not in lost]
    assert after["stats"]["invalid_utf8"] == 2


@pytest.mark.parametrize(("harness", "name"), [("claude-code", CLAUDE), ("codex", CODEX)])
def test_two_records_on_one_line_are_both_read(wp: Runner, tmp_path: Path, harness: str, name: str) -> None:
    source = corpus(harness, name)
    lines = source.read_bytes().splitlines()
    merged = b""
    for number, line in enumerate(lines, 1):
        merged += line + (b"" if number % 5 == 0 and number < len(lines) else b"\n")  # every fifth newline lost
    damaged = tmp_path / "merged.jsonl"
    damaged.write_bytes(merged)
    before, after = turns(wp, source, "--all"), turns(wp, damaged, "--all")
    assert after["stats"]["malformed"] == 0 and after["stats"]["records"] == before["stats"]["records"]
    assert [(t["kind"], t["text"]) for t in after["turns"]] == [(t["kind"], t["text"]) for t in before["turns"]]
    assert len({t["id"] for t in after["turns"]}) == len(after["turns"])  # ids stay unique
    mine = turns(wp, damaged)
    assert [t["text"] for t in mine["turns"]] == [t["text"] for t in turns(wp, source)["turns"]]


# ---------------------------------------------------------------- the seeded mutation run, bounded


def test_seeded_mutations_never_raise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bench/transcript_fuzz.py's engine for a few rounds (the long run, 100,000 records, is the bench's)."""
    engine = fuzz_engine()
    shared_path("corpus")
    monkeypatch.setenv("WHEYPOINT_HOME", str(tmp_path / "home"))
    failures: list[str] = []
    verdicts: dict[str, int] = {}

    def check(verdict: str, detail: str, label: str, argv: list[str]) -> None:
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
        if verdict in ("traceback", "internal-error"):
            failures.append(f"{label} {argv}: {verdict}: {detail}")

    started = time.monotonic()
    rng = random.Random(20261201)
    made = 0
    while made < 3000 and (made == 0 or time.monotonic() - started < 8):
        made += sum(engine.fuzz_round(tmp_path, rng, 0.2, check).values())
    assert not failures, failures[:3]
    assert made >= 1000 and verdicts.get("ok", 0) > 0, (made, verdicts)
