"""`wheypoint demo`: two real checkpoints made from the command line in a scratch git repository, then the note."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from wheypoint.app.checkpoint import checkpoint
from wheypoint.app.context import Context, NoteOptions
from wheypoint.cli.flags import parse_intent_command


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


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
        first = parse_intent_command([
            "retry-backoff", "--orientation", "Retry backoff for the payment client is designed, not yet built.",
            "--next", "hold",
            "--directive", "Never retry a POST that is not idempotent.",
            "--quote", "don't ever retry POSTs unless they carry an idempotency key",
            "--decision", "Cap the backoff at 30 seconds.", "--rationale", "The gateway times out at 45 seconds.",
            "--question", "Should jitter be full or equal?", "--gates",
            "--rationale", "Both are standard. options: full jitter | equal jitter; leaning: full jitter",
            "--owner", "payments lead",
            "--context", "retry.py:2",
        ])  # fmt: skip
        reply = checkpoint(ctx, first.intent, NoteOptions())
        print(json.dumps({"ok": True, "command": "checkpoint", **reply}, indent=2))
        gate = next(e for e in reply["added"] if e.startswith("q-"))
        second = parse_intent_command([
            "retry-backoff", "--base", reply["revision_id"], "--next", "cook", "--artifact", "retry.py",
            "--resolve", gate, "--rationale", "The payments lead chose full jitter.",
            "--decision", "Use full jitter.", "--rationale", "Spreads retries best under a thundering herd.",
            "--notes", "Design settled; build it in retry.py with a unit test per cap boundary.",
        ])  # fmt: skip
        reply = checkpoint(ctx, second.intent, NoteOptions())
        print(json.dumps({"ok": True, "command": "checkpoint", **reply}, indent=2))
        print()
        print(Path(str(reply["note_path"])).read_text(encoding="utf-8"))
        print(f"(scratch folder: {scratch}{'' if keep else ', removed'})")
        return 0
    finally:
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)
