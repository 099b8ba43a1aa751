"""The mutants of one Python module: sites found with `ast`, each a text splice with an id stable across edits."""

# Used by bench/mutation.py. Operators, as issue 12 names them:
#   cmp     a comparison flipped: < <=, > >= swapped (the boundary), == !=, in / not in, is / is not negated;
#   cond    a condition negated: the test of if, elif, while, a conditional expression or a comprehension filter;
#   const   an integer constant moved by one (n -> n + 1), True <-> False;
#   raise   a raise statement removed;
#   append  a statement-level .append/.extend/.add/.update/.insert/.setdefault call, or an augmented
#           assignment (`problems += ...`), removed;
#   return  `return X` made `return None`, a bare `return` removed;
#   bool    `and` <-> `or`.
#
# A mutant replaces one node's source span (columns are UTF-8 byte offsets, as `ast` gives them) with the
# unparsed mutated node, in parentheses, or a statement with `pass`; the rest of the file stays byte for byte.
# Its id is `<module>:<qualified function>:<operator>:<8 hex>`, the hex over the original span, the
# replacement and which occurrence of that pair it is in the function: not the line number, so an id stays
# the same while someone edits another part of the file, and the equivalents listed by id stay attached.
#
# Not mutated, because no mutant there can be a regression a test should catch: what only the type checker
# reads (`TYPE_CHECKING = False`, the `if TYPE_CHECKING:` imports, `__all__`), f-strings (their inner node
# positions are not reliable on 3.10-3.11), and `raise NotImplementedError` in a base class's placeholder
# methods.

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass

APPENDERS = frozenset({"append", "extend", "add", "update", "insert", "setdefault"})
_CMP_SWAP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}  # fmt: skip
_NEGATED = (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)


@dataclass(frozen=True)
class Mutant:
    """One mutant: where it is, what it changes, and its stable id."""

    id: str
    module: str
    path: str  # relative to the repository root
    qualname: str
    op: str
    line: int
    span: tuple[int, int, int, int]  # lineno, col_offset, end_lineno, end_col_offset (bytes)
    original: str
    replacement: str

    def apply(self, source: str) -> str:
        """The module's source with this mutant spliced in."""
        lines = source.encode("utf-8").splitlines(keepends=True)
        start_line, start_col, end_line, end_col = self.span
        head = b"".join(lines[: start_line - 1]) + lines[start_line - 1][:start_col]
        tail = lines[end_line - 1][end_col:] + b"".join(lines[end_line:])
        return (head + self.replacement.encode("utf-8") + tail).decode("utf-8")

    def describe(self) -> str:
        """One line: where, and what became what."""
        before = " ".join(self.original.split())
        before = before if len(before) <= 70 else before[:67] + "..."
        return f"{self.path}:{self.line} [{self.op}] {before}  ->  {self.replacement}"


def _paren(node: ast.AST) -> str:
    return "(" + ast.unparse(node) + ")"


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "TYPE_CHECKING"


class _Finder(ast.NodeVisitor):
    """Walks a module, collecting (qualname, op, node, replacement) for every mutation site."""

    def __init__(self) -> None:
        self.scope: list[str] = []
        self.sites: list[tuple[str, str, ast.AST, str]] = []

    def add(self, op: str, node: ast.AST, replacement: str) -> None:
        self.sites.append((".".join(self.scope) or "<module>", op, node, replacement))

    def negate(self, test: ast.expr) -> None:
        """A condition negated, unless it is one comparison that `cmp` already negates (the same mutant twice)."""
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _NEGATED:
            return
        self.add("cond", test, "not " + _paren(test))

    def _scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.scope.append(node.name)
        # Decorators, defaults and bases belong to the enclosing scope, but are rare enough to keep with the body.
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        return  # f-strings: see the top of the module

    def visit_Assign(self, node: ast.Assign) -> None:
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        if "TYPE_CHECKING" in names or "__all__" in names:
            return
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            return
        self.negate(node.test)
        self.generic_visit(node)

    def visit_While(self, node: ast.While) -> None:
        self.negate(node.test)
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self.negate(node.test)
        self.generic_visit(node)

    def visit_comprehension(self, node: ast.comprehension) -> None:
        for test in node.ifs:
            self.negate(test)
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        for index, op in enumerate(node.ops):
            swapped = _CMP_SWAP.get(type(op))
            if swapped is not None:
                ops = list(node.ops)
                ops[index] = swapped()
                self.add("cmp", node, _paren(ast.Compare(node.left, ops, node.comparators)))
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        other: ast.boolop = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        self.add("bool", node, _paren(ast.BoolOp(other, node.values)))
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, bool):
            self.add("const", node, str(not node.value))
        elif isinstance(node.value, int):
            self.add("const", node, str(node.value + 1))

    def visit_Raise(self, node: ast.Raise) -> None:
        name = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        if not (isinstance(name, ast.Name) and name.id == "NotImplementedError"):
            self.add("raise", node, "pass")
        self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in APPENDERS:
            self.add("append", node, "pass")
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.add("append", node, "pass")
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is None:
            self.add("return", node, "pass")
        elif not (isinstance(node.value, ast.Constant) and node.value.value is None):
            self.add("return", node, "return None")
        self.generic_visit(node)


def _segment(source_lines: list[bytes], span: tuple[int, int, int, int]) -> str:
    start, col, end, end_col = span
    if start == end:
        return source_lines[start - 1][col:end_col].decode("utf-8")
    parts = [source_lines[start - 1][col:], *source_lines[start : end - 1], source_lines[end - 1][:end_col]]
    return b"".join(parts).decode("utf-8")


def mutants_of(module: str, path: str, source: str) -> list[Mutant]:
    """Every valid mutant of `source` (a module's text), in file order; `module` is the id's prefix."""
    tree = ast.parse(source)
    finder = _Finder()
    finder.visit(tree)
    lines = source.encode("utf-8").splitlines(keepends=True)
    seen: dict[tuple[str, str, str, str], int] = {}
    found: list[Mutant] = []
    for qualname, op, node, replacement in finder.sites:
        span: tuple[int, int, int, int] = (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        original = _segment(lines, span)
        if original == replacement:
            continue
        key = (qualname, op, " ".join(original.split()), replacement)
        occurrence = seen[key] = seen.get(key, -1) + 1
        digest = hashlib.sha256(repr((*key, occurrence)).encode("utf-8")).hexdigest()[:8]
        mutant = Mutant(f"{module}:{qualname}:{op}:{digest}", module, path, qualname, op, span[0], span,
                        original, replacement)  # fmt: skip
        try:
            compile(mutant.apply(source), path, "exec")
        except SyntaxError:
            continue  # e.g. `pass` where an expression is needed: not a program, so not a mutant
        found.append(mutant)
    return found
