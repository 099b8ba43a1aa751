"""`wheypoint doctor`: is wheypoint working here? Hooks, their trust and their log, registrations, store, notes.

Every line of the reply comes from a file on this machine or from the store; nothing is assumed. The reply's
`problems` are what is wrong, and the command exits 1 when there is any (its reply is still `ok: true`, like
`lint`'s verdict). Precisely, a problem is:

- a harness's settings or config file that cannot be read as the harness reads it (`settings-unreadable`,
  `settings-unexpected`, `codex-config-unreadable`);
- an installed hook that no longer is what `hooks install` writes (`hook-not-current`: another time limit or
  shape, or an OpenCode plugin from another template), only some of a harness's events installed
  (`hook-incomplete`), or a hook whose program is not there (`hook-runner-missing`);
- a Codex hook that Codex would skip: not trusted (`codex-hook-untrusted`), changed since it was trusted
  (`codex-hook-modified`), turned off (`codex-hook-disabled`), or in a checkout Codex does not trust
  (`codex-project-untrusted`);
- a hook event whose latest calls in hooks/hook.log failed: refused or errored since its last success
  (`hook-failing`);
- the store: cannot be opened or read (`store-unreadable`), damage its backend finds (`store-integrity`), a
  record, receipt or head that fails verification (`record-digest-mismatch`);
- this checkout's notes: stale (`note-stale`), edited by hand (`note-hand-edited`), unreadable, or a
  temporary a killed writer left (`note-temporary`).

`warnings` are worth knowing but not wrong (no hooks installed anywhere, a wheypoint.ts that is not ours, an
unreadable log line, a transcript format a hook did not know). `--fix` does only the safe repairs: it renders
stale notes again and removes writers' temporaries, and lists what it did in `fixed`.
"""

from __future__ import annotations

import json
import os

from wheypoint.app import harness_files as hf
from wheypoint.app.doctor_store import check_notes, check_store, finding
from wheypoint.model.errors import Refusal
from wheypoint.model.regular import open_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from wheypoint.app.context import Context

LOG_TAIL_BYTES = 2 * 1024 * 1024  # the most of hook.log (and hook.log.1) read: the newest part
FAILURES_KEPT = 5  # failed calls since the last success shown per event
RESULT_FIELDS = ("work_id", "revision", "kept", "chars", "skipped", "refused", "error", "message", "source",
                 "warning")  # fmt: skip


def doctor(ctx: Context, fix: bool = False) -> dict[str, Any]:
    """The whole check (see the module's docstring); with `fix`, the safe repairs too, and what is left after them."""
    from wheypoint.app.registrations import registrations

    problems: list[dict[str, Any]] = []
    warnings: list[dict[str, Any]] = []
    fixed: list[dict[str, Any]] = []
    log = read_log(ctx, warnings)
    harnesses: dict[str, dict[str, Any]] = {}
    for harness in hf.HARNESSES:
        report: dict[str, Any] = {scope: _scope_report(ctx, harness, scope, problems, warnings) for scope in hf.SCOPES}
        report["last_fired"] = _last_fired(log["entries"], harness, problems, warnings)
        report["registrations"] = registrations(ctx, harness, problems)
        harnesses[harness] = report
    in_plugins = [hooks for h in harnesses.values() for plugin in h["registrations"]["plugins"]
                  for hooks in plugin.get("hooks", []) if hooks["events"]]  # fmt: skip
    if not in_plugins and not any(event["installed"] for h in harnesses.values() for scope in hf.SCOPES if h[scope]
                                  for event in h[scope]["events"]):  # fmt: skip
        warnings.append(finding("no-hooks-installed", "no harness has wheypoint's hooks installed, for the user or "
                                "this checkout: `wheypoint hooks install --harness <name>`"))  # fmt: skip
    store = check_store(ctx, problems)
    notes = check_notes(ctx, fix, problems, fixed)
    del log["entries"]
    problems = _once(problems)
    return {"healthy": not problems, "problems": problems, "warnings": warnings, "fixed": fixed,
            "harnesses": harnesses, "hook_log": log, "store": store, "notes": notes}  # fmt: skip


