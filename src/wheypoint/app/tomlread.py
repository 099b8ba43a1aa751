"""A TOML file read for what doctor needs of it: tomllib where Python has it (3.11+), else a small strict reader.

The reader (for Python 3.10) takes the TOML that tools write: tables and arrays of tables with bare, quoted
and dotted keys; basic and literal strings, also multi-line; integers, floats, booleans, dates and times (kept
as their text); arrays and inline tables. Whatever it cannot read is a `TomlError` naming the line, never a
wrong value: a caller reports the file as unreadable, as it does when tomllib refuses it.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_TOML_BYTES = 4 * 1024 * 1024
_BARE = re.compile(r"[A-Za-z0-9_-]+")
_NUMBER = re.compile(r"[+-]?(0x[0-9A-Fa-f_]+|0o[0-7_]+|0b[01_]+|inf|nan|[0-9_]+(\.[0-9_]+)?([eE][+-]?[0-9_]+)?)")
_DATE = re.compile(
    r"\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?([Zz]|[+-]\d{2}:\d{2})?|\d{2}:\d{2}:\d{2}(\.\d+)?"
)
_LINE_END = re.compile(r"[ \t]*\r?\n[ \t\r\n]*")
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\", "e": "\x1b"}


class TomlError(ValueError):
    """A TOML text this reader does not take, with the line it stopped at."""


def loads(text: str) -> dict[str, Any]:
    """The document as a dict: tomllib's reading where it exists, else this module's."""
    import importlib

    try:
        tomllib: Any = importlib.import_module("tomllib")  # 3.11+; the type checker targets 3.10
    except ImportError:
        return Reader(text).document()
    try:
        document: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TomlError(str(exc)) from None
    return document


def read_file(path: str) -> dict[str, Any] | None:
    """The TOML file at `path`, None when there is none; TomlError when it cannot be read or is not TOML."""
    try:
        from wheypoint.model.regular import open_regular

        with open_regular(path) as handle:  # a FIFO or device in its place is refused, never waited on
            raw = handle.read(MAX_TOML_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise TomlError(f"cannot read it: {exc.strerror or exc}") from None
    if len(raw) > MAX_TOML_BYTES:
        raise TomlError(f"it is over {MAX_TOML_BYTES} bytes")
    try:
        return loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise TomlError(f"it is not UTF-8 ({exc})") from None
    except RecursionError:
        raise TomlError("it nests too deeply") from None


class Reader:
    """One pass over a TOML text (see the module's docstring for what it takes)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def fail(self, what: str) -> TomlError:
        return TomlError(f"line {self.text.count(chr(10), 0, self.at) + 1}: {what}")

    def document(self) -> dict[str, Any]:
        root: dict[str, Any] = {}
        table = root
        while True:
            self.skip_blank_lines()
            if self.at >= len(self.text):
                return root
            if self.text.startswith("[[", self.at):
                self.at += 2
                keys = self.key()
                self.expect("]]")
                parent = self.walk(root, keys[:-1])
                items = parent.setdefault(keys[-1], [])
                if not isinstance(items, list):
                    raise self.fail(f"{'.'.join(keys)} is not an array of tables")
                table = {}
                items.append(table)
            elif self.text.startswith("[", self.at):
                self.at += 1
                keys = self.key()
                self.expect("]")
                table = self.walk(root, keys)
            else:
                keys = self.key()
                self.expect("=")
                value = self.value()
                place = self.walk(table, keys[:-1])
                if keys[-1] in place:
                    raise self.fail(f"{'.'.join(keys)} is defined twice")
                place[keys[-1]] = value
            self.end_of_line()

    def walk(self, table: dict[str, Any], keys: list[str]) -> dict[str, Any]:
        for key in keys:
            found = table.setdefault(key, {})
            if isinstance(found, list) and found and isinstance(found[-1], dict):
                found = found[-1]
            if not isinstance(found, dict):
                raise self.fail(f"{key} is not a table")
            table = found
        return table

    def skip_spaces(self) -> None:
        while self.at < len(self.text) and self.text[self.at] in " \t":
            self.at += 1

    def skip_blank_lines(self) -> None:
        while True:
            self.skip_spaces()
            if self.text.startswith("#", self.at):
                end = self.text.find("\n", self.at)
                self.at = len(self.text) if end < 0 else end
            if self.text.startswith("\r\n", self.at):
                self.at += 2
            elif self.text.startswith("\n", self.at):
                self.at += 1
            else:
                return

    def end_of_line(self) -> None:
        self.skip_spaces()
        if self.text.startswith("#", self.at):
            end = self.text.find("\n", self.at)
            self.at = len(self.text) if end < 0 else end
        if self.at < len(self.text) and not self.text.startswith(("\n", "\r\n"), self.at):
            raise self.fail("expected the end of the line")

    def expect(self, token: str) -> None:
        self.skip_spaces()
        if not self.text.startswith(token, self.at):
            raise self.fail(f"expected {token!r}")
        self.at += len(token)

    def key(self) -> list[str]:
        keys = []
        while True:
            self.skip_spaces()
            char = self.text[self.at : self.at + 1]
            if char == '"':
                keys.append(self.basic_string())
            elif char == "'":
                keys.append(self.literal_string())
            else:
                match = _BARE.match(self.text, self.at)
                if not match:
                    raise self.fail("expected a key")
                keys.append(match.group())
                self.at = match.end()
            self.skip_spaces()
            if not self.text.startswith(".", self.at):
                return keys
            self.at += 1

    def value(self) -> Any:
        self.skip_spaces()
        text, at = self.text, self.at
        if text.startswith('"""', at):
            return self.multiline('"""')
        if text.startswith("'''", at):
            return self.multiline("'''")
        if text.startswith('"', at):
            return self.basic_string()
        if text.startswith("'", at):
            return self.literal_string()
        if text.startswith("[", at):
            return self.array()
        if text.startswith("{", at):
            return self.inline_table()
        for word, meaning in (("true", True), ("false", False)):
            if text.startswith(word, at):
                self.at += len(word)
                return meaning
        date = _DATE.match(text, at)
        if date:
            self.at = date.end()
            return date.group()
        number = _NUMBER.match(text, at)
        if number:
            self.at = number.end()
            body = number.group().replace("_", "")
            try:
                return int(body, 0) if not any(c in body.lower() for c in ".en") or "0x" in body else float(body)
            except ValueError:
                raise self.fail(f"{number.group()!r} is not a number") from None
        raise self.fail("expected a value")

    def basic_string(self) -> str:
        self.at += 1
        out: list[str] = []
        while True:
            if self.at >= len(self.text) or self.text[self.at] == "\n":
                raise self.fail("a string does not end on its line")
            char = self.text[self.at]
            self.at += 1
            if char == '"':
                return "".join(out)
            if char == "\\":
                out.append(self.escape())
            else:
                out.append(char)

    def escape(self) -> str:
        char = self.text[self.at : self.at + 1]
        self.at += 1
        if char in _ESCAPES:
            return _ESCAPES[char]
        width = {"u": 4, "U": 8, "x": 2}.get(char)
        digits = self.text[self.at : self.at + width] if width else ""
        if not width or len(digits) != width or not all(c in "0123456789abcdefABCDEF" for c in digits):
            raise self.fail(f"unknown escape \\{char}")
        self.at += width
        return chr(int(digits, 16))

    def literal_string(self) -> str:
        end = self.text.find("'", self.at + 1)
        if end < 0 or "\n" in self.text[self.at : end]:
            raise self.fail("a literal string does not end on its line")
        value = self.text[self.at + 1 : end]
        self.at = end + 1
        return value

    def multiline(self, quote: str) -> str:
        self.at += 3
        for newline in ("\r\n", "\n"):  # a newline right after the opening quotes is not part of the string
            if self.text.startswith(newline, self.at):
                self.at += len(newline)
                break
        out: list[str] = []
        while True:
            if self.at >= len(self.text):
                raise self.fail("a multi-line string does not end")
            if self.text.startswith(quote, self.at):
                extra = 0  # up to two more quotes are the string's own last characters
                while extra < 2 and self.text.startswith(quote[0], self.at + 3 + extra):
                    extra += 1
                self.at += 3 + extra
                return "".join(out) + quote[0] * extra
            char = self.text[self.at]
            self.at += 1
            if char != "\\" or quote == "'''":
                out.append(char)
                continue
            joined = _LINE_END.match(self.text, self.at)
            if joined:  # a line-ending backslash joins the lines, with the blanks around the break
                self.at = joined.end()
            else:
                out.append(self.escape())

    def array(self) -> list[Any]:
        self.at += 1
        items: list[Any] = []
        while True:
            self.skip_blank_lines()
            if self.text.startswith("]", self.at):
                self.at += 1
                return items
            items.append(self.value())
            self.skip_blank_lines()
            if self.text.startswith(",", self.at):
                self.at += 1
            elif not self.text.startswith("]", self.at):
                raise self.fail("expected , or ] in an array")

    def inline_table(self) -> dict[str, Any]:
        self.at += 1
        table: dict[str, Any] = {}
        self.skip_spaces()
        if self.text.startswith("}", self.at):
            self.at += 1
            return table
        while True:
            keys = self.key()
            self.expect("=")
            place = self.walk(table, keys[:-1])
            place[keys[-1]] = self.value()
            self.skip_spaces()
            if self.text.startswith("}", self.at):
                self.at += 1
                return table
            self.expect(",")
