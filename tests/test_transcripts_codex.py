"""The Codex CLI rollout reader: the real corpus, every classification rule, bad input, stable ids and discovery."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import Runner, shared_path
from wheypoint.transcripts import codex, model
from wheypoint.transcripts.lines import MAX_LINE_BYTES
from wheypoint.transcripts.model import ReadStats, Turn

AGENTHISTORY = "agenthistory-codex-0.135.0.jsonl"
R1240 = "localpush-rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl"
R1241 = "localpush-rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl"
R1247 = "localpush-rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl"
R1254 = "localpush-rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
R1319 = "localpush-rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"
R2034 = "localpush-rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"

# Per file: turns by kind, records read, duplicates (prompt echoes + agent_message/agent_reasoning mirrors).
EXPECTED: dict[str, tuple[dict[str, int], int, int]] = {
    AGENTHISTORY: ({"assistant": 1, "meta": 2, "prompt": 1}, 11, 2),
    R1240: ({"assistant": 43, "meta": 15, "prompt": 5, "thinking": 59, "tool_call": 105, "tool_result": 104}, 702, 107),
    R1241: ({"assistant": 17, "meta": 6, "prompt": 1, "thinking": 26, "tool_call": 118, "tool_result": 118}, 417, 44),
    R1247: ({"assistant": 52, "meta": 21, "prompt": 7, "thinking": 71, "tool_call": 144, "tool_result": 143}, 837, 130),
    R1254: ({"assistant": 255, "compaction_summary": 1, "meta": 53, "prompt": 33, "queued_prompt": 5, "thinking": 199,
             "tool_call": 372, "tool_result": 365}, 2722, 492),
    R1319: ({"assistant": 1, "meta": 7, "prompt": 1, "thinking": 1, "tool_call": 1}, 19, 3),
    R2034: ({"assistant": 6, "meta": 6, "prompt": 1, "thinking": 6, "tool_call": 5, "tool_result": 5}, 63, 13),
}  # fmt: skip


def corpus(name: str) -> Path:
    return shared_path("corpus", "codex", name)


def read(path: Path) -> tuple[list[Turn], ReadStats]:
    stats = ReadStats()
    return list(codex.read_turns(path, stats)), stats


def by_id(path: Path) -> dict[str, Turn]:
    return {turn.id: turn for turn in read(path)[0]}


def write_lines(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def line(stamp: str, rtype: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": stamp, "type": rtype, "payload": payload}


def meta(session: str = "019c0000-0000-7000-8000-000000000001", stamp: str = "2026-01-01T10:00:00.000Z",
         **extra: Any) -> dict[str, Any]:  # fmt: skip
    return line(stamp, "session_meta", {"id": session, "timestamp": stamp, "cwd": "/work/x", "source": "cli", **extra})


def user_item(stamp: str, *texts: str) -> dict[str, Any]:
    content = [{"type": "input_text", "text": text} for text in texts]
    return line(stamp, "response_item", {"type": "message", "role": "user", "content": content})


def user_event(stamp: str, message: str, **extra: Any) -> dict[str, Any]:
    return line(stamp, "event_msg", {"type": "user_message", "message": message, "images": [], **extra})


def kinds(turns: list[Turn]) -> list[tuple[str, str]]:
    return [(turn.kind, turn.text) for turn in turns]


# The corpus


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_counts(name: str) -> None:
    turns, stats = read(corpus(name))
    expected_kinds, records, duplicates = EXPECTED[name]
    assert dict(Counter(turn.kind for turn in turns)) == expected_kinds
    assert (stats.lines, stats.duplicates) == (records, duplicates)
    assert (stats.malformed, stats.invalid_utf8, stats.oversized, stats.truncated_tail) == (0, 0, 0, False)
    assert not stats.unknown
    assert len({turn.id for turn in turns}) == len(turns)
    assert all(turn.kind in model.ALL_KINDS and turn.agent is None for turn in turns)
    assert [turn.position for turn in turns] == sorted(turn.position for turn in turns)
    assert all(turn.id.split("#")[0] == str(turn.position) for turn in turns)


def test_every_corpus_file_is_covered() -> None:
    assert {path.name for path in shared_path("corpus", "codex").glob("*.jsonl")} == set(EXPECTED)


def test_prompt_event_wins_over_its_echo() -> None:
    # agenthistory line 6 is the response_item echo of the user_message event on line 7.
    turns = by_id(corpus(AGENTHISTORY))
    assert "6" not in turns
    assert turns["7"] == Turn("7", "prompt", "2026-06-05T04:58:23.506Z", "[REDACTED_PROMPT]", 7)


def test_environment_context_and_developer_are_meta() -> None:
    turns = by_id(corpus(AGENTHISTORY))
    assert turns["4"].kind == "meta"  # line 4: role user <environment_context> block, kept verbatim
    assert turns["4"].text.startswith("<environment_context>\n  <cwd>/tmp/agent-history-real-agent/codex/workspace")
    assert turns["4"].text.endswith("</environment_context>")
    assert turns["3"] == Turn("3", "meta", "2026-06-05T04:58:23.498Z", "[REDACTED_DEVELOPER_CONTEXT]", 3)


def test_assistant_message_and_its_event_mirror() -> None:
    turns = by_id(corpus(AGENTHISTORY))
    assert "8" not in turns  # line 8: event agent_message, a mirror of line 9
    assert turns["9"].kind == "assistant" and turns["9"].text == "[REDACTED_ASSISTANT_TEXT]"
    assert "10" not in turns and "11" not in turns  # token_count, task_complete


def test_redacted_echo_matches_its_event() -> None:
    # 13-19-38 line 9 ([REDACTED_TEXT len=86 ...]) is the echo of line 10 ([REDACTED_MESSAGE len=86 ...]);
    # line 11 is a role-user item no event claims: injected context.
    turns = by_id(corpus(R1319))
    assert "9" not in turns
    assert (turns["10"].kind, turns["10"].text) == ("prompt", "[REDACTED_MESSAGE len=86 sha=2239bcba]")
    assert (turns["11"].kind, turns["11"].text) == ("meta", "[REDACTED_TEXT len=3490 sha=00c48df1]")
    assert [turns[i].kind for i in "234567"] == ["meta"] * 6  # developer and unmarked role-user context


def test_reasoning_function_call_in_corpus() -> None:
    turns = by_id(corpus(R1319))
    assert "14" not in turns  # line 14: event agent_reasoning, a mirror of line 15
    assert (turns["15"].kind, turns["15"].text) == ("thinking", "[REDACTED_TEXT len=34 sha=c8b34894]")
    assert turns["17"].kind == "assistant"
    assert turns["18"] == Turn("18", "tool_call", "2026-02-23T12:19:52.620Z",
                               "exec_command\n[REDACTED_ARGUMENTS len=456 sha=df6be51a]", 18)  # fmt: skip


def test_tool_kinds_in_corpus() -> None:
    turns = by_id(corpus(R1254))
    assert (turns["58"].kind, turns["58"].text) == ("tool_result", "[REDACTED_OUTPUT len=4707 sha=3e6e6d49]")
    assert turns["547"].kind == "tool_call"
    assert turns["547"].text == "apply_patch\n[REDACTED_INPUT len=2571 sha=adb0568c]"
    assert (turns["549"].kind, turns["549"].text) == ("tool_result", "[REDACTED_OUTPUT len=192 sha=720c5f0f]")
    # line 41: web_search_call, whose action is an object: its compact JSON, as stored
    assert turns["41"].kind == "tool_call"
    assert turns["41"].text == ('web_search\n{"type":"search","query":"[REDACTED_QUERY len=34 sha=3bfc6233]",'
                                '"queries":["[REDACTED_QUERIES len=34 sha=3bfc6233]"]}')  # fmt: skip
    assert (turns["57"].kind, turns["57"].text) == ("meta", "[REDACTED_TEXT len=56 sha=291dc8bf]")  # developer


def test_compaction_in_corpus() -> None:
    turns = by_id(corpus(R1254))
    assert turns["1788"] == Turn("1788", "compaction_summary", "2026-02-24T09:51:48.878Z",
                                 "[REDACTED_MESSAGE len=0 sha=e3b0c442]", 1788)  # fmt: skip
    assert "1789" not in turns  # event context_compacted: the line before already holds the summary


def test_queued_prompts_in_corpus() -> None:
    # 12-54-34: the task started on line 1046 is still running when the user writes again (lines 1071, 1224).
    turns = by_id(corpus(R1254))
    assert turns["1048"].kind == "prompt"
    assert [turns[i].kind for i in ("1071", "1224", "1529", "2457", "2716")] == ["queued_prompt"] * 5
    assert "1070" not in turns  # the queued prompt's echo
    assert turns["1233"].kind == "prompt"  # a new task (line 1231) after task_complete (line 1230)


def test_echo_with_image_parts_is_dropped() -> None:
    # 12-54-34 line 1422: input_text, "<image>", input_image, "</image>": the echo of event line 1423.
    turns = by_id(corpus(R1254))
    assert not any(turn_id.startswith("1422") for turn_id in turns)
    assert (turns["1423"].kind, turns["1423"].text) == ("prompt", "[REDACTED_MESSAGE len=1 sha=01ba4719]")


def test_file_ending_on_a_prompt() -> None:
    turns, _ = read(corpus(R1247))  # its last line (837) is a user_message whose task never finished
    assert (turns[-1].id, turns[-1].kind) == ("837", "prompt")


# Codex 0.171: prompts are role-user messages whose provenance says "user", mirrored by item_completed events

RECORDED = "codex-0.171.0-mock.jsonl"
P1 = "Please add a small retry helper for the payments client."
P2 = "remember: never retry a POST without an idempotency key \u2014 the gateway double-charges otherwise."
P3 = 'Also: cap the backoff at 30 s ("full jitter" for now).\nSecond line with `code` and \u00fcn\u00efc\u00f6d\u00e9.'
P4 = "After the compaction: what should I keep in mind?"


def test_codex_0_171_prompts_are_read_once_each() -> None:
    turns, stats = read(shared_path("corpus", "recorded", RECORDED))
    prompts = [(t.id, t.text) for t in turns if t.kind in model.USER_KINDS]
    assert prompts == [("8", P1), ("18", P2), ("28", P3), ("47", P4)]  # the response items; their mirrors dropped
    assert dict(Counter(t.kind for t in turns)) == {"meta": 3, "prompt": 4, "assistant": 4, "compaction_summary": 1}
    # 4 UserMessage and 4 AgentMessage mirrors, the ContextCompaction item, the summary the compaction asked for
    assert stats.duplicates == 10 and not stats.unknown
    assert (stats.malformed, stats.invalid_utf8, stats.oversized, stats.truncated_tail) == (0, 0, 0, False)


def test_codex_0_171_context_and_compaction() -> None:
    turns = by_id(shared_path("corpus", "recorded", RECORDED))
    assert turns["3#0"].kind == turns["3#1"].kind == "meta"  # developer: skills, permissions
    assert turns["4"].kind == "meta" and turns["4"].text.startswith("<environment_context>")  # provenance harness
    summary = turns["41"]
    assert summary.kind == "compaction_summary"
    assert summary.text.endswith("<state_snapshot>MOCK-SUMMARY</state_snapshot>")
    assert "38" not in turns  # the model's answer to the compaction request, held by the compacted record
    info = codex.describe(shared_path("corpus", "recorded", RECORDED))
    assert info is not None and info.first_prompt == P1 and info.cwd == "/home/dev/e2e/codex/repo"


def provenance_item(stamp: str, parts: list[tuple[str, str]], **extra: Any) -> dict[str, Any]:
    """A 0.171 role-user message: each part's text and who wrote it (provenance type)."""
    content = [{"type": "input_text", "text": text} for text, _ in parts]
    passthrough = {"turn_id": "t", "content_item_metadata": [{"provenance": {"type": who}} for _, who in parts]}
    payload = {"type": "message", "role": "user", "content": content, **extra}
    return line(stamp, "response_item", {**payload, "internal_chat_message_metadata_passthrough": passthrough})


