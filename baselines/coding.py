"""Scripted agents of the coding environments (Code, CoderTester, CodeProposerSolver).

They read only the observation (the view: statement, examples, the challenge; and tool results in the
messages), with one documented exception, ``reference``:

* ``reference`` (Code, CoderTester): an **oracle, not a fair agent**, and marked so: ``privileged = True``.
  The view holds only an opaque handle of the task; the agent looks the task up through the privileged
  channel (:func:`parlour.envs.coding.oracle.privileged_oracle`, which knows the tasks of the episodes running
  in its own process) and submits the reference solution; as tester it submits the first ``max_tests``
  hidden tests as asserts. It is the upper bound of the scale (every hidden test passes), measured
  locally; the leaderboard refuses privileged agents.
* ``phrasebook`` (Code, CoderTester): a weak coder that knows 27 of procgen's simplest steps (list filters,
  sums, sorting, reversing, case changes, word and vowel counts, ...). If it recognises every step of the statement it writes the solution,
  checks it with ``run_tests`` and submits it; otherwise it submits a function that returns the visible
  examples' outputs. As tester it asserts the visible examples, plus, when it has a solution, random inputs
  of the examples' type with the outputs it gets by running that solution with ``run_python``.
* ``tracer`` (CodeProposerSolver): as proposer, programs from templates of three difficulties (arithmetic and
  string one-liners, loops, and programs using dictionaries, lambdas, bit operations or f-strings); as
  solver in output prediction, a small interpreter of a Python subset (integers, strings, lists, loops,
  a few builtins and methods, within a step budget) that traces the program, never executing it; in
  program induction, a library of candidate programs (identity, reverse, case, counts, sums, a linear
  function of a number) checked against the shown pairs.
* ``random`` (all three): random tool calls, random code and random text (often invalid), so its
  episodes end within a few steps.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any, Callable, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.random_agent import RandomAgent
from parlour.baselines.seeded import SeededAgent
from parlour.envs.coding.oracle import Oracle, privileged_oracle

CODE = "parlour/Code-v0"
CODER_TESTER = "parlour/CoderTester-v0"
PROPOSER_SOLVER = "parlour/CodeProposerSolver-v0"


def call(tool: str, **arguments: Any) -> str:
    """A tool call as the JSON text ``{"tool": ..., "arguments": {...}}``."""
    return json.dumps({"tool": tool, "arguments": arguments}, ensure_ascii=False)


def tool_results(observation: Mapping[str, Any], tool: str | None = None) -> list[str]:
    """The texts of the tool results in this observation's messages (of ``tool`` only, if given)."""
    return [m["text"] for m in observation.get("messages", []) if m["kind"] == "tool_result" and (tool is None or m["sender"] == tool)]


# ----------------------------------------------------------------------------- reference (oracle)


class Reference(SeededAgent):
    """The oracle upper bound: submits the task's reference solution (or, as tester, its hidden tests); see the module docstring."""

    name = "reference"
    #: Reads hidden tasks through the privileged oracle: the leaderboard refuses it.
    privileged = True

    def __init__(self, env_id: str | None = None, seed: int | None = None, oracle: Oracle | None = None):
        super().__init__(env_id, seed)
        self.oracle = oracle or privileged_oracle()

    def act(self, observation: Mapping[str, Any]) -> str:
        """Look the task up by its handle and submit what the reference gives."""
        view = observation["view"]
        task = self.oracle.task(view["task_id"])
        if view.get("role") == "tester":
            lines = [
                f"assert {task.entry_point}({', '.join(map(repr, args))}) == {expected!r}" for args, expected in task.hidden[: view["max_tests"]]
            ]
            return call("submit", code="\n".join(lines))
        return call("submit", code=task.reference or "pass")


# ----------------------------------------------------------------------------- phrasebook (weak)

