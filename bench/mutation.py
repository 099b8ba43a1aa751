"""Mutation testing of the core modules: each mutant runs its module's tests in a scratch copy; killed or survived."""

# Run from the repository root (one pytest at a time; about 3 s a mutant on a busy 2-CPU machine):
#
#   python3 bench/mutation.py                                    # every group, 60 mutants each, seed 12
#   python3 bench/mutation.py --groups kernel,rules --sample 0   # every mutant of those groups
#   python3 bench/mutation.py --list kernel                      # the mutants, without running anything
#   python3 bench/mutation.py --only 'kernel:derive_slug:cmp:1a2b3c4d'   # one mutant, verbose
#
# The committed tree (git HEAD: src/, tests/, tools/, docs/, pyproject.toml; `--working-tree` takes the files as they
# are on disk instead, uncommitted edits included) is copied first into a scratch folder, the mutants are made
# from that copy and written there: the real src/ is never touched, since others edit it and run tests while
# this runs, and a score belongs to one commit, which the report names. Each
# mutant's tests run as `python -m pytest -x -q -p no:cacheprovider --hypothesis-seed=0 -m '' <files>` in that
# folder with PYTHONPATH at its src/ (ahead of the editable install's path) and no bytecode written (a
# mutant and the original can have the same size and mtime second, so a cached .pyc could run the wrong one).
# A pytest that fails, or cannot even import the mutated module, has killed the mutant (exit 1 or 2; any other
# exit, such as 5 when no test was selected, stops the run, since it would judge every mutant killed); one that
# passes lets it survive; one that outlives the timeout (10x the group's clean run, at least 30 s) is a timeout,
# counted as killed. The score is (killed + timeouts) / (mutants run), the mutants judged equivalent (EQUIVALENT below,
# each with its reason) left out. The report is printed and written to bench/results/mutation.md.

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mutants import Mutant, mutants_of

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"


@dataclass(frozen=True)
class Group:
    """Modules mutated together, and the tests that must catch them (most specific and fastest first, for -x)."""

    sources: tuple[str, ...]
    tests: tuple[str, ...]
    pytest_args: tuple[str, ...] = ()


GROUPS: dict[str, Group] = {
    "canonical": Group(("src/wheypoint/model/canonical.py",), ("tests/test_canonical.py", "tests/test_kernel.py")),
    "kernel": Group(
        ("src/wheypoint/model/kernel.py",),
        ("tests/test_kernel.py", "tests/test_kernel_changes.py", "tests/test_records.py"),
    ),
    "rules": Group(
        ("src/wheypoint/model/rules.py",), ("tests/test_rules.py", "tests/test_validation.py", "tests/test_kernel.py")
    ),
    # The PostgreSQL half of the contract suite needs a server; the SQLite half is what these mutants touch.
    "sqlite_store": Group(
        tuple(
            f"src/wheypoint/store/{name}.py"
            for name in ("sqlite/backend", "sqlite/schema", "sqlite/indexes", "sqlite/migrations", "sql")
        ),
        ("tests/test_store.py", "tests/test_store_rows.py", "tests/test_store_contract.py"),
        ("-k", "not postgresql"),
    ),
    "credentials": Group(
        (
            "src/wheypoint/model/credentials.py",
            "src/wheypoint/model/credential_hand.py",
            "src/wheypoint/model/credential_values.py",
            "src/wheypoint/model/credential_text.py",
            "src/wheypoint/model/credential_near.py",
            "src/wheypoint/model/credential_fast.py",  # the accelerator: held to the standard-library path's answers
        ),
        (
            "tests/test_credential_prose_edges.py",  # which rule finds what, a step either side of each judgment
            "tests/test_credential_near.py",
            "tests/test_credential_heldout.py",  # each pack's floor per form: what the prose rules are for
            "tests/test_credentials.py",
            "tests/test_credential_thresholds.py",
            "tests/test_credential_text.py",
            "tests/test_credential_fast.py",
        ),
    ),
    # What the hooks choose and write first (one process per hook call, no pyz), then the incremental read's, the
    # packets' and Gemini's own tests; the install tests pin settings.py and install.py.
    "hooks": Group(
        tuple(f"src/wheypoint/hooks/{n}.py" for n in ("rescue", "events", "unchanged", "state", "settings", "install")),
        (
            "tests/test_hook_choices.py",
            "tests/test_rescue_incremental.py",
            "tests/test_hook_packets.py",
            "tests/test_packet_budget.py",
            "tests/test_hooks_gemini.py",
            "tests/test_hook_events.py",
            "tests/test_hooks_install.py",
            "tests/test_hook_state_scrub.py",  # what the state file and hook.log keep of a payload's text
            # the deadline every hook keeps (events.py's own), run as the harness runs a hook
            "tests/test_always_answer.py::test_a_hook_past_its_deadline_answers_says_what_it_skipped_and_exits_0",
            "tests/test_always_answer.py::test_a_rescue_cut_by_its_deadline_leaves_the_store_whole_and_the_next_hook_works",
            "tests/test_always_answer.py::test_a_hook_given_no_regular_transcript_answers_at_once",
            # what a hook with nothing new leaves unloaded: the fast paths of unchanged.py, run as a harness runs them
            "tests/test_startup.py::test_a_hook_with_nothing_new_reads_no_transcript_and_loads_no_reader_or_store",
        ),
    ),
    # The note a record renders to, and the escapes that keep it inert for every reader: the pins of what render
    # writes and the forging properties (CommonMark as an oracle) first, then the readers that read it back.
    "render": Group(
        ("src/wheypoint/notes/render.py", "src/wheypoint/notes/escapes.py"),
        (
            "tests/test_note_forging.py::test_render_writes_each_section_as_pinned",
            "tests/test_render_edges.py",
            "tests/test_projection.py",
            "tests/test_note_forging.py",
            "tests/test_lint.py",
            "tests/test_noteparse.py",
        ),
    ),
}
DEFAULT_GROUPS = ("canonical", "kernel", "rules", "sqlite_store")

