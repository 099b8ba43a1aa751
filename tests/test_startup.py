"""Start-up cannot creep back: each command loads only the wheypoint modules it needs, and no heavy standard ones.

Every command runs in a fresh interpreter started with `-S` (no site-packages start-up, so nothing an
installation's `.pth` files import is mistaken for ours) with `src` on the path, exactly as a user's
`wheypoint` runs it, in a real git checkout with a real store. The modules left in `sys.modules` are
then compared with the command's pin below. Adding a module to a pin is a decision: measure it first
(`python3 bench/startup_bench.py`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git, make_repo
from wheypoint.hooks.events import STOP_GROWTH

SRC = Path(__file__).resolve().parents[1] / "src"

# Standard modules no benchmarked command may load: each costs milliseconds on every start.
HEAVY = {"typing", "pathlib", "dataclasses", "inspect", "argparse", "contextlib", "difflib", "tempfile", "shutil",
         "urllib", "ipaddress", "importlib.util", "asyncio", "email", "random", "hashlib", "subprocess",
         "threading", "locale", "copy"}  # fmt: skip

_CLI = {"wheypoint", "wheypoint.boot", "wheypoint.cli", "wheypoint.cli.main", "wheypoint.cli.commands",
        "wheypoint.cli.grammar", "wheypoint.cli.hookline",
        "wheypoint.jsontext", "wheypoint.model", "wheypoint.model.errors", "wheypoint.model.records",
        "wheypoint.model.replies"}  # fmt: skip
_CONTEXT = {"wheypoint.app", "wheypoint.app.context", "wheypoint.app.workspace", "wheypoint.model.shapes",
            "wheypoint.notes", "wheypoint.notes.files", "wheypoint.app.gitconfig",
            "wheypoint.model.regular"}  # fmt: skip  # notes are read through the regular-file guard
_STORE = {"wheypoint.store", "wheypoint.store.rows", "wheypoint.store.sqlite", "wheypoint.store.sqlite.backend",
          "wheypoint.store.sqlite.driver", "wheypoint.store.sqlite.schema", "wheypoint.store.sql",
          "wheypoint.store.sqlparts",
          "wheypoint.model.integrity"}  # fmt: skip  # every record read for use is checked against its digest
_RENDER = {"wheypoint.notes.render", "wheypoint.model.canonical", "wheypoint.model.derived", "wheypoint.notes.escapes",
           "wheypoint.model.characters"}  # fmt: skip
_WRITE = {"wheypoint.cli.flags", "wheypoint.model.intake", "wheypoint.model.contract", "wheypoint.model.schemacheck",
          "wheypoint.model.rules", "wheypoint.model.credentials", "wheypoint.model.kernel", "wheypoint.model.refs",
          # the scan every intent goes through: its hand-written rules, the generated gitleaks table (data) and
          # how it searches a text
          "wheypoint.model.credential_hand", "wheypoint.model.credential_near", "wheypoint.model.credential_rules",
          "wheypoint.model.credential_text", "wheypoint.model.credential_table",
          "wheypoint.model.credential_values", "wheypoint.model.pii",  # and the personal-data scan beside it
          "wheypoint.patterns",  # their patterns, kept compiled beside the start-up image
          "wheypoint.model.canonical", "wheypoint.model.derived", "wheypoint.model.bases", "wheypoint.model.characters",
          "wheypoint.app.checkpoint", "wheypoint.app.noteplace", "wheypoint.app.sessions",
          "wheypoint.app.shellword",  # the handoff lines' resume commands
          "wheypoint.store.sqlite.indexes",
          "wheypoint.transcripts", "wheypoint.transcripts.model",
          "wheypoint.transcripts.homes", "wheypoint.transcripts.live"}  # fmt: skip
_TRANSCRIPT = {"wheypoint.transcripts", "wheypoint.transcripts.discovery", "wheypoint.transcripts.model",
               "wheypoint.transcripts.lines", "wheypoint.transcripts.claude", "wheypoint.transcripts.claude_turns",
               "wheypoint.transcripts.claude_kinds", "wheypoint.app.transcript", "wheypoint.transcripts.harvest",
               "wheypoint.transcripts.homes",
               # the guard every read of a named file passes (opens regular files only, never blocks): os and stat
               "wheypoint.model.regular"}  # fmt: skip

_LINKS = "wheypoint.app.links"  # backlinks, which show and resolve answer
_LOOKUP = "wheypoint.app.lookup"  # which work a reference means, for every command that takes one
# command -> (arguments, the wheypoint modules it may load, standard modules allowed beyond the baseline)
PINS: dict[str, tuple[list[str], set[str], set[str]]] = {
    "show": (
        ["show", "retry-backoff"],
        _CLI | _CONTEXT | _STORE | _RENDER | {"wheypoint.app.show", _LINKS, _LOOKUP},
        set(),
    ),
    "log": (["log", "retry-backoff"], _CLI | _CONTEXT | _STORE | {"wheypoint.app.show", _LOOKUP, *_RENDER}, set()),
    # list looks through the checkout's notes folder for hand-written notes; a generated one is recognised by its
    # own digest (notes.render), so only a note that may be hand-written is parsed.
    "list": (
        ["list", "--grep", "backoff"],
        _CLI
        | _CONTEXT
        | _STORE
        | {
            "wheypoint.app.listing",
            "wheypoint.store.listsql",
            "wheypoint.store.sqlite.indexes",
            "wheypoint.notes.legacy",
            *_RENDER,
        },
        set(),
    ),
    "resolve": (
        ["resolve", "retry-backoff"],
        _CLI
        | _CONTEXT
        | _STORE
        | _RENDER
        | {
            "wheypoint.app.resolve",
            "wheypoint.app.links",
            _LOOKUP,
            "wheypoint.app.trust",
            "wheypoint.model.refs",
            "wheypoint.patterns",  # the line references' patterns, kept compiled
            "wheypoint.notes.legacy",
            "wheypoint.app.gitrun",
        },
        set(),
    ),
    "validate": (
        ["validate", "new-work", "--orientation", "A new work.", "--next", "hold", "--notes", "Started."],
        _CLI | _CONTEXT | _STORE | _WRITE,
        set(),
    ),
    "checkpoint": (
        ["checkpoint", "retry-backoff", "--base", "{base}", "--decision", "Keep it.", "--rationale", "Ok."],
        _CLI | _CONTEXT | _STORE | _WRITE | _RENDER,
        set(),
    ),
    "turns": (["turns", "--transcript", "{transcript}"], _CLI | _CONTEXT | _TRANSCRIPT, set()),
}

_PROBE = """
import sys
sys.path.insert(0, sys.argv[1])
from wheypoint.cli.main import main
code = main(sys.argv[2:])
sys.stdout.flush()
modules = sorted(sys.modules)  # before the probe's own json
import json
print(json.dumps({"code": code, "modules": modules}), file=sys.stderr)
"""


def _modules(args: list[str], cwd: Path, home: Path) -> tuple[int, set[str], str]:
    env = {"PATH": os.environ.get("PATH", ""), "WHEYPOINT_HOME": str(home), "HOME": str(home)}
    done = subprocess.run([sys.executable, "-S", "-c", _PROBE, str(SRC), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report["code"], set(report["modules"]), done.stdout


def _warm(args: list[str], cwd: Path, home: Path, stdin: str | None = None) -> str:
    """Run a command as the program does, with the probe's environment: once its answer is out, the program keeps
    the patterns the command compiled (patterns.py), which a probed command like it then loads instead."""
    env = {"PATH": os.environ.get("PATH", ""), "WHEYPOINT_HOME": str(home), "HOME": str(home)}
    entry = "import sys; sys.path.insert(0, sys.argv.pop(1)); from wheypoint.cli.entry import run; run()"
    done = subprocess.run([sys.executable, "-S", "-c", entry, str(SRC), *args], input=stdin, cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _baseline(cwd: Path) -> set[str]:
    code = "import json, sqlite3, sys; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-S", "-c", code], cwd=cwd, capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("startup")
    repo = make_repo(root / "shop", {"retry.py": "a\nb\nc\n"})
    home = root / "home"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_")}, "WHEYPOINT_HOME": str(home)}
    first = subprocess.run(
        [sys.executable, "-m", "wheypoint", "checkpoint", "retry-backoff", "--orientation", "Backoff, designed.",
         "--next", "hold", "--decision", "Cap at 30 s.", "--rationale", "The gateway gives up at 45 s.",
         "--context", "retry.py:2"],
        cwd=repo, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    # A twin of the work, written and updated with the same words by a process like the probe's, has kept every
    # pattern those words make the write compile (patterns.py): the probed write then compiles none, as in use.
    twin = json.loads(_warm([arg if arg != "retry-backoff" else "retry-twin" for arg in first.args[3:]], repo, home))
    _warm(["checkpoint", "retry-twin", "--base", twin["revision_id"], *PINS["checkpoint"][0][4:]], repo, home)
    git(repo, "status")
    transcript = root / "session.jsonl"
    lines = [{"type": "user", "uuid": f"u{n}", "sessionId": "s1", "cwd": str(repo),
              "timestamp": f"2026-11-30T10:0{n}:00Z", "message": {"role": "user", "content": f"prompt {n}"}}
             for n in range(5)]  # fmt: skip
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return {"repo": str(repo), "home": str(home), "base": json.loads(first.stdout)["revision_id"],
            "transcript": str(transcript)}  # fmt: skip


@pytest.mark.parametrize("name", sorted(PINS))
def test_a_command_loads_only_what_it_needs(world: dict[str, str], name: str) -> None:
    args, allowed, extra_std = PINS[name]
    args = [arg.format(**world) for arg in args]
    code, modules, stdout = _modules(args, Path(world["repo"]), Path(world["home"]))
    assert code == 0, stdout
    ours = {m for m in modules if m == "wheypoint" or m.startswith("wheypoint.")}
    assert not ours - allowed, f"{name} loads wheypoint modules outside its pin: {sorted(ours - allowed)}"
    baseline = _baseline(Path(world["repo"]))
    heavy = {m for m in modules - baseline if m.split(".")[0] in HEAVY or m in HEAVY} - extra_std
    assert not heavy, f"{name} loads heavy standard modules: {sorted(heavy)}"


@pytest.mark.parametrize("name", ["show", "list", "resolve", "validate", "checkpoint", "turns"])
def test_a_command_loads_neither_the_json_package_nor_sqlite3_s_python_layer(world: dict[str, str], name: str) -> None:
    # `json` compiles six patterns as it loads (jsontext.py), and `sqlite3` imports `datetime` for adapters the
    # store never uses (store/sqlite/driver.py): 1-2 ms of each start apiece. Their C modules do the work.
    args = [arg.format(**world) for arg in PINS[name][0]]
    if name != "checkpoint":  # (a read, run once before as the program runs it; the checkpoint's twin was written)
        _warm(args, Path(world["repo"]), Path(world["home"]))
    code, modules, stdout = _modules(args, Path(world["repo"]), Path(world["home"]))
    assert code == 0 and "_json" in modules and ("_sqlite3" in modules or name == "turns"), stdout
    # nor `re` (and `enum`), which a bare interpreter, the pyz's, has not loaded: a pattern a command runs comes
    # from the file the same command kept when it ran before (patterns.py), as every command but an install's first
    unwanted = {"json", "sqlite3", "sqlite3.dbapi2", "datetime", "re", "enum"}
    assert not unwanted & modules, sorted(unwanted & modules)


# The program as its console script runs it, reporting the modules it loaded as it ends (it ends with os._exit).
_PROGRAM = """
import json, os, sys
sys.path.insert(0, sys.argv.pop(1))
end = os._exit
def report(code):
    print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
    sys.stderr.flush()
    end(code)
