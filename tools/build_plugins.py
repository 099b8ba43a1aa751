"""Assemble wheypoint's plugins for Claude Code, Codex and Gemini CLI from this repository's skill and runtime.

    python3 tools/build_plugins.py --out DIR [--pyz PATH] [--skill DIR]

Writes, under DIR (empty, absent, or a previous output of this tool, which is replaced):

    .claude-plugin/marketplace.json    Claude Code marketplace: `/plugin marketplace add DIR`
    .agents/plugins/marketplace.json   Codex marketplace: `codex plugin marketplace add DIR`
    claude-code/wheypoint/             Claude Code plugin: .claude-plugin/plugin.json, hooks/hooks.json, .mcp.json
    codex/wheypoint/                   Codex plugin: .codex-plugin/plugin.json, hooks/hooks.json
    gemini/wheypoint/                  Gemini CLI extension: gemini-extension.json, hooks/hooks.json

Each plugin carries the skill (skill/wheypoint/, or --skill) as skills/wheypoint/ with the single-file runtime
in it at skills/wheypoint/scripts/wheypoint.pyz (--pyz, else built by tools/build_pyz.py), the seed-3 snapshot
skill (skill/checkpoint/) beside it as skills/checkpoint/, which runs that same archive, and runs that
runtime from its hooks and MCP server by the harness's own plugin-root variable, quoted for the shell.
Which field each harness reads, and the source that says so: docs/hooks.md and tests/schemas/.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKILL = ROOT / "skill" / "wheypoint"
CHECKPOINT_SKILL = ROOT / "skill" / "checkpoint"  # shipped beside the wheypoint skill, whose runtime it uses
BUILD_PYZ = ROOT / "tools" / "build_pyz.py"
MARKER = ".wheypoint-plugins"  # left in DIR, so that a later build may replace what this one wrote
NAME = "wheypoint"
DESCRIPTION = ("Revisioned, validated handoff checkpoints: the user's rules, decisions and open questions survive "
               "compaction and handoffs.")  # fmt: skip
RUNTIME = "skills/wheypoint/scripts/wheypoint.pyz"  # inside each plugin
# (event as the harness names it, timeout in its unit: seconds, milliseconds for Gemini), as `hooks install` does.
EVENTS = {
    "claude-code": (("PreCompact", 30), ("SessionStart", 10), ("Stop", 10), ("UserPromptSubmit", 10)),
    "codex": (("PreCompact", 30), ("SessionStart", 10), ("Stop", 10), ("UserPromptSubmit", 10)),
    "gemini": (("PreCompress", 30000), ("SessionStart", 10000), ("AfterAgent", 10000), ("BeforeAgent", 10000)),
}
# How each harness names the plugin's root in a hook command. Claude Code and Codex set it in the hook's
# environment (Codex also writes it into the command); Gemini CLI writes ${extensionPath} and ${/} into it.
RUNTIME_PATH = {
    "claude-code": '"${CLAUDE_PLUGIN_ROOT}/' + RUNTIME + '"',
    "codex": '"${PLUGIN_ROOT}/' + RUNTIME + '"',
    "gemini": '"${extensionPath}${/}' + RUNTIME.replace("/", "${/}") + '"',
}


def version() -> str:
    """The package's version, read from src/wheypoint/__init__.py (the one place it is written)."""
    text = (ROOT / "src" / "wheypoint" / "__init__.py").read_text(encoding="utf-8")
    found = re.search(r'^__version__ = "([^"]+)"$', text, re.MULTILINE)
    if found is None:
        raise SystemExit("src/wheypoint/__init__.py states no __version__")
    return found.group(1)


def hooks_file(harness: str) -> dict[str, object]:
    """hooks/hooks.json: `{"hooks": {Event: [{"hooks": [command handler]}]}}`, one group per event, no matcher."""
    events: dict[str, object] = {}
    for event, limit in EVENTS[harness]:
        handler: dict[str, object] = {"type": "command",
                                      "command": f"python3 {RUNTIME_PATH[harness]} hook {event} --harness {harness}",
                                      "timeout": limit}  # fmt: skip
        if harness == "gemini":
            handler = {"name": f"wheypoint-{event.lower()}", **handler}
        events[event] = [{"hooks": [handler]}]
    if harness != "claude-code":  # Codex's HooksFile takes no other key (deny_unknown_fields); Gemini reads `hooks`
        return {"hooks": events}
    return {"description": "wheypoint: rescue checkpoints at compaction, the resume packet at session start",
            "hooks": events}  # fmt: skip


def claude_code(version: str) -> dict[str, object]:
    """The Claude Code plugin's files; hooks/hooks.json, .mcp.json and skills/ are found at their default paths."""
    manifest = {"name": NAME, "version": version, "description": DESCRIPTION, "author": {"name": NAME},
                "license": "MIT", "keywords": ["handoff", "checkpoint", "compaction", "context"]}  # fmt: skip
    mcp = {"mcpServers": {NAME: {"command": "python3", "args": ["${CLAUDE_PLUGIN_ROOT}/" + RUNTIME, "mcp"]}}}
    return {".claude-plugin/plugin.json": manifest, "hooks/hooks.json": hooks_file("claude-code"), ".mcp.json": mcp}