# Mutants judged equivalent: no input a caller can give tells them from the original. Keyed by stable id.
_BUSY_WAIT = "the busy wait 0.1% shorter or longer (about 15 s either way): no caller can tell the difference"
_FOLD = "the WAL fold threshold moved by under 1%: only when a writer folds changes, never what is read"
_AS_CONDITION = "the check's one caller reads it as a condition, where None and False agree"
_SPEED = "a speed switch between two searches that find the same hits: "
_WHOLE = (
    "only a generated rule that is not anchored reads `whole`: none of those spans lines, and the two that start "
    "with a literal hold their keyword in every match, so a window holds the match whole; "
)
_GENERIC = (
    "every generic rule is anchored but url-password, whose match holds its needle `://` and stays on one line, "
    "which its window holds whole"
)
_FALSY = "its callers read it as a condition, where None and False agree"
_FLOAT_EDGE = (
    "`>=` and `>` differ only when a value's entropy is exactly the threshold (2.48 bits, or 0.7 x log2 of the "
    "alphabet or length), which no string's entropy is in practice"
)
_OFFSETS = "the block table only shortens the count of characters before a byte offset: "
_WINDOW = "windows are widened to whole lines after merging: "
_VANISHED = (
    "a size that cannot be taken (0 for a file not there) is compared only with a read mark's offset, where "
    "resume_point then fails to open the same file too, or after the file was found regular or located (a missing "
    "one is refused transcript-missing): getsize fails there only when the file vanishes between the two calls"
)
_LOGGED_MS = (
    "the milliseconds a hook call took, as hook.log gives them to a person: nothing reads them back (doctor reads "
    "which calls failed, hook_bench.py times whole processes)"
)
_AFTER_RUN = (
    "a closing backtick run is looked for from the end of the opening run, at offset 1 or later, so it is found at "
    "1 or later or not at all: `< 0`, `<= 0` and `< 1` agree"
)
_ONE_MARK = (
    "a thematic break is three or more of one mark, tested only after the length: a line of one repeated mark has "
    "the same mark at 0 and at 1, and any other line fails the test either way"
)
_STATE_FORM = (
    "the hooks' state file is read only through json.load (app/sessions.py): its escapes, indent and key order "
    "change no value read"
)

_DIGEST_LINE = (
    "the digest line is looked for from the `wheypoint:` line on, which it does not start: it is found at 1 or "
    "later or not at all, so `< 0`, `<= 0` and `< 1` agree"
)

