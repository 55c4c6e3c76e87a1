"""Judging code in :mod:`parlour.sandbox`: run a program on tests and decide, on the host, whether it passed.

A verdict comes only from values the host compares: nothing a program writes is believed as a verdict.
The harness's result lines travel on the program's own stdout, so a program can always write lines that
look like them; that is why they carry values and error reports only, never a "pass", and why any status
the host does not know is an error of that test (never a verdict, never an exception).

Three kinds of test, one per kind of task:

* ``function``: call ``entry(*args)`` once per test. A harness (:data:`HARNESS`) runs inside the sandbox:
  it compiles the solution as ``solution.py``, executes it under the name ``solution`` (so an ``if __name__
  == "__main__":`` block does not run), calls the function on every test's arguments with a CPU-time alarm
  per test, and writes back each return value in a tagged JSON encoding (:mod:`parlour.envs.coding.wire`:
  the builtin types, ``Counter``, ``OrderedDict``, ``defaultdict``, ``deque``, ``Fraction``, ``Decimal``,
  ``bytes``, ``complex``, ``range``, dict views and iterators, at any depth up to ``wire.MAX_DEPTH``). The
  values are compared with the expected ones **here, on the host**, and the expected values never enter the
  sandbox: whatever a solution writes back is judged as its answer. Equality is Python's ``==``
  (:func:`same`, which never raises), with floats compared to a relative and absolute tolerance of 1e-9; an
  object of a class the encoding does not carry is equal to nothing.
* ``asserts``: HumanEval/MBPP-style test code (``assert f(2) == 4``, ``assert set(f(x)) == set((1, 2))``,
  ``assert abs(f(0.5) - 1.5) < 1e-9``). Each assert is split on the host (:func:`assert_plan`): every call
  of the solution's code (a *probe*, such as ``f(2)``) is evaluated in the solution's sandbox and only its
  value (or the error it raised) comes back; the rest of the assert, with the probes' values in their place,
  is evaluated in a second, fresh sandbox that never held the solution (:data:`CHECKER`), after the task's
  setup code. A probe's error counts only where that evaluation reaches the probe, so ``or``, ``and``,
  conditional expressions and chained comparisons short-circuit as in Python. The expected side of a test
  never enters the solution's sandbox, and nothing the solution does can reach the checker. Test code that
  cannot be split so (loops, helper variables, a solution name used other than by calling it, a probe
  compared by identity with anything but ``None``, ``True`` or ``False``, text too deeply nested to
  analyse) runs the old way, in the solution's own process after it, where a solution can defeat it;
  :attr:`Task.host_checked <parlour.envs.coding.task.Task.host_checked>` says which, and the environments
  call a task set with such tests not rateable.
* ``stdio``: the program runs once per test with the test's input on stdin, in a process of its own; its
  stdout is compared on the host token by token with the expected output, numbers that hold a decimal
  point or an exponent to a tolerance (default 1e-6, absolute or relative), everything else exactly.

After the first test that runs out of CPU time, the remaining tests are not run (they count as failed):
one endless loop costs one test's time limit, not all of them.

Verdicts: ``pass`` (every test passed), ``syntax_error`` (the code does not compile), ``timeout`` (a test,
or loading the module, ran out of time), ``runtime_error`` (the module failed to load, the function is
missing, a test raised, or the run reported something the host does not know) and ``wrong_answer``
(everything ran, some result was wrong), in that order of precedence after ``syntax_error``.

Determinism: verdicts replay because the limits are CPU time far above what the tasks need, the sandbox's
hash seed is fixed, and each judgement starts a fresh sandbox. What a judgement keeps for the record
(:meth:`Judgement.summary`) is the verdict and one letter per test, never the values a program returned or
printed, so a wrong program that prints the clock still replays as the same wrong answer.

Scratch runs (an agent trying code) use a warm sandbox of their player's own, one per player and episode
(:class:`parlour.envs.coding.common.ScratchSandboxes`), so no two players or tenants share one;
judgements that count use :func:`fresh_sandbox`. :func:`warm_sandbox` keeps one per process for checking
that code can run here and for tools outside episodes.
"""

from __future__ import annotations

import ast
import atexit
import builtins
import collections
import json
import math
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from parlour.envs.coding import wire
from parlour.envs.coding.wire import Raised, decode
from parlour.sandbox import Limits, RunResult, Sandbox, SandboxUnavailable, run_python

#: CPU seconds each test may use; procgen references need microseconds, so verdicts are far from the edge.
TEST_CPU_SECONDS = 1.0
#: Limits of a whole harness run (loading the module and every test).
JUDGE_LIMITS = Limits(cpu_seconds=10.0, wall_seconds=30.0, memory_mb=512)
#: Limits of an agent's scratch run.
SCRATCH_LIMITS = Limits(cpu_seconds=2.0, wall_seconds=10.0, memory_mb=512, max_output_bytes=1 << 18)
#: Marks the harness's result lines on its stdout, so that what a program prints is not mistaken for them
#: (a program can still write such lines: they are read as its answers, never as verdicts).
MARK = "\x1e"
#: What the harness may say about loading the solution, and about one test; anything else is an error.
LOAD_STATUSES = frozenset({"ok", "syntax", "error", "timeout", "missing"})
TEST_STATUSES = frozenset({"ok", "fail", "error", "timeout"})

