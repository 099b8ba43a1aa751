"""Patterns kept compiled beside the start-up image (wheypoint/patterns.py): the same patterns as re.compile's.

The programs are made by the interpreter's own compiler and handed to `_sre.compile`, so what is checked is that a
pattern from the file, or made fresh, behaves as `re.compile`'s on the scan's every rule; that a real command writes
the file and the next loads from it; and that a damaged or foreign file is ignored and written again.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from credential_formats import FORMATS, texts
from test_boot import _copy, _env, _forged, _index, _run, damaged_files
from wheypoint import patterns

TAG = sys.implementation.cache_tag

# A scan over every credential format in both forms, plus prose that wakes the proximity rule, in a fresh process:
# its findings, and what the pattern file gave it.
_SCAN = """
import json, random, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
from credential_formats import FORMATS, texts
from wheypoint.model.credentials import scan_text
from wheypoint.model.pii import scan_pii
from wheypoint import patterns
rng = random.Random(7)
samples = [t for name in sorted(FORMATS) for form in ("prose", "assignment") for t, _ in texts(name, rng, form)]
samples += ["the password is hunter2!Bq9 for now", "rotate the token: Xk29dj3kLm0qPz8a7 today",
            "call 415-555-0182 or +44 20 7946 0958", "nothing to see here"]
hits = [[tuple(h) for h in scan_text(s)] + [tuple(h) for h in scan_pii(s)] for s in samples]
state = patterns._state
print(json.dumps({"hits": hits, "new": len(state["new"]), "kept": len(state["index"] or {}) - bool(state["index"]),
                  "path": state["path"]}))
from wheypoint import boot
boot.refresh()
"""


def _patterns_file(site: Path) -> Path:
    return site / "wheypoint" / "__pycache__" / f"patterns.{TAG}.bin"


def _scan(site: Path, env: dict[str, str]) -> dict[str, object]:
    tests = str(Path(__file__).resolve().parent)
    done = subprocess.run([sys.executable, "-c", _SCAN, str(site), tests], cwd=site, env=env, capture_output=True,
                          text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def _same(mine: re.Pattern[str], theirs: re.Pattern[str], samples: list[str]) -> None:
    assert (mine.pattern, mine.flags, mine.groups, mine.groupindex) == (
        theirs.pattern, theirs.flags, theirs.groups, theirs.groupindex)  # fmt: skip
    for sample in samples:
        assert [m.span() + m.groups() for m in mine.finditer(sample)] == [
            m.span() + m.groups() for m in theirs.finditer(sample)]  # fmt: skip


def _scan_sources() -> list[tuple[str, int]]:
    """Every pattern the credential scan compiles: the rule tables' and the proximity rule's."""
    from wheypoint.model import credential_hand, credential_near, credential_rules

    found = [(src, 0) for _, src, _ in (*credential_hand.PATTERNS, *credential_hand.GENERIC)]
    found += [(rule[1], re.ASCII) for rule in credential_rules.RULES]
    names = credential_hand.PROSE_KEYWORDS
    found += [(credential_near._after(names, n).pattern, 0) for n in range(credential_near.AFTER + 1)]
    found += [(credential_near._before(names, n).pattern, 0) for n in range(credential_near.BEFORE + 1)]
    return found


def test_a_kept_program_makes_the_pattern_re_compile_makes() -> None:
    rng = random.Random(3)
    samples = [t for name in sorted(FORMATS) for t, _ in texts(name, rng, "prose")][:60]
    samples += ["the password is hunter2!Bq9", "token = 'Xk29dj3kLm0qPz8a7'", "AKIA" + "Q" * 16 + " and more"]
    for source, flags in _scan_sources():
        program = patterns._program(source, flags)
        import _sre  # type: ignore[import-not-found,unused-ignore]
        import marshal

        kept = _sre.compile(source, *marshal.loads(marshal.dumps(program)))  # through the file's own encoding
        _same(kept, re.compile(source, flags), samples)
    bytes_pattern = patterns.compiled(rb"\.[a0]{6}\.[a0]{27}")
    assert (
        bytes_pattern.search(b"x.a0a0a0." + b"a" * 27) is not None and bytes_pattern.pattern == rb"\.[a0]{6}\.[a0]{27}"
    )


def test_the_ascii_flag_callers_use_without_re_is_re_s() -> None:
    assert patterns.ASCII == re.ASCII == int(re.ASCII)


def test_when_the_private_compiler_moved_the_answer_is_re_compile_s(monkeypatch: pytest.MonkeyPatch) -> None:
    def moved(source: object, flags: int) -> object:
        raise AttributeError("_code")

    monkeypatch.setattr(patterns, "_program", moved)
    monkeypatch.setattr(patterns, "_cache", {})
    new = dict(patterns._state["new"])
    source = r"(?P<v>q[0-9]{3,})-moved"
    assert patterns.compiled(source).fullmatch("q1234-moved") is not None
    assert patterns._state["new"] == new  # nothing to keep from the standard way
    with pytest.raises(re.error):
        patterns.compiled("(unbalanced")  # a bad pattern is refused as re.compile refuses it


def test_a_command_keeps_its_patterns_and_the_next_loads_them_with_the_same_findings(tmp_path: Path) -> None:
    site = _copy(tmp_path)
    env = _env(tmp_path)
    first = _scan(site, env)
    assert _patterns_file(site).is_file() and first["new"] and first["kept"] == 0
    second = _scan(site, env)
    assert second["new"] == 0 and second["kept"] == first["new"], "the second process compiled again"
    plain = _scan(site, _env(tmp_path, WHEYPOINT_IMAGE="off"))  # the standard way, nothing kept or read
    assert plain["path"] is None and plain["kept"] == 0
    assert first["hits"] == second["hits"] == plain["hits"]
    assert any(first["hits"]), "the samples found nothing: the comparison proves nothing"


_INDEX = """
import json, sys
sys.path.insert(0, sys.argv[1])
from wheypoint import patterns
from wheypoint.model import credential_text
from wheypoint.model import credential_table
from wheypoint.model.credential_table import compiled, COMMON_WORDS
table = compiled()
index = table.index
built = credential_text._index_state(index.needles, COMMON_WORDS)
state = (index.needles, index.words, index.direct, index.spaced, index.heads, index.head_of, index.exact_heads,
         index.fused, index.to_space, index.to_token)
