"""The accelerated credential scan (wheypoint[fast]) finds exactly what the standard-library scan finds."""

# Both paths run in this one process: credential_text._ENGINE holds the path the scan takes, and _path() sets it
# for a block.  Every text the benchmarks generate is scanned both ways (bench/credentials_eval.py's formats in
# prose and assignment forms, its per-rule fakes and near misses; bench/credential_heldout.py's packs in prose,
# assignment, JSON, YAML and shell forms and its prefix-less sentences), then long texts made of them (past the
# size at which the pure path tests needles on the text's distinct tokens), then the real corpus.  The hits must be
# the same; for the long texts, so must the needles found and every offset of each.
#
# The accelerator is pyahocorasick, which the `dev` extra installs: without it these tests skip, and fail under CI.

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import pytest

from conftest import missing, shared_path
from credential_formats import FORMATS, texts
from wheypoint.model import credential_text, credentials
from wheypoint.model.characters import INVISIBLE
from wheypoint.model.credentials import scan_text

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"

Hits = list[tuple[str, int, int]]


@pytest.fixture(scope="module")
def fast() -> ModuleType:
    """The accelerator's module; skips when pyahocorasick is not installed, and fails under CI, where it must be."""
    try:
        import ahocorasick  # noqa: F401
    except ImportError:
        missing(
            "pyahocorasick is not installed (pip install -e '.[fast]'; '.[dev]' holds it): the accelerated credential"
            " scan is not tested here"
        )
    from wheypoint.model import credential_fast

    return credential_fast


@contextmanager
def _path(engine: ModuleType | None) -> Iterator[None]:
    """Every scan in the block takes this path: the accelerator's module, or None for the standard library."""
    before, start = list(credential_text._ENGINE), credential_text.ACCELERATE_FROM
    credential_text._ENGINE[:] = [engine]
    credential_text.ACCELERATE_FROM = 0  # every text, however short
    try:
        yield
    finally:
        credential_text._ENGINE[:] = before
        credential_text.ACCELERATE_FROM = start


def _hits(text: str) -> Hits:
    return [(h.rule, h.start, h.end) for h in scan_text(text)]


def _differences(fast: ModuleType, batch: list[str]) -> list[tuple[int, Hits, Hits]]:
    """(index, pure hits, accelerated hits) of every text of batch on which the two paths differ."""
    with _path(None):
        pure = [_hits(text) for text in batch]
    with _path(fast):
        accelerated = [_hits(text) for text in batch]
    return [(i, a, b) for i, (a, b) in enumerate(zip(pure, accelerated, strict=True)) if a != b]


def _needles(text: str) -> tuple[set[str], dict[str, list[int] | None], dict[str, list[int]]]:
    """What the needle search answers for text on the current path: needles, shapes, and each needle's offsets."""
    shapes: dict[str, list[int] | None] = {}
    haystack = credential_text.Haystack(text)
    found = credential_text.present(credentials._compiled().index, haystack, shapes)
    return found, shapes, {needle: haystack.positions(needle) for needle in found if needle not in shapes}


# --- the texts ----------------------------------------------------------------------------------------------------


def _bench(name: str) -> ModuleType:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        return __import__(name)
    finally:
        sys.path.remove(str(ROOT / "bench"))


def _eval_forms(form: str) -> list[str]:
    rng = random.Random(f"fast-{form}")
    return [text for name in FORMATS for _ in range(3) for text, _ in texts(name, rng, form)]


def _eval_others() -> list[str]:
    evaluation = _bench("credentials_eval")
    out = [text for _, text, _, _ in evaluation.fake_set(20260223, 16)]
    out += evaluation.near_misses()
    for family in evaluation.generated_near_misses(20260223).values():
        out += family
    return out


def _pack(pack: str) -> list[str]:
    heldout = _bench("credential_heldout")
    seed = heldout.SEEDS[pack]
    out = [text for _, _, text, _ in heldout.format_cases(pack, seed, 1)]
    return out + [text for _, text, _ in heldout.named_cases(pack, seed + 1, 400)]


def _packs() -> list[str]:
    return sorted(_bench("credential_heldout").SEEDS)


SOURCES: dict[str, Callable[[], list[str]]] = {
    "eval-prose": lambda: _eval_forms("prose"),
    "eval-assignment": lambda: _eval_forms("assignment"),
    "eval-fakes-and-near-misses": _eval_others,
    **{f"heldout-{pack}": (lambda pack=pack: _pack(pack)) for pack in _packs()},
}


