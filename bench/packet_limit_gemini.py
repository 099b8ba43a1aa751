"""Measure: the largest packet Gemini CLI hands to the model whole through the BeforeAgent hook wheypoint uses.

Gemini CLI 0.61.0 (the pinned CLI of tests/e2e/clis.py) runs headless (`gemini -m gemini-2.5-flash -p ...`)
against the suite's mock model (tests/e2e/mockmodel.py with wire_gemini) in a scratch home, with one BeforeAgent
hook: a stand-in that answers `hookSpecificOutput.additionalContext` = X, X of an exact length made of ASCII, 'ü'
(2 UTF-8 bytes, 1 UTF-16 unit) or an emoji (4 bytes, 2 units). Gemini adds `<hook_context>X</hook_context>` as a
part of its own after the prompt (X with `<` and `>` escaped; X here holds neither). A probe is `whole` when a
request the mock logged holds that part exactly, `cut` when one holds a part that starts like it, `absent`
otherwise (the run's exit code and stderr tail are kept). Sizes double from 10,000 characters up to --max
(default 5,120,000); an alphabet stops at its first probe that is not whole. Two ways to print the answer:
`raw` (UTF-8, as a hook usually does) and `escaped` (non-ASCII as JSON escapes, as wheypoint's Gemini hooks do):
Gemini decodes a hook's stdout 64 KiB at a time, so in `raw` a character split between two reads is mangled.

    WHEYPOINT_E2E_CACHE=/root/.cache/wheypoint-e2e/clis python3 bench/packet_limit_gemini.py [--max N] [--mode M]

Prints one JSON document: each probe's size in code points, UTF-16 units and UTF-8 bytes, its verdict and the
seconds the run took. About 6 s a probe on two shared cores.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "tests"))

import clis  # noqa: E402
import mockmodel  # noqa: E402
import wire_gemini  # noqa: E402

ALPHABETS = {"ascii": "a", "u-umlaut": "ü", "emoji": "\N{GRINNING FACE}"}
TIMEOUT = 180
MODEL = "gemini-2.5-flash"
STAND_IN = """import json, os, sys
json.load(sys.stdin)
size, char = int(os.environ["BENCH_SIZE"]), os.environ["BENCH_CHAR"]
text = "wheypoint: the handoff of work bench " + char * max(0, size - 37)
out = {"hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": text}}
sys.stdout.write(json.dumps(out, ensure_ascii=os.environ["BENCH_MODE"] == "escaped"))
"""


def packet(size: int, char: str) -> str:
    """The text the stand-in prints for a size (in code points): the same expression as STAND_IN's."""
    return "wheypoint: the handoff of work bench " + char * max(0, size - 37)


def setup(root: Path, url: str) -> tuple[dict[str, str], Path]:
    env = clis.scratch_env(root)
    repo = root / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    stand_in = root / "stand-in.py"
    stand_in.write_text(STAND_IN, encoding="utf-8")
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(stand_in))}"
    settings = {"security": {"auth": {"selectedType": "gemini-api-key"}},
                "hooks": {"BeforeAgent": [{"hooks": [{"name": "bench", "type": "command", "command": command,
                                                      "timeout": 60000}]}]}}  # fmt: skip
    folder = Path(env["HOME"]) / ".gemini"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    env.update(GOOGLE_GEMINI_BASE_URL=url, GEMINI_API_KEY="mock-key", GEMINI_CLI_TRUST_WORKSPACE="true",
               GEMINI_CLI_NO_RELAUNCH="true")  # fmt: skip
    return env, repo


def probe(size: int, char: str, mode: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        with mockmodel.MockModel([wire_gemini.route], log_path=root / "requests.jsonl", lifetime=TIMEOUT + 30) as mock:
            env, repo = setup(root, mock.url)
            env.update(BENCH_SIZE=str(size), BENCH_CHAR=char, BENCH_MODE=mode)
            started = time.monotonic()
            done = subprocess.run([str(clis.installed("gemini")), "-m", MODEL, "-p", "Where were we?"], env=env,
                                  cwd=repo, capture_output=True, text=True, timeout=TIMEOUT, check=False)  # fmt: skip
            seconds = round(time.monotonic() - started, 1)
            text = packet(size, char)
            wanted = f"<hook_context>{text}</hook_context>"
            parts = [p.get("text") for body in mock.bodies(":") if isinstance(body, dict)
                     for c in body.get("contents", []) for p in c.get("parts", []) if isinstance(p, dict)]  # fmt: skip
    verdict = "absent"
    if wanted in parts:
        verdict = "whole"
    elif any(isinstance(p, str) and p.startswith(wanted[:64]) for p in parts):
        verdict = "cut"
    tail = done.stderr.strip()[-200:] if verdict != "whole" else ""
    return {"code_points": len(text), "utf16_units": len(text.encode("utf-16-le")) // 2,
            "utf8_bytes": len(text.encode("utf-8")), "verdict": verdict, "seconds": seconds,
            "exit": done.returncode, "stderr_tail": tail}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max", type=int, default=5_120_000, help="the largest size to try, in code points")
    parser.add_argument("--mode", choices=("raw", "escaped", "both"), default="both")
    args = parser.parse_args()
    results: dict[str, list[dict[str, Any]]] = {}
    for mode in ("raw", "escaped") if args.mode == "both" else (args.mode,):
        for name, char in ALPHABETS.items():
            if mode == "escaped" and char.isascii():
                continue  # the same bytes as raw
            probes = results[f"{name} {mode}"] = []
            size = 10_000
            while size <= args.max:
                probes.append(probe(size, char, mode))
                if probes[-1]["verdict"] != "whole":
                    break
                size *= 2
    largest = {name: max((p["code_points"] for p in probes if p["verdict"] == "whole"), default=0)
               for name, probes in results.items()}  # fmt: skip
    print(json.dumps({"cli": "gemini 0.61.0", "hook": "BeforeAgent", "largest_whole_code_points": largest,
                      "probes": results}, ensure_ascii=False, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
