"""Transcript commands end to end on real corpus sessions: turns, discovery, grounding, meat, snapshot."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import Runner, make_repo, shared_path

SESSION = "entire-37-995ebed6e4-0.jsonl"  # three typed prompts about goreleaser casks
SESSION_ID = "48f428f9-72d8-40b2-9594-953019809473"


@pytest.fixture
def corpus_file() -> Path:
    return shared_path("corpus", "claude-code", SESSION)


def with_cwd(source: Path, target: Path, cwd: Path, session_id: str | None = None) -> Path:
    """A copy of a Claude Code session whose recorded cwd (and optionally id) is rewritten."""
    target.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if "cwd" in record:
            record["cwd"] = str(cwd)
        if session_id and "sessionId" in record:
            record["sessionId"] = session_id
        lines.append(json.dumps(record))
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def prompts(reply: dict[str, Any]) -> list[str]:
    return [t["text"] for t in reply["turns"] if t["kind"] == "prompt"]


def test_turns_lists_the_users_words_verbatim(wp: Runner, corpus_file: Path) -> None:
    reply = wp("turns", "--transcript", str(corpus_file), "--format", "json").json
    assert reply["ok"] and reply["harness"] == "claude-code" and reply["session_id"] == SESSION_ID
    assert reply["count"] == 3 and {t["kind"] for t in reply["turns"]} == {"prompt"}
    raw = [json.loads(line) for line in corpus_file.read_text().splitlines()]
    stored = {r["uuid"]: r["message"]["content"] for r in raw if r.get("type") == "user" and "uuid" in r}
    for turn in reply["turns"]:
        assert stored[turn["id"]] == turn["text"]  # byte for byte what the agent stored
    assert reply["stats"]["skipped_types"]["progress"] > 0
    every = wp("turns", "--transcript", str(corpus_file), "--all", "--format", "json").json
    assert every["count"] > 20 and "tool_call" in {t["kind"] for t in every["turns"]}
    only = wp("turns", "--transcript", str(corpus_file), "--kind", "thinking", "--limit", "2", "--format", "json").json
    assert only["count"] == 2 and {t["kind"] for t in only["turns"]} == {"thinking"}
    after = wp("turns", "--transcript", str(corpus_file), "--since", reply["turns"][0]["id"], "--format", "json").json
    assert [t["id"] for t in after["turns"]] == [t["id"] for t in reply["turns"][1:]]
    text = wp("turns", "--transcript", str(corpus_file), "--format", "text").stdout
    assert "--- " + reply["turns"][0]["id"] in text


def test_sessions_are_found_by_the_cwd_recorded_inside(wp: Runner, corpus_file: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "tap")
    home = tmp_path / "user"
    # The folder name deliberately does not encode the cwd: discovery must read the cwd inside the file.
    with_cwd(corpus_file, home / ".claude" / "projects" / "unrelated-name" / f"{SESSION_ID}.jsonl", repo)
    env = {"HOME": str(home)}
    found = wp("turns", "--format", "json", cwd=repo, env=env).json
    assert found["session_id"] == SESSION_ID and found["count"] == 3
    second = with_cwd(corpus_file, home / ".claude" / "projects" / "other" / "second.jsonl", repo / "sub", "second-id")
    with second.open("a", encoding="utf-8") as handle:  # active later than the first: the one --latest must pick
        handle.write(json.dumps({"type": "system", "subtype": "turn_duration", "uuid": "late", "sessionId": "second-id",
                                 "timestamp": "2099-01-01T00:00:00.000Z"}) + "\n")  # fmt: skip
    refused = wp("turns", "--format", "json", cwd=repo, env=env)
    assert refused.code == 1 and refused.json["error"]["code"] == "session-required"
    candidates = refused.json["error"]["candidates"]
    assert {c["session_id"] for c in candidates} == {SESSION_ID, "second-id"}
    assert all({"harness", "cwd", "last_activity", "first_prompt", "path"} <= set(c) for c in candidates)
    latest = wp("turns", "--latest", "--format", "json", cwd=repo, env=env).json
    assert latest["session_id"] == "second-id" and latest["transcript"] == str(second)
    by_id = wp("turns", "--session", "second-id", "--format", "json", cwd=tmp_path, env=env).json
    assert by_id["session_id"] == "second-id"
    custom = tmp_path / "elsewhere"
    shutil.move(str(home / ".claude"), str(custom))
    assert wp("turns", "--format", "json", cwd=repo, env=env).json["error"]["code"] == "session-not-found"
    moved = wp("turns", "--latest", "--format", "json", cwd=repo, env={**env, "CLAUDE_CONFIG_DIR": str(custom)}).json
    assert moved["session_id"] == "second-id"
    assert moved["transcript"] == str(custom / "projects" / "other" / "second.jsonl")  # found under the variable's root
    first = wp("turns", "--session", SESSION_ID, "--format", "json", cwd=repo, env={"CLAUDE_CONFIG_DIR": str(custom)})
    assert first.json["transcript"] == str(custom / "projects" / "unrelated-name" / f"{SESSION_ID}.jsonl")


def test_a_hook_payload_names_the_session(wp: Runner, corpus_file: Path, tmp_path: Path) -> None:
    payload = json.dumps({"session_id": SESSION_ID, "transcript_path": str(corpus_file), "cwd": str(tmp_path)})
    reply = wp("turns", "--hook-payload", "-", "--format", "json", stdin=payload).json
    assert reply["session_id"] == SESSION_ID and reply["count"] == 3


@pytest.mark.parametrize(
    ("make", "args", "code"),
    [
        (lambda p: p, [], "transcript-missing"),
        (lambda p: (p.mkdir(), p)[1], [], "transcript-unreadable"),
        (lambda p: (p.write_bytes(b""), p)[1], [], "transcript-unrecognised"),
        (lambda p: (p.write_bytes(b"\xff\xfe garbage\n{not json\n"), p)[1], ["--harness", "claude-code"],
         "transcript-unusable"),
        (lambda p: (p.write_text("{}"), p)[1], ["--harness", "nonesuch"], "unknown-harness"),
    ],
)  # fmt: skip
def test_unusable_transcripts_get_a_coded_refusal(
    wp: Runner, tmp_path: Path, make: Any, args: list[str], code: str
) -> None:
    path = make(tmp_path / "session.jsonl")
    reply = wp("turns", "--transcript", str(path), *args, "--format", "json")
    assert reply.json["ok"] is False and reply.json["error"]["code"] == code, reply.stdout
    assert "Traceback" not in reply.stderr


def test_checkpoint_pins_quotes_and_copies_meat(wp: Runner, corpus_file: Path, tmp_path: Path) -> None:
    turns = wp("turns", "--transcript", str(corpus_file), "--format", "json").json["turns"]
    quote = "how can I install the generated casks by goreleaser"
    reply = wp(
        "checkpoint", "casks", "--orientation", "Testing goreleaser casks locally.", "--next", "hold",
        "--directive", "Test the casks locally before release.", "--quote", quote,
        "--meat", turns[0]["id"], "--type", "constraint", "--weight", "3",
        "--transcript", str(corpus_file), "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert reply.code == 0, reply.stdout
    record = wp("show", "casks", "--format", "json", cwd=tmp_path).json["record"]
    directive = next(e for e in record["entries"] if e["kind"] == "directive")
    assert directive["quote_turn"] == turns[1]["id"]
    [meat] = record["meat"]
    assert meat["text"] == turns[0]["text"] and meat["turn"] == turns[0]["id"]
    assert (meat["type"], meat["weight"], meat["kind"], meat["harness"]) == ("constraint", 3, "prompt", "claude-code")
    assert record["session"] == {"harness": "claude-code", "id": SESSION_ID}
    note = Path(reply.json["note_path"]).read_text()
    assert "## Meat" in note and f"quoted from turn `{turns[1]['id']}`" in note
    assert "  ```text\n  " + turns[0]["text"].split("\n")[0] in note


def test_a_quote_not_in_the_transcript_is_refused(wp: Runner, corpus_file: Path, tmp_path: Path) -> None:
    reply = wp(
        "checkpoint", "casks", "--orientation", "Testing casks.", "--next", "hold",
        "--directive", "Install casks.", "--quote", "how can I install the generated casks by goreleasr",
        "--meat", "no-such-turn", "--type", "thread", "--transcript", str(corpus_file), cwd=tmp_path,
    )  # fmt: skip
    assert reply.code == 1
    problems = {p["code"]: p for p in reply.json["error"]["problems"]}
    assert "e326a34c-87cc-4c00-8590-0e7b02b25854" in problems["quote-not-found"]["message"]
    assert problems["unknown-turn"]["path"] == "$.meat[0].turn"
    assert not (tmp_path / ".cheese").exists()


def trailer_session(source: Path, target: Path) -> tuple[Path, str]:
    """A copy of a corpus session with one assistant message that carries author trailers."""
    records = [json.loads(line) for line in source.read_text().splitlines()]
    last = next(r for r in reversed(records) if r.get("type") == "assistant")
    tagged = json.loads(json.dumps(last))
    tagged["uuid"] = "tagged-uuid"
    tagged["message"]["id"] = "msg_tagged"
    text = ("Done.\n<!-- ckpt constraint w=3: casks must be tested with `brew install --cask` -->\n"
            "<!-- ckpt pivot: moved from brews to homebrew_casks -->\n<!-- ckpt bogus: not a type -->")  # fmt: skip
    tagged["message"]["content"] = [{"type": "text", "text": text}]
    target.write_text("\n".join(json.dumps(r) for r in [*records, tagged]) + "\n")
    return target, "msg_tagged#0"


def test_harvest_and_snapshot(wp: Runner, corpus_file: Path, tmp_path: Path) -> None:
    path, turn_id = trailer_session(corpus_file, tmp_path / "tagged.jsonl")
    harvested = wp("harvest", "--transcript", str(path), "--format", "json").json
    assert [(t["turn_id"], t["type"], t["status"]) for t in harvested["trailers"]] == [
        (turn_id, "constraint", "ok"), (turn_id, "pivot", "ok"), (turn_id, "bogus", "unknown-type")]  # fmt: skip
    first_prompt = "dc2fb77f-b7fb-4cf0-9ba2-d94e4934f5a4"
    reply = wp(
        "snapshot", "--stream", "casks", "--summary", "Casks move to homebrew_casks.", "--meat", first_prompt,
        "--type", "correction", "--transcript", str(path), "--out", str(tmp_path), "--format", "json",
    ).json  # fmt: skip
    assert reply["status"] == "parse-failed" and reply["meat_turns"] == 3
    assert reply["report"] == (f"{tmp_path / 'CHECKPOINT-casks-llm.md'} · 3 meat turns · "
                               "constraint w3 x1, pivot w2 x1, correction w2 x1 · parse-failed")  # fmt: skip
    written = (tmp_path / "CHECKPOINT-casks-llm.md").read_text()
    assert "## Summary\n\nCasks move to homebrew_casks." in written
    assert "   ````text\n   casks must be tested with `brew install --cask`\n   ````" not in written  # 1 backtick run
    assert "   ```text\n   casks must be tested with `brew install --cask`\n   ```" in written
    clean = wp("snapshot", "--stream", "plain", "--transcript", str(corpus_file), "--out", str(tmp_path)).json
    assert clean["status"] == "lean" and clean["meat_turns"] == 0


def test_an_opencode_database_named_with_a_session(wp: Runner, tmp_path: Path) -> None:
    from test_transcripts_opencode import MAIN, OTHER, build_db

    db = build_db(tmp_path / "opencode.db", MAIN, OTHER)
    named = wp("turns", "--transcript", str(db), "--session", str(MAIN["id"]), "--format", "json").json
    assert named["harness"] == "opencode" and named["session_id"] == MAIN["id"] and named["count"] > 0


def test_the_user_only_fast_path_finds_the_same_user_turns() -> None:
    from wheypoint.transcripts import claude
    from wheypoint.transcripts.model import USER_KINDS, ReadStats

    files = sorted(shared_path("corpus", "claude-code").glob("*.jsonl"))
    assert files
    for path in files:
        full = [t for t in claude.read_turns(path, ReadStats()) if t.kind in USER_KINDS]
        stats = ReadStats()
        fast = [t for t in claude.read_turns(path, stats, kinds=frozenset(USER_KINDS)) if t.kind in USER_KINDS]
        assert fast == full, path.name
        agent_lines = stats.skipped["assistant (not requested)"]
        assert agent_lines > 0 or "assistant" not in path.read_text(), path.name


def test_a_gemini_session_is_found_by_the_hash_of_the_checkout(wp: Runner, tmp_path: Path) -> None:
    import hashlib

    source = shared_path("corpus", "gemini", "agenthistory-gemini-session.json")
    repo = make_repo(tmp_path / "gem")
    home = tmp_path / "user"
    digest = hashlib.sha256(str(repo).encode()).hexdigest()
    chats = home / ".gemini" / "tmp" / digest / "chats"
    chats.mkdir(parents=True)
    shutil.copy(source, chats / "session-2026-06-05T04-59-dcbe78d3.json")
    found = wp("turns", "--format", "json", cwd=repo, env={"HOME": str(home)})
    assert found.code == 0, found.stdout
    assert found.json["harness"] == "gemini" and found.json["count"] == 1


# ---- discovery: sniffing a named transcript, so that only its reader is imported; paths as str

SRC = Path(__file__).resolve().parents[1] / "src"
_PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
from wheypoint.transcripts import discovery
located = discovery.by_path(sys.argv[2], None, sys.argv[3] or None)
readers = sorted(m for m in sys.modules
                 if m.startswith("wheypoint.transcripts.") and not m.endswith(("_turns", "_kinds")))
print(json.dumps([located.harness, located.path, readers]))
"""
_ONLY = [
    "wheypoint.transcripts.discovery",
    "wheypoint.transcripts.homes",
    "wheypoint.transcripts.lines",
    "wheypoint.transcripts.model",
]


