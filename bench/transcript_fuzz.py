"""Fuzz: `wheypoint turns` over seeded mutations of the corpus transcripts, counting tracebacks and internal-error.

Every transcript of ../shared/corpus (Claude Code and Codex JSONL, the Gemini CLI session in its single-JSON
form and rewritten as JSONL), plus an OpenCode database and legacy JSON storage built from a corpus session,
is copied with a share of its records mutated: cut short, bytes flipped, a value swapped for one of another
type (`"type"` and the other structural keys most often), a lone surrogate put in a string (escaped, or as
raw bytes), invalid UTF-8, two records merged on one line, a line repeated, nesting deeper than the decoder
follows, an integer of 5,000 digits. Each copy is read by the real command, `main(["turns", ...])` in this
process, its stdout encoded strictly as UTF-8 like a pipe's; the verdict is a JSON reply (an answer or a
coded refusal), `internal-error`, or a traceback (an exception out of `main`, or no JSON document on stdout).

    python3 bench/transcript_fuzz.py [--seed 1] [--lines 100000] [--rate 0.1]

The same engine, bounded, runs in CI as tests/test_transcripts_fuzz.py.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"

# Keys a reader branches on: a type swap picks one of these half of the time.
_STRUCTURAL = frozenset((
    "type", "message", "content", "payload", "role", "text", "uuid", "id", "timestamp", "sessionId", "operation",
    "attachment", "toolCalls", "messages", "$set", "parts", "state", "isSidechain", "isMeta", "subtype", "error",
    "displayContent", "parentUuid", "agentId", "input", "thoughts", "planContent", "origin", "prompt",
))  # fmt: skip
_SWAPS: tuple[Any, ...] = ([], {}, ["user"], {"type": "user"}, 0, -1, 1.5e308, True, None, "", "x" * 300,
                           [[["deep"]]], {"text": 1}, [{"type": "text", "text": None}])  # fmt: skip
MUTATIONS = ("truncate", "flip", "swap", "surrogate", "raw-surrogate", "utf8", "merge", "repeat", "nest", "bigint")


# ---------------------------------------------------------------- mutating one record


def _slots(value: Any, found: list[tuple[Any, Any]], depth: int = 0) -> None:
    """Every (container, key or index) under a decoded JSON value, to pick one to change."""
    if depth > 40:
        return
    if isinstance(value, dict):
        for key, inner in value.items():
            found.append((value, key))
            _slots(inner, found, depth + 1)
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            found.append((value, index))
            _slots(inner, found, depth + 1)


def _pick(value: Any, rng: random.Random) -> tuple[Any, Any] | None:
    slots: list[tuple[Any, Any]] = []
    _slots(value, slots)
    if not slots:
        return None
    structural = [slot for slot in slots if slot[1] in _STRUCTURAL]
    return rng.choice(structural if structural and rng.random() < 0.5 else slots)


def _with_surrogate(value: Any, rng: random.Random) -> bool:
    """Put a lone surrogate into one string (a value, or a key) of `value`; False when it holds none."""
    slots: list[tuple[Any, Any]] = []
    _slots(value, slots)
    strings = [s for s in slots if isinstance(s[0][s[1]], str) or (isinstance(s[1], str) and rng.random() < 0.1)]
    if not strings:
        return False
    container, key = rng.choice(strings)
    lone = chr(rng.randrange(0xD800, 0xE000))
    inner = container[key]
    if isinstance(inner, str):
        at = rng.randrange(len(inner) + 1)
        container[key] = inner[:at] + lone + inner[at:]
    else:
        container[key + lone] = container.pop(key)
    return True


def mutate(line: bytes, rng: random.Random, how: str) -> bytes:
    """One record's line (without its newline) changed by `how`; a mutation that needs JSON falls back to a flip."""
    if how == "truncate":
        return line[: rng.randrange(len(line))] if line else line
    if how == "utf8":
        at = rng.randrange(len(line) + 1)
        return line[:at] + rng.choice((b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80")) + line[at:]
    if how in ("swap", "surrogate", "raw-surrogate", "nest", "bigint"):
        try:
            value = json.loads(line)
        except ValueError:
            value = None
        if isinstance(value, (dict, list)):
            if how in ("surrogate", "raw-surrogate"):
                if _with_surrogate(value, rng):
                    if how == "surrogate":  # a `\udXXX` escape, as JSON.stringify writes a lone surrogate
                        return json.dumps(value, ensure_ascii=True).encode()
                    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
            else:
                slot = _pick(value, rng)
                if slot is not None:
                    container, key = slot
                    if how == "swap":
                        container[key] = rng.choice(_SWAPS)
                        return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
                    marker = "\x00MARK\x00"
                    container[key] = marker
                    text = json.dumps(value, ensure_ascii=False)
                    filler = "[" * 5000 + "]" * 5000 if how == "nest" else "7" * 5000
                    return text.replace(json.dumps(marker), filler, 1).encode("utf-8", "surrogatepass")
    data = bytearray(line)  # "flip", and the fallback
    for _ in range(rng.randint(1, 3)):
        if data:
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    return bytes(data)


def mutate_lines(data: bytes, rng: random.Random, rate: float) -> tuple[bytes, Counter[str]]:
    """A JSONL file's bytes with about `rate` of its lines mutated; and how many of each mutation were made."""
    lines = data.split(b"\n")
    made: Counter[str] = Counter()
    out: list[bytes] = []
    for index, line in enumerate(lines):
        if not line or rng.random() >= rate:
            out.append(line + b"\n" if index < len(lines) - 1 else line)
            continue
        how = rng.choice(MUTATIONS)
        made[how] += 1
        if how == "merge":  # the newline lost: this record and the next on one line
            out.append(line)
        elif how == "repeat":
            out.append(line + b"\n" + line + b"\n")
        else:
            out.append(mutate(line, rng, how) + b"\n")
    return b"".join(out), made


# ---------------------------------------------------------------- the real command, in this process


def run_turns(argv: list[str], cwd: str) -> tuple[str, str]:
    """(verdict, detail) for `wheypoint <argv>`: ok, refused:<code>, internal-error, or traceback."""
    from wheypoint.cli.main import main

    buffer = io.BytesIO()
    stdout = io.TextIOWrapper(buffer, encoding="utf-8", errors="strict", newline="\n")
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(io.StringIO()):
            main(argv)
            stdout.flush()
    except BaseException:  # what would reach the user as a traceback
        return "traceback", traceback.format_exc(limit=-3)
    finally:
        os.chdir(old)
    try:
        reply = json.loads(buffer.getvalue().decode("utf-8"))
    except ValueError as exc:
        return "traceback", f"no JSON document on stdout: {exc}"
    if not isinstance(reply, dict):
        return "traceback", "stdout is not a JSON object"
    if reply.get("ok") is True:
        return "ok", ""
    error = reply.get("error") or {}
    code = str(error.get("code"))
    return ("internal-error", str(error.get("message"))) if code == "internal-error" else (f"refused:{code}", "")


# ---------------------------------------------------------------- the transcripts fuzzed


def jsonl_sources(corpus: Path = CORPUS) -> list[tuple[str, str, bytes]]:
    """(harness, name, bytes) of every JSONL transcript: the corpus's, and its Gemini session rewritten as JSONL."""
    found = [("claude-code", p.name, p.read_bytes()) for p in sorted((corpus / "claude-code").glob("*.jsonl"))]
    found += [("codex", p.name, p.read_bytes()) for p in sorted((corpus / "codex").glob("*.jsonl"))]
    for path in sorted((corpus / "gemini").glob("*.json")):
        document = json.loads(path.read_bytes())
        meta = {k: v for k, v in document.items() if k != "messages"}
        lines = [meta, *document.get("messages", [])]
        data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
        found.append(("gemini", path.stem + ".jsonl", data))
    return found


def gemini_documents(corpus: Path = CORPUS) -> list[tuple[str, dict[str, Any]]]:
    return [(p.name, json.loads(p.read_bytes())) for p in sorted((corpus / "gemini").glob("*.json"))]


def mutate_document(document: dict[str, Any], rng: random.Random, rate: float) -> tuple[bytes, Counter[str]]:
    """A single-JSON Gemini session with about `rate` of its messages mutated (as one-line records, then re-read)."""
    made: Counter[str] = Counter()
    messages: list[Any] = []
    for message in document.get("messages", []):
        if rng.random() >= rate:
            messages.append(message)
            continue
        how = rng.choice(("swap", "surrogate", "nest", "bigint"))
        made[how] += 1
        changed = mutate(json.dumps(message, ensure_ascii=False).encode(), rng, how)
        messages.append(changed.decode("utf-8", "surrogatepass"))
    parts = [json.dumps({k: v for k, v in document.items() if k != "messages"}, indent=2)[:-2]]
    parts.append(',\n  "messages": [\n' + ",\n".join(m if isinstance(m, str) else json.dumps(m) for m in messages))
    text = "".join(parts) + "\n  ]\n}\n"
    return text.encode("utf-8", "surrogatepass"), made


_OPENCODE_SCHEMA = """
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL,
    directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL, time_created INTEGER NOT NULL,
    time_updated INTEGER NOT NULL);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
    time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
    time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
"""


def opencode_rows(corpus: Path = CORPUS) -> list[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    """(message id, message, parts) in OpenCode's shapes, one message per turn of the largest corpus session."""
    from wheypoint.transcripts import claude
    from wheypoint.transcripts.model import ReadStats

    source = max((corpus / "claude-code").glob("entire-*.jsonl"), key=lambda p: p.stat().st_size)
    rows = []
    for n, turn in enumerate(claude.read_turns(source, ReadStats()), 1):
        created = 1767607200000 + n * 1000
        user = turn.kind in ("prompt", "queued_prompt", "meta")
        message = {"role": "user" if user else "assistant", "time": {"created": created}}
        if turn.kind == "tool_call":
            name, _, args = turn.text.partition(" ")
            state = {"status": "completed", "input": {"raw": args}, "output": "done"}
            part: dict[str, Any] = {"type": "tool", "callID": f"c{n}", "tool": name, "state": state}
        elif turn.kind == "thinking":
            part = {"type": "reasoning", "text": turn.text}
        else:
            part = {"type": "text", "text": turn.text, **({"synthetic": True} if turn.kind == "meta" else {})}
        rows.append((f"msg_{n:06d}", message, [{"id": f"prt_{n:06d}", **part}, {"id": f"prt_{n:06d}z",
                                                                             "type": "step-finish"}]))  # fmt: skip
    return rows


def _maybe(value: Any, rng: random.Random, rate: float, made: Counter[str]) -> bytes:
    data = json.dumps(value, ensure_ascii=False).encode()
    if rng.random() >= rate:
        return data
    how = rng.choice(tuple(m for m in MUTATIONS if m not in ("merge", "repeat")))
    made[how] += 1
    return mutate(data, rng, how)


def build_opencode_db(path: Path, rows: list[Any], rng: random.Random, rate: float, sessions: int = 1) -> Counter[str]:
    """An OpenCode database whose message and part data are mutated; `sessions` top-level copies of the session."""
    made: Counter[str] = Counter()
    conn = sqlite3.connect(path)
    conn.executescript(_OPENCODE_SCHEMA)
    for s in range(sessions):
        sid = f"ses_{s:03d}"
        conn.execute("INSERT INTO session VALUES (?, 'global', NULL, 'calm', '/work/proj', 't', '1', 0, ?)", (sid, s))
        for mid, message, parts in rows:
            created = message["time"]["created"]
            data = _maybe(message, rng, rate, made)  # bytes cast to TEXT: stored as written, valid UTF-8 or not
            conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, CAST(? AS TEXT))",
                         (f"{mid}_{s}", sid, created, created, data))  # fmt: skip
            for part in parts:
                body = {k: v for k, v in part.items() if k != "id"}
                raw = _maybe(body, rng, rate, made)
                conn.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, CAST(? AS TEXT))",
                             (f"{part['id']}_{s}", f"{mid}_{s}", sid, created, created, raw))  # fmt: skip
    conn.commit()
    conn.close()
    return made


