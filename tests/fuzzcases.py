"""Generated hostile input for every front door, and the one check each reply must pass: a JSON document, coded.

Shared by tests/test_fuzz_replies.py (a bounded run in CI) and bench/fuzz_bench.py (the long run whose counts
go in docs/contract.md). Each case is run in this process through the command line's own dispatch
(`cli.main.answer`: argv and stdin in, exit code and stdout out), so a hundred thousand cost minutes, not hours;
test_fuzz_replies.py also runs a sample as real processes. A seeded `random.Random` drives everything, so a
failure is reproduced by its seed and case number.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Built at run time so that no credential-looking literal sits in the repository.
FAKE_TOKEN = "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"
SLUG_TOKEN = "glpat-" + "k3x9" * 5  # a credential that is also a well-formed slug

# mcp: one tool call's arguments; mcp-session: many lines of JSON-RPC through the server's own loop; files: a device,
# a FIFO, a folder or a socket where any surface names a file it reads.
SURFACES = ("intent", "argv", "bundle", "hook", "mcp", "mcp-session", "files")
WEIGHTS = (4, 4, 1, 1, 1, 1, 1)
# Commands left out of the argv surface: `demo` builds a scratch repository, `mcp` serves a protocol and `serve`
# a web view until interrupted, and none answers with one document by design.
SKIPPED_COMMANDS = {"demo", "mcp", "serve"}

_STRINGS = [
    "", " ", "-", "--", "a", "x y", "hold", "cook", "tasks", "ok", "gated", "1", "0", "-1", "3", "99999999999999999999",
    "9" * 5000, "a" * 300, "a-" * 150 + "a", "a" * 300 + ".json", "x" * 5000, "retry-backoff", "docs", "new-work",
    "rev-0123456789abcdef", "retry-backoff.0123abcd", "d-0123456789ab", "q-0123456789ab", "sha256:" + "0" * 64,
    "/", "/nonexistent/x", "..", "../../x", "/dev/null", "/proc/self/mem", ".", "./x.json", "x.json", "-.json",
    "\x00", "a\x00b", "\ud800", "ab\udcff", "\udcff" * 3, "é", "\u202e", "\u200b", "\u2028", "\r", "\n", "a\rb",
    "\ufeff", "𝕏", "\U0010ffff", "null", "{}", "[]", '{"a":', "PR#1", "https://x/pull/1", "xdg:x", "x:1", "x.py:2",
    "2026-11-30T10:00:00Z", "yesterday", "prompt", "meta", "claude-code", "codex", "gemini", "opencode", "other",
    "sqlite:///nonexistent/db", FAKE_TOKEN, SLUG_TOKEN, "api_key=" + FAKE_TOKEN, "wheypoint:x/y", "con", "nul",
    "%s%n", "${HOME}", "$(id)", "`id`", "'", '"', "\\", "a/b", "*", "?", "[", "#", "<!--", "```", "## Gates",
]  # fmt: skip
# Spliced into JSON bytes: lone surrogate escapes, a huge integer, raw bytes that are not UTF-8, deep nesting.
_SPLICES = [b'"\\ud800"', b"\\udcff", b"9" * 4400, b"1e999", b"NaN", b"-", b"\xff\xfe", b'"a":1,"a":2', b"[" * 2000,
            b"\x00", b"\xed\xa0\x80", b"{}", b",", b"\\"]  # fmt: skip
_KEYS = [
    "slug", "work_id", "orientation", "next", "move", "artifact", "directives", "decisions", "questions", "blockers",
    "notes", "text", "quote", "rationale", "gates", "label", "items", "order", "tasks", "parallel", "meat", "turn",
    "type", "weight", "links", "ref", "kind", "covers", "transitions", "entry", "action", "by", "base_revision_id",
    "status", "session", "baseline", "id", "state", "decision_dossier", "fork", "options", "option", "evidence",
    "artifact_links", "remove_artifact_links", "remove_links", "working_context", "compaction", "operator_directives",
    "", "\ud800", "a\udcffb", FAKE_TOKEN, "__proto__", "x" * 300, "skill", "arg", "worktree_strategy", "owner", "when",
]  # fmt: skip

VALID_INTENT: dict[str, Any] = {
    "slug": "fuzz-work",
    "orientation": "A work the fuzzer writes to.",
    "next": {"move": "hold"},
    "directives": [{"text": "Keep it short.", "quote": "keep it short", "label": "short"}],
    "decisions": [{"text": "Cap at 30 s.", "rationale": "The gateway gives up at 45 s."}],
    "questions": [{"text": "Full or equal jitter?", "gates": True, "rationale": "Both are standard.", "label": "j"}],
    "decision_dossier": [{"fork": "Full or equal?", "gate": "j", "options": [{"option": "full"}, {"option": "eq"}]}],
    "notes": "Started.",
    "working_context": ["x.py:2"],
    "artifact_links": [{"ref": "specs/x.md", "covers": ["j"]}],
    "links": [{"ref": "wheypoint:p/other.0123abcd", "kind": "relates_to"}],
}


def _scalar(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.5:
        return rng.choice(_STRINGS)
    if roll < 0.6:
        return rng.choice([True, False, None])
    if roll < 0.75:
        return rng.choice([0, 1, -1, 3, 4, 2**53 - 1, 2**53, -(2**53), 10**20])
    if roll < 0.8:
        return rng.choice([0.5, 1e300, -0.0, 1.0])
    ranges = ((0x20, 0x7F), (0, 0x3000), (0xD800, 0xE000), (0x10000, 0x110000))  # ASCII, BMP, surrogates, astral
    return "".join(chr(rng.randrange(*rng.choice(ranges))) for _ in range(rng.randrange(0, 12)))


def _value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.6:
        return _scalar(rng)
    if roll < 0.8:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))]
    return {rng.choice(_KEYS): _value(rng, depth + 1) for _ in range(rng.randrange(0, 4))}


def _mutate_tree(rng: random.Random, tree: Any, rounds: int) -> Any:
    """`tree` with `rounds` random edits: values replaced, keys added or dropped, lists grown or emptied."""
    tree = json.loads(json.dumps(tree))
    for _ in range(rounds):
        node, path = tree, []
        while isinstance(node, (dict, list)) and node and rng.random() < 0.7:
            key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
            path.append((node, key))
            node = node[key]
        if not path:
            if isinstance(tree, dict):
                tree[rng.choice(_KEYS)] = _value(rng)
            continue
        parent, key = path[-1]
        action = rng.random()
        if action < 0.5:
            parent[key] = _value(rng)
        elif action < 0.7 and isinstance(parent, dict):
            del parent[key]
        elif action < 0.85 and isinstance(parent, dict):
            parent[rng.choice(_KEYS)] = _value(rng)
        elif isinstance(parent, list):
            parent.append(_value(rng))
        else:
            parent[key] = [] if rng.random() < 0.5 else {}
    return tree


def _dump(rng: random.Random, tree: Any) -> bytes:
    """JSON bytes of `tree`, sometimes escaped to ASCII (lone surrogates become `\\udXXX`), sometimes raw."""
    text = json.dumps(tree, ensure_ascii=rng.random() < 0.7)
    return text.encode("utf-8", "surrogatepass")


def _mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    """Byte-level damage: a flipped byte, a cut, a duplicated key, a huge number, an escape, garbage appended."""
    data = bytearray(data)
    for _ in range(rng.randrange(1, 4)):
        roll = rng.random()
        at = rng.randrange(len(data) + 1)
        if roll < 0.2 and data:
            data[min(at, len(data) - 1)] = rng.randrange(256)
        elif roll < 0.35:
            del data[at:]
        elif roll < 0.5:
            data[at:at] = rng.choice(_SPLICES)
        elif roll < 0.6:
            data[at:at] = data[: rng.randrange(len(data) + 1)]
        else:
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 6)))
    return bytes(data)


@dataclass
class Case:
    """One generated call: the surface it exercises, argv and stdin for the command line (or MCP's arguments)."""

    surface: str
    argv: list[str]
    stdin: bytes = b""
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)


