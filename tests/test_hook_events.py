"""`wheypoint hook`: payloads shaped like the harnesses' own, a real corpus session, the store, the note and stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Runner, make_repo, shared_path
from test_transcripts_cli import SESSION, SESSION_ID, with_cwd


@pytest.fixture
def scene(tmp_path: Path) -> tuple[Path, Path]:
    repo = make_repo(tmp_path / "shop")
    transcript = with_cwd(shared_path("corpus", "claude-code", SESSION), tmp_path / "t" / f"{SESSION_ID}.jsonl", repo)
    return repo, transcript


def _payload(event: str, repo: Path, transcript: Path, **extra: str) -> str:
    # The fields Claude Code sends every hook, plus the event's own.
    base = {"session_id": SESSION_ID, "transcript_path": str(transcript), "cwd": str(repo),
            "hook_event_name": event, "permission_mode": "default"}  # fmt: skip
    return json.dumps({**base, **extra})


def test_precompact_keeps_the_users_turns_verbatim_and_sessionstart_hands_them_back(
    wp: Runner, scene: tuple[Path, Path]
) -> None:
    repo, transcript = scene
    done = wp("hook", "PreCompact", "--harness", "claude-code", cwd=repo,
              stdin=_payload("PreCompact", repo, transcript, trigger="auto", custom_instructions=""))  # fmt: skip
    assert done.code == 0 and "hookSpecificOutput" not in done.json, done.stdout
    assert "kept 3 turn(s) verbatim" in done.json["systemMessage"]
    typed = [json.loads(line) for line in transcript.read_text().splitlines()]
    user_texts = {r["message"]["content"] for r in typed if r.get("type") == "user"
                  and isinstance(r.get("message", {}).get("content"), str)}  # fmt: skip
    record = wp("show", f"session-claude-code-{SESSION_ID[:8]}", cwd=repo).json["record"]
    assert {m["text"] for m in record["meat"]} <= user_texts and len(record["meat"]) == 3
    assert record["session"] == {"harness": "claude-code", "id": SESSION_ID}
    assert (repo / ".cheese" / "notes" / f"session-claude-code-{SESSION_ID[:8]}.md").exists()
    again = wp("hook", "PreCompact", "--harness", "claude-code", cwd=repo,
               stdin=_payload("PreCompact", repo, transcript, trigger="manual"))  # fmt: skip
    assert again.code == 0 and "systemMessage" not in again.json  # nothing new: no second revision
    assert wp("log", record["work_id"], cwd=repo).json["revisions"][-1]["revision_number"] == 1
    start = wp("hook", "SessionStart", "--harness", "claude-code", cwd=repo,
               stdin=_payload("SessionStart", repo, transcript, source="compact"))  # fmt: skip
    output = start.json["hookSpecificOutput"]
    assert output["hookEventName"] == "SessionStart" and len(output["additionalContext"]) <= 10000
    packet = json.loads(output["additionalContext"].splitlines()[1])
    assert [m["text"] for m in packet["meat"]] == [m["text"] for m in reversed(record["meat"])]
    assert output["additionalContext"].rstrip().endswith(f"--base {record['revision_id']} ...")
    prompt = wp("hook", "UserPromptSubmit", "--harness", "claude-code", cwd=repo,
                stdin=_payload("UserPromptSubmit", repo, transcript, prompt="go on"))  # fmt: skip
    assert prompt.json == {}  # this session already had the packet


@pytest.mark.parametrize("stdin", ["", "not json", "[1]", '{"cwd": 5}'])
@pytest.mark.parametrize("args", [("PreCompact", "--harness", "claude-code"), ("Nonesuch", "--harness", "codex"),
                                  ("SessionStart",), ("Stop", "--harness", "gemini", "--bogus")])  # fmt: skip
def test_a_hook_always_exits_zero_with_one_json_answer(wp: Runner, tmp_path: Path, stdin: str,
                                                       args: tuple[str, ...]) -> None:  # fmt: skip
    done = wp("hook", *args, cwd=tmp_path, stdin=stdin)
    assert done.code == 0 and done.stderr == "", done.stderr
    assert isinstance(done.json, dict) and "Traceback" not in done.stdout


def test_a_checkpoint_naming_no_transcript_takes_the_one_live_session(wp: Runner, scene: tuple[Path, Path]) -> None:
    """Seed 2: `session:` filled without a flag when one session of this checkout is live (a hook heard from it)."""
    repo, transcript = scene
    heard = wp("hook", "UserPromptSubmit", "--harness", "claude-code", cwd=repo,
               stdin=_payload("UserPromptSubmit", repo, transcript, prompt="go on"))  # fmt: skip
    assert heard.code == 0
    one = wp("checkpoint", "live-one", "--orientation", "o", "--next", "hold", "--decision", "d", "--rationale", "r",
             cwd=repo)  # fmt: skip
    assert wp("show", "live-one", cwd=repo).json["record"]["session"] == {"harness": "claude-code", "id": SESSION_ID}
    assert one.code == 0
    # A second live session: which one wrote this is not known, so nothing is recorded rather than a guess.
    other = json.dumps({"session_id": "other-session", "cwd": str(repo), "hook_event_name": "UserPromptSubmit",
                        "transcript_path": str(transcript), "prompt": "hi"})  # fmt: skip
    assert wp("hook", "UserPromptSubmit", "--harness", "codex", cwd=repo, stdin=other).code == 0
    assert wp("checkpoint", "live-two", "--orientation", "o", "--next", "hold", "--decision", "d", "--rationale", "r",
              cwd=repo).code == 0  # fmt: skip
    assert wp("show", "live-two", cwd=repo).json["record"]["session"] is None


@pytest.mark.parametrize("where", ["harness", "event"])
def test_a_credential_given_to_a_hook_is_neither_shown_nor_logged(wp: Runner, home: Path, tmp_path: Path,
                                                                  where: str) -> None:  # fmt: skip
    """An unknown harness or event name is quoted back in the refusal: scrubbed there and in hooks/hook.log."""
    token = "ghp_" + "R8vQ2mZt7LpXc4Nw" * 2 + "K9sD"  # 36 characters after the prefix
    args = ("SessionStart", "--harness", token) if where == "harness" else (token, "--harness", "codex")
    done = wp("hook", *args, cwd=tmp_path, stdin="{}")
    assert done.code == 0 and done.json, done.stderr
    assert token not in done.stdout and "[redacted github-pat]" in done.stdout
    logs = list(home.rglob("hook.log"))
    assert logs, "the refusal is logged"
    logged = "".join(path.read_text(encoding="utf-8") for path in logs)
    assert token not in logged and "[redacted github-pat]" in logged


def test_a_hook_run_before_any_store_keeps_its_state_and_log_private(tmp_path: Path) -> None:
    """The hooks' state and log name sessions and works, like the store: a hook that makes their folders first
    makes them as the store would (this user only), whatever the umask."""
    import os
    import stat
    import subprocess
    import sys

    from conftest import HARNESS_VARIABLES

    repo = make_repo(tmp_path / "repo")
    home = tmp_path / "deep" / "wheypoint-home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_") and k not in HARNESS_VARIABLES}
    env.update(WHEYPOINT_HOME=str(home), HOME=str(tmp_path))
    payload = json.dumps({"cwd": str(repo), "session_id": "s1", "hook_event_name": "UserPromptSubmit"})
    done = subprocess.run(["sh", "-c", f"umask 022 && exec {sys.executable} -m wheypoint hook UserPromptSubmit "
                           "--harness codex"], input=payload, capture_output=True, text=True, env=env, cwd=repo,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0 and json.loads(done.stdout) == {}, done.stdout + done.stderr
    state = next((home / "hooks").glob("*.json"))
    for folder in (tmp_path / "deep", home, home / "hooks"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    for file in (state, home / "hooks" / "hook.log"):
        assert stat.S_IMODE(file.stat().st_mode) == 0o600, file


# ---- the deadline every call keeps (events._deadline, events._arm), in process


@pytest.mark.parametrize(
    ("given", "env", "seconds"),
    [("PreCompact", None, 20.0), ("PreCompress", None, 20.0), ("SessionStart", None, 6.0), ("Stop", None, 6.0),
     ("PreCompact", "1.5", 1.5), ("Stop", "0.25", 0.25),
     # not a positive finite number: the event's own deadline
     ("PreCompact", "0", 20.0), ("PreCompact", "-3", 20.0), ("PreCompact", "nan", 20.0), ("PreCompact", "inf", 20.0),
     ("PreCompact", "soon", 20.0),
     # no event known (yet): the shortest of all
     (None, None, 6.0), ("NoSuchEvent", None, 6.0), (7, None, 6.0)],
)  # fmt: skip
def test_each_call_has_its_events_deadline_unless_the_variable_names_a_positive_number(
    monkeypatch: pytest.MonkeyPatch, given: object, env: str | None, seconds: float
) -> None:
    from wheypoint.hooks import events

    monkeypatch.delenv("WHEYPOINT_HOOK_DEADLINE", raising=False)
    if env is not None:
        monkeypatch.setenv("WHEYPOINT_HOOK_DEADLINE", env)
    assert events._deadline(given) == seconds


def test_where_no_timer_can_be_set_the_watch_is_a_disarm_that_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """No setitimer (a platform without it), or off the main thread (a hook run in process by a test): no watch,
    and the disarm given back can be called all the same."""
    import sys
    import threading
    import types

    from wheypoint.hooks import events

    rang: list[float] = []
    monkeypatch.setitem(sys.modules, "_signal", types.SimpleNamespace())  # a signal module without setitimer
    disarm = events._arm(0.01, rang.append)
    disarm()
    monkeypatch.undo()
    got: list[object] = []
    thread = threading.Thread(target=lambda: got.append(events._arm(0.01, rang.append)))
    thread.start()
    thread.join()
    (off_main,) = got
    assert callable(off_main)
    off_main()  # type: ignore[operator]
    assert rang == []


def test_disarming_the_watch_stops_its_timer_and_gives_back_the_handler_there_was() -> None:
    import signal

    from wheypoint.hooks import events

    before = signal.getsignal(signal.SIGALRM)
    rang: list[float] = []
    disarm = events._arm(30.0, rang.append)
    assert 0 < signal.getitimer(signal.ITIMER_REAL)[0] <= 30.0 and signal.getsignal(signal.SIGALRM) != before
    disarm()
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0) and signal.getsignal(signal.SIGALRM) == before
    assert rang == []


# The instant no real timer can be aimed at: the deadline ringing after the answer has started on its way out (the
# flag set, the timer not yet disarmed). A stand-in for `_arm` rings it exactly then, in a process of its own,
# since an answer given by the deadline ends the process at once.
_RING_AT_DISARM = """
import json, sys
from wheypoint.hooks import events