def user_message_item(stamp: str, *texts: str) -> dict[str, Any]:
    content = [{"type": "text", "text": text, "text_elements": []} for text in texts]
    return line(stamp, "event_msg", {"type": "item_completed", "thread_id": "x", "turn_id": "t",
                                     "item": {"type": "UserMessage", "id": "u", "content": content}})  # fmt: skip


def task(stamp: str, etype: str) -> dict[str, Any]:
    return line(stamp, "event_msg", {"type": etype, "turn_id": "t"})


def test_provenance_decides_prompt_or_context(tmp_path: Path) -> None:
    hook = "wheypoint: the handoff of work, plain text a SessionStart hook added"
    path = write_lines(tmp_path / "r.jsonl", [
        meta(), task(T.format(1), "task_started"),
        provenance_item(T.format(1), [(hook, "harness")]),
        provenance_item(T.format(1), [("# AGENTS.md instructions for /w\n\nbe kind", "agents_md")]),
        provenance_item(T.format(2), [("typed words", "user")]), user_message_item(T.format(2), "typed words"),
        provenance_item(T.format(3), [("<image>", "user"), ("look at this", "user"), ("[skill body]", "skills")]),
        user_message_item(T.format(3), "look at this"), task(T.format(4), "task_complete"),
        provenance_item(T.format(5), [("!ls".replace("!", "<user_shell_command>\n") + "\n</user_shell_command>",
                                       "user")]),
    ])  # fmt: skip
    turns, stats = read(path)
    assert [(t.id, t.kind) for t in turns] == [
        ("3", "meta"), ("4", "meta"), ("5", "prompt"), ("7#0", "queued_prompt"), ("7#1", "queued_prompt"),
        ("7#2", "meta"), ("10", "shell_input")]  # fmt: skip
    assert stats.duplicates == 2 and not stats.unknown