def _light(rng: random.Random, tree: Any) -> Any:
    """`tree` with one string leaf swapped for a hostile string: mostly still valid, so it reaches the kernel."""
    tree = json.loads(json.dumps(tree))
    node = tree
    while True:
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        if isinstance(node[key], str):
            node[key] = rng.choice(_STRINGS) if rng.random() < 0.7 else node[key] + rng.choice(_STRINGS)
            return tree
        if not isinstance(node[key], (dict, list)) or not node[key]:
            return tree
        node = node[key]


def intent_case(rng: random.Random) -> Case:
    roll = rng.random()
    if roll < 0.3:
        intent = _light(rng, VALID_INTENT)
        intent["slug"] = f"fuzz-{rng.randrange(10**6)}"  # a new work, so a checkpoint commits
        data = _dump(rng, intent)
    elif roll < 0.55:
        data = _dump(rng, _mutate_tree(rng, VALID_INTENT, rng.randrange(1, 6)))
    elif roll < 0.8:
        data = _mutate_bytes(rng, _dump(rng, VALID_INTENT))
    else:
        data = _dump(rng, _value(rng))
    command = "validate" if rng.random() < 0.85 else "checkpoint"
    extra = rng.choice([[], ["--no-note"], ["--base", rng.choice(_STRINGS)], ["--session", rng.choice(_STRINGS)]])
    if rng.random() < 0.2:
        return Case("intent", [command, "--intent", "@stdin-file", *extra], data)
    return Case("intent", [command, "-", *extra], data)


