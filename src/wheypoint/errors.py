"""Refusals: the coded, structured way every command says no."""

from __future__ import annotations

from typing import Any, NamedTuple

# NamedTuple and a plain class rather than dataclasses: importing dataclasses pulls in inspect, which
# costs several milliseconds on every start of the read commands.


class Problem(NamedTuple):
    """One thing wrong with an input: a stable code, the JSON path it sits at, and a message."""

    code: str
    path: str
    message: str

    def as_json(self) -> dict[str, str]:
        return {"code": self.code, "path": self.path, "message": self.message}


GATING, ADVISORY = "gating", "advisory"


class Finding(NamedTuple):
    """Something seen about a handoff: a stable code, `gating` (a person must look) or `advisory`, a sentence."""

    code: str
    severity: str
    detail: str

    def as_json(self) -> dict[str, str]:
        return {"code": self.code, "severity": self.severity, "detail": self.detail}


class Refusal(Exception):
    """A command refused its input. Exit code 1 (2 for usage); the store is left untouched."""

    def __init__(
        self,
        code: str,
        message: str,
        problems: list[Problem] | None = None,
        details: dict[str, Any] | None = None,
        exit_code: int = 1,
    ) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.problems = problems or []
        self.details = details or {}
        self.exit_code = exit_code

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def as_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.problems:
            error["problems"] = [p.as_json() for p in self.problems]
        error.update(self.details)
        return error


def usage(message: str) -> Refusal:
    """A refusal for a malformed command line (exit 2)."""
    return Refusal("usage", message, exit_code=2)