def codex(version: str) -> dict[str, object]:
    """The Codex plugin's files. No MCP server: Codex starts a plugin's server without the plugin's root in its
    arguments (only a relative `cwd` is resolved against it), and the server must run in the user's checkout."""
    manifest = {
        "name": NAME, "version": version, "description": DESCRIPTION, "skills": "./skills/",
        "hooks": "./hooks/hooks.json",
        "interface": {"displayName": NAME, "shortDescription": "Handoff checkpoints that survive compaction",
                      "developerName": NAME, "category": "Productivity", "capabilities": ["Skills", "Hooks"]},
    }  # fmt: skip
    return {".codex-plugin/plugin.json": manifest, "hooks/hooks.json": hooks_file("codex")}


def gemini(version: str) -> dict[str, object]:
    """The Gemini CLI extension's files; skills/ and hooks/hooks.json are found at their fixed paths."""
    runtime = "${extensionPath}${/}" + RUNTIME.replace("/", "${/}")
    manifest = {"name": NAME, "version": version, "description": DESCRIPTION,
                "mcpServers": {NAME: {"command": "python3", "args": [runtime, "mcp"]}}}  # fmt: skip
    return {"gemini-extension.json": manifest, "hooks/hooks.json": hooks_file("gemini")}


def marketplaces(version: str) -> dict[str, object]:
    claude = {"name": NAME, "owner": {"name": NAME}, "metadata": {"description": DESCRIPTION, "version": version},
              "plugins": [{"name": NAME, "source": "./claude-code/wheypoint", "description": DESCRIPTION,
                           "version": version, "category": "productivity"}]}  # fmt: skip
    codex_market = {"name": NAME, "interface": {"displayName": NAME},
                    "plugins": [{"name": NAME, "source": {"source": "local", "path": "./codex/wheypoint"},
                                 "policy": {"installation": "AVAILABLE", "authentication": "ON_INSTALL"},
                                 "category": "Productivity"}]}  # fmt: skip
    return {".claude-plugin/marketplace.json": claude, ".agents/plugins/marketplace.json": codex_market}


def write_json(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def prepare(out: Path) -> None:
    """Make `out` an empty folder: it may be absent, empty, or an earlier output of this tool (then replaced)."""
    if out.exists():
        if not out.is_dir():
            raise SystemExit(f"--out {out} is a file, not a folder")
        if any(out.iterdir()) and not (out / MARKER).is_file():
            raise SystemExit(f"--out {out} is not empty and was not written by this tool; choose another folder")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / MARKER).write_text("written by tools/build_plugins.py; the next build replaces this folder\n")


def runtime(pyz: Path | None, work: Path) -> Path:
    """The runtime to ship: --pyz as given, else one built by tools/build_pyz.py."""
    if pyz is not None:
        if not pyz.is_file():
            raise SystemExit(f"--pyz {pyz} is not a file")
        return pyz
    if not BUILD_PYZ.is_file():
        raise SystemExit(f"no runtime: {BUILD_PYZ} is absent; build wheypoint.pyz and pass --pyz PATH")
    built = work / "wheypoint.pyz"
    done = subprocess.run([sys.executable, str(BUILD_PYZ), "--out", str(built)], capture_output=True, text=True,
                          check=False)  # fmt: skip
    if done.returncode != 0 or not built.is_file():
        raise SystemExit(f"tools/build_pyz.py failed ({done.returncode}): {done.stdout}{done.stderr}")
    return built


def build(out: Path, pyz: Path | None = None, skill: Path = SKILL) -> list[Path]:
    """Build everything under `out`; the JSON files written, in order."""
    if not (skill / "SKILL.md").is_file():
        raise SystemExit(f"no skill at {skill} (no SKILL.md): the plugins carry the skill; pass --skill DIR")
    number = version()
    prepare(out)
    written: list[Path] = []
    with tempfile.TemporaryDirectory() as work:
        archive = runtime(pyz, Path(work))
        for folder, files in (("claude-code", claude_code(number)), ("codex", codex(number)),
                              ("gemini", gemini(number))):  # fmt: skip
            root = out / folder / NAME
            shutil.copytree(skill, root / "skills" / NAME, ignore=shutil.ignore_patterns("__pycache__", ".*"))
            shutil.copytree(CHECKPOINT_SKILL, root / "skills" / CHECKPOINT_SKILL.name,
                            ignore=shutil.ignore_patterns("__pycache__", ".*"))  # fmt: skip
            target = root / RUNTIME
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(archive, target)
            target.chmod(0o755)
            for name, value in files.items():
                write_json(root / name, value)
                written.append(root / name)
    for name, value in marketplaces(number).items():
        write_json(out / name, value)
        written.append(out / name)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the folder to write the plugins into")
    parser.add_argument("--pyz", type=Path, help="the runtime to ship (default: built by tools/build_pyz.py)")
    parser.add_argument("--skill", type=Path, default=SKILL, help=f"the skill folder to ship (default {SKILL})")
    args = parser.parse_args(argv)
    written = build(args.out.resolve(), args.pyz, args.skill)
    print(json.dumps({"ok": True, "out": str(args.out.resolve()), "files": [str(p) for p in written]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