def argv_case(rng: random.Random, commands: list[Any], item_flags: list[str]) -> Case:
    """A command of the table with its own options and positionals, filled with hostile values, and noise."""
    command = rng.choice(commands)
    argv = [command.name]
    if command.name in ("checkpoint", "validate") and rng.random() < 0.5:  # a valid line, then noise
        argv += [f"fuzz-{rng.randrange(10**6)}", "--orientation", "A work.", "--next", "hold", "--notes", "n"]
    flags = [option.flag for option in command.options if option.flag not in ("--format", "--text")]
    if command.name in ("checkpoint", "validate", "snapshot"):
        flags += item_flags
    for _ in range(rng.randrange(0, 8)):
        roll = rng.random()
        if roll < 0.25 or not flags:
            argv.append(rng.choice(_STRINGS))
        elif roll < 0.3:
            argv.append("--" + rng.choice(_STRINGS))
        else:
            flag = rng.choice(flags)
            argv.append(flag)
            if rng.random() < 0.9:
                argv.append(rng.choice(_STRINGS))
    for index in range(len(command.positionals)):
        if rng.random() < 0.8:
            argv.insert(1 + index, rng.choice(_STRINGS))
    if rng.random() < 0.05:
        argv[0] = rng.choice(_STRINGS)
    argv = [arg for arg in argv if arg not in ("-h", "--help", "help", "--store") and not arg.startswith("--store=")]
    if not argv or argv[0] in ("-h", "--help", "help", "--version", "--store"):
        argv = ["validate", *argv]
    return Case("argv", argv)


def bundle_case(rng: random.Random, bundle: bytes) -> Case:
    roll = rng.random()
    if roll < 0.5:
        data = _dump(rng, _mutate_tree(rng, json.loads(bundle), rng.randrange(1, 4)))
    elif roll < 0.9:
        data = _mutate_bytes(rng, bundle)
    else:
        data = _dump(rng, _value(rng))
    extra = rng.choice([[], ["--no-note"], ["--as", rng.choice(_STRINGS)]])
    return Case("bundle", ["import", "@stdin-file", *extra], data)


