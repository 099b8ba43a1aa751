"""The command line end to end: real subprocesses, real SQLite files, real git repositories."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from conftest import Runner, git, make_repo

FIRST = [
    "checkpoint", "retry-backoff", "--orientation", "Retry backoff is designed, not built.", "--next", "hold",
    "--directive", "No retries on POST.", "--quote", "never retry POSTs",
    "--decision", "Cap at 30 s.", "--rationale", "The gateway gives up at 45 s.",
]  # fmt: skip


def store_digest(home: Path) -> str:
    """A digest of every row of the store (or 'absent'), to prove a refusal changed nothing."""
    path = home / "store.sqlite3"
    if not path.exists():
        return "absent"
    conn = sqlite3.connect(path)
    rows = []
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'search%'"):
        rows.append((table, sorted(conn.execute(f"SELECT * FROM {table}").fetchall())))
    conn.close()
    return hashlib.sha256(repr(rows).encode()).hexdigest()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shop", {"retry.py": "a\nb\nc\n", ".gitignore": "scratch/\n"},
                     remote="git@github.com:Acme/Shop.git")  # fmt: skip


def test_first_checkpoint_writes_the_store_and_the_note(wp: Runner, repo: Path, home: Path) -> None:
    (repo / "untracked.py").write_text("x\n")
    reply = wp(*FIRST, "--context", "retry.py:2", "--context", "untracked.py:1", "--context", "scratch/tmp.md",
               "--link", "/etc/hosts", cwd=repo)  # fmt: skip
    assert reply.code == 0, reply.stdout
    out = reply.json
    assert out["ok"] and out["command"] == "checkpoint"
    assert out["project"] == "acme-shop"
    assert out["revision_number"] == 1 and out["status"] == "ok" and out["replayed"] is False
    assert out["durability"] == "repo-snapshot"
    assert out["note_path"] == str(repo / ".cheese" / "notes" / "retry-backoff.md")
    assert [w["code"] for w in out["warnings"]] == ["unpinned-line-ref"]
    note = Path(out["note_path"]).read_text()
    head = git(repo, "rev-parse", "--short=7", "HEAD")
    assert f"- retry.py:2@{head}" in note
    assert "## Local references\n\n- /etc/hosts\n- scratch/tmp.md\n" in note
    assert "  > never retry POSTs" in note
    assert (home / "store.sqlite3").exists()


def test_writes_need_the_head_as_base_and_never_retry(wp: Runner, repo: Path, home: Path) -> None:
    first = wp(*FIRST, cwd=repo).json
    before = store_digest(home)
    missing = wp("checkpoint", "retry-backoff", "--decision", "More.", "--rationale", "Why.", cwd=repo)
    assert missing.code == 1 and missing.json["error"]["code"] == "base-revision-required"
    assert missing.json["error"]["head_revision_id"] == first["revision_id"]
    second = wp(
        "checkpoint",
        "retry-backoff",
        "--base",
        first["revision_id"],
        "--decision",
        "More.",
        "--rationale",
        "Why.",
        cwd=repo,
    )
    assert second.code == 0 and second.json["revision_number"] == 2
    stale = wp("checkpoint", "retry-backoff", "--base", first["revision_id"],
               "--decision", "Other.", "--rationale", "W",
               cwd=repo)  # fmt: skip
    assert stale.code == 1 and stale.json["error"]["code"] == "stale-parent"
    assert stale.json["error"]["head_revision_id"] == second.json["revision_id"]
    assert store_digest(home) != before


def test_the_same_intent_on_the_same_base_is_a_replay(wp: Runner, repo: Path, home: Path) -> None:
    intent = {"slug": "replay", "orientation": "Replaying.", "next": {"move": "hold"}, "notes": "Once."}
    path = repo / "intent.json"
    path.write_text(json.dumps(intent))
    first = wp("checkpoint", str(path), cwd=repo).json
    before = store_digest(home)
    again = wp("checkpoint", "-", stdin=json.dumps(intent), cwd=repo).json
    assert again["replayed"] is True and again["revision_id"] == first["revision_id"]
    assert store_digest(home) == before


def test_show_log_and_an_earlier_revision(wp: Runner, repo: Path) -> None:
    first = wp(*FIRST, "--question", "Jitter?", "--gates", "--rationale", "options: full | equal; leaning: full",
               cwd=repo).json  # fmt: skip
    assert first["status"] == "gated: Jitter?"
    gate = next(i for i in first["added"] if i.startswith("q-"))
    second = wp("checkpoint", "retry-backoff", "--base", first["revision_id"],
               "--resolve", gate, "--rationale", "Full.",
                cwd=repo).json  # fmt: skip
    assert second["status"] == "ok"
    shown = wp("show", "retry-backoff", "--format", "json", cwd=repo).json
    assert shown["record"]["revision_id"] == second["revision_id"] and shown["note"]["state"] == "current"
    old = wp("show", first["work_id"], "--revision", first["revision_id"], "--format", "json", cwd=repo).json
    assert old["record"]["status"] == "gated: Jitter?"
    log = wp("log", "retry-backoff", "--format", "json", cwd=repo).json
    assert [r["revision_number"] for r in log["revisions"]] == [1, 2]
    assert {a["kind"] for a in log["revisions"][0]["added"]} == {"directive", "decision", "question"}
    assert log["revisions"][1]["transitioned"] == [{"entry": gate, "action": "resolve"}]
    text = wp("log", "retry-backoff", "--format", "text", cwd=repo).stdout
    assert "r2" in text and f"~ {gate} resolve" in text
    readable = wp("show", "retry-backoff", "--format", "text", cwd=repo).stdout
    assert readable.startswith("status: ok\nnext: hold\n")


def test_a_hand_edited_note_is_seen_stale_and_re_rendered(wp: Runner, repo: Path) -> None:
    out = wp(*FIRST, cwd=repo).json
    note = Path(out["note_path"])
    original = note.read_text()
    note.write_text(original.replace("Cap at 30 s.", "Cap at 60 s."))
    assert wp("show", "retry-backoff", "--format", "json", cwd=repo).json["note"]["state"] == "stale"
    fixed = wp("show", "retry-backoff", "--write-note", "--format", "json", cwd=repo).json
    assert fixed["note"]["state"] == "rewritten" and note.read_text() == original


def test_outside_git_and_without_a_note(wp: Runner, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    out = wp(*FIRST, "--context", "a.py:3", cwd=plain).json
    assert out["durability"] == "canonical-local" and out["project"] == "plain"
    assert Path(out["note_path"]).parent == plain / ".cheese" / "notes"
    assert out["warnings"][0]["code"] == "unpinned-line-ref"
    quiet = wp(
        "checkpoint", "quiet", "--orientation", "Quiet.", "--next", "hold", "--notes", "n", "--no-note", cwd=plain
    ).json
    assert quiet["note_path"] is None and quiet["durability"] == "canonical-local"


def test_worktrees_share_the_project_key(wp: Runner, tmp_path: Path) -> None:
    main = make_repo(tmp_path / "mono")
    git(main, "worktree", "add", "-q", str(tmp_path / "mono-2"), "-b", "side")
    a = wp(*FIRST, cwd=main).json
    b = wp(
        "checkpoint",
        "other-work",
        "--orientation",
        "Side work.",
        "--next",
        "hold",
        "--notes",
        "n",
        cwd=tmp_path / "mono-2",
    ).json
    assert a["project"] == b["project"] == "mono"
    assert b["note_path"] == str(tmp_path / "mono-2" / ".cheese" / "notes" / "other-work.md")


def test_compaction_proof_through_the_cli(wp: Runner, repo: Path) -> None:
    first = wp(*FIRST, cwd=repo).json
    proof = repo / "proof.json"
    proof.write_text(json.dumps({"rehydrated_from_revision_id": first["revision_id"],
                                 "rehydrated_record_digest": first["record_digest"]}))  # fmt: skip
    ok = wp(
        "checkpoint",
        "retry-backoff",
        "--base",
        first["revision_id"],
        "--compacted",
        str(proof),
        "--notes",
        "After.",
        cwd=repo,
    )
    assert ok.code == 0, ok.stdout
    log = wp("log", "retry-backoff", "--format", "json", cwd=repo).json
    assert log["revisions"][1]["compacted"] is True
    late = wp(
        "checkpoint",
        "retry-backoff",
        "--base",
        ok.json["revision_id"],
        "--compacted",
        str(proof),
        "--notes",
        "x",
        cwd=repo,
    )
    assert late.json["error"]["problems"][0]["code"] == "stale-compaction-proof"


def test_validate_never_writes(wp: Runner, repo: Path, home: Path) -> None:
    out = wp("validate", *FIRST[1:], cwd=repo)
    assert out.code == 0 and out.json["valid"] is True and out.json["revision_number"] == 1
    assert store_digest(home) == "absent"
    first = wp(*FIRST, cwd=repo).json
    again = wp("validate", "retry-backoff", "--decision", "x", "--rationale", "y", cwd=repo).json
    assert again["error"]["code"] == "base-revision-required"
    fine = wp("validate", "retry-backoff", "--base", first["revision_id"], "--decision", "x", "--rationale", "y",
              cwd=repo).json  # fmt: skip
    assert fine["revision_number"] == 2
    assert not (repo / ".cheese" / "notes" / "other.md").exists()


@pytest.mark.parametrize(
    ("args", "stdin", "code", "exit_code"),
    [
        (["checkpoint", "-"], b"{nope", "invalid-json", 1),
        (["checkpoint", "-"], b"\xc3\x28", "invalid-utf8", 1),
        (["checkpoint", "-"], b"[1]", "invalid-intent", 1),
        (["checkpoint", "-"], b"HUGE", "intent-too-large", 1),
        (["checkpoint", "x", "--bogus"], None, "usage", 2),
        (["checkpoint", "../../etc/passwd", "--notes", "n"], None, "usage", 2),
        (["checkpoint", "x", "--notes"], None, "usage", 2),
        (["checkpoint", "x", "--rationale", "why"], None, "flag-unbound", 1),
        (["checkpoint", "x", "--decision", "d", "--quote", "q"], None, "flag-unbound", 1),
        (["checkpoint", "x", "--decision", "d", "--rationale", "a", "--rationale", "b"], None, "flag-repeated", 1),
        (["checkpoint", "x", "--link", "a.md", "--weight", "2"], None, "flag-unbound", 1),
        (["checkpoint", "x", "--notes-file", "/nonexistent/notes.md"], None, "notes-unreadable", 1),
        (["show", "nothing-here"], None, "record-missing", 1),
        (["log", "nothing-here"], None, "record-missing", 1),
        (["show"], None, "usage", 2),
        (["frobnicate"], None, "usage", 2),
        (["schema", "nope"], None, "unknown-contract", 1),
    ],
)  # fmt: skip
def test_bad_input_gets_a_coded_refusal_and_changes_nothing(
    wp: Runner, repo: Path, home: Path, args: list[str], stdin: bytes | None, code: str, exit_code: int
) -> None:
    wp(*FIRST, cwd=repo)
    before = store_digest(home)
    if stdin == b"HUGE":
        stdin = b" " * (2 * 1024 * 1024)  # built here: a 2 MB parameter would also become the test's id
    reply = wp(*args, stdin=stdin, cwd=repo)
    assert reply.code == exit_code, reply.stdout + reply.stderr
    assert reply.json["ok"] is False and reply.json["error"]["code"] == code
    assert "Traceback" not in reply.stderr + reply.stdout
    assert store_digest(home) == before


def test_a_directory_or_a_corrupt_store_is_refused(wp: Runner, repo: Path, home: Path) -> None:
    reply = wp("checkpoint", str(repo), cwd=repo)  # a folder's path is neither a slug nor an intent file
    assert reply.code == 2 and reply.json["error"]["code"] == "usage"
    reply = wp("checkpoint", "--intent", str(repo), cwd=repo)
    assert reply.json["error"]["code"] == "intent-unreadable"
    home.mkdir(parents=True)
    (home / "store.sqlite3").write_bytes(b"this is not a database" * 100)
    broken = wp(*FIRST, cwd=repo)
    assert broken.code == 1 and broken.json["error"]["code"] == "storage-error"
    assert "Traceback" not in broken.stderr


def test_schema_prints_each_contract(wp: Runner) -> None:
    for name in ("checkpoint-intent", "wheypoint-record", "wheypoint-revision", "record"):
        schema = wp("schema", name).json
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_options_may_come_before_the_work(wp: Runner, repo: Path) -> None:
    first = wp("checkpoint", "--project", "elsewhere", *FIRST[1:], cwd=repo).json
    assert first["project"] == "elsewhere"
    shown = wp("show", "--format", "json", "--project", "elsewhere", "retry-backoff", cwd=repo).json
    assert shown["record"]["revision_id"] == first["revision_id"]
    # From the checkout's own project the slug is not found there, so the one work machine-wide is used, said so.
    other = wp("show", "retry-backoff", "--format=json", cwd=repo).json
    assert other["work_id"] == first["work_id"] and other["found_elsewhere"]["project"] == "elsewhere", other


def test_help_is_an_answer_not_an_error(wp: Runner) -> None:
    for args in (["--help"], ["checkpoint", "--help"], ["show", "--help"]):
        reply = wp(*args)
        assert reply.code == 0 and "usage: wheypoint" in reply.stdout
    assert "binds to the nearest item flag" in wp("checkpoint", "--help").stdout


def test_help_of_the_flag_form_survives_an_interpreter_that_drops_docstrings(
    home: Path, tmp_path: Path, pyz: Path
) -> None:
    """`python -OO` drops every docstring: the flag form's rules, which `checkpoint --help` prints, are a constant,
    so the help reads the same there (it printed `None` when it was the module's docstring)."""
    import os
    import subprocess
    import sys

    from conftest import BASE_PYTHON, HARNESS_VARIABLES

    environ = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_") and k not in HARNESS_VARIABLES}
    environ.update(WHEYPOINT_HOME=str(home), WHEYPOINT_PYZ_CACHE="off")
    for program in ([sys.executable, "-OO", "-m", "wheypoint"], [BASE_PYTHON, "-I", "-OO", str(pyz)]):
        for command in ("checkpoint", "validate"):
            done = subprocess.run([*program, command, "--help"], cwd=tmp_path, env=environ, capture_output=True,
                                  text=True, timeout=60, check=False)  # fmt: skip
            assert done.returncode == 0, done.stderr
            form = done.stdout.split("The flag form:", 1)[1]
            assert "binds to the nearest item flag" in form and "None" not in form.split("\n", 3)[2], form[:200]


def test_demo_runs(wp: Runner) -> None:
    reply = wp("demo")
    assert reply.code == 0, reply.stderr
    assert "# Wheypoint handoff" in reply.stdout and "status: ok" in reply.stdout
    # narrated for a person: each step names its command and what it recorded, then the note
    assert "1. the first checkpoint" in reply.stdout and "$ wheypoint checkpoint retry-backoff" in reply.stdout
    assert "-> r2 " in reply.stdout and "status ok" in reply.stdout and not reply.stdout.lstrip().startswith("{")
    # The demo shows the practice it teaches: a note whose orientation is current, so no stale banner opens it.
    assert "Stale orientation" not in reply.stdout and "Stale" not in reply.stdout


def test_a_grep_longer_than_a_phrase_or_a_filter_of_too_many_values_is_refused_with_a_code(wp: Runner) -> None:
    """A `--grep` text is a phrase: past 1,000 characters it is refused (PostgreSQL's phrase query nests a level a
    word and failed past some tens of thousands of words, as a store that cannot be read); so are more than 100
    values of one filter. At the limits the list answers."""
    long = "word " * 200
    assert wp("list", "--grep", long[:1000]).json["ok"]
    reply = wp("list", "--grep", long[:1000] + "x")
    assert reply.code == 2 and reply.json["error"]["code"] == "usage" and "1,000 characters" in reply.stdout
    many = [arg for n in range(101) for arg in ("--owner", f"o{n}")]
    assert wp("list", *many[:200]).json["ok"]
    reply = wp("list", *many)
    assert reply.code == 2 and reply.json["error"]["code"] == "usage" and "at most 100 values" in reply.stdout


def test_a_reference_longer_than_any_path_is_refused_before_it_is_looked_up_or_echoed(wp: Runner) -> None:
    """A reply echoes the reference it looked for in several places: a 300 KB one made a 3 MB answer. Past 4,096
    characters (Linux's longest path) no reference can name a note or a work, and it is refused at once."""
    for command in ("resolve", "show", "log"):
        reply = wp(command, "a" * 4097)
        assert reply.code == 2 and reply.json["error"]["code"] == "usage", reply.stdout[:300]
        assert "at most 4,096 characters" in reply.stdout and len(reply.stdout) < 1000
    assert wp("resolve", "a" * 4096).json["outcome"] == "not-found"
    assert wp("show", "a" * 4096).json["error"]["code"] == "record-missing"