#: The steps the phrasebook knows: a pattern of the statement's step line and the code it stands for.
PHRASES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = tuple(
    (re.compile(pattern), code)
    for pattern, code in [
        (r"Keep only the numbers greater than (-?\d+), in their order\.", lambda m: f"value = [x for x in value if x > {m.group(1)}]"),
        (
            r"Sort the numbers in (increasing|decreasing) order\.",
            lambda m: "value = sorted(value" + (", reverse=True)" if m.group(1) == "decreasing" else ")"),
        ),
        (r"Reverse the order of the numbers\.", lambda m: "value = list(reversed(value))"),
        (r"Take the sum of the numbers \(0 for an empty list\)\.", lambda m: "value = sum(value)"),
        (r"Take the largest number \(0 for an empty list\)\.", lambda m: "value = max(value, default=0)"),
        (r"Take the smallest number \(0 for an empty list\)\.", lambda m: "value = min(value, default=0)"),
        (r"Replace each number by its absolute value\.", lambda m: "value = [abs(x) for x in value]"),
        (r"Reverse the text\.", lambda m: "value = value[::-1]"),
        (r"Convert the text to (upper|lower) case\.", lambda m: f"value = value.{m.group(1)}()"),
        (r"Count the words \(separated by whitespace\)\.", lambda m: "value = len(value.split())"),
        (r"Take the sum of the values \(0 for an empty dictionary\)\.", lambda m: "value = sum(value.values())"),
        (r"Take the sum of the decimal digits of the number's absolute value\.", lambda m: "value = sum(map(int, str(abs(value))))"),
        (r"Keep only the (even|odd) numbers, in their order\.", lambda m: f"value = [x for x in value if x % 2 == {int(m.group(1) == 'odd')}]"),
        (r"Remove every number divisible by (\d+) \(0 included\)\.", lambda m: f"value = [x for x in value if x % {m.group(1)}]"),
        (r"Replace each number x by (\d+) \* x ([+-]) (\d+)\.", lambda m: f"value = [{m.group(1)} * x {m.group(2)} {m.group(3)} for x in value]"),
        (r"Keep only the first (\d+) numbers \(all of them if there are fewer\)\.", lambda m: f"value = value[:{m.group(1)}]"),
        (r"Count the numbers greater than (-?\d+)\.", lambda m: f"value = len([x for x in value if x > {m.group(1)}])"),
        (r"Count the distinct numbers\.", lambda m: "value = len(set(value))"),
        (r"Remove every vowel \(a, e, i, o, u, in either case\)\.", lambda m: "value = ''.join(c for c in value if c.lower() not in 'aeiou')"),
        (r"Convert the text by swapping the case of every letter\.", lambda m: "value = value.swapcase()"),
        (r"Count the vowels \(a, e, i, o, u, in either case\)\.", lambda m: "value = len([c for c in value if c.lower() in 'aeiou'])"),
        (r"Split the text into its words \(separated by whitespace\)\.", lambda m: "value = value.split()"),
        (r"Convert each word to upper case\.", lambda m: "value = [w.upper() for w in value]"),
        (r"Replace each word by its length\.", lambda m: "value = [len(w) for w in value]"),
        (r"Take the total number of characters of all the words\.", lambda m: "value = len(''.join(value))"),
        (r"Take the largest value \(0 for an empty dictionary\)\.", lambda m: "value = max(value.values(), default=0)"),
    ]
)
_SIGNATURE = re.compile(r"`(\w+)\((\w+)\)`")
_STEP = re.compile(r"^(\d+)\. (.+)$", re.MULTILINE)


def phrasebook_solution(statement: str) -> str | None:
    """The solution of a procgen statement whose every step the phrasebook knows, else None."""
    signature = _SIGNATURE.search(statement)
    steps = _STEP.findall(statement.split("\nExamples:")[0])
    if signature is None or not steps:
        return None
    name, parameter = signature.groups()
    lines = [f"def {name}({parameter}):", f"    value = {parameter}"]
    for _number, text in steps:
        for pattern, code in PHRASES:
            match = pattern.fullmatch(text.strip())
            if match is not None:
                lines.append("    " + code(match))
                break
        else:
            return None
    return "\n".join(lines + ["    return value", ""])


def memorizer(entry: str, examples: list[dict[str, Any]]) -> str:
    """A function that returns the visible examples' outputs: the example's own for its input, else the first one's."""
    pairs = [(example["args"], example["output"]) for example in examples]
    return (
        f"EXAMPLES = {pairs!r}\n\n\ndef {entry}(*args):\n    for known, output in EXAMPLES:\n        if list(args) == known:\n"
        f"            return output\n    return EXAMPLES[0][1] if EXAMPLES else None\n"
    )


