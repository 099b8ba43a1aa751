"""Reading git from its files: project keys from remotes, HEAD through loose and packed refs, worktrees."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from conftest import Runner, git, make_repo
from wheypoint.app.workspace import find_checkout, key_from_remote, normalise_key


def _regex_normalise(text: str) -> str:
    key = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-.")
    return key[:96] or "default"


def _regex_key(url: str) -> str | None:
    """The regular-expression reading the string version replaced, kept here as its specification."""
    path = re.sub(r"^[a-z+]+://[^/]*/", "", url.strip())
    path = re.sub(r"^[^/@:]+@[^:/]+:", "", path)
    parts = [p for p in re.split(r"[/:\\]+", path) if p]
    if not parts:
        return None
    parts[-1] = re.sub(r"\.git$", "", parts[-1])
    return _regex_normalise("-".join(parts[-2:]))


PIECES = st.sampled_from(["a", "b", "Z", "9", "/", ":", "@", "\\", ".", ".git", "+", "-", "_", " ", "://", "git@",
                          "https://", "ssh://", "é", "\u00a0"])  # fmt: skip


@given(st.lists(PIECES, max_size=14).map("".join))
def test_keys_from_remotes_read_as_the_regular_expressions_specify(url: str) -> None:
    assert key_from_remote(url) == _regex_key(url)
    assert normalise_key(url) == _regex_normalise(url)


def test_the_usual_remote_forms_give_owner_repo() -> None:
    for url in ("git@github.com:acme/shop.git", "https://github.com/acme/shop", "ssh://git@host:22/acme/shop.git",
                "/srv/git/acme/shop.git"):  # fmt: skip
        assert key_from_remote(url) == "acme-shop", url


def test_the_origin_url_is_read_from_its_own_section_only(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "shop")
    git(repo, "remote", "add", "upstream", "git@example.com:other/thing.git")
    git(repo, "remote", "add", "origin", "https://example.com/acme/shop.git")
    checkout = find_checkout(str(repo))
    assert checkout is not None
    assert checkout.remote_url() == "https://example.com/acme/shop.git"
    assert checkout.remote_url("upstream") == "git@example.com:other/thing.git"
    assert checkout.remote_url("nosuch") is None and checkout.project_key() == "acme-shop"


def test_head_is_found_through_loose_and_packed_refs(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "shop")
    head = git(repo, "rev-parse", "HEAD")
    checkout = find_checkout(str(repo / "sub" / "folder"))  # a folder below the top, not even existing
    assert checkout is not None and checkout.commit == head and checkout.branch == "main"
    git(repo, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    packed = find_checkout(str(repo))
    assert packed is not None and packed.commit == head
    git(repo, "checkout", "-q", "--detach")
    detached = find_checkout(str(repo))
    assert detached is not None and detached.branch is None and detached.commit == head


def test_every_worktree_is_found_from_any_of_them(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "shop")
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt-a"), "-b", "a")
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt-b"), "-b", "b")
    expected = {str(repo), str(tmp_path / "wt-a"), str(tmp_path / "wt-b")}
    for start in (repo, tmp_path / "wt-a"):
        checkout = find_checkout(str(start))
        assert checkout is not None
        roots = checkout.worktree_roots()
        assert roots[0] == str(start) and {str(Path(r).resolve()) for r in roots} == {str(Path(e).resolve())
                                                                                      for e in expected}  # fmt: skip
        assert checkout.project_key() == "shop"  # every worktree shares the main checkout's key


def test_git_runs_without_subprocess_and_streams_input_larger_than_a_pipe(tmp_path: Path) -> None:
    from wheypoint.app.gitrun import run_git

    repo = make_repo(tmp_path / "shop")
    head = git(repo, "rev-parse", "HEAD")
    shas = "".join(f"{n:040x}\n" for n in range(50_000)) + head + "\n"  # ~2 MB each way: more than a pipe holds
    done = run_git(["cat-file", "--batch-check"], str(repo), shas.encode())
    assert done is not None and done[0] == 0
    lines = done[1].decode().splitlines()
    assert len(lines) == 50_001 and lines[-1].startswith(head) and lines[0].endswith("missing")
    assert run_git(["rev-parse", "--verify", "nosuch"], str(repo)) == (128, b"")


def test_git_that_cannot_start_or_does_not_finish_gives_none(tmp_path: Path) -> None:
    import os

    from wheypoint.app import gitrun

    repo = make_repo(tmp_path / "shop")
    assert gitrun.run_git(["status"], str(repo), timeout=0.0) is None  # killed at once, and reaped
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    saved = os.environ["PATH"]
    os.environ["PATH"] = str(fake_bin)  # no git on this PATH
    try:
        assert gitrun.run_git(["status"], str(repo)) is None
    finally:
        os.environ["PATH"] = saved


def test_a_started_git_runs_beside_the_caller_and_answers_once_asked(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """start_git returns while git still runs (here a git that takes 0.4 s to start); its answer is run_git's, the
    same when asked again, and a checkpoint refused after asking leaves no git process behind."""
    import os
    import shutil
    import time

    from wheypoint.app.context import Context
    from wheypoint.app.gitrun import run_git, start_git

    repo = make_repo(tmp_path / "shop", {"retry.py": "a\nb\n"})
    slow = tmp_path / "bin"
    slow.mkdir()
    (slow / "git").write_text(f'#!/bin/sh\nsleep 0.4\nexec {shutil.which("git")} "$@"\n', encoding="utf-8")
    (slow / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{slow}{os.pathsep}{os.environ['PATH']}")
    args = ["ls-tree", "-r", "--name-only", "-z", "HEAD", "--", "retry.py", "gone.py"]
    begun = time.monotonic()
    started = start_git(args, str(repo))
    assert time.monotonic() - begun < 0.3, "start_git waited for git"
    answer = started.answer()
    assert time.monotonic() - begun >= 0.4 and answer == run_git(args, str(repo)) == (0, b"retry.py\0")
    assert started.answer() is answer
    # A checkpoint asks git which referenced files are tracked before its other work; refused after that (its
    # transcript is not there), it still waits for git: no child of this process is left running or unreaped.
    from wheypoint.app import gitrun
    from wheypoint.app.checkpoint import _dry_run_or_commit
    from wheypoint.app.context import NoteOptions, TranscriptChoice
    from wheypoint.model.errors import Refusal

    asked: list[gitrun.Started] = []

    def recorded(*args: object, **kwargs: object) -> gitrun.Started:
        asked.append(start_git(*args, **kwargs))  # type: ignore[arg-type]
        return asked[-1]

    monkeypatch.setattr(gitrun, "start_git", recorded)
    monkeypatch.setenv("WHEYPOINT_HOME", str(tmp_path / "home"))
    ctx = Context(cwd=str(repo))
    intent = {"slug": "retry", "orientation": "Retry.", "next": {"move": "hold"}, "working_context": ["retry.py:1"]}
    try:
        _dry_run_or_commit(ctx, intent, TranscriptChoice(transcript=str(tmp_path / "gone.jsonl")), NoteOptions())
    except Refusal as refused:
        assert "transcript" in refused.code, refused
    else:
        raise AssertionError("a checkpoint grounded in no transcript was written")
    assert asked and all(started.done is not None for started in asked), "a git process was left unreaped"
    for started in asked:
        try:
            assert os.waitpid(started.pid or 0, os.WNOHANG) is None  # (reaped: waiting again must fail)
        except ChildProcessError:
            pass


def test_an_ignored_path_stays_local_beside_a_path_outside_the_repository(wp: Runner, tmp_path: Path) -> None:
    """git check-ignore fails a whole batch over one path outside the repository; each group is asked apart."""
    repo = make_repo(tmp_path / "shop", {".gitignore": "build/\n", "src/a.py": "x\n"})
    contexts = ["--context", "build/out.log", "--context", "../outside.txt", "--context", "src/a.py"]
    done = wp("checkpoint", "local-refs", "--orientation", "o", "--next", "hold", "--decision", "d", "--rationale",
              "r", *contexts, cwd=repo)  # fmt: skip
    assert done.code == 0, done.stdout
    record = wp("show", "local-refs", "--format", "json", cwd=repo).json["record"]
    assert record["local_references"] == ["../outside.txt", "build/out.log"]
    note = (repo / ".cheese" / "notes" / "local-refs.md").read_text(encoding="utf-8")
    assert "## Local references\n\n- ../outside.txt\n- build/out.log\n" in note
