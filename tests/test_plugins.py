"""tools/build_plugins.py: every manifest it writes fits its harness's schema, and every hook command it writes runs."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conftest import missing
from wheypoint.hooks.install import EVENTS

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "build_plugins.py"
SCHEMAS = Path(__file__).resolve().parent / "schemas"
# Each file the tool writes (relative to --out) and the schema in tests/schemas/ it must fit.
MANIFESTS = {
    ".claude-plugin/marketplace.json": "claude-code-marketplace.schema.json",
    ".agents/plugins/marketplace.json": "codex-marketplace.schema.json",
    "claude-code/wheypoint/.claude-plugin/plugin.json": "claude-code-plugin.schema.json",
    "claude-code/wheypoint/hooks/hooks.json": "claude-code-hooks.schema.json",
    "claude-code/wheypoint/.mcp.json": "mcp.schema.json",
    "codex/wheypoint/.codex-plugin/plugin.json": "codex-plugin.schema.json",
    "codex/wheypoint/hooks/hooks.json": "codex-hooks.schema.json",
    "gemini/wheypoint/gemini-extension.json": "gemini-extension.schema.json",
    "gemini/wheypoint/hooks/hooks.json": "gemini-hooks.schema.json",
}
PLUGIN_ROOTS = {"claude-code": "claude-code/wheypoint", "codex": "codex/wheypoint", "gemini": "gemini/wheypoint"}


def _tool() -> Any:
    spec = importlib.util.spec_from_file_location("build_plugins", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True, timeout=120,
                          check=False)  # fmt: skip


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    """A stand-in for skill/wheypoint/ (which another part of the project writes)."""
    folder = tmp_path / "skill src" / "wheypoint"
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: wheypoint\ndescription: stand-in\n---\n\n# wheypoint\n")
    (folder / "references" / "flags.md").write_text("# flags\n")
    (folder / ".cache").mkdir()
    (folder / ".cache" / "junk").write_text("not shipped\n")
    return folder


@pytest.fixture
def built(tmp_path: Path, skill: Path, pyz: Path) -> Path:
    out = tmp_path / "plugin out"  # a space in every path the hooks run
    done = _build("--out", str(out), "--skill", str(skill), "--pyz", str(pyz))
    assert done.returncode == 0, done.stdout + done.stderr
    reply = json.loads(done.stdout)
    assert reply["ok"] is True and sorted(reply["files"]) == sorted(str(out / name) for name in MANIFESTS)
    return out


@pytest.mark.parametrize("schema", sorted(set(MANIFESTS.values())))
def test_each_schema_is_a_valid_draft_2020_12_schema_citing_its_source(schema: str) -> None:
    document = _read(SCHEMAS / schema)
    jsonschema.Draft202012Validator.check_schema(document)
    # Each cites the repository and the files it was written from.
    comment = document["$comment"]
    assert re.search(r"\b(anthropics/claude-code|openai/codex|google-gemini/gemini-cli|SchemaStore/schemastore)\b",
                     comment), schema  # fmt: skip
    assert re.search(r"\b[\w.-]+/[\w./-]+\.(rs|ts|json|md)\b", comment), schema


def test_every_manifest_fits_its_schema(built: Path) -> None:
    for name, schema in MANIFESTS.items():
        validator = jsonschema.Draft202012Validator(_read(SCHEMAS / schema))
        problems = [f"{name}: {'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(
            _read(built / name))]  # fmt: skip
        assert not problems, "\n".join(problems)


def test_the_schemas_catch_what_the_harnesses_refuse() -> None:
    def valid(schema: str, document: Any) -> bool:
        return jsonschema.Draft202012Validator(_read(SCHEMAS / schema)).is_valid(document)

    assert not valid("claude-code-plugin.schema.json", {"name": "Whey Point"})
    assert not valid("claude-code-plugin.schema.json", {"name": "wheypoint", "hooks": "hooks/hooks.json"})
    assert not valid("claude-code-marketplace.schema.json", {"name": "w", "plugins": []})
    assert not valid("codex-plugin.schema.json", {"name": "wheypoint", "skills": "../skills"})
    assert not valid("codex-hooks.schema.json", {"description": "x", "hooks": {}})
    assert not valid(
        "codex-marketplace.schema.json",
        {"name": "w", "plugins": [{"name": "w", "source": {"source": "local", "path": "./a/../b"}}]},
    )
    assert not valid("gemini-extension.schema.json", {"name": "wheypoint"})
    assert not valid("gemini-extension.schema.json", {"name": "whey_point", "version": "1.0.0"})
    assert not valid("gemini-hooks.schema.json",
                     {"hooks": {"PreCompact": [{"hooks": [{"type": "command", "command": "x"}]}]}})  # fmt: skip
    assert not valid(
        "gemini-hooks.schema.json",
        {"hooks": {"PreCompress": [{"hooks": [{"type": "command", "command": "x", "timeout": 30}]}]}},
    )


def test_names_and_sources_agree_across_manifests(built: Path) -> None:
    claude_market = _read(built / ".claude-plugin/marketplace.json")
    (entry,) = claude_market["plugins"]
    plugin_root = built / entry["source"]
    assert entry["name"] == _read(plugin_root / ".claude-plugin/plugin.json")["name"] == "wheypoint"
    (codex_entry,) = _read(built / ".agents/plugins/marketplace.json")["plugins"]
    codex_root = built / codex_entry["source"]["path"]
    assert codex_entry["name"] == _read(codex_root / ".codex-plugin/plugin.json")["name"]
    assert not (codex_root / ".claude-plugin").exists()  # Codex would read it: its hooks say claude-code
    gemini = built / PLUGIN_ROOTS["gemini"]
    assert _read(gemini / "gemini-extension.json")["name"] == gemini.name  # Gemini expects the folder's name
    versions = {_read(built / name).get("version") for name in MANIFESTS if name.endswith(("plugin.json", "n.json"))}
    assert versions == {_tool().version()}


def test_each_plugin_carries_the_skill_and_the_runtime(built: Path, skill: Path, pyz: Path) -> None:
    for root in PLUGIN_ROOTS.values():
        shipped = built / root / "skills" / "wheypoint"
        assert (shipped / "SKILL.md").read_bytes() == (skill / "SKILL.md").read_bytes()
        assert (shipped / "references" / "flags.md").is_file() and not (shipped / ".cache").exists()
        runtime = shipped / "scripts" / "wheypoint.pyz"
        assert runtime.read_bytes() == pyz.read_bytes() and os.access(runtime, os.X_OK)


def test_hook_events_and_timeouts_are_those_hooks_install_writes(built: Path) -> None:
    for harness, root in PLUGIN_ROOTS.items():
        hooks = _read(built / root / "hooks" / "hooks.json")["hooks"]
        found = [(event, groups[0]["hooks"][0]["timeout"]) for event, groups in hooks.items()]
        assert found == list(EVENTS[harness]), harness
        for event, groups in hooks.items():
            assert "matcher" not in groups[0]  # every occurrence: startup, resume, clear and compact alike
            assert groups[0]["hooks"][0]["command"].endswith(f" hook {event} --harness {harness}")


def _expand(harness: str, text: str, root: Path) -> tuple[str, dict[str, str]]:
    """A command or argument as the harness runs it: the text it substitutes, the environment it sets."""
    if harness == "gemini":  # extension-manager.ts hydrates ${extensionPath} and ${/} into the strings
        return text.replace("${extensionPath}", str(root)).replace("${/}", os.sep), {}
    variable = "CLAUDE_PLUGIN_ROOT" if harness == "claude-code" else "PLUGIN_ROOT"
    return text, {variable: str(root)}


@pytest.mark.parametrize("harness", sorted(PLUGIN_ROOTS))
def test_each_hook_command_runs_the_shipped_runtime_from_a_path_with_spaces(
    built: Path, harness: str, tmp_path: Path
) -> None:
    if shutil.which("python3") is None:
        missing("no python3 on PATH, which the plugins' hooks call")  # skips here, fails under CI
    root = built / PLUGIN_ROOTS[harness]
    hooks = _read(root / "hooks" / "hooks.json")["hooks"]
    start = hooks["SessionStart"][0]["hooks"][0]["command"]
    command, extra = _expand(harness, start, root)
    home = tmp_path / "home"
    home.mkdir()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_")}
    environ.update(extra, HOME=str(home), WHEYPOINT_HOME=str(tmp_path / "store"))
    payload = json.dumps({"session_id": "s", "cwd": str(tmp_path)})
    done = subprocess.run(["sh", "-c", command], input=payload, capture_output=True, text=True, env=environ,
                          cwd=tmp_path, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert isinstance(json.loads(done.stdout), dict)


def test_mcp_servers_point_at_the_shipped_runtime(built: Path) -> None:
    claude = _read(built / PLUGIN_ROOTS["claude-code"] / ".mcp.json")["mcpServers"]["wheypoint"]
    gemini = _read(built / PLUGIN_ROOTS["gemini"] / "gemini-extension.json")["mcpServers"]["wheypoint"]
    for harness, server in (("claude-code", claude), ("gemini", gemini)):
        root = built / PLUGIN_ROOTS[harness]
        runtime, _ = _expand(harness, server["args"][0], root)
        runtime = runtime.replace("${CLAUDE_PLUGIN_ROOT}", str(root))
        assert Path(runtime).is_file() and server["args"][1:] == ["mcp"] and server["command"] == "python3"


def test_building_twice_gives_the_same_files_and_replaces_its_own_output(built: Path, skill: Path, pyz: Path) -> None:
    before = {name: (built / name).read_bytes() for name in MANIFESTS}
    (built / "claude-code" / "stale.txt").write_text("left by an older build\n")
    done = _build("--out", str(built), "--skill", str(skill), "--pyz", str(pyz))
    assert done.returncode == 0, done.stderr
    assert {name: (built / name).read_bytes() for name in MANIFESTS} == before
    assert not (built / "claude-code" / "stale.txt").exists()


def test_a_missing_skill_or_a_foreign_folder_stops_the_build(tmp_path: Path, skill: Path, pyz: Path) -> None:
    done = _build("--out", str(tmp_path / "out"), "--skill", str(tmp_path / "nowhere"), "--pyz", str(pyz))
    assert done.returncode != 0 and "no skill at" in done.stderr and "--skill" in done.stderr
    assert not (tmp_path / "out").exists()
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me\n")
    done = _build("--out", str(foreign), "--skill", str(skill), "--pyz", str(pyz))
    assert done.returncode != 0 and "not empty" in done.stderr
    assert (foreign / "notes.txt").read_text() == "keep me\n"
    done = _build("--out", str(tmp_path / "out"), "--skill", str(skill), "--pyz", str(tmp_path / "no.pyz"))
    assert done.returncode != 0 and "--pyz" in done.stderr