def build_opencode_legacy(storage: Path, rows: list[Any], rng: random.Random, rate: float) -> tuple[Path, Counter[str]]:
    """OpenCode's legacy JSON storage of the session, with its message and part files mutated; the session file."""
    made: Counter[str] = Counter()
    session = storage / "session" / "global" / "ses_legacy.json"
    session.parent.mkdir(parents=True, exist_ok=True)
    session.write_text(json.dumps({"id": "ses_legacy", "projectID": "global", "directory": "/work/proj",
                                   "time": {"created": 0, "updated": 1}}), encoding="utf-8")  # fmt: skip
    for mid, message, parts in rows:
        folder = storage / "message" / "ses_legacy"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{mid}.json").write_bytes(_maybe({"id": mid, **message}, rng, rate, made))
        for part in parts:
            pfolder = storage / "part" / mid
            pfolder.mkdir(parents=True, exist_ok=True)
            (pfolder / f"{part['id']}.json").write_bytes(_maybe(part, rng, rate, made))
    return session, made


# ---------------------------------------------------------------- one round over everything


def _argvs(path: Path, harness: str, rng: random.Random) -> list[list[str]]:
    """The command a mutated transcript is read by: every kind or the user's own (the readers' fast path), with
    or without its harness named, or `harvest`."""
    named = ["--harness", harness] if rng.random() < 0.5 else []
    which = rng.choice((["turns", "--all"], ["turns"], ["turns", "--kind", "prompt"], ["harvest"]))
    return [[*which, "--transcript", str(path), *named]]


