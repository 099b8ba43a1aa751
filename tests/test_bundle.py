"""`export` and `import`: round trips, verification, idempotence, conflicts, atomicity, redaction, renames, progress."""

from __future__ import annotations

import contextlib
import io
import json
import os
import pty
import random
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Runner, make_repo
from test_cli_first_contact import drained


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shop", {"retry.py": "a\nb\nc\n"}, remote="git@github.com:Acme/Shop.git")


def _history(wp: Runner, repo: Path, slug: str = "retry-backoff") -> list[str]:
    """A work of three revisions with a directive, an operator directive, a gate, a local reference and a link."""
    first = wp("checkpoint", slug, "--orientation", "Backoff is designed.", "--next", "hold",
               "--directive", "Never retry a POST.", "--quote", "never retry posts",
               "--operator-directive", "Answer in short sentences.", "--operator-quote", "short sentences please",
               "--decision", "Cap at 30 s.", "--rationale", "The gateway gives up at 45 s.",
               "--question", "Full or equal jitter?", "--gates", "--rationale", "options: full | equal; leaning: full",
               "--context", "retry.py:2", "--context", "/etc/hosts", cwd=repo)  # fmt: skip
    assert first.code == 0, first.stdout
    second = wp("checkpoint", slug, "--base", first.json["revision_id"], "--decision", "Full jitter.", "--rationale",
                "The lead chose it.", "--link", "wheypoint:acme-shop/other.00000000", "--kind", "relates_to",
                cwd=repo)  # fmt: skip
    third = wp("checkpoint", slug, "--base", second.json["revision_id"], "--orientation", "Backoff is built.",
               cwd=repo)  # fmt: skip
    assert third.code == 0, third.stdout
    return [first.json["revision_id"], second.json["revision_id"], third.json["revision_id"]]


