"""Measure: the largest packet OpenCode hands to the model whole through wheypoint's plugin, and what it costs.

OpenCode 1.18.33 (the pinned CLI of tests/e2e/clis.py) runs headless (`opencode run`, the prompt on stdin)
against the suite's mock model (tests/e2e/mockmodel.py with wire_chat) in a scratch home, with wheypoint's plugin
installed by `hooks install --harness opencode --command <stand-in>`: the stand-in answers `hook SessionStart`
with `{"context": X}`, X of an exact length made of ASCII, 'ü' (2 UTF-8 bytes, 1 UTF-16 unit) or an emoji
(4 bytes, 2 units). The plugin adds X to the session's system prompt (experimental.chat.system.transform); a
probe is `whole` when a request the mock logged holds a system message equal to X, `cut` when one starts with a
part of it, `absent` otherwise. Sizes double from 10,000 characters up to --max (default 4,000,000); the model's
context limit in the config is set far above them, so OpenCode's own overflow check does not interfere.

    WHEYPOINT_E2E_CACHE=/root/.cache/wheypoint-e2e/clis python3 bench/packet_limit_opencode.py [--max N]

Prints one JSON document: each probe's size in code points, UTF-16 units and UTF-8 bytes, its verdict and the
seconds the run took. 15-35 s a probe on two shared cores (18 probes).

Measured 2026-12-01 on OpenCode 1.18.33: every probe arrived whole, up to 2,560,000 code points in each alphabet
(ASCII 2,560,000 units and bytes; 'ü' 2,560,000 units, 5,119,963 bytes; emoji 5,119,963 units, 10,239,889
bytes), in the agent's request and in the title request alike. OpenCode cuts no system prompt entry a plugin
adds: the bound is the model's context window, far above wheypoint's default budget (hooks/events.py
DEFAULT_BUDGET, 10,000 characters).
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
import wire_chat  # noqa: E402

ALPHABETS = {"ascii": "a", "u-umlaut": "ü", "emoji": "\N{GRINNING FACE}"}
TIMEOUT = 180
STAND_IN = """import json, os, sys
payload = json.load(sys.stdin)
size, char = int(os.environ["BENCH_SIZE"]), os.environ["BENCH_CHAR"]
text = "wheypoint: the handoff of work bench " + char * max(0, size - 37)
print(json.dumps({"context": text, "message": ""}, ensure_ascii=False))
"""


def packet(size: int, char: str) -> str:
    """The text the stand-in prints for a size (in code points): the same expression as STAND_IN's."""
    return "wheypoint: the handoff of work bench " + char * max(0, size - 37)


def setup(root: Path, url: str) -> tuple[dict[str, str], Path]:
    import test_opencode  # the e2e's own configuration of OpenCode, so the bench measures the same setup

    test_opencode.CONTEXT_LIMIT = 100_000_000
    env, repo = test_opencode.configure(root, url)
    script = root / "stand-in.py"
    script.write_text(STAND_IN, encoding="utf-8")
    stand_in = root / "stand-in" / "wheypoint"  # `--command` must name wheypoint, so that its hooks are found again
    stand_in.parent.mkdir()
    stand_in.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(str(script))} "$@"\n')
    stand_in.chmod(0o755)
    command = str(stand_in)
    done = subprocess.run([sys.executable, "-m", "wheypoint", "hooks", "install", "--harness", "opencode",
                           "--command", command], env=env, cwd=repo, capture_output=True, text=True, timeout=60,
                          check=False)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(done.stdout + done.stderr)
    return env, repo


def verdict(requests: list[Any], text: str) -> str:
    systems = [wire_chat.text_of(m.get("content")) for body in requests for m in body.get("messages") or []
               if m.get("role") == "system"]  # fmt: skip
    if text in systems:
        return "whole"
    head = text[:200]
    return "cut" if any(s.startswith(head) for s in systems) else "absent"


def probe(opencode: str, env: dict[str, str], repo: Path, model: mockmodel.MockModel, size: int,
          char: str) -> dict[str, Any]:  # fmt: skip
    text = packet(size, char)
    before = len(model.bodies("/chat/completions"))
    started = time.monotonic()
    done = subprocess.run([opencode, "run"], input="bench: say ok", env={**env, "BENCH_SIZE": str(size),
                          "BENCH_CHAR": char}, cwd=repo, capture_output=True, text=True, timeout=TIMEOUT,
                          check=False)  # fmt: skip
    seconds = round(time.monotonic() - started, 1)
    requests = model.bodies("/chat/completions")[before:]
    return {"code_points": len(text), "utf16_units": len(text.encode("utf-16-le")) // 2,
            "utf8_bytes": len(text.encode("utf-8")), "verdict": verdict(requests, text), "requests": len(requests),
            "exit": done.returncode, "seconds": seconds}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=4_000_000, help="the largest size probed, in code points")
    args = parser.parse_args()
    opencode = str(clis.installed("opencode"))
    sizes = []
    size = 10_000
    while size <= args.max:
        sizes.append(size)
        size *= 4 if size < 640_000 else 2
    report: dict[str, Any] = {"opencode": clis.PINS["opencode"][1], "probes": {}}
    with tempfile.TemporaryDirectory(prefix="packet-limit-opencode-") as tmp:
        model = mockmodel.MockModel([wire_chat.route], lifetime=3600, max_requests=500)
        with model:
            report["probes"] = measure(opencode, Path(tmp), model, sizes)
    report["largest_whole"] = {name: next((p for p in reversed(found) if p["verdict"] == "whole"), None)
                               for name, found in report["probes"].items()}  # fmt: skip
    print(json.dumps(report, indent=1))


def measure(opencode: str, root: Path, model: mockmodel.MockModel, sizes: list[int]) -> dict[str, list[Any]]:
    """Each alphabet's probes, up the sizes until one does not reach the model whole."""
    env, repo = setup(root, model.url)
    probes: dict[str, list[Any]] = {}
    for name, char in ALPHABETS.items():
        found = probes[name] = []
        for size in sizes:
            result = probe(opencode, env, repo, model, size, char)
            found.append(result)
            if result["verdict"] != "whole":
                break
    return probes


if __name__ == "__main__":
    main()