def fuzz_round(folder: Path, rng: random.Random, rate: float,
               check: Callable[[str, str, str, list[str]], None]) -> Counter[str]:  # fmt: skip
    """Mutate every transcript once, read each copy; `check(verdict, detail, label, argv)` sees every reply."""
    made: Counter[str] = Counter()
    env_home = folder / "home"
    os.environ["WHEYPOINT_HOME"] = str(env_home)
    for harness, name, data in _sources():
        mutated, counts = mutate_lines(data, rng, rate)
        made.update(counts)
        path = folder / name
        path.write_bytes(mutated)
        for argv in _argvs(path, harness, rng):
            check(*run_turns(argv, str(folder)), f"{harness}/{name}", argv)
    for name, document in _documents():
        mutated, counts = mutate_document(document, rng, rate)
        made.update(counts)
        path = folder / name
        path.write_bytes(mutated)
        for argv in _argvs(path, "gemini", rng):
            check(*run_turns(argv, str(folder)), f"gemini/{name}", argv)
    rows = _opencode()
    db = folder / "opencode.db"
    with contextlib.suppress(FileNotFoundError):
        db.unlink()
    made.update(build_opencode_db(db, rows, rng, rate))
    check(*run_turns(["turns", "--transcript", str(db), "--all"], str(folder)), "opencode/db", [])
    storage = folder / "storage"
    shutil.rmtree(storage, ignore_errors=True)
    session, counts = build_opencode_legacy(storage, rows, rng, rate)
    made.update(counts)
    check(*run_turns(["turns", "--transcript", str(session), "--all"], str(folder)), "opencode/legacy", [])
    return made


