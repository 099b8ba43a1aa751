"""Seed 0's hand-off lines: a checkpoint's reply links the note it wrote and says how to resume it, two ways.

The link is `Wheypoint dropped: [<the note's path in the checkout>](<its absolute path>)`; the two commands
resume by slug from the checkout and by the note's absolute path from any folder. Each command is run here as
the reply gives it, from a folder outside the checkout, and must find the work just written.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import Runner, make_repo
from wheypoint.app.shellword import posix_quote

FIRST = ("--orientation", "Retry backoff is designed, not built.", "--next", "hold", "--notes", "Design only.")


def run_command(wp: Runner, line: str, cwd: Path) -> dict[str, object]:
    """Run a reply's resume command (`[cd DIR && ]wheypoint ARGS`) the way a shell would, from `cwd`."""
    if " && " in line:
        cd, line = line.split(" && ", 1)
        words = shlex.split(cd)
        assert words[0] == "cd" and len(words) == 2, cd
        cwd = Path(words[1])
    words = shlex.split(line)
    assert words[0] == "wheypoint", line
    reply = wp(*words[1:], cwd=cwd).json
    assert isinstance(reply, dict)
    return reply


def test_the_reply_links_the_note_and_both_resume_commands_find_the_work(wp: Runner, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "shop")
    reply = wp("checkpoint", "retry-backoff", *FIRST, cwd=repo).json
    note = repo / ".cheese" / "notes" / "retry-backoff.md"
    assert reply["ok"] and reply["note_path"] == str(note) and note.is_file()
    handoff = reply["handoff"]
    assert handoff["dropped"] == f"Wheypoint dropped: [.cheese/notes/retry-backoff.md]({note})"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for key in ("resume_in_checkout", "resume_anywhere"):
        found = run_command(wp, handoff[key], elsewhere)
        assert found["outcome"] == "authoritative" and found["work_id"] == reply["work_id"], (key, found)
    assert handoff["resume_in_checkout"] == f"cd {repo} && wheypoint resolve retry-backoff"
    assert handoff["resume_anywhere"] == f"wheypoint resolve {note}"


def test_a_path_with_spaces_and_parentheses_stays_one_link_and_one_argument(wp: Runner, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "my shop (copy)")
    reply = wp("checkpoint", "retry-backoff", *FIRST, cwd=repo).json
    note = repo / ".cheese" / "notes" / "retry-backoff.md"
    assert reply["handoff"]["dropped"] == f"Wheypoint dropped: [.cheese/notes/retry-backoff.md](<{note}>)"
    for key in ("resume_in_checkout", "resume_anywhere"):
        found = run_command(wp, reply["handoff"][key], tmp_path)
        assert found["outcome"] == "authoritative" and found["work_id"] == reply["work_id"], (key, found)


def test_no_note_means_no_hand_off_lines(wp: Runner, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "shop")
    reply = wp("checkpoint", "retry-backoff", *FIRST, "--no-note", cwd=repo).json
    assert reply["ok"] and reply["note_path"] is None and reply["handoff"] is None
    text = wp("checkpoint", "retry-backoff", "--base", reply["revision_id"], "--notes", "Still design only.",
              "--no-note", "--format", "text", cwd=repo).stdout  # fmt: skip
    assert "Wheypoint dropped" not in text and "Resume" not in text


def test_the_text_form_ends_with_the_link_and_the_two_commands(wp: Runner, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "shop")
    text = wp("checkpoint", "retry-backoff", *FIRST, "--format", "text", cwd=repo).stdout
    note = repo / ".cheese" / "notes" / "retry-backoff.md"
    tail = text.rstrip("\n").split("\n")[-6:]
    assert tail == [f"Wheypoint dropped: [.cheese/notes/retry-backoff.md]({note})", "",
                    "Resume from the checkout:", f"  cd {repo} && wheypoint resolve retry-backoff",
                    "Resume from anywhere:", f"  wheypoint resolve {note}"], text  # fmt: skip


@settings(max_examples=3000, deadline=None)
@given(st.one_of(st.text(), st.text(alphabet="ab _@%+=:,./-'\"$ \t\n\\é")))
def test_a_resume_command_s_words_are_quoted_as_shlex_quotes_them(word: str) -> None:
    # app/shellword.py spells shlex.quote without its regular expression (a write loads no `re`)
    assert posix_quote(word) == shlex.quote(word)
    assert shlex.split(f"wheypoint resolve {posix_quote(word)}")[2:] == [word]
