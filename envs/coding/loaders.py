"""Coding tasks from the user's own JSONL files, in the common formats; nothing is ever downloaded.

``load_tasks(path)`` reads one JSON object per line (blank lines are skipped; a ``.gz`` file is
decompressed) and recognises each record's format by its fields:

* HumanEval (``prompt``, ``entry_point``, ``test``; ``canonical_solution`` optional): complete the function
  in ``prompt``; each assert of the record's ``check(candidate)`` is one test (:func:`split_check`), the
  code around it their setup; where ``check`` holds more than asserts, the test is the whole ``test`` code
  followed by ``check(<entry_point>)``. No visible tests (the examples are in the prompt's docstring).
  Reference: ``prompt + canonical_solution``.
* MBPP (``text`` or ``prompt``, ``test_list``; ``code``, ``test_setup_code``, ``challenge_test_list``
  optional): the statement is the text and the first test; each assert of ``test_list`` (and of
  ``challenge_test_list``) is one hidden test, the first one also visible. The function's name is the one
  the first assert calls. Reference: ``code``.
* APPS (``question``, ``input_output``; ``solutions``, ``starter_code`` optional): stdin to stdout;
  ``input_output`` (a JSON object or its text) holds ``inputs`` and ``outputs``; the first test is
  visible, all of them are hidden tests. Call-based problems (``fn_name``) are refused with a clear error.
  Reference: the first of ``solutions``.
* CodeContests (``description``, and ``public_tests``, ``private_tests`` or ``generated_tests``, each
  ``{"input": [...], "output": [...]}``): stdin to stdout; the public tests are visible, all tests hidden.
  Reference: the first Python 3 solution (``solutions.language`` 3), if any.

``format=`` forces one format for every record. stdin→stdout tasks compare decimal numbers with
``float_tolerance`` (default 1e-6). Every error names the file and line. HumanEval and MBPP asserts are
split between the solution's sandbox and a checker it cannot reach where they can be; the others run in the
solution's own process, as those suites' harnesses do, and a solution can defeat them (see
:mod:`parlour.envs.coding.judge`; :attr:`Task.host_checked <parlour.envs.coding.task.Task.host_checked>`).

Task ids are ``file:<absolute path>#<line>``; :func:`task_from_file_id` reads the task back.
"""

from __future__ import annotations

import ast
import functools
import gzip
import json
import os
import re
from pathlib import Path
from typing import Any

from parlour.envs.coding.task import Task

FORMATS = ("humaneval", "mbpp", "apps", "codecontests")
#: CodeContests' code for Python 3 in ``solutions.language``.
CODECONTESTS_PYTHON3 = 3


class TaskFormatError(ValueError):
    """A task file that cannot be read: the message starts with ``file:line``."""


def _detect(record: dict[str, Any]) -> str | None:
    if "test_list" in record:
        return "mbpp"
    if "entry_point" in record and "test" in record and "prompt" in record:
        return "humaneval"
    if "input_output" in record:
        return "apps"
    if any(key in record for key in ("public_tests", "private_tests", "generated_tests")):
        return "codecontests"
    return None


def _text(record: dict[str, Any], key: str, where: str) -> str:
    value = record.get(key)
    if not isinstance(value, str):
        raise TaskFormatError(f"{where}: field {key!r} must be a string, got {type(value).__name__}")
    return value


def split_check(test: str, entry: str) -> tuple[str, tuple[str, ...]] | None:
    """HumanEval test code as ``(setup, asserts)``: the code around ``def check(candidate)`` becomes the setup
    and each assert of its body one test, with ``candidate`` renamed ``entry`` (asserts that do not call it,
    such as ``assert True``, test nothing and are left out). None where the body holds anything but asserts
    (loops, local variables), or test code too deeply nested to analyse: such a test runs whole, in the
    solution's process."""
    try:
        return _split_check(test, entry)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _split_check(test: str, entry: str) -> tuple[str, tuple[str, ...]] | None:
    """:func:`split_check`, raising where the test code does not parse or is too deep to analyse."""
    module = ast.parse(test)
    checks = [s for s in module.body if isinstance(s, ast.FunctionDef) and s.name == "check"]
    if len(checks) != 1 or len(checks[0].args.args) != 1 or checks[0].args.vararg or checks[0].args.kwonlyargs:
        return None
    check = checks[0]
    parameter = check.args.args[0].arg
    asserts = []
    for statement in check.body:
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            continue
        if not isinstance(statement, ast.Assert):
            return None
        names = [node for node in ast.walk(statement.test) if isinstance(node, ast.Name)]
        if not any(node.id == parameter for node in names):
            continue
        for node in names:
            if node.id == parameter:
                node.id = entry
        asserts.append(ast.unparse(ast.Assert(statement.test)))
    calls_check = [
        s
        for s in module.body
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Name) and s.value.func.id == "check"
    ]
    setup = [s for s in module.body if s is not check and s not in calls_check]
    return (ast.unparse(ast.Module(setup, [])), tuple(asserts)) if asserts else None