def _random_like(value: Any, rng: Any) -> Any:
    """A random value shaped like ``value`` (a list of integers, a string, an integer, a list of strings, a dict)."""
    letters = "abcdeiklmnoprstu "
    if isinstance(value, bool):
        return bool(rng.integers(2))
    if isinstance(value, int):
        return int(rng.integers(-50, 1000))
    if isinstance(value, str):
        return "".join(letters[int(i)] for i in rng.integers(len(letters), size=int(rng.integers(0, 16))))
    if isinstance(value, list):
        if value and all(isinstance(v, str) for v in value):
            return ["".join(letters[int(i)] for i in rng.integers(16, size=int(rng.integers(1, 6)))) for _ in range(int(rng.integers(0, 6)))]
        return [int(v) for v in rng.integers(-10, 20, size=int(rng.integers(0, 9)))]
    if isinstance(value, dict):
        return {f"k{int(i)}": int(rng.integers(-10, 20)) for i in rng.choice(30, size=int(rng.integers(0, 5)), replace=False)}
    return value


class Phrasebook(SeededAgent):
    """A weak coder that solves only statements made of steps it knows; as tester, examples plus random inputs.
    See the module docstring."""

    name = "phrasebook"

    def act(self, observation: Mapping[str, Any]) -> str:
        """Write, check and submit a solution; or, as tester, compute and submit tests."""
        view = observation["view"]
        if view.get("kind", "function") != "function":
            return call("submit", code="pass")
        solution = phrasebook_solution(view["statement"])
        if view.get("role") == "tester":
            return self.test(view, observation, solution)
        if solution is None:
            return call("submit", code=memorizer(view["entry_point"], view["examples"]))
        report = tool_results(observation, "run_tests")
        if not report:
            return call("run_tests", code=solution)
        passed = report[-1].startswith(f"{len(view['examples'])} of {len(view['examples'])} visible tests passed")
        return call("submit", code=solution if passed else memorizer(view["entry_point"], view["examples"]))

    def test(self, view: Mapping[str, Any], observation: Mapping[str, Any], solution: str | None) -> str:
        """Asserts of the visible examples, and of random inputs with the outputs its own solution gives."""
        entry = view["entry_point"]
        pairs = [(tuple(example["args"]), example["output"]) for example in view["examples"]]
        extra = view["max_tests"] - len(pairs)
        runs = tool_results(observation, "run_python")
        if solution is not None and extra > 0 and not runs:
            inputs = [tuple(_random_like(arg, self.rng) for arg in pairs[0][0]) for _ in range(extra)] if pairs else []
            program = solution + f"\nfor args in {inputs!r}:\n    print(repr((args, {entry}(*args))))\n"
            return call("run_python", code=program)
        if runs:
            for line in runs[-1].split("stdout:\n", 1)[-1].splitlines():
                try:
                    args, output = ast.literal_eval(line)
                except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                    continue
                pairs.append((tuple(args), output))
        lines = [f"assert {entry}({', '.join(map(repr, args))}) == {output!r}" for args, output in pairs[: view["max_tests"]]]
        return call("submit", code="\n".join(lines))


# ----------------------------------------------------------------------------- tracer (proposer / solver)


class CannotTrace(Exception):
    """The program does something the tracer does not model (or more than its budget)."""


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


#: Builtins the tracer calls for the program: pure functions of the values it has built.
SAFE_CALLS: dict[str, Callable[..., Any]] = {
    "int": int,
    "str": str,
    "len": len,
    "abs": abs,
    "min": min,
    "max": max,
    "sum": sum,
    "sorted": sorted,
    "list": list,
    "range": range,
    "reversed": reversed,
    "bool": bool,
}
SAFE_METHODS: dict[type, set[str]] = {
    str: {"split", "strip", "upper", "lower", "count", "startswith", "endswith", "isdigit", "isalpha", "find", "replace", "join"},
    list: {"append", "pop", "index", "count"},
}
MAX_LENGTH = 10_000
MAX_INT = 10**60
STEP_BUDGET = 200_000
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.Div: lambda a, b: a / b,
}
_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


