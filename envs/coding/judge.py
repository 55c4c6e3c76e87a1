"""Judging code in :mod:`parlour.sandbox`: run a program on tests and compare what it produced, outside the sandbox.

Three kinds of test, one per kind of task:

* ``function``: call ``entry(*args)`` once per test. A harness (:data:`HARNESS`) runs inside the sandbox:
  it compiles the solution as ``solution.py``, executes it under the name ``solution`` (so an ``if __name__
  == "__main__":`` block does not run), calls the function on every test's arguments with a CPU-time alarm
  per test, and writes back each return value in a tagged JSON encoding. The values are compared with the
  expected ones **here, on the host**, and the expected values never enter the sandbox, so a solution
  cannot forge a pass: whatever it writes back is judged as its answer. Equality is Python's ``==``, with
  floats compared to a relative and absolute tolerance of 1e-9.
* ``asserts``: HumanEval/MBPP-style test code (``assert f(2) == 4``, or HumanEval's ``check(candidate)``),
  run in the solution's own process after it, one snippet per test, as those suites' harnesses do. A
  solution can defeat such tests (an object equal to everything), which is why procgen tasks use
  ``function`` tests.
* ``stdio``: the program runs once per test with the test's input on stdin, in a process of its own; its
  stdout is compared token by token with the expected output, numbers that hold a decimal point or an
  exponent to a tolerance (default 1e-6, absolute or relative), everything else exactly.

After the first test that runs out of CPU time, the remaining tests are not run (they count as failed):
one endless loop costs one test's time limit, not all of them.

Verdicts: ``pass`` (every test passed), ``syntax_error`` (the code does not compile), ``timeout`` (a test,
or loading the module, ran out of time), ``runtime_error`` (the module failed to load, the function is
missing, or a test raised) and ``wrong_answer`` (everything ran, some result was wrong), in that order of
precedence after ``syntax_error``.

Determinism: verdicts replay because the limits are CPU time far above what the tasks need, the sandbox's
hash seed is fixed, and each judgement starts a fresh sandbox. A program that reads the clock, draws
unseeded random numbers, prints object addresses or catches ``BaseException`` around an endless loop can
still behave differently on replay; its record then fails to replay.

Scratch runs (an agent trying code) use one warm sandbox per process (:func:`warm_sandbox`, closed at
exit); judgements that count use :func:`fresh_sandbox`.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import math
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Sequence

from parlour.sandbox import Limits, RunResult, Sandbox, SandboxUnavailable

#: CPU seconds each test may use; procgen references need microseconds, so verdicts are far from the edge.
TEST_CPU_SECONDS = 1.0
#: Limits of a whole harness run (loading the module and every test).
JUDGE_LIMITS = Limits(cpu_seconds=10.0, wall_seconds=30.0, memory_mb=512)
#: Limits of an agent's scratch run.
SCRATCH_LIMITS = Limits(cpu_seconds=2.0, wall_seconds=10.0, memory_mb=512, max_output_bytes=1 << 18)
#: Marks the harness's result lines on its stdout, so the program's own output cannot be taken for them.
MARK = "\x1e"

#: Compiles the program on its stdin without running it.
SYNTAX_CHECK = "import sys\ncompile(sys.stdin.read(), 'main.py', 'exec')\n"

# The harness imports only builtin modules (``sys``, ``os``, ``_signal``): in a forked sandbox an import of
# ``json`` or ``signal`` costs more than the tests themselves.
HARNESS = r'''
import os, sys, _signal

MARK = "\x1e"
ESCAPES = {i: "\\u%04x" % i for i in range(32)}
ESCAPES[34] = '\\"'
ESCAPES[92] = "\\\\"
for _c in range(0xD800, 0xE000):
    ESCAPES[_c] = "\\u%04x" % _c
ARMED = [False]


class Timeout(BaseException):
    pass


def alarm(signum, frame):
    # Raises once per arming: the harness disarms before anything of its own can be interrupted.
    if ARMED[0]:
        ARMED[0] = False
        raise Timeout()


def encode(value, depth=0):
    if depth > 200:
        raise ValueError("the value is nested more than 200 levels deep")
    kind = type(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if kind is str:
        return '"' + value.translate(ESCAPES) + '"'
    if kind is float:
        return '{"f":"' + repr(value) + '"}'
    if kind is list:
        return "[" + ",".join([encode(item, depth + 1) for item in value]) + "]"
    if kind is tuple:
        return '{"t":[' + ",".join([encode(item, depth + 1) for item in value]) + "]}"
    if kind is dict:
        pairs = ["[" + encode(k, depth + 1) + "," + encode(v, depth + 1) + "]" for k, v in value.items()]
        return '{"d":[' + ",".join(pairs) + "]}"
    if kind is set or kind is frozenset:
        return '{"s":[' + ",".join([encode(item, depth + 1) for item in value]) + "]}"
    return '{"o":' + encode(kind.__name__) + "}"


def emit(text):
    data = (MARK + text + "\n").encode("utf-8", "surrogatepass")
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
    def __init__(self):
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
    except AssertionError as error:
        return "fail", describe(error)
    except BaseException as error:
        return "error", describe(error)
    return "ok", value


def main():
    payload = eval(sys.stdin.read(), {"__builtins__": {}, "set": set, "inf": float("inf"), "nan": float("nan")})
    seconds = payload["cpu"]
    _signal.signal(_signal.SIGPROF, alarm)
    try:
        code = compile(payload["code"], "solution.py", "exec")
    except BaseException as error:
        emit('["load","syntax",' + encode(describe(error)) + "]")
        return
    capture = Capture()
    sys.stdout = capture
    namespace = {"__name__": "solution"}
    status, value = guarded(lambda: exec(code, namespace), seconds)
    if status != "ok":
        emit('["load",' + encode(status) + "," + encode(value) + "]")
        return
    if payload["setup"]:
        status, value = guarded(lambda: exec(payload["setup"], namespace), seconds)
        if status != "ok":
            emit('["load","error",' + encode("the test setup failed: " + value) + "]")
            return
    if payload["mode"] == "call":
        function = namespace.get(payload["entry"])
        if not callable(function):
            emit('["load","missing",' + encode("solution.py defines no function " + payload["entry"]) + "]")
            return
    emit('["load","ok",""]')
    capture.take()
    for index, test in enumerate(payload["tests"]):
        if payload["mode"] == "call":
            status, value = guarded(lambda: function(*test), seconds)
        else:
            status, value = guarded(lambda: exec(test, dict(namespace)), seconds)
        printed = capture.take()
        if status == "ok" and payload["mode"] == "call":
            try:
                text = encode(value)
            except BaseException as error:
                status, text = "error", encode("the result cannot be reported: " + describe(error))
        else:
            text = encode(value if status != "ok" else "")
        emit("[" + str(index) + "," + encode(status) + "," + text + "," + encode(printed) + "]")
        if status == "timeout":
            return


main()
'''


class Opaque:
    """A returned value of a type the harness does not transport (an instance of a class): equal to nothing."""

    def __init__(self, type_name: str):
        self.type_name = type_name

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"<{self.type_name} object>"


def decode(value: Any) -> Any:
    """The Python value of the harness's tagged JSON (lists, tuples, dicts, sets, floats, other objects)."""
    if isinstance(value, list):
        return [decode(item) for item in value]
    if isinstance(value, dict):
        if "t" in value:
            return tuple(decode(item) for item in value["t"])
        if "d" in value:
            return {decode(k): decode(v) for k, v in value["d"]}
        if "s" in value:
            return {decode(item) for item in value["s"]}
        if "f" in value:
            return float(value["f"])
        return Opaque(str(value.get("o")))
    return value


