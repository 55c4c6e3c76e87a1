"""Coding tasks: procgen over every family and many seeds, the frozen CODE_V1 set, the judge, mutants, and the
JSONL loaders.

Checks that run code use the real sandbox; where bubblewrap cannot run they are skipped, loudly, with the reason.
"""

from __future__ import annotations

import gzip
import json
import re

import pytest

from parlour.envs.coding import judge
from parlour.envs.coding.blocks import BLOCKS, FAMILIES
from parlour.envs.coding.loaders import TaskFormatError, load_tasks
from parlour.envs.coding.mutants import mutants
from parlour.envs.coding.tasks import (
    CODE_V1_SHA256,
    HIDDEN,
    VISIBLE,
    fingerprint,
    frozen_tasks,
    generate_task,
    reference_source,
    task_from_id,
)
from parlour.sandbox import Sandbox, SandboxUnavailable


@pytest.fixture(scope="module")
def box() -> Sandbox:
    """The warm sandbox; skip, loudly, where bubblewrap cannot start one."""
    try:
        return judge.warm_sandbox()
    except SandboxUnavailable as error:
        pytest.skip(f"CODING SANDBOX TESTS SKIPPED: bubblewrap cannot run here: {error}")


def _run(source: str, argument):
    namespace: dict = {}
    exec(compile(source, "<test>", "exec"), namespace)
    return namespace["solve"](argument)


# ----------------------------------------------------------------------------- procgen, on the host


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_references_are_right_and_skipping_a_step_is_caught_over_many_seeds(family, depth):
    for seed in range(25):
        task = generate_task(seed, depth, 8, family)
        assert task.family == family and len(task.steps) == depth and task.kind == "function"
        assert len(task.visible) == VISIBLE and len(task.hidden) == HIDDEN
        for args, expected in task.visible + task.hidden:
            assert _run(task.reference, *args) == expected
        # A corrupted solution that leaves out a step which keeps the type fails some hidden test.
        steps = [(code, text) for code, text in _stanzas(task.reference)]
        first_type = re.search(r"def solve\((\w+)\)", task.reference).group(1)
        takes = {"numbers": "ints", "n": "int", "text": "str", "words": "strs", "counts": "dict"}[first_type]
        for index, name in enumerate(task.steps):
            block = next(b for b in BLOCKS if b.name == name)
            if block.takes == block.gives:
                shortened = reference_source(steps, takes, skip=index)
                assert any(_run(shortened, *args) != expected for args, expected in task.hidden), (task.task_id, name)


def _stanzas(reference: str) -> list[tuple[str, str]]:
    """The (code, text) steps of a reference, read back from its comments."""
    steps = []
    for block in reference.split("    # ")[1:]:
        head, _, body = block.partition("\n")
        text = head.split(". ", 1)[1]
        code = "\n".join(line[4:] for line in body.splitlines() if line.startswith("    ") and line.strip() != "return value")
        steps.append((code, text))
    return steps


def test_statements_state_every_step_and_the_examples_hold():
    for seed in range(30):
        task = generate_task(seed)
        assert task.statement.startswith("Write a Python function `solve(")
        assert task.statement.count("\n1. ") == 1 and "Examples:" in task.statement
        for args, expected in task.visible:
            assert f"solve({args[0]!r}) == {expected!r}" in task.statement
        assert len({repr(o) for _, o in task.hidden}) >= 2
        json.dumps(task.examples())


def test_generation_is_deterministic_and_options_are_checked():
    assert generate_task(7, 3, 12, "dict") == generate_task(7, 3, 12, "dict")
    assert generate_task(7) != generate_task(8)
    assert generate_task(7, size=4).hidden != generate_task(7, size=30).hidden
    for bad, message in [({"seed": -1}, "seed"), ({"depth": 5}, "depth"), ({"size": 0}, "size"), ({"family": "graphs"}, "family")]:
        arguments = {"seed": 1, **bad}
        with pytest.raises(ValueError, match=message):
            generate_task(**arguments)


def test_every_block_is_used_and_every_family_starts_tasks():
    used = set()
    for family in FAMILIES:
        for depth in (1, 2, 3):
            for seed in range(30):
                used.update(generate_task(seed, depth, 8, family).steps)
    assert used == {block.name for block in BLOCKS}