class Tracer:
    """Works out what a small program prints by walking its syntax tree: no code is executed.

    Models integers, floats, strings, booleans, lists and tuples; assignment (tuple unpacking, list items),
    ``if``, ``for``, ``while``, ``break``, ``continue``, list comprehensions, ``print``, ``input`` and
    :data:`SAFE_CALLS` and :data:`SAFE_METHODS`. Anything else, an error of the program, or more than
    :data:`STEP_BUDGET` steps raises :class:`CannotTrace`. Sizes are capped so that tracing stays cheap.
    """

    def __init__(self, stdin: str):
        self.lines = stdin.split("\n")
        self.read = 0
        self.out: list[str] = []
        self.names: dict[str, Any] = {}
        self.steps = 0

    def run(self, program: str) -> str:
        """The program's stdout."""
        try:
            self.block(ast.parse(program).body)
        except CannotTrace:
            raise
        except (_Break, _Continue):
            raise CannotTrace("break outside a loop") from None
        except Exception as error:  # the program's own error, or a value the tracer would not hold
            raise CannotTrace(f"{type(error).__name__}: {error}") from None
        return "".join(self.out)

    def tick(self) -> None:
        self.steps += 1
        if self.steps > STEP_BUDGET:
            raise CannotTrace("step budget")

    def checked(self, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT:
            raise CannotTrace("integer too large")
        if isinstance(value, (str, list, tuple, range)) and len(value) > MAX_LENGTH:
            raise CannotTrace("value too long")
        return value

    def block(self, statements: list[ast.stmt]) -> None:
        for statement in statements:
            self.statement(statement)

    def statement(self, node: ast.stmt) -> None:
        self.tick()
        if isinstance(node, ast.Assign):
            value = self.expr(node.value)
            for target in node.targets:
                self.assign(target, value)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            self.names[node.target.id] = self.binary(node.op, self.load(node.target.id), self.expr(node.value))
        elif isinstance(node, ast.Expr):
            self.expr(node.value)
        elif isinstance(node, ast.If):
            self.block(node.body if self.expr(node.test) else node.orelse)
        elif isinstance(node, (ast.For, ast.While)):
            self.loop(node)
        elif isinstance(node, ast.Break):
            raise _Break
        elif isinstance(node, ast.Continue):
            raise _Continue
        elif not isinstance(node, ast.Pass):
            raise CannotTrace(type(node).__name__)

    def loop(self, node: ast.For | ast.While) -> None:
        # A while loop has no items; it is asked isinstance again below so that each branch reads its own node's fields.
        items = iter(list(self.checked(self.expr(node.iter)))) if isinstance(node, ast.For) else iter(())
        while True:
            self.tick()
            if isinstance(node, ast.For):
                try:
                    self.assign(node.target, next(items))
                except StopIteration:
                    break
            elif not self.expr(node.test):
                break
            try:
                self.block(node.body)
            except _Break:
                return
            except _Continue:
                continue
        self.block(node.orelse)

    def assign(self, target: ast.expr, value: Any) -> None:
        if isinstance(target, ast.Name):
            self.names[target.id] = self.checked(value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = list(value)
            if len(values) != len(target.elts):
                raise CannotTrace("unpacking")
            for element, item in zip(target.elts, values):
                self.assign(element, item)
        elif isinstance(target, ast.Subscript) and isinstance(container := self.expr(target.value), list):
            container[self.expr(target.slice)] = value
        else:
            raise CannotTrace("assignment target")

    def load(self, name: str) -> Any:
        if name not in self.names:
            raise CannotTrace(f"name {name}")
        return self.names[name]

    def binary(self, op: ast.operator, left: Any, right: Any) -> Any:
        if isinstance(op, ast.Pow):
            if not (isinstance(right, int) and 0 <= right <= 64 and isinstance(left, int) and abs(left) <= 10**6):
                raise CannotTrace("power")
            return left**right
        if isinstance(op, ast.Mult) and (isinstance(left, (str, list)) or isinstance(right, (str, list))):
            sequence, count = (left, right) if isinstance(left, (str, list)) else (right, left)
            if not isinstance(count, int) or len(sequence) * max(count, 0) > MAX_LENGTH:
                raise CannotTrace("repetition")
        if type(op) not in _BINARY:
            raise CannotTrace(type(op).__name__)
        return self.checked(_BINARY[type(op)](left, right))

    def expr(self, node: ast.expr) -> Any:
        self.tick()
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool, type(None))):
            return node.value
        if isinstance(node, ast.Name):
            return self.load(node.id)
        if isinstance(node, ast.BinOp):
            return self.binary(node.op, self.expr(node.left), self.expr(node.right))
        if isinstance(node, ast.UnaryOp):
            operand = self.expr(node.operand)
            if isinstance(node.op, ast.Not):
                return not operand
            if isinstance(node.op, ast.USub):
                return -operand
            if isinstance(node.op, ast.UAdd):
                return +operand
        if isinstance(node, ast.BoolOp):
            value = None
            for element in node.values:
                value = self.expr(element)
                if bool(value) == isinstance(node.op, ast.Or):
                    return value
            return value
        if isinstance(node, ast.Compare):
            left = self.expr(node.left)
            for op, comparator in zip(node.ops, node.comparators):
                right = self.expr(comparator)
                if type(op) not in _COMPARE:
                    raise CannotTrace(type(op).__name__)
                if not _COMPARE[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            return self.expr(node.body) if self.expr(node.test) else self.expr(node.orelse)
        if isinstance(node, (ast.List, ast.Tuple)):
            items = [self.expr(element) for element in node.elts]
            return self.checked(items if isinstance(node, ast.List) else tuple(items))
        if isinstance(node, ast.ListComp) and len(node.generators) == 1 and not node.generators[0].is_async:
            return self.comprehension(node)
        if isinstance(node, ast.Subscript):
            value = self.expr(node.value)
            index = node.slice
            if isinstance(index, ast.Slice):
                bounds = [None if part is None else self.expr(part) for part in (index.lower, index.upper, index.step)]
                return value[slice(*bounds)]
            return value[self.expr(index)]
        if isinstance(node, ast.Call) and (not node.keywords or self._is_print(node)):
            return self.call(node)
        raise CannotTrace(type(node).__name__)

    @staticmethod
    def _is_print(node: ast.Call) -> bool:
        return isinstance(node.func, ast.Name) and node.func.id == "print" and all(k.arg in ("sep", "end") for k in node.keywords)

    def comprehension(self, node: ast.ListComp) -> list[Any]:
        generator = node.generators[0]
        saved = dict(self.names)
        out = []
        try:
            for item in list(self.checked(self.expr(generator.iter))):
                self.tick()
                self.assign(generator.target, item)
                if all(self.expr(condition) for condition in generator.ifs):
                    out.append(self.expr(node.elt))
        finally:
            self.names = saved
        return self.checked(out)

    def call(self, node: ast.Call) -> Any:
        args = [self.expr(arg) for arg in node.args]
        if isinstance(node.func, ast.Name):
            name = node.func.id
            if name == "print":
                keywords = {k.arg: self.expr(k.value) for k in node.keywords}
                text = str(keywords.get("sep", " ")).join(str(a) for a in args) + str(keywords.get("end", "\n"))
                self.out.append(text)
                if sum(map(len, self.out)) > MAX_LENGTH:
                    raise CannotTrace("too much output")
                return None
            if name == "input" and not args:
                if self.read >= len(self.lines):
                    raise CannotTrace("input exhausted")
                self.read += 1
                return self.lines[self.read - 1]
            if name in SAFE_CALLS:
                if name == "range" and len(range(*args)) > MAX_LENGTH:
                    raise CannotTrace("range too long")
                return self.checked(SAFE_CALLS[name](*args))
            raise CannotTrace(f"call of {name}")
        if isinstance(node.func, ast.Attribute):
            owner = self.expr(node.func.value)
            method = node.func.attr
            if method not in SAFE_METHODS.get(type(owner), set()):
                raise CannotTrace(f"method {method}")
            if method == "join" and sum(len(str(part)) + len(owner) for part in args[0]) > MAX_LENGTH:
                raise CannotTrace("join too long")
            if method == "replace" and len(owner) * (1 + len(args[1])) > MAX_LENGTH:
                raise CannotTrace("replace too long")
            return self.checked(getattr(owner, method)(*args))
        raise CannotTrace("call")


def trace(program: str, stdin: str) -> str | None:
    """What ``program`` prints for ``stdin`` according to :class:`Tracer`, or None if it cannot tell."""
    try:
        return Tracer(stdin).run(program)
    except (CannotTrace, RecursionError, MemoryError):
        return None


#: Program induction: candidate programs and what they compute, checked against the shown pairs.
CANDIDATES: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("print(input())", lambda s: s),
    ("print(input()[::-1])", lambda s: s[::-1]),
    ("print(input().upper())", str.upper),
    ("print(input().lower())", str.lower),
    ("print(len(input().split()))", lambda s: str(len(s.split()))),
    ("print(len(input()))", lambda s: str(len(s))),
    ("print(sum(int(t) for t in input().split()))", lambda s: str(sum(int(t) for t in s.split()))),
    ("print(max(int(t) for t in input().split()))", lambda s: str(max(int(t) for t in s.split()))),
    ("print(*sorted(int(t) for t in input().split()))", lambda s: " ".join(map(str, sorted(int(t) for t in s.split())))),
    ("print(' '.join(input().split()[::-1]))", lambda s: " ".join(s.split()[::-1])),
)

