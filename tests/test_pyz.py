"""The single-file runtime: tools/build_pyz.py builds it reproducibly, and it runs on a bare isolated interpreter."""

from __future__ import annotations

import ast
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest

from conftest import BASE_PYTHON, ROOT, Runner, make_repo

BUILDER = ROOT / "tools" / "build_pyz.py"
SRC = ROOT / "src" / "wheypoint"


def build(out: Path, *, epoch: str | None = None, umask: int = 0o022, src: Path | None = None) -> dict[str, Any]:
    """Run the builder as CI does, in a fresh process; returns its one-line JSON reply."""
    env = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
    if epoch is not None:
        env["SOURCE_DATE_EPOCH"] = epoch
    argv = [sys.executable, str(BUILDER), "--out", str(out), *(["--src", str(src)] if src else [])]
    done = subprocess.run(argv, env=env, umask=umask, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("\n") == 1, done.stdout
    reply: dict[str, Any] = json.loads(done.stdout)
    assert reply["ok"] is True and reply["path"] == str(out.resolve())
    assert reply["sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    return reply


def run_pyz(pyz: Path, *args: str, cwd: Path, home: Path) -> dict[str, Any]:
    """`python3 -I wheypoint.pyz ARGS` on the interpreter outside the venv, with a minimal environment."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "WHEYPOINT_HOME": str(home)}
    done = subprocess.run([BASE_PYTHON, "-I", str(pyz), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    reply: dict[str, Any] = json.loads(done.stdout)
    assert reply["ok"] is True, reply
    return reply


def packed(pyz: Path) -> dict[str, bytes]:
    """The package's files as the archive packs them (its member package.zip), by archive name."""
    with zipfile.ZipFile(pyz) as archive, zipfile.ZipFile(io.BytesIO(archive.read("package.zip"))) as package:
        assert all(info.compress_type == zipfile.ZIP_STORED for info in package.infolist())
        return {info.filename: package.read(info) for info in package.infolist()}


def source_copy(tmp_path: Path) -> Path:
    """A copy of the package to build from, so a test may change it without touching the checkout."""
    copy = tmp_path / "src" / "wheypoint"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


@pytest.mark.parametrize("epoch", [None, "1700000000"], ids=["no-epoch", "epoch"])
def test_two_builds_of_one_tree_are_byte_identical(tmp_path: Path, epoch: str | None) -> None:
    first = build(tmp_path / "one" / "wheypoint.pyz", epoch=epoch)
    second = build(tmp_path / "two" / "other-name.pyz", epoch=epoch, umask=0o077)
    assert first["sha256"] == second["sha256"] and first["source_digest"] == second["source_digest"]
    assert (tmp_path / "one" / "wheypoint.pyz").read_bytes() == (tmp_path / "two" / "other-name.pyz").read_bytes()
    assert first["packed"] == second["packed"] > 10
    for path in (tmp_path / "one" / "wheypoint.pyz", tmp_path / "two" / "other-name.pyz"):
        assert path.stat().st_mode & 0o777 == 0o755  # whatever the umask
    assert not [p.name for p in (tmp_path / "one").iterdir() if p.name != "wheypoint.pyz"]  # no temp file left


def test_the_build_time_comes_from_source_date_epoch_clamped_to_1980(tmp_path: Path) -> None:
    expected = {None: (1980, 1, 1, 0, 0, 0), "0": (1980, 1, 1, 0, 0, 0), "1700000001": time.gmtime(1700000000)[:6]}
    digests = {}
    for epoch, when in expected.items():
        out = tmp_path / f"{epoch}.pyz"
        digests[epoch] = build(out, epoch=epoch)["sha256"]
        with zipfile.ZipFile(out) as archive:
            assert {info.date_time for info in archive.infolist()} == {when}  # zip keeps even seconds
            with zipfile.ZipFile(io.BytesIO(archive.read("package.zip"))) as package:
                assert {info.date_time for info in package.infolist()} == {when}
    assert digests[None] == digests["0"] != digests["1700000001"]
    done = subprocess.run([sys.executable, str(BUILDER), "--out", str(tmp_path / "bad.pyz")], capture_output=True,
                          text=True, env={**os.environ, "SOURCE_DATE_EPOCH": "yesterday"}, check=False)  # fmt: skip
    assert done.returncode != 0 and "SOURCE_DATE_EPOCH" in done.stderr and not (tmp_path / "bad.pyz").exists()


def test_the_archive_layout(tmp_path: Path) -> None:
    src = source_copy(tmp_path)
    (src / "cli" / "table.json").write_text("{}\n")  # package data is packed beside the sources
    expected = {f"wheypoint/{p.relative_to(src).as_posix()}" for p in src.rglob("*") if p.is_file()}
    (src / "__pycache__").mkdir()
    (src / "__pycache__" / "main.cpython-311.pyc").write_bytes(b"\x00bytecode")
    (src / "cli" / "stray.pyc").write_bytes(b"\x00bytecode")
    (src / ".main.py.swp").write_bytes(b"editor")
    (src / "_build.py").write_text('SOURCE_DIGEST = "sha256:stale"\n')  # the generated one replaces it
    out = tmp_path / "wheypoint.pyz"
    reply = build(out, src=src)
    data = out.read_bytes()
    assert data.startswith(b"#!/usr/bin/env python3\nPK\x03\x04")
    with zipfile.ZipFile(out) as archive:
        infos = archive.infolist()
        names = [info.filename for info in infos]
        # CPython reads the archive's whole table of contents before __main__.py runs: it names three members,
        # and the package is packed in one of them.
        assert names == ["__main__.py", "package.zip", "pyz_payload.py"] and reply["entries"] == 3
        assert all(info.compress_type == zipfile.ZIP_STORED for info in infos)
        assert {info.external_attr for info in infos} == {0o644 << 16} and {i.create_system for i in infos} == {3}
        main = archive.read("__main__.py")
        assert b"wheypoint.cli.entry import run" in main
        # Every start compiles __main__.py afresh, twice (zipimport keeps no bytecode, and names the module's file
        # by compiling it), at a cost that grows with its syntax tree: it holds only the choice of the copy (401
        # nodes; 582 when it held the unpacking too), and the first run's unpacking is a module of its own.
        assert sum(1 for _ in ast.walk(ast.parse(main))) < 450 and b"def unpack(" not in main
        assert b"def unpack(" in archive.read("pyz_payload.py")
    package = packed(out)
    names = list(package)
    assert names == sorted(names) and len(names) == reply["packed"]
    assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".swp"))]
    assert set(names) - {"wheypoint/_build.py"} == expected and "wheypoint/cli/table.json" in names
    build_module = package["wheypoint/_build.py"].decode()
    assert f'SOURCE_DIGEST = "{reply["source_digest"]}"' in build_module and "stale" not in build_module


