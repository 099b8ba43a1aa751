"""The seed-3 `checkpoint` skill in skill/checkpoint/ is well-formed, and what it teaches is true of the runtime.

- SKILL.md's frontmatter is the plain agentskills form tests/test_skill.py reads (its parser, its field list).
- Every relative link of the skill's Markdown resolves to a file inside the skill.
- Every command line of the skill (SKILL.md, then references/ by name) names a command and flags that exist,
  and every concrete line runs, in order, in a scratch checkout whose home holds one Claude Code session
  (SESSION_ID) recorded there: its user turns are those the examples designate, and the agent's answers carry
  trailers of the form the rule teaches. No refusal is allowed; the snapshot the example writes must hold the
  designated turns and the trailers byte for byte, and its report must say `full`.
- The trailer rule (references/trailer-rule.md) is one marked block, the types it and SKILL.md list are the
  runtime's (transcripts/harvest.py), and a trailer written as the rule shows parses `ok`.
- The wheypoint skill tells its reader about trailers and `snapshot`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import Runner, make_repo
from test_doc_examples import command_lines, home_env, run_lines, vocabulary_problems
from test_skill import FIELDS, NAME, broken_links, frontmatter
from wheypoint.transcripts.harvest import TRAILER_TYPES, parse_trailers

ROOT = Path(__file__).resolve().parents[1]
SKILL = ROOT / "skill" / "checkpoint"
RULE = SKILL / "references" / "trailer-rule.md"
DOCUMENTS = [SKILL / "SKILL.md", *sorted((SKILL / "references").glob("*.md"))]
BEGIN, END = "<!-- wheypoint:ckpt-trailers:begin -->", "<!-- wheypoint:ckpt-trailers:end -->"

SESSION_ID = "4c1d7e2a-9b3f-4a6e-8d05-7e2f1a9c3b60"
# (id, role, text), in order: the two user turns the skill's snapshot example designates, and trailers.
CONVERSATION = [
    ("9a3e5b71-2c4d-4f08-b6e1-0d7c8f2a4e93", "user",
     "Retry with backoff in the payment client, but never retry a POST that has no idempotency key."),
    ("a-1", "assistant", "The schedule is in retry.py.\n<!-- ckpt constraint w=3: POSTs are retried only with an "
     "idempotency key. -->"),
    ("d2f60c18-7e5a-4b39-a1c4-6b8e0f3d5a27", "user",
     "No, not exponential from 100 ms: start at 1 s, the gateway rate-limits bursts."),
    ("a-2", "assistant", "Changed the base to 1 s.\n<!-- ckpt correction: The base delay is 1 s, not 100 ms,\n"
     "because the gateway rate-limits bursts. -->\n<!-- ckpt rejected w=1: Retrying inside the HTTP client. -->"),
]  # fmt: skip


def skill_text() -> str:
    return (SKILL / "SKILL.md").read_text(encoding="utf-8")


def test_the_frontmatter_follows_the_agentskills_format() -> None:
    fields, body = frontmatter(skill_text())
    assert set(fields) <= FIELDS, f"fields the format does not define: {set(fields) - FIELDS}"
    assert fields["name"] == SKILL.name and len(fields["name"]) <= 64 and NAME.match(fields["name"])
    assert 0 < len(fields["description"]) <= 1024, len(fields["description"])
    assert 0 < len(fields["compatibility"]) <= 500 and "3.10" in fields["compatibility"]
    assert fields.get("license") == "MIT"
    for trigger in ("checkpoint", "snapshot", "/clear", "compaction", "trailer"):
        assert trigger in fields["description"], f"the description no longer mentions {trigger!r}"
    assert len(body.splitlines()) < 500


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(SKILL).as_posix())
def test_every_relative_link_resolves_to_a_file_inside_the_skill(document: Path) -> None:
    broken = broken_links(document, SKILL)
    assert not broken, f"{document.name}: links that resolve to no file in the skill: {broken}"
    if document.name == "SKILL.md":
        for reference in DOCUMENTS[1:]:
            assert f"(references/{reference.name})" in document.read_text(encoding="utf-8")


def test_every_command_line_names_a_command_and_flags_that_exist() -> None:
    lines = command_lines(DOCUMENTS)
    named = {line.split()[1] for _, line in lines}
    assert {"turns", "harvest", "snapshot"} <= named, f"the flow's commands are not all shown: {named}"
    problems = [problem for where, line in lines for problem in vocabulary_problems(where, line)]
    assert not problems, "\n".join(problems)


def claude_session(path: Path, cwd: Path) -> None:
    """A Claude Code transcript of SESSION_ID recorded in `cwd`, holding CONVERSATION."""
    records = []
    for index, (turn_id, role, text) in enumerate(CONVERSATION):
        common = {"sessionId": SESSION_ID, "cwd": str(cwd), "timestamp": f"2026-12-01T09:0{index}:00Z"}
        content: object = text if role == "user" else [{"type": "text", "text": text}]
        records.append({"type": role, "uuid": turn_id, **common, "message": {"role": role, "content": content}})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def test_every_concrete_command_line_runs_and_the_snapshot_holds_the_meat_verbatim(wp: Runner, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "shop", {"retry.py": "def backoff(n):\n    return min(2 ** n, 30)\n"})
    home = tmp_path / "user"
    claude_session(home / ".claude" / "projects" / "-shop" / f"{SESSION_ID}.jsonl", repo)
    env = home_env(home)
    lines = command_lines(DOCUMENTS)
    ran, failures = run_lines(wp, repo, lines, {}, env)
    assert ran >= 3 and not failures, "\n".join(failures)
    snapshot = (repo / "CHECKPOINT-retry-llm.md").read_text(encoding="utf-8")
    users = [text for _, role, text in CONVERSATION if role == "user"]
    trailers = [t.text for _, role, text in CONVERSATION if role == "assistant" for t in parse_trailers(text, "")]
    indented = ["\n".join("   " + line for line in piece.split("\n")) for piece in users + trailers]  # as fenced
    assert len(trailers) == 3 and all(f"\n{piece}\n" in snapshot for piece in indented), snapshot
    [line] = [line for _, line in lines if line.startswith("wheypoint snapshot ")]
    import shlex

    reply = wp(*shlex.split(line)[1:], cwd=repo, env=env).json
    assert reply["ok"] and reply["status"] == "full" and reply["meat_turns"] == 5, reply
    assert reply["report"] == f"{repo / 'CHECKPOINT-retry-llm.md'} · 5 meat turns · {reply['histogram']} · full"


def rule_block() -> str:
    text = RULE.read_text(encoding="utf-8")
    assert text.count(BEGIN) == 1 and text.count(END) == 1 and text.index(BEGIN) < text.index(END)
    return text[text.index(BEGIN) : text.index(END) + len(END)]


def test_the_trailer_rule_is_one_marked_block_naming_the_runtimes_types() -> None:
    block = rule_block()
    listed = re.findall(r"^- TYPE names what it is: (.*?)\.\n- WEIGHT", block, re.S | re.M)
    assert listed, "the rule no longer lists the types where the test reads them"
    assert tuple(re.findall(r"`([a-z]+)` \(", listed[0])) == TRAILER_TYPES
    for harness_file in ("~/.claude/CLAUDE.md", "~/.codex/AGENTS.md", "~/.gemini/GEMINI.md"):
        assert harness_file in RULE.read_text(encoding="utf-8")
    assert "ckpt" not in block.replace("<!-- ckpt TYPE w=WEIGHT: TEXT -->", "").replace("wheypoint:ckpt-", "")


def test_a_trailer_written_as_the_rule_shows_parses_ok_for_every_type_and_weight() -> None:
    form = re.search(r"^ {4}(<!-- ckpt TYPE w=WEIGHT: TEXT -->)$", rule_block(), re.M)
    assert form, "the rule no longer shows the trailer's form on a line of its own"
    for kind in TRAILER_TYPES:
        for weight in (1, 2, 3):
            written = form.group(1).replace("TYPE", kind).replace("WEIGHT", str(weight))
            written = written.replace("TEXT", "Keep the retry count at five.\nIt is the gateway's limit.")
            [trailer] = parse_trailers(f"Done.\n{written}", "t")
            assert (trailer.status, trailer.type, trailer.weight) == ("ok", kind, weight)
            assert trailer.text == "Keep the retry count at five.\nIt is the gateway's limit."


def test_skill_md_lists_the_runtimes_types() -> None:
    listed = re.search(r"Give each a type \(([^)]*)\)", skill_text())
    assert listed and tuple(listed.group(1).replace(",", " ").split()) == TRAILER_TYPES


def test_the_wheypoint_skill_mentions_trailers_and_snapshot() -> None:
    text = (ROOT / "skill" / "wheypoint" / "SKILL.md").read_text(encoding="utf-8")
    assert "<!-- ckpt" in text and "wheypoint harvest" in text and "wheypoint snapshot" in text
    assert "checkpoint skill" in text


def test_each_plugin_ships_the_checkpoint_skill_beside_the_runtime_it_runs(pyz: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    from test_plugins import PLUGIN_ROOTS

    out = tmp_path / "plugins"
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "build_plugins.py"), "--out", str(out), "--pyz",
                           str(pyz)], capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    for root in PLUGIN_ROOTS.values():
        shipped = out / root / "skills" / "checkpoint"
        for document in DOCUMENTS:
            relative = document.relative_to(SKILL)
            assert (shipped / relative).read_bytes() == document.read_bytes(), relative
        assert (shipped.parent / "wheypoint" / "scripts" / "wheypoint.pyz").read_bytes() == pyz.read_bytes()
