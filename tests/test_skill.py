"""The agent skill in skill/wheypoint/ is well-formed, and everything it teaches is true of the runtime today.

- SKILL.md's frontmatter follows the agentskills format, read by a small parser that accepts only what the
  skill uses: one `key: value` line per field, each value a plain one-line YAML scalar (no `: ` or ` #` inside,
  no quote or indicator first), so that any YAML reader gets the same strings.
- Every relative link of the skill's Markdown resolves to a file inside the skill (it is installed on its own).
- Every command line of the skill's Markdown (SKILL.md, then references/ by name, then scripts/README.md) is
  checked like the docs' (tests/test_doc_examples.py): the command and each flag exist, and every concrete line
  runs, in that order, in one scratch checkout. `REV` stands for the newest revision of the work the line names;
  `hook`, `hooks` and `mcp` lines are checked for vocabulary only. No refusal is allowed: the scene has what the
  examples need. Its checkout `shop` holds specs/retry.md, retry.py, notes.md and intent.json (the first JSON
  example of references/intent-json.md); its home holds one Claude Code session recorded in that checkout
  (SESSION_ID, with the user turns in TURNS), the session the examples name. The entry ids the examples
  settle are those the work's first checkpoint creates: an id depends on the work, the entry's kind, text and
  position and its parent revision, so ids of a first checkpoint do not change when later examples do.
- The JSON intents of references/intent-json.md validate and commit, in order, on a fresh store.
- The facts the skill states are the runtime's: next moves and their glosses, the default packet budget, and a
  row in references/refusals.md for every refusal and problem code the contract lists or the source raises.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import Runner, make_repo
from test_doc_examples import command_lines, home_env, run_lines, vocabulary_problems
from wheypoint.app.notes import DEFAULT_PACKET_BUDGET
from wheypoint.notes.render import MOVE_GLOSSES

ROOT = Path(__file__).resolve().parents[1]
SKILL = ROOT / "skill" / "wheypoint"
REFERENCES = sorted((SKILL / "references").glob("*.md"))
DOCUMENTS = [SKILL / "SKILL.md", *REFERENCES, SKILL / "scripts" / "README.md"]
FIELDS = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def broken_links(document: Path, skill: Path) -> list[str]:
    """The relative links of a skill's document that name no file inside the skill's folder."""
    broken = []
    for target in LINK.findall(document.read_text(encoding="utf-8")):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        path = (document.parent / target.split("#", 1)[0]).resolve()
        if not path.is_file() or skill.resolve() not in path.parents:
            broken.append(target)
    return broken
JSON_BLOCK = re.compile(r"^```json\n(.*?)^```", re.S | re.M)

SESSION_ID = "7f2c9a4e-1b3d-4c8e-9a6f-2d5b8e1c3f70"
TURNS = {  # id -> what the user typed, in order
    "e1a7c3f2-5b9d-4e06-8c21-3a4f6b7d9e10": "Add retry with backoff to the payment client. And don't ever retry "
    "POSTs unless they carry an idempotency key.",
    "b4d8f1a3-6c2e-4a97-b150-8e3d7f9a2c64": "Keep the retry logic out of the HTTP client itself. Wrap it in "
    "retry.py so the client stays dumb and the backoff can be tested without a network.",
    "c9e2b7d4-1f8a-4c53-9d06-5a7e3b1f8c29": "keep your replies short, no recap at the end",
}


def frontmatter(text: str) -> tuple[dict[str, str], str]:
    """(fields, body) of a SKILL.md; ValueError when the frontmatter is not the plain form described above."""
    lines = text.split("\n")
    if lines[0] != "---" or "---" not in lines[1:]:
        raise ValueError("SKILL.md must open with a --- fenced frontmatter")
    end = lines.index("---", 1)
    fields: dict[str, str] = {}
    for line in lines[1:end]:
        key, sep, value = line.partition(": ")
        if not sep or not re.fullmatch(r"[a-z][a-z-]*", key) or key in fields:
            raise ValueError(f"not one new `key: value` field: {line!r}")
        if not value or value != value.strip() or value[0] in "!&*[]{}|>'\"%@`#,?:-" or ": " in value or " #" in value:
            raise ValueError(f"{key}: not a plain one-line YAML scalar")
        fields[key] = value
    return fields, "\n".join(lines[end + 1 :])


def test_the_frontmatter_parser_refuses_what_a_yaml_reader_would_read_differently() -> None:
    good = "---\nname: x\ndescription: Does x.\n---\nbody\n"
    assert frontmatter(good) == ({"name": "x", "description": "Does x."}, "body\n")
    for bad in ("name: x\n---\n", "---\nname: x\n", "---\ndescription: Use it: when asked.\n---\n",
                "---\ndescription: \"quoted\"\n---\n", "---\nname: x\nname: y\n---\n", "---\nname x\n---\n",
                "---\ndescription: x #comment\n---\n"):  # fmt: skip
        with pytest.raises(ValueError):
            frontmatter(bad)


def test_the_frontmatter_follows_the_agentskills_format() -> None:
    fields, body = frontmatter((SKILL / "SKILL.md").read_text(encoding="utf-8"))
    assert set(fields) <= FIELDS, f"fields the format does not define: {set(fields) - FIELDS}"
    assert fields["name"] == SKILL.name and len(fields["name"]) <= 64 and NAME.match(fields["name"])
    assert 0 < len(fields["description"]) <= 1024, len(fields["description"])
    assert 0 < len(fields.get("compatibility", "x")) <= 500
    assert "scripts/wheypoint.pyz" in fields["compatibility"] and "3.10" in fields["compatibility"]
    assert fields.get("license", "MIT") == "MIT"
    for trigger in ("compaction", "context", "handoff", "remember", "decision", "resum", "where was I"):
        assert trigger in fields["description"], f"the description no longer mentions {trigger!r}"
    assert len(body.splitlines()) < 500


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(SKILL).as_posix())
def test_every_relative_link_resolves_to_a_file_inside_the_skill(document: Path) -> None:
    broken = broken_links(document, SKILL)
    assert not broken, f"{document.name}: links that resolve to no file in the skill: {broken}"


def test_skill_md_links_every_reference() -> None:
    text = (SKILL / "SKILL.md").read_text(encoding="utf-8")
    assert REFERENCES, "no references/*.md"
    for reference in REFERENCES:
        assert f"(references/{reference.name})" in text, f"SKILL.md does not link {reference.name}"


def test_every_command_line_of_the_skill_names_a_command_and_flags_that_exist() -> None:
    lines = command_lines(DOCUMENTS)
    assert len(lines) >= 30, "the extraction found too few command lines in the skill"
    problems = [problem for where, line in lines for problem in vocabulary_problems(where, line)]
    assert not problems, "\n".join(problems)


def claude_session(path: Path, cwd: Path) -> None:
    """A Claude Code transcript of SESSION_ID recorded in `cwd`: each of TURNS, each answered."""
    records = []
    for index, (turn_id, text) in enumerate(TURNS.items()):
        common = {"sessionId": SESSION_ID, "cwd": str(cwd), "timestamp": f"2026-11-30T10:0{index}:00Z"}
        records.append({"type": "user", "uuid": turn_id, **common, "message": {"role": "user", "content": text}})
        answer = {"role": "assistant", "content": [{"type": "text", "text": "Noted."}]}
        records.append({"type": "assistant", "uuid": f"a-{index}", **common, "message": answer})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def intents() -> list[str]:
    """The JSON intents of references/intent-json.md, in order (every ```json block there is one)."""
    return JSON_BLOCK.findall((SKILL / "references" / "intent-json.md").read_text(encoding="utf-8"))


@pytest.fixture
def skill_scene(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The scene the skill's examples run in (see the module's docstring): its checkout and environment."""
    repo = make_repo(tmp_path / "shop", {
        "README.md": "shop\n", "specs/retry.md": "# Retry\n\nBackoff with jitter, capped at 30 s.\n",
        "retry.py": "def backoff(attempt):\n    return min(2 ** attempt, 30)\n",
    })  # fmt: skip
    (repo / "notes.md").write_text("Done: the design. In flight: nothing. Untouched: retry.py.\n", encoding="utf-8")
    (repo / "intent.json").write_text(intents()[0], encoding="utf-8")
    home = tmp_path / "user"
    claude_session(home / ".claude" / "projects" / "-shop" / f"{SESSION_ID}.jsonl", repo)
    return repo, home_env(home)


def test_the_scene_has_the_session_the_examples_quote(wp: Runner, skill_scene: tuple[Path, dict[str, str]]) -> None:
    repo, env = skill_scene
    reply = wp("turns", cwd=repo, env=env).json
    assert reply["session_id"] == SESSION_ID and {t["id"]: t["text"] for t in reply["turns"]} == TURNS


def test_every_concrete_command_line_of_the_skill_runs(wp: Runner, skill_scene: tuple[Path, dict[str, str]]) -> None:
    repo, env = skill_scene
    ran, failures = run_lines(wp, repo, command_lines(DOCUMENTS), {}, env)
    assert ran >= 20, f"only {ran} concrete command lines ran"
    assert not failures, "\n".join(failures)


def test_the_json_intents_validate_and_commit_in_order(wp: Runner, skill_scene: tuple[Path, dict[str, str]]) -> None:
    repo, env = skill_scene
    heads: dict[str, str] = {}
    assert len(intents()) >= 2, "intent-json.md should show a first checkpoint and a later one"
    for number, text in enumerate(intents(), 1):
        slug = json.loads(text)["slug"]
        document = text.replace('"REV"', json.dumps(heads.get(slug, "REV")))
        checked = wp("validate", "-", stdin=document, cwd=repo, env=env).json
        assert checked["ok"] and checked["valid"], f"intent {number}: {checked}"
        written = wp("checkpoint", "-", stdin=document, cwd=repo, env=env).json
        assert written["ok"] and not written["replayed"], f"intent {number}: {written}"
        heads[slug] = written["revision_id"]


def test_the_next_moves_and_their_glosses_are_the_runtimes() -> None:
    sections = (SKILL / "references" / "sections.md").read_text(encoding="utf-8")
    for move, gloss in MOVE_GLOSSES.items():
        assert f"| `{move}` | {gloss} |" in sections, f"sections.md: the row of {move} is not `{move}` | {gloss}"


def test_the_default_packet_budget_is_the_runtimes() -> None:
    text = (SKILL / "SKILL.md").read_text(encoding="utf-8")
    assert f"{DEFAULT_PACKET_BUDGET:,} when `--budget` is left out" in text


def documented_codes() -> set[str]:
    """Every code in docs/contract.md's two refusal tables, and every refusal code the source raises by name."""
    contract = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    tables = contract.split("## Refusal codes", 1)[1].split("## The note", 1)[0]
    codes = {code for row in tables.splitlines() if row.startswith("| `")
             for code in re.findall(r"`([a-z][a-z-]+)`", row.split("|")[1])}  # fmt: skip
    for path in (ROOT / "src" / "wheypoint").rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        codes |= set(re.findall(r"Refusal\(\s*\"([a-z][a-z-]+)\"", source))
        codes |= set(re.findall(r"bad_parameter\([^()]*?,\s*\"([a-z][a-z-]+)\"\)", source))
    return codes


def test_every_refusal_and_problem_code_has_a_row_in_refusals_md() -> None:
    codes = documented_codes()
    assert {"stale-parent", "quote-not-found", "unknown-harness", "store-inconsistent"} <= codes
    refusals = (SKILL / "references" / "refusals.md").read_text(encoding="utf-8")
    rows = {code for row in refusals.splitlines() if row.startswith("|")
            for code in re.findall(r"`([a-z][a-z-]+)`", row.split("|")[1])}  # fmt: skip
    assert not codes - rows, f"refusals.md has no row for {sorted(codes - rows)}"


def test_skill_md_says_what_to_do_with_the_common_refusals() -> None:
    text = (SKILL / "SKILL.md").read_text(encoding="utf-8")
    table = text.split("## When a write is refused", 1)[1].split("\n## ", 1)[0]
    for code in ("usage", "invalid-intent", "base-revision-required", "stale-parent", "unknown-base",
                 "storage-error", "store-busy", "session-not-found", "quote-not-found", "secret-pattern",
                 "note-unwritable"):  # fmt: skip
        assert f"`{code}`" in table, f"SKILL.md's refusal table lacks {code}"