HOOK_EVENTS = ("PreCompact", "PreCompress", "SessionStart", "Stop", "AfterAgent", "UserPromptSubmit", "BeforeAgent")
HOOK_HARNESSES = ("claude-code", "codex", "gemini", "opencode")


def hook_case(rng: random.Random, transcript: str, cwd: str) -> Case:
    payload: dict[str, Any] = {"session_id": "s1", "transcript_path": transcript, "cwd": cwd,
                               "hook_event_name": "PreCompact", "trigger": "auto", "prompt": "go on"}  # fmt: skip
    roll = rng.random()
    if roll < 0.6:
        data = _dump(rng, _mutate_tree(rng, payload, rng.randrange(1, 4)))
    elif roll < 0.9:
        data = _mutate_bytes(rng, _dump(rng, payload))
    else:
        data = _dump(rng, _value(rng))
    if rng.random() < 0.2:  # the same payload handed to a checkpoint, as a hook script would
        command = rng.choice(["validate", "checkpoint"])
        return Case("hook", [command, f"fuzz-{rng.randrange(10**6)}", "--orientation", "A work.", "--next", "hold",
                             "--notes", "n", "--no-note", "--hook-payload", "-"], data)  # fmt: skip
    event = rng.choice(HOOK_EVENTS) if rng.random() < 0.9 else rng.choice(_STRINGS)
    harness = rng.choice(HOOK_HARNESSES) if rng.random() < 0.9 else rng.choice(_STRINGS)
    argv = ["hook", event, "--harness", harness]
    if rng.random() < 0.1:
        argv += ["--budget", rng.choice(_STRINGS)]
    return Case("hook", argv, data)


def mcp_case(rng: random.Random, tools: dict[str, Any]) -> Case:
    name = rng.choice(sorted(tools))
    tool = tools[name]
    arguments: dict[str, Any] = {}
    for param in tool.params:
        if rng.random() < 0.6:
            arguments[param] = _mutate_tree(rng, VALID_INTENT, 2) if param == "intent" and rng.random() < 0.7 \
                else _value(rng)  # fmt: skip
    if rng.random() < 0.2:
        arguments[rng.choice(_KEYS)] = _value(rng)
    return Case("mcp", [], tool=name, arguments=arguments)


_NOT_REQUESTS = [
    b"[]", b'{"jsonrpc":"2.0","id":1,"result":{}}', b'{"jsonrpc":"1.0","id":1,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}', b'{"jsonrpc":"2.0","id":true,"method":"ping"}', b"null",
    b"1e999", b'"' + FAKE_TOKEN.encode() + b'"', b"", b"   ", b"\r",
]  # fmt: skip
_NAMES = [FAKE_TOKEN, "api_key=" + FAKE_TOKEN, SLUG_TOKEN, "tools/" + FAKE_TOKEN]  # credentials as names