def test_mirror_first_then_response_item(tmp_path: Path) -> None:
    # Whichever of the two comes second is the duplicate; an item_completed alone is the prompt.
    path = write_lines(tmp_path / "r.jsonl", [
        meta(), user_message_item(T.format(1), "first"), provenance_item(T.format(1), [("first", "user")]),
        user_message_item(T.format(2), "only the event"),
        user_item(T.format(3), "claimed"), user_message_item(T.format(3), "claimed"),
    ])  # fmt: skip
    turns, stats = read(path)
    assert [(t.id, t.kind, t.text) for t in turns] == [
        ("2", "prompt", "first"), ("4", "prompt", "only the event"), ("6", "prompt", "claimed")]  # fmt: skip
    assert stats.duplicates == 2


def test_provenance_lists_that_do_not_match_the_parts(tmp_path: Path) -> None:
    one_for_all = provenance_item(T.format(1), [("a", "user")])
    one_for_all["payload"]["content"].append({"type": "input_text", "text": "b"})
    disagreeing = provenance_item(T.format(2), [("c", "user"), ("d", "harness")])
    disagreeing["payload"]["content"].pop()
    no_type = provenance_item(T.format(3), [("e", "user")])
    no_type["payload"]["internal_chat_message_metadata_passthrough"]["content_item_metadata"] = [{"provenance": {}}]
    path = write_lines(tmp_path / "r.jsonl", [meta(), one_for_all, disagreeing, no_type])
    assert [(t.id, t.kind) for t in read(path)[0]] == [("2#0", "prompt"), ("2#1", "prompt"), ("3", "meta"),
                                                       ("4", "meta")]  # fmt: skip


