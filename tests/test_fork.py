"""`wheypoint fork`: a child's genesis and the parent's move in one transaction, both notes, lineage and refusals."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import Runner, make_repo

pytestmark = pytest.mark.skipif(os.name != "posix", reason="needs SIGKILL")


def _parent(wp: Runner, repo: Path, slug: str = "retry-backoff") -> dict[str, str]:
    """A work with a directive, a decision and a gating question; its entry ids by kind."""
    done = wp("checkpoint", slug, "--orientation", "Backoff is designed, not built.", "--next", "hold",
              "--directive", "Never retry a POST.", "--quote", "never retry posts",
              "--decision", "Cap the backoff at 30 s.", "--rationale", "The gateway gives up at 45 s.",
              "--question", "Full or equal jitter?", "--gates", "--rationale", "options: full | equal; leaning: full",
              "--owner", "payments lead", "--context", "retry.py:2", cwd=repo)  # fmt: skip
    assert done.code == 0, done.stdout
    record = wp("show", slug, "--format", "json", cwd=repo).json["record"]
    ids = {entry["kind"]: entry["id"] for entry in record["entries"]}
    ids["revision"] = record["revision_id"]
    return ids


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shop", {"retry.py": "a\nb\nc\n"}, remote="git@github.com:Acme/Shop.git")


def test_fork_moves_a_gate_copies_a_directive_and_links_both_works(wp: Runner, repo: Path) -> None:
    ids = _parent(wp, repo)
    done = wp("fork", "retry-backoff", "retry-jitter", "--orientation", "The jitter choice is split off.",
              "--move", ids["question"], "--copy", ids["directive"], cwd=repo)  # fmt: skip
    assert done.code == 0, done.stdout
    reply = done.json
    assert reply["replayed"] is False and reply["moved"] == [ids["question"]] and reply["copied"] == [ids["directive"]]
    child = wp("show", "retry-jitter", "--format", "json", cwd=repo).json
    parent = wp("show", "retry-backoff", "--format", "json", cwd=repo).json
    crecord, precord = child["record"], parent["record"]
    assert child["note"]["state"] == parent["note"]["state"] == "current"

    # The child: the moved gate and the copied directive, with their ids and words; gated by the gate it took.
    assert [(e["id"], e["kind"], e["state"]) for e in crecord["entries"]] == [
        (ids["directive"], "directive", "active"), (ids["question"], "question", "active")]  # fmt: skip
    assert crecord["status"] == "gated: Full or equal jitter?" and crecord["revision_number"] == 1
    assert crecord["edges"] == [{"ref": f"wheypoint:acme-shop/{precord['work_id']}", "kind": "forked_from",
                                 "added_in": 1, "revision": ids["revision"]}]  # fmt: skip
    assert crecord["working_context"] == precord["working_context"] and crecord["meat"] == []

    # The parent: the gate is settled as moved, the directive and decision stay; no longer gated.
    states = {e["id"]: e["state"] for e in precord["entries"]}
    assert states == {ids["directive"]: "active", ids["decision"]: "active", ids["question"]: "moved"}
    moved = next(e for e in precord["entries"] if e["id"] == ids["question"])
    assert moved["settled"]["to"] == crecord["work_id"] and moved["settled"]["action"] == "move"
    assert precord["status"] == "ok" and precord["revision_number"] == 2
    assert precord["edges"][-1] == {"ref": f"wheypoint:acme-shop/{crecord['work_id']}", "kind": "forked_to",
                                    "added_in": 2}  # fmt: skip
    log = wp("log", "retry-backoff", "--format", "json", cwd=repo).json["revisions"]
    assert log[-1]["transitioned"] == [{"entry": ids["question"], "action": "move", "to": crecord["work_id"]}]

    # Both notes say it: the child's preamble names its parent, and each has a Lineage section.
    child_note = Path(reply["child"]["note_path"]).read_text(encoding="utf-8")
    parent_note = Path(reply["parent"]["note_path"]).read_text(encoding="utf-8")
    assert "parents: [retry-backoff]" in child_note.split("\n\n")[0]  # seed 0 names parents by slug
    assert f"- parent: wheypoint:acme-shop/{precord['work_id']} at `{ids['revision']}`" in child_note
    assert f"- child: wheypoint:acme-shop/{crecord['work_id']} (forked at r2): took `{ids['question']}`" in parent_note
    assert "(question, moved at r2)" in parent_note
    for note in (reply["child"]["note_path"], reply["parent"]["note_path"]):
        assert wp("lint", note, cwd=repo).json["ok"] is True

    # Found from either side: the list filter, and resolve's findings on the parent.
    listed = wp("list", "--forked-from", precord["work_id"], "--format", "json", cwd=repo).json
    assert [w["slug"] for w in listed["works"]] == ["retry-jitter"]
    resolved = wp("resolve", "retry-backoff", cwd=repo).json
    assert resolved["outcome"] == "authoritative"
    assert [f["code"] for f in resolved["findings"]] == ["forked-to"]

    # The same fork again is a replay: nothing written, the same answer.
    again = wp("fork", "retry-backoff", "retry-jitter", "--orientation", "The jitter choice is split off.",
               "--move", ids["question"], "--copy", ids["directive"], cwd=repo)  # fmt: skip
    assert again.code == 0 and again.json["replayed"] is True
    assert again.json["child"]["revision_id"] == reply["child"]["revision_id"]
    assert len(wp("log", "retry-backoff", "--format", "json", cwd=repo).json["revisions"]) == 2


def test_a_parent_forked_empty_sends_a_resumer_to_the_child(wp: Runner, repo: Path) -> None:
    ids = _parent(wp, repo)
    done = wp("fork", "retry-backoff", "retry-v2", "--orientation", "All of it moves on.", "--move", ids["question"],
              "--move", ids["decision"], "--move", ids["directive"], cwd=repo)  # fmt: skip
    assert done.code == 0, done.stdout
    resolved = wp("resolve", "retry-backoff", cwd=repo).json
    assert resolved["outcome"] == "gated"
    codes = [f["code"] for f in resolved["findings"]]
    assert "superseded-by-fork" in codes and done.json["child"]["work_id"] in str(resolved["findings"])
    # A moved decision changes the parent's decisions: its notes and orientation are now behind them.
    assert {w["code"] for w in done.json["warnings"]} >= {"stale-orientation"}


@pytest.mark.parametrize(
    ("args", "code", "problems"),
    [
        (["nonesuch", "child", "--orientation", "o", "--move", "{question}"], "record-missing", []),
        (["retry-backoff", "child", "--orientation", "o"], "invalid-fork", ["empty-fork"]),
        (["retry-backoff", "child", "--orientation", "o", "--move", "q-000000000000"], "invalid-fork",
         ["unknown-entry"]),
        (["retry-backoff", "child", "--orientation", "o", "--move", "{question}", "--copy", "{question}"],
         "invalid-fork", ["fork-copy-open", "fork-overlap"]),
        (["retry-backoff", "child", "--orientation", "o", "--copy", "{decision}", "--move", "{decision}"],
         "invalid-fork", ["fork-overlap"]),
        (["retry-backoff", "child", "--orientation", "o", "--copy", "{decision}", "--copy", "{decision}"],
         "invalid-fork", ["fork-repeated"]),
        (["retry-backoff", "child", "--orientation", "o", "--dossier", "{decision}"], "invalid-fork",
         ["unknown-dossier"]),
        (["retry-backoff", "other-work", "--orientation", "o", "--move", "{question}"], "work-exists", []),
        (["retry-backoff", "Bad Slug", "--orientation", "o", "--move", "{question}"], "invalid-intent", ["bad-format"]),
        (["retry-backoff", "child", "--move", "{question}"], "usage", []),
        (["retry-backoff", "child", "--orientation", "o", "--move", "{question}", "--base", "rev-0000000000000000"],
         "unknown-base", []),
    ],
)  # fmt: skip
def test_a_wrong_fork_is_refused_and_writes_nothing(
    wp: Runner, repo: Path, args: list[str], code: str, problems: list[str]
) -> None:
    ids = _parent(wp, repo)
    assert wp("checkpoint", "other-work", "--orientation", "Another work.", "--next", "hold", "--decision", "d",
              "--rationale", "r", cwd=repo).code == 0  # fmt: skip
    before = wp("list", "--format", "json", cwd=repo).json["works"]
    done = wp("fork", *[a.format(**ids) for a in args], cwd=repo)
    assert done.code in (1, 2) and done.json["error"]["code"] == code, done.stdout
    assert sorted({p["code"] for p in done.json["error"].get("problems", [])}) == problems
    assert wp("list", "--format", "json", cwd=repo).json["works"] == before  # nothing written, no head moved


def test_a_stale_base_is_refused_and_an_inactive_entry_cannot_move(wp: Runner, repo: Path) -> None:
    ids = _parent(wp, repo)
    later = wp("checkpoint", "retry-backoff", "--base", ids["revision"], "--resolve", ids["question"],
               "--rationale", "Full jitter, the lead said.", cwd=repo)  # fmt: skip
    assert later.code == 0, later.stdout
    stale = wp("fork", "retry-backoff", "c", "--orientation", "o", "--move", ids["decision"], "--base", ids["revision"],
               cwd=repo)  # fmt: skip
    assert stale.json["error"]["code"] == "stale-parent"
    inactive = wp("fork", "retry-backoff", "c", "--orientation", "o", "--move", ids["question"], cwd=repo)
    assert [p["code"] for p in inactive.json["error"]["problems"]] == ["inactive-entry"]


# ---- both or neither: SIGKILL the fork at random instants


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_")}
    env["WHEYPOINT_HOME"] = str(home)
    return env


def test_a_fork_killed_at_any_instant_leaves_both_revisions_or_neither(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "shop", {"a.py": "x\n"})
    home = tmp_path / "home"
    rng = random.Random(20261201)
    attempts = 24
    for n in range(attempts):
        decisions = [a for k in range(30) for a in ("--decision", f"Decision {k}.", "--rationale", "r")]
        argv = [sys.executable, "-m", "wheypoint", "checkpoint", f"parent-{n}", "--orientation", "o", "--next", "hold",
                "--no-note", *decisions]  # fmt: skip
        subprocess.run(argv, cwd=repo, env=_env(home), capture_output=True, check=True, timeout=60)
    conn = sqlite3.connect(home / "store.sqlite3")
    entry_ids = {}
    for n in range(attempts):
        (record,) = conn.execute("SELECT record_json FROM revisions r JOIN works w ON w.head_revision_id = "
                                 "r.revision_id WHERE w.slug = ?", (f"parent-{n}",)).fetchone()  # fmt: skip
        entry_ids[n] = [e["id"] for e in json.loads(record)["entries"]]
    conn.close()
    timing = []
    outcomes = {"both": 0, "neither": 0}
    for n in range(attempts):
        moves = [a for entry in entry_ids[n][:15] for a in ("--move", entry)]
        argv = [sys.executable, "-m", "wheypoint", "fork", f"parent-{n}", f"child-{n}", "--orientation", "o", *moves]
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=repo, env=_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if n < 2:  # learn how long a whole fork takes, then kill the others anywhere inside that span
            proc.communicate(timeout=60)
            timing.append(time.perf_counter() - start)
        else:
            time.sleep(rng.uniform(0.3, 1.1) * max(timing))
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=60)
        conn = sqlite3.connect(home / "store.sqlite3")
        try:
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            child = conn.execute("SELECT head_revision_id FROM works WHERE slug = ?", (f"child-{n}",)).fetchone()
            (head_number,) = conn.execute("SELECT head_number FROM works WHERE slug = ?", (f"parent-{n}",)).fetchone()
            moved = conn.execute("SELECT count(*) FROM entries e JOIN works w ON w.work_id = e.work_id WHERE "
                                 "w.slug = ? AND e.state = 'moved'", (f"parent-{n}",)).fetchone()[0]  # fmt: skip
        finally:
            conn.close()
        if child is None:
            assert (head_number, moved) == (1, 0), f"fork {n}: the parent moved without its child"
            outcomes["neither"] += 1
        else:
            assert (head_number, moved) == (2, 15), f"fork {n}: the child exists without the parent's move"
            outcomes["both"] += 1
    assert outcomes["both"] >= 2 and outcomes["neither"] >= 1, outcomes  # the kills landed on both sides


# ---- split: two children at once, every active entry given to one side or both


def test_split_gives_every_entry_a_side_and_retires_the_parent(wp: Runner, repo: Path) -> None:
    ids = _parent(wp, repo)
    done = wp("split", "retry-backoff", "retry-api", "retry-ui", "--first-orientation", "The API side.",
              "--second-orientation", "The UI side.", "--to-first", ids["question"], "--to-second", ids["decision"],
              "--both", ids["directive"], cwd=repo)  # fmt: skip
    assert done.code == 0, done.stdout
    first, second = done.json["children"]
    assert (first["slug"], first["added"]) == ("retry-api", [ids["directive"], ids["question"]])
    assert (second["slug"], second["added"]) == ("retry-ui", [ids["directive"], ids["decision"]])
    assert first["status"].startswith("gated:") and second["status"] == "ok"
    log = wp("log", "retry-backoff", "--format", "json", cwd=repo).json["revisions"]
    assert [r["revision_number"] for r in log] == [1, 2, 3]  # one move to each child, committed together
    parent = wp("show", "retry-backoff", "--format", "json", cwd=repo).json["record"]
    assert {e["state"] for e in parent["entries"]} == {"moved"}
    assert [e["kind"] for e in parent["edges"]] == ["forked_to", "forked_to"]
    resolved = wp("resolve", "retry-backoff", cwd=repo).json
    assert resolved["outcome"] == "gated" and "superseded-by-fork" in [f["code"] for f in resolved["findings"]]
    for child in (first, second):
        note = Path(child["note_path"]).read_text(encoding="utf-8")
        assert f"parents: [{parent['slug']}]" in note.split("\n\n")[0]


@pytest.mark.parametrize(
    ("sides", "problems"),
    [
        (["--to-first", "{question}", "--to-second", "{decision}"], ["split-unassigned"]),
        (["--to-first", "{question}", "--to-second", "{decision}", "--both", "{directive}", "--both", "{question}"],
         ["fork-copy-open", "fork-overlap"]),
        (["--to-first", "{question}", "--to-first", "{decision}", "--to-second", "{decision}", "--both",
          "{directive}"], ["fork-overlap"]),
    ],
)  # fmt: skip
def test_a_wrong_split_is_refused_and_writes_nothing(
    wp: Runner, repo: Path, sides: list[str], problems: list[str]
) -> None:
    ids = _parent(wp, repo)
    done = wp("split", "retry-backoff", "retry-api", "retry-ui", "--first-orientation", "A.", "--second-orientation",
              "B.", *[a.format(**ids) for a in sides], cwd=repo)  # fmt: skip
    assert done.json["error"]["code"] == "invalid-fork", done.stdout
    assert sorted({p["code"] for p in done.json["error"]["problems"]}) == problems
    given = ["--to-first", ids["question"], "--to-second", ids["decision"], "--both", ids["directive"]]
    same = wp("split", "retry-backoff", "same", "same", "--first-orientation", "A.", "--second-orientation", "B.",
              *given, cwd=repo)  # fmt: skip
    assert "split-same-slug" in [p["code"] for p in same.json["error"]["problems"]]
    assert len(wp("log", "retry-backoff", "--format", "json", cwd=repo).json["revisions"]) == 1
    assert wp("show", "retry-api", cwd=repo).json["error"]["code"] == "record-missing"