_cache: dict[str, Any] = {}


def _sources() -> list[tuple[str, str, bytes]]:
    if "jsonl" not in _cache:
        _cache["jsonl"] = jsonl_sources()
    return list(_cache["jsonl"])


def _documents() -> list[tuple[str, dict[str, Any]]]:
    if "documents" not in _cache:
        _cache["documents"] = gemini_documents()
    return [(name, json.loads(json.dumps(doc))) for name, doc in _cache["documents"]]


def _opencode() -> list[Any]:
    if "opencode" not in _cache:
        _cache["opencode"] = opencode_rows()
    return list(_cache["opencode"])


def rounds(seed: int, target_lines: int, rate: float, folder: Path) -> Iterator[tuple[int, Counter[str], Counter[str],
                                                                                    list[str]]]:  # fmt: skip
    """(round, mutations so far, verdicts so far, failures so far) after each round, until `target_lines`."""
    rng = random.Random(seed)
    made: Counter[str] = Counter()
    verdicts: Counter[str] = Counter()
    failures: list[str] = []

    def check(verdict: str, detail: str, label: str, argv: list[str]) -> None:
        verdicts[verdict] += 1
        if verdict in ("internal-error", "traceback"):
            failures.append(f"{label}: {verdict}: {detail.strip().splitlines()[-1] if detail.strip() else ''}")

    number = 0
    while sum(made.values()) < target_lines:
        number += 1
        made.update(fuzz_round(folder, rng, rate, check))
        yield number, made, verdicts, failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--lines", type=int, default=100_000, help="mutated records to reach (default 100,000)")
    parser.add_argument("--rate", type=float, default=0.1, help="share of each file's records mutated")
    args = parser.parse_args()
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="wheypoint-fuzz-") as scratch:
        for state in rounds(args.seed, args.lines, args.rate, Path(scratch)):
            number, made, verdicts, failed = state
            print(f"round {number}: {sum(made.values())} mutated records, {dict(verdicts)}", file=sys.stderr)
    seconds = time.perf_counter() - started
    reads = sum(verdicts.values())
    bad = verdicts["internal-error"] + verdicts["traceback"]
    print(f"transcript fuzz, seed {args.seed}, rate {args.rate}: {sum(made.values())} mutated records "
          f"in {reads} reads ({number} rounds, {seconds:.0f} s)")  # fmt: skip
    print("mutations: " + ", ".join(f"{k} {v}" for k, v in sorted(made.items())))
    print("verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())))
    print(f"tracebacks {verdicts['traceback']}, internal-error {verdicts['internal-error']}")
    for line, count in Counter(failed).most_common(15):
        print(f"  {count} x {line}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