#: Compiles the program on its stdin without running it.
SYNTAX_CHECK = "import sys\ncompile(sys.stdin.read(), 'main.py', 'exec')\n"

# The harness imports only builtin modules (``sys``, ``os``, ``_signal``, ``time``): in a forked sandbox an
# import of ``json`` or ``signal`` costs more than the tests themselves. Each test's line ends with the CPU
# seconds it took, which the host uses only for trusted code (a reference's budget for its mutants).
HARNESS = r'''
import os, sys, _signal, time

MARK = "\x1e"
ESCAPES = {i: "\\u%04x" % i for i in range(32)}
ESCAPES[34] = '\\"'
ESCAPES[92] = "\\\\"
for _c in range(0xD800, 0xE000):
    ESCAPES[_c] = "\\u%04x" % _c
ARMED = [False]
#: Items of an iterator that travel (an endless generator's first ones; more fail when used on the host).
MAX_ITEMS = 10000


class Timeout(BaseException):
    pass


def alarm(signum, frame):
    # Raises once per arming: the harness disarms before anything of its own can be interrupted.
    if ARMED[0]:
        ARMED[0] = False
        raise Timeout()


class Unreportable(Exception):
    pass


def text(value):
    return '"' + value.translate(ESCAPES) + '"'


def integer(value):
    # Decimal text stops at 4300 digits (Python's limit on int/str conversion): large ints travel in hex.
    if value.bit_length() <= 60:
        return int.__repr__(value)
    return '["i",' + text(int.__format__(value, "x")) + "]"


EXACT = {int: "int", str: "str", float: "f", list: "l", tuple: "t", dict: "d", set: "s", frozenset: "fs", bytes: "b",
         bytearray: "ba", complex: "c", range: "r", type({}.keys()): "kv", type({}.values()): "vv", type({}.items()): "iv"}
FACTORIES = (list, int, set, str, float, dict, tuple, frozenset, bool)


def family(kind):
    """The wire tag of the first class of kind's MRO the wire knows (modules the solution imported included), or None."""
    found = EXACT.get(kind)
    if found is not None:
        return found
    known = dict(EXACT)
    for module, names in (("collections", (("Counter", "C"), ("OrderedDict", "od"), ("defaultdict", "dd"), ("deque", "dq"))),
                          ("fractions", (("Fraction", "q"),)), ("decimal", (("Decimal", "D"),))):
        loaded = sys.modules.get(module)
        for name, tag in names if loaded is not None else ():
            known[getattr(loaded, name)] = tag
    for base in kind.__mro__:
        if base in known:
            return known[base]
    return None


def node(value):
    """(operation, children): the value's own operation, and the values it is built of (None for a leaf)."""
    kind = type(value)
    if value is None:
        return "null", None
    if kind is bool:
        return ("true" if value else "false"), None
    tag = family(kind)
    if tag == "int":
        return integer(int.__int__(value)), None
    if tag == "str":
        return text(str.__str__(value)), None
    if tag == "f":
        return '["f",' + text(float.__repr__(value)) + "]", None
    if tag in ("b", "ba"):
        return '["' + tag + '",' + text((bytes if tag == "b" else bytearray).hex(value)) + "]", None
    if tag == "D":
        return '["D",' + text(str(value)) + "]", None
    if tag in ("l", "t", "s", "fs", "dq", "kv", "vv"):
        children = list(iter(value) if tag in ("dq", "kv", "vv") else {"l": list, "t": tuple, "s": set, "fs": frozenset}[tag].__iter__(value))
        return '["%s",%d]' % (tag, len(children)), children
    if tag in ("d", "od", "C", "dd", "iv"):
        pairs = list(value if tag == "iv" else value.items() if tag == "od" else dict.items(value))
        children = [part for pair in pairs for part in pair]
        if tag != "dd":
            return '["%s",%d]' % (tag, len(pairs)), children
        factory = value.default_factory
        named = next((text(option.__name__) for option in FACTORIES if factory is option), "null")
        return '["dd",%d,%s]' % (len(pairs), named), children
    if tag == "c":
        return '["c"]', [value.real, value.imag]
    if tag == "r":
        return '["r"]', [value.start, value.stop, value.step]
    if tag == "q":
        return '["q"]', [value.numerator, value.denominator]
    if hasattr(kind, "__next__") and hasattr(kind, "__iter__"):
        # An iterator travels as its first MAX_ITEMS items; the host's copy fails past them if there were more.
        children = []
        for item in value:
            if len(children) == MAX_ITEMS:
                return '["it",%d,true]' % len(children), children
            children.append(item)
        return '["it",%d,false]' % len(children), children
    return '["o",' + text(kind.__name__) + "]", None


def encode(value):
    """The value as the wire's JSON array of operations, in postfix order (see parlour.envs.coding.wire); iterative."""
    ops = []
    todo = [(False, value)]
    inside = {}
    while todo:
        closing, item = todo.pop()
        if closing:
            ops.append(item[1])
            del inside[id(item[0])]
            continue
        op, children = node(item)
        if children is None:
            ops.append(op)
            continue
        if id(item) in inside:
            raise ValueError("the value contains itself")
        # Kept in inside until closed, so that its id is not reused meanwhile.
        inside[id(item)] = item
        todo.append((True, (item, op)))
        todo.extend((False, child) for child in reversed(children))
    return "[" + ",".join(ops) + "]"


def reported(value):
    """encode(value), or Unreportable saying why it cannot travel."""
    try:
        return encode(value)
    except Timeout:
        raise
    except BaseException as error:
        raise Unreportable(describe(error))


def probed(probes, namespace):
    """Each probe's encoded value, or the error it raised (or why its value cannot travel), as the wire's list of
    operation arrays: the checker raises a probe's error only if the assert uses that probe."""
    parts = []
    for probe in probes:
        try:
            parts.append(reported(eval(probe, dict(namespace))))
        except Timeout:
            raise
        except Unreportable as error:
            parts.append('[["e","Unreportable",' + text("the value cannot be reported: " + error.args[0]) + "]]")
        except BaseException as error:
            parts.append('[["e",' + text(type(error).__name__) + "," + text(describe(error)) + "]]")
    return "[" + ",".join(parts) + "]"


def emit(line):
    data = (MARK + line + "\n").encode("utf-8", "surrogatepass")
    while data:
        data = data[os.write(1, data):]


def describe(error):
    try:
        message = str(error)
    except BaseException:
        message = "(unprintable)"
    line = None
    trace = error.__traceback__
    while trace is not None:
        if trace.tb_frame.f_code.co_filename == "solution.py":
            line = trace.tb_lineno
        trace = trace.tb_next
    where = " (solution.py, line %d)" % line if line is not None else ""
    text = type(error).__name__ + (": " + message if message else "") + where
    return text[:500]


# What a test prints is kept for display, up to 2000 characters.
class Capture:
    def __init__(self) -> None:
        self.parts = []
        self.size = 0

    def write(self, text):
        if self.size < 2000:
            self.parts.append(str(text)[: 2000 - self.size])
            self.size += len(self.parts[-1])
        return len(text)

    def flush(self):
        pass

    def take(self):
        text = "".join(self.parts)
        self.parts, self.size = [], 0
        return text


def guarded(action, seconds):
    """(status, value or error text): run action() under the CPU alarm."""
    try:
        try:
            ARMED[0] = True
            _signal.setitimer(_signal.ITIMER_PROF, seconds, 0.05)
            value = action()
        finally:
            ARMED[0] = False
            _signal.setitimer(_signal.ITIMER_PROF, 0, 0)
    except Timeout:
        return "timeout", "ran out of CPU time (%g s)" % seconds
    except Unreportable as error:
        return "error", "the result cannot be reported: " + error.args[0]
    except AssertionError as error:
        return "fail", describe(error)
    except BaseException as error:
        return "error", describe(error)
    return "ok", value


def main():
    payload = eval(sys.stdin.read(), {"__builtins__": {}, "set": set, "inf": float("inf"), "nan": float("nan")})
    seconds = payload["load_cpu"]
    _signal.signal(_signal.SIGPROF, alarm)
    try:
        code = compile(payload["code"], "solution.py", "exec")
    except BaseException as error:
        emit('["load","syntax",' + text(describe(error)) + "]")
        return
    capture = Capture()
    sys.stdout = capture
    namespace = {"__name__": "solution"}
    status, value = guarded(lambda: exec(code, namespace), seconds)
    if status != "ok":
        emit('["load",' + text(status) + "," + text(value) + "]")
        return
    if payload["setup"]:
        status, value = guarded(lambda: exec(payload["setup"], namespace), seconds)
        if status != "ok":
            emit('["load","error",' + text("the test setup failed: " + value) + "]")
            return
    if payload["mode"] == "call":
        function = namespace.get(payload["entry"])
        if not callable(function):
            emit('["load","missing",' + text("solution.py defines no function " + payload["entry"]) + "]")
            return
    if payload["mode"] == "probes":
        try:
            probes = [[compile(probe, "test.py", "eval") for probe in test] for test in payload["tests"]]
        except BaseException as error:
            emit('["load","error",' + text("a test cannot be compiled: " + describe(error)) + "]")
            return
    emit('["load","ok",""]')
    capture.take()
    for index, test in enumerate(payload["tests"]):
        started = time.process_time()
        if payload["mode"] == "call":
            status, value = guarded(lambda: reported(function(*test)), payload["cpu"][index])
        elif payload["mode"] == "probes":
            status, value = guarded(lambda: probed(probes[index], namespace), payload["cpu"][index])
        else:
            status, value = guarded(lambda: exec(test, dict(namespace)), payload["cpu"][index])
        used = time.process_time() - started
        printed = capture.take()
        if status == "ok":
            value = value if payload["mode"] != "asserts" else '""'
        else:
            value = text(value)
        emit("[" + str(index) + "," + text(status) + "," + value + "," + text(printed) + "," + repr(used) + "]")
        if status == "timeout":
            return


main()
'''


