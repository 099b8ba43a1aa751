"""What a person typed, told apart from what harnesses inject, end to end on copies of real corpus sessions."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import Runner, shared_path

# Claude Code 2.1.29: inside the range (2.1.19-2.1.37) that stores text typed mid-turn beside tool results.
CLAUDE = "entire-00-c9e2351016-0.jsonl"
GEMINI = "agenthistory-gemini-session.json"


def variant(source: Path, target: Path, edit: Callable[[list[Any]], None]) -> Path:
    """A copy of a JSONL session with `edit` applied to its decoded records; untouched lines keep their bytes."""
    raw = source.read_bytes().splitlines()
    records = [json.loads(line) for line in raw]
    kept = {id(record): (line, json.dumps(record, sort_keys=True)) for record, line in zip(records, raw, strict=True)}
    edit(records)
    lines = []
    for record in records:
        old = kept.get(id(record))
        same = old is not None and json.dumps(record, sort_keys=True) == old[1]
        lines.append(old[0] if old and same else json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode())
    target.write_bytes(b"\n".join(lines) + b"\n")
    return target


def turns(wp: Runner, path: Path, *args: str) -> dict[str, Any]:
    reply = wp("turns", "--transcript", str(path), *args, "--format", "json")
    assert reply.code == 0, reply.stdout + reply.stderr
    return dict(reply.json)


def user_record(records: list[Any], line: int) -> dict[str, Any]:
    record = records[line - 1]
    assert record["type"] == "user", record
    return dict(record)


# ---------------------------------------------------------------- Claude Code


def test_text_typed_while_the_agent_works_is_the_persons_words(wp: Runner, tmp_path: Path) -> None:
    typed = "and remember to use pagination"
    uuids = []

    def edit(records: list[Any]) -> None:
        record = user_record(records, 120)  # a tool result, as 2.1.29 writes them
        assert [b["type"] for b in record["message"]["content"]] == ["tool_result"]
        record["message"]["content"].append({"type": "text", "text": typed})
        uuids.append(record["uuid"])

    path = variant(shared_path("corpus", "claude-code", CLAUDE), tmp_path / "s.jsonl", edit)
    reply = turns(wp, path)
    found = [(t["id"], t["kind"], t["position"]) for t in reply["turns"] if t["text"] == typed]
    assert found == [(f"{uuids[0]}#1", "queued_prompt", 120)]
    original = turns(wp, shared_path("corpus", "claude-code", CLAUDE))
    assert [t["text"] for t in reply["turns"] if t["text"] != typed] == [t["text"] for t in original["turns"]]


def test_agent_notifications_are_harness_notices(wp: Runner, tmp_path: Path) -> None:
    notice = "<agent-notification>\n<agent-id>a3f</agent-id>\n<status>completed</status>\n</agent-notification>"
    queued = "<agent-notification>\n<agent-id>b71</agent-id>\n<status>failed</status>\n</agent-notification>"

    def edit(records: list[Any]) -> None:
        record = user_record(records, 159)  # the typed prompt "1"
        record["message"]["content"] = notice
        records[158] = record
        stamp = record["timestamp"]
        records[160:160] = [
            {"type": "queue-operation", "operation": "enqueue", "timestamp": stamp, "content": queued,
             "sessionId": record["sessionId"]},
            {"type": "queue-operation", "operation": "remove", "timestamp": stamp, "sessionId": record["sessionId"]},
        ]  # fmt: skip

    path = variant(shared_path("corpus", "claude-code", CLAUDE), tmp_path / "s.jsonl", edit)
    mine = turns(wp, path)
    assert not [t for t in mine["turns"] if "agent-notification" in t["text"]]
    every = turns(wp, path, "--all")
    kinds = {t["text"]: t["kind"] for t in every["turns"] if "agent-notification" in t["text"]}
    assert kinds == {notice: "system", queued: "system"}


def test_an_accepted_plan_is_its_own_kind(wp: Runner, tmp_path: Path) -> None:
    plan = "# Plan: paginate `entire explain`\n\n1. Add --limit.\n2. Page the checkpoint list.\n"

    def edit(records: list[Any]) -> None:
        record = dict(user_record(records, 541))  # "push and draft PR please"
        record.update(uuid="0c9d6b8e-plan-4f00-9d2e-2a1f00000001", planContent=plan,
                      message={"role": "user", "content": f"Implement the following plan:\n\n{plan}"})  # fmt: skip
        records.insert(541, record)

    path = variant(shared_path("corpus", "claude-code", CLAUDE), tmp_path / "s.jsonl", edit)
    mine = turns(wp, path)
    assert not [t for t in mine["turns"] if "Implement the following plan" in t["text"]]
    planned = turns(wp, path, "--kind", "plan")
    assert [(t["id"], t["text"]) for t in planned["turns"]] == [
        ("0c9d6b8e-plan-4f00-9d2e-2a1f00000001", f"Implement the following plan:\n\n{plan}")
    ]
    assert planned["kinds"]["plan"] == 1


def test_a_session_opened_by_an_accepted_plan_names_no_plan_as_its_first_prompt(tmp_path: Path) -> None:
    from wheypoint.transcripts import claude

    plan = "# Plan\n\n1. Do it.\n"

    def edit(records: list[Any]) -> None:
        first = user_record(records, 4)
        first["planContent"] = plan
        first["message"]["content"] = f"Implement the following plan:\n\n{plan}"
        records[3] = first

    path = variant(shared_path("corpus", "claude-code", CLAUDE), tmp_path / "s.jsonl", edit)
    info = claude.describe(path)
    second = json.loads(path.read_bytes().splitlines()[70])["message"]["content"]  # the next typed prompt
    assert info is not None and info.first_prompt == second and second.startswith("ah, we didn't")


# ---------------------------------------------------------------- Gemini CLI


def gemini_copy(tmp_path: Path, name: str, edit: Callable[[dict[str, Any]], None] | None = None) -> Path:
    """The corpus's single-JSON Gemini session, pretty-printed as the CLI writes it, under `name`."""
    source = shared_path("corpus", "gemini", GEMINI)
    target = tmp_path / ".gemini" / "tmp" / "proj" / "chats" / name
    target.parent.mkdir(parents=True)
    if edit is None:
        shutil.copyfile(source, target)
    else:
        document = json.loads(source.read_bytes())
        edit(document)
        target.write_text(json.dumps(document, indent=2, ensure_ascii=False), encoding="utf-8")
    return target