def arm(seconds, expire):
    def disarm():
        expire(seconds)  # the timer rings as the call disarms it: after the answer began
    return disarm

events._arm = arm
sys.stdin = open(sys.argv[1])
code = events.run_hook({"event": "SessionStart", "harness": "claude-code", "budget": None})
print("RETURNED", code)
"""


def test_a_deadline_that_rings_once_the_answer_has_begun_leaves_it_be(tmp_path: Path) -> None:
    """The answer already on its way out is the one given: one reply, the call's own, and run_hook returns."""
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps({"session_id": "s1", "cwd": str(tmp_path), "hook_event_name": "SessionStart"}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_")}
    env.update(WHEYPOINT_HOME=str(tmp_path / "home"), HOME=str(tmp_path / "user"))
    done = subprocess.run([sys.executable, "-c", _RING_AT_DISARM, str(payload)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and lines[-1] == "RETURNED 0", done.stdout + done.stderr
    assert [json.loads(line) for line in lines[:-1]] == [{}], done.stdout  # no "stopped at its deadline" reply
    log = (tmp_path / "home" / "hooks" / "hook.log").read_text(encoding="utf-8").splitlines()
    assert len(log) == 1 and "deadline" not in json.loads(log[0]), log


def test_the_deadlines_handler_does_nothing_once_the_answer_has_begun(tmp_path: Path) -> None:
    """Called with the answer already going out, `_expired` neither prints nor logs nor ends the process."""
    probe = ("import sys\nfrom wheypoint.hooks import events\nanswer = events._Answer()\nanswer.answering = True\n"
             "events._expired('claude-code', 'PreCompact', answer, 0.0, 1.0)\nprint('RETURNED')\n")  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_")}
    env.update(WHEYPOINT_HOME=str(tmp_path / "home"), HOME=str(tmp_path / "user"))
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0 and done.stdout == "RETURNED\n", done.stdout + done.stderr
    assert not (tmp_path / "home" / "hooks" / "hook.log").exists()


# Runs one hook line in a process of its own, counting the writes of the hooks' state (hooks/state.py `save`).
_COUNTED = """
import sys
sys.path.insert(0, sys.argv.pop(1))
from wheypoint.hooks import state
written = []
save = state.save
state.save = lambda *args: (written.append(1), save(*args))[1]
from wheypoint.cli.hookline import answer
answer(sys.argv[1:])
sys.stdout.flush()
print(len(written), file=sys.stderr)
"""


def test_a_hook_call_writes_the_hooks_state_once_with_its_session_noted_live(
    scene: tuple[Path, Path], tmp_path: Path
) -> None:
    """A rescue (or a packet handed over) writes the state, and the call's session is noted live in that same write:
    each write makes a new file, which the file system's journal makes wait up to half a millisecond."""
    repo, transcript = scene
    home = tmp_path / "home"
    env = {"PATH": os.environ.get("PATH", ""), "WHEYPOINT_HOME": str(home), "HOME": str(home)}
    src = str(Path(__file__).resolve().parents[1] / "src")

    def fire(event: str, payload: str) -> tuple[dict[str, object], int]:
        done = subprocess.run([sys.executable, "-S", "-c", _COUNTED, src, event, "--harness", "claude-code"],
                              input=payload, cwd=repo, env=env, capture_output=True, text=True, timeout=60,
                              check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout), int(done.stderr.strip().splitlines()[-1])

    reply, writes = fire("PreCompact", _payload("PreCompact", repo, transcript, trigger="auto"))
    assert "kept 3 turn(s) verbatim" in str(reply["systemMessage"]) and writes == 1
    (state_file,) = (home / "hooks").glob("*.json")
    sessions = json.loads(state_file.read_text())["sessions"]
    assert isinstance(sessions[f"claude-code:{SESSION_ID}"]["seen"], int)
    other = json.dumps({"session_id": "other-session", "cwd": str(repo), "hook_event_name": "SessionStart"})
    reply, writes = fire("SessionStart", other)
    assert "hookSpecificOutput" in reply and writes == 1
    assert isinstance(json.loads(state_file.read_text())["sessions"]["claude-code:other-session"]["seen"], int)
    reply, writes = fire("Stop", _payload("Stop", repo, transcript))  # nothing new, seen a moment ago: no write
    assert reply == {} and writes == 0