def _joined(batch: list[str], rng: random.Random, size: int) -> Iterator[str]:
    """Texts of about size characters made of batch's texts in turn, with filler between: non-ASCII prose, invisible
    characters, words that begin like a rule's keyword and keywords glued to what precedes them."""
    fillers = [
        "naïve café — résumé 日本語 \U0001f600 a line of prose\n",
        f"ze{INVISIBLE[0]}ro-width{INVISIBLE[1]} marks in words\n",
        "pytest_session testing livelihood messageBox patience xeyjx sk8 s.t. api-ish keys\n",
        "for (i = 0; i < n; i++) self.client.get(key); // tokens: 12345678 s.t. sk is ok\n",
        "Kelvin \u212a and long s \u017f fold to ASCII under str.lower(): not here\n",
        "\ud800 a lone surrogate, kept by surrogatepass\n",
    ]
    pieces: list[str] = []
    length = 0
    total = sum(len(text) + 60 for text in batch)
    for text in batch * max(1, -(-2 * size // total)):  # enough rounds of batch for two texts at least
        pieces.append(text)
        pieces.append(rng.choice(fillers) * rng.randint(0, 3))
        length += len(text) + 60
        if length >= size:
            yield "".join(pieces)
            pieces, length = [], 0
    if pieces:
        yield "".join(pieces)


# --- the two paths --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_both_paths_find_the_same_in_every_generated_text(fast: ModuleType, source: str) -> None:
    batch = SOURCES[source]()
    assert len(batch) > 100
    assert _differences(fast, batch) == []


@pytest.mark.parametrize("source", ["eval-prose", "eval-fakes-and-near-misses", "heldout-ninth"])
def test_both_paths_find_the_same_needles_at_the_same_offsets_in_long_texts(fast: ModuleType, source: str) -> None:
    """Past 64 KB the pure path looks for needles among the text's distinct tokens: the answer stays the same, down
    to the needles, the shapes and every offset, with wide characters shifting byte offsets from character ones."""
    rng = random.Random(source)
    long = list(_joined(SOURCES[source](), rng, 100_000))
    assert len(long) >= 2 and all(len(text) > 1 << 16 for text in long[:-1])
    assert _differences(fast, long) == []
    needles: set[str] = set()
    for text in long:
        with _path(None):
            pure = _needles(text)
        with _path(fast):
            accelerated = _needles(text)
        assert pure == accelerated
        needles |= pure[0]
    assert len(needles) > 40


@pytest.mark.parametrize(
    "text",
    [
        "pytest_x",  # `test_` occurs, but its head `test` begins no run: not a needle of the text
        "pytest_x testing",  # ... and now it does, elsewhere
        "xeyjz and xeyj",  # `eyj` (itself a head) only inside runs
        "xeyjz and eyj",
        "the xprivate keys",  # a spaced needle glued on both sides
        "key key key private key",
        "AKIA" + "2" * 16 + " é " + "s." * 40,
        "",
        "é",
    ],
)
def test_both_paths_read_edge_texts_alike(fast: ModuleType, text: str) -> None:
    for body in (text, text + "\n" + "filler words é\n" * 6000):  # short, then past 64 KB
        with _path(None):
            pure = _needles(body)
        with _path(fast):
            accelerated = _needles(body)
        assert pure == accelerated, text
        assert _differences(fast, [body]) == []


def test_both_paths_find_the_same_in_the_corpus(fast: ModuleType) -> None:
    """Every user turn and every string of the real transcripts (../shared/corpus), alone and joined."""
    corpus = shared_path("corpus")
    evaluation = _bench("credentials_eval")
    files = sorted(p for p in corpus.rglob("*") if p.suffix in (".jsonl", ".json") and "metadata" not in p.name)
    turns = [text for path in files for text in evaluation.user_turns(path)]
    strings = [text for path in files for text in evaluation.all_strings(path)]
    assert turns and len(strings) > 1000
    assert _differences(fast, turns) == []
    assert _differences(fast, strings[::7]) == []  # a seventh of them alone: each string costs a scan's overhead
    long = ["\n".join(strings[at : at + 2000]) for at in range(0, len(strings), 2000)]  # all of them joined
    assert _differences(fast, long) == []


# --- choosing the path ----------------------------------------------------------------------------------------------

_PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
from wheypoint.model import credential_text, credentials
before = sorted(m for m in ("ahocorasick", "wheypoint.model.credential_fast") if m in sys.modules)
padding = "plain words " * (int(sys.argv[2]) // 12 if len(sys.argv) > 2 else 0)
hits = [h.rule for h in credentials.scan_text(padding + "deploy with ghp_" + "a1B2c3D4e5" * 3 + "a1B2c3")]
after = sorted(m for m in ("ahocorasick", "wheypoint.model.credential_fast") if m in sys.modules)
engine = credential_text._ENGINE[0] if credential_text._ENGINE else None
print(json.dumps({"before": before, "after": after, "hits": hits, "engine": engine and engine.__name__}))
"""


def _probe(length: int) -> dict[str, object]:
    """A fresh interpreter's scan of a text of about `length` characters holding one token (with this one's
    site-packages: the accelerator when installed)."""
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-c", _PROBE, str(SRC), str(length)], env=env, capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def test_the_accelerator_loads_for_a_long_text_never_at_import(fast: ModuleType) -> None:
    assert _probe(credential_text.ACCELERATE_FROM) == {
        "before": [],
        "after": ["ahocorasick", "wheypoint.model.credential_fast"],
        "hits": ["github-pat"],
        "engine": "wheypoint.model.credential_fast",
    }


def test_a_short_text_never_loads_the_accelerator(fast: ModuleType) -> None:
    """The prompts and intents every command scans are shorter than ACCELERATE_FROM: importing pyahocorasick and
    building its automaton would cost them more than the standard-library search."""
    assert _probe(credential_text.ACCELERATE_FROM - 1000) == {"before": [], "after": [], "hits": ["github-pat"],
                                                              "engine": None}  # fmt: skip


def test_without_the_package_the_scan_takes_the_standard_library_path() -> None:
    """Started without site-packages (-S, as the start-up test runs a command, or a bare `python3 -I` zipapp), the
    import guard finds no pyahocorasick and the scan runs on the standard library alone."""
    done = subprocess.run(
        [sys.executable, "-S", "-c", _PROBE, str(SRC)],
        env={"PATH": os.environ.get("PATH", "")},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"before": [], "after": [], "hits": ["github-pat"], "engine": None}
