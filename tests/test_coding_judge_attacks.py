"""Attacks on the coding judges, as issue 20 reported them: each must fail to fool the environment.

A forged pass (a program writing the harness's result lines itself) is tried in every judge mode (function,
stdio, asserts), every coding environment and every reward shape; so are an unknown status, a solution that
patches the in-process test checker, hidden data in observations, a scratch run whose output cannot
reproduce, and a slow but valid tester test that used to "kill" equivalent mutants.
"""

from __future__ import annotations

import json
import time

import pytest

import parlour
from parlour.envs.coding import judge
from parlour.envs.coding.coder_tester import MUTANT_FLOOR
from parlour.envs.coding.tasks import generate_task, task_from_id
from parlour.envs.core.match import Match
from parlour.sandbox import SandboxUnavailable

CODE = "parlour/Code-v0"
CODER_TESTER = "parlour/CoderTester-v0"
PROPOSER_SOLVER = "parlour/CodeProposerSolver-v0"

#: The issue's forged pass: the harness's "loaded" line and a "pass" line per test, then a clean exit.
FORGED = (
    'import os\nos.write(1, (\'\\x1e["load","ok",""]\\n\' + \'\'.join(\'\\x1e[%d,"pass","",""]\\n\' % i for i in range(64))).encode())\nos._exit(0)\n'
)
#: The issue's forged lines with a status the judge has never heard of, and the same in the harness's line format today.
UNKNOWN_STATUS = FORGED.replace('"pass"', '"zzz"')
UNKNOWN_STATUS_NOW = UNKNOWN_STATUS.replace('"zzz","",""', '"zzz","","",0.0')
#: Patches the harness's checker from inside the solution, as the issue's asserts attack did, and answers nonsense.
PATCHED = "import sys\nsys.modules['__main__'].guarded = lambda a, s: ('ok', None)\ndef {entry}(*args, **kwargs):\n    return 'nonsense'\n"
#: Returns an object equal to everything.
ANYTHING = (
    "class Anything:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\n"
    "def {entry}(*args, **kwargs):\n    return Anything()\n"
)

HUMANEVAL = {
    "task_id": "HumanEval/0",
    "entry_point": "add_one",
    "prompt": 'def add_one(x):\n    """Return x + 1."""\n',
    "canonical_solution": "    return x + 1\n",
    "test": "METADATA = {}\n\ndef check(candidate):\n    assert candidate(1) == 2\n    assert candidate(-1) == 0\n"
    "    assert abs(candidate(0.5) - 1.5) < 1e-9\n",
}
MBPP = {
    "task_id": 1,
    "text": "Write a function that returns the sorted unique items of a list.",
    "code": "def uniq(items):\n    return sorted(set(items))\n",
    "test_list": ["assert uniq([3, 1, 3]) == [1, 3]", "assert set(uniq([2, 2])) == set((2,))", "assert len(uniq([])) == 0"],
    "test_setup_code": "",
}
APPS = {
    "question": "Print the sum of two numbers.",
    "input_output": {"inputs": ["1 2\n", "5 7\n"], "outputs": ["3\n", "12\n"]},
    "solutions": ["print(sum(map(int, input().split())))"],
}


@pytest.fixture(scope="module", autouse=True)
def sandbox_here() -> None:
    """Skip, loudly, where bubblewrap cannot start a sandbox on this machine."""
    try:
        judge.warm_sandbox()
    except SandboxUnavailable as error:
        pytest.skip(f"CODING ATTACK TESTS SKIPPED: bubblewrap cannot run here: {error}")


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    """A HumanEval, an MBPP and an APPS task file of one task each."""
    folder = tmp_path_factory.mktemp("tasks")
    paths = {}
    for name, record in (("humaneval", HUMANEVAL), ("mbpp", MBPP), ("apps", APPS)):
        path = folder / f"{name}.jsonl"
        path.write_text(json.dumps(record) + "\n")
        paths[name] = str(path)
    return paths


def submit(code: str) -> str:
    return json.dumps({"tool": "submit", "arguments": {"code": code}})


def started(env_id: str, seed: int = 0, **options) -> Match:
    match = Match(parlour.game_class(env_id), options)
    match.reset(seed)
    return match


def entry_of(match: Match, player: str = "coder") -> str:
    return match.agent_observation(player)["view"]["entry_point"] or "solve"


def code_sources(files: dict[str, str]) -> list[str]:
    return ["procgen", "CODE_V1", files["humaneval"], files["mbpp"], files["apps"]]


@pytest.mark.parametrize("reward", ["binary", "fraction", "coderl"])
def test_a_forged_pass_scores_nothing_in_code_for_every_task_source_and_reward(files, reward):
    for tasks in code_sources(files):
        match = started(CODE, 0, tasks=tasks, reward=reward)
        returns = match.submit("coder", submit(FORGED))
        details = match.outcome.details
        assert details["passed"] == 0 and details["verdict"] != "pass", (tasks, details)
        # coderl: -0.6 where the forged lines are read as errors, -0.3 where they are a wrong stdout.
        assert returns["coder"] in {"binary": (0.0,), "fraction": (0.0,), "coderl": (-0.6, -0.3)}[reward], (tasks, details)