def test_each_runtime_of_the_wp_runner_runs_its_own_code(wp: Runner, request: pytest.FixtureRequest) -> None:
    """The suite's second pass really runs the archive: --version names the runtime it came from."""
    done = wp("--version")
    assert done.code == 0, done.stdout + done.stderr
    assert done.json["runtime"] == request.node.callspec.params["wp"]


def test_wheypoint_imports_from_inside_the_archive(pyz: Path, tmp_path: Path) -> None:
    # When no copy can be used, every wheypoint module comes out of the archive itself: `__file__` inside it,
    # reading its own sources through importlib.resources gives the digest fixed at build time, `inspect` and
    # tracebacks show the source lines, and a packed data file reads as on disk.
    probe = ("import json, sys, inspect, traceback; sys.path.insert(0, sys.argv[1]); import pyz_payload as p; "
             "p.import_from_archive(sys.argv[1]); import wheypoint, wheypoint.cli.main, wheypoint._build as b; "
             "from importlib.resources import files; from wheypoint.model.canonical import canonical_bytes\n"
             "try: canonical_bytes({1: 2})\nexcept Exception: shown = traceback.format_exc()\n"
             "print(json.dumps([[m.__file__ for m in (wheypoint, wheypoint.cli.main)], b.SOURCE_DIGEST, "
             "wheypoint.source_digest(), inspect.getsource(wheypoint.cli.main.main).split('(')[0], shown, "
             "files('wheypoint.hooks').joinpath('opencode_plugin.ts').read_bytes().decode()]))")  # fmt: skip
    done = subprocess.run([BASE_PYTHON, "-I", "-c", probe, str(pyz)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    files, built, computed, source, shown, data = json.loads(done.stdout)
    assert all(file.startswith(str(pyz) + os.sep) for file in files), files
    assert built == computed and built.startswith("sha256:")
    assert source == "def main" and 'raise CanonicalError("object key is not a string")' in shown
    assert data == (SRC / "hooks" / "opencode_plugin.ts").read_text(encoding="utf-8")
    version = run_pyz(pyz, "--version", cwd=tmp_path, home=tmp_path / "home")
    assert version["runtime"] == "pyz" and version["source_digest"] == built and version["archive"] == str(pyz)


def test_a_pyz_of_changed_sources_runs_the_changed_code(tmp_path: Path) -> None:
    src = source_copy(tmp_path)
    init = src / "__init__.py"
    init.write_text(init.read_text().replace('__version__ = "0.1.0"', '__version__ = "0.1.0+probe"'))
    reply = build(tmp_path / "probe.pyz", src=src)
    version = run_pyz(tmp_path / "probe.pyz", "--version", cwd=tmp_path, home=tmp_path / "home")
    assert version["version"] == "0.1.0+probe" and version["source_digest"] == reply["source_digest"]
    # The package's own computation over the same changed tree (imported from the copy, no site) agrees.
    probe = "import sys; sys.path.insert(0, sys.argv[1]); import wheypoint; print(wheypoint.source_digest())"
    done = subprocess.run([sys.executable, "-S", "-c", probe, str(src.parent)], capture_output=True, text=True,
                          check=True)  # fmt: skip
    assert done.stdout.strip() == reply["source_digest"]
    assert reply["source_digest"] != build(tmp_path / "plain.pyz")["source_digest"]


def test_pyz_and_package_agree_on_the_source_digest(pyz: Path, tmp_path: Path) -> None:
    packaged = subprocess.run([sys.executable, "-m", "wheypoint", "--version"], cwd=tmp_path, capture_output=True,
                              text=True, check=True)  # fmt: skip
    package = json.loads(packaged.stdout)
    archive = run_pyz(pyz, "--version", cwd=tmp_path, home=tmp_path / "home")
    assert package["runtime"] == "package" and archive["runtime"] == "pyz"
    assert package["source_digest"] == archive["source_digest"] and package["source_digest"].startswith("sha256:")
    assert package["version"] == archive["version"] == "0.1.0"
    assert package["python"] == ".".join(map(str, sys.version_info[:3]))


def test_pyz_checkpoints_and_shows_on_a_bare_interpreter(pyz: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "shop", {"retry.py": "a\nb\nc\n"}, remote="git@github.com:Acme/Shop.git")
    home = tmp_path / "home"
    first = run_pyz(pyz, "checkpoint", "retry-backoff", "--orientation", "Backoff is designed.", "--next", "hold",
                    "--decision", "Cap at 30 s.", "--rationale", "The gateway gives up at 45 s.",
                    "--context", "retry.py:2", cwd=repo, home=home)  # fmt: skip
    assert first["revision_number"] == 1 and (home / "store.sqlite3").is_file()
    assert (repo / ".cheese" / "notes" / "retry-backoff.md").is_file()
    second = run_pyz(pyz, "checkpoint", "retry-backoff", "--base", first["revision_id"], "--orientation",
                     "Backoff is built.", "--next", "hold", cwd=repo, home=home)  # fmt: skip
    assert second["revision_number"] == 2 and second["parent_revision_id"] == first["revision_id"]
    shown = run_pyz(pyz, "show", "retry-backoff", "--format", "json", cwd=repo, home=home)
    assert shown["record"]["slug"] == "retry-backoff" and shown["record"]["orientation"] == "Backoff is built."
    assert shown["note"]["state"] == "current"
    assert shown["record"]["revision_id"] == second["revision_id"]


# ---- the unpacked copy (tools/pyz_main.py): the archive runs from a per-digest copy whose bytecode Python caches


def pyz_version(pyz: Path, cwd: Path, **env: str) -> dict[str, Any]:
    """`--version` of the archive with exactly `env` (plus PATH), so the cache folder is the test's to choose."""
    environ = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env}
    done = subprocess.run([BASE_PYTHON, "-I", str(pyz), "--version"], cwd=cwd, env=environ, capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0 and not done.stderr, done.stdout + done.stderr
    reply: dict[str, Any] = json.loads(done.stdout)
    assert reply["runtime"] == "pyz"
    return reply


def test_the_first_run_unpacks_once_and_later_runs_import_the_copy(pyz: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = pyz_version(pyz, tmp_path, HOME=str(tmp_path), XDG_CACHE_HOME=str(cache))
    copy = Path(first["unpacked"])
    assert copy.parent == cache / "wheypoint" and copy.name == "pyz-" + first["source_digest"][7:39]
    assert (cache / "wheypoint").stat().st_mode & 0o777 == 0o700 and copy.stat().st_mode & 0o777 == 0o700
    package = packed(pyz)
    assert all((copy / name).read_bytes() == data for name, data in package.items())
    unpacked = {p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert unpacked == set(package)  # nothing but the package: no __main__.py, no temporary leftovers
    assert [p.name for p in (cache / "wheypoint").iterdir()] == [copy.name]
    assert list(copy.rglob("__pycache__/*.pyc"))  # Python cached the bytecode, which is the point
    # Only a run that unpacks loads the unpacking module: the runs after it never compile it.
    environ = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "XDG_CACHE_HOME": str(cache)}
    later = subprocess.run([BASE_PYTHON, "-I", "-X", "importtime", str(pyz), "--version"], cwd=tmp_path,
                           env=environ, capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert later.returncode == 0 and "| wheypoint.cli.entry" in later.stderr, later.stderr
    assert "pyz_payload" not in later.stderr
    fresh = subprocess.run([BASE_PYTHON, "-I", "-X", "importtime", str(pyz), "--version"], cwd=tmp_path,
                           env={**environ, "XDG_CACHE_HOME": str(tmp_path / "fresh")}, capture_output=True,
                           text=True, timeout=60, check=False)  # fmt: skip
    assert fresh.returncode == 0 and "| pyz_payload" in fresh.stderr, fresh.stderr
    before = {p: p.stat().st_mtime_ns for p in copy.rglob("*.py")}
    again = pyz_version(pyz, tmp_path, HOME=str(tmp_path), XDG_CACHE_HOME=str(cache))
    assert again["unpacked"] == first["unpacked"] and {p: p.stat().st_mtime_ns for p in before} == before
    # Without XDG_CACHE_HOME the copy goes under ~/.cache; WHEYPOINT_PYZ_CACHE picks the folder, or turns it off.
    assert pyz_version(pyz, tmp_path, HOME=str(tmp_path))["unpacked"].startswith(f"{tmp_path}/.cache/wheypoint/pyz-")
    chosen = pyz_version(pyz, tmp_path, HOME=str(tmp_path), WHEYPOINT_PYZ_CACHE=str(tmp_path / "mine"))
    assert chosen["unpacked"].startswith(f"{tmp_path}/mine/pyz-")
    assert pyz_version(pyz, tmp_path, HOME=str(tmp_path), WHEYPOINT_PYZ_CACHE="off")["unpacked"] is None


def test_a_cache_that_cannot_be_written_falls_back_to_the_archive(pyz: Path, tmp_path: Path) -> None:
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("in the way\n")
    reply = pyz_version(pyz, tmp_path, HOME=str(tmp_path), XDG_CACHE_HOME=str(blocked))
    assert reply["unpacked"] is None and blocked.read_text() == "in the way\n"
    # A full checkpoint still works that way, on a bare interpreter.
    repo = make_repo(tmp_path / "shop", {"a.py": "x\n"})
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "XDG_CACHE_HOME": str(blocked),
           "WHEYPOINT_HOME": str(tmp_path / "home")}  # fmt: skip
    done = subprocess.run([BASE_PYTHON, "-I", str(pyz), "checkpoint", "w", "--orientation", "o", "--next", "hold",
                           "--decision", "d", "--rationale", "r"], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0 and json.loads(done.stdout)["revision_number"] == 1, done.stdout + done.stderr


def test_a_damaged_archive_is_refused_with_a_code_and_no_traceback(pyz: Path, tmp_path: Path) -> None:
    with zipfile.ZipFile(pyz) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    package = packed(pyz)
    del package["wheypoint/cli/entry.py"]
    lacking = io.BytesIO()
    with zipfile.ZipFile(lacking, "w") as rebuilt:
        for name, data in package.items():
            rebuilt.writestr(name, data)
    for label, payload in (("unreadable", b"not a zip at all"), ("lacking", lacking.getvalue())):
        broken = tmp_path / f"{label}.pyz"
        with zipfile.ZipFile(broken, "w") as archive:
            for name, data in {**members, "package.zip": payload}.items():
                archive.writestr(name, data)
        for cache in ("off", str(tmp_path / f"cache-{label}")):  # from the archive itself, and through a copy
            env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "WHEYPOINT_PYZ_CACHE": cache}
            done = subprocess.run([BASE_PYTHON, "-I", str(broken), "--version"], cwd=tmp_path, env=env,
                                  capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
            assert done.returncode == 1 and done.stderr == "", (label, cache, done.stderr)
            error = json.loads(done.stdout)["error"]
            assert error["code"] == "runtime-damaged" and str(broken) in error["message"], (label, cache)


def test_a_copy_another_user_could_have_written_is_never_imported(pyz: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = pyz_version(pyz, tmp_path, HOME=str(tmp_path), XDG_CACHE_HOME=str(cache))
    copy = Path(first["unpacked"])
    planted = copy / "wheypoint" / "__init__.py"
    planted.write_text(planted.read_text().replace('__version__ = "0.1.0"', '__version__ = "planted"'))
    shutil.rmtree(copy / "wheypoint" / "__pycache__")
    assert pyz_version(pyz, tmp_path, HOME=str(tmp_path), XDG_CACHE_HOME=str(cache))["version"] == "planted"
    # (the same user may change their own copy, as they may change any file they own; others may not:)
    for loosened in (copy, cache / "wheypoint"):
        loosened.chmod(0o777)
        reply = pyz_version(pyz, tmp_path, HOME=str(tmp_path), XDG_CACHE_HOME=str(cache))
        assert reply["unpacked"] is None and reply["version"] == "0.1.0"
        loosened.chmod(0o700)
    if os.getuid() == 0:  # root can hand the copy to another account, which must make it untrusted too
        os.chown(copy, 65534, 65534)
        reply = pyz_version(pyz, tmp_path, HOME=str(tmp_path), XDG_CACHE_HOME=str(cache))
        assert reply["unpacked"] is None and reply["version"] == "0.1.0"


def test_parallel_first_runs_agree_on_one_complete_copy(pyz: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "XDG_CACHE_HOME": str(cache)}
    runs = [subprocess.Popen([BASE_PYTHON, "-I", str(pyz), "--version"], cwd=tmp_path, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(6)]  # fmt: skip
    replies = []
    for run in runs:
        out, err = run.communicate(timeout=60)
        assert run.returncode == 0 and not err, err
        replies.append(json.loads(out))
    copies = {r["unpacked"] for r in replies}
    assert len(copies) == 1 and None not in copies
    assert [p.name for p in (cache / "wheypoint").iterdir()] == [Path(str(copies.pop())).name]


def test_the_skill_ships_the_build_of_this_tree(tmp_path: Path) -> None:
    """skill/wheypoint/scripts/wheypoint.pyz is kept in git so the skill folder works as copied; it must be current."""
    shipped = ROOT / "skill" / "wheypoint" / "scripts" / "wheypoint.pyz"
    fresh = build(tmp_path / "wheypoint.pyz")
    assert shipped.is_file(), "no skill/wheypoint/scripts/wheypoint.pyz: run python3 tools/build_pyz.py"
    assert hashlib.sha256(shipped.read_bytes()).hexdigest() == fresh["sha256"], (
        "skill/wheypoint/scripts/wheypoint.pyz is not the build of src/: run python3 tools/build_pyz.py and commit it"
    )
    assert os.access(shipped, os.X_OK)