def test_a_gemini_json_session_under_a_jsonl_name_is_read_from_its_content(wp: Runner, tmp_path: Path) -> None:
    right = turns(wp, gemini_copy(tmp_path / "a", "session-2026-06-05T04-59-dcbe78d3.json"), "--all")
    wrong = gemini_copy(tmp_path / "b", "session-2026-06-05T04-59-dcbe78d3.jsonl")
    for args in ([], ["--harness", "gemini"]):
        reply = turns(wp, wrong, "--all", *args)
        assert reply["harness"] == "gemini" and reply["session_id"] == "dcbe78d3-ea75-4786-929e-d6cff0fc00ed"
        assert reply["turns"] == right["turns"] and reply["count"] == right["count"] == 3
        assert reply["stats"]["malformed"] == 0


def test_gemini_continuations_are_not_prompts_and_expansions_are_kept(wp: Runner, tmp_path: Path) -> None:
    expansion = "You are an AI agent that brings the power of Gemini directly into the terminal. Analyze the project..."

    def edit(document: dict[str, Any]) -> None:
        first, reply = document["messages"]
        stamp = reply["timestamp"]
        document["messages"] += [
            {"id": "m-continue", "timestamp": stamp, "type": "user", "content": [{"text": "System: Please continue."}]},
            {"id": "m-next", "timestamp": stamp, "type": "user", "content": [{"text": "Please continue."}],
             "displayContent": first["content"]},
            {"id": "m-init", "timestamp": stamp, "type": "user", "content": [{"text": expansion}],
             "displayContent": [{"text": "/init"}]},
            {"id": "m-typed", "timestamp": stamp, "type": "user", "content": [{"text": "Please continue."}]},
        ]  # fmt: skip

    path = gemini_copy(tmp_path, "session-2026-06-05T04-59-dcbe78d3.json", edit)
    mine = turns(wp, path)
    assert [(t["id"], t["kind"], t["text"]) for t in mine["turns"]] == [
        ("c6130ba5-57dd-441c-ae71-046c4e76f006", "prompt", "[REDACTED_PROMPT]"),
        ("m-init", "slash_command", "/init"),
        ("m-typed", "prompt", "Please continue."),  # typed by the person: no displayContent beside it
    ]
    every = {t["id"]: (t["kind"], t["text"]) for t in turns(wp, path, "--all")["turns"]}
    assert every["m-continue"] == ("meta", "System: Please continue.")
    assert every["m-next"] == ("meta", "Please continue.")
    assert every["m-init#2"] == ("meta", expansion)


# ---------------------------------------------------------------- OpenCode


def test_an_opencode_database_lists_its_sessions(wp: Runner, tmp_path: Path) -> None:
    from test_transcripts_opencode import MAIN, OTHER, build_db

    db = build_db(tmp_path / "opencode.db", MAIN, OTHER)
    for args in ([], ["--harness", "opencode"]):
        refused = wp("turns", "--transcript", str(db), *args, "--format", "json")
        assert refused.code == 1, refused.stdout
        error = refused.json["error"]
        assert error["code"] == "session-required"
        assert [(c["harness"], c["session_id"], c["path"]) for c in error["candidates"]] == [
            ("opencode", OTHER["id"], str(db)), ("opencode", MAIN["id"], str(db)),
        ]  # fmt: skip
        assert error["candidates"][1]["first_prompt"] == "Fix the login bug\n  keep the public API stable  \n"
        latest = turns(wp, db, "--latest", *args)
        assert latest["session_id"] == OTHER["id"]  # the one updated last