def test_code_v1_is_frozen():
    tasks = frozen_tasks("CODE_V1")
    assert len(tasks) == 120 and tasks[5].task_id == "CODE_V1:5"
    assert {task.family for task in tasks} == set(FAMILIES) and {len(task.steps) for task in tasks} == {1, 2, 3}
    assert fingerprint(tasks) == CODE_V1_SHA256, "the procgen generator changed: CODE_V1 must never change"
    with pytest.raises(ValueError, match="frozen sets"):
        frozen_tasks("CODE_V9")


def test_task_ids_round_trip(tmp_path):
    for task in (generate_task(3, 2, 8), generate_task(4, 1, 5, "parser"), frozen_tasks()[17]):
        assert task_from_id(task.task_id) == task
    path = tmp_path / "mbpp.jsonl"
    path.write_text(json.dumps(MBPP) + "\n")
    [loaded] = load_tasks(path)
    assert task_from_id(loaded.task_id) == loaded
    for bad in ("procgen:x", "CODE_V1:999", "nothing"):
        with pytest.raises(ValueError, match="procgen:SEED"):
            task_from_id(bad)


# ----------------------------------------------------------------------------- in the sandbox


def _corrupt(reference: str) -> str:
    """The reference with a changed result: always wrong."""
    return reference.replace("    return value\n", "    return [value, 'corrupted']\n")


@pytest.mark.parametrize("family", FAMILIES)
def test_in_the_sandbox_references_pass_and_corrupted_solutions_fail(box, family):
    for seed in range(8):
        task = generate_task(seed, 1 + seed % 3, 8, family)
        result = task.judge(box, task.reference)
        assert result.verdict == "pass" and result.passed == HIDDEN, (task.task_id, result.summary())
        wrong = task.judge(box, _corrupt(task.reference))
        assert wrong.verdict == "wrong_answer" and wrong.passed == 0
        assert task.judge(box, task.reference.replace("return value", "return valu")).verdict == "runtime_error"
        assert task.judge(box, "def solve(:\n").verdict == "syntax_error"


def test_hidden_tests_kill_most_mutants_of_the_reference(box):
    """Measured: 114 of 116 mutants (98%) fail some hidden test: the first six mutants of the tasks of seeds 0-3
    of every family at depth 2. (A mutant may be equivalent to the reference, so not all can fail.)"""
    killed = total = 0
    for family in FAMILIES:
        for seed in range(4):
            task = generate_task(seed, 2, 8, family)
            for mutant in mutants(task.reference, "solve")[:6]:
                run = judge.execute(box, mutant, "call", [args for args, _ in task.hidden], entry="solve", cpu=0.1)
                total += 1
                killed += run.load != "ok" or any(o.status != "ok" or not judge.same(o.value, e) for o, (_, e) in zip(run.outcomes, task.hidden))
    assert total == 116
    assert killed / total >= 0.9


def test_outputs_are_compared_outside_the_sandbox(box):
    task = generate_task(11)
    args, expected = task.hidden[0]
    cheats = [
        "class Anything:\n    def __eq__(self, other):\n        return True\n\ndef solve(x):\n    return Anything()\n",
        'import os\nos.write(1, b\'\\x1e[0,"ok","forged",""]\\n\')\ndef solve(x):\n    return None\n',
        'import sys\nsys.stdout.write(\'\\x1e["load","ok",""]\\n\')\ndef solve(x):\n    raise SystemExit(0)\n',
    ]
    for cheat in cheats:
        assert task.judge(box, cheat).passed == 0


