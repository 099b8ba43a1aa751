"""The Gemini CLI transcript reader: the real single-JSON session, JSONL sessions built here, bad input, discovery."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import shared_path
from wheypoint.transcripts import gemini
from wheypoint.transcripts.lines import MAX_LINE_BYTES
from wheypoint.transcripts.model import ALL_KINDS, ReadStats, SessionInfo, Turn

CORPUS_FILE = "agenthistory-gemini-session.json"
CORPUS_SESSION = "dcbe78d3-ea75-4786-929e-d6cff0fc00ed"
CORPUS_HASH = "d30f91067027d10192e4aed3e7b03fecf08089dd3370f047f14f38b1845c8042"
USER_ID = "c6130ba5-57dd-441c-ae71-046c4e76f006"
GEMINI_ID = "1ad31721-7c1d-448c-808f-a6facc0b2e72"


def corpus() -> Path:
    return shared_path("corpus", "gemini", CORPUS_FILE)


def read(path: Path) -> tuple[list[Turn], ReadStats]:
    stats = ReadStats()
    return list(gemini.read_turns(path, stats)), stats


def kinds(turns: list[Turn]) -> Counter[str]:
    return Counter(turn.kind for turn in turns)


def write_jsonl(path: Path, records: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def meta(session: str = "11111111-2222-3333-4444-555555555555", project: str = "ab" * 32) -> dict[str, Any]:
    return {
        "sessionId": session,
        "projectHash": project,
        "startTime": "2026-01-01T00:00:00.000Z",
        "lastUpdated": "2026-01-01T00:00:00.000Z",
        "kind": "main",
    }


def msg(mid: str, kind: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"id": mid, "timestamp": f"2026-01-01T00:00:{len(mid):02d}.000Z", "type": kind, "content": content, **extra}


def call(cid: str, result: Any = None, **extra: Any) -> dict[str, Any]:
    record = {
        "id": cid,
        "name": "run_shell_command",
        "args": {"command": "ls -la"},
        "status": "executing",
        "timestamp": "2026-01-01T00:01:00.000Z",
    }
    if result is not None:
        record.update(status="success", result=result)
    record.update(extra)
    return record


def response(cid: str, output: str) -> list[dict[str, Any]]:
    return [{"functionResponse": {"id": cid, "name": "run_shell_command", "response": {"output": output}}}]


def session_records() -> list[Any]:
    """A JSONL session as the newer Gemini CLI writes it: rewrites, $set updates and a rewind."""
    return [
        meta(),  # 1
        msg("u1", "user", [{"text": "fix the  build\n"}], displayContent=[{"text": "fix the  build\n"}]),  # 2
        {"$set": {"lastUpdated": "2026-01-01T00:00:02.000Z"}},  # 3
        msg(
            "g1",
            "gemini",
            "",
            thoughts=[{"subject": "Planning", "description": "look at make", "timestamp": "2026-01-01T00:00:03.000Z"}],
            toolCalls=[call("c1")],
            model="gemini-2.5-pro",
        ),  # 4
        {"$set": {"lastUpdated": "2026-01-01T00:00:05.000Z"}},  # 5
        msg(
            "g1",
            "gemini",
            "",
            thoughts=[{"subject": "Planning", "description": "look at make", "timestamp": "2026-01-01T00:00:03.000Z"}],
            toolCalls=[call("c1", response("c1", "total 0\n"))],
            model="gemini-2.5-pro",
            tokens={"input": 1, "output": 2, "total": 3},
        ),  # 6: the same message rewritten (after the $set, as the CLI does) with its tool result
        msg("g2", "gemini", "The build is fixed.", model="gemini-2.5-pro"),  # 7
        msg("i1", "info", "Request cancelled."),  # 8
        msg("u2", "user", "/compress"),  # 9
        msg("u3", "user", "!git status"),  # 10
        msg("u4", "user", "undo that please"),  # 11
        msg("g3", "gemini", "Undoing."),  # 12
        {"$rewindTo": "u4"},  # 13: u4 and g3 leave the visible history
        msg("u5", "user", [{"text": "do it "}, {"text": "differently"}]),  # 14
        {
            "$set": {
                "messages": [
                    msg(
                        "s1", "user", [{"text": "<state_snapshot>\n<overall_goal>x</overall_goal>\n</state_snapshot>"}]
                    ),
                    msg("s2", "gemini", [{"text": "Got it. Thanks for the additional context!"}]),
                    msg("u5", "user", [{"text": "do it differently"}]),
                ],
                "lastUpdated": "2026-01-01T00:00:15.000Z",
            }
        },  # 15
        msg("w1", "warning", "Loop detected"),  # 16
        msg("e1", "error", [{"text": "API Error: quota"}]),  # 17
        {"$set": {"summary": "Fixing the build", "lastUpdated": "2026-01-01T00:00:18.000Z"}},  # 18
    ]


# ---------------------------------------------------------------- the real corpus file


def test_corpus_single_json_session_turns() -> None:
    turns, stats = read(corpus())
    assert kinds(turns) == {"prompt": 1, "thinking": 1, "assistant": 1}
    got = stats.as_json()
    assert {key: got[key] for key in ("records", "malformed", "invalid_utf8", "oversized", "duplicates")} == {
        "records": 2,
        "malformed": 0,
        "invalid_utf8": 0,
        "oversized": 0,
        "duplicates": 0,
    }
    assert not stats.truncated_tail and not stats.unknown
    # lines 8-13: {"id": "c613...", "type": "user", "content": [{"text": "[REDACTED_PROMPT]"}]}: list content -> prompt
    assert turns[0] == Turn(USER_ID, "prompt", "2026-06-05T04:59:42.197Z", "[REDACTED_PROMPT]", 1)
    # lines 18-31: a gemini message: its thoughts[] entry becomes a thinking turn, then its string content
    assert turns[1] == Turn(
        GEMINI_ID, "thinking", "2026-06-05T04:59:44.830Z", "Generating Specific Response\n\n[REDACTED_THOUGHT]", 2
    )
    assert turns[2] == Turn(GEMINI_ID + "#2", "assistant", "2026-06-05T04:59:44.839Z", "[REDACTED_ASSISTANT_TEXT]", 2)
    assert all(turn.kind in ALL_KINDS for turn in turns)


def test_corpus_describe() -> None:
    info = gemini.describe(corpus())
    assert info == SessionInfo(
        "gemini", CORPUS_SESSION, str(corpus()), None, "2026-06-05T04:59:44.839Z", "[REDACTED_PROMPT]"
    )


def test_corpus_ids_stable_after_rewrite_with_more_messages(tmp_path: Path) -> None:
    """The single-JSON form grows by being rewritten whole: earlier turns keep their ids and positions."""
    first, _ = read(corpus())
    assert first == read(corpus())[0]
    document = json.loads(corpus().read_text(encoding="utf-8"))
    document["messages"].append(msg("later-1", "user", "and now the tests"))
    copy = tmp_path / "chats" / "session-2026-06-05T04-59-dcbe78d3.json"
    copy.parent.mkdir()
    copy.write_text(json.dumps(document, indent=2), encoding="utf-8")
    grown, stats = read(copy)
    assert grown[: len(first)] == first
    assert grown[-1] == Turn("later-1", "prompt", "2026-01-01T00:00:07.000Z", "and now the tests", 3)
    assert len({turn.id for turn in grown}) == len(grown)
    assert stats.malformed == 0


def test_other_harnesses_files_are_not_gemini_sessions() -> None:
    for harness in ("claude-code", "codex"):
        paths = sorted(shared_path("corpus", harness).glob("*.jsonl"))
        assert len(paths) >= 7, f"the {harness} corpus glob matched {len(paths)} files"
        for path in paths:
            assert gemini.describe(path) is None, path


# ---------------------------------------------------------------- the JSONL form (built here)


def test_jsonl_session_kinds_and_ids(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "session-2026-01-01T00-00-11111111.jsonl", session_records())
    turns, stats = read(path)
    got = [(turn.id, turn.kind, turn.position, turn.text) for turn in turns]
    assert got == [
        ("u1", "prompt", 2, "fix the  build\n"),  # verbatim: inner spaces and the newline kept
        ("g1", "thinking", 4, "Planning\n\nlook at make"),
        ("g1#2", "tool_call", 4, 'run_shell_command {"command": "ls -la"}'),
        ("g1#3", "tool_result", 4, "total 0\n"),  # from the rewrite on line 6, at the first line (4)
        ("g2", "assistant", 7, "The build is fixed."),
        ("i1", "system", 8, "Request cancelled."),
        ("u2", "slash_command", 9, "/compress"),
        ("u3", "shell_input", 10, "!git status"),
        ("u4", "prompt", 11, "undo that please"),  # rewound on line 13, kept: the person typed it
        ("g3", "assistant", 12, "Undoing."),
        ("u5", "prompt", 14, "do it differently"),
        ("s1", "compaction_summary", 15, "<state_snapshot>\n<overall_goal>x</overall_goal>\n</state_snapshot>"),
        ("s2", "assistant", 15, "Got it. Thanks for the additional context!"),
        ("w1", "system", 16, "Loop detected"),
        ("e1", "system", 17, "API Error: quota"),
    ]
    assert stats.duplicates == 2  # the rewrite of g1 and u5 inside $set.messages
    assert stats.lines == 18
    assert (stats.malformed, stats.invalid_utf8, stats.oversized, stats.truncated_tail) == (0, 0, 0, False)
    assert not stats.unknown
    assert turns[1].timestamp == "2026-01-01T00:00:03.000Z"  # a thought's own timestamp


def test_jsonl_describe(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "session-2026-01-01T00-00-11111111.jsonl", session_records())
    info = gemini.describe(path)
    assert info == SessionInfo(
        "gemini",
        "11111111-2222-3333-4444-555555555555",
        str(path),
        None,
        "2026-01-01T00:00:18.000Z",
        "fix the  build\n",
    )


def test_display_content_is_what_the_person_typed(tmp_path: Path) -> None:
    expanded = [{"text": "explain @a.py"}, {"text": "\n--- Content from referenced files ---\nprint(1)\n"}]
    path = write_jsonl(
        tmp_path / "s.jsonl",
        [meta(), msg("u1", "user", expanded, displayContent="explain @a.py"), msg("u2", "user", expanded)],
    )
    turns, _ = read(path)
    sent = "explain @a.py\n--- Content from referenced files ---\nprint(1)\n"
    # What the person typed is the turn; what it expanded to (what the model read) follows it as meta.
    assert [(turn.id, turn.kind, turn.text) for turn in turns] == [
        ("u1", "prompt", "explain @a.py"), ("u1#2", "meta", sent), ("u2", "prompt", sent),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("/help", "slash_command"),
        ("  /memory add x", "slash_command"),
        ("//not a command", "prompt"),
        ("/* a comment */", "prompt"),
        ("!ls", "shell_input"),
        ("<state_snapshot>s</state_snapshot>", "compaction_summary"),
        ("hello /there", "prompt"),
        ("", "prompt"),
    ],
)
def test_user_kind(text: str, kind: str) -> None:
    assert gemini.user_kind(text) == kind


def test_tool_results_error_and_display_fallback(tmp_path: Path) -> None:
    failed = [{"functionResponse": {"id": "c2", "name": "x", "response": {"error": "no such file"}}}]
    path = write_jsonl(
        tmp_path / "s.jsonl",
        [
            meta(),
            msg(
                "g1",
                "gemini",
                "Reading.",
                toolCalls=[
                    call("c1", resultDisplay="shown only"),
                    call("c2", failed),
                    call("c3", [{"text": "plain part"}]),
                    call("c4", [{"functionResponse": {"id": "c4", "name": "x", "response": {"llmContent": 3}}}]),
                ],
            ),
        ],
    )
    turns, _ = read(path)
    assert [(turn.id, turn.kind, turn.text) for turn in turns] == [
        ("g1", "assistant", "Reading."),
        ("g1#2", "tool_call", 'run_shell_command {"command": "ls -la"}'),
        ("g1#3", "tool_result", "shown only"),
        ("g1#4", "tool_call", 'run_shell_command {"command": "ls -la"}'),
        ("g1#5", "tool_result", "no such file"),
        ("g1#6", "tool_call", 'run_shell_command {"command": "ls -la"}'),
        ("g1#7", "tool_result", "plain part"),
        ("g1#8", "tool_call", 'run_shell_command {"command": "ls -la"}'),
        ("g1#9", "tool_result", '{"llmContent": 3}'),
    ]


def test_jsonl_ids_stable_after_appending(tmp_path: Path) -> None:
    records = session_records()
    path = write_jsonl(tmp_path / "s.jsonl", records[:8])
    before, _ = read(path)
    assert before == read(path)[0]
    with path.open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(record) + "\n" for record in records[8:])
    after, _ = read(path)
    assert after[: len(before)] == before
    assert len({turn.id for turn in after}) == len(after)


def test_rewrite_of_the_last_message_shows_the_final_text(tmp_path: Path) -> None:
    """Reading while a message is being rewritten: the id stays, the text becomes the final one."""
    path = write_jsonl(tmp_path / "s.jsonl", [meta(), msg("g1", "gemini", "", toolCalls=[call("c1")])])
    early, _ = read(path)
    assert [(turn.id, turn.kind) for turn in early] == [("g1", "tool_call")]
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(msg("g1", "gemini", "", toolCalls=[call("c1", response("c1", "done"))])) + "\n")
    late, stats = read(path)
    assert [(turn.id, turn.kind, turn.text) for turn in late][1:] == [("g1#2", "tool_result", "done")]
    assert late[0] == early[0] and stats.duplicates == 1


def test_subagent_files_follow_the_main_session(tmp_path: Path) -> None:
    session = "11111111-2222-3333-4444-555555555555"
    chats = tmp_path / "chats"
    main = write_jsonl(chats / "session-2026-01-01T00-00-11111111.jsonl", [meta(session), msg("u1", "user", "go")])
    child = write_jsonl(
        chats / session / "sub-1.jsonl",
        [
            {**meta("sub-1"), "kind": "subagent", "directories": ["/w"]},
            msg("a1", "user", "investigate x"),
            msg("a2", "gemini", "found it"),
        ],
    )
    turns, _ = read(main)
    assert [(turn.id, turn.kind, turn.agent, turn.source) for turn in turns] == [
        ("u1", "prompt", None, None),
        ("a1", "prompt", "sub-1", str(child)),
        ("a2", "assistant", "sub-1", str(child)),
    ]
    assert gemini.describe(child) is not None


# ---------------------------------------------------------------- bad input


def test_truncated_last_line(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", session_records()[:3])
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"id": "g9", "timestamp": "2026-01-01T00:00:09.000Z", "type": "gemi')
    turns, stats = read(path)
    assert [turn.id for turn in turns] == ["u1"]
    assert stats.truncated_tail and stats.malformed == 0


def test_invalid_utf8_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    good = json.dumps(msg("u2", "user", "after")).encode() + b"\n"
    path.write_bytes(json.dumps(meta()).encode() + b'\n{"id": "u1", "type": "user", "content": "\xff\xfe"}\n' + good)
    turns, stats = read(path)
    assert [turn.text for turn in turns] == ["after"] and stats.invalid_utf8 == 1


def test_line_over_the_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        handle.write(json.dumps(meta()) + "\n")
        handle.write(json.dumps(msg("big", "user", "x" * (MAX_LINE_BYTES + 10))) + "\n")
        handle.write(json.dumps(msg("u2", "user", "small")) + "\n")
    turns, stats = read(path)
    assert [turn.id for turn in turns] == ["u2"] and stats.oversized == 1


def test_missing_fields_and_unknown_records(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "s.jsonl",
        [
            meta(),
            {"id": "m1", "type": "user"},  # no content
            {"id": "m2", "content": "no type"},
            {"id": "m3", "type": "tool_group", "content": "a future message type"},
            {"type": "checkpoint", "data": 1},  # a future record type
            {"what": "ever"},
            [1, 2],
            {"$set": "not an object"},
            {"id": "g1", "type": "gemini", "toolCalls": [7, {"name": 3}], "thoughts": ["x", {"subject": 5}]},
            {"id": "u1", "type": "user", "content": [{"inlineData": {"mimeType": "image/png"}}]},  # no words
            {"id": "u2", "type": "user", "content": "kept", "timestamp": 12},
        ],
    )
    turns, stats = read(path)
    assert [(turn.id, turn.kind, turn.text, turn.timestamp) for turn in turns] == [
        ("g1", "tool_call", "? null", None),
        ("u2", "prompt", "kept", None),
    ]
    assert stats.unknown == {"message:None": 1, "message:tool_group": 1, "checkpoint": 1, "record:what": 1}
    assert stats.malformed == 3  # m1 (no content), the list, the $set string


def test_empty_file_and_directory(tmp_path: Path) -> None:
    empty = tmp_path / "session-2026-01-01T00-00-00000000.jsonl"
    empty.write_bytes(b"")
    assert read(empty)[0] == [] and gemini.describe(empty) is None
    legacy_empty = tmp_path / "session-2026-01-01T00-00-00000000.json"
    legacy_empty.write_bytes(b"")
    assert read(legacy_empty)[0] == [] and gemini.describe(legacy_empty) is None
    folder = tmp_path / "session-dir.jsonl"
    folder.mkdir()
    assert gemini.describe(folder) is None
    with pytest.raises(IsADirectoryError):
        read(folder)
    with pytest.raises(FileNotFoundError):
        read(tmp_path / "absent.jsonl")


def test_garbage_is_not_a_session(tmp_path: Path) -> None:
    for name, data in (
        ("g.jsonl", b"\x00\x01\xff" * 1000 + b"\n"),
        ("g.json", b"\x89PNG\r\n\x1a\n" + bytes(range(256))),
        ("t.json", b'{"messages": [1]}'),
        ("l.jsonl", b"[1, 2]\n"),
    ):
        path = tmp_path / name
        path.write_bytes(data)
        assert gemini.describe(path) is None, name
        turns, stats = read(path)
        assert turns == []
        assert stats.malformed + stats.invalid_utf8 >= 1, name


def test_file_that_starts_mid_session(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "session-2026-01-01T00-00-11111111.jsonl", session_records()[6:12])
    turns, stats = read(path)
    assert [turn.id for turn in turns] == ["g2", "i1", "u2", "u3", "u4", "g3"]
    assert turns[0].position == 1 and not stats.malformed
    info = gemini.describe(path)
    assert info is not None and info.session_id == path.stem and info.first_prompt == "undo that please"


def test_single_json_bad_forms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = corpus().read_text(encoding="utf-8")
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) // 2], encoding="utf-8")
    assert read(cut)[0] == [] and read(cut)[1].truncated_tail
    bad = tmp_path / "bad.json"
    bad.write_bytes(text.encode().replace(b"REDACTED_PROMPT", b"\xff\xfe"))
    assert read(bad)[0] == [] and read(bad)[1].invalid_utf8 == 1
    shape = tmp_path / "shape.json"
    shape.write_text(
        '{"sessionId": "x", "messages": [3, {"type": "user"}, {"id": "k", "type": "user", "content": "ok"}]}',
        encoding="utf-8",
    )
    turns, stats = read(shape)
    assert [turn.text for turn in turns] == ["ok"] and stats.malformed == 2 and stats.lines == 3
    monkeypatch.setattr(gemini, "MAX_JSON_BYTES", 100)
    turns, stats = read(corpus())
    assert turns == [] and stats.oversized == 1


def test_jsonl_content_under_a_json_name(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "session-x.json", session_records()[:3])
    assert [turn.id for turn in read(path)[0]] == ["u1"]


def test_describe_reads_only_the_head_of_a_big_single_json(tmp_path: Path) -> None:
    document = json.loads(corpus().read_text(encoding="utf-8"))
    filler = msg("f", "gemini", "z" * 4_000_000)
    document["messages"] = [msg("i0", "info", "hi"), document["messages"][0], filler, document["messages"][1]]
    path = tmp_path / "big.json"
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    info = gemini.describe(path)
    assert info is not None
    assert (info.session_id, info.first_prompt, info.last_activity) == (
        CORPUS_SESSION,
        "[REDACTED_PROMPT]",
        "2026-06-05T04:59:44.839Z",
    )


# ---------------------------------------------------------------- discovery


def fake_home(base: Path) -> tuple[Path, dict[str, str]]:
    """~/.gemini laid out like the CLI: a hash-named project (older), a slug project (newer), a registry."""
    home = base / "home"
    gem = home / ".gemini"
    old_root, new_root = "/work/old-project", "/work/new-project"
    old = gem / "tmp" / hashlib.sha256(old_root.encode()).hexdigest() / "chats"
    old.mkdir(parents=True)
    shutil.copy(corpus(), old / "session-2026-06-05T04-59-dcbe78d3.json")
    new = gem / "tmp" / "new-project"
    write_jsonl(new / "chats" / "session-2026-01-01T00-00-11111111.jsonl", session_records())
    (new / "chats" / "session-2026-01-01T00-00-11111111.json").write_text(  # migrated on resume: listed once
        json.dumps({**meta(), "messages": [msg("u1", "user", "old")]}), encoding="utf-8"
    )
    write_jsonl(
        new / "chats" / "11111111-2222-3333-4444-555555555555" / "sub.jsonl", [meta("sub"), msg("a", "user", "x")]
    )
    (new / ".project_root").write_text(new_root, encoding="utf-8")
    (gem / "tmp" / "empty-project").mkdir()
    (gem / "projects.json").write_text(json.dumps({"projects": {old_root: "old-project", new_root: "new-project"}}))
    return home, {"HOME": str(home)}


def test_sessions_in_a_fake_home(tmp_path: Path) -> None:
    _home, environ = fake_home(tmp_path)
    found = sorted(gemini.sessions(environ), key=lambda info: info.session_id)
    assert [(info.session_id, info.cwd, Path(info.path).name, info.first_prompt) for info in found] == [
        (
            "11111111-2222-3333-4444-555555555555",
            "/work/new-project",
            "session-2026-01-01T00-00-11111111.jsonl",
            "fix the  build\n",
        ),
        (CORPUS_SESSION, "/work/old-project", "session-2026-06-05T04-59-dcbe78d3.json", "[REDACTED_PROMPT]"),
    ]
    assert all(info.harness == "gemini" for info in found)


def test_gemini_cli_home_overrides_home(tmp_path: Path) -> None:
    home, _ = fake_home(tmp_path)
    assert list(gemini.sessions({"HOME": str(tmp_path / "nobody")})) == []
    assert len(list(gemini.sessions({"HOME": str(tmp_path / "nobody"), "GEMINI_CLI_HOME": str(home)}))) == 2
    assert list(gemini.sessions({})) == []


def test_sessions_for_cwd_by_marker_and_by_hash(tmp_path: Path) -> None:
    home, environ = fake_home(tmp_path)
    (home / ".gemini" / "projects.json").unlink()  # the hash-named folder must now be matched by hashing
    new = list(gemini.sessions_for_cwd(environ, "/work/new-project"))
    assert [info.session_id for info in new] == ["11111111-2222-3333-4444-555555555555"]
    old = list(gemini.sessions_for_cwd(environ, "/work/old-project"))
    assert [(info.session_id, info.cwd) for info in old] == [(CORPUS_SESSION, "/work/old-project")]
    assert list(gemini.sessions_for_cwd(environ, "/elsewhere")) == []


def test_project_hash_matches_the_stored_form() -> None:
    assert gemini.project_hash("/work/x") == hashlib.sha256(b"/work/x").hexdigest()
    assert len(CORPUS_HASH) == 64


# ---------------------------------------------------------------- Gemini CLI 0.61 as run (issue 19)

P1 = "Please add a small retry helper for the payments client."
P2 = "remember: never retry a POST without an idempotency key — the gateway double-charges otherwise."
P3 = 'Also: cap the backoff at 30 s ("full jitter" for now).\nSecond line with `code` and ünïcödé.'
P4 = "After the compaction: what should I keep in mind?"
USER_KINDS = ("prompt", "queued_prompt", "shell_input", "slash_command")
E2E_RECORDING = Path(__file__).parent / "data" / "recorded" / "gemini-0.61.0-e2e.jsonl"


def typed(turns: list[Turn]) -> list[tuple[str, str]]:
    return [(t.kind, t.text) for t in turns if t.kind in USER_KINDS]


def test_recorded_session_with_sessionstart_context_glued_onto_the_prompts() -> None:
    """0.61 headless, wheypoint's SessionStart context before each resumed prompt, then a compression: each
    prompt reads verbatim and once, the preamble and the summary as what they are."""
    turns, stats = read(shared_path("corpus", "recorded", "gemini-0.61.0-mock.jsonl"))
    assert typed(turns) == [("prompt", P1), ("prompt", P2), ("prompt", P3), ("slash_command", "/compress"),
                            ("prompt", "Now look at the files in the repo (TOOLCALL-PLEASE).")]  # fmt: skip
    assert turns[0].kind == "meta" and turns[0].text.startswith("<session_context>\n")
    (summary,) = [t for t in turns if t.kind == "compaction_summary"]
    assert summary.text.startswith("<summary>MOCK-SUMMARY")
    glued = [t for t in turns if t.kind == "meta" and t.id.endswith("#2")]
    assert len(glued) == 4 and all(t.text.startswith("<hook_context>wheypoint: ") for t in glued)
    assert glued[0].text.endswith("</hook_context>\n\n" + P2)
    assert stats.duplicates >= 1  # the prompt the compression kept, back under a new id
    assert not any("hook_context" in text for _, text in typed(turns))


def test_recorded_e2e_session_with_the_packet_as_a_part_of_its_own() -> None:
    """The e2e run's session: four prompts, a compression inside the third run, the packet after P4 (BeforeAgent)."""
    turns, stats = read(E2E_RECORDING)
    assert typed(turns) == [("prompt", P1), ("prompt", P2), ("prompt", P3), ("prompt", P4)]
    assert [t.kind for t in turns].count("compaction_summary") == 1
    assert turns[0].kind == "meta" and turns[0].text.startswith("<session_context>\n")
    (sent,) = [t for t in turns if t.kind == "meta" and t.id.endswith("#2")]
    assert sent.text.startswith(P4 + "<hook_context>wheypoint: the handoff of work ")
    assert sent.text.endswith("</hook_context>") and sent.id == next(t.id for t in turns if t.text == P4) + "#2"
    assert stats.malformed == 0 and not stats.unknown
    info = gemini._describe(str(E2E_RECORDING))
    assert info is not None and info[0].first_prompt == P1  # the preamble is not the session's first prompt


