"""`diff` between revisions and `graph` around a work: changes named one by one; Mermaid and DOT parsed back."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from conftest import Runner, make_repo


@pytest.fixture
def scene(wp: Runner, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """retry-backoff (3 revisions, then forked), retry-jitter (its child, gated), payments (blocks the child)."""
    repo = make_repo(tmp_path / "shop", {"a.py": "x\n"}, remote="git@github.com:Acme/Shop.git")
    first = wp("checkpoint", "retry-backoff", "--orientation", "Designed.", "--next", "hold", "--decision",
               "Cap at 30 s.", "--rationale", "Gateway.", "--question", 'Full or "equal" <jitter>?', "--gates",
               "--rationale", "options: full | equal; leaning: full", cwd=repo).json  # fmt: skip
    question = first["added"][1]
    second = wp("checkpoint", "retry-backoff", "--base", first["revision_id"], "--decision", "Log each retry.",
                "--rationale", "Ops asked.", "--supersede", first["added"][0], "--by", "d-new", "--rationale",
                "Cap moved to 20 s.", "--notes", "Retries are logged.", cwd=repo)  # fmt: skip
    assert second.code == 1  # `--by d-new` names nothing: the write is refused and the chain stays at r1
    second = wp("checkpoint", "retry-backoff", "--base", first["revision_id"], "--decision", "Cap at 20 s.",
                "--rationale", "Ops asked.", "--label", "cap20", "--supersede", first["added"][0], "--by", "cap20",
                "--rationale", "Cap moved to 20 s.", "--notes", "Retries are logged.", "--context", "a.py:1",
                cwd=repo).json  # fmt: skip
    third = wp("checkpoint", "retry-backoff", "--base", second["revision_id"], "--orientation", "Built.", cwd=repo)
    forked = wp("fork", "retry-backoff", "retry-jitter", "--orientation", "Jitter apart.", "--move", question,
                cwd=repo).json  # fmt: skip
    payments = wp("checkpoint", "payments", "--orientation", "Payments.", "--next", "hold", "--decision", "v2.",
                  "--rationale", "v1 ends.", cwd=repo).json  # fmt: skip
    linked = wp("link", "retry-jitter", "payments", "--kind", "blocked_by", "--base",
                forked["child"]["revision_id"], cwd=repo)  # fmt: skip
    assert third.code == linked.code == 0
    return repo, {"first": first, "second": second, "question": question, "forked": forked, "payments": payments}


def test_diff_names_each_change_between_two_revisions(wp: Runner, scene: tuple[Path, dict[str, Any]]) -> None:
    repo, facts = scene
    first, second = facts["first"], facts["second"]
    done = wp("diff", "retry-backoff", "r1", "r2", cwd=repo).json
    assert (done["from"], done["to"]) == (first["revision_id"], second["revision_id"])
    changes = done["changes"]
    assert [e["text"] for e in changes["entries"]["added"]] == ["Cap at 20 s."]
    (settled,) = changes["entries"]["settled"]
    assert (settled["id"], settled["from"], settled["to"], settled["by"]) == (
        first["added"][0], "active", "superseded", second["added"][0])  # fmt: skip
    assert changes["notes"] == {"from": "", "to": "Retries are logged."}
    assert changes["working_context"]["added"][0].startswith("a.py:1@")
    assert "orientation" not in changes and changes["entries"]["moved"] == []
    # The default is the head against its parent: here, the fork's move.
    head = wp("diff", "retry-backoff", cwd=repo).json["changes"]
    assert [(m["id"], m["to_work"]) for m in head["entries"]["moved"]] == [
        (facts["question"], facts["forked"]["child"]["work_id"])]  # fmt: skip
    assert head["status"]["to"] == "ok" and head["edges"]["added"][0].startswith("forked_to ")
    text = wp("diff", "retry-backoff", "--format", "text", cwd=repo).stdout
    assert f"> {facts['question']} question: moved to {facts['forked']['child']['work_id']}" in text
    # A first revision is diffed against nothing; an unknown revision is refused.
    assert wp("diff", "payments", cwd=repo).json["changes"]["entries"]["added"][0]["text"] == "v2."
    assert wp("diff", "retry-backoff", "r9", cwd=repo).json["error"]["code"] == "revision-missing"


def _parse_mermaid(text: str) -> tuple[dict[str, tuple[str, bool]], set[tuple[str, str, str]]]:
    """Nodes (name -> label, gated) and edges (from, kind, to) of the flowchart, read back from its text."""
    lines = text.splitlines()
    assert lines[0] == "flowchart LR"
    nodes, edges = {}, set()
    for line in lines[1:]:
        if node := re.fullmatch(r'  (n\d+)(?:\["(.*)"\]|\(\["(.*)"\]\))(:::gated)?', line):
            label = node.group(2) if node.group(2) is not None else node.group(3)
            assert '"' not in label and "<" not in label.replace("<br/>", "")  # nothing can close the label
            nodes[node.group(1)] = (label, bool(node.group(4)))
        elif edge := re.fullmatch(r"  (n\d+) -->\|([a-z_]+)\| (n\d+)", line):
            edges.add((edge.group(1), edge.group(2), edge.group(3)))
        else:
            assert line.startswith("  classDef gated "), line
    return nodes, edges


def test_graph_draws_the_works_around_and_mermaid_reads_back(wp: Runner, scene: tuple[Path, dict[str, Any]]) -> None:
    repo, _ = scene
    reply = wp("graph", "retry-backoff", "--depth", "2", cwd=repo).json
    nodes, edges = _parse_mermaid(reply["mermaid"])
    slugs = {name: label.split("<br/>")[0] for name, (label, _) in nodes.items()}
    assert sorted(slugs.values()) == ["payments", "retry-backoff", "retry-jitter"]
    named = {(slugs[a], kind, slugs[b]) for a, kind, b in edges}
    assert named == {("retry-backoff", "forked_to", "retry-jitter"), ("retry-jitter", "blocked_by", "payments")}
    gated = {slugs[name] for name, (_, is_gated) in nodes.items() if is_gated}
    assert gated == {"retry-jitter"}
    assert "#quot;equal#quot; #lt;jitter#gt;" in reply["mermaid"]  # the gate's text, escaped inside its label
    # Depth 1 stops one edge away; JSON has the same graph without a picture; DOT has every node and edge.
    near = wp("graph", "retry-backoff", "--depth", "1", "--format", "json", cwd=repo).json
    assert sorted(n["slug"] for n in near["nodes"]) == ["retry-backoff", "retry-jitter"] and "mermaid" not in near
    drawn = wp("graph", "payments", "--depth", "2", "--format", "dot", cwd=repo).json["dot"]
    assert drawn.startswith("digraph wheypoint {") and drawn.rstrip().endswith("}")
    assert len(re.findall(r" -> ", drawn)) == 2 and len(re.findall(r"\[label=.*shape=box", drawn)) == 3


@pytest.mark.parametrize(("args", "code"), [(["--depth", "9"], "usage"), (["--depth", "x"], "usage"),
                                            (["--format", "png"], "usage")])  # fmt: skip
def test_graph_refuses_what_it_cannot_draw(wp: Runner, scene: tuple[Path, dict[str, Any]], args: list[str],
                                           code: str) -> None:  # fmt: skip
    repo, _ = scene
    assert wp("graph", "retry-backoff", *args, cwd=repo).json["error"]["code"] == code