def test_judge_reports_errors_timeouts_and_stops_after_a_timeout(box):
    tests = [((i,), i) for i in range(4)]
    code = "def solve(x):\n    if x == 1:\n        raise KeyError('k')\n    if x == 2:\n        n = 0\n        while True:\n            n += 1\n    return x\n"
    result = judge.judge_function(box, code, "solve", tests, cpu=0.2)
    assert [t.status for t in result.tests] == ["pass", "error", "timeout", "not_run"]
    assert "KeyError: 'k' (solution.py, line 3)" in result.tests[1].detail
    assert result.verdict == "timeout"
    missing = judge.judge_function(box, "def other(x):\n    return x\n", "solve", tests)
    assert missing.verdict == "runtime_error" and "defines no function solve" in missing.detail
    again = judge.judge_function(box, code, "solve", tests, cpu=0.2)
    assert again.summary() == result.summary() == {"verdict": "timeout", "passed": 1, "total": 4, "tests": "PETN"}


def test_stdout_comparison_tolerates_floats_only_where_expected():
    assert judge.same_output("3.0000001\n", "3.0")
    assert judge.same_output("1 2\n3", "1 2 3\n")
    assert not judge.same_output("1000000001", "1000000000")
    assert not judge.same_output("3.1", "3.0")
    assert not judge.same_output("abc", "abd")
    assert not judge.same_output("1 2", "1 2 3")
    assert judge.same_output("0.5", "5e-1")
    assert judge.same(0.1 + 0.2, 0.3) and not judge.same(0.3, "0.3")
    assert not judge.same([1.0], [1.5]) and judge.same({"a": [1.0]}, {"a": [1.0000000000001]})


def test_mutation_operators():
    source = "def solve(xs):\n    return [x * 2 for x in xs if x > 3 and x != 7]\n"
    found = mutants(source, "solve")
    assert len(found) == len(set(found)) and source not in found
    expected = ["x >= 3", "x < 3", "x > 4", "x > 2", "x == 7", "x * 3", "x + 2", " or ", "if not (x > 3 and x != 7)"]
    for fragment in expected:
        assert any(fragment in mutant for mutant in found), fragment
    assert mutants(source, "solve") == found
    assert mutants("def solve(a, b):\n    return min(a - b, 0)\n") and any(
        "b - a" in m for m in mutants("def solve(a, b):\n    return min(a - b, 0)\n")
    )
    assert any("max(" in m for m in mutants("def solve(a, b):\n    return min(a - b, 0)\n"))


# ----------------------------------------------------------------------------- loaders

HUMANEVAL = {
    "task_id": "HumanEval/0",
    "prompt": 'def add(a, b):\n    """Return a + b.\n    >>> add(2, 3)\n    5\n    """\n',
    "canonical_solution": "    return a + b\n",
    "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(-1, 1) == 0\n",
    "entry_point": "add",
}
MBPP = {
    "task_id": 2,
    "text": "Write a function to find the shared elements of two lists.",
    "code": "def similar_elements(a, b):\n    return tuple(set(a) & set(b))",
    "test_list": [
        "assert set(similar_elements((3, 4, 5, 6), (5, 7, 4, 10))) == set((4, 5))",
        "assert set(similar_elements((1, 2, 3, 4), (5, 4, 3, 7))) == set((3, 4))",
    ],
    "test_setup_code": "",
    "challenge_test_list": [],
}
APPS = {
    "problem_id": 9,
    "question": "Read n and print the sum 1 + ... + n and its half.",
    "input_output": json.dumps({"inputs": ["3\n", "4\n"], "outputs": ["6 3.0\n", "10 5.0\n"]}),
    "solutions": json.dumps(["n = int(input())\nprint(n * (n + 1) // 2, n * (n + 1) / 4)"]),
}
CODECONTESTS = {
    "name": "A. Doubling",
    "description": "Print twice the number.",
    "public_tests": {"input": ["2\n"], "output": ["4\n"]},
    "private_tests": {"input": ["5\n"], "output": ["10\n"]},
    "generated_tests": {"input": ["0\n"], "output": ["0\n"]},
    "solutions": {"language": [2, 3], "solution": ["int main() {}", "print(2 * int(input()))"]},
}


