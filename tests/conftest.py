"""Shared fixtures: an isolated store home, real git repositories, and a CLI runner in a subprocess."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest
from hypothesis import settings

# Shared, noisy machines: a property test is judged by its verdict, never by how long one example took.
settings.register_profile("wheypoint", deadline=None)
settings.load_profile("wheypoint")

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def missing(message: str) -> NoReturn:
    """Something a test needs is not on this machine: skip with the reason, but fail under CI, where it must be."""
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def shared_path(*parts: str) -> Path:
    """A path under ../shared; skips when it is absent, but fails under CI, where it must exist."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        missing(f"{path} is absent: these tests need the project's shared/ folder beside the checkout")
    return path


def node_program() -> str:
    """Node.js, which runs the OpenCode plugin (the CI machines have Node.js 20)."""
    import shutil

    return shutil.which("node") or missing("node is not installed: the OpenCode plugin cannot be run here")


@dataclass
class Reply:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)


def reap(process: subprocess.Popen[bytes]) -> None:
    """Kill a server process a test started if it is still running, wait for it, and close its pipes."""
    if process.poll() is None:
        process.kill()
        process.wait()
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True)
    return done.stdout.strip()


def make_repo(path: Path, files: dict[str, str] | None = None, remote: str | None = None) -> Path:
    """A real git repository with one commit of `files`."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "test@example.invalid")
    git(path, "config", "user.name", "test")
    for name, text in (files or {"README.md": "hello\n"}).items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        git(path, "add", name)
    git(path, "commit", "-q", "-m", "initial")
    if remote:
        git(path, "remote", "add", "origin", remote)
    return path


Runner = Callable[..., Reply]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


ROOT = Path(__file__).resolve().parents[1]
# The interpreter itself, outside any venv: what runs the single-file runtime, as on a machine with nothing installed.
BASE_PYTHON: str = getattr(sys, "_base_executable", None) or sys.executable
RUNTIMES = ("package", "pyz")


# What the runtime (and the git it runs) reads to find a store, a home, a session, a harness or a config file. A test
# run from a developer's shell or inside an agent's session must see none of the developer's: `hermetic_environment`
# removes them all before the first test, and tests/test_hermetic.py fails when the runtime reads one not covered here.
SCRUBBED_PREFIXES = ("WHEYPOINT_", "XDG_", "CLAUDE", "CODEX", "GEMINI", "OPENCODE", "GIT_CONFIG")
SCRUBBED_NAMES = frozenset(("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_NAMESPACE",
                            "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
                            "GIT_CEILING_DIRECTORIES"))  # fmt: skip
# The suite's own knobs, which the runtime never reads: the PostgreSQL server, the e2e CLIs' cache, the fuzz budget.
TEST_KNOBS = ("WHEYPOINT_TEST_", "WHEYPOINT_E2E_", "WHEYPOINT_FUZZ_")


def scrubbed(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` without a variable that points the runtime at a store, home, session or config of the developer's."""

    def kept(name: str) -> bool:
        return name.startswith(TEST_KNOBS) or not (name.startswith(SCRUBBED_PREFIXES) or name in SCRUBBED_NAMES)

    return {name: value for name, value in environ.items() if kept(name)}


@pytest.fixture(scope="session", autouse=True)
def hermetic_environment(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every test runs without the developer's store, harness and XDG variables (scrubbed), with the suite's own
    XDG cache, so the pyz runs unpack into a scratch folder, never the user's ~/.cache; that folder."""
    kept = scrubbed(os.environ)
    os.environ.clear()
    os.environ.update(kept)
    folder = tmp_path_factory.mktemp("xdg-cache")
    os.environ["XDG_CACHE_HOME"] = str(folder)
    return folder


@pytest.fixture(scope="session")
def private_cache(hermetic_environment: Path) -> Path:
    """The suite's own XDG cache (the old name of what `hermetic_environment` sets up)."""
    return hermetic_environment


@pytest.fixture(scope="session")
def pyz(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The single-file runtime, built once per test session by tools/build_pyz.py from this checkout's sources."""
    out = tmp_path_factory.mktemp("pyz") / "wheypoint.pyz"
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "build_pyz.py"), "--out", str(out)],
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0 and json.loads(done.stdout)["ok"] is True, done.stdout + done.stderr
    return out


def runtime_argv(runtime: str, request: pytest.FixtureRequest) -> list[str]:
    """How a runtime starts wheypoint: the installed package, or the pyz on a bare isolated interpreter."""
    if runtime == "pyz":
        return [BASE_PYTHON, "-I", str(request.getfixturevalue("pyz"))]
    return [sys.executable, "-m", "wheypoint"]