EQUIVALENT: dict[str, str] = {
    "sqlite_store:<module>:const:818e68cf": _BUSY_WAIT,  # BUSY_TIMEOUT_MS = 15001
    "sqlite_store:_connect:const:8b6f0bc7": _BUSY_WAIT,  # timeout=BUSY_TIMEOUT_MS / 1001 (reader)
    "sqlite_store:_connect:const:47967be7": _BUSY_WAIT,  # timeout=BUSY_TIMEOUT_MS / 1001 (writer)
    "sqlite_store:<module>:const:41f22fda": _FOLD,  # WAL_FOLD_BYTES = 257 * 1024
    "sqlite_store:<module>:const:2e206baf": _FOLD,  # WAL_FOLD_BYTES = 256 * 1025
    "sqlite_store:_connect:const:92b03188": "every read-write caller passes `durable`; the default reaches only "
    "read-only connections, which never set synchronous",
    "sqlite_store:_refuse_a_file_for_a_folder:return:e560211b": "the walk up stops at the first folder that "
    "exists, and / always does on POSIX: the return for a missing drive (Windows) is never reached here",
    "sqlite_store:SqliteStore._migrate:cmp:611a8960": "open calls _migrate only when the version differs from "
    "SCHEMA_VERSION, so `>` and `>=` agree on every value it can see",
    "sqlite_store:SqliteStore._run:return:df867e82": "with many=True every caller ignores the result",
    "sqlite_store:SqlStore._starts_with:return:eab1df5a": "SqliteStore overrides it (a range on the slug index); "
    "the PostgreSQL half of test_store_contract.py runs this one",
    "sqlite_store:SqlStore._prefix_args:return:55abb9ca": "SqliteStore overrides it; the PostgreSQL half of "
    "test_store_contract.py runs this one",
    "sqlite_store:SqliteStore._enable_wal:const:743f0e8e": _BUSY_WAIT,  # deadline BUSY_TIMEOUT_MS / 1001
    "sqlite_store:_make_private_folders:bool:ff232ac4": "with `or` the walk goes on up to / through folders that "
    "exist; mkdir on each fails FileExistsError on a folder, which the loop accepts: the same folders are made",
    "sqlite_store:SqliteStore.__init__:const:fe41f12d": "the `writer` default reaches only the reader of a store "
    "not made yet, which has no connection for close to fold",
    "rules:reads_as_key:return:ecf4d691": "its one caller reads it as a condition, where None and False agree",
    "rules:_field_name:const:77cd842e": "the last piece of a right split is the same whatever the number of splits",
    "sqlite_store:SqliteStore.close:cmp:1506c7aa": "a WAL is 32 bytes plus 4,120 per 4 KiB page, never exactly "
    "WAL_FOLD_BYTES (262,144) long, so `>` and `>=` fold the same WALs",
    "credentials:<module>:const:526ec70a": _SPEED + "_CONFIRM at 128 KiB instead of 64 only moves where needles "
    "suggested by a word stop being confirmed before their rules run",
    "credentials:_check_discord:return:cc88a478": "the check's one caller reads it as a condition (`and "
    "rule.check(m)`), where None and False agree",
    # Where the credential scan looks is a choice between searches that find the same hits (a speed switch); the
    # rest are forms no input can tell apart.  Each was read against the code; the reason says why.
    "credentials:<module>:const:97509eeb": _SPEED + "_FEW_SHAPES picks between trying each 32-hex word and one "
    "search of the whole text",
    "credentials:present:cond:95ab9dea": _SPEED + "the same _FEW_SHAPES switch, negated",
    "credentials:present:cmp:7a537e1e": _SPEED + "the same _FEW_SHAPES switch at 16 words",
    "credentials:present:bool:6925fd9f": _SPEED + "more words are tried as 32-hex candidates; the rule's own pattern "
    "still decides",
    "credentials:<module>:const:06fb7d27": _SPEED + "_CONFIRM at 128 KiB instead of 64 (the other constant of the "
    "same shift)",
    "credentials:present:cond:d03f9181": _SPEED + "_CONFIRM negated: unconfirmed needles run rules that find nothing "
    "more, and confirmed ones are the needles that occur",
    "credentials:present:cmp:1582e782": _SPEED + "the same _CONFIRM switch at exactly 64 KiB",
    "credentials:_Compiled.__init__:cmp:eaeda11a": _SPEED + "a needle with a three-character head is looked for "
    "directly instead of among the words; both find the same needles",
    "credentials:_Compiled.__init__:const:bbe11fd4": _SPEED + "the same head-length switch at four characters",
    "credentials:_Compiled.__init__:bool:a312efaf": _SPEED + "the anchored hand rules searched in windows instead: "
    "a window around each needle holds every match that starts at it",
    "credentials:_scan:bool:12da3007": _SPEED + "rules tried where a match can start are searched over windows or "
    "the whole text instead, which hold the same matches",
    "credentials:_Compiled.__init__:bool:94dcfc3e": _WHOLE + "with `and`, no generated rule searches the whole text",
    "credentials:_Compiled.__init__:const:6e7ebc9f": _WHOLE + "`src[:2].isalnum()` holds for the same rules",
    "credentials:_Compiled.__init__:cmp:a731e5c2": _GENERIC,
    "credentials:_Compiled.__init__:const:d271413c": _GENERIC + " (the mutant sets the flag on the rule before)",
    "credentials:_Rule.__init__:const:27afe7a6": "only generated rules read `group`, and each sets it from its data",
    "credentials:_Rule.__init__:const:28b12580": "every rule's `whole` is set after the rule is made",
    "credentials:_check_jwt:return:0db5c89d": _FALSY,
    "credentials:_check_auth_header:return:23e28abf": _FALSY,
    "credentials:_check_auth_header:return:b0874320": _FALSY,
    "credentials:_check_discord:return:a46e31d9": _FALSY,
    "credentials:_check_telegram:return:664695f5": _FALSY,
    "credentials:looks_like_password:return:1878d060": _FALSY,
    "credentials:looks_random:return:adf12b3e": _FALSY,
    "credentials:looks_random:return:0418ad4c": _FALSY,
    "credentials:_check_discord:const:26fe7059": "the first piece of a split is the same whatever the number of splits",
    "credentials:_check_discord:const:cd157b0c": "the decoder ignores extra padding, and the one length `% 5` pads "
    "too little (25 characters) is not base64 with any padding",
    "credentials:looks_random:cmp:9474e5a1": _FLOAT_EDGE,
    "credentials:looks_random:cmp:482fc546": _FLOAT_EDGE,
    "credentials:<module>:const:2c071c2c": _OFFSETS + "any block size maps offsets right",
    "credentials:Haystack._char:cond:6c56c5bf": _OFFSETS + "with no blocks every offset is counted from the start",
    "credentials:Haystack._char:append:b75275f4": _OFFSETS + "with one block every offset is counted from the start",
    "credentials:Haystack._char:const:f46465f1": _OFFSETS + "stepping back two bytes still stops on a character's "
    "first byte; the block is only shorter",
    "credentials:Haystack._char:cmp:3a07916c": _OFFSETS + "the byte 0xC0 never occurs in UTF-8",
    "credentials:Haystack._char:const:245a8929": _OFFSETS + "the byte 0xC0 never occurs in UTF-8",
    "credentials:Haystack.positions:const:390cc48e": "no needle can occur again one character on: none is one "
    "character repeated",
    "credentials:Haystack.windows:const:b3d45b75": _WINDOW + "a window from 1 instead of 0 still starts at the first "
    "line's start",
    "credentials:Haystack.windows:cmp:7209339e": _WINDOW + "spans that only touch are merged by the line pass after",
    "credentials:Haystack.windows:cmp:25da35dc": _WINDOW + "a window ending where the last one ends adds no line",
    "credentials:Haystack.windows:cmp:39e7d102": _WINDOW + "looking for a newline from the text's end finds none: "
    "the end stays the text's end",
    "credentials:Haystack.windows:cmp:dbea711d": _WINDOW + "a newline found from a window's end is never at 0",
    "credentials:Haystack.windows:const:51efaa4b": _WINDOW + "a newline found from a window's end is never at 0",
    "credentials:Haystack.windows:cond:4994b3d5": _WINDOW + "a window from the text's start holds more, never less; "
    "from 0 the line start is 0 either way",
    "credentials:Haystack.windows:const:3bee32f9": _WINDOW + "differs only for a newline at 0, which moves the start "
    "onto that empty line",
    "credentials:Haystack.windows:cmp:7e1fecd5": _WINDOW + "a line start is never a newline's offset, so it never "
    "equals a window's end",
    "credentials:_shape_tools.kind:const:33baac1c": "bytes of no class become `!` instead of a space: neither is "
    "one the shape searches look for",
    "credentials:_token_shapes:const:47bda5c0": "looking three digits back instead of two: a longer run fails the "
    "pattern's 8-10 digits, a shorter one gives the same start",
    "credentials:_token_shapes:const:f9dd4401": "a run of 29 is tried inside a glued word, where the pattern or the "
    "check says no, as the plain search would",
    "credentials:see_through:const:3cceac2c": "the two lists zipped always have the same length",
    "credentials:_ending_at:const:28ae4c6c": "the line's start looked for from index 1 instead of 0 differs only "
    "when the text opens with a newline, and a stretch starting at that newline holds no value or link word more",
    "credentials:_ending_at:const:43a5afcb": "the stretch ends 41 characters after the name instead of 40; the "
    "longest name (encryption_key) and the character after it end 15 characters in",
    "credentials:_verb_pass:const:8d8bf386": "21 characters before a bare pass instead of 20: only the first word "
    "of the stretch can change, and the word judged is the last, which is whole unless it fills the stretch (and "
    "then is no short verb)",
    "credentials:_check_prose:return:61a82b91": _AS_CONDITION,
    "credentials:_check_prose:return:a9c429b9": _AS_CONDITION,
    "credentials:_check_prose_reversed:const:cb5b6ba5": "the first piece of a split is the same whatever the number "
    "of splits",
    "credentials:_renamed:const:ded9e701": "the first piece of a split is the same whatever the number of splits",
    "credentials:Near.matches:bool:eb636027": "a shortcut: every pattern tried after it starts (or ends) with the "
    "same word start and the name, so going on when only one of the two fails finds nothing more",
    "credentials:Near.matches:return:18b03472": "the same shortcut not taken: the patterns' own word start and name "
    "find nothing there",
    "credentials:Near.matches:const:85c59d98": "the line's start looked for from index 1 instead of 0 differs only "
    "when the text opens with a newline, and a stretch starting at that newline holds no value or mark more",
    "credentials:_renamed:cmp:2f588eb1": "a value never starts where its name starts (the patterns put one after the "
    "other), so `>` and `>=` part the two directions alike",
    "credentials:_in_code:cmp:7c725c19": "a value never starts where its name starts (the patterns put one after the "
    "other), so `>` and `>=` part the two directions alike",
    "credentials:_linked_back:return:10a5b8af": "_linked_back is read as a condition (`if not ...`), where None and "
    "False agree",
    "credentials:_linked_back:return:ab9a46f0": "_linked_back is read as a condition (`if not ...`), where None and "
    "False agree",
    "credentials:_linked_back:return:ca1ff7e1": "_linked_back is read as a condition (`if not ...`), where None and "
    "False agree",
    "credentials:check:return:1c029c0d": _AS_CONDITION,
    "credentials:check:return:c0fe581b": _AS_CONDITION,
    "credentials:check:return:b7a71656": _AS_CONDITION,
    "credentials:_check_token_body:return:088646f0": _AS_CONDITION,
    "credentials:_check_assignment:return:62d3909d": _AS_CONDITION,
    "credentials:_verb_pass:return:84a74cdc": "_verb_pass is read as a condition (`if _verb_pass(m) or ...`), where "
    "None and False agree",
    "credentials:_check_prose_bare:return:b4458ae8": _AS_CONDITION,
    "credentials:_check_sas:return:4dd31a20": _AS_CONDITION,
    "credentials:_check_sas:return:236fea9b": _AS_CONDITION,
    "credentials:_in_code:return:e5b4a665": "_in_code is read as a condition (`or _in_code(m)`), where None and "
    "False agree",
    "credentials:_in_code:return:cc6181ff": "_in_code is read as a condition (`or _in_code(m)`), where None and "
    "False agree",
    "credentials:_renamed:const:2fcba189": "the first piece of a split is the same whatever the number of splits",
    "credentials:_check_prose_reversed:return:353c6eb2": _AS_CONDITION,
    "credentials:_check_prose_reversed:return:0e870bee": _AS_CONDITION,
    "hooks:_after:const:c8d5e767": "a turn's time cut at 20 characters instead of 19 compares the same with "
    "`since[:19]`: equal first 19 characters make the longer string the greater, different ones decide alone",
    "hooks:size:return:52c298d8": _VANISHED,
    "hooks:size:const:e168c313": _VANISHED,
    "hooks:save:const:4dae8ea2": _STATE_FORM,  # ensure_ascii=True
    "hooks:save:const:f4edf556": _STATE_FORM,  # indent=2
    "hooks:save:const:c6fe895a": _STATE_FORM,  # sort_keys=False
    "hooks:rescue:const:564ac450": "each of a long rescue's revisions writes its note instead of the last one only: "
    "each is written over by the next, so the note left is the head's either way",
    "hooks:_digest:const:92d76171": "the packet's digest cut at 25 hex digits instead of 24: it is only compared with "
    "digests the same code made, and either length tells the same packets apart",
    "hooks:_newest_work:const:a502809b": "the first of the two newest works is the newest one",
    "hooks:drop_ours:const:b46aad03": "drop_ours's `removed` starting True for an event whose list is there: "
    "the answer only feeds `removed`, which matters only when the settings are left empty, and settings holding "
    "that event's list are not",
    "hooks:drop_ours:const:342d30c7": "drop_ours's answer for an event with nothing of ours only feeds `removed`, "
    "which matters only when the settings are left empty, and settings with that event's list are not",
    "hooks:run_hook:const:7f12dcd0": "reading MAX_PAYLOAD + 2 bytes instead of + 1: a payload is over MAX_PAYLOAD "
    "in either read exactly when it is, so the same payloads are refused",
    "hooks:_answer:const:c5d5f36e": _LOGGED_MS,  # * 1001 (run_hook's bf945845 before the deadline moved it)
    "hooks:_answer:const:000fd2b0": _LOGGED_MS,  # rounded to 2 decimals (run_hook's 181c4ea2)
    "hooks:_repeats:return:2777203e": "_repeats answers None for False: its one caller reads it as a truth value",
    "hooks:_repeats:return:7aab0efa": "_repeats answers None for False: its one caller reads it as a truth value",
    "hooks:_repeats:cmp:df49f789": "a packet sent at the very float time.time() gave the PreCompact, in another "
    "process: `<` and `<=` part only then",
    "hooks:_repeats:cmp:67a071be": "a copy exactly REPEAT_WINDOW seconds old to the float: `<` and `<=` part only then",
    "hooks:_arm:cmp:4c12ee54": "the watch takes `signal` where `_signal` is loaded, which it always is at start-up: "
    "`signal` wraps the same setitimer and signal functions, at the cost of an import",
    "hooks:_expired:const:09953595": "the deadline's handler marks the answer as going out, but the timer rings "
    "once (setitimer with no interval) and the handler ends the process: nothing reads the flag after it",
    "hooks:_usable_head:raise:ed8056e8": "a refusal other than record-corrupt is the store's own (busy, I/O, a "
    "damaged schema): swallowed, the rescue goes on to its checkpoint, which reads the same store and is refused the "
    "same way, so the hook answers and logs the same refusal, only later",
    "hooks:_user_prompt:return:00867960": "for Gemini the lines after the return deliver the pending packet again: "
    "the same text (the harness argument matters for Codex only), the same log fields, and a delivered list that "
    "holds each session once",
    "hooks:_gemini_compress_due:return:3e6940ac": "its one caller reads it as a condition (`not ...`), where None and "
    "False agree",
    "hooks:drop_ours:return:d6353e8a": "its one caller reads it as `drop_ours(...) or removed`, which gives `removed` "
    "for None as for False",
    "hooks:drop_ours:return:6cec65f4": "its one caller reads it as `drop_ours(...) or removed`, which gives `removed` "
    "for None as for False",
    "hooks:_packet:const:3e84b106": "the Codex loop's count of renders stepped by 2 instead of 1: it is only read "
    "as whether a render came before, which either step says",
    "render:_digest_value_span:cmp:92315a7a": _DIGEST_LINE,  # line <= 0
    "render:_digest_value_span:const:7a402a4c": _DIGEST_LINE,  # line < 1
    "render:_digest_value_span:const:6465858b": "the newline after the digest is looked for from the digest's "
    "start, past the `wheypoint:` line, so it is never found at 0: `end < 1` and `end < 0` agree",
    "render:_digest_value_span:cmp:4d131706": "the newline after the digest is looked for from the digest's start, "
    "past the `wheypoint:` line, so it is never found at 0: `end <= 0` and `end < 0` agree",
    "render:fenced:const:c503a0ac": "the longest backtick run of a text with none taken as 1 instead of 0: the fence "
    "is max(3, longest + 1), 3 either way",
    "render:_stale_warning:const:20e36707": "an unsettled decision's settling revision taken as 1 instead of 0: notes "
    "are written at r1 or later, so neither is above the revision `since` names",
    "render:render:const:03937536": "the digest put in at the value's end instead of its start: render puts it in "
    "while the value is still blank, where start and end are one offset",
    "render:_inline:cmp:a9aafb0f": _AFTER_RUN,  # close <= 0
    "render:_inline:const:72ac19af": _AFTER_RUN,  # close < 1
    "render:_closing_run:cmp:6d35e827": _AFTER_RUN,  # found <= 0
    "render:_closing_run:const:2983676a": _AFTER_RUN,  # found < 1
    "render:_closing_run:const:7d130ccd": "`_closing_run` answering -2 instead of -1 for no closing run: its one "
    "caller asks only whether the answer is below 0",
    "render:_is_break:const:b78356c1": _ONE_MARK,  # marks[1] in "*-_"
    "render:_is_break:const:dac3db0e": _ONE_MARK,  # marks == marks[1] * len(marks)
    "render:verbatim_blocks:const:c0f126ec": "the note read from its second line: the first is the status line of the "
    "preamble (or the title), never a fence that opens a verbatim block",
    "render:verbatim_blocks:append:9f0dfdb4": "the closing fence not stepped over: the next turn of the loop reads it, "
    "and a closing fence (`  ` or `  > ` and backticks) never ends in `text`, so it opens nothing",
}
# Mutants no test can see on Python < 3.12, where sqlite3 has no Connection.setconfig: `_checkpoint_on_close` is
# then a no-op, and what decides its argument changes nothing. On 3.12+ they are run like any other (and
# test_store.py's WAL tests see them); here they are counted with the equivalents, under this reason.
BEFORE_312: dict[str, str] = dict.fromkeys(
    ("sqlite_store:_connect:const:bc9fde8b", "sqlite_store:_checkpoint_on_close:bool:d1fff0e3",
     "sqlite_store:_checkpoint_on_close:cmp:d007d656", "sqlite_store:_checkpoint_on_close:cmp:182e93d1",
     "sqlite_store:SqliteStore.close:cond:578c2996", "sqlite_store:SqliteStore.close:bool:c97df633",
     "sqlite_store:SqliteStore.close:const:2e9b70f2"),
    "reaches only _checkpoint_on_close, a no-op without Connection.setconfig (Python < 3.12)",
)  # fmt: skip
if sys.version_info < (3, 12):
    EQUIVALENT.update(BEFORE_312)


