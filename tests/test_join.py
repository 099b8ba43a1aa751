"""`wheypoint join`: two works merged field by field into a new one; contradictions become gates; parents move on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import Runner, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shop", {"a.py": "x\n"}, remote="git@github.com:Acme/Shop.git")


def _ids(wp: Runner, repo: Path, slug: str) -> dict[str, Any]:
    record = wp("show", slug, "--format", "json", cwd=repo).json["record"]
    return {"revision": record["revision_id"], **{e["text"]: e["id"] for e in record["entries"]}}


def test_join_unions_entries_keeps_one_decision_and_moves_both_parents_on(wp: Runner, repo: Path) -> None:
    assert wp("checkpoint", "alpha", "--orientation", "Alpha.", "--next", "hold", "--directive", "Never retry POSTs.",
              "--quote", "never retry posts", "--decision", "Cap at 30 s.", "--rationale", "Gateway.",
              "--question", "Full jitter?", "--owner", "lead", "--context", "a.py:1", cwd=repo).code == 0  # fmt: skip
    assert wp("checkpoint", "gamma", "--orientation", "Gamma.", "--next", "hold", "--decision", "cap at  30 s.",
              "--rationale", "Same words.", "--operator-directive", "Be brief.", "--operator-quote", "be brief",
              "--decision", "Log each retry.", "--rationale", "Ops.", cwd=repo).code == 0  # fmt: skip
    alpha, gamma = _ids(wp, repo, "alpha"), _ids(wp, repo, "gamma")
    done = wp("join", "alpha", "gamma", "retry-all", "--orientation", "Both threads in one.", cwd=repo)
    assert done.code == 0, done.stdout
    joined = wp("show", "retry-all", "--format", "json", cwd=repo).json["record"]
    texts = [(e["id"], e["text"]) for e in joined["entries"]]
    assert texts == [(alpha["Never retry POSTs."], "Never retry POSTs."), (alpha["Cap at 30 s."], "Cap at 30 s."),
                     (alpha["Full jitter?"], "Full jitter?"), (gamma["Be brief."], "Be brief."),
                     (gamma["Log each retry."], "Log each retry.")]  # ids kept; gamma's same decision once  # fmt: skip
    assert joined["status"] == "ok" and done.json["contradictions"] == []
    assert [e["kind"] for e in joined["edges"]] == ["joined_from", "joined_from"]
    assert [e["revision"] for e in joined["edges"]] == [alpha["revision"], gamma["revision"]]
    assert joined["working_context"][0].startswith("a.py:1@")
    note = Path(done.json["joined"]["note_path"]).read_text(encoding="utf-8")
    preamble = note.split("\n\n")[0]
    assert "parents: [alpha, gamma]" in preamble.split("\n")  # by slug; the refs are in Lineage
    assert f"- parent: {joined['edges'][0]['ref']} at `{alpha['revision']}` (joined in r1)" in note
    assert "(joined in r1)" in note and wp("lint", done.json["joined"]["note_path"], cwd=repo).json["ok"]
    # Both parents are moved on: nothing active, a joined_into edge, and resolve sends a resumer to the join.
    for slug in ("alpha", "gamma"):
        record = wp("show", slug, "--format", "json", cwd=repo).json["record"]
        assert not [e for e in record["entries"] if e["state"] == "active"]
        assert record["edges"][-1]["kind"] == "joined_into"
        found = wp("resolve", slug, cwd=repo).json
        assert found["outcome"] == "gated" and "superseded-by-fork" in [f["code"] for f in found["findings"]]


def test_a_contradiction_becomes_a_gate_of_the_joined_work_never_a_choice(wp: Runner, repo: Path) -> None:
    made = wp("checkpoint", "alpha", "--orientation", "Alpha.", "--next", "hold", "--decision", "Cap at 30 s.",
              "--rationale", "Gateway.", "--decision", "Use full jitter.", "--rationale", "Spread.",
              cwd=repo)  # fmt: skip
    assert made.code == 0
    alpha = _ids(wp, repo, "alpha")
    forked = wp("fork", "alpha", "beta", "--orientation", "Beta.", "--copy", alpha["Cap at 30 s."], cwd=repo).json
    # beta drops the cap that alpha still holds
    dropped = wp("checkpoint", "beta", "--base", forked["child"]["revision_id"], "--withdraw", alpha["Cap at 30 s."],
                 "--rationale", "No cap after all.", cwd=repo)  # fmt: skip
    assert dropped.code == 0, dropped.stdout
    done = wp("join", "alpha", "beta", "retry-all", "--orientation", "Merged.", cwd=repo)
    assert done.code == 0, done.stdout
    (conflict,) = done.json["contradictions"]
    assert (conflict["entry"], conflict["state"]) == (alpha["Cap at 30 s."], "withdrawn")
    joined = wp("show", "retry-all", "--format", "json", cwd=repo).json["record"]
    assert alpha["Cap at 30 s."] not in [e["id"] for e in joined["entries"]]  # neither side is picked
    gate = next(e for e in joined["entries"] if e["kind"] == "question")
    assert gate["gates"] and gate["text"] == "Keep 'Cap at 30 s.'? withdrawn in beta, active in alpha"
    assert joined["status"] == f"gated: {gate['text']}"
    # The ids and the states are in the gate's rationale, not on the status line.
    assert f"decision {alpha['Cap at 30 s.']} ('Cap at 30 s.') is active in alpha." in gate["rationale"]
    assert "but withdrawn in beta." in gate["rationale"]


def test_a_join_gate_asks_a_short_question_whatever_the_entry_says(wp: Runner, repo: Path) -> None:
    long = "Cap the backoff at thirty seconds because the gateway gives up at forty-five and the client must not hang."
    assert wp("checkpoint", "alpha", "--orientation", "Alpha.", "--next", "hold", "--decision", long,
              "--rationale", "Gateway.", cwd=repo).code == 0  # fmt: skip
    cap = _ids(wp, repo, "alpha")[long]
    forked = wp("fork", "alpha", "beta", "--orientation", "Beta.", "--copy", cap, cwd=repo).json
    assert wp("checkpoint", "beta", "--base", forked["child"]["revision_id"], "--withdraw", cap, "--rationale",
              "No cap.", cwd=repo).code == 0  # fmt: skip
    assert wp("join", "alpha", "beta", "retry-all", "--orientation", "Merged.", cwd=repo).code == 0
    joined = wp("show", "retry-all", "--format", "json", cwd=repo).json["record"]
    assert len(joined["status"]) <= 100, joined["status"]
    listed = wp("list", "--format", "text", cwd=repo).stdout
    assert joined["status"] in listed  # the whole status, even where its column is cut


def test_a_wrong_join_is_refused_and_writes_nothing(wp: Runner, repo: Path) -> None:
    assert wp("checkpoint", "alpha", "--orientation", "A.", "--next", "hold", "--decision", "d", "--rationale", "r",
              cwd=repo).code == 0  # fmt: skip
    assert wp("checkpoint", "other", "--orientation", "O.", "--next", "hold", "--decision", "e", "--rationale", "r",
              cwd=repo).code == 0  # fmt: skip
    before = wp("list", "--format", "json", cwd=repo).json["works"]
    cases = [(["alpha", "alpha", "x"], "join-same-work"), (["alpha", "nonesuch", "x"], "record-missing"),
             (["alpha", "other", "other"], "work-exists"),
             (["alpha", "other", "Bad Slug"], "invalid-intent")]  # fmt: skip
    for args, code in cases:
        done = wp("join", *args, "--orientation", "J.", cwd=repo)
        assert done.json["error"]["code"] == code, (args, done.stdout)
    assert wp("join", "alpha", "other", "x", cwd=repo).json["error"]["code"] == "usage"  # no orientation
    assert wp("list", "--format", "json", cwd=repo).json["works"] == before


def test_one_entry_replaced_differently_in_each_parent_keeps_both_successors_behind_a_gate(
    wp: Runner, repo: Path
) -> None:
    made = wp("checkpoint", "alpha", "--orientation", "Alpha.", "--next", "hold", "--decision", "Cap at 30 s.",
              "--rationale", "Gateway.", "--decision", "Log retries.", "--rationale", "Ops.", cwd=repo)  # fmt: skip
    assert made.code == 0
    alpha = _ids(wp, repo, "alpha")
    cap = alpha["Cap at 30 s."]
    forked = wp("fork", "alpha", "beta", "--orientation", "Beta.", "--copy", cap, cwd=repo).json
    for slug, base, words in (("alpha", forked["parent"]["revision_id"], "Cap at 20 s."),
                              ("beta", forked["child"]["revision_id"], "Cap at 60 s.")):  # fmt: skip
        done = wp("checkpoint", slug, "--base", base, "--decision", words, "--rationale", "New facts.", "--label",
                  "new", "--supersede", cap, "--by", "new", "--rationale", "Replaced.", cwd=repo)  # fmt: skip
        assert done.code == 0, done.stdout
    done = wp("join", "alpha", "beta", "retry-all", "--orientation", "Merged.", cwd=repo)
    assert done.code == 0, done.stdout
    (conflict,) = done.json["contradictions"]
    assert conflict["conflict"] == "two-successors" and conflict["entry"] == cap
    joined = wp("show", "retry-all", "--format", "json", cwd=repo).json["record"]
    texts = [e["text"] for e in joined["entries"] if e["kind"] == "decision"]
    assert "Cap at 20 s." in texts and "Cap at 60 s." in texts  # both carried, neither picked
    gate = next(e for e in joined["entries"] if e["kind"] == "question")
    assert gate["gates"] and gate["text"].startswith("Which replaces 'Cap at 30 s.': ")
    assert joined["status"].startswith("gated: ") and "was replaced by" in gate["rationale"]