rows = (table.rows, table.by_needle, table.global_allow, table.global_stopwords)
same_rows = rows == credential_table._rule_table() and len(table.rows) > 200
kept = sorted(key for key in (patterns._state["index"] or {}) if key.startswith("v:"))
print(json.dumps({"same": state == built and same_rows, "kept": kept,
                  "new": sorted(k for k in patterns._state["new"] if k[:2] == "v:")}))
from wheypoint import boot
boot.refresh()
"""


def test_the_scan_s_tables_are_kept_and_the_next_process_loads_what_it_would_build(tmp_path: Path) -> None:
    site = _copy(tmp_path)
    env = _env(tmp_path)

    def index() -> dict[str, object]:
        done = subprocess.run([sys.executable, "-c", _INDEX, str(site)], cwd=site, env=env, capture_output=True,
                              text=True, timeout=120, check=False)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        report: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
        return report

    first = index()
    assert first["same"] and not first["kept"] and len(first["new"]) == 2  # type: ignore[arg-type]  # rules, index
    second = index()
    assert second["same"] and second["kept"] == first["new"] and not second["new"], second
    # Another build of the module that makes a table (an upgrade leaves the kept file behind) builds it again, and
    # the needle index, kept under the rule table's sources too, with it.
    index_name = "needle-index-of-1"
    for module, names in (("credential_text.py", [index_name]),
                          ("credential_hand.py", ["credential-rules", index_name])):  # fmt: skip
        source = site / "wheypoint" / "model" / module
        os.utime(source, ns=(source.stat().st_atime_ns, source.stat().st_mtime_ns + 10**9))
        rebuilt = index()
        assert rebuilt["same"] and [key.split(":")[1] for key in rebuilt["new"]] == names, rebuilt  # type: ignore[union-attr]
    # A kept table of another shape (a forged or foreign file) is built again, and kept again.
    import marshal

    data = _patterns_file(site).read_bytes()
    size = int.from_bytes(data[8:16], "little")
    index_of = marshal.loads(data[16 : 16 + size])
    blob = marshal.dumps(("not", "an", "index"))
    forged = {k: v if not str(k).startswith("v:") else (0, len(blob)) for k, v in index_of.items()}
    encoded = marshal.dumps(forged)
    _patterns_file(site).write_bytes(data[:8] + len(encoded).to_bytes(8, "little") + encoded + blob)
    third = index()
    names = [key.split(":")[1] for key in third["new"]]  # type: ignore[union-attr]
    assert third["same"] and names == ["credential-rules", index_name], third


_PLAIN = """
import json, sys
sys.path.insert(0, sys.argv[1])
from wheypoint.model.credential_table import compiled
from wheypoint.model.rules import secret_problem
said = [secret_problem("$", text) is not None for text in sys.argv[2:]]
print(json.dumps({"said": said, "table": bool(compiled()._table)}))
from wheypoint import boot
boot.refresh()
"""


def test_a_text_holding_no_needle_is_scanned_without_the_rule_table(tmp_path: Path) -> None:
    """The needle index is kept under the rule table's sources, so once both are kept a scan of a text that holds
    no needle loads the index alone; one that holds a needle loads the table and finds the credential."""
    site = _copy(tmp_path)
    env = _env(tmp_path)
    plain, secret = "Please fix the retry helper's tests, then commit.", "token = ghp_" + "a1B2c3D4e5" * 4

    def scan(*texts: str) -> dict[str, object]:
        done = subprocess.run([sys.executable, "-c", _PLAIN, str(site), *texts], cwd=site, env=env,
                              capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        report: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
        return report

    assert scan(plain) == {"said": [False], "table": True}  # nothing kept yet: the index is built from the table
    assert scan(plain) == {"said": [False], "table": False}
    assert scan(plain, secret) == {"said": [False, True], "table": True}


def test_a_scan_unmarshals_only_the_rows_its_needles_call_and_makes_a_damaged_row_again() -> None:
    """The kept table holds each row marshalled on its own: a text whose needles call one rule loads that rule's
    row alone, and a row that does not load as a row (damaged since it was kept) is made from the rule modules."""
    import marshal

    from wheypoint.model import credential_table
    from wheypoint.model.credentials import scan_text

    source_rows = credential_table._rule_table()[0]
    table = credential_table.Compiled()
    table._table[:] = [credential_table._kept_table()]
    assert table.rows == source_rows and len(table._rows) == len(source_rows) > 200
    fresh = credential_table.Compiled()
    kept = credential_table._kept_table()
    damaged = list(kept[0])
    damaged[3] = marshal.dumps(("not", "a", "row"))
    damaged[4] = damaged[4][:5]
    fresh._table[:] = [(tuple(damaged), *kept[1:])]  # (its needle index, when built here, read the whole table)
    fresh._rows.clear()
    assert fresh.row(3) == source_rows[3] and fresh.row(4) == source_rows[4] and fresh.rule(4).rule_id
    assert len(fresh._rows) == 2
    assert not credential_table._sound_table(((*damaged[:3], "text"), *kept[1:]))
    # Through the process's own table: a sentence with one common needle unmarshals a handful of rows, not all.
    live = credential_table.compiled()
    live._rows.clear()
    live._made.clear()  # (rules made by earlier scans in this process would not ask for their rows again)
    assert scan_text("It reads the notes. Then it writes the rows.") == []
    assert 0 < len(live._rows) < 20, sorted(live._rows)


def test_the_cli_writes_the_file_once_its_answer_is_out(tmp_path: Path) -> None:
    site = _copy(tmp_path)
    env = _env(tmp_path)
    _run(site, env, "validate", "kept-patterns", "--orientation", "A work.", "--next", "hold",
         "--decision", "The password rotation runs weekly.", "--rationale", "The token expires.")  # fmt: skip
    assert _patterns_file(site).is_file()
    _run(site, _env(tmp_path, PYTHONDONTWRITEBYTECODE="1"), "list")  # no bytecode written: nothing written
    bare = _copy(tmp_path, "bare")
    _run(bare, _env(tmp_path, PYTHONDONTWRITEBYTECODE="1"), "validate", "kept-patterns", "--orientation", "A work.",
         "--next", "hold", "--decision", "The password rotation runs weekly.", "--rationale", "Because.")  # fmt: skip
    assert not _patterns_file(bare).exists()


@pytest.mark.parametrize("damage", ["empty", "truncated", "garbage", "other interpreter", "other engine",
                                    "huge index", "past the end", "programs of another shape", "fifo"])  # fmt: skip
def test_a_damaged_or_foreign_file_is_ignored_and_written_again(tmp_path: Path, damage: str) -> None:
    import marshal

    site = _copy(tmp_path)
    env = _env(tmp_path)
    expected = _scan(site, env)["hits"]
    kept = _patterns_file(site)
    data = kept.read_bytes()

    if damage == "fifo":
        kept.unlink()
        os.mkfifo(kept)
    elif damage == "programs of another shape":
        size = int.from_bytes(data[8:16], "little")
        index = marshal.loads(data[16 : 16 + size])
        blob = marshal.dumps((1, ["not", "code"], 0, {}, ()))
        forged = {k: v if k == "" else (0, len(blob)) for k, v in index.items()}
        encoded = marshal.dumps(forged)
        kept.write_bytes(data[:8] + len(encoded).to_bytes(8, "little") + encoded + blob)
    else:
        index = _index(data)
        kept.write_bytes({
            **damaged_files(data),
            "other engine": lambda: _forged(data, {**index, "": "another engine"}),
            "past the end": lambda: _forged(data, {k: v if k == "" else (v[0], 1 << 40) for k, v in index.items()}),
        }[damage]())  # fmt: skip
    again = _scan(site, env)  # the same findings (the subprocess's timeout bounds a hang)
    assert again["hits"] == expected
    if damage not in ("truncated",):  # half a file still holds its index and first programs
        assert again["new"], "a damaged file was trusted"
    if damage == "fifo":
        kept.unlink()
        _scan(site, env)
    assert _scan(site, env)["new"] == 0, "the file was not written again"