def _humaneval(record: dict[str, Any], where: str, task_id: str, tolerance: float) -> Task:
    prompt, entry, test = _text(record, "prompt", where), _text(record, "entry_point", where), _text(record, "test", where)
    if not entry.isidentifier():
        raise TaskFormatError(f"{where}: entry_point {entry!r} is not a Python name")
    solution = record.get("canonical_solution")
    statement = f"Complete this Python function (write the whole function, with any imports it needs):\n\n```python\n{prompt.rstrip()}\n```"
    setup, tests = split_check(test, entry) or ("", (f"{test}\ncheck({entry})\n",))
    return Task(task_id, "asserts", "humaneval", statement, entry, (), tests, prompt + solution if isinstance(solution, str) else "", setup=setup)


#: Calls that wrap the tested function in MBPP asserts (``assert set(f(x)) == ...``, ``math.isclose(f(x), y)``).
_WRAPPERS = frozenset({"set", "sorted", "list", "tuple", "abs", "round", "str", "int", "float", "len", "isclose", "all", "any"})


def _mbpp(record: dict[str, Any], where: str, task_id: str, tolerance: float) -> Task:
    text = record.get("text", record.get("prompt"))
    if not isinstance(text, str):
        raise TaskFormatError(f"{where}: an MBPP record needs a string 'text' (or 'prompt')")
    tests = record.get("test_list")
    challenge = record.get("challenge_test_list") or []
    if not isinstance(tests, list) or not tests or not all(isinstance(t, str) for t in tests + list(challenge)):
        raise TaskFormatError(f"{where}: 'test_list' must be a non-empty list of assert strings")
    names = re.findall(r"([A-Za-z_][\w.]*)\s*\(", tests[0])
    entry = next((name for name in names if "." not in name and name not in _WRAPPERS), "")
    if not entry:
        raise TaskFormatError(f"{where}: cannot tell which function the first test calls: {tests[0][:120]!r}")
    setup = record.get("test_setup_code") or ""
    if not isinstance(setup, str):
        raise TaskFormatError(f"{where}: 'test_setup_code' must be a string")
    statement = f"{text.strip()}\nWrite the Python function `{entry}`. Your code should pass this test:\n    {tests[0].strip()}"
    code = record.get("code")
    return Task(
        task_id, "asserts", "mbpp", statement, entry, (tests[0],), tuple(tests) + tuple(challenge), code if isinstance(code, str) else "", setup=setup
    )


def _json_field(record: dict[str, Any], key: str, where: str) -> Any:
    value = record.get(key)
    if isinstance(value, str):
        try:
            return json.loads(value) if value.strip() else None
        except ValueError as error:
            raise TaskFormatError(f"{where}: field {key!r} holds text that is not JSON ({error})") from None
    return value