#: The source of :mod:`parlour.envs.coding.wire`, which the checker runs before its own code.
WIRE = Path(wire.__file__).read_text(encoding="utf-8")

#: Pairs of values :func:`same` looks at, at most, before it gives up (a comparison it cannot finish is ``False``).
MAX_COMPARED = 1_000_000
#: The mappings the wire carries, equal to one another as ``==`` says.
_MAPPINGS = frozenset({dict, collections.Counter, collections.OrderedDict, collections.defaultdict})


def same(got: Any, expected: Any) -> bool:
    """Python's ``==``, except that floats agree to 1e-9 (relative or absolute), inside lists, tuples and mappings
    too. A ``dict``, ``Counter``, ``OrderedDict`` or ``defaultdict`` equals another as ``==`` says (a ``Counter``
    equals the ``dict`` of its items). Total: a comparison that cannot be made (an int too large for any float, a
    value that contains itself, an ``__eq__`` that raises, more than :data:`MAX_COMPARED` pairs) is ``False``,
    never an exception."""
    try:
        pending = [(got, expected)]
        for _ in range(MAX_COMPARED):
            if not pending:
                return True
            if not _agree(*pending.pop(), pending):
                return False
        return False
    except Exception:
        return False


def _agree(got: Any, expected: Any, pending: list[tuple[Any, Any]]) -> bool:
    """Whether ``got`` and ``expected`` agree as far as they themselves go; the pairs of their items that must
    agree too are added to ``pending`` (iteration, not recursion: values may be deeply nested)."""
    if isinstance(expected, float) or isinstance(got, float):
        numbers = (int, float)
        if isinstance(got, bool) or isinstance(expected, bool) or not isinstance(got, numbers) or not isinstance(expected, numbers):
            return False
        if isinstance(got, float) and isinstance(expected, float) and math.isnan(got) and math.isnan(expected):
            return True
        try:
            return math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-9)
        except OverflowError:
            # An int beyond the largest float is close to no float.
            return False
    if type(got) in (list, tuple) and type(expected) is type(got):
        if len(got) != len(expected):
            return False
        pending.extend(zip(got, expected))
        return True
    if type(got) in _MAPPINGS and type(expected) in _MAPPINGS:
        if isinstance(got, collections.Counter) and isinstance(expected, collections.Counter):
            return bool(got == expected)
        if isinstance(got, collections.OrderedDict) and isinstance(expected, collections.OrderedDict) and list(got) != list(expected):
            return False
        if got.keys() != expected.keys():
            return False
        pending.extend((dict.__getitem__(got, key), dict.__getitem__(expected, key)) for key in expected)
        return True
    return bool(got == expected)