# Proposer templates: (difficulty, program, input maker). "@A@"-style holes are filled with small numbers.
Template = tuple[str, str, Callable[[Any], str]]


def _int_input(rng: Any) -> str:
    return str(int(rng.integers(3, 60)))


def _words_input(rng: Any) -> str:
    syllables = ["ka", "lo", "mi", "su", "te", "ra", "no", "vi", "pe", "do"]
    words = ["".join(syllables[int(i)] for i in rng.integers(10, size=int(rng.integers(1, 4)))) for _ in range(int(rng.integers(2, 7)))]
    return " ".join(words)


def _numbers_input(rng: Any) -> str:
    return " ".join(str(int(v)) for v in rng.integers(-20, 50, size=int(rng.integers(3, 8))))


TEMPLATES: tuple[Template, ...] = (
    ("easy", "n = int(input())\nprint(n * @A@ + @B@)", _int_input),
    ("easy", "s = input()\nprint(s[::-1])", _words_input),
    ("easy", "words = input().split()\nprint(len(words), words[0].upper())", _words_input),
    ("medium", "n = int(input())\ntotal = 0\nfor i in range(1, n + 1):\n    if i % @A@ == 0:\n        total += i\nprint(total)", _int_input),
    ("medium", "x = int(input())\nfor step in range(@A@):\n    x = (x * @B@ + @A@) % 97\nprint(x)", _int_input),
    (
        "medium",
        "nums = [int(t) for t in input().split()]\nbest = nums[0]\nfor v in nums:\n    if v > best:\n        best = v\nprint(best, sum(nums) % @B@)",
        _numbers_input,
    ),
    (
        "hard",
        "s = input()\ncounts = {}\nfor ch in s:\n    counts[ch] = counts.get(ch, 0) + 1\n"
        "print(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:@A@])",
        _words_input,
    ),
    ("hard", "n = int(input())\nprint(bin(n ^ (n >> 1)).count('1'), n & @B@)", _int_input),
    ("hard", "s = input()\nprint(f'{len(s):03d}|{s[::@A@]}|{s.swapcase()}')", _words_input),
    ("hard", "nums = sorted(set(int(t) for t in input().split()), key=lambda v: (v % @A@, -v))\nprint(nums)", _numbers_input),
)
DIFFICULTY_WEIGHTS = {"easy": 0.35, "medium": 0.3, "hard": 0.35}