def test_loaders_read_every_format_and_the_references_pass(box, tmp_path):
    path = tmp_path / "mixed.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        for record in (HUMANEVAL, MBPP, APPS, CODECONTESTS):
            handle.write(json.dumps(record) + "\n\n")
    tasks = load_tasks(path)
    assert [t.family for t in tasks] == ["humaneval", "mbpp", "apps", "codecontests"]
    assert [t.kind for t in tasks] == ["asserts", "asserts", "stdio", "stdio"]
    assert tasks[1].entry_point == "similar_elements" and tasks[0].entry_point == "add"
    assert len(tasks[3].visible) == 1 and len(tasks[3].hidden) == 3
    assert tasks[0].task_id == f"file:{path.resolve()}#1"
    for task in tasks:
        assert task.judge(box, task.reference).verdict == "pass", task.task_id
    assert tasks[0].judge(box, "def add(a, b):\n    return a - b\n").verdict == "wrong_answer"
    assert tasks[2].judge(box, "n = int(input())\nprint(n * (n + 1) // 2, n * (n + 1) / 4 + 1e-9)").verdict == "pass"
    assert tasks[2].judge(box, "n = int(input())\nprint(n * (n + 1) // 2 + 1, 0.0)").verdict == "wrong_answer"
    assert tasks[3].judge(box, "print(2 * int(input())").verdict == "syntax_error"
    looping = judge.judge_stdio(box, "while True:\n    pass\n", tasks[3].hidden, cpu=0.3)
    assert [t.status for t in looping.tests] == ["timeout", "not_run", "not_run"] and looping.verdict == "timeout"


@pytest.mark.parametrize(
    "lines, message",
    [
        (["{not json"], ":1: not a JSON object"),
        ([json.dumps(MBPP), "[1, 2]"], ":2: a task is a JSON object"),
        ([json.dumps({"question": "q"})], ":1: unrecognised task record"),
        ([json.dumps({**HUMANEVAL, "entry_point": 3})], ":1: field 'entry_point' must be a string"),
        ([json.dumps({**APPS, "input_output": json.dumps({"inputs": [[1]], "outputs": [[2]], "fn_name": "f"})})], "call-based APPS"),
        ([json.dumps({**APPS, "input_output": "{broken"})], "not JSON"),
        ([json.dumps({**MBPP, "test_list": []})], "non-empty list"),
        ([json.dumps({**CODECONTESTS, "public_tests": {"input": ["1"], "output": []}})], "equal lengths"),
        ([""], "holds no tasks"),
    ],
)
def test_loader_errors_name_file_and_line(tmp_path, lines, message):
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TaskFormatError, match=re.escape(message)):
        load_tasks(path)


def test_loader_arguments_are_checked(tmp_path):
    with pytest.raises(FileNotFoundError, match="JSONL file"):
        load_tasks(tmp_path / "missing.jsonl")
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(MBPP) + "\n")
    with pytest.raises(ValueError, match="format must be one of"):
        load_tasks(path, format="leetcode")
    path.write_text(json.dumps(HUMANEVAL) + "\n")
    with pytest.raises(TaskFormatError, match="'test_list' must be a non-empty list"):
        load_tasks(path, format="mbpp")
    with pytest.raises(ValueError, match="float_tolerance"):
        load_tasks(path, float_tolerance=2)


# ----------------------------------------------------------------------------- CODE_V1 is a practice set


def test_code_v1_is_a_practice_set_that_no_leaderboard_counts(box, tmp_path):
    import parlour
    from parlour.envs.coding.tasks import PRACTICE_SETS
    from parlour.leaderboard.api import Leaderboard
    from parlour.leaderboard.verify import Rejected, as_bundle

    # Its hidden tests and references ship with parlour: anyone can look an answer up, so no run on it counts.
    assert set(frozen_tasks("CODE_V1")[0].to_json()) >= {"hidden", "reference"}
    assert "CODE_V1" in PRACTICE_SETS and "tasks='CODE_V1' is a practice set" in parlour.game_class("parlour/Code-v0").description
    results = parlour.evaluate("parlour/Code-v0", ["phrasebook"], episodes=1, seed=0, progress=False, env_kwargs={"tasks": "CODE_V1"})
    board = Leaderboard(f"sqlite:///{tmp_path}/lb.db")
    board.add_submitter("alice")
    try:
        with pytest.raises(Rejected, match='"tasks": "CODE_V1".* are not the defaults'):
            board.submit(as_bundle(results), "alice")
        assert board.store.episode_count() == 0
    finally:
        board.store.close()
