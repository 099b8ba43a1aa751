"""After a fork and then a join: resolve names where to resume (not a child since joined away), graph draws once."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from conftest import Runner, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shop", {"a.py": "x\n"}, remote="git@github.com:Acme/Shop.git")


def _made(wp: Runner, repo: Path, slug: str, decision: str) -> dict[str, str]:
    done = wp("checkpoint", slug, "--orientation", f"{slug} work.", "--next", "hold", "--decision", decision,
              "--rationale", "Because.", "--question", f"Open in {slug}?", cwd=repo)  # fmt: skip
    assert done.code == 0, done.stdout
    return {"work_id": done.json["work_id"], "decision": done.json["added"][0], "question": done.json["added"][1]}


@pytest.fixture
def lineage(wp: Runner, repo: Path) -> dict[str, dict[str, str]]:
    """alpha forked every entry to beta; beta then joined with gamma into retry-all."""
    alpha = _made(wp, repo, "alpha", "Cap at 30 s.")
    forked = wp("fork", "alpha", "beta", "--orientation", "All of alpha moves on.", "--move", alpha["question"],
                "--move", alpha["decision"], cwd=repo)  # fmt: skip
    assert forked.code == 0, forked.stdout
    gamma = _made(wp, repo, "gamma", "Log each retry.")
    joined = wp("join", "beta", "gamma", "retry-all", "--orientation", "Both in one.", cwd=repo)
    assert joined.code == 0, joined.stdout
    return {"alpha": alpha, "beta": {"work_id": forked.json["child"]["work_id"]}, "gamma": gamma,
            "joined": {"work_id": joined.json["joined"]["work_id"]}}  # fmt: skip


def test_resolve_sends_the_resumer_past_a_child_joined_away(wp: Runner, repo: Path,
                                                            lineage: dict[str, dict[str, str]]) -> None:  # fmt: skip
    found = wp("resolve", "alpha", "--format", "json", cwd=repo).json
    findings = {f["code"]: f["detail"] for f in found["findings"]}
    assert found["outcome"] == "gated" and "forked-to" in findings and "joined-into" not in findings, findings
    resume = findings["superseded-by-fork"]
    assert lineage["joined"]["work_id"] in resume and "retry-all" in resume, resume
    assert lineage["beta"]["work_id"] not in resume, resume  # beta holds nothing: it went on into retry-all
    beta = wp("resolve", "beta", "--format", "json", cwd=repo).json
    codes = [f["code"] for f in beta["findings"]]
    assert "joined-into" in codes and "forked-to" not in codes, beta["findings"]  # a join is not called a fork
    assert lineage["joined"]["work_id"] in {f["code"]: f["detail"] for f in beta["findings"]}["superseded-by-fork"]


def test_a_child_that_still_holds_work_stays_a_place_to_resume(wp: Runner, repo: Path) -> None:
    alpha = _made(wp, repo, "alpha", "Cap at 30 s.")
    one = wp("fork", "alpha", "beta", "--orientation", "The question.", "--move", alpha["question"], cwd=repo)
    two = wp("fork", "alpha", "delta", "--orientation", "The decision.", "--base", one.json["parent"]["revision_id"],
             "--move", alpha["decision"], cwd=repo)  # fmt: skip
    assert one.code == 0 and two.code == 0, (one.stdout, two.stdout)
    found = wp("resolve", "alpha", "--format", "json", cwd=repo).json
    resume = {f["code"]: f["detail"] for f in found["findings"]}["superseded-by-fork"]
    assert "beta (" in resume and "delta (" in resume, resume


def test_graph_draws_each_fork_and_join_once(wp: Runner, repo: Path, lineage: dict[str, dict[str, str]]) -> None:
    graph = wp("graph", "alpha", "--depth", "3", "--format", "json", cwd=repo).json
    pairs = Counter(frozenset((e["from"], e["to"])) for e in graph["edges"])
    assert pairs and max(pairs.values()) == 1, graph["edges"]
    kinds = Counter(e["kind"] for e in graph["edges"])
    assert kinds == {"forked_to": 1, "joined_into": 2}, kinds
    mermaid = wp("graph", "alpha", "--depth", "3", cwd=repo).stdout
    assert mermaid.count("-->|joined_into|") == 2 and "joined_from" not in mermaid, mermaid