@dataclass
class Tally:
    """One group's outcome."""

    total: int = 0
    killed: list[Mutant] = field(default_factory=list)
    timeouts: list[Mutant] = field(default_factory=list)
    survived: list[Mutant] = field(default_factory=list)
    equivalent: list[Mutant] = field(default_factory=list)

    @property
    def score(self) -> float | None:
        run = len(self.killed) + len(self.timeouts) + len(self.survived)
        return (len(self.killed) + len(self.timeouts)) / run if run else None


def scratch_copy(working_tree: bool) -> Path:
    """A copy of what the tests need, taken now (HEAD's, or the files on disk): later edits do not reach this run.

    It is a folder `wheypoint` in a scratch folder of its own, beside a link to the checkout's `../shared` when
    there is one: the tests that read the corpus run then (without it they skip, and kill nothing)."""
    outer = Path(tempfile.mkdtemp(prefix="wheypoint-mutation-"))
    folder = outer / "wheypoint"
    folder.mkdir()
    if (ROOT.parent / "shared").is_dir():
        (outer / "shared").symlink_to(ROOT.parent / "shared")
    # Some tests read the docs; the held-out credential packs' tests read their packs from bench/.
    names = ("src", "tests", "tools", "docs", "bench", "pyproject.toml", "README.md")
    if not working_tree:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", "HEAD", *names], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
        return folder
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis", "results")  # bench/results: git-ignored
    for name in names[:5]:
        shutil.copytree(ROOT / name, folder / name, ignore=skip)
    for name in names[5:]:
        shutil.copy2(ROOT / name, folder / name)
    return folder