def _once(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each finding once: a file read for its hooks and for its registrations is reported unreadable once."""
    seen: set[tuple[Any, ...]] = set()
    kept = []
    for item in findings:
        key: tuple[Any, ...] = (item["code"], item.get("path"), item.get("event"), item.get("harness"),
                                item.get("work_id"))  # fmt: skip
        if item["code"].endswith("-unreadable"):
            key = (item["code"], item.get("path"))
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept


# ---- installed hooks


def _scope_report(ctx: Context, harness: str, scope: str, problems: list[dict[str, Any]],
                  warnings: list[dict[str, Any]]) -> dict[str, Any] | None:  # fmt: skip
    """What one harness's file for one scope holds of wheypoint's hooks; None for a project scope outside a checkout."""
    if scope == "project" and ctx.checkout is None:
        return None
    path = hf.target_path(ctx, harness, scope)
    report: dict[str, Any] = {"path": path, "exists": os.path.exists(path), "events": []}
    try:
        if harness == "opencode":
            _plugin(harness, path, report, problems, warnings)
        else:
            _settings(ctx, harness, path, report, problems)
            if harness == "codex" and scope == "project" and any(e["installed"] for e in report["events"]):
                report["project_trusted"] = _codex_project_trusted(ctx, path, problems)
    except Refusal as refusal:
        problems.append(finding(refusal.code, str(refusal.message), path=path, harness=harness))
        report["readable"] = False
        return report
    installed = [event["event"] for event in report["events"] if event["installed"]]
    if installed and len(installed) < len(report["events"]):
        missing = [event["event"] for event in report["events"] if not event["installed"]]
        problems.append(finding("hook-incomplete", f"{path} has wheypoint's {', '.join(installed)} hooks but not "
                                f"{', '.join(missing)}: run `wheypoint hooks install --harness {harness}"
                                f"{' --scope project' if scope == 'project' else ''}`", path=path,
                                harness=harness))  # fmt: skip
    return report


def _settings(ctx: Context, harness: str, path: str, report: dict[str, Any], problems: list[dict[str, Any]]) -> None:
    settings = hf.read_as_harness(harness, path)
    trust = _codex_states(ctx, problems) if harness == "codex" else None
    for event, limit in hf.EVENTS[harness]:
        found = hf.locate_ours(settings, event, harness)
        if found is None:
            report["events"].append({"event": event, "installed": False})
            continue
        group_index, index, handler = found
        command = str(handler["command"])
        runner = hf.runner_of(command)
        current = handler == hf.handler(harness, event, limit, command)
        entry: dict[str, Any] = {"event": event, "installed": True, "current": current, "command": command,
                                 "this_runtime": hf.runs_this_runtime(runner),
                                 "runner_found": _runner_found(ctx, runner)}  # fmt: skip
        if not current:
            problems.append(finding("hook-not-current", f"{path}: wheypoint's {event} hook is not what `hooks install` "
                                    f"writes now (it writes {json.dumps(hf.handler(harness, event, limit, command))})",
                                    path=path, harness=harness, event=event))  # fmt: skip
        _unsafe_runner(runner, path, harness, event, problems)
        if not entry["runner_found"]:
            problems.append(
                finding(
                    "hook-runner-missing",
                    f"{path}: the {event} hook runs {runner!r}, whose program is not there",
                    path=path,
                    harness=harness,
                    event=event,
                )
            )
        if trust is not None:
            entry["trust"] = _trust(path, event, group_index, index, settings, handler, trust)
        report["events"].append(entry)
    if trust is not None:
        _untrusted(path, report["events"], problems)


def _unsafe_runner(runner: str, path: str, harness: str, event: str, problems: list[dict[str, Any]]) -> None:
    """`hook-runner-unsafe` when a hook's runner is `python -m wheypoint` with the folder it runs in first on the
    module path (harness_files.runs_from_its_folder)."""
    if hf.runs_from_its_folder(runner):
        problems.append(finding("hook-runner-unsafe", f"{path}: the {event} hook runs `python -m wheypoint` with the "
                                "project's folder first on the module path, so a checkout holding a `wheypoint/` "
                                "folder would run its own code in it: run `wheypoint hooks install --harness "
                                f"{harness}` again", path=path, harness=harness, event=event))  # fmt: skip


def _runner_found(ctx: Context, runner: str) -> bool:
    """Whether the program a hook runs is there: the executable, and the zipapp when it runs one."""
    import shlex
    import shutil

    try:
        words = shlex.split(runner, posix=os.name != "nt")
    except ValueError:
        return False
    if not words:
        return False
    program = words[0]
    if os.path.isabs(program) or os.sep in program:
        there = os.path.isfile(program) and os.access(program, os.X_OK)
    else:
        there = shutil.which(program, path=ctx.environ.get("PATH")) is not None
    archives = [word for word in words[1:] if word.endswith(".pyz")]
    return there and all(os.path.isfile(archive) for archive in archives)


def _plugin(harness: str, path: str, report: dict[str, Any], problems: list[dict[str, Any]],
            warnings: list[dict[str, Any]]) -> None:  # fmt: skip
    text, commands = hf.read_plugin(path)
    if text is not None and commands is None:
        warnings.append(finding("plugin-not-ours", f"{path} exists and was not written by wheypoint", path=path,
                                harness=harness))  # fmt: skip
    current = commands is not None and text == hf.render_plugin(commands)
    for event, _ in hf.PLUGIN_EVENTS:
        command = (commands or {}).get(event)
        if command is None:
            report["events"].append({"event": event, "installed": False})
            continue
        runner = hf.runner_of(command)
        report["events"].append({"event": event, "installed": True, "current": current, "command": command,
                                 "this_runtime": hf.runs_this_runtime(runner)})  # fmt: skip
        _unsafe_runner(runner, path, harness, event, problems)
    if commands and not current:
        problems.append(finding("hook-not-current", f"{path} is not the plugin `hooks install --harness opencode` "
                                "writes now: run it again", path=path, harness=harness))  # fmt: skip


# ---- Codex's trust


def _codex_states(ctx: Context, problems: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    from wheypoint.app.codex_trust import config_path, hook_states
    from wheypoint.app.tomlread import TomlError, read_file

    path = config_path(hf.user_folder(ctx, "codex"))
    try:
        return hook_states(read_file(path))
    except TomlError as exc:
        problems.append(finding("codex-config-unreadable", f"{path} cannot be read ({exc}): Codex's trust in "
                                "wheypoint's hooks is unknown", path=path, harness="codex"))  # fmt: skip
        return {}


def _codex_project_trusted(ctx: Context, path: str, problems: list[dict[str, Any]]) -> bool:
    """Whether Codex reads this checkout's .codex at all: only with `[projects."<checkout>"] trust_level =
    "trusted"` in the user's config.toml (checked against Codex 0.171's hooks/list), for it or a folder above."""
    from wheypoint.app.codex_trust import config_path
    from wheypoint.app.tomlread import TomlError, read_file

    try:
        projects = (read_file(config_path(hf.user_folder(ctx, "codex"))) or {}).get("projects")
    except TomlError:
        return False  # _codex_states reported the file
    folder = hf.project_root(ctx)
    while True:
        entry = projects.get(folder) if isinstance(projects, dict) else None
        if isinstance(entry, dict) and entry.get("trust_level") == "trusted":
            return True
        if os.path.dirname(folder) == folder:
            break
        folder = os.path.dirname(folder)
    problems.append(finding("codex-project-untrusted", f"Codex does not read {os.path.dirname(path)} until you "
                            "trust this project (it asks when you start codex here; or set trust_level = "
                            "\"trusted\" under [projects.\"<checkout>\"] in config.toml): its hooks are not run",
                            path=path, harness="codex"))  # fmt: skip
    return False


def _trust(path: str, event: str, group_index: int, index: int, settings: hf.Settings, handler: dict[str, Any],
           states: dict[str, dict[str, Any]]) -> dict[str, Any]:  # fmt: skip
    from wheypoint.app.codex_trust import hook_hash, hook_key, verdict

    groups = hf.event_groups(settings, event, create=False) or []
    key = hook_key(path, event, group_index, index)
    current = hook_hash(event, groups[group_index], handler)
    state = states.get(key)
    status = verdict(state, current)
    stored = state.get("trusted_hash") if state else None
    return {"status": status, "key": key, "current_hash": current, "trusted_hash": stored}


WHY_SKIPPED = {
    "untrusted": "Codex has not been told to trust them, so it skips them (in `codex exec` silently): open /hooks in "
                 "Codex once and trust them, or run `codex exec --dangerously-bypass-hook-trust`",
    "modified": "they changed since they were trusted, so Codex skips them until they are trusted again (/hooks)",
    "disabled": "they are turned off in Codex's /hooks",
}  # fmt: skip


def _untrusted(path: str, events: list[dict[str, Any]], problems: list[dict[str, Any]]) -> None:
    """One problem per verdict and file: the events Codex skips for that reason, with their keys."""
    for status, why in WHY_SKIPPED.items():
        skipped = [e for e in events if e.get("trust", {}).get("status") == status]
        if skipped:
            names = ", ".join(e["event"] for e in skipped)
            problems.append(finding(f"codex-hook-{status}", f"Codex's {names} hook(s) from {path}: {why}", path=path,
                                    harness="codex", events=[e["event"] for e in skipped],
                                    keys=[e["trust"]["key"] for e in skipped]))  # fmt: skip


# ---- the hook log


def read_log(ctx: Context, warnings: list[dict[str, Any]]) -> dict[str, Any]:
    """The hook log's entries, oldest first (hook.log.1, then hook.log; at most their newest LOG_TAIL_BYTES each)."""
    from wheypoint.app.sessions import hooks_folder

    path = os.path.join(hooks_folder(ctx.environ), "hook.log")
    entries: list[dict[str, Any]] = []
    bad = 0
    for part in (path + ".1", path):
        try:
            with open_regular(part) as handle:  # a FIFO in its place is never waited on
                size = handle.seek(0, os.SEEK_END)
                handle.seek(max(0, size - LOG_TAIL_BYTES))
                data = handle.read()
        except OSError:
            continue
        lines = data.split(b"\n")
        if size > LOG_TAIL_BYTES:
            lines = lines[1:]  # the first line read is a part of one
        for line in lines:
            if not line.strip():
                continue
            try:
                entry = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                entry = None
            if isinstance(entry, dict):
                entries.append(entry)
            else:
                bad += 1
    if bad:
        warnings.append(finding("hook-log-unreadable", f"{bad} line(s) of {path} are not log entries", path=path))
    return {"path": path, "exists": os.path.exists(path), "entries": entries, "entries_read": len(entries),
            "first_at": entries[0].get("at") if entries else None,
            "last_at": entries[-1].get("at") if entries else None}  # fmt: skip


def _last_fired(entries: list[dict[str, Any]], harness: str, problems: list[dict[str, Any]],
                warnings: list[dict[str, Any]]) -> dict[str, Any]:  # fmt: skip
    """Per event (as the harness named it): when it last fired and what it did, its calls, failures since success."""
    by_event: dict[str, dict[str, Any]] = {}
    for entry in entries:
        if entry.get("harness") != harness or not isinstance(entry.get("event"), str):
            continue
        facts = by_event.setdefault(entry["event"], {"calls": 0, "failures_since_success": []})
        facts["calls"] += 1
        facts["last"] = {"at": entry.get("at"), "ms": entry.get("ms"),
                         **{k: entry[k] for k in RESULT_FIELDS if entry.get(k) not in (None, [], "")}}  # fmt: skip
        if entry.get("error") or entry.get("refused"):
            facts["failures_since_success"].append(facts["last"])
        else:
            facts["last_success_at"] = entry.get("at")
            facts["failures_since_success"] = []
    for event, facts in sorted(by_event.items()):
        failures = facts["failures_since_success"]
        facts["failures_since_success"] = failures[-FAILURES_KEPT:]
        facts["failure_count"] = len(failures)
        said = facts["last"].get("warning")
        if isinstance(said, dict) and isinstance(said.get("code"), str):  # e.g. transcript-format-unknown
            warnings.append(finding(said["code"], f"{harness}'s {event} hook, last at {facts['last'].get('at')}: "
                                    f"{said.get('message')}", harness=harness, event=event))  # fmt: skip
        if failures:
            last = failures[-1]
            why = last.get("refused") or last.get("error")
            problems.append(finding("hook-failing", f"{harness}'s {event} hook failed {len(failures)} time(s) since "
                                    f"its last success, last at {last.get('at')}: {why}", harness=harness,
                                    event=event))  # fmt: skip
    return dict(sorted(by_event.items()))