def show(value: Any, limit: int = 300) -> str:
    """``repr(value)`` cut to ``limit`` characters, for messages; never fails (a huge int, a value too deep to print)."""
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__} that cannot be shown>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class TestRun:
    """What one test did in the sandbox: ``status`` (``ok``, ``fail``, ``error``, ``timeout``, ``not_run``), the
    value it returned (``function`` tests; the probes' values for ``asserts`` tests), that value as the harness
    encoded it (``raw``), an error message, what it printed, and the CPU seconds the harness says it took."""

    status: str
    value: Any = None
    raw: Any = None
    detail: str = ""
    printed: str = ""
    cpu: float = 0.0


@dataclass(frozen=True)
class Execution:
    """A harness run: how loading the solution went (``ok``, ``syntax``, ``error``, ``timeout``, ``missing``,
    or ``crash`` when the process died before saying), its message, and one :class:`TestRun` per test."""

    load: str
    load_detail: str
    outcomes: tuple[TestRun, ...]


@dataclass(frozen=True)
class TestVerdict:
    """The verdict on one test: ``pass``, ``wrong``, ``error``, ``timeout`` or ``not_run``, with what was seen."""

    status: str
    detail: str = ""
    got: str = ""
    printed: str = ""


#: One letter per test verdict, in summaries.
LETTERS = {"pass": "P", "wrong": "W", "error": "E", "timeout": "T", "not_run": "N"}


@dataclass(frozen=True)
class Judgement:
    """The verdict on a program over a list of tests (see the module docstring for the verdicts)."""

    verdict: str
    tests: tuple[TestVerdict, ...]
    detail: str = ""

    @property
    def passed(self) -> int:
        """How many tests passed."""
        return sum(test.status == "pass" for test in self.tests)

    @property
    def total(self) -> int:
        """How many tests there were."""
        return len(self.tests)

    @property
    def fraction(self) -> float:
        """The share of tests passed (0 for a task without tests)."""
        return self.passed / self.total if self.tests else 0.0

    def summary(self) -> dict[str, Any]:
        """The JSON-ready account kept in outcome details (and compared on replay): the verdict, the counts and
        one letter per test (``P`` pass, ``W`` wrong, ``E`` error, ``T`` timeout, ``N`` not run). It holds
        nothing a program returned or printed, which need not reproduce."""
        return {"verdict": self.verdict, "passed": self.passed, "total": self.total, "tests": "".join(LETTERS[test.status] for test in self.tests)}


# ------------------------------------------------------------------------------ sandboxes

_WARM: dict[bool, tuple[int, Sandbox]] = {}
_WARM_LOCK = threading.Lock()


def _close_warm() -> None:
    for pid, sandbox in list(_WARM.values()):
        if pid == os.getpid():
            sandbox.close()
    _WARM.clear()


atexit.register(_close_warm)