def same(got: Any, expected: Any) -> bool:
    """Python's ``==``, except that floats agree to 1e-9 (relative or absolute), inside containers too."""
    if isinstance(expected, float) or isinstance(got, float):
        if isinstance(got, bool) or isinstance(expected, bool) or not isinstance(got, (int, float)) or not isinstance(expected, (int, float)):
            return False
        if math.isnan(expected) and math.isnan(got):
            return True
        return math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-9)
    if type(got) in (list, tuple) and type(expected) is type(got):
        return len(got) == len(expected) and all(same(g, e) for g, e in zip(got, expected))
    if type(got) is dict and type(expected) is dict:
        return got.keys() == expected.keys() and all(same(got[k], expected[k]) for k in expected)
    try:
        return bool(got == expected)
    except Exception:
        return False


def show(value: Any, limit: int = 300) -> str:
    """``repr(value)`` cut to ``limit`` characters, for messages."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class TestRun:
    """What one test did: ``status`` (``ok``, ``fail``, ``error``, ``timeout``, ``not_run``), the value it
    returned (``function`` tests), its wire text (hashed into records), an error message, what it printed."""

    status: str
    value: Any = None
    wire: str = ""
    detail: str = ""
    printed: str = ""


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


@dataclass(frozen=True)
class Judgement:
    """The verdict on a program over a list of tests (see the module docstring for the verdicts)."""

    verdict: str
    tests: tuple[TestVerdict, ...]
    detail: str = ""
    output_hash: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

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
        """The JSON-ready account kept in outcome details: verdict, counts, one letter per test, the output hash.

        Letters: ``P`` pass, ``W`` wrong, ``E`` error, ``T`` timeout, ``N`` not run.
        """
        letters = {"pass": "P", "wrong": "W", "error": "E", "timeout": "T", "not_run": "N"}
        return {
            "verdict": self.verdict,
            "passed": self.passed,
            "total": self.total,
            "tests": "".join(letters[test.status] for test in self.tests),
            "output_hash": self.output_hash,
            "detail": self.detail,
        }


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

def _payload(code: str, mode: str, tests: Sequence[Any], entry: str = "", setup: str = "", cpu: float = TEST_CPU_SECONDS) -> str:
    return repr({"code": code, "mode": mode, "entry": entry, "setup": setup, "tests": list(tests), "cpu": cpu})


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


def execute(sandbox: Sandbox, code: str, mode: str, tests: Sequence[Any], *, entry: str = "", setup: str = "",
            cpu: float = TEST_CPU_SECONDS, limits: Limits | None = None) -> Execution:
    """Run ``code`` in ``sandbox`` through the harness: ``mode`` ``"call"`` calls ``entry`` with each test's
    argument tuple; ``"asserts"`` executes each test's code after the solution (and ``setup``)."""
    result = sandbox.run(HARNESS, _payload(code, mode, tests, entry, setup, cpu), limits=limits or JUDGE_LIMITS)
    load, load_detail = "crash", ""
    outcomes: dict[int, TestRun] = {}
    for line in _lines(result.stdout):
        if not isinstance(line, list) or len(line) < 3:
            continue
        if line[0] == "load" and load == "crash":
            load, load_detail = str(line[1]), str(line[2])
        elif isinstance(line[0], int) and 0 <= line[0] < len(tests) and line[0] not in outcomes and len(line) == 4:
            status, wire_value, printed = str(line[1]), line[2], str(line[3])
            if status == "ok":
                try:
                    value = decode(wire_value)
                except (TypeError, ValueError, RecursionError):
                    outcomes[line[0]] = TestRun("error", detail="the result could not be read back", printed=printed)
                    continue
                outcomes[line[0]] = TestRun("ok", value, json.dumps(wire_value, ensure_ascii=False), printed=printed)
            else:
                outcomes[line[0]] = TestRun(status, detail=str(wire_value), printed=printed)
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