@pytest.mark.parametrize(
    ("content", "text"),
    [
        ([{"text": "<hook_context>ctx</hook_context>\n\nfix it"}], "fix it"),  # SessionStart, headless
        ([{"text": "<hook_context>a</hook_context>\n\n<hook_context>b</hook_context>\n\nfix it"}], "fix it"),
        ([{"text": "fix it"}, {"text": "<hook_context>ctx</hook_context>"}], "fix it"),  # BeforeAgent's own part
        ([{"text": "<hook_context>unclosed\n\nfix it"}], None),  # not a wrapper Gemini writes: never a prompt
        ([{"text": "say <hook_context>x</hook_context> back"}], "say <hook_context>x</hook_context> back"),
    ],
)
def test_hook_context_is_not_part_of_the_prompt(tmp_path: Path, content: Any, text: str | None) -> None:
    turns, _ = read(write_jsonl(tmp_path / "s.jsonl", [meta(), msg("u1", "user", content)]))
    assert typed(turns) == ([("prompt", text)] if text else [])
    assert turns[-1].kind == "meta" or text == _text_of(content)


def _text_of(content: Any) -> str:
    return "".join(part["text"] for part in content)


def test_a_message_of_hook_context_alone_and_the_preamble_are_meta(tmp_path: Path) -> None:
    preamble = "<session_context>\nThis is the Gemini CLI.\n</session_context>"
    path = write_jsonl(tmp_path / "s.jsonl", [
        meta(),
        {"$set": {"messages": [msg("p", "user", [{"text": preamble}])]}},
        msg("h", "user", [{"text": "<hook_context>the packet</hook_context>"}]),  # SessionStart, interactive
        msg("u", "user", [{"text": "<session_context> is a tag I like"}]),
    ])  # fmt: skip
    turns, _ = read(path)
    assert [(t.id, t.kind) for t in turns] == [("p", "meta"), ("h", "meta"), ("u", "meta")]
    assert turns[1].text == "<hook_context>the packet</hook_context>"


