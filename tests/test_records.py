"""Records: declared like typing.NamedTuple, behaving like one, built without typing or compiled source."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from wheypoint.model.errors import Problem
from wheypoint.model.records import Record


class Point(Record):
    """A point, for the tests."""

    x: int
    y: int
    label: str = ""
    tags: tuple[str, ...] = ()

    @property
    def norm1(self) -> int:
        return abs(self.x) + abs(self.y)

    def moved(self, dx: int) -> Point:
        return self._replace(x=self.x + dx)


def test_fields_by_name_position_and_unpacking() -> None:
    p = Point(1, 2, "a")
    assert (p.x, p.y, p.label, p.tags) == (1, 2, "a", ()) and p[1] == 2
    x, y, label, tags = p
    assert (x, y, label, tags) == (1, 2, "a", ())
    assert isinstance(p, tuple) and p == (1, 2, "a", ()) and hash(p) == hash((1, 2, "a", ()))


def test_keywords_defaults_and_the_errors_namedtuple_gives() -> None:
    assert Point(y=2, x=1) == Point(1, 2) == Point(1, y=2, tags=())
    with pytest.raises(TypeError, match="missing required argument: 'y'"):
        Point(1)
    with pytest.raises(TypeError, match="unexpected"):
        Point(1, 2, colour="red")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="takes 4 arguments"):
        Point(1, 2, "a", (), 5)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected or repeated"):
        Point(1, 2, x=3)  # type: ignore[misc]


def test_methods_properties_docstring_and_helpers() -> None:
    p = Point(3, -4)
    assert p.norm1 == 7 and p.moved(1) == Point(4, -4) and Point.__doc__ == "A point, for the tests."
    assert p._asdict() == {"x": 3, "y": -4, "label": "", "tags": ()}
    assert Point._fields == ("x", "y", "label", "tags") and Point._field_defaults == {"label": "", "tags": ()}
    assert Point._make([1, 2, "b", ("t",)]) == Point(1, 2, "b", ("t",))
    assert repr(p) == "Point(x=3, y=-4, label='', tags=())"
    with pytest.raises(ValueError, match="no fields z"):
        p._replace(z=1)  # type: ignore[call-arg]
    with pytest.raises(AttributeError):
        p.x = 5  # type: ignore[misc]


def test_records_pickle_and_compare_by_value() -> None:
    problem = Problem("bad-format", "$.x", "expected a slug")
    assert pickle.loads(pickle.dumps(problem)) == problem
    assert Problem("a", "b", "c") != Problem("a", "b", "d")


def test_declaring_records_imports_neither_typing_nor_collections_namedtuple_source() -> None:
    src = Path(__file__).resolve().parents[1] / "src"
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from wheypoint.model.errors import Problem; "
            "print('typing' in sys.modules, Problem('a', 'b', 'c').code)")  # fmt: skip
    done = subprocess.run([sys.executable, "-S", "-c", code, str(src)], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "a"]