def located_in_fresh_process(path: Path, session: str = "") -> tuple[str, str, list[str]]:
    done = subprocess.run([sys.executable, "-S", "-c", _PROBE, str(SRC), str(path), session],
                          capture_output=True, text=True, check=True)  # fmt: skip
    harness, where, readers = json.loads(done.stdout)
    return harness, where, [m for m in readers if m not in _ONLY]


def gemini_jsonl(path: Path) -> Path:
    records = [{"sessionId": "g1", "projectHash": "ab" * 32, "startTime": "2026-01-01T00:00:00.000Z"},
               {"id": "m1", "timestamp": "2026-01-01T00:00:01.000Z", "type": "user", "content": "hello"}]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_a_named_transcript_imports_only_its_reader(corpus_file: Path, tmp_path: Path) -> None:
    from test_transcripts_opencode import MAIN, OTHER, build_db

    rollout = sorted(shared_path("corpus", "codex").glob("*.jsonl"))[0]
    db = build_db(tmp_path / "opencode.db", MAIN, OTHER)
    gemini = gemini_jsonl(tmp_path / "session-1.jsonl")
    assert located_in_fresh_process(corpus_file) == ("claude-code", str(corpus_file), ["wheypoint.transcripts.claude"])
    assert located_in_fresh_process(rollout) == ("codex", str(rollout), ["wheypoint.transcripts.codex"])
    assert located_in_fresh_process(gemini) == ("gemini", str(gemini), ["wheypoint.transcripts.gemini"])
    assert located_in_fresh_process(db, "ses_main") == ("opencode", str(db), ["wheypoint.transcripts.opencode"])
    # A single JSON document is told apart only by parsing it: every reader is asked, as before.
    single = shared_path("corpus", "gemini", "agenthistory-gemini-session.json")
    harness, _, readers = located_in_fresh_process(single)
    assert harness == "gemini" and len(readers) == 4