def _hash(parts: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()[:16]


def judge_function(sandbox: Sandbox, code: str, entry: str, tests: Sequence[tuple[tuple, Any]], cpu: float = TEST_CPU_SECONDS) -> Judgement:
    """Call ``entry`` on each test's arguments and compare with the expected value (on the host)."""
    execution = execute(sandbox, code, "call", [args for args, _ in tests], entry=entry, cpu=cpu)
    verdicts = []
    for outcome, (_, expected) in zip(execution.outcomes, tests):
        if outcome.status == "ok":
            if same(outcome.value, expected):
                verdicts.append(TestVerdict("pass", got=show(outcome.value), printed=outcome.printed))
            else:
                verdicts.append(TestVerdict("wrong", f"expected {show(expected)}, got {show(outcome.value)}", show(outcome.value), outcome.printed))
        else:
            verdicts.append(TestVerdict(outcome.status if outcome.status != "fail" else "error", outcome.detail, printed=outcome.printed))
    statuses = [v.status for v in verdicts]
    return Judgement(_verdict(execution.load, statuses), tuple(verdicts), execution.load_detail if execution.load != "ok" else "",
                     _hash([execution.load] + [f"{o.status}:{o.wire}" for o in execution.outcomes]))


def judge_asserts(sandbox: Sandbox, code: str, tests: Sequence[str], setup: str = "", cpu: float = TEST_CPU_SECONDS) -> Judgement:
    """Run each test snippet (asserts) after the solution; a snippet passes if it raises nothing."""
    execution = execute(sandbox, code, "asserts", list(tests), setup=setup, cpu=cpu)
    verdicts = []
    for outcome in execution.outcomes:
        if outcome.status == "ok":
            verdicts.append(TestVerdict("pass", printed=outcome.printed))
        elif outcome.status == "fail":
            verdicts.append(TestVerdict("wrong", outcome.detail, printed=outcome.printed))
        else:
            verdicts.append(TestVerdict(outcome.status, outcome.detail, printed=outcome.printed))
    statuses = [v.status for v in verdicts]
    return Judgement(_verdict(execution.load, statuses), tuple(verdicts), execution.load_detail if execution.load != "ok" else "",
                     _hash([execution.load] + [o.status for o in execution.outcomes]))


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


def judge_stdio(sandbox: Sandbox, code: str, tests: Sequence[tuple[str, str]], tolerance: float = 1e-6,
                cpu: float = 2.0) -> Judgement:
    """Run the program once per test with its input on stdin and compare stdout token by token."""
    limits = Limits(cpu_seconds=cpu, wall_seconds=max(10.0, 4 * cpu), memory_mb=512)
    # Compiled in the sandbox too: the host never parses an agent's program.
    check = sandbox.run(SYNTAX_CHECK, code, limits=JUDGE_LIMITS)
    if check.verdict != "ok":
        lines = check.stderr.strip().splitlines()
        detail = lines[-1][:500] if lines else _death(check)
        return Judgement("syntax_error", tuple(TestVerdict("not_run", "the program does not compile") for _ in tests), detail,
                         _hash(["syntax"]))
    verdicts = []
    wires = []
    stopped = False
    for stdin, expected in tests:
        if stopped:
            verdicts.append(TestVerdict("not_run", "not run after an earlier test ran out of time"))
            wires.append("not_run")
            continue
        result = sandbox.run(code, stdin, limits=limits)
        wires.append(f"{result.verdict}:{result.stdout}")
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
    statuses = [v.status for v in verdicts]
    return Judgement(_verdict("ok", statuses), tuple(verdicts), "", _hash(wires))
