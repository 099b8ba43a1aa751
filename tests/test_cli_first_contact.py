"""The command line a person or an agent meets first (issue 21, section 2): real subprocesses and terminals."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import HARNESS_VARIABLES, Runner, make_repo

FIRST = ["checkpoint", "retry-backoff", "--orientation", "Retry backoff is designed.", "--next", "hold",
         "--decision", "Cap at 30 s.", "--rationale", "The gateway gives up at 45 s."]  # fmt: skip


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shop", {"retry.py": "a\nb\n"}, remote="git@github.com:Acme/Shop.git")


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_") and k not in HARNESS_VARIABLES}
    env["WHEYPOINT_HOME"] = str(home)
    return env


def _on_a_terminal(argv: list[str], cwd: Path, home: Path) -> tuple[int, str]:
    """Run wheypoint with stdout and stderr on one terminal, as a person sees it: (exit code, what was shown)."""
    leader, follower = pty.openpty()
    done = subprocess.run([sys.executable, "-m", "wheypoint", *argv], cwd=cwd, env=_env(home), stdin=subprocess.DEVNULL,
                          stdout=follower, stderr=follower, timeout=60, check=False)  # fmt: skip
    os.close(follower)
    return done.returncode, drained(leader).decode("utf-8")


def drained(leader: int) -> bytes:
    """Everything a terminal showed once its other end is closed (the read ends in EIO), then the terminal closed."""
    seen = b""
    with contextlib.suppress(OSError):
        while chunk := os.read(leader, 4096):
            seen += chunk
    os.close(leader)
    return seen


def test_bare_wheypoint_shows_the_command_list(wp: Runner, tmp_path: Path) -> None:
    code, seen = _on_a_terminal([], tmp_path, tmp_path / "home")  # a person: the list, as --help shows it
    assert code == 2 and seen.startswith("usage: wheypoint") and "wheypoint: refused" not in seen
    for name in ("checkpoint", "show", "resolve", "list", "snapshot"):
        assert f"\n  {name} " in seen.replace("\r\n", "\n")
    reply = wp()  # a program: still one JSON document, naming every command and where help is
    error = reply.json["error"]
    assert reply.code == 2 and error["code"] == "usage" and "wheypoint --help" in error["message"]
    assert all(name in error["message"] for name in ("checkpoint", "show", "resolve", "list", "snapshot"))


def test_a_refusal_on_a_terminal_is_printed_once(repo: Path, tmp_path: Path) -> None:
    for argv in (["show", "nonesuch"], ["show", "nonesuch", "--format", "text"], ["show", "nonesuch", "--format=text"],
                 ["checkpoint", "con", "--orientation", "o", "--next", "hold", "--notes", "n"],
                 ["list", "--limit", "zero"]):  # fmt: skip
        code, seen = _on_a_terminal(argv, repo, tmp_path / "home")
        assert code in (1, 2) and seen.count("refused") == 1 and '"ok": false' not in seen, (argv, seen)
    # Asked for JSON on a terminal, a refusal is the JSON alone.
    code, seen = _on_a_terminal(["show", "nonesuch", "--format", "json"], repo, tmp_path / "home")
    assert code == 1 and json.loads(seen)["error"]["code"] == "record-missing" and "refused:" not in seen


@pytest.mark.parametrize("argv", [["show", "nonesuch"], ["show", "retry-backoff"], ["log", "retry-backoff"],
                                  ["list"], ["resolve", "retry-backoff"], ["schema", "checkpoint-intent"],
                                  ["--help"], ["checkpoint", "--help"], ["--version"], ["bogus"],
                                  ["show", "retry-backoff", "--format", "text"]])  # fmt: skip
def test_a_reader_that_went_away_gets_no_traceback(argv: list[str], repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    subprocess.run([sys.executable, "-m", "wheypoint", *FIRST], cwd=repo, env=_env(home), check=True,
                   capture_output=True)  # fmt: skip
    process = subprocess.Popen([sys.executable, "-m", "wheypoint", *argv], cwd=repo, env=_env(home),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # `| head -0`: the reader is gone before the first byte
    stderr = process.stderr.read().decode("utf-8")
    process.wait(timeout=60)
    process.stderr.close()
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
    assert process.returncode in (0, 1, 2)


def test_checkpoint_help_lists_every_flag_the_flag_form_reads(wp: Runner) -> None:
    from wheypoint.cli.commands import INTENT_FLAGS
    from wheypoint.cli.flags import ITEM_FLAGS, MODIFIERS, SCALARS

    read = set(ITEM_FLAGS) | set(MODIFIERS) | set(SCALARS)
    assert {option.flag for option in INTENT_FLAGS} == read
    for command in ("checkpoint", "validate"):
        table = wp(command, "--help").stdout.split("\nexample:")[0]
        missing = [flag for flag in sorted(read) if f"\n  {flag} " not in table]
        assert not missing, f"{command} --help has no row for {missing}"
    snapshot = wp("snapshot", "--help").stdout.split("\nexample:")[0]
    assert all(f"\n  {flag} " in snapshot for flag in ("--meat", "--type", "--weight", "--redact"))


def test_seed_one_spellings_are_answered_with_a_deprecated_note(wp: Runner, repo: Path, tmp_path: Path) -> None:
    made = wp(*FIRST, cwd=repo).json
    for argv, current in ((["show", "--work-id", made["work_id"]], "wheypoint show <work>"),
                          (["log", "--work-id=retry-backoff"], "wheypoint log <work>"),
                          (["resolve", "--ref", "retry-backoff"], "wheypoint resolve <ref>")):  # fmt: skip
        reply = wp(*argv, "--format", "json", cwd=repo)
        assert reply.code == 0, reply.stdout
        out = reply.json
        assert out["ok"] and out["work_id"] == made["work_id"]
        (note,) = out["deprecated"]
        assert note["used"] == f"{argv[0]} {argv[1].partition('=')[0]}" and note["instead"] == current
        assert current in note["message"]
    assert "deprecated" not in wp("show", "retry-backoff", cwd=repo).json  # the current form has no note
    both = wp("show", "retry-backoff", "--work-id", "retry-backoff", cwd=repo)
    assert both.code == 2 and both.json["error"]["code"] == "usage"
    # `validate < intent.json`: a file redirected in, and a pipe, with no `-` to ask for standard input.
    intent = {"slug": "seed-one", "orientation": "From seed 1.", "next": {"move": "hold"}, "notes": "n"}
    path = tmp_path / "intent.json"
    path.write_text(json.dumps(intent), encoding="utf-8")
    with path.open("rb") as handle:
        done = subprocess.run([sys.executable, "-m", "wheypoint", "validate"], stdin=handle, cwd=repo,
                              env=_env(tmp_path / "home"), capture_output=True, check=False)  # fmt: skip
    out = json.loads(done.stdout)
    assert done.returncode == 0 and out["valid"]
    assert out["deprecated"][0]["instead"] == "wheypoint validate - < intent.json"
    piped = wp("checkpoint", stdin=json.dumps(intent), cwd=repo)
    assert piped.code == 0 and piped.json["revision_number"] == 1 and piped.json["deprecated"], piped.stdout
    # With nothing on standard input the usage refusal stays.
    empty = wp("validate", stdin=b"", cwd=repo)
    assert empty.code == 2 and "give an intent" in empty.json["error"]["message"]


def test_text_forms_carry_the_ids_and_the_author(wp: Runner, repo: Path) -> None:
    made = wp(*FIRST, "--question", "Full or equal jitter?", "--format", "text", cwd=repo)
    assert made.code == 0
    record = wp("show", "retry-backoff", "--format", "json", cwd=repo).json["record"]
    for entry in record["entries"]:  # each id the next --resolve, --supersede or --move names
        assert f"added {entry['id']}" in made.stdout
    question = next(e["id"] for e in record["entries"] if e["kind"] == "question")
    settled = wp("checkpoint", "retry-backoff", "--base", record["revision_id"], "--resolve", question,
                 "--rationale", "Full.", "--format", "text", cwd=repo).stdout  # fmt: skip
    assert f"{question} resolve" in settled
    log = wp("log", "retry-backoff", "--format", "text", cwd=repo).stdout
    assert "test@example.invalid" in log.splitlines()[1]


def test_list_and_resolve_text_say_everything_they_cut(wp: Runner, repo: Path) -> None:
    question = "Should the retry budget be shared across every client of the payment gateway or per client?"
    assert wp("checkpoint", "budget", "--orientation", "Budget.", "--next", "hold", "--question", question,
              "--gates", "--rationale", "Open.", cwd=repo).code == 0  # fmt: skip
    listed = wp("list", "--format", "text", cwd=repo).stdout
    row = next(line for line in listed.splitlines() if line.startswith("budget "))
    assert "\u2026" in row and f"gated: {question}" in listed
    resolved = wp("resolve", "budget", "--format", "text", cwd=repo).stdout
    assert "owner no owner" not in resolved and "no owner named" in resolved


def test_snapshot_takes_seed_three_types_only(wp: Runner, tmp_path: Path) -> None:
    example = wp("snapshot", "--help").stdout.split("\nexample:\n")[1]
    from wheypoint.model.contract import MEAT_TYPES

    assert example.split("--type ")[1].split()[0] in MEAT_TYPES
    for extra in (["--type", "directive"], []):
        done = wp("snapshot", "--stream", "s", "--meat", "u-1", *extra, "--transcript", str(tmp_path / "none.jsonl"),
                  "--out", str(tmp_path))  # fmt: skip
        error = done.json["error"]
        assert done.code == 2 and error["code"] == "unknown-meat-type", done.stdout
        assert all(kind in error["message"] for kind in MEAT_TYPES)
    assert not list(tmp_path.glob("CHECKPOINT-*"))


@pytest.mark.parametrize("slug", ["con", "nul", "com1", "lpt9"])
def test_a_device_name_slug_is_named_as_one(wp: Runner, repo: Path, slug: str) -> None:
    done = wp("checkpoint", slug, "--orientation", "O.", "--next", "hold", "--notes", "n", cwd=repo)
    (problem,) = done.json["error"]["problems"]
    assert problem["code"] == "reserved-slug" and "device name Windows reserves" in problem["message"]
    assert f"{slug}-work" in problem["message"]


def test_split_refusals_speak_split_flags_once_each(wp: Runner, repo: Path) -> None:
    assert wp("checkpoint", "two", "--orientation", "T.", "--next", "hold", "--decision", "D.", "--rationale", "R.",
              "--question", "Q?", cwd=repo).code == 0  # fmt: skip
    ids = {e["kind"]: e["id"] for e in wp("show", "two", "--format", "json", cwd=repo).json["record"]["entries"]}
    sides = ["--first-orientation", "A.", "--second-orientation", "B."]
    cases = [["--both", ids["question"], "--both", "nope"], ["--to-first", ids["question"], "--to-first",
             ids["question"]], []]  # fmt: skip
    for extra in cases:
        done = wp("split", "two", "t-a", "t-b", *sides, *extra, cwd=repo)
        problems = done.json["error"]["problems"]
        messages = [p["message"] for p in problems]
        assert done.code == 1 and len(messages) == len(set(messages)), messages
        assert not any("--move" in m or "--copy" in m for m in messages), messages
    assert wp("list", "--format", "json", cwd=repo).json["count"] == 1  # nothing was written


def test_a_thread_of_notes_alone_can_be_split(wp: Runner, repo: Path) -> None:
    assert wp("checkpoint", "notes-only", "--orientation", "Two threads in notes.", "--next", "hold", "--notes",
              "The API half and the UI half.", cwd=repo).code == 0  # fmt: skip
    done = wp("split", "notes-only", "n-api", "n-ui", "--first-orientation", "The API half.",
              "--second-orientation", "The UI half.", cwd=repo)  # fmt: skip
    assert done.code == 0, done.stdout
    for child in done.json["children"]:
        record = wp("show", child["slug"], "--format", "json", cwd=repo).json["record"]
        assert record["notes"] == "The API half and the UI half."
        assert record["edges"][0]["kind"] == "forked_from"


def test_export_without_out_keeps_the_bundle_out_of_git(wp: Runner, repo: Path, tmp_path: Path) -> None:
    from conftest import git

    assert wp(*FIRST, "--no-note", cwd=repo).code == 0
    done = wp("export", "retry-backoff", cwd=repo)
    assert done.code == 0, done.stdout
    path = Path(done.json["path"])
    assert path == repo / ".cheese" / "bundles" / "retry-backoff.bundle.json" and path.is_file()
    assert not list(repo.glob("*.bundle.json"))  # nothing at the top, where `git add -A` takes it
    git(repo, "add", "-A")
    assert "bundle" not in git(repo, "status", "--porcelain"), git(repo, "status", "--porcelain")
    again = wp("export", "--all", cwd=repo)  # a second export reuses the folder and its ignore file
    assert again.code == 0 and Path(again.json["path"]).parent == path.parent
    assert wp("import", str(path), cwd=repo).json["ok"]
    outside = tmp_path / "plain"
    outside.mkdir()
    elsewhere = wp("export", "retry-backoff", cwd=outside)  # no checkout: the current folder, as before
    assert elsewhere.code == 0 and Path(elsewhere.json["path"]) == outside / "retry-backoff.bundle.json"