os._exit = report
from wheypoint.cli.entry import run
run()
"""


@pytest.mark.parametrize("line", [["hook", "Stop", "--harness", "claude-code"], ["hook", "Stop", "--harness"]])
def test_a_hook_line_loads_no_other_command_s_declaration(
    world: dict[str, str], tmp_path: Path, line: list[str]
) -> None:
    """A harness runs a hook on every turn: its line is read by its own declaration (cli/hookline.py), never the
    table of every command nor their dispatcher; a malformed line too, answered and exit 0. `--help` still gets
    the command's help, from the table."""
    env = {"PATH": os.environ.get("PATH", ""), "WHEYPOINT_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    payload = json.dumps({"session_id": "s9", "transcript_path": str(tmp_path / "none.jsonl"), "cwd": world["repo"],
                          "hook_event_name": "Stop"})  # fmt: skip
    done = subprocess.run([sys.executable, "-S", "-c", _PROGRAM, str(SRC), *line], input=payload, cwd=world["repo"],
                          env=env, capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert done.returncode == 0 and report["code"] == 0, done.stdout + done.stderr
    assert isinstance(json.loads(done.stdout), dict), done.stdout
    assert "wheypoint.cli.hookline" in report["modules"]
    assert not {"wheypoint.cli.main", "wheypoint.cli.commands"} & set(report["modules"]), report["modules"]
    helped = subprocess.run([sys.executable, "-S", "-c", _PROGRAM, str(SRC), *line, "--help"], cwd=world["repo"],
                            env=env, capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert helped.returncode == 0 and helped.stdout.startswith("usage: wheypoint hook <event>"), helped.stdout


def test_a_session_start_loads_neither_a_note_parser_nor_openssl(world: dict[str, str], tmp_path: Path) -> None:
    """SessionStart hands the pending work's packet to every session that starts: it parses no note and lints none
    (their patterns compile as they load: `re`, `enum`), and it fingerprints the packet with the interpreter's own
    SHA-256 (hashlib loads OpenSSL): each about 2 ms of the hook."""
    home = tmp_path / "home"
    (tmp_path / "s1.jsonl").write_bytes(Path(world["transcript"]).read_bytes())
    env = {"PATH": os.environ.get("PATH", ""), "WHEYPOINT_HOME": str(home), "HOME": str(home)}
    payload = json.dumps({"session_id": "s1", "transcript_path": str(tmp_path / "s1.jsonl"), "cwd": world["repo"],
                          "hook_event_name": "PreCompact", "trigger": "auto"})  # fmt: skip
    kept = _warm(["hook", "PreCompact", "--harness", "claude-code"], Path(world["repo"]), home, payload)
    assert "kept 5 turn(s) verbatim" in kept, kept

    def start(session: str) -> str:
        return json.dumps({"session_id": session, "cwd": world["repo"], "hook_event_name": "SessionStart"})

    hook = ["hook", "SessionStart", "--harness", "claude-code"]
    _warm(hook, Path(world["repo"]), home, start("s2"))  # (as every later start finds it: its patterns kept)
    done = subprocess.run([sys.executable, "-S", "-c", _PROBE, str(SRC), *hook], input=start("s3"), cwd=world["repo"],
                          env=env, capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    loaded = set(json.loads(done.stderr.strip().splitlines()[-1])["modules"])
    assert "prompt 4" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"], done.stdout
    unwanted = {"wheypoint.notes.parse", "wheypoint.notes.lint", "re", "enum", "hashlib", "_hashlib", "json"}
    assert not unwanted & loaded, sorted(unwanted & loaded)


@pytest.mark.parametrize("event", ["PreCompact", "Stop"])
def test_a_hook_with_nothing_new_reads_no_transcript_and_loads_no_reader_or_store(
    world: dict[str, str], tmp_path: Path, event: str
) -> None:
    """Once a session is rescued, a PreCompact whose transcript has not changed by a byte, or a Stop whose
    transcript grew too little, answers from the hooks' state alone: the transcript readers, the store's backend,
    the checkpoint and the renderer stay unloaded (the log's scrub and the store's location are all it needs)."""
    home = tmp_path / "home"
    transcript = tmp_path / "s1.jsonl"
    transcript.write_bytes(Path(world["transcript"]).read_bytes())
    env = {"PATH": os.environ.get("PATH", ""), "WHEYPOINT_HOME": str(home), "HOME": str(home)}

    def payload(name: str, session: str) -> str:
        return json.dumps({"session_id": session, "transcript_path": str(tmp_path / f"{session}.jsonl"),
                           "cwd": world["repo"], "hook_event_name": name, "trigger": "auto"})  # fmt: skip

    def fire(name: str = "PreCompact") -> tuple[str, set[str]]:
        argv = [sys.executable, "-S", "-c", _PROBE, str(SRC), "hook", name, "--harness", "claude-code"]
        stdin = payload(name, "s1")
        done = subprocess.run(argv, input=stdin, cwd=world["repo"], env=env, capture_output=True, text=True,
                              timeout=60, check=False)  # fmt: skip
        return done.stdout, set(json.loads(done.stderr.strip().splitlines()[-1])["modules"])

    # Another session with the same words has kept the patterns a rescue of them compiles (as the world's twin did)
    (tmp_path / "s0.jsonl").write_bytes(transcript.read_bytes().replace(b'"s1"', b'"s0"'))
    hook = ["hook", "PreCompact", "--harness", "claude-code"]
    warm = _warm(hook, Path(world["repo"]), home, payload("PreCompact", "s0"))
    assert "kept 5 turn(s) verbatim" in warm, warm
    first, loaded = fire()
    assert "kept 5 turn(s) verbatim" in first and "wheypoint.transcripts.discovery" in loaded, first
    unwanted = {"json", "sqlite3", "datetime", "re", "enum"}  # (`re` and `enum`: the patterns come from the kept file)
    assert not unwanted & loaded, sorted(unwanted & loaded)
    again, loaded = fire(event)
    assert json.loads(again) == {}, again
    unwanted = {"wheypoint.transcripts.discovery", "wheypoint.transcripts.claude", "wheypoint.app.checkpoint",
                "wheypoint.model.kernel", "wheypoint.notes.render", *(_STORE - {"wheypoint.store"})}  # fmt: skip
    assert not loaded & unwanted, sorted(loaded & unwanted)
    if event == "Stop":  # a Stop waits for the transcript to grow by STOP_GROWTH
        transcript.write_bytes(transcript.read_bytes() + b"\n" * STOP_GROWTH)
    else:  # one byte more: located and read again
        transcript.write_bytes(transcript.read_bytes() + b"\n")
    _, loaded = fire(event)
    assert "wheypoint.transcripts.discovery" in loaded
    # A new prompt that names no secret is kept without the scan's rules being loaded: the kept needle index says
    # none can match (credential_table.py), so neither the hand-written rules nor the generated ones are imported.
    line = json.loads(Path(world["transcript"]).read_text(encoding="utf-8").splitlines()[-1])
    line.update(uuid="u-new", timestamp="2030-01-01T00:00:00Z", message={"role": "user", "content": "Go on, please."})
    transcript.write_bytes(transcript.read_bytes() + (json.dumps(line) + "\n").encode() + b"\n" * STOP_GROWTH)
    kept, loaded = fire(event)
    assert event == "Stop" or "kept 1 turn(s) verbatim" in kept, kept
    rules = {"wheypoint.model.credential_hand", "wheypoint.model.credential_rules", "wheypoint.model.credential_near"}
    assert "wheypoint.model.credential_table" in loaded and not rules & loaded, sorted(rules & loaded)


def test_the_program_raises_the_collectors_first_threshold_before_it_imports_a_command(tmp_path: Path) -> None:
    # The entry every runtime calls (console script, `python -m wheypoint`, the pyz) sets the threshold, then imports
    # the program, so the imports that follow and the command run under it. Its other two thresholds are Python's.
    probe = (
        "import gc, json, sys; sys.path.insert(0, sys.argv[1]); default = gc.get_threshold()\n"
        "import wheypoint.cli.entry as entry\n"
        "class Finder:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'wheypoint.cli.main':\n"
        "            print(json.dumps([default, gc.get_threshold()]), file=sys.stderr, flush=True)\n"
        "sys.meta_path.insert(0, Finder())\n"
        "entry.run()\n"  # the program itself, with no command: a usage refusal
    )
    done = subprocess.run([sys.executable, "-S", "-c", probe, str(SRC)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    from wheypoint.cli.entry import YOUNG_THRESHOLD

    assert done.returncode == 2 and '"ok": false' in done.stdout, done.stdout + done.stderr
    default, during = json.loads(done.stderr.splitlines()[0])
    assert default[0] != YOUNG_THRESHOLD and during == [YOUNG_THRESHOLD, *default[1:]]