def _chain(wp: Runner, repo: Path, slug: str, env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Every record of a work, oldest first, as `show --revision` gives them."""
    log = wp("log", slug, "--format", "json", cwd=repo, env=env).json["revisions"]
    return [wp("show", slug, "--revision", r["revision_id"], "--format", "json", cwd=repo, env=env).json["record"]
            for r in log]  # fmt: skip


def _store_bytes(home: Path) -> list[Any]:
    if not (home / "store.sqlite3").exists():
        return []
    conn = sqlite3.connect(home / "store.sqlite3")
    try:
        return conn.execute("SELECT revision_id, record_digest FROM revisions ORDER BY revision_id").fetchall()
    finally:
        conn.close()


def test_export_then_import_into_an_empty_store_gives_the_same_records_digests_and_notes(
    wp: Runner, repo: Path, tmp_path: Path
) -> None:
    _history(wp, repo)
    bundle = tmp_path / "b.json"
    done = wp("export", "retry-backoff", "--out", str(bundle), "--include-operator", "--include-local", cwd=repo)
    assert done.code == 0 and done.json["revisions"] == 3 and done.json["omitted"] == {}, done.stdout
    other = tmp_path / "other-home"  # another machine: another store, a clone of the same project
    clone = make_repo(tmp_path / "clone", {"retry.py": "a\nb\nc\n"}, remote="git@github.com:Acme/Shop.git")
    env = {"WHEYPOINT_HOME": str(other)}
    imported = wp("import", str(bundle), cwd=clone, env=env)
    assert imported.code == 0 and imported.json["written"] == 3 and imported.json["works"] == 1, imported.stdout
    assert _chain(wp, clone, "retry-backoff", env) == _chain(wp, repo, "retry-backoff")
    note = Path(imported.json["note_paths"][0]).read_bytes()
    assert note == (repo / ".cheese" / "notes" / "retry-backoff.md").read_bytes()
    conn = sqlite3.connect(other / "store.sqlite3")
    rows = conn.execute("SELECT bundle_digest, source FROM imports").fetchall()
    conn.close()
    assert rows == [(done.json["bundle_digest"], str(bundle))] * 3  # where each revision came from

    again = wp("import", str(bundle), cwd=clone, env=env)
    assert again.json["written"] == 0 and again.json["already_present"] == 3  # importing twice writes once


def test_the_bundle_digest_covers_the_canonical_bundle_without_it(wp: Runner, repo: Path, tmp_path: Path) -> None:
    from wheypoint.model.canonical import digest

    _history(wp, repo)
    bundle = tmp_path / "b.json"
    reply = wp("export", "retry-backoff", "--out", str(bundle), cwd=repo).json
    data = json.loads(bundle.read_text(encoding="utf-8"))
    claimed = data.pop("bundle_digest")
    assert claimed == reply["bundle_digest"] == digest(data)
    # Left out by default, and said so: one operator directive and one local reference (/etc/hosts), counted once.
    assert data["omitted"] == {"operator_directives": 1, "local_references": 1} == reply["omitted"]
    text = bundle.read_text(encoding="utf-8")
    assert "short sentences" not in text and "/etc/hosts" not in text
    # The redacted bundle verifies and imports: each digest is true of the records it carries.
    imported = wp("import", str(bundle), cwd=repo, env={"WHEYPOINT_HOME": str(tmp_path / "h2")})
    assert imported.code == 0 and imported.json["written"] == 3, imported.stdout


@pytest.mark.parametrize(
    ("edit", "code"),
    [
        (lambda t: t.replace("Cap at 30 s.", "Cap at 31 s."), "bundle-tampered"),
        (lambda t: t.replace('"omitted":{"local_references":1', '"omitted":{"local_references":0'), "bundle-tampered"),
        (lambda t: json.dumps(json.loads(t), indent=1), "bundle-malformed"),
        (lambda t: t[: len(t) // 2], "bundle-malformed"),
        (lambda t: t.replace('"bundle_version":1', '"bundle_version":9'), "bundle-version"),
        (lambda t: t + "{}", "bundle-malformed"),
    ],
    ids=["record-edited", "omitted-edited", "pretty-printed", "truncated", "version", "trailing"],
)
def test_a_tampered_or_malformed_bundle_is_refused_and_imports_nothing(
    wp: Runner, repo: Path, tmp_path: Path, edit: Any, code: str
) -> None:
    firsts = {_history(wp, repo)[0], _history(wp, repo, "second-work")[0]}
    bundle = tmp_path / "b.json"
    assert wp("export", "--all", "--out", str(bundle), cwd=repo).code == 0
    bundle.write_text(edit(bundle.read_text(encoding="utf-8")), encoding="utf-8")
    home = tmp_path / "fresh"
    done = wp("import", str(bundle), cwd=repo, env={"WHEYPOINT_HOME": str(home)})
    assert done.code == 1 and done.json["error"]["code"] == code, done.stdout
    if code == "bundle-tampered" and "Cap" in str(edit.__code__.co_consts):
        assert done.json["error"]["revision"] in firsts  # the first bad revision is named (of the first work listed)
    assert _store_bytes(home) == []  # all or nothing: not even the first, good work


def _copied_to_another_store(wp: Runner, repo: Path, tmp_path: Path) -> tuple[list[str], Path, dict[str, str]]:
    """A three-revision work exported and imported into a second store: (its revisions, the bundle, that env)."""
    revisions = _history(wp, repo)
    bundle = tmp_path / "b.json"
    assert wp("export", "retry-backoff", "--out", str(bundle), cwd=repo).code == 0
    other = {"WHEYPOINT_HOME": str(tmp_path / "other")}
    assert wp("import", str(bundle), cwd=repo, env=other).code == 0
    return revisions, bundle, other


def test_a_diverging_history_is_a_conflict_naming_the_common_ancestor(wp: Runner, repo: Path, tmp_path: Path) -> None:
    revisions, bundle, other = _copied_to_another_store(wp, repo, tmp_path)
    # Here the work goes on one way; there, another way from the same head.
    mine = wp("checkpoint", "retry-backoff", "--base", revisions[2], "--orientation", "Mine.", cwd=repo)
    theirs = wp("checkpoint", "retry-backoff", "--base", revisions[2], "--orientation", "Theirs.", cwd=repo,
                env=other)  # fmt: skip
    assert mine.code == theirs.code == 0
    assert wp("export", "retry-backoff", "--out", str(bundle), cwd=repo).code == 0
    before = _store_bytes(tmp_path / "other")
    done = wp("import", str(bundle), cwd=repo, env=other)
    assert done.json["error"]["code"] == "import-conflict", done.stdout
    assert done.json["error"]["common_ancestor"] == revisions[2]
    assert done.json["error"]["store_head"] == theirs.json["revision_id"]
    assert _store_bytes(tmp_path / "other") == before


def test_a_store_behind_the_bundle_is_brought_forward(wp: Runner, repo: Path, tmp_path: Path) -> None:
    revisions, bundle, other = _copied_to_another_store(wp, repo, tmp_path)
    later = wp("checkpoint", "retry-backoff", "--base", revisions[2], "--orientation", "Shipped.", cwd=repo)
    assert wp("export", "retry-backoff", "--out", str(bundle), cwd=repo).code == 0
    done = wp("import", str(bundle), cwd=repo, env=other).json
    assert (done["written"], done["already_present"]) == (1, 3)
    assert wp("show", "retry-backoff", "--format", "json", cwd=repo, env=other).json["record"]["revision_id"] == (
        later.json["revision_id"])  # fmt: skip


def test_import_as_renames_the_work_and_stays_idempotent(wp: Runner, repo: Path, tmp_path: Path) -> None:
    _history(wp, repo)
    bundle = tmp_path / "b.json"
    assert wp("export", "retry-backoff", "--out", str(bundle), "--include-operator", "--include-local",
              cwd=repo).code == 0  # fmt: skip
    first = wp("import", str(bundle), "--as", "retry-copy", "--no-note", cwd=repo)
    assert first.code == 0 and first.json["written"] == 3, first.stdout
    copy = _chain(wp, repo, "retry-copy")
    original = _chain(wp, repo, "retry-backoff")
    assert [r["slug"] for r in copy] == ["retry-copy"] * 3 and copy[0]["work_id"] != original[0]["work_id"]
    assert [r["orientation"] for r in copy] == [r["orientation"] for r in original]
    assert {r["revision_id"] for r in copy}.isdisjoint(r["revision_id"] for r in original)
    assert wp("import", str(bundle), "--as", "retry-copy", "--no-note", cwd=repo).json["written"] == 0
    many = tmp_path / "all.json"
    assert wp("export", "--all", "--out", str(many), cwd=repo).code == 0
    assert wp("import", str(many), "--as", "x", cwd=repo).json["error"]["code"] == "usage"


def test_export_and_import_refuse_what_they_cannot_do(wp: Runner, repo: Path, tmp_path: Path) -> None:
    _history(wp, repo)
    assert wp("export", cwd=repo).json["error"]["code"] == "usage"  # neither a work nor --all
    assert wp("export", "retry-backoff", "--all", cwd=repo).json["error"]["code"] == "usage"
    assert wp("export", "nonesuch", cwd=repo).json["error"]["code"] == "record-missing"
    blocked = tmp_path / "file"
    blocked.write_text("x")
    assert wp("export", "retry-backoff", "--out", str(blocked / "b.json"), cwd=repo).json["error"]["code"] == (
        "bundle-unwritable")  # fmt: skip
    assert wp("import", str(tmp_path / "missing.json"), cwd=repo).json["error"]["code"] == "bundle-unreadable"
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"bundle_digest":"sha256:' + b"\xff" * 10)
    assert wp("import", str(bad), cwd=repo).json["error"]["code"] in ("invalid-utf8", "bundle-malformed")


def test_a_terminal_gets_a_progress_line_and_a_pipe_does_not(repo: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_")}
    env["WHEYPOINT_HOME"] = str(tmp_path / "home")
    for n in range(3):
        subprocess.run([sys.executable, "-m", "wheypoint", "checkpoint", f"w-{n}", "--orientation", "o", "--next",
                        "hold", "--decision", "d", "--rationale", "r", "--no-note"], cwd=repo, env=env, check=True,
                       capture_output=True)  # fmt: skip
    argv = [sys.executable, "-m", "wheypoint", "export", "--all", "--out", str(tmp_path / "b.json")]
    leader, follower = pty.openpty()
    done = subprocess.run(argv, cwd=repo, env=env, stdout=subprocess.PIPE, stderr=follower, check=False)
    os.close(follower)
    seen = drained(leader)
    assert done.returncode == 0 and b"exported 3/3 works" in seen, seen
    piped = subprocess.run(argv, cwd=repo, env=env, capture_output=True, check=False)
    assert piped.returncode == 0 and piped.stderr == b""


# ---- the round trip, as a property: whatever the histories, export then import gives the same records and notes

_words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1,
                 max_size=40).map(str.strip).filter(bool)  # fmt: skip


@st.composite
def histories(draw: Any) -> list[list[list[str]]]:
    """Works, each a list of checkpoints, each checkpoint the flags after the slug."""
    works = []
    for _ in range(draw(st.integers(1, 3))):
        steps = [["--orientation", f"Start {draw(_words)}.", "--next", "hold", "--decision", draw(_words),
                  "--rationale", draw(_words)]]  # fmt: skip
        for _ in range(draw(st.integers(0, 3))):
            kind = draw(st.sampled_from(["decision", "question", "notes", "directive"]))
            if kind == "decision":
                steps.append(["--decision", draw(_words), "--rationale", draw(_words)])
            elif kind == "question":
                steps.append(["--question", draw(_words), "--owner", draw(_words)])
            elif kind == "notes":
                steps.append(["--notes", draw(_words)])
            else:
                words = draw(_words)
                steps.append(["--directive", f"Keep {words}.", "--quote", words])
        works.append(steps)
    return works


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(histories())
def test_round_trip_property(tmp_path_factory: pytest.TempPathFactory, works: list[list[list[str]]]) -> None:
    from wheypoint.cli.main import main

    root = tmp_path_factory.mktemp("roundtrip")
    repo = make_repo(root / "shop", {"a.py": "x\n"})

    def run(home: Path, *args: str) -> dict[str, Any]:
        out = io.StringIO()
        saved = os.environ.get("WHEYPOINT_HOME"), os.getcwd()
        os.environ["WHEYPOINT_HOME"] = str(home)
        os.chdir(repo)
        try:
            with contextlib.redirect_stdout(out):
                main(list(args))
        finally:
            os.chdir(saved[1])
            if saved[0] is None:
                os.environ.pop("WHEYPOINT_HOME", None)
            else:
                os.environ["WHEYPOINT_HOME"] = saved[0]
        reply: dict[str, Any] = json.loads(out.getvalue())
        return reply

    home, fresh = root / "home", root / "fresh"
    for index, steps in enumerate(works):
        base = None
        for step in steps:
            reply = run(home, "checkpoint", f"work-{index}", *(["--base", base] if base else []), "--no-note", *step)
            if not reply["ok"]:  # a drawn text the contract refuses (a credential look-alike, say): skip the step
                continue
            base = reply["revision_id"]
    bundle = root / "b.json"
    assert run(home, "export", "--all", "--out", str(bundle), "--include-operator", "--include-local")["ok"]
    assert run(fresh, "import", str(bundle), "--no-note")["ok"]
    from wheypoint.notes.render import render
    from wheypoint.store import open_store
    from wheypoint.store.rows import WorkQuery

    source, target = open_store(home / "store.sqlite3", create=False), open_store(fresh / "store.sqlite3", create=False)
    try:
        listed = source.list_works(WorkQuery(limit=100))
        assert len(listed) == len(target.list_works(WorkQuery(limit=100))) >= 1
        for work in listed:
            mine = source.revisions(work.work_id)
            assert target.revisions(work.work_id) == mine  # receipts, digests and ids, byte for byte as JSON
            for receipt in mine:
                record = source.record(work.work_id, receipt["revision_id"])
                assert target.record(work.work_id, receipt["revision_id"]) == record
            head = source.record(work.work_id)
            assert head is not None and render(head) == render(target.record(work.work_id) or {})
    finally:
        source.close()
        target.close()


def test_export_takes_lists_filters_to_choose_the_works(wp: Runner, repo: Path, tmp_path: Path) -> None:
    _history(wp, repo)  # gated until the jitter question is answered
    assert wp("checkpoint", "calm-work", "--orientation", "Calm.", "--next", "hold", "--decision", "d", "--rationale",
              "r", cwd=repo).code == 0  # fmt: skip
    gated = wp("export", "--gated", "--out", str(tmp_path / "g.json"), cwd=repo).json
    assert gated["works"] == 1 and gated["revisions"] == 3, gated
    calm = wp("export", "--no-gated", "--grep", "Calm", "--out", str(tmp_path / "c.json"), cwd=repo).json
    assert calm["works"] == 1 and calm["revisions"] == 1, calm
    assert wp("export", "--all", "--out", str(tmp_path / "a.json"), cwd=repo).json["works"] == 2
    assert wp("export", "calm-work", "--gated", cwd=repo).json["error"]["code"] == "usage"


FAKE_TOKEN = "ghp_" + "".join(random.Random(20).choices("abcdefghijkLMNOPQRST0123456789", k=36))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("notes", f"The deploy key is {FAKE_TOKEN}."),  # a credential (generated, of GitHub's documented shape)
        ("orientation", "Backoff\u2028status: ok"),  # a line break in a one-line field
        ("orientation", "Backoff \u202eko :sutats"),  # a bidi override: a hidden character
    ],
    ids=["credential", "line-break", "hidden-character"],
)
def test_a_resealed_bundle_that_breaks_intake_rules_is_refused_and_imports_nothing(
    wp: Runner, repo: Path, tmp_path: Path, field: str, value: str
) -> None:
    from wheypoint.model.bundle import _reseal
    from wheypoint.model.canonical import canonical_text, digest

    _history(wp, repo)
    bundle = tmp_path / "b.json"
    assert wp("export", "retry-backoff", "--out", str(bundle), cwd=repo).code == 0
    data = json.loads(bundle.read_text(encoding="utf-8"))
    data.pop("bundle_digest")
    pair = data["works"][0]["revisions"][-1]
    pair["record"][field] = value
    _reseal(pair["record"], pair["revision"])  # the digests are unkeyed: anyone can make them true again
    data["bundle_digest"] = digest(data)
    bundle.write_text(canonical_text(data), encoding="utf-8")
    home = tmp_path / "fresh"
    done = wp("import", str(bundle), cwd=repo, env={"WHEYPOINT_HOME": str(home)})
    assert done.code == 1 and done.json["error"]["code"] == "bundle-unsafe", done.stdout
    assert done.json["error"]["revision"] == pair["record"]["revision_id"]
    assert FAKE_TOKEN not in done.stdout
    assert _store_bytes(home) == [] and not list(repo.glob(".cheese/notes/*.md.edited*"))


@pytest.mark.parametrize("kind", ["fifo", "folder", "device"])
def test_a_bundle_path_that_is_no_regular_file_is_refused_at_once(wp: Runner, repo: Path, tmp_path: Path,
                                                                  kind: str) -> None:  # fmt: skip
    path = tmp_path / "b.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path = Path("/dev/zero")
    done = wp("import", str(path), cwd=repo)  # the runner's timeout fails a read that waits or never ends
    assert done.code == 1 and done.json["error"]["code"] == "bundle-unreadable", done.stdout