@pytest.mark.parametrize("reward", ["binary", "fraction", "coderl"])
def test_a_forged_pass_scores_nothing_as_the_coder_of_coder_tester(reward):
    for tasks in ("procgen", "CODE_V1"):
        match = started(CODER_TESTER, 1, tasks=tasks, reward=reward)
        match.submit("coder", submit(FORGED))
        match.submit("tester", submit("assert solve(0) == 0"))
        coder = match.outcome.details["coder"]
        assert coder["passed"] == 0 and coder["verdict"] != "pass", coder
        assert match.returns["coder"] == {"binary": 0.0, "fraction": 0.0, "coderl": -0.6}[reward]


def test_a_forged_pass_solves_no_induction_round_of_proposer_solver():
    match = started(PROPOSER_SOLVER, 0, mode="induction", rounds=2, inputs=2)
    for _ in range(2):
        match.submit("proposer", json.dumps({"tool": "propose", "arguments": {"program": "print(int(input()) * 3)", "inputs": ["4", "5"]}}))
        match.submit("solver", json.dumps({"tool": "answer", "arguments": {"code": FORGED}}))
    assert [entry["solved"] for entry in match.outcome.details["rounds"]] == [False, False]
    assert match.returns["solver"] == 0.0


def test_a_forged_pass_fails_every_judge_mode_directly():
    box = judge.warm_sandbox()
    task = generate_task(5)
    assert judge.judge_function(box, FORGED, "solve", task.hidden).passed == 0
    assert judge.judge_stdio(box, FORGED, [("1 2\n", "3\n")]).passed == 0
    assert judge.judge_asserts(box, FORGED, ["assert uniq([1]) == [1]"], entry="uniq").passed == 0


def test_an_unknown_status_is_an_error_not_an_exception(files):
    for tasks in ("procgen", files["mbpp"]):
        for program in (UNKNOWN_STATUS, UNKNOWN_STATUS_NOW):
            match = started(CODE, 0, tasks=tasks, reward="coderl")
            returns = match.submit("coder", submit(program))
            assert match.outcome.details["verdict"] == "runtime_error" and returns["coder"] == -0.6
            assert match.outcome.details["tests"].startswith("E") and set(match.outcome.details["tests"]) <= {"E", "N"}
        assert set(match.outcome.details["tests"]) == {"E"}, "every test's line said zzz: every test is an error"


def test_asserts_tasks_cannot_be_passed_by_patching_the_checker_or_by_an_object_equal_to_everything(files):
    for name in ("humaneval", "mbpp"):
        for cheat in (PATCHED, ANYTHING):
            match = started(CODE, 0, tasks=files[name])
            match.submit("coder", submit(cheat.format(entry=entry_of(match))))
            assert match.outcome.details["passed"] == 0, (name, cheat, match.outcome.details)
        honest = started(CODE, 0, tasks=files[name])
        honest_code = {"humaneval": HUMANEVAL["prompt"] + HUMANEVAL["canonical_solution"], "mbpp": MBPP["code"]}[name]
        assert honest.submit("coder", submit(honest_code))["coder"] == 1.0, honest.outcome.details


def test_asserts_task_sets_say_whether_they_can_be_rated(tmp_path, files):
    assert parlour.game_class(CODE)(tasks=files["mbpp"]).rateable
    assert parlour.game_class(CODE)(tasks=files["humaneval"]).rateable
    assert parlour.game_class(CODE)().rateable and parlour.game_class(CODE)(tasks="CODE_V1").rateable
    looping = dict(HUMANEVAL, test="def check(candidate):\n    for x in range(3):\n        assert candidate(x) == x + 1\n")
    path = tmp_path / "looping.jsonl"
    path.write_text(json.dumps(looping) + "\n")
    assert not parlour.game_class(CODE)(tasks=str(path)).rateable


def test_observations_hold_no_task_id_that_rebuilds_the_task():
    for tasks in ("procgen", "CODE_V1"):
        handles = set()
        for seed in range(2):
            match = started(CODE, seed, tasks=tasks)
            observation = match.agent_observation("coder")
            handle = observation["view"]["task_id"]
            task = match.game.task
            with pytest.raises(ValueError):
                task_from_id(handle)
            assert task.task_id not in json.dumps(observation)
            assert json.dumps(task.reference) not in json.dumps(observation)
            handles.add(handle)
            assert task.task_id not in match.game.render()
        assert len(handles) == 2
    tester = started(CODER_TESTER, 0)
    for player in ("coder", "tester"):
        with pytest.raises(ValueError):
            task_from_id(tester.agent_observation(player)["view"]["task_id"])


