"""Every reply is one JSON document, coded, and never echoes a credential: the causes found by fuzzing, then a fuzz.

The causes each have a test of their own (real processes, both runtimes): lone surrogates in a JSON key or
value, undecodable bytes in an argument, integers past canonical JSON's range, a full disk while committing, a
store missing a table. Then every refusal path found echoing its input is sent a fake credential. Last, a seeded
fuzz over every front door (intents, command lines, bundles, hook payloads, MCP arguments, MCP sessions of many
lines, paths that are no regular file wherever a file is read), in this process
through the command line's own dispatch, and a sample of it as real processes; bench/fuzz_bench.py is the
long run of the same cases.
"""

from __future__ import annotations

import json
import os
import re
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import fuzzcases
from conftest import Runner, make_repo

TOKEN = fuzzcases.FAKE_TOKEN
FIRST = ["--orientation", "Retry backoff is designed.", "--next", "hold", "--notes", "Started."]
INTENT = {"slug": "retry-backoff", "orientation": "Retry backoff is designed.", "next": {"move": "hold"},
          "notes": "Started."}  # fmt: skip


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shop")


def _refused(reply: Any, code: str, exit_code: int = 1) -> dict[str, Any]:
    """The reply's error, after checking it is one JSON document refusing with `code` (stdout is UTF-8: the
    fixture decodes it strictly)."""
    assert "Traceback" not in reply.stderr, reply.stderr
    document = json.loads(reply.stdout)
    assert document["ok"] is False and document["error"]["code"] == code, reply.stdout
    assert reply.code == exit_code, reply.stdout
    return dict(document["error"])


# --- the causes -------------------------------------------------------------------------------------------------


def test_a_lone_surrogate_in_a_key_is_refused_by_its_path_not_echoed(wp: Runner, repo: Path) -> None:
    data = json.dumps({**INTENT, "\udc80x": 1}).encode("ascii")  # ASCII JSON: the key is the escape \udc80
    error = _refused(wp("validate", "-", cwd=repo, stdin=data), "lone-surrogate")
    assert error["path"] == '$["\\udc80x"]' and "U+DC80" in error["message"]


def test_a_lone_surrogate_in_a_value_is_refused_not_an_internal_error(wp: Runner, repo: Path) -> None:
    data = json.dumps({**INTENT, "orientation": "Backoff \ud800 designed."}).encode("ascii")
    for command in ("validate", "checkpoint"):
        error = _refused(wp(command, "-", cwd=repo, stdin=data), "lone-surrogate")
        assert error["path"] == "$.orientation" or error["path"] == '$["orientation"]'


def test_undecodable_bytes_in_an_argument_are_refused_in_utf8(wp: Runner, repo: Path) -> None:
    undecodable = os.fsdecode(b"ab\xff")  # what `show $'ab\xff'` hands the process
    for args in (("show", undecodable), ("validate", "x", "--orientation", undecodable, "--next", "hold")):
        error = _refused(wp(*args, cwd=repo), "invalid-utf8", exit_code=2)
        assert "0xff" in error["message"]


def test_integers_beyond_the_canonical_range_are_refused_without_converting_them(wp: Runner, repo: Path) -> None:
    for number in ("9" * 5000, str(2**53), str(-(2**53))):
        data = json.dumps(INTENT)[:-1] + f', "weight": {number}}}'
        error = _refused(wp("validate", "-", cwd=repo, stdin=data), "number-out-of-range")
        assert number.lstrip("-") not in error["message"]
    # 2^53-1 itself is canonical: it gets as far as the schema, which says the key is unknown.
    data = json.dumps({**INTENT, "weight": 2**53 - 1})
    error = _refused(wp("validate", "-", cwd=repo, stdin=data), "invalid-intent")
    assert [p["code"] for p in error["problems"]] == ["unknown-key"]