def test_new_record_types_are_known(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "r.jsonl", [
        meta(), line(T.format(1), "world_state", {"full": True, "state": {}}),
        line(T.format(1), "token_usage_record", {"usage": {"input_tokens": 1}}),
        line(T.format(1), "event_msg", {"type": "thread_settings_applied", "thread_settings": {}}),
        line(T.format(1), "event_msg", {"type": "hook_started", "run": {}}),
        line(T.format(1), "dynamic_tools_updated", {"tools": []}),
        line(T.format(1), "event_msg", {"type": "item_completed", "item": {"type": "FileChange", "id": "f"}}),
    ])  # fmt: skip
    turns, stats = read(path)
    assert turns == [] and not stats.unknown  # json.dumps spaces its records: decoded, not peeked at
    assert stats.skipped == Counter({"world_state": 1, "token_usage_record": 1, "event_msg:thread_settings_applied": 1,
                                     "event_msg:hook_started": 1, "dynamic_tools_updated": 1,
                                     "event_msg:item_completed": 1})  # fmt: skip


# Rules the corpus has no line for: minimal records

T = "2026-01-01T10:00:0{}.000Z"


def test_shell_command_blocks(tmp_path: Path) -> None:
    shell = "<user_shell_command>\nls -la\n</user_shell_command>"
    output = "<user_shell_command_output>\ntotal 0\n</user_shell_command_output>"
    path = write_lines(tmp_path / "r.jsonl", [
        meta(), user_item(T.format(1), shell), user_item(T.format(2), output),
        user_event(T.format(3), "<user_shell_command>\npwd\n</user_shell_command>"),
        user_item(T.format(4), "  <USER_SHELL_COMMAND>\nx\n</USER_SHELL_COMMAND>"),
    ])  # fmt: skip
    assert kinds(read(path)[0]) == [("shell_input", shell), ("shell_output", output),
                                    ("shell_input", "<user_shell_command>\npwd\n</user_shell_command>"),
                                    ("shell_input", "  <USER_SHELL_COMMAND>\nx\n</USER_SHELL_COMMAND>")]  # fmt: skip


def test_injected_context_markers(tmp_path: Path) -> None:
    texts = ["<user_instructions>\nbe brief\n</user_instructions>", "# AGENTS.md instructions for /work/x\n\nhi",
             "<turn_aborted>\nThe user interrupted\n</turn_aborted>", "<skill>\nname\n</skill>",
             "<environment_context>\n<cwd>/w</cwd>\n</environment_context>"]  # fmt: skip
    path = write_lines(tmp_path / "r.jsonl", [meta(), *(user_item(T.format(1), text) for text in texts)])
    assert kinds(read(path)[0]) == [("meta", text) for text in texts]


def test_turn_aborted_is_an_interruption(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "r.jsonl", [
        meta(), line(T.format(1), "event_msg", {"type": "task_started", "turn_id": "t1"}),
        user_item(T.format(1), "do it"), user_event(T.format(1), "do it"),
        line(T.format(2), "event_msg", {"type": "turn_aborted", "turn_id": "t1", "reason": "interrupted"}),
        user_event(T.format(3), "no, the other one"),
    ])  # fmt: skip
    turns, stats = read(path)
    assert [(t.id, t.kind, t.text) for t in turns] == [
        ("4", "prompt", "do it"),
        ("5", "interruption", "interrupted"),
        ("6", "prompt", "no, the other one"),
    ]
    assert stats.duplicates == 1


def test_echo_after_its_event(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "r.jsonl", [meta(), user_event(T.format(1), "hello"), user_item(T.format(1), "hello"),
                                              user_item(T.format(2), "hello")])  # fmt: skip
    turns, stats = read(path)
    assert [(t.id, t.kind) for t in turns] == [("2", "prompt"), ("4", "meta")]  # a second copy is not an echo
    assert stats.duplicates == 1


def test_echo_separated_by_bookkeeping(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "r.jsonl", [
        meta(), user_item(T.format(1), "hi"), line(T.format(1), "turn_context", {"cwd": "/w"}),
        line(T.format(1), "event_msg", {"type": "token_count", "info": None}), user_event(T.format(1), "hi"),
    ])  # fmt: skip
    turns, stats = read(path)
    assert [(t.id, t.kind) for t in turns] == [("5", "prompt")]
    assert stats.duplicates == 1 and stats.lines == 5


def test_unclaimed_echo_at_end_of_file_is_meta(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "r.jsonl", [meta(), user_item(T.format(1), "typed")])
    assert [(t.id, t.kind, t.text) for t in read(path)[0]] == [("2", "meta", "typed")]