def test_the_sniff_names_a_reader_only_when_no_other_would_recognise_the_file(tmp_path: Path) -> None:
    from test_transcripts_opencode import MAIN, OTHER, build_db
    from wheypoint.model.shapes import READABLE_HARNESSES
    from wheypoint.transcripts import discovery

    corpus = shared_path("corpus")
    conclusive = [*sorted((corpus / "claude-code").glob("*.jsonl")), *sorted((corpus / "codex").glob("*.jsonl")),
                  gemini_jsonl(tmp_path / "g.jsonl"), build_db(tmp_path / "one.db", MAIN),
                  build_db(tmp_path / "two.db", MAIN, OTHER)]  # fmt: skip
    for path in [*conclusive, corpus / "gemini" / "agenthistory-gemini-session.json"]:
        likely = discovery._sniff(str(path))
        readers = [name for name in READABLE_HARNESSES if discovery.reader(name).describe(path) is not None]
        assert (likely is not None) == (path in conclusive), path.name
        assert likely is None or set(readers) <= {likely}, path.name
        assert len(readers) == 1 or path.name == "two.db", path.name  # two sessions: no single one to describe


def test_an_inconclusive_first_line_asks_every_reader(tmp_path: Path) -> None:
    from wheypoint.model.errors import Refusal
    from wheypoint.transcripts import discovery

    path = tmp_path / "session.jsonl"
    prompt = {"type": "user", "uuid": "u1", "sessionId": "s1", "message": {"role": "user", "content": "hi"}}
    records = [{"type": "brand-new-record", "value": 1}, prompt]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert discovery._sniff(str(path)) is None
    located = discovery.by_path(path, None)
    assert (located.harness, located.path, located.session_id) == ("claude-code", str(path), "s1")
    assert located._replace(session_id="x").session_id == "x"
    assert discovery.by_path(f"{tmp_path}//./session.jsonl", None).path == str(path)  # spelled as pathlib does
    # A Gemini head followed by a Claude Code record: both readers take it, so the caller must choose.
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("".join(json.dumps(r) + "\n" for r in [{"sessionId": "g", "projectHash": "ab" * 32}, prompt]))
    assert discovery._sniff(str(mixed)) is None
    with pytest.raises(Refusal) as refused:
        discovery.by_path(mixed, None)
    assert refused.value.code == "harness-ambiguous" and "claude-code, gemini" in str(refused.value)