@pytest.mark.parametrize("args", [
    ("validate", "a" * 300, *FIRST), ("validate", "a" * 300 + ".json"), ("validate", "x", *FIRST, "--notes-file",
    "a" * 300), ("show", "a" * 300), ("resolve", "a" * 300), ("lint", "a" * 300), ("adopt", "a" * 300),
    ("snapshot", "--stream", "a" * 300), ("import", "a" * 300), ("export", "a" * 300), ("validate", "x", *FIRST,
    "--note-dir", "a" * 300), ("checkpoint", "x", *FIRST, "--note-dir", ("a" * 300 + "/") * 2),
    ("turns", "--transcript", "a" * 300), ("graph", "x", "--depth", "9" * 5000), ("resolve", "x", "--page", "9" * 30),
    ("turns", "--limit", "²"), ("show", "x", "--revision", "9" * 5000),
])  # fmt: skip
def test_names_and_numbers_too_long_for_the_system_are_coded_refusals(wp: Runner, repo: Path, args: tuple[str, ...]
                                                                      ) -> None:  # fmt: skip
    reply = wp(*args, cwd=repo)
    document = json.loads(reply.stdout)
    assert "Traceback" not in reply.stderr
    assert document["ok"] is True or document["error"]["code"] != "internal-error", reply.stdout


@pytest.mark.parametrize(("payload", "code"), [
    ({"session_id": 4}, "invalid-hook-payload"), ({"transcript_path": ["a"]}, "invalid-hook-payload"),
    ({"cwd": {"a": 1}}, "invalid-hook-payload"), ({"session_id": "s\u0000"}, "invalid-hook-payload"),
    ({"session_id": "\ud800"}, "lone-surrogate"),
])  # fmt: skip
def test_a_hook_payload_of_the_wrong_shape_is_refused_by_its_field(wp: Runner, repo: Path, payload: dict[str, Any],
                                                                   code: str) -> None:  # fmt: skip
    data = json.dumps(payload)  # ASCII: the surrogate and the NUL are escapes, as a harness would write them
    error = _refused(wp("validate", "x", *FIRST, "--hook-payload", "-", cwd=repo, stdin=data), code)
    assert next(iter(payload)) in error["message"]
    hook = wp("hook", "PreCompact", "--harness", "claude-code", cwd=repo, stdin=data)
    assert hook.code == 0 and "invalid-hook-payload" in json.loads(hook.stdout)["systemMessage"], hook.stdout


def _store_facts(home: Path) -> tuple[int, str]:
    with sqlite3.connect(home / "store.sqlite3") as conn:
        count = conn.execute("SELECT count(*) FROM revisions").fetchone()[0]
        check = conn.execute("PRAGMA integrity_check").fetchone()[0]
    return count, check


