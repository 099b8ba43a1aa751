"""The real harness CLIs for the end-to-end suite: pinned npm packages installed once into a cache outside the checkout.

    python3 tests/e2e/clis.py        # install (or check) the pinned CLIs; .ci/run does this before the tests

installs all the packages at their pinned versions with npm (about a gigabyte, a minute or two) into
`$WHEYPOINT_E2E_CACHE`, else a folder under the system's temporary directory named after the pins, so a change of
pin installs afresh. npm's own cache lives inside that folder too: nothing is read from or written to the
developer's home. The tests never install (no network while they run): `installed(name)` gives a CLI's
executable, and without it the suite skips with the command above, and fails under CI, where it must run.

`scratch_env(root)` is the environment a CLI runs in: a fresh HOME and XDG folders under `root`, the machine's
PATH, and nothing of the developer's harness or wheypoint variables.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for conftest's helpers

from conftest import missing

# The versions the suite proves; docs/hooks.md's tables name the same.
PINS = {
    "claude": ("@anthropic-ai/claude-code", "2.1.197"),
    "codex": ("@openai/codex", "0.171.0"),
    "gemini": ("@google/gemini-cli", "0.61.0"),
    "opencode": ("opencode-ai", "1.18.33"),
    "mcp-inspector": ("@modelcontextprotocol/inspector", "0.15.0"),
}
INSTALL_TIMEOUT = 900  # seconds for the one npm install


def cache_folder() -> Path:
    given = os.environ.get("WHEYPOINT_E2E_CACHE")
    if given:
        return Path(given)
    tag = hashlib.sha256(json.dumps(PINS, sort_keys=True).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"wheypoint-e2e-{tag}"


def installed(name: str) -> Path:
    """The executable of one pinned CLI (`claude`, `codex`, `gemini`, `opencode`, `mcp-inspector`)."""
    binary = cache_folder() / "node_modules" / ".bin" / name
    if not binary.exists():
        missing(f"{name} is not installed for the end-to-end suite ({binary} is absent): run "
                "`python3 tests/e2e/clis.py` first (it installs the pinned CLIs with npm)")  # fmt: skip
    return binary


def install() -> Path:
    """Install the pinned CLIs into the cache folder, unless every one is there already; the folder."""
    folder = cache_folder()
    names = [folder / "node_modules" / ".bin" / name for name in PINS]
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("npm is not installed: the end-to-end suite drives the harnesses' own CLIs, from npm")
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("w") as lock:  # two installs never run at once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not all(path.exists() for path in names):
            _install(str(npm), folder)
    absent = [path.name for path in names if not path.exists()]
    if absent:
        raise SystemExit(f"npm installed the pinned CLIs into {folder}, but {', '.join(absent)} are not there")
    return folder


def _install(npm: str, folder: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("npm_", "NPM_"))}
    env.update(HOME=str(folder / "home"), npm_config_cache=str(folder / "npm-cache"),
               npm_config_update_notifier="false", npm_config_fund="false", npm_config_audit="false")  # fmt: skip
    (folder / "package.json").write_text('{"name": "wheypoint-e2e-clis", "private": true}\n', encoding="utf-8")
    specs = [f"{package}@{version}" for package, version in PINS.values()]
    try:
        done = subprocess.run([npm, "install", "--no-save", "--prefix", str(folder), *specs], env=env,
                              capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise SystemExit(f"npm install of the pinned CLIs did not finish in {INSTALL_TIMEOUT} s") from None
    if done.returncode != 0:
        raise SystemExit(f"npm could not install the pinned CLIs ({done.stderr.strip()[-400:]})")


# Variables of the developer's own harnesses, wheypoint and toolchains that must not reach a CLI under test.
_DROPPED_PREFIXES = ("WHEYPOINT_", "CLAUDE", "ANTHROPIC_", "CODEX_", "OPENAI_", "GEMINI_", "GOOGLE_", "OPENCODE",
                     "XDG_", "npm_", "NODE_OPTIONS")  # fmt: skip


def scratch_env(root: Path) -> dict[str, str]:
    """A hermetic environment for a CLI: HOME and the XDG folders under `root`, nothing of the developer's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_DROPPED_PREFIXES)}
    home = root / "home"
    for sub in ("", ".config", ".cache", ".local/share", ".local/state"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_CACHE_HOME=str(home / ".cache"),
               XDG_DATA_HOME=str(home / ".local/share"), XDG_STATE_HOME=str(home / ".local/state"),
               WHEYPOINT_HOME=str(root / "wheypoint"), NO_COLOR="1", TERM="dumb")  # fmt: skip
    env.pop("CI", None)  # the CLIs behave alike on a developer's machine and in CI
    for name in ("PWD", "OLDPWD"):  # OpenCode takes $PWD for its folder, before the folder it is started in
        env.pop(name, None)
    return env


if __name__ == "__main__":
    print(install())