# What a harness exports to the commands it runs (and where it keeps sessions): a test run from inside an agent
# session must not see that session, nor the user's own.
HARNESS_VARIABLES = frozenset(("CLAUDE_CODE_SESSION_ID", "CLAUDECODE", "CODEX_THREAD_ID", "GEMINI_CLI",
                               "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "OPENCODE_DB"))  # fmt: skip


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A PostgreSQL server's URL for a superuser: `$WHEYPOINT_TEST_POSTGRES` (.ci/run starts one and sets it),
    else a throwaway server started here for the session by tools/pg_throwaway.sh, else skip (fail under CI)."""
    given = os.environ.get("WHEYPOINT_TEST_POSTGRES")
    if given:
        yield given
        return
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="wheypoint-pg-")  # under /tmp: the postgres user must reach it when root
    script = str(ROOT / "tools" / "pg_throwaway.sh")
    done = subprocess.run(["bash", script, "start", folder], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PG_FSYNC": "off"}, check=False)  # fmt: skip
    if done.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        missing(f"no PostgreSQL server could be started ({done.stderr.strip()[-300:]}): install PostgreSQL, or set "
                "WHEYPOINT_TEST_POSTGRES to a superuser's URL")  # fmt: skip
    try:
        yield done.stdout.strip()
    finally:
        subprocess.run(["bash", script, "stop", folder], capture_output=True, timeout=120, check=False)
        shutil.rmtree(folder, ignore_errors=True)


def fresh_database(server: str, name: str) -> str:
    """A new empty database on the server, and its URL."""
    import psycopg

    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    head, _, tail = server.rpartition("/")
    return f"{head}/{name}" + ("?" + tail.partition("?")[2] if "?" in tail else "")


@pytest.fixture
def postgres_url(postgres_server: str, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh database for this test on the session's server, dropped afterwards."""
    import hashlib

    name = "t_" + hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:16]
    url = fresh_database(postgres_server, name)
    yield url
    import psycopg

    with psycopg.connect(postgres_server, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


BACKENDS = ("sqlite", "postgresql")
Query = Callable[..., list[tuple[Any, ...]]]


@dataclass(frozen=True)
class Place:
    """Where the real-process tests (concurrency, crash) run: the store's home, the folder, and the backend."""

    home: Path
    cwd: Path
    store: str | None  # the PostgreSQL database's URL; None: the SQLite file under `home`


def place_env(place: Place, project: str = "testproj") -> dict[str, str]:
    """The environment of a wheypoint process at `place`: its store, and a fixed project key."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_")}
    env.update(WHEYPOINT_HOME=str(place.home), WHEYPOINT_PROJECT=project)
    if place.store:
        env["WHEYPOINT_STORE"] = place.store
    return env


@contextlib.contextmanager
def store_tables(place: Place) -> Iterator[Query]:
    """SQL (`?` placeholders) on the store's own tables, through the backend's driver rather than wheypoint's reads:
    both backends keep the same tables and columns, so one query checks either."""
    if place.store is None:
        # mode=rw: a store the test expects but that was never made fails here instead of being created empty.
        conn: Any = sqlite3.connect(f"{(place.home / 'store.sqlite3').as_uri()}?mode=rw", uri=True)
    else:
        import psycopg

        # Not named like wheypoint's own sessions, which the crash tests look for on the server.
        conn = psycopg.connect(place.store, autocommit=True, application_name="wheypoint-tests")
    try:
        yield lambda sql, *args: conn.execute(sql if place.store is None else sql.replace("?", "%s"), args).fetchall()
    finally:
        conn.close()


@pytest.fixture
def store_url() -> str | None:
    """The store the CLI runs against: None is the default SQLite file under the test's home. A module that
    runs its tests on both backends overrides this with `both_backends` (see test_find_and_trust.py)."""
    return None


def both_backends(request: pytest.FixtureRequest) -> str | None:
    """For a module's `store_url` override with params=BACKENDS: None (SQLite) or a fresh PostgreSQL database."""
    return None if request.param == "sqlite" else str(request.getfixturevalue("postgres_url"))


@pytest.fixture(params=RUNTIMES)
def wp(request: pytest.FixtureRequest, home: Path, tmp_path: Path, store_url: str | None) -> Runner:
    """Run wheypoint ARGS in a subprocess with an isolated store, once per runtime (package, then pyz)."""
    program = runtime_argv(request.param, request)
    if store_url and request.param == "pyz":
        # The pyz on an interpreter that has the PostgreSQL driver (on a bare one it refuses: test_postgres.py).
        program = [sys.executable, *program[2:]]

    def run(*args: str, cwd: Path | None = None, stdin: str | bytes | None = None,
            env: dict[str, str] | None = None) -> Reply:  # fmt: skip
        environ = {k: v for k, v in os.environ.items() if not k.startswith("WHEYPOINT_") and k not in HARNESS_VARIABLES}
        environ["WHEYPOINT_HOME"] = str(home)
        if store_url:
            environ["WHEYPOINT_STORE"] = store_url
        environ.update(env or {})
        data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
        done = subprocess.run(
            [*program, *args], cwd=cwd or tmp_path, input=data,
            capture_output=True, env=environ, timeout=60, check=False,
        )  # fmt: skip
        return Reply(done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8"))

    return run
