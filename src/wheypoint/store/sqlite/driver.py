"""The SQLite driver the store runs on: the C module that `sqlite3` wraps, without the wrapper's import cost.

Why. `import sqlite3` loads `sqlite3/__init__.py` and `dbapi2.py`, and `dbapi2` imports `datetime` (its own C
module and a 100 KB Python module) to register adapters for `date` and `datetime` parameters and converters for
declared types: about 2 ms of every command that opens the store (measured as whole processes), for features the
store never uses (it binds text, integers and None, and reads with `detect_types` off). Every class and function
the store uses (`connect`, `Connection`, the exception classes, the `SQLITE_*` constants) is the C module's own
object, which `sqlite3` only re-exports: `_sqlite3.Error is sqlite3.Error`, so an error raised here is the one
any caller catches as `sqlite3.Error`. The module has carried these names since Python 2.5 (CPython and PyPy
alike); an interpreter without it gets `sqlite3` itself.
"""

from __future__ import annotations

__all__ = ["sqlite3"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3 as sqlite3
else:
    try:
        import _sqlite3 as sqlite3
    except ImportError:  # pragma: no cover - an interpreter whose sqlite3 is built otherwise
        import sqlite3