def test_a_compressed_history_counts_each_prompt_once(tmp_path: Path) -> None:
    """Compression stores the preamble, the summary and its acknowledgement, then the kept history under new ids."""
    ack = msg("a1", "gemini", [{"text": "Got it. Thanks for the additional context!"}])
    path = write_jsonl(tmp_path / "s.jsonl", [
        meta(),
        msg("u1", "user", [{"text": "first"}]), msg("g1", "gemini", "ok"),
        msg("u2", "user", [{"text": "<hook_context>p</hook_context>\n\nsecond"}]), msg("g2", "gemini", "fine"),
        {"$set": {"messages": [msg("s1", "user", [{"text": "Reasoning first.\n<state_snapshot>x</state_snapshot>"}]),
                               ack, msg("n2", "user", [{"text": "<hook_context>p</hook_context>\n\nsecond"}]),
                               msg("n3", "gemini", [{"text": "fine"}])]}},
        msg("u3", "user", [{"text": "second"}]),  # typed again by the person: a prompt of its own
    ])  # fmt: skip
    turns, stats = read(path)
    assert typed(turns) == [("prompt", "first"), ("prompt", "second"), ("prompt", "second")]
    assert [t.id for t in turns if t.kind in USER_KINDS] == ["u1", "u2", "u3"]
    assert {t.id: t.kind for t in turns if t.id in ("s1", "a1")} == {"s1": "compaction_summary", "a1": "assistant"}
    assert [t.id for t in turns if t.kind == "assistant"] == ["g1", "g2", "a1"]
    assert stats.duplicates == 2