def _cli(home: Path, cwd: Path, *args: str, limit: int | None = None, code: str | None = None
         ) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """The package's CLI in a real process; with `limit`, no file it writes may grow past that many bytes."""

    def cap() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_")}
    env.update(WHEYPOINT_HOME=str(home), WHEYPOINT_PROJECT="shop")
    program = ["-c", code] if code else ["-m", "wheypoint"]
    return subprocess.run([sys.executable, *program, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          preexec_fn=cap, timeout=60, check=False)  # fmt: skip


NOTES = " ".join(f"word{n}" for n in range(900))[:5900]


def test_a_full_disk_while_committing_names_its_cause_and_leaves_the_store(repo: Path, tmp_path: Path) -> None:
    """A real write error: the process may not grow any file past the sizes the store's files have now (the
    kernel refuses the write with EFBIG, as a full disk refuses it with ENOSPC)."""
    home = tmp_path / "home"
    first = _cli(home, repo, "checkpoint", "retry-backoff", *FIRST, "--no-note")
    base = json.loads(first.stdout)["revision_id"]
    before = _store_facts(home)
    # The write-ahead log is the file a commit appends to (the store file grows only when the log is folded back);
    # on Python < 3.12 the last close folds and deletes it, and the next writer starts one from nothing.
    wal = home / "store.sqlite3-wal"
    limit = max(wal.stat().st_size if wal.exists() else 0, 4096)
    for args in (("checkpoint", "retry-backoff", "--base", base), ("checkpoint", "other-work", *FIRST[:4])):
        done = _cli(home, repo, *args, "--notes", NOTES, "--no-note", limit=limit)
        assert "Traceback" not in done.stderr, done.stderr
        error = json.loads(done.stdout)["error"]
        assert done.returncode == 1 and error["code"] in ("storage-full", "storage-error"), done.stdout
        assert "I/O error" in error["message"] or "full" in error["message"], done.stdout
        assert "rollback" not in error["message"]
        assert _store_facts(home) == before
    again = _cli(home, repo, "checkpoint", "retry-backoff", "--base", base, "--notes", NOTES, "--no-note")
    assert json.loads(again.stdout)["revision_number"] == 2, again.stdout


# SQLite's own "database or disk is full" (SQLITE_FULL), in a real process: every connection the CLI opens is
# allowed no page beyond those the file has.
_FULL_STORE = """
import sys
from wheypoint.store.sqlite import backend
connect = backend._connect
def capped(path, **kw):
    conn = connect(path, **kw)
    conn.execute(f"PRAGMA max_page_count = {conn.execute('PRAGMA page_count').fetchone()[0]}")
    return conn
backend._connect = capped
from wheypoint.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_store_that_is_full_is_refused_storage_full_and_left_unchanged(repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = _cli(home, repo, "checkpoint", "retry-backoff", *FIRST, "--no-note")
    base = json.loads(first.stdout)["revision_id"]
    before = _store_facts(home)
    for args in (("checkpoint", "retry-backoff", "--base", base), ("checkpoint", "other-work", *FIRST[:4])):
        done = _cli(home, repo, *args, "--notes", NOTES, "--no-note", code=_FULL_STORE)
        assert "Traceback" not in done.stderr, done.stderr
        error = json.loads(done.stdout)["error"]
        assert done.returncode == 1 and error["code"] == "storage-full", done.stdout
        assert "cannot write to the store" in error["message"] and "nothing was written" in error["message"]
        assert _store_facts(home) == before


@pytest.mark.parametrize("table", ["works", "revisions", "entries", "search"])
def test_a_store_missing_a_table_is_a_coded_refusal_for_every_command(repo: Path, tmp_path: Path, table: str) -> None:
    home = tmp_path / "home"
    first = json.loads(_cli(home, repo, "checkpoint", "retry-backoff", *FIRST, "--no-note").stdout)
    with sqlite3.connect(home / "store.sqlite3") as conn:
        conn.execute(f"DROP TABLE {table}")
    for args in (("checkpoint", "retry-backoff", "--base", first["revision_id"], "--notes", "More."),
                 ("checkpoint", "other-work", *FIRST), ("validate", "other-work", *FIRST), ("show", "retry-backoff"),
                 ("log", "retry-backoff"), ("list", "--grep", "backoff"), ("export", "--all")):  # fmt: skip
        done = _cli(home, repo, *args, "--no-note" if args[0] == "checkpoint" else "--format=json")
        reply = json.loads(done.stdout)
        assert "Traceback" not in done.stderr, (args, done.stderr)
        assert reply["ok"] is True or reply["error"]["code"] == "storage-error", (args, done.stdout)


# --- no reply echoes a credential ------------------------------------------------------------------------------


def _transcript(tmp_path: Path, repo: Path) -> str:
    path = tmp_path / "session.jsonl"
    lines = [{"type": "user", "uuid": f"u{n}", "sessionId": "s1", "cwd": str(repo),
              "timestamp": f"2026-11-30T10:0{n}:00Z", "message": {"role": "user", "content": f"prompt {n}"}}
             for n in range(3)]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return str(path)


SLUG = fuzzcases.SLUG_TOKEN
MEAT_TOKEN = ["--meat", TOKEN, "--type", "constraint"]
ECHO_PATHS: dict[str, tuple[list[str], str | None]] = {
    "unknown-key": (["validate", "-"], json.dumps({**INTENT, TOKEN: 1})),
    "duplicate-key": (["validate", "-"], f'{{"{TOKEN}": 1, "{TOKEN}": 2}}'),
    "work-slug-mismatch": (["validate", "-"], json.dumps({**INTENT, "work_id": f"{SLUG}.0123abcd"})),
    "work-id-unknown": (["validate", "-"], json.dumps({**INTENT, "work_id": f"{SLUG}.0123abcd", "slug": SLUG})),
    "covers-label": (["validate", "x", *FIRST, "--link", "x.md", "--covers", TOKEN], None),
    "covers-slug-label": (["validate", "x", *FIRST, "--link", "x.md", "--covers", "k" + SLUG.replace("-", "")], None),
    "positional-target": (["validate", TOKEN, *FIRST], None),
    "show-ref": (["show", TOKEN], None),
    "show-slug": (["show", SLUG], None),
    "log-ref": (["log", TOKEN], None),
    "resolve-ref": (["resolve", TOKEN], None),
    "handoff-ref": (["handoff", "render", TOKEN], None),
    "diff-ref": (["diff", "retry-backoff", TOKEN], None),
    "session": (["validate", "x", *FIRST, "--session", TOKEN], None),
    "unknown-command": ([TOKEN], None),
    "unknown-flag": (["list", "--" + TOKEN], None),
    "unknown-intent-flag": (["validate", "x", "--" + TOKEN], None),
    "schema": (["schema", TOKEN], None),
    "harness": (["turns", "--harness", TOKEN], None),
    "since": (["turns", "--transcript", "{transcript}", "--since", TOKEN], None),
    "kind": (["turns", "--transcript", "{transcript}", "--kind", TOKEN], None),
    "snapshot-stream": (["snapshot", "--stream", TOKEN, "--transcript", "{transcript}"], None),
    "snapshot-meat": (["snapshot", "--stream", "s", "--transcript", "{transcript}", *MEAT_TOKEN], None),
    "format": (["list", "--format", TOKEN], None),
    "limit": (["list", "--limit", TOKEN], None),
    "base": (["checkpoint", "retry-backoff", "--base", TOKEN, "--notes", "More."], None),
    "next": (["validate", "x", "--orientation", "o", "--next", TOKEN, "--notes", "n"], None),
    "hook-harness": (["hook", "PreCompact", "--harness", TOKEN], "{}"),
    "hook-event": (["hook", TOKEN, "--harness", "claude-code"], "{}"),
    "hook-payload": (["hook", "SessionStart", "--harness", "claude-code"], json.dumps({"session_id": TOKEN})),
}


@pytest.mark.parametrize("name", sorted(ECHO_PATHS))
def test_no_refusal_echoes_a_credential(wp: Runner, repo: Path, tmp_path: Path, name: str) -> None:
    args, stdin = ECHO_PATHS[name]
    wp("checkpoint", "retry-backoff", *FIRST, cwd=repo)
    transcript = _transcript(tmp_path, repo)
    reply = wp(*[arg.format(transcript=transcript) for arg in args], cwd=repo, stdin=stdin)
    assert TOKEN not in reply.stdout + reply.stderr and SLUG not in reply.stdout + reply.stderr, reply.stdout
    document = json.loads(reply.stdout)
    if args[0] == "hook":
        assert reply.code == 0
    elif document["ok"]:  # resolve answers `not-found`: its echo of the ref is scrubbed as a refusal's is
        assert "[redacted" in reply.stdout, reply.stdout
    else:
        assert document["error"]["code"] != "internal-error", reply.stdout
    assert not list(repo.glob(f"*{TOKEN}*")), "a file was named after the credential"


def test_a_credential_longer_than_a_quoted_excerpt_is_not_quoted_in_part(wp: Runner, repo: Path) -> None:
    """A schema problem quotes the first 60 characters of a bad value: cut there, a long token no longer matches
    its rule, so it is redacted before the cut."""
    token = "github_pat_11ABCDEFG0" + "aB3dE5gH7j" * 8  # 101 characters
    reply = wp("validate", "-", cwd=repo, stdin=json.dumps({**INTENT, "slug": token}))
    error = _refused(reply, "invalid-intent")
    assert token[:24] not in reply.stdout and "[redacted" in reply.stdout, error


def test_an_mcp_refusal_of_its_arguments_echoes_no_credential() -> None:
    from wheypoint.cli.commands import COMMANDS
    from wheypoint.cli.main import answer
    from wheypoint.mcp.tools import build_tools, call

    tools = build_tools(COMMANDS)
    result = call(tools["log"], {"work": "x", TOKEN: 1}, answer)
    assert result["isError"] and TOKEN not in json.dumps(result) and "[redacted" in result["content"][0]["text"]


def test_scrubbing_redacts_by_rule_and_shows_lone_surrogates() -> None:
    from wheypoint.model.replies import scrub

    scrubbed = scrub({"message": f"no work '{TOKEN}'", "problems": [{"path": '$["\udc80"]', TOKEN: [TOKEN]}]})
    rule = re.fullmatch(r"no work '\[redacted ([a-z0-9-]+)\]'", scrubbed["message"])
    assert rule, scrubbed  # named by the scan's rule (whichever rule set the scan has), never shown
    redacted = f"[redacted {rule[1]}]"
    assert scrubbed["problems"] == [{"path": '$["\\udc80"]', redacted: [redacted]}]
    for kept in ("no work 'retry-backoff' in project shop", "cannot open the store at postgresql://wp:***@host/wp"):
        assert scrub({"message": kept, "count": 3}) == {"message": kept, "count": 3}  # already masked: kept


# --- the fuzz -------------------------------------------------------------------------------------------------

IN_PROCESS_CASES = 6000
PROCESS_CASES = 24


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> fuzzcases.World:
    return fuzzcases.make_world(tmp_path_factory.mktemp("fuzz"))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_fuzzed_input_on_every_surface_gets_one_coded_json_reply(world: fuzzcases.World, seed: int) -> None:
    tally = fuzzcases.Tally()
    with fuzzcases.enter(world.root, world.repo):
        for case in fuzzcases.cases(seed, IN_PROCESS_CASES // 2, world):
            fuzzcases.run_case(world, case, tally)
    assert all(count > 0 for count in tally.runs.values()), tally.runs
    assert sum(tally.runs.values()) == IN_PROCESS_CASES // 2
    assert not tally.failures, "\n".join(map(repr, tally.failures[:10]))


def test_fuzzed_command_lines_in_real_processes(wp: Runner, world: fuzzcases.World, tmp_path: Path) -> None:
    """A sample as real processes: what the in-process run cannot see (the stdout encoding, a traceback on stderr,
    bytes an argument cannot hold)."""
    picked = [case for case in fuzzcases.cases(7, 400, world) if case.surface != "mcp"][:PROCESS_CASES]
    for case in picked:
        argv = [str(tmp_path / "in.json") if arg == "@stdin-file" else arg for arg in case.argv]
        if "@stdin-file" in case.argv:
            (tmp_path / "in.json").write_bytes(case.stdin)
        try:
            for arg in argv:
                os.fsencode(arg)  # undecodable bytes (\udc80-\udcff) go through as those bytes
        except UnicodeEncodeError:
            continue  # a surrogate no byte stands for: no process can be given it
        if any("\x00" in arg for arg in argv):
            continue  # nor a NUL
        try:
            reply = wp(*argv, cwd=world.repo, stdin=case.stdin)
        except UnicodeDecodeError as exc:
            raise AssertionError(f"stdout is not UTF-8 for {argv!r}") from exc
        assert "Traceback" not in reply.stderr, (argv, reply.stderr)
        why = fuzzcases.verdict(case.surface, argv, reply.code, reply.stdout)
        assert why is None, (why, argv, case.stdin[:200])