class TracerAgent(SeededAgent):
    """Proposes template programs of mixed difficulty; solves by tracing or by a candidate library. See the module docstring."""

    name = "tracer"

    def act(self, observation: Mapping[str, Any]) -> str:
        """The proposer's proposal or the solver's answer."""
        view = observation["view"]
        if view["role"] == "proposer":
            return self.propose(view)
        if view["mode"] == "output":
            return call("answer", output=trace(view["program"], view["input"]) or "")
        return call("answer", code=self.induce(view["pairs"]))

    def propose(self, view: Mapping[str, Any]) -> str:
        """A program from a template of a randomly drawn difficulty, with its input(s)."""
        levels = list(DIFFICULTY_WEIGHTS)
        level = levels[int(self.rng.choice(len(levels), p=list(DIFFICULTY_WEIGHTS.values())))]
        options = [t for t in TEMPLATES if t[0] == level]
        _, program, make_input = options[int(self.rng.integers(len(options)))]
        program = program.replace("@A@", str(int(self.rng.integers(2, 6)))).replace("@B@", str(int(self.rng.integers(3, 40))))
        if view["mode"] == "output":
            return call("propose", program=program, input=make_input(self.rng))
        inputs = [make_input(self.rng) for _ in range(view["inputs"])]
        return call("propose", program=program, inputs=inputs)

    @staticmethod
    def induce(pairs: list[dict[str, str]]) -> str:
        """The first candidate that matches every shown pair; a linear function of a number; else echo the input."""

        def same(got: str, want: str) -> bool:
            return got.split() == want.split()

        for source, function in CANDIDATES:
            try:
                if all(same(function(pair["input"].rstrip("\n")), pair["output"]) for pair in pairs):
                    return source
            except (ValueError, TypeError):
                continue
        try:
            points = [(int(pair["input"]), int(pair["output"])) for pair in pairs]
        except ValueError:
            return "print(input())"
        if len(points) >= 2 and points[0][0] != points[1][0]:
            (x0, y0), (x1, y1) = points[0], points[1]
            if (y1 - y0) % (x1 - x0) == 0:
                a = (y1 - y0) // (x1 - x0)
                b = y0 - a * x0
                if all(y == a * x + b for x, y in points):
                    return f"n = int(input())\nprint({a} * n + {b})"
        return "print(input())"