def warm_sandbox(allow_unsafe: bool = False) -> Sandbox:
    """The process's warm sandbox for scratch runs (one per process, started on first use, closed at exit).

    A process forked from one that had a warm sandbox starts its own: the socket of the parent's is not its to use.
    Raises :class:`SandboxUnavailable` (saying how to install bubblewrap) where no sandbox can start.
    """
    with _WARM_LOCK:
        known = _WARM.get(allow_unsafe)
        if known is not None and known[0] == os.getpid():
            return known[1]
        sandbox = Sandbox(SCRATCH_LIMITS, allow_unsafe=allow_unsafe)
        _WARM[allow_unsafe] = (os.getpid(), sandbox)
        return sandbox


def fresh_sandbox(allow_unsafe: bool = False) -> Sandbox:
    """A new sandbox for a judgement that counts; use it as a context manager."""
    return Sandbox(JUDGE_LIMITS, allow_unsafe=allow_unsafe)


def require_sandbox(env_name: str, allow_unsafe: bool = False) -> None:
    """Raise :class:`SandboxUnavailable` naming ``env_name`` and the fix where code cannot be run here."""
    try:
        warm_sandbox(allow_unsafe)
    except SandboxUnavailable as error:
        raise SandboxUnavailable(f"{env_name} runs agents' code only inside parlour.sandbox: {error}") from None


# ------------------------------------------------------------------------------ running


def _payload(code: str, mode: str, tests: Sequence[Any], entry: str, setup: str, cpu: Sequence[float]) -> str:
    return repr({"code": code, "mode": mode, "entry": entry, "setup": setup, "tests": list(tests), "cpu": list(cpu), "load_cpu": TEST_CPU_SECONDS})


def _lines(stdout: str) -> list[Any]:
    """The harness's result lines in ``stdout`` (each a JSON array), skipping anything else the program wrote."""
    found = []
    for line in stdout.split("\n"):
        start = line.find(MARK)
        if start < 0:
            continue
        try:
            found.append(json.loads(line[start + 1 :]))
        except (ValueError, RecursionError):
            continue
    return found


def _test_run(line: list[Any], mode: str) -> TestRun:
    """One test's line ``[index, status, value or message, printed, cpu]`` read as a :class:`TestRun`; a status
    the host does not know, or a value it cannot read, makes the test an error. In ``probes`` mode the value is
    one per probe, each read on its own: one that cannot be read is kept as :class:`Raised`, and its ``raw``
    replaced by what says so, so that the checker raises it only where the assert uses that probe."""
    status, wire_value, printed, cpu = line[1], line[2], str(line[3]), line[4]
    cpu = float(cpu) if isinstance(cpu, (int, float)) and not isinstance(cpu, bool) and math.isfinite(cpu) and cpu >= 0 else 0.0
    if status not in TEST_STATUSES:
        return TestRun("error", detail=f"the run reported an unknown status {show(status, 40)}", printed=printed)
    if status != "ok":
        return TestRun(status, detail=str(wire_value), printed=printed, cpu=cpu)
    if mode == "asserts":
        return TestRun("ok", printed=printed, cpu=cpu)
    if mode == "probes":
        values, raw = [], []
        for ops in wire_value if isinstance(wire_value, list) else []:
            try:
                values.append(decode(ops))
                raw.append(ops)
            except Exception as error:
                message = f"the value could not be read back ({show(error, 200)})"
                values.append(Raised("Unreadable", message))
                raw.append([["e", "Unreadable", message]])
        return TestRun("ok", values, raw, printed=printed, cpu=cpu)
    try:
        return TestRun("ok", decode(wire_value), wire_value, printed=printed, cpu=cpu)
    except Exception as error:
        return TestRun("error", detail=f"the result could not be read back ({show(error, 200)})", printed=printed)


def execute(
    sandbox: Sandbox,
    code: str,
    mode: str,
    tests: Sequence[Any],
    *,
    entry: str = "",
    setup: str = "",
    cpu: float | Sequence[float] = TEST_CPU_SECONDS,
    limits: Limits | None = None,
) -> Execution:
    """Run ``code`` in ``sandbox`` through the harness: ``mode`` ``"call"`` calls ``entry`` with each test's
    argument tuple; ``"probes"`` evaluates each test's list of expressions (see :func:`assert_plan`) and
    returns their values; ``"asserts"`` executes each test's code after the solution (and ``setup``).
    ``cpu`` is each test's CPU seconds: one number for all, or one per test."""
    budgets = [float(cpu)] * len(tests) if isinstance(cpu, (int, float)) else [float(seconds) for seconds in cpu]
    result = sandbox.run(HARNESS, _payload(code, mode, tests, entry, setup, budgets), limits=limits or JUDGE_LIMITS)
    load, load_detail = "crash", ""
    outcomes: dict[int, TestRun] = {}
    for line in _lines(result.stdout):
        if not isinstance(line, list):
            continue
        if len(line) == 3 and line[0] == "load" and load == "crash":
            load, load_detail = (
                (line[1], str(line[2])) if line[1] in LOAD_STATUSES else ("error", f"the run reported an unknown status {show(line[1], 40)}")
            )
        elif len(line) == 5 and type(line[0]) is int and 0 <= line[0] < len(tests) and line[0] not in outcomes:
            outcomes[line[0]] = _test_run(line, mode)
    if load == "crash":
        load_detail = _death(result)
    crashed = _death(result) if result.verdict != "ok" else ""
    filled = []
    stopped = False
    for index in range(len(tests)):
        outcome = outcomes.get(index)
        if outcome is None:
            if load != "ok":
                outcome = TestRun("not_run", detail="the solution did not load")
            elif stopped:
                outcome = TestRun("not_run", detail="not run after an earlier test ran out of time")
            else:
                outcome = TestRun("timeout" if result.verdict == "timeout" else "error", detail=crashed or "the process ended before this test")
                stopped = True
        elif outcome.status == "timeout":
            stopped = True
        filled.append(outcome)
    return Execution(load, load_detail, tuple(filled))


