"""The start-up image (wheypoint/boot.py): written after a command, used by the next, never trusted over a source.

Each test copies the package into a folder of its own and runs real interpreters on it, with bytecode writing on
(the developer's PYTHONDONTWRITEBYTECODE is dropped), so what is checked is what an installed package does.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "wheypoint"
TAG = sys.implementation.cache_tag

# Runs a command as the console script does (`run` ends the process once the image is refreshed).
_RUN = "import sys; sys.path.insert(0, sys.argv[1]); from wheypoint.cli.entry import run; sys.argv[1:2] = []; run()"
# Runs a command, then says where each of the package's modules came from and what one module holds.
_PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
from wheypoint.cli.main import main
code = main(sys.argv[2:])
import wheypoint.model.replies as replies
sys.stdout.flush()
loaders = {name: type(module.__spec__.loader).__name__ for name, module in sys.modules.items()
           if name.startswith("wheypoint.")}
files = {name: module.__file__ for name, module in sys.modules.items() if name.startswith("wheypoint")}
setup = {name: [module.__cached__, getattr(module, "__path__", None), module.__spec__.parent, module.__package__]
         for name, module in sys.modules.items() if name.startswith("wheypoint")}
print(json.dumps({"code": code, "loaders": loaders, "files": files, "edited": getattr(replies, "EDITED", None),
                  "setup": setup}), file=sys.stderr)
"""


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    home = tmp_path / "home"
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "WHEYPOINT_HOME": str(home), **extra}


def _copy(tmp_path: Path, name: str = "site") -> Path:
    site = tmp_path / name
    shutil.copytree(SRC, site / "wheypoint", ignore=shutil.ignore_patterns("__pycache__"))
    return site


def _image(site: Path) -> Path:
    return site / "wheypoint" / "__pycache__" / f"image.{TAG}.bin"


