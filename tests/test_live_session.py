"""A checkpoint's `session` filled without a flag: the harness's variable, the hooks' record, or a recent transcript."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from conftest import Runner, make_repo, shared_path
from test_hooks_e2e import CODEX_ROLLOUT, CODEX_SESSION, GEMINI_FILE, GEMINI_SESSION
from test_transcripts_cli import SESSION, SESSION_ID, with_cwd

HOUR_AGO = time.time() - 2 * 3600  # older than the half hour a session counts as live


def claude_session(home: Path, filed: Path, session_id: str = SESSION_ID, name: str = "",
                   cwd: Path | None = None) -> Path:  # fmt: skip
    """A real Claude Code session filed where Claude Code files one started in `filed`, recording `cwd`."""
    folder = "".join(c if c.isascii() and c.isalnum() else "-" for c in str(filed))
    target = home / ".claude" / "projects" / folder / (name or f"{session_id}.jsonl")
    return with_cwd(shared_path("corpus", "claude-code", SESSION), target, cwd or filed, session_id)


def codex_session(home: Path, repo: Path) -> Path:
    """A real Codex rollout recording `repo` as its cwd, in today's dated folder."""
    source = shared_path("corpus", "codex", CODEX_ROLLOUT).read_bytes()
    recorded = json.loads(source.split(b"\n", 1)[0])["payload"]["cwd"]
    day = home / ".codex" / "sessions" / time.strftime("%Y/%m/%d")
    day.mkdir(parents=True)
    target = day / CODEX_ROLLOUT.removeprefix("localpush-")
    target.write_bytes(source.replace(json.dumps(recorded).encode(), json.dumps(str(repo)).encode()))
    return target


def gemini_session(home: Path, repo: Path) -> Path:
    """The real Gemini CLI session, in the folder named by the hash of `repo` (it records only the hash)."""
    chats = home / ".gemini" / "tmp" / hashlib.sha256(str(repo).encode()).hexdigest() / "chats"
    chats.mkdir(parents=True)
    return Path(shutil.copy(shared_path("corpus", "gemini", GEMINI_FILE),
                            chats / f"session-2026-06-05T04-59-{GEMINI_SESSION[:8]}.json"))  # fmt: skip


def opencode_session(home: Path, repo: Path, updated: float) -> Path:
    """An OpenCode database whose one session works in `repo`, last updated at `updated` (seconds)."""
    from test_transcripts_opencode import MAIN, build_db

    data = home / ".local" / "share" / "opencode"
    data.mkdir(parents=True, exist_ok=True)
    database = build_db(data / "opencode.db", {**MAIN, "directory": str(repo), "updated": int(updated * 1000)})
    os.utime(database, (updated, updated))
    return database


@pytest.fixture
def scene(tmp_path: Path) -> tuple[Path, Path]:
    return make_repo(tmp_path / "my_shop.v2"), tmp_path / "user"


def checkpoint_session(wp: Runner, repo: Path, home: Path, slug: str, **env: str) -> object:
    done = wp("checkpoint", slug, "--orientation", "o", "--next", "hold", "--decision", "d", "--rationale", "r",
              cwd=repo, env={"HOME": str(home), **env})  # fmt: skip
    assert done.code == 0, done.stdout
    return wp("show", slug, cwd=repo).json["record"]["session"]


@pytest.mark.parametrize("harness", ["claude-code", "codex", "gemini", "opencode"])
def test_the_one_recent_session_of_this_checkout_is_recorded(
    wp: Runner, scene: tuple[Path, Path], harness: str
) -> None:
    repo, home = scene
    if harness == "claude-code":
        files, expected = [claude_session(home, repo)], SESSION_ID
    elif harness == "codex":
        files, expected = [codex_session(home, repo)], CODEX_SESSION
    elif harness == "gemini":
        files, expected = [gemini_session(home, repo)], GEMINI_SESSION
    else:
        files, expected = [opencode_session(home, repo, time.time())], "ses_main"
    assert checkpoint_session(wp, repo, home, "live") == {"harness": harness, "id": expected}
    # The same transcript untouched for two hours is not live: nothing is recorded rather than a stale guess.
    if harness == "opencode":
        files[0].unlink()
        opencode_session(home, repo, HOUR_AGO)
    for path in files:
        os.utime(path, (HOUR_AGO, HOUR_AGO))
    assert checkpoint_session(wp, repo, home, "stale") is None


def test_two_live_sessions_are_not_guessed_between_unless_the_environment_names_the_harness(
    wp: Runner, scene: tuple[Path, Path]
) -> None:
    repo, home = scene
    claude_session(home, repo)
    codex_session(home, repo)
    assert checkpoint_session(wp, repo, home, "two") is None
    assert checkpoint_session(wp, repo, home, "in-claude", CLAUDECODE="1") == {"harness": "claude-code",
                                                                               "id": SESSION_ID}  # fmt: skip
    # Two sessions of the same harness: still no guess.
    claude_session(home, repo, "0a4c1c2e-0000-4000-8000-000000000001")
    assert checkpoint_session(wp, repo, home, "two-claude", CLAUDECODE="1") is None


def test_the_session_the_harness_exports_wins_and_two_exported_ones_count_as_none(
    wp: Runner, scene: tuple[Path, Path]
) -> None:
    repo, home = scene
    assert checkpoint_session(wp, repo, home, "claude", CLAUDE_CODE_SESSION_ID="c-1") == {"harness": "claude-code",
                                                                                          "id": "c-1"}  # fmt: skip
    assert checkpoint_session(wp, repo, home, "codex", CODEX_THREAD_ID="t-1") == {"harness": "codex", "id": "t-1"}
    nested = checkpoint_session(wp, repo, home, "nested", CLAUDE_CODE_SESSION_ID="c-1", CODEX_THREAD_ID="t-1")
    assert nested is None
    # WHEYPOINT_SESSION, set on purpose by the user, comes before any of it.
    assert checkpoint_session(wp, repo, home, "named", CODEX_THREAD_ID="t-1",
                              WHEYPOINT_SESSION="gemini:g-1") == {"harness": "gemini", "id": "g-1"}  # fmt: skip


def test_subagent_files_and_other_checkouts_sessions_are_not_taken(wp: Runner, scene: tuple[Path, Path]) -> None:
    repo, home = scene
    elsewhere = make_repo(repo.parent / "elsewhere")
    claude_session(home, repo, name="agent-1234abcd.jsonl")  # a subagent's side file in the same folder
    # Filed under this checkout's folder, but the transcript says it ran elsewhere: the recorded cwd decides.
    claude_session(home, repo, "0a4c1c2e-0000-4000-8000-000000000002", cwd=elsewhere)
    assert checkpoint_session(wp, repo, home, "none") is None


def test_a_session_started_in_a_subfolder_of_the_checkout_counts(wp: Runner, scene: tuple[Path, Path]) -> None:
    repo, home = scene
    sub = repo / "pkg" / "core"
    sub.mkdir(parents=True)
    claude_session(home, repo / "pkg")  # Claude Code files it under the folder it was started in
    assert checkpoint_session(wp, sub, home, "from-sub") == {"harness": "claude-code", "id": SESSION_ID}
