"""Schema evolution as an ordered list: each backend keeps one, and a function's place in it is its version.

A migration is a function registered with its list's decorator; the first is version 1, and its name must be
unique in the list. Never edit, rename or reorder a released migration: add a new one at the end. Each
backend keeps the version its store has reached and runs the missing ones, with that version, in one
transaction, so a crash leaves the schema at one version.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    F = TypeVar("F", bound=Callable[..., Any])


def registrar(steps: list[tuple[str, Any]]) -> Callable[[F], F]:
    """The decorator that appends a function to `steps`; a name registered twice is a mistake, refused at import."""

    def migration(fn: F) -> F:
        name = fn.__name__
        if any(known == name for known, _ in steps):
            raise ValueError(f"a migration named {name!r} is already registered")
        steps.append((name, fn))
        return fn

    return migration