def test_user_message_kind_field(tmp_path: Path) -> None:
    # About September 2025, injected context was also sent as user_message events with a kind.
    path = write_lines(tmp_path / "r.jsonl", [
        meta(), user_event(T.format(1), "<user_instructions>x</user_instructions>", kind="user_instructions"),
        user_event(T.format(1), "plain words", kind="plain"),
    ])  # fmt: skip
    assert [t.kind for t in read(path)[0]] == ["meta", "prompt"]


def test_multi_part_records_get_suffixed_ids(tmp_path: Path) -> None:
    reasoning = {"type": "reasoning", "summary": [{"type": "summary_text", "text": "a"},
                                                  {"type": "summary_text", "text": "b"}],
                 "content": [{"type": "reasoning_text", "text": "raw"}], "encrypted_content": "x"}  # fmt: skip
    assistant = {"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": "one"}, {"type": "output_text", "text": ""},
        {"type": "refusal", "refusal": "no"}]}  # fmt: skip
    encrypted_only = {"type": "reasoning", "summary": [], "content": None, "encrypted_content": "x"}
    path = write_lines(tmp_path / "r.jsonl", [meta(), line(T.format(1), "response_item", reasoning),
                                              line(T.format(2), "response_item", assistant),
                                              line(T.format(3), "response_item", encrypted_only)])  # fmt: skip
    assert [(t.id, t.kind, t.text) for t in read(path)[0]] == [
        ("2#0", "thinking", "a"), ("2#1", "thinking", "b"), ("2#2", "thinking", "raw"),
        ("3#0", "assistant", "one"), ("3#2", "assistant", "no")]  # fmt: skip


def test_other_tool_shapes(tmp_path: Path) -> None:
    shell_call = {"type": "local_shell_call", "call_id": "c1", "status": "completed",
                  "action": {"type": "exec", "command": ["ls"]}}  # fmt: skip
    list_output = {"type": "function_call_output", "call_id": "c1",
                   "output": [{"type": "input_text", "text": "a"}, {"type": "input_image", "image_url": "x"},
                              {"type": "input_text", "text": "b"}]}  # fmt: skip
    future_call = {"type": "tool_search_call", "call_id": "c2", "arguments": {"q": "x"}}
    path = write_lines(tmp_path / "r.jsonl", [meta(), *(line(T.format(1), "response_item", p)
                                                         for p in (shell_call, list_output, future_call))])  # fmt: skip
    assert kinds(read(path)[0]) == [("tool_call", 'local_shell\n{"type":"exec","command":["ls"]}'),
                                    ("tool_result", "ab"), ("tool_call", 'tool_search_call\n{"q":"x"}')]  # fmt: skip


def test_error_events_are_system(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "r.jsonl", [meta(), line(T.format(1), "event_msg", {"type": "error", "message": "stream lost"})]
    )
    assert kinds(read(path)[0]) == [("system", "stream lost")]


def test_legacy_rollout(tmp_path: Path) -> None:
    # About September 2025: a bare opening line, bare response items, record_type state filler.
    path = write_lines(tmp_path / "rollout-2025-08-01T10-00-00-legacy.jsonl", [
        {"id": "5973b6c0-94b8-487b-a530-2aeb6098ae0e", "timestamp": "2025-08-01T10:00:00.000Z", "instructions": None,
         "git": {"branch": "main"}},
        {"record_type": "state"},
        {"type": "message", "id": None, "role": "user", "content": [
            {"type": "input_text", "text": "<environment_context>\n<cwd>/work/legacy</cwd>\n</environment_context>"}]},
        {"type": "message", "id": None, "role": "user", "content": [{"type": "input_text", "text": "fix the bug"}]},
        {"record_type": "state"},
        {"type": "function_call", "id": "fc_1", "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": "c"},
        {"type": "function_call_output", "call_id": "c", "output": "{\"output\":\"a\\n\"}"},
        {"type": "message", "id": "m", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]},
    ])  # fmt: skip
    turns, stats = read(path)
    assert [(t.id, t.kind, t.timestamp) for t in turns] == [
        ("3", "meta", None), ("4", "prompt", None), ("6", "tool_call", None), ("7", "tool_result", None),
        ("8", "assistant", None)]  # fmt: skip
    assert turns[2].text == 'shell\n{"command":["ls"]}' and turns[3].text == '{"output":"a\\n"}'
    assert stats.lines == 8 and not stats.unknown
    info = codex.describe(path)
    assert info is not None
    assert (info.session_id, info.cwd, info.first_prompt) == ("5973b6c0-94b8-487b-a530-2aeb6098ae0e", "/work/legacy",
                                                              "fix the bug")  # fmt: skip


def test_cwd_from_turn_context_when_meta_lacks_it(tmp_path: Path) -> None:
    first = meta()
    del first["payload"]["cwd"]
    path = write_lines(tmp_path / "r.jsonl", [first, line(T.format(1), "turn_context", {"cwd": "/from/context"})])
    info = codex.describe(path)
    assert info is not None and info.cwd == "/from/context" and info.first_prompt is None


# Forks and subagents

PARENT = "019c0000-0000-7000-8000-0000000000aa"
CHILD = "019c0000-0000-7000-8000-0000000000bb"


