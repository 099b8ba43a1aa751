"""Measure: the largest hook context Claude Code hands to the model whole, and whether wheypoint's packet fits it.

Claude Code 2.1.197 (the pinned CLI of tests/e2e/clis.py) runs headless against the suite's mock model
(tests/e2e/mockmodel.py with wire_anthropic) in a scratch home; what reached the model is read from the
request bodies the mock logged. Two parts, printed as one JSON document:

- `probes`: hooks of our own answer `hookSpecificOutput.additionalContext` of an exact length, in JavaScript
  string length (UTF-16 code units, what Claude Code compares), made of ASCII, 'ü' (2 UTF-8 bytes, 1 unit) or an
  emoji (4 bytes, 2 units), around the limit, at SessionStart and at UserPromptSubmit. Each is `whole` (its full
  text is in a request), `preview` (a `<persisted-output>` block stands in its place) or `absent`.
- `wheypoint`: a real session per alphabet (three long prompts in it, `/compact`, one more prompt) with
  wheypoint's hooks at their default budget: the SessionStart packet after the compaction, its length in code
  points (what the budget counts), UTF-16 units and UTF-8 bytes, and whether it reached the model whole.

    WHEYPOINT_E2E_CACHE=/root/.cache/wheypoint-e2e/clis python3 bench/packet_limit_claude_code.py [--quick]

`--quick` measures only the probes. About 10 s for the probes and 15 s per alphabet on two cores.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

import clis  # noqa: E402
import mockmodel  # noqa: E402
import wire_anthropic  # noqa: E402
from scenario import strings  # noqa: E402

ALPHABETS = {"ascii": "a", "u-umlaut": "ü", "emoji": "\U0001f600"}
AROUND = (9990, 10000, 10001, 10002, 10010, 12000)  # UTF-16 units: the limit read in the CLI's code is 10,000
HEAD = "WHEYPOINT-PROBE"
CLI_TIMEOUT = 120


def units(text: str) -> int:
    """JavaScript's string length: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def probe_text(tag: str, fill: str, size: int) -> str:
    """A text of exactly `size` UTF-16 units: a head naming it, `fill` repeated, ASCII to even out an emoji."""
    head = f"[{HEAD} {tag}]"
    body = fill * ((size - units(head)) // units(fill))
    text = head + body
    return text + "." * (size - units(text))


def fate(text: str, bodies: list[Any], head: str) -> tuple[str, int | None]:
    """Whether `text` reached the model whole, as a preview (and how many UTF-16 units of it), or not at all;
    `head`, its start, finds it in a preview."""
    found = [s for body in bodies for s in strings(body)]
    if any(text in s for s in found):
        return "whole", None
    for string in found:
        for block in string.split("<persisted-output>")[1:]:
            block = block.split("</persisted-output>")[0]
            if head in block:
                shown = block[block.index(head) :].removesuffix("\n").removesuffix("\n...")
                return "preview", units(shown)
    return "absent", None


def environment(root: Path, base_url: str) -> dict[str, str]:
    env = clis.scratch_env(root)
    config = root / "claude-config"
    config.mkdir(exist_ok=True)
    env.update(CLAUDE_CONFIG_DIR=str(config), ANTHROPIC_BASE_URL=base_url, ANTHROPIC_API_KEY="sk-ant-mock",
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")  # fmt: skip
    return env


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    for args in (["init", "-q", "-b", "main"], ["config", "user.email", "bench@example.com"],
                 ["config", "user.name", "bench"], ["commit", "-q", "--allow-empty", "-m", "start"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True, timeout=30)
    return path


def claude(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [str(clis.installed("claude")), "-p", *args]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=CLI_TIMEOUT, check=False)


def measure_probes(root: Path) -> list[dict[str, Any]]:
    """Every probe hook in one session: each hook's context is checked on its own by the CLI."""
    repo = git_repo(root / "repo")
    answers = root / "answers"
    answers.mkdir()
    echo = root / "echo.py"
    echo.write_text("import sys\nsys.stdin.read()\nsys.stdout.write(open(sys.argv[1], encoding='utf-8').read())\n")
    probes: list[dict[str, Any]] = []
    hooks: dict[str, list[dict[str, Any]]] = {}
    for event in ("SessionStart", "UserPromptSubmit"):
        handlers = []
        for alphabet, fill in ALPHABETS.items():
            for size in AROUND:
                tag = f"{event}-{alphabet}-{size}"
                text = probe_text(tag, fill, size)
                answer = answers / f"{tag}.json"
                out = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
                answer.write_text(json.dumps(out, ensure_ascii=False), encoding="utf-8")
                command = f'"{sys.executable}" "{echo}" "{answer}"'
                handlers.append({"type": "command", "command": command, "timeout": 30})
                probes.append({"event": event, "alphabet": alphabet, "units": units(text), "code_points": len(text),
                               "bytes": len(text.encode("utf-8")), "text": text})  # fmt: skip
        hooks[event] = [{"hooks": handlers}]
    with mockmodel.MockModel([wire_anthropic.route], log_path=root / "requests.jsonl", lifetime=300) as model:
        env = environment(root, model.url)
        (root / "claude-config" / "settings.json").write_text(json.dumps({"hooks": hooks}), encoding="utf-8")
        done = claude(env, repo, "measure the hook context")
        bodies = model.bodies("/v1/messages")
    if done.returncode != 0 or not bodies:
        raise SystemExit(f"claude -p failed ({done.returncode}): {done.stdout[-400:]} {done.stderr[-400:]}")
    for probe in probes:
        text = probe.pop("text")
        probe["fate"], probe["preview_units"] = fate(text, bodies, text[: text.index("]") + 1])
    return probes


def summary(probes: list[dict[str, Any]]) -> dict[str, Any]:
    """Per event and alphabet: the largest length that arrived whole and the smallest that did not."""
    out: dict[str, Any] = {}
    for probe in probes:
        key = f"{probe['event']}/{probe['alphabet']}"
        entry = out.setdefault(key, {"largest_whole": None, "smallest_cut": None})
        if probe["fate"] == "whole":
            if entry["largest_whole"] is None or probe["units"] > entry["largest_whole"]["units"]:
                entry["largest_whole"] = {k: probe[k] for k in ("units", "code_points", "bytes")}
        elif entry["smallest_cut"] is None or probe["units"] < entry["smallest_cut"]["units"]:
            entry["smallest_cut"] = {k: probe[k] for k in ("units", "code_points", "bytes", "fate")}
    return out


def measure_wheypoint(root: Path, alphabet: str, fill: str) -> dict[str, Any]:
    """A session of three long prompts, `/compact`, one prompt: wheypoint's SessionStart packet after it."""
    repo = git_repo(root / "repo")
    with mockmodel.MockModel([wire_anthropic.route], log_path=root / "requests.jsonl", lifetime=300) as model:
        env = environment(root, model.url)
        done = subprocess.run([sys.executable, "-m", "wheypoint", "hooks", "install", "--harness", "claude-code"],
                              cwd=repo, env=env, capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"hooks install failed: {done.stdout} {done.stderr}")
        prompts = [f"Prompt {n} in {alphabet}: " + fill * 4000 for n in (1, 2, 3)]
        for n, prompt in enumerate([*prompts, "/compact", "After the compaction."]):
            claude(env, repo, *(["--continue"] if n else []), prompt)
        bodies = model.bodies("/v1/messages")
    packet = compact_packet(root / "claude-config")
    if packet is None:
        return {"alphabet": alphabet, "error": "no SessionStart:compact context in the transcript"}
    reached, preview = fate(packet, bodies, packet.split("\n", 1)[0])
    return {"alphabet": alphabet, "code_points": len(packet), "units": units(packet),
            "bytes": len(packet.encode("utf-8")), "fate": reached, "preview_units": preview}  # fmt: skip


def compact_packet(config: Path) -> str | None:
    """What wheypoint's SessionStart hook printed after the compaction, from the transcript Claude Code wrote."""
    for path in sorted((config / "projects").glob("*/*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            attachment = record.get("attachment") or {}
            if attachment.get("type") == "hook_success" and attachment.get("hookName") == "SessionStart:compact":
                stdout = json.loads(attachment.get("stdout") or "{}")
                context = (stdout.get("hookSpecificOutput") or {}).get("additionalContext")
                return context if isinstance(context, str) else None
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="only the probe hooks, not wheypoint's own packet")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folders (their paths are printed)")
    args = parser.parse_args()
    started = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="wheypoint-packet-limit-"))
    try:
        probes = measure_probes(scratch / "probes")
        report: dict[str, Any] = {"cli": "claude-code " + clis.PINS["claude"][1], "limit_units_read_in_code": 10000,
                                  "summary": summary(probes), "probes": probes}  # fmt: skip
        if not args.quick:
            from wheypoint.hooks.events import DEFAULT_BUDGET

            report["wheypoint_default_budget"] = DEFAULT_BUDGET
            report["wheypoint"] = [measure_wheypoint(scratch / name, name, fill) for name, fill in ALPHABETS.items()]
        report["seconds"] = round(time.monotonic() - started, 1)
        if args.keep:
            report["scratch"] = str(scratch)
        print(json.dumps(report, ensure_ascii=False, indent=1))
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("WHEYPOINT_E2E_CACHE", str(clis.cache_folder()))
    sys.exit(main())