def revision(working_tree: bool) -> str:
    """The commit the run measured, and whether the files on disk were taken instead."""
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return head.stdout.strip() + (" plus the working tree's uncommitted edits" if working_tree else "")


def run_tests(scratch: Path, group: Group, timeout: float, extra: tuple[str, ...] = ()) -> tuple[str, float, str]:
    """('passed' | 'failed' | 'timeout', seconds, last output lines) of the group's tests in the scratch copy."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WHEYPOINT_", "PYTHON"))}
    env.update(PYTHONPATH=str(scratch / "src"), PYTHONDONTWRITEBYTECODE="1")
    # `-m ''`: every test of the files, the ones a plain pytest leaves out as slow too.
    argv = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--hypothesis-seed=0", "-m", "",
            *group.pytest_args, *extra, *group.tests]  # fmt: skip
    started = time.monotonic()
    # A session of its own, so a timeout kills the processes the tests started too.
    child = subprocess.Popen(argv, cwd=scratch, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             start_new_session=True)  # fmt: skip
    try:
        out, _ = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        return "timeout", time.monotonic() - started, ""
    tail = "\n".join(out.decode("utf-8", "replace").strip().splitlines()[-15:])
    if child.returncode < 0:  # ended by a signal: the code under test broke the process (a timer left armed)
        return "failed", time.monotonic() - started, f"{tail}\n(pytest ended by signal {-child.returncode})"
    if child.returncode not in (0, 1, 2):  # 1: a test failed; 2: one could not even be collected (import error)
        # No test ran (5), or pytest itself failed (3, 4): no verdict, and every mutant would look killed.
        named = ", ".join(group.tests)
        raise SystemExit(f"pytest exited {child.returncode} on {named}, which judges no mutant:\n{tail}")
    return ("passed" if child.returncode == 0 else "failed"), time.monotonic() - started, tail


def group_mutants(name: str, tree: Path) -> list[Mutant]:
    """Every mutant of the group's sources as they are in `tree` (the scratch copy)."""
    found: list[Mutant] = []
    for path in GROUPS[name].sources:
        source = (tree / path).read_text(encoding="utf-8")
        found += mutants_of(name, path, source)
    # The same change at the same place in two modules (`1024 * 1024` at the top of three hooks modules) has the
    # same id: each copy's function is then qualified by its module's name, so every id names one mutant.
    counts = Counter(m.id for m in found)
    return [
        replace(m, id=f"{name}:{Path(m.path).stem}.{m.id.split(':', 1)[1]}") if counts[m.id] > 1 else m for m in found
    ]