def forked_history(fork: str, child_meta: dict[str, Any]) -> list[dict[str, Any]]:
    """A child rollout: its meta, the parent's history re-stamped in a burst at `fork`, then its own turn."""
    return [
        child_meta,
        line(fork, "session_meta", {"id": PARENT, "timestamp": "2026-01-01T09:00:00.000Z", "cwd": "/work/x"}),
        user_item(fork, "parent prompt"), user_event(fork, "parent prompt"),
        line(fork.replace("00.000", "00.001"), "response_item",
             {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "parent answer"}]}),
        line(fork.replace("00.000", "00.002"), "turn_context", {"cwd": "/work/x"}),
        line("2026-01-01T10:00:09.000Z", "event_msg", {"type": "task_started", "turn_id": "own"}),
        user_item("2026-01-01T10:00:09.001Z", "child prompt"), user_event("2026-01-01T10:00:09.001Z", "child prompt"),
        line("2026-01-01T10:00:12.000Z", "response_item",
             {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "child answer"}]}),
    ]  # fmt: skip


def test_fork_replay_is_skipped(tmp_path: Path) -> None:
    fork = "2026-01-01T10:00:00.000Z"
    path = write_lines(tmp_path / "r.jsonl", forked_history(fork, meta(CHILD, fork, forked_from_id=PARENT)))
    turns, stats = read(path)
    assert [(t.id, t.kind, t.text, t.agent) for t in turns] == [
        ("9", "prompt", "child prompt", None),
        ("10", "assistant", "child answer", None),
    ]
    assert stats.duplicates == 5 + 1  # five copied records, then the child's own echo
    info = codex.describe(path)
    assert info is not None and info.session_id == CHILD and info.first_prompt == "child prompt"


def test_subagent_turns_carry_the_agent(tmp_path: Path) -> None:
    fork = "2026-01-01T10:00:00.000Z"
    source = {"subagent": {"thread_spawn": {"parent_thread_id": PARENT, "depth": 1}}}
    path = write_lines(tmp_path / "r.jsonl", forked_history(fork, meta(CHILD, fork, source=source)))
    turns, _ = read(path)
    assert [(t.kind, t.text, t.agent) for t in turns] == [("prompt", "child prompt", CHILD),
                                                         ("assistant", "child answer", CHILD)]  # fmt: skip


def test_subagent_without_copied_history_loses_nothing(tmp_path: Path) -> None:
    stamp = "2026-01-01T10:00:00.000Z"
    path = write_lines(tmp_path / "r.jsonl", [
        meta(CHILD, stamp, source={"subagent": "review"}), user_item(stamp, "review this"),
        user_event(stamp, "review this"),
    ])  # fmt: skip
    turns, stats = read(path)
    assert [(t.id, t.kind, t.agent) for t in turns] == [("3", "prompt", CHILD)]
    assert stats.duplicates == 1


def test_plain_rollout_with_identical_stamps_is_not_a_fork(tmp_path: Path) -> None:
    stamp = "2026-01-01T10:00:00.000Z"
    path = write_lines(tmp_path / "r.jsonl", [meta(stamp=stamp), user_event(stamp, "hi")])
    assert [t.kind for t in read(path)[0]] == ["prompt"]


# Bad input


def test_truncated_last_line(tmp_path: Path) -> None:
    data = corpus(R1319).read_bytes()
    path = tmp_path / "r.jsonl"
    path.write_bytes(data[: data.rindex(b"\n", 0, len(data) - 1) + 40])  # the last line cut mid-record
    turns, stats = read(path)
    assert stats.truncated_tail and stats.malformed == 0
    assert [t.id for t in turns] == [t.id for t in read(corpus(R1319))[0]]  # the cut line held no turn


def test_truncated_bookkeeping_line_is_still_reported(tmp_path: Path) -> None:
    text = json.dumps(line(T.format(1), "event_msg", {"type": "token_count", "info": None}))
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(meta()) + "\n" + text[:-5], encoding="utf-8")
    _, stats = read(path)
    assert stats.truncated_tail


def test_invalid_utf8_and_malformed_lines(tmp_path: Path) -> None:
    good = json.dumps(user_event(T.format(1), "still here")).encode()
    path = tmp_path / "r.jsonl"
    path.write_bytes(
        json.dumps(meta()).encode() + b"\n" + b'{"type":"event_msg","payload":{"type":"user_message",'
        b'"message":"\xff\xfe"}}\n'
        + b"{not json\n"
        + b"[1, 2]\n"
        + b'"text"\n'
        + b"\n"
        + b"[" * 200_000  # deeper than the decoder can follow
        + b"\n"
        + good
        + b"\n"
    )
    turns, stats = read(path)
    assert kinds(turns) == [("prompt", "still here")] and turns[0].id == "8"
    assert (stats.invalid_utf8, stats.malformed, stats.lines) == (1, 4, 7)


def test_line_over_the_size_limit(tmp_path: Path) -> None:
    huge = json.dumps(user_item(T.format(1), "x" * (MAX_LINE_BYTES + 10)))
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join([json.dumps(meta()), huge, json.dumps(user_event(T.format(2), "after"))]) + "\n")
    turns, stats = read(path)
    assert [(t.id, t.kind, t.text) for t in turns] == [("3", "prompt", "after")]
    assert stats.oversized == 1