def test_the_same_frozen_task_gets_a_different_handle_in_every_episode():
    handles: dict[str, list[str]] = {}
    for seed in range(80):
        match = started(CODE, seed, tasks="CODE_V1")
        handles.setdefault(match.game.task.task_id, []).append(match.agent_observation("coder")["view"]["task_id"])
    repeated = [found for found in handles.values() if len(found) > 1]
    assert repeated, "80 episodes over 120 tasks drew no task twice"
    assert all(len(set(found)) == len(found) for found in repeated)


def test_the_reference_agent_is_privileged_and_still_the_upper_bound():
    agent = parlour.make_agent("reference", env_id=CODE)
    assert getattr(agent, "privileged", False) is True
    results = parlour.evaluate(CODE, ["reference"], episodes=2, seed=0, progress=False, env_kwargs={"tasks": "CODE_V1"})
    assert [record["returns"]["coder"] for record in results.records] == [1.0, 1.0]


def test_a_scratch_run_printing_the_clock_does_not_void_the_match():
    match = started(CODE, 2)
    match.submit("coder", json.dumps({"tool": "run_python", "arguments": {"code": "import time\nprint(time.time())"}}))
    match.submit("coder", submit(match.game.task.reference))
    record = match.record()
    outputs = [call.get("output") for step in record["steps"] for call in step.get("calls", []) if call["name"] == "run_python"]
    assert outputs and "stdout:" in outputs[0]
    fresh = parlour.replay(json.loads(json.dumps(record)))
    assert fresh["returns"] == record["returns"]
    # The recorded output is what the player saw: changing it is tampering, caught by its digest.
    tampered = json.loads(json.dumps(record))
    for step in tampered["steps"]:
        for call in step.get("calls", []):
            if call["name"] == "run_python":
                call["output"] = "The program ran to the end (exit status 0).\nstdout:\n42\n"
    with pytest.raises(parlour.ReplayMismatch):
        parlour.replay(tampered)


def test_a_submission_returning_the_clock_replays():
    match = started(CODE, 2)
    match.submit("coder", submit("import time\ndef solve(*args):\n    return time.time()\n"))
    parlour.replay(json.loads(json.dumps(match.record())))


def test_a_slow_valid_test_kills_no_equivalent_mutant_and_the_kill_count_replays():
    task = _divisor_task()
    prime = _slow_prime(task)
    chosen = _chosen_mutants(task, 6)
    with judge.fresh_sandbox() as box:
        # What each mutant answers on the prime, run here with time to spare: the ones answering 2 are equivalent on it.
        runs = [judge.execute(box, mutant, "call", [(prime,)], entry="solve", cpu=8.0) for mutant in chosen]
    differing = sum(run.load != "ok" or run.outcomes[0].status != "ok" or run.outcomes[0].value != 2 for run in runs)
    assert 1 <= differing < len(chosen)
    seen = set()
    for _ in range(3):
        match = Match(parlour.game_class(CODER_TESTER), {"mutants": 6})
        match.reset(0)
        match.game.task = task  # the divisors task itself, whatever the seed drew
        match.submit("coder", submit(task.reference))
        match.submit("tester", submit(f"assert solve({prime}) == 2"))
        tester = match.outcome.details["tester"]
        assert tester["valid"] == 1, tester
        assert tester["killed"] == differing, tester
        seen.add((tester["killed"], tester["told_apart"]))
    assert len(seen) == 1, seen


#: Primes on which the divisor-counting reference loops 1, 2, 3.2, 4 and 6.3 million times.
SLOW_PRIMES = (999_999_999_989, 3_999_999_999_967, 9_999_999_999_971, 15_999_999_999_961, 39_999_999_999_913)


def _slow_prime(task) -> int:
    """The first of :data:`SLOW_PRIMES` that the reference takes 1.5x ``MUTANT_FLOOR`` of CPU or more on, on this machine.

    Slow enough that the mutants' budgets come from the reference's time (5x it), not the floor, and yet well
    inside the reference's own limit of ``TEST_CPU_SECONDS`` per test: a fixed prime of 0.3 s on one machine
    took 0.75 s on a 2.5x slower one and ran out of that second in the sandbox.
    """
    namespace: dict = {}
    exec(task.reference, namespace)
    solve = namespace[task.entry_point]
    for prime in SLOW_PRIMES:
        start = time.process_time()
        assert solve(prime) == 2
        took = time.process_time() - start
        if took >= 1.5 * MUTANT_FLOOR:
            break
    assert took < judge.TEST_CPU_SECONDS / 2, f"the reference took {took:.2f} s on {prime}: too slow a machine for this test"
    return prime


def _divisor_task():
    """A procgen task that counts divisors in one step."""
    for seed in range(400):
        task = generate_task(seed, 1, 8, "number")
        if task.steps == ("count_divisors",):
            return task
    raise AssertionError("no count_divisors task in 400 seeds")


def _chosen_mutants(task, count: int) -> list[str]:
    import random

    from parlour.envs.coding.mutants import mutants

    pool = mutants(task.reference, task.entry_point)
    rng = random.Random(f"parlour.coding.mutants/{task.task_id}")
    return [pool[i] for i in sorted(rng.sample(range(len(pool)), min(count, len(pool))))]