def _rpc(rng: random.Random, ident: Any, method: Any, params: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None or rng.random() < 0.1:
        message["params"] = params
    return _dump(rng, message)


def _deep_line(rng: random.Random) -> bytes:
    """A line nested deep: bare brackets, an unclosed object chain, or valid JSON deep inside a request's params."""
    depth = rng.choice([60, 65, 200, 900, 1000, 3000, 20_000, 100_000])
    roll = rng.random()
    if roll < 0.3:
        return rng.choice([b"[", b'{"a":', b"[{", b'{"params":']) * depth
    inner = b"[" * depth + b"]" * depth if roll < 0.65 else b'{"a":' * depth + b"1" + b"}" * depth
    where = rng.choice([b'"params":{"x":%s}', b'"params":{"name":"validate","arguments":{"intent":{"notes":%s}}}',
                        b'"id":%s', b'"method":%s', b'"params":%s'])  # fmt: skip
    return b'{"jsonrpc":"2.0","id":1,"method":"tools/call",' + where.replace(b"%s", inner) + b"}"


def mcp_session_case(rng: random.Random, tools: dict[str, Any]) -> Case:
    """A session of many lines, each hostile in its own way, ended by a ping the server must still answer."""
    lines: list[bytes] = []
    if rng.random() < 0.5:
        lines.append(_rpc(rng, 0, "initialize", {"protocolVersion": rng.choice(["2025-06-18", "1999", FAKE_TOKEN])}))
    for number in range(1, rng.randrange(2, 9)):
        roll = rng.random()
        if roll < 0.15:
            lines.append(_deep_line(rng))
        elif roll < 0.2:  # huge: a long string, a long key, many members
            size = rng.choice([70_000, 70_000, 70_000, 300_000, 1_100_000])  # past a 64 KiB pipe buffer, or 1 MiB
            params = {"name": "show", "arguments": {"work": "w" * size}}
            lines.append(_rpc(rng, number, rng.choice(["tools/call", "ping", "x" * size]), params))
        elif roll < 0.3:  # binary, or JSON cut and damaged
            garbage = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))).replace(b"\n", b" ")
            lines.append(garbage if rng.random() < 0.5 else _mutate_bytes(rng, _rpc(rng, number, "tools/list")))
        elif roll < 0.45:  # unknown methods and tools, credentials in names, ids and params
            name = rng.choice([*_NAMES, rng.choice(_STRINGS)])
            lines.append(rng.choice([_rpc(rng, number, name), _rpc(rng, number, "tools/call", {"name": name}),
                                     _rpc(rng, name, "ping"), _rpc(rng, None, name),
                                     _dump(rng, {"jsonrpc": "2.0", "method": name}),  # a notification
                                     _rpc(rng, number, "tools/list", {"cursor": name}),
                                     _rpc(rng, number, "tools/call", {"name": "show", "arguments": {name: name}})],
                                    ))  # fmt: skip
        elif roll < 0.55:  # not requests: batches, responses, wrong versions, duplicate keys
            lines.append(rng.choice([*_NOT_REQUESTS, b"[" + _rpc(rng, number, "ping") + b"]"]))
        else:  # a tool call with fuzzed arguments, as the mcp surface sends them
            call = mcp_case(rng, tools)
            lines.append(_rpc(rng, number, "tools/call", {"name": call.tool, "arguments": call.arguments}))
    lines.append(b'{"jsonrpc":"2.0","id":"last","method":"ping"}')
    return Case("mcp-session", [], b"\n".join(lines) + b"\n")


def file_case(rng: random.Random, world: World) -> Case:
    """A path that is no regular file (endless, blocking, a folder, a socket) where a surface reads a file."""
    path = rng.choice(world.specials)
    roll = rng.random()
    if roll < 0.3:
        payload = {"session_id": rng.choice(["s1", "s2"]), "transcript_path": path, "cwd": str(world.repo),
                   "trigger": rng.choice(["manual", "auto"]), "source": "startup", "prompt": "go"}  # fmt: skip
        event = rng.choice(HOOK_EVENTS)
        return Case("files", ["hook", event, "--harness", rng.choice(HOOK_HARNESSES)], _dump(rng, payload))
    if roll < 0.75:
        work = ["w", "--orientation", "o", "--next", "hold"]
        argv = rng.choice([["turns", "--transcript", path], ["turns", "--transcript", path, "--harness", "codex"],
                           ["snapshot", "--stream", "s", "--transcript", path],
                           ["snapshot", "--stream", "s", "--summary-file", path],
                           [rng.choice(["checkpoint", "validate"]), *work, "--notes-file", path],
                           [rng.choice(["checkpoint", "validate"]), "--intent", path],
                           [rng.choice(["checkpoint", "validate"]), path + ".json"],
                           ["validate", *work, "--hook-payload", path], ["validate", *work, "--transcript", path],
                           ["checkpoint", *work, "--compacted", path]])  # fmt: skip
        return Case("files", argv)
    tool, key = rng.choice([("turns", "transcript"), ("validate", "hook_payload"), ("validate", "transcript"),
                            ("checkpoint", "transcript"), ("turns", "hook_payload")])  # fmt: skip
    arguments: dict[str, Any] = {key: path}
    if tool != "turns":
        arguments["intent"] = {"slug": f"fuzz-{rng.randrange(10**6)}", "orientation": "o", "next": {"move": "hold"}}
    return Case("files", [], tool=tool, arguments=arguments)