def test_a_summary_recorded_as_its_own_message_is_a_compaction_summary(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", [
        meta(), msg("s1", "user", [{"text": "The summary, in prose."}]),
        msg("a1", "gemini", [{"text": "Got it. Thanks for the additional context!"}]),
        msg("u1", "user", [{"text": "The summary, in prose."}]),
    ])  # fmt: skip
    turns, _ = read(path)
    assert [(t.id, t.kind) for t in turns] == [("s1", "compaction_summary"), ("a1", "assistant"), ("u1", "prompt")]


def test_the_older_single_json_form_reads_as_before() -> None:
    turns, _ = read(corpus())
    assert typed(turns) == [(t.kind, t.text) for t in turns if t.kind in USER_KINDS] and typed(turns)
    assert all(not t.text.startswith("<") for t in turns if t.kind in USER_KINDS)


@pytest.mark.parametrize(
    ("records", "share"),
    [
        ([msg("g", "gemini", "x", tokens={"input": 524288}, model="gemini-2.5-flash")], 0.5),
        ([msg("g", "gemini", "x", tokens={"input": 128000}, model="gemma-4-31b-it")], 0.5),
        ([msg("g", "gemini", "x", tokens={"input": 1}), msg("u", "user", "next")], 1 / 1048576),
        ([msg("u", "user", "no reply yet")], None),
        ([msg("g", "gemini", "x", tokens={"input": "many"})], None),
    ],
)
def test_context_share_of_the_last_reply(tmp_path: Path, records: list[Any], share: float | None) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", [meta(), *records])
    assert gemini.context_share(str(path)) == share
    assert gemini.context_share(str(tmp_path / "absent.jsonl")) is None
