"""How much SessionStart context Codex CLI hands to the model whole: the real `codex exec` against the mock model.

A SessionStart hook of its own answers `hookSpecificOutput.additionalContext` of N copies of one character between
two markers; the mock logs the request, and the context counts as whole when the request holds it exactly, as one
text. For ASCII, 'ü' (2 UTF-8 bytes) and an emoji (4 bytes, 2 UTF-16 units) it tries growing sizes up to --max, and
between the largest whole and the smallest cut it searches for the limit. Prints the figures as JSON; wheypoint's
default budget (hooks/events.py DEFAULT_BUDGET) is set beside them.

    WHEYPOINT_E2E_CACHE=/root/.cache/wheypoint-e2e/clis python3 bench/packet_limit_codex.py [--max 1000000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "e2e"), str(ROOT / "tests"), str(ROOT / "src")]

import clis  # noqa: E402
import mockmodel  # noqa: E402
import wire_openai  # noqa: E402

from conftest import make_repo  # noqa: E402
from wheypoint.hooks.events import DEFAULT_BUDGET  # noqa: E402

CHARS = {"ascii": "a", "u-umlaut": "ü", "emoji": "\U0001f600"}
EMIT = """import json, sys
sys.stdin.read()
spec = json.load(open(sys.argv[1], encoding="utf-8"))
text = "<<BEGIN>>" + spec["char"] * spec["count"] + "<<END>>"
print(json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}))
"""


def sizes(text: str) -> dict[str, int]:
    return {"chars": len(text), "utf16_units": len(text.encode("utf-16-le")) // 2, "bytes": len(text.encode())}


class Probe:
    def __init__(self, root: Path, model: mockmodel.MockModel) -> None:
        self.model = model
        self.env = clis.scratch_env(root)
        home = Path(self.env["HOME"]) / ".codex"
        home.mkdir(parents=True, exist_ok=True)
        (root / "tmp").mkdir()  # Codex saves a cut hook output whole under $TMPDIR/hook_outputs: kept in the scratch
        self.env.update(CODEX_HOME=str(home), MOCK_API_KEY="sk-mock", TMPDIR=str(root / "tmp"))
        self.repo = make_repo(root / "repo")
        self.spec = root / "spec.json"
        (root / "emit.py").write_text(EMIT, encoding="utf-8")
        command = f"{sys.executable} {root / 'emit.py'} {self.spec}"
        hooks = {"SessionStart": [{"hooks": [{"type": "command", "command": command, "timeout": 30}]}]}
        (home / "hooks.json").write_text(json.dumps({"hooks": hooks}), encoding="utf-8")
        (home / "config.toml").write_text(f'''model = "mock-model"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "read-only"

[model_providers.mock]
name = "mock"
base_url = "{model.url}/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"
''', encoding="utf-8")  # fmt: skip
        self.binary = str(clis.installed("codex"))

    def whole(self, char: str, count: int) -> tuple[bool, dict[str, Any]]:
        """Whether `count` copies of `char` reached the model as one whole text, and what did."""
        self.spec.write_text(json.dumps({"char": char, "count": count}), encoding="utf-8")
        before = len(self.model.requests)
        done = subprocess.run([self.binary, "exec", "--dangerously-bypass-hook-trust", "probe"], cwd=self.repo,
                              env=self.env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120,
                              check=False)  # fmt: skip
        sent = "<<BEGIN>>" + char * count + "<<END>>"
        bodies = [r.body for r in self.model.requests[before:] if r.path.endswith("/responses") and r.body]
        texts = [wire_openai.text_of(i.get("content")) for body in bodies for i in body.get("input", [])
                 if isinstance(i, dict)]  # fmt: skip
        seen = [t for t in texts if "<<BEGIN>>" in t]
        found = {"exit": done.returncode, "requests": len(bodies), "texts_with_marker": len(seen),
                 "longest_seen": max((sizes(t)["chars"] for t in seen), default=0)}  # fmt: skip
        if seen and sent not in seen:
            found["seen_head"] = seen[0][:100]  # what Codex put in its place
        if done.returncode != 0:
            found["stderr"] = done.stderr[-600:]
        return any(t == sent for t in seen), found


STEPS = (1_000, 4_000, 9_000, 10_000, 16_000, 64_000, 256_000, 1_000_000)


def measure(probe: Probe, char: str, most: int) -> dict[str, Any]:
    whole_at, cut_at, trials = 0, None, []
    for count in [step for step in STEPS if step < most] + [most]:
        ok, found = probe.whole(char, count)
        trials.append({"count": count, "whole": ok, **found})
        if not ok:
            cut_at = count
            break
        whole_at = count
    while cut_at is not None and cut_at - whole_at > 1:  # to the character
        middle = (whole_at + cut_at) // 2
        ok, found = probe.whole(char, middle)
        trials.append({"count": middle, "whole": ok, **found})
        whole_at, cut_at = (middle, cut_at) if ok else (whole_at, middle)
    largest = sizes("<<BEGIN>>" + char * whole_at + "<<END>>") if whole_at else None
    smallest = sizes("<<BEGIN>>" + char * cut_at + "<<END>>") if cut_at is not None else None
    return {"largest_whole": largest, "smallest_cut": smallest, "trials": trials}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=1_000_000, help="the most characters to try (default 1,000,000)")
    args = parser.parse_args()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="wheypoint-packet-codex-") as folder:
        root = Path(folder)
        with mockmodel.MockModel([wire_openai.route], log_path=root / "requests.jsonl", lifetime=1800) as model:
            probe = Probe(root, model)
            results = {name: measure(probe, char, args.max) for name, char in CHARS.items()}
    print(json.dumps({"harness": "codex", "version": clis.PINS["codex"][1], "default_budget_chars": DEFAULT_BUDGET,
                      "max_tried": args.max, "results": results, "seconds": round(time.monotonic() - started, 1)},
                     ensure_ascii=False, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
