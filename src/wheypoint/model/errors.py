"""Refusals: the coded, structured way every command says no."""

from __future__ import annotations

from wheypoint.model.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


# NamedTuple and a plain class rather than dataclasses: importing dataclasses pulls in inspect, which
# costs several milliseconds on every start of the read commands.


class Problem(Record):
    """One thing wrong with an input: a stable code, the JSON path it sits at, and a message."""

    code: str
    path: str
    message: str

    def as_json(self) -> dict[str, str]:
        return {"code": self.code, "path": self.path, "message": self.message}


GATING, ADVISORY = "gating", "advisory"


class Finding(Record):
    """Something seen about a handoff: a stable code, `gating` (a person must look) or `advisory`, a sentence."""

    code: str
    severity: str
    detail: str

    def as_json(self) -> dict[str, str]:
        return {"code": self.code, "severity": self.severity, "detail": self.detail}


class Refusal(Exception):
    """A command refused its input; the store is left untouched.

    Below the front doors a refusal is data: a stable code, a message, and two facts a front door maps
    to its own terms. `usage` says the caller asked wrongly (the command line answers it with exit 2,
    anything else with exit 1); `parameter` names the input at fault by its parameter name, and then the
    message is what that parameter expects, so the command line can say `--limit takes ...` while
    another front door says `limit takes ...`.
    """

    def __init__(
        self,
        code: str,
        message: str,
        problems: list[Problem] | None = None,
        details: dict[str, Any] | None = None,
        *,
        usage: bool = False,
        parameter: str | None = None,
    ) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.problems = problems or []
        self.details = details or {}
        self.usage = usage
        self.parameter = parameter

    def __str__(self) -> str:
        return f"{self.code}: {self.describe()}"

    def describe(self, spell: Callable[[str], str] = str) -> str:
        """The message, led by the parameter's name as `spell` writes it (a flag, a field name...)."""
        return f"{spell(self.parameter)} {self.message}" if self.parameter else self.message

    def as_json(self, spell: Callable[[str], str] = str) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.describe(spell)}
        if self.parameter:
            error["parameter"] = self.parameter
        if self.problems:
            error["problems"] = [p.as_json() for p in self.problems]
        error.update(self.details)
        return error


def bad_parameter(parameter: str, expectation: str, code: str = "usage") -> Refusal:
    """A caller's parameter that does not fit: `expectation` says what it takes (`takes a whole number`)."""
    return Refusal(code, expectation, usage=True, parameter=parameter)
