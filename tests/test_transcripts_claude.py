"""Claude Code transcript reader: real corpus files, classification rules, bad input, stable ids, discovery."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import shared_path
from wheypoint.transcripts import claude
from wheypoint.transcripts.lines import MAX_LINE_BYTES
from wheypoint.transcripts.model import ALL_KINDS, USER_KINDS, ReadStats, Turn

SID = "11111111-2222-3333-4444-555555555555"


def corpus(name: str) -> Path:
    return shared_path("corpus", "claude-code", name)


def read(path: Path) -> tuple[list[Turn], ReadStats]:
    stats = ReadStats()
    return list(claude.read_turns(path, stats)), stats


def at(turns: list[Turn], line: int) -> list[Turn]:
    return [t for t in turns if t.position == line]


def one(turns: list[Turn], line: int) -> Turn:
    found = at(turns, line)
    assert len(found) == 1, found
    return found[0]


def write(path: Path, records: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def user(uuid: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "uuid": uuid, "sessionId": SID, "cwd": "/w", "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": content}, **extra}  # fmt: skip


def assistant(uuid: str, mid: str, block: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "assistant", "uuid": uuid, "sessionId": SID, "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"id": mid, "role": "assistant", "content": [block]}, **extra}  # fmt: skip


# Kinds per corpus file, checked against the lines listed in the rule tests below and by independent counts:
# the corpus holds 795 tool_use blocks and 805 tool_result strings (775 plain, 11 lists of two, 8 of one).
EXPECTED = {
    "agenthistory-claude-2.1.152.jsonl": {"assistant": 1, "prompt": 1},
    "entire-00-c9e2351016-0.jsonl": {"assistant": 37, "meta": 6, "prompt": 6, "shell_input": 2, "shell_output": 2,
                                     "slash_command": 1, "thinking": 14, "tool_call": 66, "tool_result": 74},
    "entire-00-c9e2351016-3.jsonl": {"assistant": 5, "interruption": 1, "prompt": 3, "system": 1, "thinking": 8,
                                     "tool_call": 7, "tool_result": 7},
    "entire-18-4069756ffc-0.jsonl": {"assistant": 127, "compaction_summary": 1, "interruption": 3, "meta": 2,
                                     "prompt": 22, "queued_prompt": 4, "slash_command": 1, "system": 2,
                                     "thinking": 26, "tool_call": 160, "tool_result": 161},
    "entire-37-995ebed6e4-0.jsonl": {"assistant": 7, "prompt": 3, "thinking": 10, "tool_call": 7, "tool_result": 7},
    "entire-4c-02af2759b6-0.jsonl": {"assistant": 1, "prompt": 1, "thinking": 1, "tool_call": 1},
    "entire-4f-7199a81bd1-0.jsonl": {"assistant": 37, "prompt": 5, "system": 1, "thinking": 65, "tool_call": 67,
                                     "tool_result": 67},
    "entire-76-62d755ef9f-2.jsonl": {"assistant": 18, "compaction_summary": 1, "prompt": 9, "system": 2,
                                     "thinking": 49, "tool_call": 60, "tool_result": 60},
    "entire-a6-e4c2a0fbd1-0.jsonl": {"assistant": 9, "command_output": 1, "compaction_summary": 1, "meta": 1,
                                     "prompt": 2, "slash_command": 1, "system": 2, "thinking": 12, "tool_call": 10,
                                     "tool_result": 10},
    "entire-b8-659b3a4dd4-0.jsonl": {"assistant": 60, "compaction_summary": 2, "prompt": 2, "queued_prompt": 1,
                                     "system": 2, "thinking": 169, "tool_call": 171, "tool_result": 171},
    "entire-e1-2c3e2b3f2a-0.jsonl": {"assistant": 39, "compaction_summary": 1, "system": 1, "tool_call": 46,
                                     "tool_result": 48},
    "viewer-1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl": {"assistant": 3, "meta": 1, "slash_command": 1,
                                                          "tool_call": 12, "tool_result": 12},
    "viewer-5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl": {"assistant": 7, "meta": 3, "slash_command": 1,
                                                          "tool_call": 21, "tool_result": 21},
    "viewer-fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl": {"assistant": 95, "meta": 6, "prompt": 1,
                                                          "slash_command": 1, "tool_call": 167, "tool_result": 167},
}  # fmt: skip


def test_every_corpus_file_is_listed() -> None:
    names = sorted(p.name for p in shared_path("corpus", "claude-code").glob("*.jsonl"))
    assert names == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_file_counts(name: str) -> None:
    path = corpus(name)
    turns, stats = read(path)
    assert dict(Counter(t.kind for t in turns)) == EXPECTED[name]
    assert len({t.id for t in turns}) == len(turns)
    assert all(t.kind in ALL_KINDS and isinstance(t.text, str) for t in turns)
    assert stats.malformed == stats.invalid_utf8 == stats.oversized == 0 and not stats.truncated_tail
    assert stats.lines == sum(1 for line in path.read_bytes().split(b"\n") if line.strip())
    assert [t.id for t in read(path)[0]] == [t.id for t in turns]  # the same on a re-read
    info = claude.describe(path)
    assert info is not None and info.harness == "claude-code" and info.cwd


def test_skipped_types_are_counted() -> None:
    stats = read(corpus("entire-00-c9e2351016-0.jsonl"))[1]
    assert stats.skipped == Counter({"progress": 344, "file-history-snapshot": 11, "pr-link": 1,
                                     "system:stop_hook_summary": 6, "system:turn_duration": 4})  # fmt: skip
    assert not stats.unknown
    # 16 title `summary` lines: skipped and counted, never taken for compaction
    turns, stats = read(corpus("entire-37-995ebed6e4-0.jsonl"))
    assert stats.skipped["summary"] == 16 and not [t for t in turns if t.kind == "compaction_summary"]
    assert read(corpus("agenthistory-claude-2.1.152.jsonl"))[1].skipped == Counter({"last-prompt": 1})


def test_user_line_rules_on_corpus() -> None:
    turns = read(corpus("entire-00-c9e2351016-0.jsonl"))[0]
    assert one(turns, 4).kind == "prompt"
    assert one(turns, 4).text == "Q: why is `entire explain` showing no checkpoints here on the main branch?"
    assert one(turns, 159).text == "1" and one(turns, 159).kind == "prompt"
    assert one(turns, 67).kind == "meta" and one(turns, 67).text.startswith("<local-command-caveat>")
    assert one(turns, 68).kind == "shell_input" and one(turns, 68).text == "<bash-input>git branch -v</bash-input>"
    assert one(turns, 69).kind == "shell_output" and one(turns, 69).text.endswith("<bash-stderr></bash-stderr>")
    assert one(turns, 109).kind == "slash_command" and "<command-args>let's write a short plan" in one(turns, 109).text
    assert one(turns, 110).kind == "meta"  # isMeta expansion of that slash command
    assert one(turns, 113).kind == "meta" and one(turns, 113).text.startswith("Base directory for this skill:")
    launched = one(turns, 112)
    assert launched.kind == "tool_result" and launched.text == "Launching skill: superpowers:writing-plans"

    turns = read(corpus("entire-a6-e4c2a0fbd1-0.jsonl"))[0]
    assert one(turns, 3).kind == "meta" and one(turns, 3).text.startswith("Caveat: The messages below")
    assert one(turns, 4).kind == "slash_command" and one(turns, 4).text.startswith("<command-name>/exit")
    assert one(turns, 5) == Turn(one(turns, 5).id, "command_output", one(turns, 5).timestamp,
                                 "<local-command-stdout>Goodbye!</local-command-stdout>", 5)  # fmt: skip
    assert one(turns, 7).kind == "system" and one(turns, 7).text == "No response requested."  # <synthetic>
    assert one(turns, 31).kind == "system" and one(turns, 31).text == "Conversation compacted"
    assert one(turns, 32).kind == "compaction_summary"

    turns = read(corpus("entire-00-c9e2351016-3.jsonl"))[0]
    assert one(turns, 6).kind == "system" and one(turns, 6).text.startswith("Operation stopped by hook:")
    assert one(turns, 29).kind == "tool_result" and one(turns, 29).text.startswith("The user doesn't want to proceed")
    assert one(turns, 30).kind == "interruption" and one(turns, 30).text == "[Request interrupted by user for tool use]"

    turns = read(corpus("entire-18-4069756ffc-0.jsonl"))[0]
    assert one(turns, 133).kind == "interruption" and one(turns, 133).text == "[Request interrupted by user]"
    assert one(turns, 633).kind == "system" and one(turns, 633).id == "00207af5-fda1-46ad-a381-3f9f81b9cee3"
    summary = one(turns, 634)
    assert summary.kind == "compaction_summary" and summary.text.startswith("This session is being continued")
    assert one(turns, 977).kind == "system" and one(turns, 977).text.startswith("<task-notification>")
    assert one(turns, 1105).kind == "slash_command" and one(turns, 1106).kind == "meta"
    assert at(read(corpus("entire-76-62d755ef9f-2.jsonl"))[0], 33)[0].text == "Context microcompacted"
    api_error = one(read(corpus("entire-4f-7199a81bd1-0.jsonl"))[0], 245)
    assert api_error.kind == "system" and api_error.text.startswith("API Error: 500")


def test_text_is_verbatim() -> None:
    path = corpus("entire-76-62d755ef9f-2.jsonl")
    record = json.loads(path.read_text(encoding="utf-8").split("\n")[176])
    turn = one(read(path)[0], 177)
    assert turn.kind == "prompt" and turn.text == record["message"]["content"] and turn.text.startswith(" 2.")


def test_assistant_lines_merge_by_message_id() -> None:
    turns = read(corpus("entire-00-c9e2351016-3.jsonl"))[0]
    mid = "msg_01YKWLfmGqme9P6v9oda7NqJ"  # lines 9, 10, 11: one response, one block a line
    assert [(t.id, t.kind, t.position) for t in turns if t.id.startswith(mid)] == [
        (f"{mid}#0", "thinking", 9), (f"{mid}#1", "assistant", 10), (f"{mid}#2", "tool_call", 11)]  # fmt: skip
    assert one(turns, 9).text.startswith('The user wants to "fix tests".')
    call = one(turns, 28)
    assert call.kind == "tool_call" and call.text.startswith('Edit {"replace_all":false,"file_path":"/Users/')
    assert json.loads(call.text[len("Edit ") :])["file_path"].endswith("cmd/entire/cli/reset.go")


def test_queue_operations_on_corpus() -> None:
    turns, stats = read(corpus("entire-18-4069756ffc-0.jsonl"))
    queued = [(t.id, t.kind, t.position, t.text) for t in turns if t.id.startswith("queue:")]
    assert queued == [
        ("queue:321", "queued_prompt", 321, "Why are we keeping `extractFilesFromLiveTranscript`?"),  # popAll 342
        ("queue:479", "queued_prompt", 479,
         "logs were running default in the test repo, not DEBUG. I'll change it for the next test run"),  # remove
        ("queue:978", "queued_prompt", 978, "/exit"),
        ("queue:992", "queued_prompt", 992, "try again now"),
    ]  # fmt: skip
    assert stats.duplicates == 1  # the task notification enqueued at 967 arrives as the user line 977
    order = [t.id for t in turns]
    # yielded where it was absorbed (the remove at 537), not at its enqueue (479)
    assert order.index(one(turns, 476).id) < order.index(one(turns, 538).id) - 1 == order.index("queue:479")
    b8 = [t for t in read(corpus("entire-b8-659b3a4dd4-0.jsonl"))[0] if t.kind == "queued_prompt"]
    assert [(t.position, t.text) for t in b8] == [(60, "is the SessionRef field correct for gemini?")]
    # 2.1.152: enqueue, dequeue, then the same text as a user line: one prompt, not two
    turns, stats = read(corpus("agenthistory-claude-2.1.152.jsonl"))
    assert [(t.kind, t.position) for t in turns] == [("prompt", 3), ("assistant", 4)] and stats.duplicates == 1


def test_inline_sidechains() -> None:
    turns = read(corpus("viewer-5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"))[0]
    assert one(turns, 1).kind == "slash_command" and one(turns, 1).agent is None
    brief = one(turns, 16)  # the main agent's Task prompt, first line of its sidechain
    assert brief.kind == "meta" and brief.agent == "6340ddef-f656-4b72-a065-82390f637678"
    assert one(turns, 17).agent == brief.agent and one(turns, 27).agent == "83e2917c-8940-4df6-a5a5-f2514f0d08c5"
    agents = Counter(t.agent for t in turns if t.agent)
    assert agents == Counter({"83e2917c-8940-4df6-a5a5-f2514f0d08c5": 15, "6340ddef-f656-4b72-a065-82390f637678": 7})
    fe5 = read(corpus("viewer-fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"))[0]
    assert len({t.agent for t in fe5 if t.agent}) == 5
    assert [t.text for t in fe5 if t.kind == "prompt"] == ["Thanks! Please update CLAUDE.md for current changes"]


# ---- the recall check against the other tool's extraction (prompts.md) -------------------------------------------

# Prompts the transcript no longer holds verbatim: the corpus publisher redacted a path inside the stored prompt
# ("/Users/alex/.REDACTED.jsonl") but not in prompts.md. The turn at that line is the prompt, identical up to the
# redaction (asserted below).
REDACTED = {("entire-18-4069756ffc-0", 8): 386, ("entire-18-4069756ffc-0", 9): 547}

# The kind of the turn each prompt matched, in prompts.md order (P prompt, M meta, S system, C compaction_summary,
# I interruption, $ shell_input, > shell_output, / slash_command, O command_output; - a justified miss).
RECALL_KINDS = {
    "entire-00-c9e2351016-0": "P$>PP$>PMMPMMP",
    "entire-00-c9e2351016-3": "PSPIP",
    "entire-18-4069756ffc-0": "PPPPIPP--PPPCPPPPPPPPISIPPMMP",
    "entire-37-995ebed6e4-0": "PPP",
    "entire-4c-02af2759b6-0": "P",
    "entire-4f-7199a81bd1-0": "PPPPP",
    "entire-76-62d755ef9f-2": "PPPPPCPPPP",
    "entire-a6-e4c2a0fbd1-0": "M/OPPC",
    "entire-b8-659b3a4dd4-0": "PPCC",
    "entire-e1-2c3e2b3f2a-0": "C",
}
LETTER = {"prompt": "P", "meta": "M", "system": "S", "compaction_summary": "C", "interruption": "I",
          "shell_input": "$", "shell_output": ">", "slash_command": "/", "command_output": "O"}  # fmt: skip


def normalise(text: str) -> str:
    return " ".join(text.split())


def match(prompt: str, turns: list[Turn]) -> Turn | None:
    """The turn holding a prompts.md prompt: exact text first, then whitespace-normalised containment (prompts.md
    cuts long prompts and ends them with "...")."""
    ranked = sorted(turns, key=lambda t: (t.kind not in USER_KINDS, t.position))
    for turn in ranked:
        if turn.text == prompt:
            return turn
    wanted = normalise(prompt[:-3] if prompt.endswith("...") else prompt)
    for turn in ranked:
        if wanted in normalise(turn.text):
            return turn
    return None


def test_recall_against_prompts_md() -> None:
    """prompts.md lists the prompts of the whole stored file, not only from transcript_lines_at_start: that field
    counts lines of the original transcript (2329 for entire-b8, a 666-line file; 810 for entire-18, whose prompts
    start at line 5), so every position is searched."""
    total = found = 0
    for base, kinds in RECALL_KINDS.items():
        turns = read(corpus(f"{base}.jsonl"))[0]
        text = corpus(f"{base}.prompts.md").read_text(encoding="utf-8")
        prompts = [p.rstrip("\n") for p in re.split(r"^### Prompt \d+\n\n", text, flags=re.M)[1:]]
        assert len(prompts) == len(kinds)
        letters = ""
        for number, prompt in enumerate(prompts, 1):
            turn = match(prompt, turns)
            if turn is None:
                line = REDACTED[(base, number)]
                stored = one(turns, line)
                cut = stored.text.index(".REDACTED.jsonl")
                assert stored.kind == "prompt" and prompt.startswith(stored.text[:cut]) and cut > 400
                letters += "-"
                continue
            letters += LETTER[turn.kind]
        assert letters == kinds, base
        total += len(prompts)
        found += len(prompts) - letters.count("-")
    assert (found, total) == (76, 78)


# ---- built records: rules the corpus has no line for ---------------------------------------------------------


def test_built_rules(tmp_path: Path) -> None:
    path = write(tmp_path / f"{SID}.jsonl", [
        {"type": "system", "subtype": "local_command", "uuid": "s1", "content": "<command-name>/model</command-name>"},
        {"type": "system", "subtype": "local_command", "uuid": "s2",
         "content": "<local-command-stdout>Set model</local-command-stdout>"},
        {"type": "system", "subtype": "api_error", "uuid": "s3", "error": {"status": 529, "message": "overloaded"}},
        {"type": "system", "subtype": "api_error", "uuid": "s4", "retryAttempt": 1},
        user("u1", [{"type": "text", "text": "<ide_opened_file>a.py</ide_opened_file>"},
                    {"type": "text", "text": "fix it"}, {"type": "image", "source": {}}]),
        user("u2", [{"type": "tool_result", "tool_use_id": "t", "content": [
            {"type": "text", "text": "one"}, {"type": "image"}, {"type": "text", "text": "two"}]},
            {"type": "text", "text": "riding along"}]),
        user("u3", "brief", isSidechain=True, agentId="a7"),
        assistant("u4", "m1", {"type": "redacted_thinking", "data": "x"}),
        assistant("u5", "m1", {"type": "text", "text": "hi"}),
        user("u6", [{"type": "tool_result", "tool_use_id": "t"}]),
        {"type": "summary", "summary": "a title", "leafUuid": "elsewhere"},
        {"type": "mystery", "uuid": "z"},
        {"type": "attachment", "uuid": "x1", "attachment": {"type": "todo_reminder"}},
    ])  # fmt: skip
    turns, stats = read(path)
    got = [(t.id, t.kind, t.text, t.agent) for t in turns]
    assert got == [
        ("s1", "slash_command", "<command-name>/model</command-name>", None),
        ("s2", "command_output", "<local-command-stdout>Set model</local-command-stdout>", None),
        ("s3", "system", "overloaded", None),
        ("u1#0", "meta", "<ide_opened_file>a.py</ide_opened_file>", None),
        ("u1#1", "prompt", "fix it", None),
        ("u2#0", "tool_result", "one", None),
        ("u2#1", "tool_result", "two", None),
        ("u2#2", "queued_prompt", "riding along", None),  # typed while the agent worked (2.1.19-2.1.37)
        ("u3", "meta", "brief", "a7"),
        ("m1#0", "assistant", "hi", None),
        ("u6", "tool_result", "", None),
    ]
    assert stats.unknown == Counter({"assistant block:redacted_thinking": 1, "mystery": 1,
                                     "attachment:todo_reminder": 1})  # fmt: skip
    assert stats.skipped == Counter({"system:api_error": 1, "summary": 1})


def test_attachment_queued_command(tmp_path: Path) -> None:
    human = {"type": "queued_command", "commandMode": "prompt", "origin": {"kind": "human"}, "prompt": "also push"}
    path = write(tmp_path / "s.jsonl", [
        {"type": "queue-operation", "operation": "enqueue", "timestamp": "t1", "content": "also push"},
        {"type": "queue-operation", "operation": "enqueue", "timestamp": "t2", "content": "and tag it"},
        {"type": "attachment", "uuid": "a1", "timestamp": "t3", "attachment": human},
        {"type": "queue-operation", "operation": "remove", "timestamp": "t4"},  # the attachment's own remove
        {"type": "attachment", "uuid": "a2", "attachment": {"type": "queued_command", "commandMode":
                                                            "task-notification", "prompt": "<task-notification>"}},
        {"type": "attachment", "uuid": "a3", "attachment": {**human, "origin": {"kind": "peer"}, "prompt": "hi"}},
        {"type": "attachment", "uuid": "a4", "attachment": {**human, "prompt": [{"type": "text", "text": "x"},
                                                                                {"type": "text", "text": "y"}]}},
        {"type": "queue-operation", "operation": "remove", "timestamp": "t5", "content": "typed before the file"},
    ])  # fmt: skip
    turns, stats = read(path)
    assert [(t.id, t.kind, t.text, t.timestamp) for t in turns] == [
        ("a1", "queued_prompt", "also push", "t3"),
        ("a2", "system", "<task-notification>", None),
        ("a3", "meta", "hi", None),
        ("a4#0", "queued_prompt", "x", None),
        ("a4#1", "queued_prompt", "y", None),
        ("queue:8", "queued_prompt", "typed before the file", "t5"),
        ("queue:2", "queued_prompt", "and tag it", "t2"),  # still queued when the file ended
    ]
    assert stats.duplicates == 2


def test_rewind_branches_are_all_yielded(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [
        user("a", "first try", parentUuid=None),
        assistant("b", "m1", {"type": "text", "text": "answer"}, parentUuid="a"),
        user("c", "abandoned follow-up", parentUuid="b"),
        user("d", "rewritten follow-up", parentUuid="b"),  # rewind: a second child of b
    ])  # fmt: skip
    assert [t.text for t in read(path)[0]] == ["first try", "answer", "abandoned follow-up", "rewritten follow-up"]


# ---- bad input ---------------------------------------------------------------------------------------------------


def test_bad_lines_are_counted(tmp_path: Path) -> None:
    good = corpus("entire-4c-02af2759b6-0.jsonl").read_bytes()
    path = tmp_path / "bad.jsonl"
    path.write_bytes(
        b"not json\n" + b'{"type": "user", "uuid": "\xff\xfe"}\n' + b"[1, 2]\n" + b'{"no": "type"}\n'
        + b'{"type": "user", "uuid": "m1"}\n' + b'{"type": "user", "uuid": "m2", "message": {"content": 5}}\n'
        + b'{"type": "assistant", "uuid": "m3", "message": {"id": "x", "content": [7, {"type": "text"}]}}\n'
        + b'{"type": "' + b"a" * (MAX_LINE_BYTES + 10) + b'"}\n' + good + b'\n{"type": "user", "uuid": "cut'
    )  # fmt: skip
    turns, stats = read(path)
    assert [t.kind for t in turns] == ["prompt", "thinking", "assistant", "tool_call"]
    assert stats.invalid_utf8 == 1 and stats.oversized == 1 and stats.truncated_tail
    assert stats.malformed == 1 + 1 + 2 + 2  # not JSON; a list; no message; content 5; two bad blocks
    assert stats.unknown["(no type)"] == 1


def test_empty_missing_directory(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert read(empty)[0] == [] and claude.describe(empty) is None
    with pytest.raises(FileNotFoundError):
        list(claude.read_turns(tmp_path / "nope.jsonl", ReadStats()))
    with pytest.raises(IsADirectoryError):
        list(claude.read_turns(tmp_path, ReadStats()))
    assert claude.describe(tmp_path) is None and claude.describe(tmp_path / "nope.jsonl") is None
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(bytes(range(256)) * 64)
    assert claude.describe(garbage) is None and read(garbage)[0] == []
    codex = write(tmp_path / "rollout.jsonl", [{"timestamp": "t", "type": "session_meta", "payload": {"id": "x"}}])
    assert claude.describe(codex) is None
    gemini = tmp_path / "session.json"
    gemini.write_text('{"sessionId": "x", "messages": []}', encoding="utf-8")
    assert claude.describe(gemini) is None


def test_file_starting_mid_session(tmp_path: Path) -> None:
    # entire-e1 itself starts with a tool result (line 1) and a compaction (6, 7)
    turns = read(corpus("entire-e1-2c3e2b3f2a-0.jsonl"))[0]
    assert [t.kind for t in at(turns, 1)] == ["tool_result", "tool_result"]
    assert one(turns, 7).kind == "compaction_summary"
    # copies cut in the middle of a response (00-3 line 11 is block #2 of the response begun at line 9) and of
    # a sidechain (viewer-5c03 lines 16-25): user-side turns keep their uuid ids; a block's index restarts
    for name, cut in (("entire-00-c9e2351016-3.jsonl", 10), ("viewer-5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl", 20)):
        lines = corpus(name).read_bytes().split(b"\n")
        path = tmp_path / name
        path.write_bytes(b"\n".join(lines[cut:]))
        full = {t.id: t for t in read(corpus(name))[0]}
        part = [t for t in read(path)[0] if t.kind not in ("assistant", "thinking", "tool_call")]
        assert part and all(full[t.id].text == t.text and full[t.id].kind == t.kind for t in part)
        assert all((full[t.id].agent is None) == (t.agent is None) for t in part)
    first = read(tmp_path / "entire-00-c9e2351016-3.jsonl")[0][0]
    assert first.id == "msg_01YKWLfmGqme9P6v9oda7NqJ#0"


# ---- stable ids ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["entire-18-4069756ffc-0.jsonl", "entire-00-c9e2351016-3.jsonl",
                                  "viewer-5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"])  # fmt: skip
def test_ids_survive_the_file_growing(tmp_path: Path, name: str) -> None:
    lines = corpus(name).read_bytes().splitlines(keepends=True)
    full = {t.id: t for t in read(corpus(name))[0]}
    copy = tmp_path / name
    for cut in range(1, len(lines), max(1, len(lines) // 40)):
        copy.write_bytes(b"".join(lines[:cut]))
        for turn in read(copy)[0]:
            if turn.id in full:
                assert full[turn.id] == turn, (cut, turn.id)
            else:  # a queued prompt pending at the cut, later delivered as a user line or dequeued
                assert turn.id.startswith("queue:"), (cut, turn.id)


def test_appending_blocks_keeps_earlier_ids(tmp_path: Path) -> None:
    copy = tmp_path / "s.jsonl"
    copy.write_bytes(corpus("entire-4c-02af2759b6-0.jsonl").read_bytes() + b"\n")  # the corpus file lacks it
    before = read(copy)[0]
    last = before[-1]
    mid = last.id.split("#")[0]
    with copy.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(assistant("new-1", mid, {"type": "text", "text": "more"})) + "\n")
        handle.write(json.dumps(user("new-2", "next")) + "\n")
    after = read(copy)[0]
    assert after[: len(before)] == before
    assert [(t.id, t.text) for t in after[len(before) :]] == [(f"{mid}#3", "more"), ("new-2", "next")]


# ---- discovery and subagent files ------------------------------------------------------------------------------


def project(root: Path, folder: str = "-Users-me-misleading-name") -> Path:
    path = root / "projects" / folder
    path.mkdir(parents=True)
    return path


def test_sessions_in_a_fake_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    main = project(home / ".claude")
    shutil.copyfile(corpus("entire-4c-02af2759b6-0.jsonl"), main / "5a3bb1c8-c3ce-466e-b487-24212cbf1da1.jsonl")
    shutil.copyfile(corpus("viewer-1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"), main / "agent-1234.jsonl")
    (main / "notes.txt").write_text("x", encoding="utf-8")
    other = project(home / ".config" / "claude", "-path-to-Demo")
    shutil.copyfile(corpus("viewer-fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"), other / "fe5e1c67.jsonl")
    (other / "fe5e1c67" / "subagents").mkdir(parents=True)
    shutil.copyfile(corpus("entire-37-995ebed6e4-0.jsonl"), other / "fe5e1c67" / "subagents" / "agent-9.jsonl")

    found = sorted(claude.sessions({"HOME": str(home)}), key=lambda s: s.session_id)
    assert [(s.session_id, s.cwd, s.first_prompt is not None) for s in found] == [
        ("5a3bb1c8-c3ce-466e-b487-24212cbf1da1", "/Users/gtrrz-victor/wks/cli", True),  # cwd from the file
        ("fe5e1c67-53e7-4862-81ae-d0e013e3270b", "/path/to/Demo", True),
    ]
    assert found[0].last_activity == "2026-01-13T00:00:49.444Z"
    assert found[1].first_prompt == "Thanks! Please update CLAUDE.md for current changes"

    custom = tmp_path / "custom"
    shutil.copyfile(corpus("entire-00-c9e2351016-3.jsonl"), project(custom) / "1ecba475.jsonl")
    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": f"{custom}, {tmp_path / 'absent'}"}
    assert [s.session_id for s in claude.sessions(env)] == ["1ecba475-5b18-4058-a0cb-e87703f6f792"]
    tilde = {"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": "~/custom"}
    assert [s.path for s in claude.sessions(tilde)] == [str(custom / "projects" / "-Users-me-misleading-name" /
                                                             "1ecba475.jsonl")]  # fmt: skip
    assert list(claude.sessions({})) == []


def test_subagent_files_are_read_with_the_session(tmp_path: Path) -> None:
    folder = project(tmp_path / ".claude")
    main = write(folder / f"{SID}.jsonl", [user("m1", "do it"), assistant("m2", "r1", {"type": "text", "text": "ok"})])
    beside = write(folder / "agent-aa.jsonl", [
        user("b1", "brief one", isSidechain=True, agentId="aa"),
        assistant("b2", "r2", {"type": "text", "text": "done one"}, isSidechain=True, agentId="aa"),
    ])  # fmt: skip
    stranger = {**user("x1", "not ours", isSidechain=True, agentId="bb"), "sessionId": "another"}
    write(folder / "agent-bb.jsonl", [stranger])
    nested = write(folder / SID / "subagents" / "agent-cc.jsonl", [
        {**user("c1", "brief two", isSidechain=True, agentId="cc"), "timestamp": "2026-01-01T00:00:05.000Z"},
        user("c2", [{"type": "text", "text": "[Request interrupted by user]"}], isSidechain=True, agentId="cc"),
    ])  # fmt: skip
    (folder / SID / "subagents" / "agent-cc.meta.json").write_text("{}", encoding="utf-8")
    turns = read(main)[0]
    assert [(t.id, t.kind, t.agent, t.source) for t in turns] == [
        ("m1", "prompt", None, None),
        ("r1#0", "assistant", None, None),
        ("b1", "meta", "aa", str(beside)),
        ("r2#0", "assistant", "aa", str(beside)),
        ("c1", "meta", "cc", str(nested)),
        ("c2", "interruption", "cc", str(nested)),
    ]
    assert [s.session_id for s in claude.sessions({"HOME": str(tmp_path)})] == [SID]
    alone = read(nested)[0]  # an agent file read on its own
    assert [(t.id, t.agent, t.source) for t in alone] == [("c1", "cc", None), ("c2", "cc", None)]