def _run(site: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-c", _RUN, str(site), *args], cwd=site, env=env, capture_output=True,
                          text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def _probe(site: Path, env: dict[str, str], *args: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", _PROBE, str(site), *(args or ("list",))], cwd=site, env=env,
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    report: dict[str, object] = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, done.stdout + done.stderr
    return report


def _from_image(report: dict[str, object]) -> set[str]:
    loaders = report["loaders"]
    assert isinstance(loaders, dict)
    return {name for name, kind in loaders.items() if kind == "_Loader"}


def test_a_command_writes_the_image_and_the_next_one_imports_from_it(tmp_path: Path) -> None:
    site = _copy(tmp_path)
    env = _env(tmp_path)
    assert not _image(site).exists()
    _run(site, env, "list")
    assert _image(site).is_file()
    written = _image(site).stat().st_mtime_ns
    report = _probe(site, env)
    loaders = report["loaders"]
    assert isinstance(loaders, dict)
    # every module past the two that load before the image is read from it, and reports its own source file
    assert set(loaders) - _from_image(report) == {"wheypoint.boot"}, loaders
    files = report["files"]
    assert isinstance(files, dict)
    assert all(str(path).startswith(str(site / "wheypoint")) and str(path).endswith(".py") for path in files.values())
    # each module is set up as the standard path sets it up: its bytecode's path, a package's search path, its
    # parent package (the image's finder builds the spec by hand)
    setup = report["setup"]
    assert isinstance(setup, dict)
    for name, (cached, path, parent, package) in setup.items():
        source = str(files[name])
        is_package = source.endswith("__init__.py")
        assert cached == importlib.util.cache_from_source(source), name
        assert path == ([os.path.dirname(source)] if is_package else None), name
        assert parent == package == (name if is_package else name.rpartition(".")[0]), name
    _run(site, env, "list")  # nothing changed: the image is not written again
    assert _image(site).stat().st_mtime_ns == written


def test_an_edited_module_runs_as_edited_even_at_the_same_size(tmp_path: Path) -> None:
    site = _copy(tmp_path)
    env = _env(tmp_path)
    module = site / "wheypoint" / "model" / "replies.py"
    module.write_text(module.read_text(encoding="utf-8") + "\nEDITED = 1\n", encoding="utf-8")
    _run(site, env, "list")
    assert _probe(site, env)["edited"] == 1
    # the same number of bytes, a nanosecond later: the image's copy of the module is not run (its .pyc is taken
    # away, which CPython would trust: its own check is to the second)
    before = module.stat()
    for pyc in (module.parent / "__pycache__").glob("replies.*.pyc"):
        pyc.unlink()
    module.write_text(module.read_text(encoding="utf-8").replace("EDITED = 1", "EDITED = 2"), encoding="utf-8")
    os.utime(module, ns=(before.st_atime_ns, before.st_mtime_ns + 1))
    assert module.stat().st_size == before.st_size
    assert _probe(site, env)["edited"] == 2
    image = _image(site).read_bytes()
    _run(site, env, "list")  # the stale image is written again, and holds the edit
    assert _image(site).read_bytes() != image
    assert _probe(site, env)["edited"] == 2


def test_the_code_comes_from_the_image_while_the_stamp_matches(tmp_path: Path) -> None:
    """What the image serves is its own copy: a source changed behind its back (same size, its time put back to
    the nanosecond) still runs as the image holds it, which is what tells the image is read at all."""
    site = _copy(tmp_path)
    env = _env(tmp_path)
    module = site / "wheypoint" / "model" / "replies.py"
    module.write_text(module.read_text(encoding="utf-8") + "\nEDITED = 1\n", encoding="utf-8")
    _run(site, env, "list")
    before = module.stat()
    module.write_text(module.read_text(encoding="utf-8").replace("EDITED = 1", "EDITED = 2"), encoding="utf-8")
    os.utime(module, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert _probe(site, env)["edited"] == 1
    assert _probe(site, _env(tmp_path, WHEYPOINT_IMAGE="off"))["edited"] in (1, 2)  # CPython's own .pyc check


def test_a_new_module_is_found_and_joins_the_image(tmp_path: Path) -> None:
    site = _copy(tmp_path)
    env = _env(tmp_path)
    _run(site, env, "list")
    (site / "wheypoint" / "model" / "late.py").write_text('"""A module added after the image."""\nVALUE = 7\n')
    # a process that imports it by the standard path writes the image again at its end (as `run` does)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import wheypoint.model.late as m; import wheypoint.boot as b;"
        " print(m.VALUE, type(m.__spec__.loader).__name__, b.refresh())"
    )
    done = subprocess.run([sys.executable, "-c", code, str(site)], env=env, capture_output=True, text=True,
                          timeout=60, check=True)  # fmt: skip
    assert done.stdout.split() == ["7", "SourceFileLoader", "True"]
    done = subprocess.run([sys.executable, "-c", code, str(site)], env=env, capture_output=True, text=True,
                          timeout=60, check=True)  # fmt: skip
    assert done.stdout.split() == ["7", "_Loader", "False"]


def _forged(data: bytes, index: object) -> bytes:
    """An image with another index put in front of the same code."""
    import marshal

    size = int.from_bytes(data[8:16], "little")
    forged = marshal.dumps(index)
    return data[:8] + len(forged).to_bytes(8, "little") + forged + data[16 + size :]


def damaged_files(data: bytes) -> dict[str, Callable[[], bytes]]:
    """What any file of boot's indexed format (`read_indexed`: the image, the kept patterns) may be found turned
    into: each must be ignored whole, never trusted, never a hang."""
    return {
        "empty": lambda: b"",
        "truncated": lambda: data[: len(data) // 2],
        "garbage": lambda: os.urandom(4096),
        "other interpreter": lambda: data[:4] + b"\x00\x00\r\n" + data[8:],
        "huge index": lambda: data[:8] + (1 << 40).to_bytes(8, "little") + data[16:],
    }


def _index(data: bytes) -> dict[str, tuple[object, ...]]:
    import marshal

    found: dict[str, tuple[object, ...]] = marshal.loads(data[16 : 16 + int.from_bytes(data[8:16], "little")])
    return found


@pytest.mark.parametrize("damage", ["empty", "truncated", "garbage", "other interpreter", "bad index", "huge index",
                                    "code past the end", "entries of another shape", "a path out", "fifo"])  # fmt: skip
def test_a_damaged_image_is_ignored_and_written_again(tmp_path: Path, damage: str) -> None:
    site = _copy(tmp_path)
    env = _env(tmp_path)
    _run(site, env, "list")
    image = _image(site)
    data = image.read_bytes()
    index = _index(data)
    if damage == "fifo":  # a file that would block its reader: the command must not wait on it
        image.unlink()
        os.mkfifo(image)
    else:
        image.write_bytes({
            **damaged_files(data),
            "bad index": lambda: data[:16] + b"\xff" * 64 + data[80:],
            "code past the end": lambda: _forged(data, {n: (*e[:4], e[4], 1 << 40) for n, e in index.items()}),
            "entries of another shape": lambda: _forged(data, {n: list(e) for n, e in index.items()}),
            "a path out": lambda: _forged(data, {n: ("/etc/" + str(e[0]), *e[1:]) for n, e in index.items()}),
        }[damage]())  # fmt: skip
    report = _probe(site, env)  # answers all the same (the probe's timeout bounds a hang)
    if damage != "truncated":  # (half an image still holds the index and the first modules' code)
        assert _from_image(report) == set()
    if damage == "fifo":
        image.unlink()
    _run(site, env, "list")
    assert _from_image(_probe(site, env)), "the image was not written again"


def test_no_image_where_bytecode_is_not_written_or_it_is_turned_off(tmp_path: Path) -> None:
    site = _copy(tmp_path)
    _run(site, _env(tmp_path, PYTHONDONTWRITEBYTECODE="1"), "list")
    assert not _image(site).exists()
    _run(site, _env(tmp_path, WHEYPOINT_IMAGE="off"), "list")
    assert not _image(site).exists()
    blocked = _copy(tmp_path, "blocked")
    (blocked / "wheypoint" / "__pycache__").write_text("not a folder")  # where the image would go: a file
    _run(blocked, _env(tmp_path), "list")  # the command still answers
    assert (blocked / "wheypoint" / "__pycache__").read_text() == "not a folder"
    _run(site, _env(tmp_path), "list")
    assert _from_image(_probe(site, _env(tmp_path, WHEYPOINT_IMAGE="off"))) == set()


def test_a_copied_install_reads_its_own_files(tmp_path: Path) -> None:
    site = _copy(tmp_path)
    env = _env(tmp_path)
    _run(site, env, "list")
    moved = tmp_path / "moved"
    shutil.copytree(site, moved, copy_function=shutil.copy2)  # sizes and times kept, image and all
    shutil.rmtree(site)
    report = _probe(moved, env)
    files = report["files"]
    assert isinstance(files, dict) and _from_image(report)
    assert all(str(path).startswith(str(moved)) for path in files.values()), files