# ----------------------------------------------------------------------------- random

_RANDOM_VALUES = ("0", "1", "-1", "[]", "[1, 2]", "''", "'a'", "{}", "True", "None")


class RandomCoder(RandomAgent):
    """Random tool calls with random code, or random text (an invalid action)."""

    def free_move(self, observation: Mapping[str, Any]) -> str:
        """One of: text that is no tool call, a scratch run, a visible-test run, or a submission of random code."""
        view = observation.get("view") or {}
        entry = view.get("entry_point") or "solve"
        value = _RANDOM_VALUES[int(self.rng.integers(len(_RANDOM_VALUES)))]
        roll = float(self.rng.random())
        if view.get("role") == "tester" and roll >= 0.25:
            return call("submit", code=f"assert {entry}({value}) == {_RANDOM_VALUES[int(self.rng.integers(len(_RANDOM_VALUES)))]}")
        code = f"def {entry}(*args):\n    return {value}\n"
        if roll < 0.25:
            return ["I am not sure.", "def solve(x): return x", "submit", "```python\nprint(1)\n```"][int(self.rng.integers(4))]
        if roll < 0.4:
            return call("run_python", code=f"print({value})")
        if roll < 0.55:
            return call("run_tests", code=code)
        return call("submit", code=code)


class RandomProposerSolver(RandomAgent):
    """Random proposals (some invalid) and random answers, or random text (an invalid action)."""

    PROGRAMS = ("print(input())", "print(1 / 0)", "print(len(input()))", "s = input()\nprint(s * 2)", "pass")

    def free_move(self, observation: Mapping[str, Any]) -> str:
        """A random proposal or answer, or text that is no tool call."""
        view = observation.get("view") or {}
        if float(self.rng.random()) < 0.2:
            return ["hello", "propose", "42"][int(self.rng.integers(3))]
        if view.get("role") == "proposer":
            program = self.PROGRAMS[int(self.rng.integers(len(self.PROGRAMS)))]
            text = str(int(self.rng.integers(100)))
            if view.get("mode") == "induction":
                return call("propose", program=program, inputs=[text] * int(view["inputs"]))
            return call("propose", program=program, input=text)
        if view.get("mode") == "induction":
            return call("answer", code=self.PROGRAMS[int(self.rng.integers(len(self.PROGRAMS)))])
        return call("answer", output=str(int(self.rng.integers(100))))


register_scripted("reference", [CODE, CODER_TESTER], Reference)
register_scripted("phrasebook", [CODE, CODER_TESTER], Phrasebook)
register_scripted("tracer", PROPOSER_SOLVER, TracerAgent)
register_scripted("random", [CODE, CODER_TESTER], RandomCoder)
register_scripted("random", PROPOSER_SOLVER, RandomProposerSolver)