def _death(result: RunResult) -> str:
    """Why a harness run ended without reporting."""
    if result.verdict == "timeout":
        return "the program ran out of time"
    if result.verdict == "memory":
        return "the program ran out of memory"
    if result.verdict == "output_limit":
        return "the program wrote too much output"
    tail = result.stderr.strip().splitlines()[-1:] if result.stderr.strip() else []
    return f"the program died ({tail[0][:300] if tail else f'exit {result.exit_code}, signal {result.signal}'})"


def _verdict(load: str, statuses: Sequence[str]) -> str:
    if load == "syntax":
        return "syntax_error"
    if load == "timeout":
        return "timeout"
    if load != "ok":
        return "runtime_error"
    if all(status == "pass" for status in statuses):
        return "pass"
    if "timeout" in statuses:
        return "timeout"
    if "error" in statuses or "not_run" in statuses:
        return "runtime_error"
    return "wrong_answer"


def _judgement(execution: Execution, verdicts: list[TestVerdict]) -> Judgement:
    return Judgement(_verdict(execution.load, [v.status for v in verdicts]), tuple(verdicts), execution.load_detail if execution.load != "ok" else "")


def _not_passed(outcome: TestRun) -> TestVerdict:
    """The verdict on a test that did not run to a value (an assertion failing in the harness is an error)."""
    return TestVerdict(outcome.status if outcome.status in ("timeout", "not_run") else "error", outcome.detail, printed=outcome.printed)


def judge_function(
    sandbox: Sandbox, code: str, entry: str, tests: Sequence[tuple[tuple, Any]], cpu: float | Sequence[float] = TEST_CPU_SECONDS
) -> Judgement:
    """Call ``entry`` on each test's arguments and compare with the expected value (on the host)."""
    execution = execute(sandbox, code, "call", [args for args, _ in tests], entry=entry, cpu=cpu)
    verdicts = []
    for outcome, (_, expected) in zip(execution.outcomes, tests):
        if outcome.status != "ok":
            verdicts.append(_not_passed(outcome))
        elif same(outcome.value, expected):
            verdicts.append(TestVerdict("pass", got=show(outcome.value), printed=outcome.printed))
        else:
            verdicts.append(TestVerdict("wrong", f"expected {show(expected)}, got {show(outcome.value)}", show(outcome.value), outcome.printed))
    return _judgement(execution, verdicts)


# ------------------------------------------------------------------------------ asserts, split between two sandboxes

#: The name the checker gives the function that hands out the probes' values (``__probe(0)``, ...).
PROBE = "__probe"

#: Evaluates the host's half of each assert, in a sandbox that never held the solution: the task's setup code,
#: then each test's expression, where ``__probe(i)`` gives the i-th probe's value (decoded data, never code) or
#: raises what the probe raised. Probes are looked up only where the expression's own evaluation reaches them,
#: so a probe behind ``or``, ``and``, a conditional expression or a chained comparison that is not reached
#: does not count, as in Python (each still ran, under the test's time limit, in the solution's sandbox).
CHECKER = (
    WIRE
    + r'''
import json, sys


class ProbeError(Exception):
    """What a probe raised (or why its value could not travel), where the assert uses the probe."""


def prober(raw):
    values = []
    for ops in raw if type(raw) is list else []:
        try:
            values.append(decode(ops))
        except Exception as error:
            values.append(Raised("Unreadable", "the value could not be read back (%s)" % error))

    def probe(index):
        found = values[index] if index < len(values) else Raised("Missing", "the run reported no value for this call")
        if isinstance(found, Raised):
            if found.type_name == "AssertionError":
                raise AssertionError(found.message)
            raise ProbeError(found.message)
        return found

    return probe


payload = json.loads(sys.stdin.read())
namespace = {"__name__": "checks"}
exec(payload["setup"], namespace)
for name in payload["modules"]:
    namespace.setdefault(name, __import__(name))
results = []
for expression, raw in payload["tests"]:
    scope = dict(namespace)
    scope[payload["probe"]] = prober(raw)
    try:
        results.append(["pass" if eval(expression, scope) else "fail", ""])
    except AssertionError:
        results.append(["fail", ""])
    except Exception as error:
        results.append(["error", (type(error).__name__ + ": " + str(error))[:300]])
sys.stdout.write("\x1e" + json.dumps(results) + "\n")
'''
)

_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class _Unsplittable(Exception):
    """An assert whose calls of the solution cannot be evaluated apart from the rest of it."""