def _io_text(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        return "\n".join(value)
    raise TaskFormatError(f"{where}: a test input or output must be text (or a list of lines), got {type(value).__name__}")


def _apps(record: dict[str, Any], where: str, task_id: str, tolerance: float) -> Task:
    question = _text(record, "question", where)
    io = _json_field(record, "input_output", where)
    if not isinstance(io, dict) or not isinstance(io.get("inputs"), list) or not isinstance(io.get("outputs"), list):
        raise TaskFormatError(f"{where}: 'input_output' must hold lists 'inputs' and 'outputs'")
    if io.get("fn_name"):
        raise TaskFormatError(
            f"{where}: call-based APPS problems (fn_name {io['fn_name']!r}) are not supported; keep the stdin/stdout problems of the file"
        )
    if len(io["inputs"]) != len(io["outputs"]) or not io["inputs"]:
        raise TaskFormatError(f"{where}: 'input_output' needs as many outputs as inputs, and at least one")
    tests = tuple((_io_text(i, where), _io_text(o, where)) for i, o in zip(io["inputs"], io["outputs"]))
    solutions = _json_field(record, "solutions", where) or []
    reference = solutions[0] if isinstance(solutions, list) and solutions and isinstance(solutions[0], str) else ""
    statement = f"{question.strip()}\n\nWrite a Python program that reads the input from stdin and prints the answer to stdout."
    return Task(task_id, "stdio", "apps", statement, "", tests[:1], tests, reference, tolerance=tolerance)


def _contest_tests(record: dict[str, Any], key: str, where: str) -> tuple[tuple[str, str], ...]:
    block = record.get(key) or {"input": [], "output": []}
    if (
        not isinstance(block, dict)
        or not isinstance(block.get("input"), list)
        or not isinstance(block.get("output"), list)
        or len(block["input"]) != len(block["output"])
    ):
        raise TaskFormatError(f'{where}: {key!r} must be {{"input": [...], "output": [...]}} of equal lengths')
    return tuple((_io_text(i, where), _io_text(o, where)) for i, o in zip(block["input"], block["output"]))


def _codecontests(record: dict[str, Any], where: str, task_id: str, tolerance: float) -> Task:
    description = _text(record, "description", where)
    public = _contest_tests(record, "public_tests", where)
    hidden = public + _contest_tests(record, "private_tests", where) + _contest_tests(record, "generated_tests", where)
    if not hidden:
        raise TaskFormatError(f"{where}: the record has no tests")
    solutions = record.get("solutions") or {}
    reference = ""
    if isinstance(solutions, dict) and isinstance(solutions.get("language"), list) and isinstance(solutions.get("solution"), list):
        reference = next(
            (
                code
                for language, code in zip(solutions["language"], solutions["solution"])
                if language == CODECONTESTS_PYTHON3 and isinstance(code, str)
            ),
            "",
        )
    statement = f"{description.strip()}\n\nWrite a Python program that reads the input from stdin and prints the answer to stdout."
    return Task(task_id, "stdio", "codecontests", statement, "", public, hidden, reference, tolerance=tolerance)


READERS = {"humaneval": _humaneval, "mbpp": _mbpp, "apps": _apps, "codecontests": _codecontests}


def load_tasks(path: str | os.PathLike[str], format: str | None = None, float_tolerance: float = 1e-6) -> list[Task]:
    """The tasks of a JSONL file (see the module docstring); :class:`TaskFormatError` naming file and line otherwise."""
    if format is not None and format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)} or None (detect per record), got {format!r}")
    if not isinstance(float_tolerance, (int, float)) or isinstance(float_tolerance, bool) or not 0 <= float_tolerance < 1:
        raise ValueError(f"float_tolerance must be a number from 0 to 1, got {float_tolerance!r}")
    file = Path(path).expanduser().resolve()
    if not file.is_file():
        raise FileNotFoundError(f"no task file {str(path)!r}: give the path of a JSONL file of HumanEval, MBPP, APPS or CodeContests records")
    opener = gzip.open if file.suffix == ".gz" else open
    tasks = []
    with opener(file, "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            where = f"{file}:{number}"
            try:
                record = json.loads(line)
            except ValueError as error:
                raise TaskFormatError(f"{where}: not a JSON object ({error})") from None
            if not isinstance(record, dict):
                raise TaskFormatError(f"{where}: a task is a JSON object, got {type(record).__name__}")
            kind = format or _detect(record)
            if kind is None:
                raise TaskFormatError(
                    f"{where}: unrecognised task record with fields {sorted(record)[:8]}; expected HumanEval "
                    "(prompt, entry_point, test), MBPP (text, test_list), APPS (question, input_output) "
                    "or CodeContests (description, public_tests)"
                )
            tasks.append(READERS[kind](record, where, f"file:{file}#{number}", float(float_tolerance)))
    if not tasks:
        raise TaskFormatError(f"{file}: the file holds no tasks")
    return tasks


@functools.lru_cache(maxsize=8)
def _cached(path: str, mtime: float) -> tuple[Task, ...]:
    return tuple(load_tasks(path))


def file_tasks(path: str | os.PathLike[str]) -> tuple[Task, ...]:
    """The tasks of a JSONL file, read once and again only when the file changes (environments draw from it every episode)."""
    resolved = str(Path(path).expanduser().resolve())
    return _cached(resolved, os.path.getmtime(resolved))


def task_from_file_id(task_id: str) -> Task:
    """The task ``file:PATH#LINE`` (the file is read again if it changed)."""
    path, _, _line = task_id[len("file:") :].rpartition("#")
    if not path:
        raise ValueError(f"a file task id is file:PATH#LINE, got {task_id!r}")
    for task in file_tasks(path):
        if task.task_id == task_id:
            return task
    raise ValueError(f"{path} holds no task at {task_id!r}")
