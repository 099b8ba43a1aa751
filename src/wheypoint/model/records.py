"""Typed immutable records (named tuples) that are cheap to declare and cost no `typing` import at run time.

A record is declared exactly as a `typing.NamedTuple` (annotated fields, defaults last, methods), and the type
checker reads it as one. At run time it is a tuple subclass with the same behaviour (fields by name and by
position, unpacking, equality, `_replace`, `_asdict`, `_make`, `_fields`, pickling), built here because every
command declares about a dozen of them while it starts:

- importing `typing` costs about 8 ms, and `dataclasses` about 19 ms (it imports `inspect`);
- `collections.namedtuple` compiles Python source for each class, about 0.3 ms apiece;
- a record here is one `type()` call: its accessors are the C getters namedtuple itself uses, and its methods
  are shared by every record rather than generated per class.
"""

from __future__ import annotations

__all__ = ["Record"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple as Record
else:
    try:
        from _collections import _tuplegetter as _getter  # CPython: the C accessor namedtuple uses
    except ImportError:  # pragma: no cover - other interpreters
        from operator import itemgetter

        def _getter(index, doc):
            return property(itemgetter(index), doc=doc)

    _MISSING = object()

    def _new(cls, *args, **kwargs):
        fields = cls._fields
        if not kwargs:
            if len(args) == len(fields):
                return tuple.__new__(cls, args)
            rest = cls._default_tail[len(args) :]  # positional arguments, the rest left to their defaults
            if len(args) < len(fields) and _MISSING not in rest:
                return tuple.__new__(cls, args + rest)
        if len(args) > len(fields):
            raise TypeError(f"{cls.__name__}() takes {len(fields)} arguments but {len(args)} were given")
        values = list(args)
        for field in fields[len(args) :]:
            if field in kwargs:
                values.append(kwargs.pop(field))
            elif field in cls._field_defaults:
                values.append(cls._field_defaults[field])
            else:
                raise TypeError(f"{cls.__name__}() missing required argument: {field!r}")
        if kwargs:
            raise TypeError(f"{cls.__name__}() got unexpected or repeated arguments: {', '.join(sorted(kwargs))}")
        return tuple.__new__(cls, values)

    def _make(cls, iterable):
        values = tuple(iterable)
        if len(values) != len(cls._fields):
            raise TypeError(f"{cls.__name__} expects {len(cls._fields)} values, got {len(values)}")
        return tuple.__new__(cls, values)

    def _replace(self, **changes):
        values = [changes.pop(field, value) for field, value in zip(self._fields, self, strict=True)]
        if changes:
            raise ValueError(f"{type(self).__name__} has no fields {', '.join(sorted(changes))}")
        return tuple.__new__(type(self), values)

    def _asdict(self):
        return dict(zip(self._fields, self, strict=True))

    def _repr(self):
        inner = ", ".join(f"{field}={value!r}" for field, value in zip(self._fields, self, strict=True))
        return f"{type(self).__name__}({inner})"

    def _getnewargs(self):
        return tuple(self)

    _SHARED = {
        "__slots__": (), "__new__": _new, "_make": classmethod(_make), "_replace": _replace, "_asdict": _asdict,
        "__repr__": _repr, "__getnewargs__": _getnewargs,
    }  # fmt: skip

    class _RecordType(type):
        """Builds each subclass as a tuple of its annotated fields, keeping its methods and docstring."""

        def __new__(mcls, name, bases, namespace):
            if not bases:  # Record itself
                return super().__new__(mcls, name, bases, namespace)
            fields = tuple(namespace.get("__annotations__", {}))
            body = {**_SHARED, **{key: value for key, value in namespace.items() if key not in fields}}
            body["_fields"] = body["__match_args__"] = fields
            body["_field_defaults"] = {field: namespace[field] for field in fields if field in namespace}
            body["_default_tail"] = tuple(namespace.get(field, _MISSING) for field in fields)
            for index, field in enumerate(fields):
                body[field] = _getter(index, f"Field {index}: {field}")
            return type(name, (tuple,), body)

    class Record(metaclass=_RecordType):
        """Subclass it with annotated fields, as with `typing.NamedTuple`."""
