"""Mutants of a reference solution: each applies one small fault with a simple AST mutation operator.

Operators (the classic ones of mutation testing):

* comparison flips: ``<`` to ``<=`` or ``>``, ``>=`` to ``>`` or ``<=``, ``==`` to ``!=``, ``in`` to ``not in``, ...;
* off-by-one constants: an integer constant ``c`` becomes ``c + 1`` or ``c - 1``;
* boolean constants flip (``reverse=True`` to ``reverse=False``);
* arithmetic operator swaps: ``+`` and ``-``, ``*`` to ``+``, ``//`` to ``*``, ``%`` to ``//`` (in
  augmented assignments too);
* swapped operands of non-commutative operators (``a - b`` to ``b - a``) and of comparisons;
* ``and`` and ``or`` swap; a condition (``if``, ``while``, a comprehension's ``if``) is negated;
* ``min`` and ``max`` swap.

:func:`mutants` lists every distinct mutant source (none equal to the original), in a fixed order. Some
mutants are equivalent to the original (no input tells them apart); the environments count a mutant only
once some test has told it apart.
"""

from __future__ import annotations

import ast
import copy
from typing import Any, Callable, Iterator

_COMPARE_FLIPS: dict[type[ast.cmpop], tuple[type[ast.cmpop], ...]] = {
    ast.Lt: (ast.LtE, ast.Gt),
    ast.LtE: (ast.Lt, ast.GtE),
    ast.Gt: (ast.GtE, ast.Lt),
    ast.GtE: (ast.Gt, ast.LtE),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
}
_ARITHMETIC: dict[type[ast.operator], tuple[type[ast.operator], ...]] = {
    ast.Add: (ast.Sub,),
    ast.Sub: (ast.Add,),
    ast.Mult: (ast.Add,),
    ast.FloorDiv: (ast.Mult,),
    ast.Mod: (ast.FloorDiv,),
}
_NON_COMMUTATIVE = (ast.Sub, ast.FloorDiv, ast.Mod, ast.Div, ast.Pow)

#: A mutation is applied to the copy of the node it was found at, so it takes that node's own type (an ``ast.Compare``,
#: an ``ast.BinOp``, ...): the type differs per site, hence ``Any``.
Mutation = Callable[[Any], None]


def _sites(node: ast.AST) -> Iterator[Mutation]:
    """The mutations that apply at ``node`` itself, each as a function that applies it to a copy of ``node``."""
    if isinstance(node, ast.Compare):
        for index, op in enumerate(node.ops):
            for replacement in _COMPARE_FLIPS.get(type(op), ()):
                # The defaults bind this iteration's values (a closure would see the last ones).
                def flip(n: ast.Compare, i: int = index, r: type[ast.cmpop] = replacement) -> None:
                    n.ops[i] = r()

                yield flip
        if len(node.ops) == 1:

            def swap_compare(n: ast.Compare) -> None:
                n.left, n.comparators[0] = n.comparators[0], n.left

            yield swap_compare
    elif isinstance(node, (ast.BinOp, ast.AugAssign)):
        for swapped in _ARITHMETIC.get(type(node.op), ()):

            def swap_operator(n: ast.BinOp | ast.AugAssign, r: type[ast.operator] = swapped) -> None:
                n.op = r()

            yield swap_operator
        if isinstance(node, ast.BinOp) and isinstance(node.op, _NON_COMMUTATIVE):

            def swap_operands(n: ast.BinOp) -> None:
                n.left, n.right = n.right, n.left

            yield swap_operands
    elif isinstance(node, ast.Constant):
        if isinstance(node.value, bool):
            yield lambda n: setattr(n, "value", not n.value)
        elif isinstance(node.value, int):
            yield lambda n: setattr(n, "value", n.value + 1)
            yield lambda n: setattr(n, "value", n.value - 1)
    elif isinstance(node, ast.BoolOp):
        yield lambda n: setattr(n, "op", ast.Or() if isinstance(n.op, ast.And) else ast.And())
    elif isinstance(node, (ast.If, ast.While, ast.IfExp)):
        yield lambda n: setattr(n, "test", ast.UnaryOp(ast.Not(), n.test))
    elif isinstance(node, ast.comprehension):
        for index in range(len(node.ifs)):

            def negate_filter(n: ast.comprehension, i: int = index) -> None:
                n.ifs[i] = ast.UnaryOp(ast.Not(), n.ifs[i])

            yield negate_filter
    elif isinstance(node, ast.Name) and node.id in ("min", "max"):
        yield lambda n: setattr(n, "id", "max" if n.id == "min" else "min")


def mutants(source: str, function: str | None = None) -> list[str]:
    """Every distinct single-mutation variant of ``source`` (inside ``function`` only, if given), in a fixed order."""
    tree = ast.parse(source)
    nodes = list(ast.walk(tree))
    inside = {id(node) for node in nodes}
    if function is not None:
        functions = [node for node in nodes if isinstance(node, ast.FunctionDef) and node.name == function]
        if functions:
            inside = {id(node) for root in functions for node in ast.walk(root)}
    seen = {ast.unparse(tree)}
    found = []
    for index, node in enumerate(nodes):
        if id(node) not in inside:
            continue
        for mutation in _sites(node):
            copied = copy.deepcopy(tree)
            # A deep copy is walked in the same order, so the same index finds the same node.
            mutation(list(ast.walk(copied))[index])
            ast.fix_missing_locations(copied)
            try:
                text = ast.unparse(copied)
                compile(text, "<mutant>", "exec")
            except (SyntaxError, ValueError, RecursionError):
                continue
            if text not in seen:
                seen.add(text)
                found.append(text + "\n")
    return found