def cases(seed: int, count: int, world: World) -> Iterator[Case]:
    """`count` cases spread over every surface, from `seed`."""
    from wheypoint.cli.commands import COMMANDS
    from wheypoint.cli.flags import ITEM_FLAGS, MODIFIERS, SCALARS

    rng = random.Random(seed)
    commands = [command for command in COMMANDS if command.name not in SKIPPED_COMMANDS]
    item_flags = sorted({*ITEM_FLAGS, *MODIFIERS, *SCALARS})
    for _ in range(count):
        surface = rng.choices(SURFACES, weights=WEIGHTS)[0]
        if surface == "intent":
            yield intent_case(rng)
        elif surface == "argv":
            yield argv_case(rng, commands, item_flags)
        elif surface == "bundle":
            yield bundle_case(rng, world.bundle)
        elif surface == "hook":
            yield hook_case(rng, str(world.transcript), str(world.repo))
        elif surface == "mcp":
            yield mcp_case(rng, world.tools)
        elif surface == "mcp-session":
            yield mcp_session_case(rng, world.tools)
        else:
            yield file_case(rng, world)


@dataclass
class World:
    """The scratch place the cases run in: a git checkout with a work, a bundle, a transcript, the MCP tools."""

    root: Path
    repo: Path
    bundle: bytes
    transcript: Path
    tools: dict[str, Any]
    stdin_file: Path
    specials: list[str] = field(default_factory=list)  # paths that are no regular file (see file_case)


def verdict(surface: str, argv: list[str], code: int, text: str) -> str | None:
    """Why a reply breaks the contract, or None: one JSON object, `ok` true or a coded error, never internal."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "stdout is not UTF-8"
    try:
        reply = json.loads(text)
    except ValueError:
        return "not one JSON document"
    if not isinstance(reply, dict):
        return "not a JSON object"
    if argv[:1] == ["hook"]:  # the harness's own format: an object, exit 0 whatever happened
        return None if code == 0 else f"hook exited {code}"
    if argv[:1] == ["schema"] and code == 0:
        return None if "$schema" in reply else "schema printed no schema"
    if reply.get("ok") is True:
        return None if code in (0, 1) else f"answered with exit {code}"
    error = reply.get("error")
    if reply.get("ok") is not False or not isinstance(error, dict) or not isinstance(error.get("code"), str):
        return "no ok/error shape"
    if not isinstance(error.get("message"), str):
        return "an error without a message"
    if error["code"] == "internal-error":
        return "internal-error: " + error["message"][:200]
    from wheypoint.model.credentials import scan_text

    # Nothing the checkpoint's scan would refuse comes back in a refusal (a masked `user:***@host` is no secret).
    hits = [hit for hit in scan_text(text) if set(text[hit.start : hit.end]) - {"*"}]
    if hits:
        return f"a refusal echoed a credential ({hits[0].rule}: {text[hits[0].start : hits[0].start + 12]}...)"
    if code not in (1, 2):
        return f"refused with exit {code}"
    return None


def isolate(root: Path) -> dict[str, str]:
    """The environment of the in-process run: every home and harness variable pointed into `root`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WHEYPOINT_", "CLAUDE", "CODEX", "GEMINI"))}
    env.pop("OPENCODE_DB", None)
    for name in ("HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        env[name] = str(root / name.lower())
    env["WHEYPOINT_HOME"] = str(root / "store-home")
    env["WHEYPOINT_PROJECT"] = "fuzz"
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    return env


def make_world(root: Path) -> World:
    """A checkout with one work (and its bundle) and a Claude Code transcript, under `root`; run inside `enter`."""
    import subprocess

    from wheypoint.cli.commands import COMMANDS
    from wheypoint.cli.main import answer
    from wheypoint.mcp.tools import build_tools

    repo = root / "repo"
    repo.mkdir(parents=True)
    for args in (["init", "-q", "-b", "main"], ["config", "user.email", "fuzz@example.invalid"],
                 ["config", "user.name", "fuzz"], ["commit", "-q", "--allow-empty", "-m", "initial"]):  # fmt: skip
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)
    transcript = root / "session.jsonl"
    lines = [{"type": "user", "uuid": f"u{n}", "sessionId": "s1", "cwd": str(repo),
              "timestamp": f"2026-11-30T10:0{n}:00Z", "message": {"role": "user", "content": f"keep it short {n}"}}
             for n in range(4)]  # fmt: skip
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with enter(root, repo):
        code, text = answer(["checkpoint", "-", "--no-note"], json.dumps(VALID_INTENT).encode())
        assert code == 0, text
        code, text = answer(["export", "fuzz-work", "--out", str(root / "fuzz.bundle.json")])
        assert code == 0, text
    bundle = (root / "fuzz.bundle.json").read_bytes()
    import socket

    fifo, folder, sock = root / "no-writer.fifo", root / "a-folder", root / "a.sock"
    os.mkfifo(fifo)
    folder.mkdir()
    with socket.socket(socket.AF_UNIX) as bound:  # the socket file stays after the socket closes
        bound.bind(str(sock))
    specials = ["/dev/zero", "/dev/urandom", "/dev/null", str(fifo), str(folder), str(sock)]
    return World(root, repo, bundle, transcript, build_tools(COMMANDS), root / "stdin-file.json", specials)