def pick(found: list[Mutant], sample: int, seed: int) -> list[Mutant]:
    """A seeded sample (0: all), in file order; the same ids on the same sources and seed."""
    if sample <= 0 or sample >= len(found):
        return found
    chosen = set(random.Random(seed).sample(sorted(m.id for m in found), sample))
    return [m for m in found if m.id in chosen]


def run_group(
    name: str, scratch: Path, found: list[Mutant], chosen: list[Mutant], verbose: bool, extra: tuple[str, ...] = ()
) -> Tally | None:
    """Run the chosen mutants of a group (after one clean run that must pass, which also sets the timeout);
    None when the clean run fails: no mutant can be judged by tests that fail already."""
    group = GROUPS[name]
    verdict, clean, tail = run_tests(scratch, group, 600, extra)
    if verdict != "passed":
        print(f"== {name}: skipped, its tests fail before any mutation:\n{tail}", file=sys.stderr)
        return None
    timeout = max(30.0, 10 * clean)
    print(f"== {name}: {len(found)} mutants, {len(chosen)} run; clean run {clean:.1f} s, timeout {timeout:.0f} s")
    tally = Tally(total=len(found))
    for number, mutant in enumerate(chosen, 1):
        if mutant.id in EQUIVALENT:
            tally.equivalent.append(mutant)
            continue
        target = scratch / mutant.path
        original = target.read_text(encoding="utf-8")
        target.write_text(mutant.apply(original), encoding="utf-8")
        try:
            verdict, seconds, tail = run_tests(scratch, group, timeout, extra)
        finally:
            target.write_text(original, encoding="utf-8")
        {"failed": tally.killed, "timeout": tally.timeouts, "passed": tally.survived}[verdict].append(mutant)
        if verdict == "passed" or verbose:
            print(f"  {number:>3} {verdict:<8} {seconds:5.1f} s  {mutant.id}\n      {mutant.describe()}")
            if verbose and tail:
                print("      " + tail.replace("\n", "\n      "))
    return tally


