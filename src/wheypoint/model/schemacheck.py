"""A small JSON Schema (draft 2020-12) checker for the subset wheypoint's contracts use.

The contracts in `contract.py` are plain JSON Schema documents; this module interprets them, so the
schema printed by `wheypoint schema` and the checks `wheypoint validate` runs come from one definition.
It reports every problem at once, each with a JSON path (`$.entries[2].quote`) and a stable code.

Supported keywords: type, properties, required, additionalProperties (false or a schema), items,
minItems, maxItems, uniqueItems, minLength, maxLength, pattern, enum, const, minimum, maximum, $ref (local
`#/$defs/...`). Annotation keywords are ignored. wheypoint extensions, annotations that a
standard validator skips (three of them): `x-code` names the problem code a failed length or count check reports, and
`x-refused-keys` (on an object) and `x-refused-values` (on an enum) map a key or a value the author
must not send to the code its refusal carries.
"""

from __future__ import annotations

from wheypoint.model.errors import Problem
from wheypoint.model.replies import excerpt
from wheypoint.model.shapes import PATTERN_SHAPES, RESERVED_SLUGS, SLUG_PATTERN, reserved_slug_message
from wheypoint.patterns import compiled as regex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
}


def _type_matches(value: Any, name: str) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _JSON_TYPES[name])


def _type_name(value: Any) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _type_matches(value, name):
            return name
    return type(value).__name__


def child_path(path: str, key: str | int) -> str:
    """The JSON path of a member or an item below `path`."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if key.isascii() and key.isidentifier():  # [A-Za-z_][A-Za-z0-9_]*, without compiling a pattern
        return f"{path}.{key}"
    escaped = key.replace("\\", "\\\\").replace('"', '\\"')
    return f'{path}["{escaped}"]'


class SchemaChecker:
    """Checks JSON values against one root schema and its `$defs`."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root

    def check(self, value: Any, path: str = "$") -> list[Problem]:
        problems: list[Problem] = []
        self._check(self.root, value, path, problems)
        return problems

    def _resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            ref = schema["$ref"]
            if not ref.startswith("#/$defs/"):
                raise ValueError(f"unsupported $ref {ref}")
            schema = self.root["$defs"][ref[len("#/$defs/") :]]
        return schema

    def _check(self, schema: dict[str, Any], value: Any, path: str, problems: list[Problem]) -> None:
        schema = self._resolve(schema)
        code = schema.get("x-code")
        if "const" in schema and value != schema["const"]:
            problems.append(Problem(code or "bad-value", path, f"must be {schema['const']!r}"))
            return
        refused_values: dict[str, str] = schema.get("x-refused-values", {})
        if isinstance(value, str) and value in refused_values:
            problems.append(Problem(refused_values[value], path, _REFUSED_MESSAGES[refused_values[value]]))
            return
        if "enum" in schema and value not in schema["enum"]:
            allowed = ", ".join(str(v) for v in schema["enum"])
            problems.append(Problem(code or "bad-value", path, f"must be one of: {allowed}"))
            return
        wanted = schema.get("type")
        if wanted is not None:
            names = [wanted] if isinstance(wanted, str) else list(wanted)
            if not any(_type_matches(value, n) for n in names):
                problems.append(Problem("wrong-type", path, f"must be {' or '.join(names)}, not {_type_name(value)}"))
                return
        if isinstance(value, str):
            self._check_string(schema, value, path, problems)
        elif isinstance(value, list):
            self._check_array(schema, value, path, problems)
        elif isinstance(value, dict):
            self._check_object(schema, value, path, problems)
        elif isinstance(value, int) and not isinstance(value, bool):
            if value < schema.get("minimum", value):
                problems.append(Problem(code or "too-small", path, f"must be at least {schema['minimum']}"))
            if value > schema.get("maximum", value):
                problems.append(Problem(code or "too-large", path, f"must be at most {schema['maximum']}"))

    def _check_string(self, schema: dict[str, Any], value: str, path: str, problems: list[Problem]) -> None:
        code = schema.get("x-code")
        if "minLength" in schema and len(value) < schema["minLength"]:
            what = "must not be empty" if schema["minLength"] == 1 else f"needs {schema['minLength']}+ chars"
            problems.append(Problem(code or "too-short", path, what))
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            problems.append(
                Problem(code or "too-long", path, f"is {len(value)} characters; the limit is {schema['maxLength']}")
            )
        if "pattern" in schema and not regex(schema["pattern"]).search(value):
            if schema["pattern"] == SLUG_PATTERN and value in RESERVED_SLUGS:
                problems.append(Problem("reserved-slug", path, reserved_slug_message(value)))
                return
            shape = PATTERN_SHAPES.get(schema["pattern"], f"a text matching {schema['pattern']}")
            what = f"{schema['description']}: " if "description" in schema else ""
            problems.append(Problem(code or "bad-format", path, f"{what}expected {shape}; got {excerpt(value)!r}"))

    def _check_array(self, schema: dict[str, Any], value: list[Any], path: str, problems: list[Problem]) -> None:
        code = schema.get("x-code")
        if "minItems" in schema and len(value) < schema["minItems"]:
            what = "must not be empty" if schema["minItems"] == 1 else f"needs at least {schema['minItems']} items"
            problems.append(Problem(code or "too-few", path, what))
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            problems.append(
                Problem(code or "too-many", path, f"has {len(value)} items; the limit is {schema['maxItems']}")
            )
        if schema.get("uniqueItems"):
            seen: list[Any] = []
            for index, item in enumerate(value):
                if item in seen:
                    problems.append(Problem("duplicate-item", child_path(path, index), "repeats an earlier item"))
                else:
                    seen.append(item)
        items = schema.get("items")
        if isinstance(items, dict):
            for index, item in enumerate(value):
                self._check(items, item, child_path(path, index), problems)

    def _check_object(self, schema: dict[str, Any], value: dict[str, Any], path: str, problems: list[Problem]) -> None:
        properties: dict[str, Any] = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                problems.append(Problem("missing-field", child_path(path, key), "is required"))
        additional = schema.get("additionalProperties", True)
        refused: dict[str, str] = schema.get("x-refused-keys", {})
        for key, item in value.items():
            member = child_path(path, key)
            if key in properties:
                self._check(properties[key], item, member, problems)
            elif key in refused:
                problems.append(Problem(refused[key], member, _REFUSED_MESSAGES.get(refused[key], "is refused")))
            elif additional is False:
                problems.append(Problem("unknown-key", member, "is not a key of this contract"))
            elif isinstance(additional, dict):
                self._check(additional, item, member, problems)


_REFUSED_MESSAGES = {
    "status-authored": "status is derived from the gating entries; an author never sets it",
    "baseline-refused": "a baseline belongs in the Cook handoff; it is refused here rather than dropped",
    "runtime-derived": "ids, digests and revision numbers are derived by the runtime; remove this key",
    "fork-transition-refused": "a fork is written by `wheypoint fork`, never by a checkpoint transition",
    "host-only-edge": "lineage edges (forked_from, forked_to, joined_from, joined_into) are written by the "
    "runtime's fork and join, never by an agent",
    "session-authored": "the session is provenance the runtime fills from the transcript it read (--session, "
    "--transcript, a hook payload); an intent never states it",
}
