"""`wheypoint demo`: two real checkpoints made from the command line in a scratch git repository, then the note."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from wheypoint.app.checkpoint import checkpoint
from wheypoint.app.context import Context, NoteOptions
from wheypoint.cli.flags import parse_intent_command

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def _step(number: int, ctx: Context, argv: list[str], what: str) -> dict[str, Any]:
    """Run one checkpoint of the demo and say, in a few lines, what it was and what it recorded."""
    from wheypoint.app.shellword import posix_quote

    reply = checkpoint(ctx, parse_intent_command(argv).intent, NoteOptions())
    print(f"{number}. {what}:")
    print(f"   $ wheypoint checkpoint {' '.join(posix_quote(arg) for arg in argv)}")
    added = ", ".join(reply["added"]) or "nothing"
    moved = ", ".join(f"{t['entry']} {t['action']}" for t in reply["transitioned"])
    print(f"   -> r{reply['revision_number']} {reply['revision_id']}, status {reply['status']}; added {added}"
          + (f"; {moved}" if moved else ""))  # fmt: skip
    return reply


def run_demo(*, keep: bool = False) -> int:
    scratch = Path(tempfile.mkdtemp(prefix="wheypoint-demo-"))
    repo = scratch / "shop"
    try:
        repo.mkdir()
        _git(repo, "init", "-q", "-b", "main")
        _git(repo, "config", "user.email", "demo@example.invalid")
        _git(repo, "config", "user.name", "demo")
        (repo / "retry.py").write_text("def backoff(attempt):\n    return min(2 ** attempt, 30)\n", encoding="utf-8")
        _git(repo, "add", "retry.py")
        _git(repo, "commit", "-q", "-m", "retry helper")
        ctx = Context(cwd=repo, environ={"WHEYPOINT_HOME": str(scratch / "home")})
        first_args = [
            "retry-backoff", "--orientation", "Retry backoff for the payment client is designed, not yet built.",
            "--next", "hold",
            "--directive", "Never retry a POST that is not idempotent.",
            "--quote", "don't ever retry POSTs unless they carry an idempotency key",
            "--decision", "Cap the backoff at 30 seconds.", "--rationale", "The gateway times out at 45 seconds.",
            "--question", "Should jitter be full or equal?", "--gates",
            "--rationale", "Both are standard. options: full jitter | equal jitter; leaning: full jitter",
            "--owner", "payments lead",
            "--context", "retry.py:2",
        ]  # fmt: skip
        print(f"A scratch git repository with one commit ({repo}); the store in {scratch / 'home'}.\n")
        reply = _step(1, ctx, first_args, "the first checkpoint: a directive quoting the user, a decision, a gate")
        gate = next(e for e in reply["added"] if e.startswith("q-"))
        second_args = [
            # The decisions changed, so the orientation is stated again (else the note opens "Stale orientation").
            "retry-backoff", "--base", reply["revision_id"],
            "--orientation", "Retry backoff for the payment client is designed (full jitter, 30 s cap); build it next.",
            "--next", "cook", "--artifact", "retry.py",
            "--resolve", gate, "--rationale", "The payments lead chose full jitter.",
            "--decision", "Use full jitter.", "--rationale", "Spreads retries best under a thundering herd.",
            "--notes", "Design settled; build it in retry.py with a unit test per cap boundary.",
        ]  # fmt: skip
        reply = _step(2, ctx, second_args, "the person decided: resolve the gate, record the choice, move on to cook")
        print(f"\nThe note a cold reader resumes from ({reply['note_path']}):\n")
        print(Path(str(reply["note_path"])).read_text(encoding="utf-8"))
        print(f"(scratch folder: {scratch}{'' if keep else ', removed'})")
        return 0
    finally:
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)