def report(tallies: dict[str, Tally], sample: int, seed: int, command: str, measured: str,
           deselected: list[str]) -> str:  # fmt: skip
    lines = [
        "# Mutation testing", "", f"Command: `{command}`", "", f"Sources and tests: {measured}.", "",
        *([f"Tests left out: {', '.join(deselected)}.", ""] if deselected else []),
        f"Sample: {'every mutant' if sample <= 0 else f'{sample} per group'}, seed {seed}." if sample >= 0
        else "Only the mutants named with --only.", "",
        "| group | mutants | run | killed | timeout | survived | equivalent | score (excl. equivalents) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]  # fmt: skip
    for name, t in tallies.items():
        run = len(t.killed) + len(t.timeouts) + len(t.survived)
        score = "n/a" if t.score is None else f"{100 * t.score:.1f}%"
        lines.append(f"| {name} | {t.total} | {run} | {len(t.killed)} | {len(t.timeouts)} | {len(t.survived)} "
                     f"| {len(t.equivalent)} | {score} |")  # fmt: skip
    for name, t in tallies.items():
        if t.survived:
            lines += ["", f"## Survivors: {name}", ""]
            lines += [f"- `{m.id}` {m.describe()}" for m in t.survived]
        if t.equivalent:
            lines += ["", f"## Equivalent: {name}", ""]
            lines += [f"- `{m.id}` {m.describe()}: {EQUIVALENT[m.id]}" for m in t.equivalent]
    return "\n".join(lines) + "\n"


def _shard(parser: argparse.ArgumentParser, text: str) -> tuple[int, int] | None:
    """(K, N) of `--shard K/N`, or None without one."""
    if not text:
        return None
    k, _, n = text.partition("/")
    if not (k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        parser.error(f"--shard takes K/N with 1 <= K <= N, not {text!r}")
    return int(k), int(n)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--groups", default=",".join(DEFAULT_GROUPS), help=f"comma-separated, of {sorted(GROUPS)}")
    parser.add_argument("--sample", type=int, default=60, help="mutants per group, drawn with --seed (0: all)")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--list", metavar="GROUP", help="print the group's mutants and stop")
    parser.add_argument("--only", action="append", default=[], metavar="ID", help="run just these mutants")
    parser.add_argument("--verbose", action="store_true", help="every verdict, with pytest's last lines")
    parser.add_argument(
        "--deselect",
        action="append",
        default=[],
        metavar="NODEID",
        help="a test to leave out (pytest's --deselect), e.g. one that fails for a reason of its own",
    )
    parser.add_argument("--working-tree", action="store_true", help="the files on disk, not the commit at HEAD")
    parser.add_argument("--shard", default="", metavar="K/N", help="run every N-th chosen mutant from the K-th (1 to "
                        "N), to spread one run over N processes; each writes its own report")  # fmt: skip
    args = parser.parse_args(argv)
    shard = _shard(parser, args.shard)
    names = [args.list] if args.list else sorted({i.split(":", 1)[0] for i in args.only}) or args.groups.split(",")
    unknown = [n for n in names if n not in GROUPS]
    if unknown:
        parser.error(f"unknown group(s) {unknown}; known: {sorted(GROUPS)}")
    measured = revision(args.working_tree)
    command = " ".join(["python3 bench/mutation.py", *(argv if argv is not None else sys.argv[1:])])
    scratch = scratch_copy(args.working_tree)
    try:
        if args.list:
            for mutant in group_mutants(args.list, scratch):
                mark = "  (equivalent)" if mutant.id in EQUIVALENT else ""
                print(f"{mutant.id}\n    {mutant.describe()}{mark}")
            return 0
        tallies: dict[str, Tally] = {}
        skipped: list[str] = []
        text = ""
        for name in names:
            found = group_mutants(name, scratch)
            chosen = [m for m in found if m.id in set(args.only)] if args.only else pick(found, args.sample, args.seed)
            if shard:
                chosen = chosen[shard[0] - 1 :: shard[1]]
            extra = tuple(f"--deselect={node}" for node in args.deselect)
            tally = run_group(name, scratch, found, chosen, args.verbose, extra)
            if tally is None:
                skipped.append(name)
                continue
            tallies[name] = tally
            sample = -1 if args.only else args.sample
            text = report(tallies, sample, args.seed, command, measured, args.deselect)
            if not args.only:  # after each group, so a long run interrupted keeps what it measured
                RESULTS.mkdir(parents=True, exist_ok=True)
                named = f"mutation-shard-{shard[0]}-of-{shard[1]}.md" if shard else "mutation.md"
                (RESULTS / named).write_text(text, encoding="utf-8")
    finally:
        shutil.rmtree(scratch.parent, ignore_errors=True)  # the copy and the link beside it (not what it names)
    print(text)
    if skipped:
        print(f"skipped (their tests fail unmutated): {', '.join(skipped)}", file=sys.stderr)
    return 1 if skipped else 0


if __name__ == "__main__":
    sys.exit(main())
