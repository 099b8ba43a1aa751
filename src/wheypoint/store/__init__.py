"""The store layer: the one narrow interface to durable records, and the backends behind it.

Imports only the model. `open_store(location)` is the one place a backend is chosen, by the scheme of
its URL, and the chosen backend is imported only then: a command never loads a driver it does not use.
The interface (`Store`, in `base`) is for the type checker; the rows it hands back are in `rows`.
"""

from __future__ import annotations

import os

from wheypoint.model.errors import Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from wheypoint.store.base import Store

SCHEMES = ("sqlite", "postgresql", "postgres")  # each backend's module is imported only when its scheme is named


def shown(location: str | os.PathLike[str]) -> str:
    """A store's location as replies show it: a PostgreSQL URL without its password, a path as it is."""
    location = os.fspath(location)
    if location.lower().startswith(("postgresql:", "postgres:")):
        from wheypoint.store.postgres.url import redacted

        return redacted(location)
    return location


def open_store(
    location: str | os.PathLike[str], *, create: bool, kept: bool = False, exit_closes: bool = False
) -> Store:
    """Open the store at `location`: `sqlite:///path`, `sqlite:path`, a plain file path, or `postgresql://...`.

    A reader (`create=False`) of a store that does not exist yet sees an empty one; only writes create it.
    `kept`: the store of a PostgreSQL URL takes a connection an earlier kept store of this process left open, and
    leaves its own open for the next one when closed (a process that serves many calls: `serve`, `mcp`). A SQLite
    file opens in well under a millisecond, and its connections belong to one thread, so it ignores `kept`.
    `exit_closes`: the process ends with `os._exit` once its command is answered (the `wheypoint` program), so a
    SQLite writer may leave its connection for the exit to drop rather than checkpoint at close (sqlite/backend.py).
    """
    scheme, target = _parsed(location)
    if scheme in ("postgresql", "postgres"):
        from wheypoint.store.postgres.backend import PostgresStore

        return PostgresStore.open(target, create=create, kept=kept)
    from wheypoint.store.sqlite.backend import SqliteStore

    return SqliteStore.open(target, create=create, exit_closes=exit_closes)


def exists(location: str | os.PathLike[str]) -> bool:
    """Whether the store at `location` is there already, so that opening it to write creates nothing: a SQLite
    store's regular file (anything else there is left to a reader's open, which refuses it as before), or a
    PostgreSQL server's store (whose tables a writer's connection checks as it opens)."""
    scheme, target = _parsed(location)
    return scheme != "sqlite" or os.path.isfile(target)


def _parsed(location: str | os.PathLike[str]) -> tuple[str, str]:
    """(scheme, what its backend opens: the URL, or a SQLite file's path), refusing a scheme no backend has."""
    location = os.fspath(location)
    scheme, sep, rest = location.partition(":")
    if not sep or "/" in scheme or "\\" in scheme or len(scheme) == 1:  # a path (or a Windows drive letter)
        scheme, rest = "sqlite", location
    scheme = scheme.lower()
    if scheme not in SCHEMES:
        known = ", ".join(f"{name}:" for name in SCHEMES)
        raise Refusal("store-url-invalid", f"unknown store scheme {scheme!r}; known: {known} or a file path",
                      details={"parameter": "store"})  # fmt: skip
    if scheme != "sqlite":
        return scheme, location
    path = rest[2:] if rest.startswith("//") else rest  # sqlite:///abs/path keeps its leading slash
    return scheme, os.path.expanduser(path)
