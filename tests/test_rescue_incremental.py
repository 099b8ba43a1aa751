"""The rescue reads a transcript once, and later only what was appended: grown, rewritten, truncated, rotated files.

Each test drives the real hook (`wheypoint hook PreCompact --harness claude-code` in a subprocess) on a Claude Code
session in a real git checkout, and checks what the store kept, byte for byte, against what a whole read finds.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import HARNESS_VARIABLES, make_repo, shared_path
from wheypoint.hooks.rescue import PART_TEXT
from wheypoint.transcripts.lines import read_jsonl, read_mark, resume_point
from wheypoint.transcripts.model import ReadPoint, ReadStats

SESSION_ID = "7e57a11c-0000-4000-8000-00000000cafe"
SLUG = "session-claude-code-7e57a11c"
SEVENTH = PART_TEXT // 7  # a prompt this long (with its label) fills a part at its seventh


class Scene:
    """A checkout, a store home and a growing Claude Code transcript of one session."""

    def __init__(self, root: Path) -> None:
        self.repo = make_repo(root / "repo")
        self.home = root / "home"
        self.path = root / "projects" / f"{SESSION_ID}.jsonl"
        self.path.parent.mkdir(parents=True)
        self.count = 0
        self.store: str | None = None  # a team store's URL, else the SQLite file under `home`

    def record(self, kind: str, text: str, **extra: Any) -> str:
        self.count += 1
        uuid = f"00000000-0000-4000-8000-{self.count:012d}"
        message: dict[str, Any] = {"role": kind, "content": text}
        if kind == "assistant":
            message = {"id": f"msg_{self.count}", "role": "assistant", "content": [{"type": "text", "text": text}]}
        record = {"parentUuid": None, "isSidechain": False, "cwd": str(self.repo), "sessionId": SESSION_ID,
                  "type": kind, "message": message, "uuid": uuid,
                  "timestamp": self.clock(), **extra}  # fmt: skip
        return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"

    @staticmethod
    def clock() -> str:
        """Now, as the harness stamps a record it writes (a turn after a rescue is newer than the rescue)."""
        import time

        return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() + 1))

    def append(self, *lines: str) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write("".join(lines))

    def hook(self, event: str = "PreCompact") -> dict[str, Any]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_") and k not in HARNESS_VARIABLES}
        env.update(WHEYPOINT_HOME=str(self.home), HOME=str(self.home))
        if self.store is not None:
            env["WHEYPOINT_STORE"] = self.store
        payload = {"session_id": SESSION_ID, "transcript_path": str(self.path), "cwd": str(self.repo),
                   "hook_event_name": event, "trigger": "auto"}  # fmt: skip
        done = subprocess.run([sys.executable, "-m", "wheypoint", "hook", event, "--harness", "claude-code"],
                              input=json.dumps(payload), capture_output=True, text=True, env=env, cwd=self.repo,
                              timeout=120, check=False)  # fmt: skip
        assert done.returncode == 0 and done.stderr == "", done.stderr
        answer: dict[str, Any] = json.loads(done.stdout)
        return answer

    def hook_in_process(self, monkeypatch: pytest.MonkeyPatch, event: str = "PreCompact") -> tuple[int, str]:
        """A hook run in this process (for a test that counts what it calls): exit code and what it printed."""
        from wheypoint.cli.main import answer

        monkeypatch.setenv("WHEYPOINT_HOME", str(self.home))
        monkeypatch.setenv("HOME", str(self.home))
        monkeypatch.chdir(self.repo)
        payload = {"session_id": SESSION_ID, "transcript_path": str(self.path), "cwd": str(self.repo),
                   "hook_event_name": event, "trigger": "auto"}  # fmt: skip
        return answer(["hook", event, "--harness", "claude-code"], json.dumps(payload).encode())

    def kept(self) -> list[str]:
        """The meat texts of the session's own work, its parts in order, oldest first (sqlite3 on the store: no
        wheypoint read)."""
        if not (self.home / "store.sqlite3").exists():
            return []
        return [m["text"] for part in _parts(self.home) for m in part["meat"]]

    def mark(self) -> dict[str, Any]:
        state = json.loads(next((self.home / "hooks").glob("*.json")).read_text(encoding="utf-8"))
        found: dict[str, Any] = state["sessions"][f"claude-code:{SESSION_ID}"]["read"]
        return found


@pytest.fixture
def scene(tmp_path: Path) -> Scene:
    return Scene(tmp_path)


def test_a_second_rescue_reads_only_what_was_appended(scene: Scene) -> None:
    # The long reply puts the first line farther back than the bytes a resumed read checks.
    scene.append(scene.record("user", "First: the retry helper."), scene.record("assistant", "On it." + "x" * 5000))
    assert "kept 1 turn(s)" in scene.hook()["systemMessage"]
    first = scene.mark()
    assert first["offset"] == scene.path.stat().st_size and first["line"] == 2
    # That first line is overwritten in place by a prompt of the same length: only a read of the whole file could
    # find it. The resumed read never sees it.
    lines = scene.path.read_bytes().splitlines(keepends=True)
    planted = lines[0].replace(b"First: the retry helper.", b"Planted: never read!!!!!")
    assert len(planted) == len(lines[0])
    scene.hook("Stop")  # grew too little for a Stop: nothing read, nothing written
    with scene.path.open("r+b") as handle:
        handle.write(planted)
    scene.append(scene.record("user", 'Second, with "quotes" and ünïcödé.\nTwo lines.'))
    assert "kept 1 turn(s)" in scene.hook()["systemMessage"]
    assert scene.kept() == ["First: the retry helper.", 'Second, with "quotes" and ünïcödé.\nTwo lines.']
    assert scene.mark()["offset"] == scene.path.stat().st_size and scene.mark()["line"] == 3


def test_nothing_new_reads_neither_the_store_nor_the_transcript(scene: Scene) -> None:
    scene.append(scene.record("user", "Only prompt."))
    scene.hook()
    store = scene.home / "store.sqlite3"
    store.rename(scene.home / "aside")
    store.write_bytes(b"not a database " * 100)  # a read of the store would now fail and be logged
    try:
        assert scene.hook() == {}
    finally:
        (scene.home / "aside").replace(store)
    log = [json.loads(line) for line in (scene.home / "hooks" / "hook.log").read_text().splitlines()]
    assert "error" not in log[-1] and log[-1]["kept"] == 0, log[-1]
    state = json.loads(next((scene.home / "hooks").glob("*.json")).read_text())
    assert state["pending"]["work_id"].startswith(SLUG)  # the compaction still hands that work to the next session


@pytest.mark.parametrize("change", ["truncated", "rotated", "rewritten"])
def test_a_file_that_did_not_only_grow_is_read_whole_again(scene: Scene, change: str) -> None:
    scene.append(scene.record("user", "Kept first."), scene.record("assistant", "Fine."))
    scene.hook()
    if change == "truncated":  # cut before the last read's end, then written on: the offset is past the new end
        scene.path.write_bytes(scene.path.read_bytes()[:10])
        scene.path.write_text(scene.record("user", "After the cut."), encoding="utf-8")
    elif change == "rotated":  # moved away and started anew at the same path, longer than before
        scene.path.rename(scene.path.with_suffix(".old"))
        scene.append(scene.record("user", "In the new file." + " " * 400), scene.record("user", "And its second."))
    else:  # rewritten in place: the same inode and a longer file, but the bytes before the offset differ
        text = scene.path.read_text(encoding="utf-8").replace("Fine.", "Good.")
        with scene.path.open("r+", encoding="utf-8") as handle:
            handle.write(text)
        scene.append(scene.record("user", "Appended after the rewrite."))
    scene.hook()
    expected = {"truncated": ["Kept first.", "After the cut."],
                "rotated": ["Kept first.", "In the new file." + " " * 400, "And its second."],
                "rewritten": ["Kept first.", "Appended after the rewrite."]}[change]  # fmt: skip
    assert scene.kept() == expected
    assert scene.mark()["offset"] == scene.path.stat().st_size


def test_a_line_still_being_written_is_read_whole_the_next_time(scene: Scene) -> None:
    scene.append(scene.record("user", "Complete."))
    whole = scene.record("user", "Written in two parts.")
    scene.append(whole[:20])  # the harness is mid-write when the hook runs
    scene.hook()
    assert scene.kept() == ["Complete."] and scene.mark()["offset"] == scene.path.stat().st_size - 20
    scene.append(whole[20:])
    scene.hook()
    assert scene.kept() == ["Complete.", "Written in two parts."]


def test_rescues_after_each_append_keep_what_one_whole_rescue_keeps(tmp_path: Path) -> None:
    """A real corpus session fed in slices: the incremental rescues add up to the whole file's rescue, text for text."""
    lines = shared_path("corpus", "claude-code", "entire-18-4069756ffc-0.jsonl").read_bytes().splitlines(True)
    source = [line.replace(b'"sessionId":"', b'"sessionId":"' + SESSION_ID.encode() + b'","was":"') for line in lines]
    sliced, whole = Scene(tmp_path / "sliced"), Scene(tmp_path / "whole")
    # Each slice is stamped when it is appended, as a harness stamps what it writes: a rescue keeps what came after
    # the work's last revision.
    stamp = re.compile(rb'"timestamp":"[^"]*"')
    cuts = [0, len(source) // 5, len(source) // 2, len(source) - 3, len(source)]
    for start, end in itertools.pairwise(cuts):
        now = f'"timestamp":"{sliced.clock()}"'.encode()
        with sliced.path.open("ab") as handle:
            handle.write(stamp.sub(now, b"".join(source[start:end])))
        sliced.hook()
    whole.path.write_bytes(b"".join(source))
    whole.hook()
    assert len(whole.kept()) >= 3 and sorted(sliced.kept()) == sorted(whole.kept())


def test_read_marks_refuse_what_they_cannot_vouch_for(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2}\n{"c"')
    stats = ReadStats()
    assert [n for n, _ in read_jsonl(path, stats)] == [1, 2] and stats.truncated_tail
    point = stats.read_point
    assert point == ReadPoint(16, 2)
    mark = read_mark(path, point)
    assert mark is not None and resume_point(path, mark) == point
    for broken in (None, [], {}, {**mark, "offset": True}, {**mark, "offset": -1}, {**mark, "ino": mark["ino"] + 1},
                   {**mark, "tail": "0" * 64}, {**mark, "offset": 10_000}):  # fmt: skip
        assert resume_point(path, broken) is None, broken
    resumed = ReadStats()
    path.write_bytes(b'{"a":1}\n{"b":2}\n{"c":3}\n')
    assert list(read_jsonl(path, resumed, start=point)) == [(3, {"c": 3})]
    assert resumed.read_point == ReadPoint(24, 3) and resumed.lines == 1


def test_a_codex_rollout_fed_in_slices_keeps_what_one_whole_rescue_keeps(tmp_path: Path) -> None:
    """Codex 0.171's recorded rollout, resumed the same way (its turn ids are line numbers: they carry on)."""
    recorded = shared_path("corpus", "recorded", "codex-0.171.0-mock.jsonl").read_bytes().splitlines(True)
    session = "01a232ca-c916-7fe0-83b4-afe61d0b8b91"
    stamp = re.compile(rb'"timestamp":"[^"]*"')
    kept: dict[str, list[str]] = {}
    for name, cuts in (("sliced", [0, 10, 25, 40, len(recorded)]), ("whole", [0, len(recorded)])):
        repo = make_repo(tmp_path / name / "repo")
        rollout = tmp_path / name / "codex" / "sessions" / "2026" / "12" / "01" / f"rollout-x-{session}.jsonl"
        rollout.parent.mkdir(parents=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_") and k not in HARNESS_VARIABLES}
        env.update(WHEYPOINT_HOME=str(tmp_path / name / "store"), HOME=str(tmp_path / name),
                   CODEX_HOME=str(rollout.parents[4]))  # fmt: skip
        for start, end in itertools.pairwise(cuts):
            now = f'"timestamp":"{Scene.clock()}"'.encode()
            with rollout.open("ab") as handle:
                handle.write(stamp.sub(now, b"".join(recorded[start:end])))
            payload = {"session_id": session, "transcript_path": None, "cwd": str(repo),
                       "hook_event_name": "PreCompact", "trigger": "auto", "model": "mock-model"}  # fmt: skip
            done = subprocess.run([sys.executable, "-m", "wheypoint", "hook", "PreCompact", "--harness", "codex"],
                                  input=json.dumps(payload), capture_output=True, text=True, env=env, cwd=repo,
                                  timeout=120, check=False)  # fmt: skip
            assert done.returncode == 0 and "error" not in done.stdout, done.stdout
        argv = [sys.executable, "-m", "wheypoint", "show", f"session-codex-{session[:8]}", "--format", "json"]
        shown = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=repo, timeout=60, check=True)
        kept[name] = [m["text"] for m in json.loads(shown.stdout)["record"]["meat"]]
        state = json.loads(next((tmp_path / name / "store" / "hooks").glob("*.json")).read_text(encoding="utf-8"))
        assert state["sessions"][f"codex:{session}"]["read"]["line"] == len(recorded)
    assert kept["sliced"] == kept["whole"] and len(kept["whole"]) == 4, kept


def test_turns_a_cut_rescue_never_wrote_are_kept_by_the_next_one(scene: Scene) -> None:
    # A rescue cut off between two of its revisions (its deadline, a killed hook) left a head newer than the turns
    # of the chunks it never wrote. Here: the first 64 turns rescued, then the 36 the cut run would have written
    # appear with their own (older) times. The next rescue must keep them, not judge them by the head's time.
    old = "2026-01-01T00:00:{:02d}.000Z"
    turns = [scene.record("user", f"Turn {n}: keep this.", timestamp=old.format(n % 60)) for n in range(100)]
    scene.append(*turns[:64])
    assert "kept 64 turn(s)" in scene.hook()["systemMessage"]
    scene.append(*turns[64:])
    assert "kept 36 turn(s)" in scene.hook()["systemMessage"]
    assert scene.kept() == [f"Turn {n}: keep this." for n in range(100)]


def _parts(home: Path) -> list[dict[str, Any]]:
    """The head records of the session's own rescue works, part 1 first (sqlite3 on the store)."""
    import sqlite3

    db = sqlite3.connect(home / "store.sqlite3")
    try:
        rows = db.execute("SELECT r.record_json FROM revisions r JOIN works w ON w.head_revision_id = r.revision_id "
                          "WHERE w.slug = ? OR w.slug LIKE ?", (SLUG, SLUG + "-part-%")).fetchall()  # fmt: skip
    finally:
        db.close()
    records = [json.loads(row[0]) for row in rows]
    return sorted(records, key=lambda r: 1 if r["slug"] == SLUG else int(r["slug"].rsplit("-", 1)[1]))


def test_a_long_session_goes_on_in_linked_parts_and_keeps_every_turn_once(scene: Scene) -> None:
    """Past PART_TEXT characters of kept turns, the rescue writes the session's next part: a work of its own that
    links to the one before, so a rescue's cost is bounded by a part, and no turn is lost or kept twice, whether
    the next read resumes or reads the transcript whole again."""
    from wheypoint.model.contract import MAX_MEAT_TEXT

    size = SEVENTH
    prompts = [f"Prompt {n}: " + chr(ord("a") + n % 26) * size for n in range(10)]
    scene.append(*(scene.record("user", text) for text in prompts))
    answer = scene.hook()
    assert "kept 10 turn(s)" in answer["systemMessage"] and f"{SLUG}-part-2" in answer["systemMessage"]
    parts = _parts(scene.home)
    assert [len(p["meat"]) for p in parts] == [7, 3]  # part 1 full at its seventh prompt
    later = [f"Later {n}: " + "z" * size for n in range(6)]
    scene.append(scene.record("user", later[0]))
    scene.hook()  # resumes where the last read stopped, into the last part
    scene.append(*(scene.record("user", text) for text in later[1:]))
    scene.hook()
    parts = _parts(scene.home)
    assert [len(p["meat"]) for p in parts] == [7, 7, 2]
    texts = [m["text"] for p in parts for m in p["meat"]]
    assert texts == prompts + later  # every turn once, in order, byte for byte
    for number, part in enumerate(parts, start=1):
        assert sum(len(m["text"]) for m in part["meat"]) < PART_TEXT + MAX_MEAT_TEXT
        assert (scene.repo / ".cheese" / "notes" / f"{part['slug']}.md").is_file()
        if number > 1:  # each part names the one before it, in the store's own spelling of a work
            before = parts[number - 2]
            assert [(e["ref"], e["kind"]) for e in part["edges"]] == [
                (f"wheypoint:{before['project_key']}/{before['work_id']}", "relates_to")
            ]
    state = json.loads(next((scene.home / "hooks").glob("*.json")).read_text(encoding="utf-8"))
    assert state["pending"]["work_id"] == parts[-1]["work_id"]  # the next session resumes from the last part
    # Rewritten in place: the next rescue reads the whole file, and finds every turn in one part or another.
    text = scene.path.read_text(encoding="utf-8")
    scene.path.write_text(text.replace("Prompt 0:", "Prompt 0;"), encoding="utf-8")
    scene.append(scene.record("user", "After the rewrite."))
    assert "kept 1 turn(s)" in scene.hook()["systemMessage"]
    texts = [m["text"] for p in _parts(scene.home) for m in p["meat"]]
    assert texts == [*prompts, *later, "After the rewrite."]


def test_a_part_holds_at_most_its_number_of_turns_however_short(scene: Scene) -> None:
    """Many short prompts fill a part by their number before their characters do: each costs the record and the
    note their own bookkeeping, so a part holds at most PART_TURNS of them and the rest go on in the next part,
    every one kept once, in order."""
    from wheypoint.hooks.rescue import PART_TURNS

    prompts = [f"Short prompt {n}." for n in range(PART_TURNS + 3)]
    assert sum(map(len, prompts)) < PART_TEXT  # their characters alone would fit one part
    scene.append(*(scene.record("user", text) for text in prompts))
    assert f"kept {len(prompts)} turn(s)" in scene.hook()["systemMessage"]
    parts = _parts(scene.home)
    assert [len(p["meat"]) for p in parts] == [PART_TURNS, 3]
    assert [m["text"] for p in parts for m in p["meat"]] == prompts
    scene.append(scene.record("user", "One more."))
    scene.hook()
    assert [len(p["meat"]) for p in _parts(scene.home)] == [PART_TURNS, 4]


def test_a_session_of_many_parts_finds_its_last_in_a_few_reads(scene: Scene, monkeypatch: pytest.MonkeyPatch) -> None:
    """The last part is found by asking about PART_LOOKUP part slugs in one read, not one read a part: a session's
    parts (here 7, of 2 turns each, asked about 3 at a time) cost a rescue 3 reads, and it goes on in the last."""
    from wheypoint.hooks import rescue
    from wheypoint.store.sql import SqlStore

    monkeypatch.setattr(rescue, "PART_TURNS", 2)
    monkeypatch.setattr(rescue, "PART_LOOKUP", 3)
    scene.append(*(scene.record("user", f"Prompt {n}.") for n in range(13)))
    code, printed = scene.hook_in_process(monkeypatch)
    assert code == 0 and f"{SLUG}-part-7 r1" in json.loads(printed)["systemMessage"], printed
    asked: list[list[str]] = []
    real = SqlStore.slugs_held

    def counted(self: SqlStore, project_key: str, slugs: Any) -> set[str]:
        asked.append(list(slugs))
        return real(self, project_key, slugs)

    monkeypatch.setattr(SqlStore, "slugs_held", counted)
    scene.append(scene.record("user", "After seven parts."))
    code, printed = scene.hook_in_process(monkeypatch)
    assert code == 0 and f"{SLUG}-part-7 r2" in json.loads(printed)["systemMessage"], printed
    assert [len(names) for names in asked] == [3, 3, 3]
    assert scene.kept() == [f"Prompt {n}." for n in range(13)] + ["After seven parts."]


def test_a_part_just_begun_starts_its_session_with_the_turns_of_the_part_before(scene: Scene) -> None:
    """After its part switched, a session's packet holds the new part's few turns, then the newest turns of the
    part before it, verbatim, each naming the work it is in, within the harness's budget: the person's last words
    before the switch are not lost from the context the session resumes with."""
    prompts = [f"Prompt {n}: " + chr(ord("a") + n % 26) * (PART_TEXT // 25) for n in range(25)]  # part 1 full at 25
    scene.append(*(scene.record("user", text) for text in prompts))
    scene.hook()
    scene.append(scene.record("user", "Now the retry helper, please."))
    assert f"{SLUG}-part-2 r1" in scene.hook()["systemMessage"]
    assert [len(p["meat"]) for p in _parts(scene.home)] == [25, 1]
    context = scene.hook("SessionStart")["hookSpecificOutput"]["additionalContext"]
    head, line = context.splitlines()[:2]
    packet = json.loads(line)
    assert len(context) <= 10_000 and "partial" not in head  # the new part is whole; what of the earlier fits
    assert packet["slug"] == f"{SLUG}-part-2"
    assert [m["text"] for m in packet["meat"]] == ["Now the retry helper, please."]
    earlier = packet["earlier"]
    assert earlier and {m["work"] for m in earlier} == {SLUG}
    assert [m["text"] for m in earlier] == prompts[::-1][: len(earlier)]  # newest first, byte for byte
    assert packet["omitted"] == {"earlier": len(prompts) - len(earlier)}


def test_part_slugs_name_each_part_once() -> None:
    from wheypoint.hooks.rescue import part_number, part_slug

    for number in (1, 2, 9, 10, 123):
        assert part_number(part_slug(SLUG, number), SLUG) == number
    for other in (f"{SLUG}-part-1", f"{SLUG}-part-0", f"{SLUG}-part-02", f"{SLUG}-part-", f"{SLUG}-part-x",
                  f"{SLUG}-parts-2", f"{SLUG}x", "session-claude-code-other", f"{SLUG}-part-2-part-3"):  # fmt: skip
        assert part_number(other, SLUG) is None, other


def test_a_rescue_finds_the_last_part_however_many_works_came_after(scene: Scene) -> None:
    from wheypoint.hooks.rescue import RECENT_WORKS

    scene.append(*(scene.record("user", f"Prompt {n}: " + "p" * SEVENTH) for n in range(8)))
    scene.hook()
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_") and k not in HARNESS_VARIABLES}
    env.update(WHEYPOINT_HOME=str(scene.home), HOME=str(scene.home))
    other = scene.path.with_name("other.jsonl")  # the works after it are another session's
    other.write_text(scene.record("user", "Another session.").replace(SESSION_ID, "0" * 8 + SESSION_ID[8:]))
    time.sleep(1.05)  # the store keeps whole seconds: the others are newer than every part
    for n in range(RECENT_WORKS + 1):  # the parts are no longer among the project's newest works
        argv = [sys.executable, "-m", "wheypoint", "checkpoint", f"other-{n}", "--orientation", "Other.", "--next",
                "hold", "--notes", "Another work.", "--transcript", str(other)]  # fmt: skip
        done = subprocess.run(argv, cwd=scene.repo, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
    scene.append(scene.record("user", "After the others."))
    assert f"{SLUG}-part-2 r2" in scene.hook()["systemMessage"]
    assert [len(p["meat"]) for p in _parts(scene.home)] == [7, 2]


@pytest.mark.parametrize("then", ["unchanged", "changed in place", "finished"])
def test_an_unfinished_last_line_left_as_it_was_is_nothing_new(scene: Scene, then: str) -> None:
    """A transcript whose last line has no end yet (a harness mid-write, or one killed there): while that line stays
    as it was to the byte, a PreCompact has nothing new and reads neither the store nor the transcript; changed in
    place (the same size) or finished, it is read."""
    scene.append(scene.record("user", "Complete."))
    unfinished = scene.record("user", "Being written when the hook ran.")
    scene.append(unfinished[:-12])
    scene.hook()
    assert scene.kept() == ["Complete."] and scene.mark()["offset"] < scene.path.stat().st_size
    if then == "changed in place":  # same length, other bytes after the offset
        data = scene.path.read_bytes()
        scene.path.write_bytes(data[:-5] + b"XXXXX")
    elif then == "finished":
        scene.append(unfinished[-12:])
    store = scene.home / "store.sqlite3"
    store.rename(scene.home / "aside")
    store.write_bytes(b"not a database " * 100)  # a read of the store would now fail and be logged
    try:
        answer = scene.hook()
    finally:
        (scene.home / "aside").replace(store)
    log = [json.loads(line) for line in (scene.home / "hooks" / "hook.log").read_text().splitlines()]
    if then == "unchanged":
        assert answer == {} and "error" not in log[-1] and log[-1]["kept"] == 0, log[-1]
    else:  # located and read: the store is opened (and found damaged here), so the answer says so
        assert log[-1].get("refused") == "storage-error", log[-1]
    scene.hook()  # on the real store again
    expected = ["Complete.", "Being written when the hook ran."] if then == "finished" else ["Complete."]
    assert scene.kept() == expected


def test_the_rest_after_a_read_mark_is_an_unfinished_line_only(tmp_path: Path) -> None:
    """rest_after vouches only for bytes no read could have taken: an unfinished last line, never a whole line
    (one that came after the read stopped and that the next rescue must read)."""
    from wheypoint.transcripts.lines import rest_after

    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}\n{"b"')
    mark = read_mark(path, ReadPoint(8, 1))
    assert mark is not None
    first = rest_after(path, mark)
    assert first is not None and first.endswith(":4")  # the checksum holds the length
    path.write_bytes(b'{"a":1}\n{"c"')
    assert rest_after(path, mark) not in (None, first)
    path.write_bytes(b'{"a":1}\n{"b":2}\n')  # whole: a line to read, not a rest to vouch for
    assert rest_after(path, mark) is None
    path.write_bytes(b'{"a":1}\n')
    assert rest_after(path, mark) is None  # nothing past the offset
    path.write_bytes(b'{"a":1}\n' + b"x" * 70_000)
    assert rest_after(path, mark) is None  # too long to vouch for
    assert rest_after(path, None) is None and rest_after(path, {"offset": -1}) is None


@pytest.mark.parametrize("event", ["PreCompact", "Stop"])
def test_a_rescue_locates_its_session_once(scene: Scene, monkeypatch: pytest.MonkeyPatch, event: str) -> None:
    # Locating a session reads its transcript's head; the hook locates it, and the rescue and the checkpoints it
    # writes take that one (TranscriptChoice.found) instead of locating it again. A Stop (which rescues once the
    # transcript grew by STOP_GROWTH) whose payload names a transcript on disk leaves the locating to the rescue.
    from wheypoint.hooks.events import STOP_GROWTH
    from wheypoint.transcripts import discovery

    scene.append(scene.record("user", "First: the retry helper."), scene.record("user", "Second: and its tests."))
    scene.append(scene.record("assistant", "x" * STOP_GROWTH))
    calls: list[str] = []
    real = discovery.by_path

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(str(args[0]))
        return real(*args, **kwargs)

    monkeypatch.setattr(discovery, "by_path", counted)
    code, printed = scene.hook_in_process(monkeypatch, event)
    assert code == 0 and (event == "Stop" or "kept 2 turn(s)" in json.loads(printed)["systemMessage"]), printed
    assert calls == [str(scene.path)]
    assert scene.kept() == ["First: the retry helper.", "Second: and its tests."]


def test_a_rescue_goes_on_in_the_last_part_when_the_parts_share_their_second(scene: Scene) -> None:
    """The store orders works by the second their head was written, and the parts one rescue writes share one: the
    next rescue still goes on in the session's last part (not an earlier one that is full, which would begin a
    part after the last and link it to the wrong one)."""
    import sqlite3

    scene.append(*(scene.record("user", f"Prompt {n}: " + "p" * SEVENTH) for n in range(15)))
    assert f"{SLUG}-part-3 r1" in scene.hook()["systemMessage"]
    db = sqlite3.connect(scene.home / "store.sqlite3")
    try:  # the three parts written in one second, as a long session's first rescue writes them
        with db:
            db.execute("UPDATE works SET updated_at = '2026-12-05T07:26:36Z'")
    finally:
        db.close()
    scene.append(scene.record("user", "After the parts."))
    assert f"{SLUG}-part-3 r2" in scene.hook()["systemMessage"]
    parts = _parts(scene.home)
    assert [len(p["meat"]) for p in parts] == [7, 7, 2]
    assert [m["text"] for m in parts[-1]["meat"]][-1] == "After the parts."


@pytest.mark.parametrize("store", ["there", "not there yet"])
def test_a_rescue_goes_through_one_store_connection(scene: Scene, monkeypatch: pytest.MonkeyPatch, store: str) -> None:
    """A rescue's lookups and every revision it writes (here a long session's two parts) go through one store,
    opened to write when the store is there; a store not there yet is read as empty until the first write makes
    it, and opening it to read made nothing."""
    from wheypoint.app.context import Context

    if store == "there":
        scene.append(scene.record("user", "First: the retry helper."))
        scene.hook()
    scene.append(*(scene.record("user", f"Prompt {n}: " + "p" * SEVENTH) for n in range(8)))
    opened: list[bool] = []
    real = Context._open

    def counted(self: Context, create: bool) -> Any:
        opened.append(create)
        if not create:  # a reader on a store not there yet finds nothing, and leaves nothing behind
            assert not (scene.home / "store.sqlite3").exists()
        return real(self, create)

    monkeypatch.setattr(Context, "_open", counted)
    code, printed = scene.hook_in_process(monkeypatch)
    assert code == 0 and f"{SLUG}-part-2" in json.loads(printed)["systemMessage"], printed
    assert opened == ([True] if store == "there" else [False, True])
    assert len(_parts(scene.home)) == 2


def test_a_long_session_s_rescues_go_on_in_its_parts_on_the_team_store(scene: Scene, postgres_url: str) -> None:
    """On PostgreSQL too, a rescue reads and writes through one connection opened to write (the team store is
    always there): a long session's first rescue fills part 1 and begins part 2, and the next goes on in part 2."""
    from wheypoint.store import open_store

    scene.store = postgres_url
    scene.append(*(scene.record("user", f"Prompt {n}: " + "p" * SEVENTH) for n in range(8)))
    assert f"{SLUG}-part-2 r1" in scene.hook()["systemMessage"]
    scene.append(scene.record("user", "After the parts."))
    assert f"{SLUG}-part-2 r2" in scene.hook()["systemMessage"]
    store = open_store(postgres_url, create=False)
    try:
        parts = [store.record(work.work_id) for slug in (SLUG, f"{SLUG}-part-2") for work in
                 store.works_with_slug(slug, None)]  # fmt: skip
    finally:
        store.close()
    assert [len(part["meat"]) for part in parts if part] == [7, 2]
    assert parts[1] and parts[1]["meat"][-1]["text"] == "After the parts."
    assert not (scene.home / "store.sqlite3").exists()  # (nothing written beside it)