def test_reading_transcripts_loads_no_heavy_standard_module() -> None:
    code = ("import json, sqlite3, sys; sys.path.insert(0, sys.argv[1]); before = set(sys.modules)\n"
            "from wheypoint.transcripts import discovery, claude, codex, gemini, opencode, harvest\n"
            "print(json.dumps(sorted(set(sys.modules) - before)))")  # fmt: skip
    done = subprocess.run([sys.executable, "-S", "-c", code, str(SRC)], capture_output=True, text=True, check=True)
    heavy = {"typing", "pathlib", "dataclasses", "inspect", "contextlib", "hashlib", "subprocess", "urllib",
             "ipaddress", "importlib.util", "tempfile", "shutil"}  # fmt: skip
    assert not {m for m in json.loads(done.stdout) if m in heavy or m.split(".")[0] in heavy}


def test_plain_paths_and_folders_inside_a_root() -> None:
    from pathlib import PurePosixPath

    from wheypoint.transcripts.model import inside as _inside
    from wheypoint.transcripts.model import plain_path

    if os.sep == "/":
        for spelled in ["", ".", "/", "//", "///x", "./a", "a/./b//c/", "//a/b", "a/../b", "~/x/", "/./a/."]:
            assert plain_path(spelled) == str(PurePosixPath(spelled)), spelled
    assert _inside("/work/proj/sub", "/work/proj") and _inside("/work/proj/", "/work/proj/")
    assert _inside("/work/proj/a/../b", "/work/proj") and _inside("/anything", "/")
    assert not _inside("/work/project", "/work/proj") and not _inside("/work", "/work/proj")
    assert not _inside(None, "/work") and not _inside("relative", "/work") and _inside("relative", ".")