def test_missing_fields(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "r.jsonl", [
        meta(), {"type": "response_item"}, {"type": "event_msg", "payload": "text"},
        line(T.format(1), "event_msg", {"type": "user_message"}), line(T.format(1), "response_item", {}),
        line(T.format(1), "response_item", {"type": "message", "role": "user"}),
        line(T.format(1), "response_item", {"type": "function_call"}),
        line(T.format(1), "response_item", {"type": "function_call_output"}),
        line(T.format(1), "event_msg", {"type": "turn_aborted"}), line(T.format(1), "compacted", {}),
        {"type": "event_msg", "payload": {"type": "user_message", "message": "no stamp"}},
        {"timestamp": 5, "type": "event_msg", "payload": {"type": "user_message", "message": "bad stamp"}},
    ])  # fmt: skip
    turns, stats = read(path)
    assert [(t.kind, t.text, t.timestamp) for t in turns] == [
        ("tool_call", "function_call", T.format(1)), ("tool_result", "", T.format(1)),
        ("interruption", "", T.format(1)), ("compaction_summary", "", T.format(1)),
        ("prompt", "no stamp", None), ("prompt", "bad stamp", None)]  # fmt: skip
    assert stats.malformed == 3 and stats.unknown == Counter({"response_item:None": 1})


def test_unknown_types_are_counted(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "r.jsonl", [
        meta(), line(T.format(1), "future_thing", {"a": 1}), {"type": "user", "sessionId": "claude-like"},
        line(T.format(1), "event_msg", {"type": "brand_new_event"}),
        line(T.format(1), "response_item", {"type": "hologram"}),
        line(T.format(1), "response_item", {"type": "message", "role": "tool", "content": []}),
        line(T.format(1), "response_item", {"type": "ghost_snapshot", "ghost_commit": {}}),
        line(T.format(1), "event_msg", {"type": "token_count", "info": None}),
    ])  # fmt: skip
    turns, stats = read(path)
    assert turns == []
    assert stats.unknown == Counter({"future_thing": 1, "user": 1, "event_msg:brand_new_event": 1,
                                     "response_item:hologram": 1, "message:tool": 1})  # fmt: skip


def test_empty_file_directory_and_missing_path(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert read(empty)[0] == [] and codex.describe(empty) is None
    with pytest.raises(IsADirectoryError):
        codex.read_turns(tmp_path, ReadStats())
    with pytest.raises(FileNotFoundError):
        codex.read_turns(tmp_path / "absent.jsonl", ReadStats())
    assert codex.describe(tmp_path) is None and codex.describe(tmp_path / "absent.jsonl") is None


def test_binary_garbage(tmp_path: Path) -> None:
    path = tmp_path / "garbage.jsonl"
    path.write_bytes(bytes(range(256)) * 64)
    assert codex.describe(path) is None
    turns, stats = read(path)
    assert turns == [] and stats.invalid_utf8 + stats.malformed + int(stats.truncated_tail) >= 1


def test_file_starting_mid_session(tmp_path: Path) -> None:
    lines = corpus(R1254).read_bytes().splitlines(keepends=True)
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"".join(lines[1069:]))  # from line 1070: the echo of the queued prompt on line 1071
    turns, _ = read(path)
    full = by_id(corpus(R1254))
    assert turns[0].kind == "prompt"  # no task_started before it in this slice: not known to be queued
    assert turns[0].text == full["1071"].text and turns[0].id == "2"
    assert [t.text for t in turns] == [t.text for t in full.values() if t.position >= 1071]
    assert codex.describe(path) is None  # no session_meta: not a rollout on its own


def test_other_harness_files_are_not_rollouts() -> None:
    claude = sorted(shared_path("corpus", "claude-code").glob("*.jsonl"))
    gemini = sorted(shared_path("corpus", "gemini").glob("*"))
    assert len(claude) >= 14 and gemini, "the corpus globs matched nothing: the loop below would prove nothing"
    for path in (*claude, *gemini):
        assert codex.describe(path) is None, path


# Stable ids


def test_ids_stable_across_rereads_and_growth(tmp_path: Path) -> None:
    source = corpus(R1254)
    first, _ = read(source)
    assert read(source)[0] == first
    lines = source.read_bytes().splitlines(keepends=True)
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"".join(lines[:1000]))
    prefix, _ = read(path)
    with path.open("ab") as handle:  # the session goes on
        handle.write(b"".join(lines[1000:]))
    assert first == read(path)[0]
    assert first[: len(prefix)] == prefix
    with path.open("ab") as handle:
        handle.write(b"".join(lines[1:40]))
    grown, _ = read(path)
    assert grown[: len(first)] == first and len(grown) > len(first)


# Discovery