def _probe_root(node: ast.AST) -> tuple[str | None, bool]:
    """The name a chain of calls, attributes and subscripts starts from, and whether the chain calls something."""
    called = False
    while isinstance(node, (ast.Call, ast.Attribute, ast.Subscript)):
        called = called or isinstance(node, ast.Call)
        node = node.func if isinstance(node, ast.Call) else node.value
    return (node.id if isinstance(node, ast.Name) else None), called


def setup_names(setup: str) -> frozenset[str] | None:
    """The names the top level of ``setup`` binds (functions, classes, imports, assignments); None if it does not parse."""
    try:
        tree = ast.parse(setup)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names = set()
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(statement.name)
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in statement.names)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            names.update(node.id for node in ast.walk(statement) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store))
    return frozenset(names)


def _singleton(node: ast.AST) -> bool:
    """Whether ``node`` is ``None``, ``True`` or ``False``: the values whose identity travels."""
    return isinstance(node, ast.Constant) and any(node.value is value for value in (None, True, False))


def split_assert(test: str, known: frozenset[str]) -> tuple[str, tuple[str, ...]] | None:
    """``(expression, probes)`` for a test that is one ``assert``: each probe is a call chain starting at a name
    not in ``known`` (the solution's), the expression is the assert's test with ``__probe(0)``, ``__probe(1)``, ...
    in their places (see :data:`CHECKER`). None where that cannot be done soundly: several statements, no probe,
    a probe inside a lambda or comprehension (it may use their variables), a solution name used other than by
    calling it, a probe compared by identity (``is``) with anything but ``None``, ``True`` or ``False``
    (a value that travelled is a copy), or test text too deeply nested to analyse."""
    try:
        return _split(test, known)
    except (_Unsplittable, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _split(test: str, known: frozenset[str]) -> tuple[str, tuple[str, ...]] | None:
    """:func:`split_assert`, raising where it cannot split."""
    body = ast.parse(test).body
    if len(body) != 1 or not isinstance(body[0], ast.Assert):
        return None
    expression = body[0].test
    bound = {node.id for node in ast.walk(expression) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    bound |= {arg.arg for node in ast.walk(expression) if isinstance(node, ast.Lambda) for arg in ast.walk(node.args) if isinstance(arg, ast.arg)}
    visible = known | bound
    probes: list[str] = []

    def probe(node: ast.AST) -> bool:
        root, _ = _probe_root(node)
        return root is not None and root not in visible and isinstance(node, (ast.Call, ast.Attribute, ast.Subscript))

    def cut(node: ast.AST, scoped: bool) -> ast.AST:
        if probe(node):
            if scoped or not _probe_root(node)[1]:
                raise _Unsplittable
            probes.append(ast.unparse(node))
            return ast.Call(ast.Name(PROBE, ast.Load()), [ast.Constant(len(probes) - 1)], [])
        if isinstance(node, ast.NamedExpr) or (isinstance(node, ast.Name) and node.id not in visible):
            raise _Unsplittable
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for index, op in enumerate(node.ops):
                left, right = operands[index], operands[index + 1]
                if isinstance(op, (ast.Is, ast.IsNot)) and ((probe(left) and not _singleton(right)) or (probe(right) and not _singleton(left))):
                    raise _Unsplittable
        inner = scoped or isinstance(node, _SCOPES)
        for name, value in ast.iter_fields(node):
            if isinstance(value, list):
                setattr(node, name, [cut(item, inner) if isinstance(item, ast.AST) else item for item in value])
            elif isinstance(value, ast.AST):
                setattr(node, name, cut(value, inner))
        return node

    rest = cut(expression, False)
    return (ast.unparse(rest), tuple(probes)) if probes else None


def _setup_needs_solution(setup: str) -> bool:
    """Whether ``setup`` reads a name it does not bind itself and no builtin provides (MBPP's setups build objects
    of classes the solution defines): the checker, which never holds the solution, could not run it."""
    tree = ast.parse(setup)
    bound = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    read = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    return bool(read - bound - frozenset(dir(builtins)))


def assert_plan(tests: Sequence[str], setup: str, entry: str) -> list[tuple[str, tuple[str, ...]]] | None:
    """Every test split by :func:`split_assert` (names known to the checker: builtins, standard modules and the
    setup's, never ``entry``), or None if one of them cannot be, or if the setup itself needs the solution."""
    names = setup_names(setup)
    try:
        if names is None or _setup_needs_solution(setup):
            return None
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    known = (frozenset(dir(builtins)) | frozenset(sys.stdlib_module_names) | names) - {entry}
    plan = [split_assert(test, known) for test in tests]
    return None if any(step is None for step in plan) else plan  # type: ignore[return-value]


def _modules(expression: str, setup: str) -> list[str]:
    """The standard modules an expression names that neither the builtins nor the setup provide."""
    try:
        names = {node.id for node in ast.walk(ast.parse(expression, mode="eval")) if isinstance(node, ast.Name)}
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    provided = setup_names(setup) or frozenset()
    return sorted(name for name in names if name in sys.stdlib_module_names and name not in provided and not hasattr(builtins, name))


def _check(pending: list[tuple[str, list[Any]]], setup: str, allow_unsafe: bool) -> list[tuple[str, str]]:
    """Run :data:`CHECKER` on ``(expression, probe values)`` pairs in a fresh sandbox: ``(status, detail)`` each."""
    modules = sorted({module for expression, _ in pending for module in _modules(expression, setup)})
    payload = json.dumps({"setup": setup, "modules": modules, "probe": PROBE, "tests": pending})
    result = run_python(CHECKER, payload, limits=JUDGE_LIMITS, allow_unsafe=allow_unsafe)
    lines = _lines(result.stdout)
    found = lines[0] if len(lines) == 1 and isinstance(lines[0], list) and len(lines[0]) == len(pending) else None
    if found is None:
        return [("error", "the checker failed: " + _death(result) if result.verdict != "ok" else "the checker failed")] * len(pending)
    return [(status, str(detail)) if status in ("pass", "fail", "error") else ("error", "the checker failed") for status, detail in found]


def judge_asserts(sandbox: Sandbox, code: str, tests: Sequence[str], setup: str = "", entry: str = "", cpu: float = TEST_CPU_SECONDS) -> Judgement:
    """Judge ``code`` on assert tests: split between the solution's sandbox and a checker's where
    :func:`assert_plan` can split them; otherwise each snippet runs after the solution in its process and
    passes if it raises nothing (which a solution can defeat: see the module docstring)."""
    plan = assert_plan(tests, setup, entry)
    if plan is None:
        execution = execute(sandbox, code, "asserts", list(tests), setup=setup, cpu=cpu)
        verdicts = [
            TestVerdict("pass", printed=o.printed)
            if o.status == "ok"
            else TestVerdict("wrong", o.detail, printed=o.printed)
            if o.status == "fail"
            else _not_passed(o)
            for o in execution.outcomes
        ]
        return _judgement(execution, verdicts)
    execution = execute(sandbox, code, "probes", [probes for _, probes in plan], setup=setup, cpu=cpu)
    ran = [index for index, outcome in enumerate(execution.outcomes) if outcome.status == "ok"]
    checked = dict(zip(ran, _check([(plan[i][0], execution.outcomes[i].raw) for i in ran], setup, sandbox.allow_unsafe))) if ran else {}
    verdicts = []
    for index, outcome in enumerate(execution.outcomes):
        if outcome.status != "ok":
            verdicts.append(_not_passed(outcome))
            continue
        status, detail = checked[index]
        got = show(outcome.value)
        verdicts.append(
            TestVerdict(
                {"pass": "pass", "fail": "wrong"}.get(status, "error"),
                detail if status == "error" else f"the calls gave {got}" if status == "fail" else "",
                got,
                outcome.printed,
            )
        )
    return _judgement(execution, verdicts)


def _number(token: str) -> float | None:
    if not any(mark in token for mark in ".eE"):
        return None
    try:
        value = float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def same_output(got: str, expected: str, tolerance: float = 1e-6) -> bool:
    """Whether a program's stdout matches the expected output: the same whitespace-separated tokens, tokens
    that are decimal numbers (a point or an exponent in the expected token) within ``tolerance``."""
    got_tokens, expected_tokens = got.split(), expected.split()
    if len(got_tokens) != len(expected_tokens):
        return False
    for g, e in zip(got_tokens, expected_tokens):
        if g == e:
            continue
        target = _number(e)
        if target is None:
            return False
        try:
            value = float(g)
        except ValueError:
            return False
        if not math.isclose(value, target, rel_tol=tolerance, abs_tol=tolerance):
            return False
    return True


def judge_stdio(sandbox: Sandbox, code: str, tests: Sequence[tuple[str, str]], tolerance: float = 1e-6, cpu: float = 2.0) -> Judgement:
    """Run the program once per test with its input on stdin and compare stdout token by token (on the host)."""
    limits = Limits(cpu_seconds=cpu, wall_seconds=max(10.0, 4 * cpu), memory_mb=512)
    # Compiled in the sandbox too: the host never parses an agent's program.
    check = sandbox.run(SYNTAX_CHECK, code, limits=JUDGE_LIMITS)
    if check.verdict != "ok":
        lines = check.stderr.strip().splitlines()
        detail = lines[-1][:500] if lines else _death(check)
        return Judgement("syntax_error", tuple(TestVerdict("not_run", "the program does not compile") for _ in tests), detail)
    verdicts = []
    stopped = False
    for stdin, expected in tests:
        if stopped:
            verdicts.append(TestVerdict("not_run", "not run after an earlier test ran out of time"))
            continue
        result = sandbox.run(code, stdin, limits=limits)
        if result.verdict == "timeout":
            verdicts.append(TestVerdict("timeout", "ran out of CPU time"))
            stopped = True
        elif result.verdict != "ok":
            tail = result.stderr.strip().splitlines()[-1:] if result.stderr.strip() else [result.verdict]
            verdicts.append(TestVerdict("error", tail[0][:300], result.stdout[:300]))
        elif same_output(result.stdout, expected, tolerance):
            verdicts.append(TestVerdict("pass", got=result.stdout[:300]))
        else:
            verdicts.append(TestVerdict("wrong", f"expected {show(expected, 200)}, got {show(result.stdout, 200)}", result.stdout[:300]))
    return Judgement(_verdict("ok", [v.status for v in verdicts]), tuple(verdicts))