class enter:  # a context manager read as a phrase: `with enter(root, repo):`
    """Run in the world: its environment (homes, no harness variables) and its checkout as the working folder."""

    def __init__(self, root: Path, repo: Path) -> None:
        self.env, self.repo = isolate(root), repo

    def __enter__(self) -> None:
        self.saved_env, self.saved_cwd = dict(os.environ), os.getcwd()
        os.environ.clear()
        os.environ.update(self.env)
        os.chdir(self.repo)

    def __exit__(self, *exc: object) -> None:
        os.chdir(self.saved_cwd)
        os.environ.clear()
        os.environ.update(self.saved_env)


@dataclass
class Tally:
    """Counts per surface, and the first failures in full (surface, argv, stdin, why)."""

    runs: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SURFACES, 0))
    refused: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SURFACES, 0))
    tracebacks: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SURFACES, 0))
    internal: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SURFACES, 0))
    broken: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SURFACES, 0))
    failures: list[tuple[str, list[str], bytes, str]] = field(default_factory=list)

    def fail(self, kind: dict[str, int], case: Case, why: str) -> None:
        kind[case.surface] += 1
        if len(self.failures) < 50:
            self.failures.append((case.surface, case.argv or [str(case.tool), repr(case.arguments)[:300]],
                                  case.stdin[:300], why))  # fmt: skip


SLOW = 5.0  # seconds: a file case taking longer read or waited on something it should have refused