def fake_home(root: Path) -> Path:
    sessions = root / "sessions" / "2026" / "02" / "23"
    sessions.mkdir(parents=True)
    for name in (R1319, R2034):
        shutil.copy(corpus(name), sessions / name.removeprefix("localpush-"))
    archived = root / "archived_sessions"
    archived.mkdir()
    rollout = "rollout-2026-06-05T10-28-20-019e9625-802f-7e91-840a-cfe88d14117a.jsonl"
    shutil.copy(corpus(AGENTHISTORY), archived / rollout)
    (root / "history.jsonl").write_text('{"session_id":"x","ts":1,"text":"hi"}\n')
    (sessions / "rollout-2026-02-23T00-00-00-not-codex.jsonl").write_bytes(b"\x00\x01garbage")
    (sessions / "notes.jsonl").write_text(corpus(R1319).read_text())
    return root


def test_sessions_under_codex_home(tmp_path: Path) -> None:
    home = fake_home(tmp_path / "elsewhere")
    found = {info.session_id: info for info in codex.sessions({"CODEX_HOME": str(home), "HOME": str(tmp_path)})}
    assert set(found) == {"019c8a70-dda7-7f33-98ea-f30553347322", "019c8bfe-ec25-79e0-97d7-bda6a9c575ff",
                          "019e9625-802f-7e91-840a-cfe88d14117a"}  # fmt: skip
    info = found["019c8a70-dda7-7f33-98ea-f30553347322"]
    assert info.harness == "codex" and info.cwd == "/redacted/path/da0ba47443"
    assert info.first_prompt == "[REDACTED_MESSAGE len=86 sha=2239bcba]"
    assert info.last_activity == "2026-02-23T12:19:52.689Z"
    assert Path(info.path).parent == home / "sessions" / "2026" / "02" / "23"
    archived = found["019e9625-802f-7e91-840a-cfe88d14117a"]
    assert Path(archived.path).parent == home / "archived_sessions"
    assert archived.cwd == "/tmp/agent-history-real-agent/codex/workspace"
    assert archived.first_prompt == "[REDACTED_PROMPT]" and archived.last_activity == "2026-06-05T04:58:26.713Z"


def test_sessions_default_home(tmp_path: Path) -> None:
    fake_home(tmp_path / ".codex")
    assert len(list(codex.sessions({"HOME": str(tmp_path)}))) == 3
    assert list(codex.sessions({"HOME": str(tmp_path / "nobody")})) == []
    assert list(codex.sessions({})) == []


def test_last_activity_past_a_long_tail(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    write_lines(path, [meta(), user_event(T.format(1), "hi"), user_item(T.format(2), "y" * 300_000)])
    info = codex.describe(path)
    assert info is not None and info.first_prompt == "hi"
    assert info.last_activity is not None and info.last_activity.endswith("Z")  # the file's mtime, in UTC


def test_checkpoint_quotes_a_codex_0_171_prompt(wp: Runner, tmp_path: Path) -> None:
    recorded = shared_path("corpus", "recorded", RECORDED)
    reply = wp(
        "checkpoint", "payments-retry", "--orientation", "A retry helper for the payments client.", "--next", "hold",
        "--directive", "Never retry a POST without an idempotency key.", "--quote", P2[len("remember: ") :],
        "--meat", "28", "--type", "constraint", "--transcript", str(recorded), "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert reply.code == 0, reply.stdout  # was refused quote-not-found: every 0.171 prompt read as meta
    record = wp("show", "payments-retry", "--format", "json", cwd=tmp_path).json["record"]
    directive = next(e for e in record["entries"] if e["kind"] == "directive")
    assert directive["quote_turn"] == "18"
    [meat] = record["meat"]
    assert (meat["text"], meat["kind"], meat["harness"]) == (P3, "prompt", "codex")


# Our own recording (tests/e2e/test_codex.py, WHEYPOINT_E2E_RECORD): a format change fails here, not silently

E2E = Path(__file__).resolve().parent / "data" / "recorded"


def test_e2e_recording_of_codex_0_171() -> None:
    turns, stats = read(E2E / "codex-0.171.0-e2e.jsonl")
    assert [(t.id, t.text) for t in turns if t.kind in model.USER_KINDS] == [("8", P1), ("18", P2), ("28", P3),
                                                                             ("48", P4)]  # fmt: skip
    assert [t.kind for t in turns] == ["meta", "meta", "meta", "prompt", "assistant", "prompt", "assistant", "prompt",
                                       "assistant", "compaction_summary", "meta", "prompt", "assistant"]  # fmt: skip
    packet = by_id(E2E / "codex-0.171.0-e2e.jsonl")["47"]  # SessionStart's context: provenance harness, hook true
    assert packet.kind == "meta" and packet.text.startswith("wheypoint: the handoff of work session-codex-")
    assert not stats.unknown and stats.duplicates == 10 and stats.malformed == 0
    fresh, stats = read(E2E / "codex-0.171.0-e2e-new-session.jsonl")
    said = [(t.kind, t.text) for t in fresh if t.kind != "meta"]
    assert said == [("prompt", "New session: where were we?"), ("assistant", "MOCK-REPLY: noted.")]
    assert [t.id for t in fresh if t.text.startswith("wheypoint: the handoff")] == ["8"]
    assert not stats.unknown