def session_verdict(data: bytes) -> str | None:
    """Why an MCP session's replies break the contract, or None: every reply one JSON-RPC object, no -32603, no tool
    answering internal-error, no credential in any reply or in what the server logged, and the last ping answered.

    The session runs through the server's own loop (`serve`) over in-memory streams, as it runs over stdio."""
    import contextlib
    import io

    from wheypoint.cli.commands import COMMANDS
    from wheypoint.cli.main import answer
    from wheypoint.mcp.server import serve

    out, err = io.BytesIO(), io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            code = serve(COMMANDS, answer, (io.BytesIO(data), out))
    except BaseException as exc:
        return f"traceback: {type(exc).__name__}: {exc}"[:300]
    if code != 0:
        return f"serve ended with {code}"
    said = []  # every reply but its id, which goes back as the client sent it (JSON-RPC): the client's, not the model's
    last = None
    for line in out.getvalue().splitlines():
        try:
            reply = json.loads(line)
        except ValueError:
            return f"a reply is not JSON: {line[:120]!r}"
        if not isinstance(reply, dict) or reply.get("jsonrpc") != "2.0":
            return f"a reply is not a JSON-RPC object: {line[:120]!r}"
        error = reply.get("error")
        if isinstance(error, dict) and error.get("code") == -32603:
            return "internal-error: -32603 " + str(error.get("message"))[:200]
        structured = (reply.get("result") or {}).get("structuredContent") if isinstance(reply.get("result"), dict) \
            else None  # fmt: skip
        if isinstance(structured, dict) and (structured.get("error") or {}).get("code") == "internal-error":
            return "internal-error: tool: " + str(structured["error"].get("message"))[:200]
        last = reply
        said.append(json.dumps({key: value for key, value in reply.items() if key != "id"}, ensure_ascii=False))
    if not isinstance(last, dict) or last.get("id") != "last" or last.get("result") != {}:
        return f"the closing ping was not answered last: {str(last)[:200]}"
    from wheypoint.model.credentials import scan_text

    for where, text in (("a reply", "\n".join(said)), ("the server's log", err.getvalue())):
        hits = [hit for hit in scan_text(text) if set(text[hit.start : hit.end]) - {"*"}]
        if hits:
            context = text[max(hits[0].start - 80, 0) : hits[0].start + 12]
            return f"{where} echoed a credential ({hits[0].rule}): ...{context}..."
    return None


def run_case(world: World, case: Case, tally: Tally) -> None:
    """Run one case in this process and judge its reply (the caller is inside `enter`)."""
    from wheypoint.cli.main import answer
    from wheypoint.hooks import state

    argv = [str(world.stdin_file) if arg == "@stdin-file" else arg for arg in case.argv]
    if "@stdin-file" in case.argv:
        world.stdin_file.write_bytes(case.stdin)
    tally.runs[case.surface] += 1
    hook_errors: list[Any] = []
    logged = state.log

    def log(environ: Any, entry: Any) -> None:  # the hook's own log, written as ever, and its errors noted
        hook_errors.append(entry.get("error"))
        logged(environ, entry)

    state.log = log  # type: ignore[assignment]
    store = os.environ.get("WHEYPOINT_STORE")
    started = time.monotonic()
    try:
        if case.surface == "mcp-session":
            why = session_verdict(case.stdin)
            if why is not None:
                tally.fail(tally.internal if why.startswith("internal-error") else tally.broken, case, why)
            return
        if case.tool is not None:
            from wheypoint.mcp.tools import call

            result = call(world.tools[str(case.tool)], case.arguments, answer)
            code, text = (1 if result.get("isError") else 0), result["content"][0]["text"]
        else:
            code, text = answer(argv, case.stdin)
    except BaseException as exc:  # what the command line would have shown as a traceback
        tally.fail(tally.tracebacks, case, f"{type(exc).__name__}: {exc}"[:300])
        return
    finally:
        state.log = logged
        if os.environ.get("WHEYPOINT_STORE") != store:  # never, since --store is not generated; kept honest
            os.environ.pop("WHEYPOINT_STORE", None)
    why = verdict(case.surface, argv, code, text)
    if why is None and case.surface == "files" and time.monotonic() - started > SLOW:
        why = f"took {time.monotonic() - started:.1f} s on a path that is no regular file"
    if why is None and any(hook_errors):
        why = "internal-error: hook: " + str(next(e for e in hook_errors if e))[:200]
    if why is None:
        tally.refused[case.surface] += code != 0
    elif why.startswith("internal-error"):
        tally.fail(tally.internal, case, why)
    else:
        tally.fail(tally.broken, case, why)
