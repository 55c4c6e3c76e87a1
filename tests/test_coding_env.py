"""The coding environments: Code, CoderTester and CodeProposerSolver on the real sandbox: tools, every tool-call
syntax, rewards, replay of verdicts, options, missing bubblewrap, and the scripted agents' measured figures.

Where bubblewrap cannot run, every test that runs code is skipped, loudly, with the reason (sandbox containment
itself is tested in tests/test_sandbox.py).
"""

from __future__ import annotations

import copy
import json
import statistics
import warnings

import pytest

import parlour
import parlour.sandbox
from parlour.baselines.coding import TEMPLATES, Phrasebook, phrasebook_solution, trace
from parlour.envs.coding import judge
from parlour.envs.coding.coder_tester import parse_tests
from parlour.envs.coding.mutants import mutants
from parlour.envs.coding.oracle import privileged_oracle
from parlour.envs.coding.tasks import frozen_tasks, task_from_id
from parlour.envs.core.match import Match
from parlour.sandbox import SandboxUnavailable

CODE = "parlour/Code-v0"
CODER_TESTER = "parlour/CoderTester-v0"
PROPOSER_SOLVER = "parlour/CodeProposerSolver-v0"


@pytest.fixture(scope="module", autouse=True)
def sandbox_here() -> None:
    """Skip, loudly, where bubblewrap cannot start a sandbox on this machine."""
    try:
        judge.warm_sandbox()
    except SandboxUnavailable as error:
        pytest.skip(f"CODING ENVIRONMENT TESTS SKIPPED: bubblewrap cannot run here: {error}")


def started(env_id: str, seed: int = 0, **options) -> Match:
    match = Match(parlour.game_class(env_id), options)
    match.reset(seed)
    return match


def task_of(match: Match):
    """The task the match posed (observations hold only its opaque handle)."""
    return match.game.task


def tool(name: str, **arguments) -> str:
    return json.dumps({"tool": name, "arguments": arguments})


def mean_returns(env_id: str, agents: list, episodes: int, seed: int = 0, **options) -> dict[tuple[str, str], float]:
    results = parlour.evaluate(env_id, agents, episodes=episodes, seed=seed, progress=False, env_kwargs=options)
    seats: dict[tuple[str, str], list[float]] = {}
    for record in results.records:
        for seat, name in record["agents"].items():
            seats.setdefault((name, seat), []).append(record["returns"][seat])
    return {key: statistics.mean(values) for key, values in seats.items()}


# ----------------------------------------------------------------------------- Code


@pytest.mark.parametrize("reward", ["binary", "fraction", "coderl"])
def test_the_reference_passes_under_every_reward(reward):
    match = started(CODE, 3, reward=reward)
    match.submit("coder", tool("submit", code=task_of(match).reference))
    assert match.over and match.returns == {"coder": 1.0} and match.outcome.winners == ["coder"]
    details = match.outcome.details
    assert details["verdict"] == "pass" and details["tests"] == "P" * 24 and details["rateable"]


def test_coderl_shape_fraction_and_tool_cost():
    outcomes = {}
    for name, code in [("syntax", "def solve(:\n"), ("runtime", "def solve(x):\n    return 1 / 0\n"), ("wrong", "def solve(x):\n    return None\n")]:
        match = started(CODE, 5, reward="coderl", tool_cost=0.05)
        match.submit("coder", tool("run_python", code="print(1)") + tool("run_tests", code=code))
        match.submit("coder", tool("submit", code=code))
        outcomes[name] = (match.returns["coder"], match.outcome.details["verdict"], match.outcome.details["scratch_calls"])
    assert outcomes == {
        "syntax": (pytest.approx(-1.1), "syntax_error", 2),
        "runtime": (pytest.approx(-0.7), "runtime_error", 2),
        "wrong": (pytest.approx(-0.4), "wrong_answer", 2),
    }
    match = started(CODE, 5, reward="fraction")
    task = task_of(match)
    first_input = task.hidden[0][0][0]
    partial = task.reference.replace("def solve(", "def _reference(") + (
        f"\n\ndef solve(x):\n    return None if x == {first_input!r} else _reference(x)\n"
    )
    match.submit("coder", tool("submit", code=partial))
    assert match.returns["coder"] == pytest.approx(23 / 24) and match.outcome.details["tests"] == "W" + "P" * 23


def test_scratch_tools_answer_the_coder_alone_and_do_not_advance_the_game():
    match = started(CODE, 1)
    task = task_of(match)
    match.submit(
        "coder", tool("run_python", code="import sys\nprint(input()[::-1])\nprint('oops', file=sys.stderr)\nraise SystemExit(3)", stdin="abc")
    )
    assert match.acting() == ["coder"] and match.turns == 0 and not match.over
    [result] = [m for m in match.agent_observation("coder")["messages"] if m["kind"] == "tool_result"]
    assert result["sender"] == "run_python" and result["to"] == ["coder"]
    assert result["text"] == "The program failed (exit status 3).\nstdout:\ncba\nstderr:\noops\n"
    match.submit("coder", "<run_tests>" + task.reference + "</run_tests>")
    report = match.observation_text("coder")
    assert "3 of 3 visible tests passed." in report and report.count(": passed") == 3
    match.submit("coder", "<run_tests>def solve(x):\n    print('seen')\n    return 0\n</run_tests>")
    report = match.observation_text("coder")
    assert "wrong, expected" in report and "printed: 'seen\\n'" in report
    assert match.agent_observation("coder")["tool_calls_left"] == 8 - 3


class Syntax:
    """Runs the visible tests, then submits the reference (looked up through the privileged oracle), in one tool-call syntax."""

    def __init__(self, syntax: str):
        self.syntax = syntax

    def act(self, observation):
        task = privileged_oracle().task(observation["view"]["task_id"])
        tested = any(m["kind"] == "tool_result" for m in observation["messages"])
        name, arguments = ("submit" if tested else "run_tests"), {"code": task.reference}
        if self.syntax == "openai":
            return json.dumps(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}],
                }
            )
        if self.syntax == "openai_dict":
            return {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]}
        if self.syntax == "tool_json":
            return f"I will test first. {json.dumps({'tool': name, 'arguments': arguments})}"
        if self.syntax == "hermes":
            return f"<think>plan</think><tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"
        return f"<{name}>\n{task.reference}</{name}>"


@pytest.mark.parametrize("syntax", ["openai", "openai_dict", "tool_json", "hermes", "tag"])
def test_every_tool_call_syntax_drives_an_episode(syntax):
    match = started(CODE, 2)
    agent = Syntax(syntax)
    while not match.over:
        match.submit("coder", agent.act(match.agent_observation("coder")))
    assert [step["error"] for step in match.steps] == [None, None]
    assert match.steps[0]["calls"][0]["name"] == "run_tests" and len(match.steps[0]["calls"][0]["result"]) == 32
    assert match.returns == {"coder": 1.0}
    assert parlour.replay(json.loads(json.dumps(match.record())))["steps"] == match.record()["steps"]


def test_replay_reproduces_verdicts_and_rejects_tampering():
    match = started(CODE, 4, reward="fraction")
    task = task_of(match)
    match.submit("coder", tool("run_python", code="print(sorted(set('hello world')), set('abcdef'))"))
    match.submit("coder", tool("run_tests", code=task.reference))
    first_input = task.hidden[0][0][0]
    match.submit(
        "coder",
        tool(
            "submit",
            code=task.reference.replace("def solve(", "def _reference(")
            + (f"\n\ndef solve(x):\n    return None if x == {first_input!r} else _reference(x)\n"),
        ),
    )
    record = json.loads(json.dumps(match.record()))
    assert parlour.replay(record)["outcome"]["details"] == record["outcome"]["details"]
    letters = record["outcome"]["details"]["tests"]
    assert letters == "W" + "P" * 23
    tampered = copy.deepcopy(record)
    tampered["outcome"]["details"]["tests"] = "P" * len(letters)
    with pytest.raises(parlour.ReplayMismatch, match="details"):
        parlour.replay(tampered)
    tampered = copy.deepcopy(record)
    tampered["steps"][-1]["action"] = tool("submit", code=task.reference)
    with pytest.raises(parlour.ReplayMismatch):
        parlour.replay(tampered)
    tampered = copy.deepcopy(record)
    tampered["steps"][0]["calls"][0]["result"] = "0" * 32
    with pytest.raises(parlour.ReplayMismatch, match="tool calls"):
        parlour.replay(tampered)
    # Scratch answers are played back from the record, not run again.
    assert record["steps"][1]["calls"][0]["output"].startswith("3 of 3 visible tests passed.")


def test_text_without_a_tool_call_is_invalid_and_the_forfeit_costs_the_tools():
    match = started(CODE, 0, tool_cost=0.25, error_allowance=1)
    match.submit("coder", "```python\ndef solve(x):\n    return x\n```")
    assert "Reply with a tool call" in match.steps[-1]["error"] and "<submit>" in match.steps[-1]["error"]
    match.submit("coder", tool("run_python", code="print(2)"))
    match.submit("coder", "still no call")
    assert match.over and match.returns == {"coder": -1.25} and match.outcome.winners == []
    assert match.outcome.details["task"].startswith("procgen:")


@pytest.mark.parametrize(
    "options, message",
    [
        ({"reward": "accuracy"}, "reward must be one of"),
        ({"tool_cost": -0.1}, "tool_cost must be a number"),
        ({"allow_unsafe": "yes"}, "allow_unsafe must be True or False"),
        ({"tasks": 3}, "tasks must be 'procgen'"),
        ({"tasks": "CODE_V1", "depth": 2}, "leave them out"),
        ({"tasks": "/no/such/file.jsonl"}, "neither 'procgen'"),
        ({"depth": 9}, "depth must be an int"),
        ({"family": "graphs"}, "family must be one of"),
    ],
)
def test_options_are_checked(options, message):
    for env_id in (CODE, CODER_TESTER):
        with pytest.raises(ValueError, match=message):
            parlour.make_aec(env_id, **options)


def test_frozen_set_and_task_files(tmp_path):
    match = started(CODE, 9, tasks="CODE_V1")
    view = match.agent_observation("coder")["view"]
    assert view["task_id"].startswith("task-") and task_of(match) in frozen_tasks()
    records = [
        {
            "text": "Write a function that doubles a number.",
            "code": "def double(x):\n    return 2 * x",
            "test_list": ["assert double(2) == 4", "assert double(-3) == -6"],
        },
        {
            "question": "Print the sum of two numbers.",
            "input_output": {"inputs": ["1 2\n"], "outputs": ["3\n"]},
            "solutions": ["print(sum(map(int, input().split())))"],
        },
    ]
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    results = parlour.evaluate(CODE, ["reference"], episodes=4, seed=0, env_kwargs={"tasks": str(path)}, progress=False)
    assert {record["outcome"]["details"]["family"] for record in results.records} == {"mbpp", "apps"}
    assert all(record["returns"]["coder"] == 1.0 for record in results.records)
    for record in results.records:
        parlour.replay(record)
    with pytest.raises(ValueError, match="not function tasks"):
        parlour.make_aec(CODER_TESTER, tasks=str(path))


def test_scratch_outputs_replay_because_the_hash_seed_is_fixed():
    outputs = {parlour.sandbox.run_python("print(set('parlour sandbox'), hash('x'))").stdout for _ in range(3)}
    outputs.add(judge.warm_sandbox().run("print(set('parlour sandbox'), hash('x'))").stdout)
    assert len(outputs) == 1


def test_missing_bubblewrap_is_a_clear_error_and_allow_unsafe_runs_without_it(monkeypatch):
    monkeypatch.setattr(parlour.sandbox, "BWRAP", "no-such-bwrap")
    monkeypatch.setattr(judge, "_WARM", {})
    try:
        with pytest.raises(SandboxUnavailable, match="Code runs agents' code only inside parlour.sandbox.*apt-get install bubblewrap"):
            started(CODE, 0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            match = started(CODE, 0, allow_unsafe=True)
            assert not judge.warm_sandbox(True).sandboxed
            match.submit("coder", tool("submit", code=task_of(match).reference))
        assert match.returns == {"coder": 1.0}
    finally:
        for _pid, box in judge._WARM.values():
            box.close()


def test_evaluate_with_the_reference_agent():
    results = parlour.evaluate(CODE, ["reference"], episodes=3)
    assert [record["returns"]["coder"] for record in results.records] == [1.0, 1.0, 1.0]
    for record in results.records:
        parlour.replay(record, agents={"coder": parlour.make_agent("reference", env_id=CODE)})


def test_code_baselines_measured():
    """Measured, seed 0: phrasebook 0.05 over 40 episodes at the default depth 2 and 0.175 over 40 at depth 1;
    random -0.15 over 20 episodes (its forfeits cost 1). The reference scores 1.0 (test_evaluate_with_the_reference_agent)."""
    assert mean_returns(CODE, ["phrasebook"], 40)[("phrasebook", "coder")] == pytest.approx(0.05, abs=0.05)
    assert mean_returns(CODE, ["phrasebook"], 40, depth=1)[("phrasebook", "coder")] == pytest.approx(0.175, abs=0.1)
    assert mean_returns(CODE, ["random"], 20)[("random", "coder")] == pytest.approx(-0.15, abs=0.1)


def test_phrasebook_knows_simple_steps_only():
    solved = [seed for seed in range(40) if phrasebook_solution(task_from_id(f"procgen:{seed}:1:8:list").statement)]
    hard = [seed for seed in range(40) if phrasebook_solution(task_from_id(f"procgen:{seed}:1:8:algorithm").statement)]
    assert len(solved) >= 10 and hard == []


# ----------------------------------------------------------------------------- CoderTester


def test_tester_submissions_are_read_as_literal_tests():
    text = (
        "assert solve([1, 2]) == 3\nassert solve('a') == {'a': 1}, 'message'\nassert solve(x) == 1\nprint(3)\n"
        "assert other(1) == 1\nassert solve(1) != 2\nassert solve(*[1]) == 1\nassert solve(1, 2) == (1, 2)\n"
    )
    tests, invalid, ignored = parse_tests(text, "solve", 10)
    assert tests == [(([1, 2],), 3), (("a",), {"a": 1}), ((1, 2), (1, 2))]
    assert len(invalid) == 5 and "test 3 uses something other than literal values" in invalid
    assert ignored == 0
    tests, invalid, ignored = parse_tests(text, "solve", 2)
    assert len(tests) == 2 and ignored == 6
    tests, invalid, _ = parse_tests("assert solve(1) == 1\nassert solve(( == 2\nassert solve(2) == 2", "solve", 10)
    assert tests == [((1,), 1), ((2,), 2)] and len(invalid) == 1
    tests, invalid, _ = parse_tests(f"assert solve('{'x' * 3000}') == 1", "solve", 10)
    assert not tests and "longer than" in invalid[0]


def test_coder_tester_scores_mutants_invalid_tests_and_the_bonus():
    match = started(CODER_TESTER, 6)
    task = task_of(match)
    # A faulty solution that one of the first eight hidden tests catches.
    killable = next(
        m for m in mutants(task.reference, "solve") if judge.judge_function(judge.warm_sandbox(), m, "solve", task.hidden[:8]).verdict != "pass"
    )
    oracle = [f"assert solve({args[0]!r}) == {expected!r}" for args, expected in task.hidden[:8]]
    match.submit("coder", tool("submit", code=killable))
    match.submit("tester", tool("submit", code="\n".join(oracle + ["assert solve(None) == 5", "nonsense"])))
    details = match.outcome.details
    tester = details["tester"]
    assert tester["tests"] == 10 and tester["valid"] == 8 and tester["invalid_count"] == 2
    assert tester["caught_coder"] and tester["mutants"] == min(12, len(mutants(task.reference, "solve")))
    assert tester["told_apart"] >= tester["killed"] > 0
    share = tester["killed"] / tester["told_apart"]
    assert match.returns["tester"] == pytest.approx(share + 0.5 - 0.4)
    assert match.returns["coder"] == 0.0 and match.outcome.winners == ["tester"]
    assert details["coder"]["verdict"] != "pass"
    assert parlour.replay(json.loads(json.dumps(match.record())))["returns"] == match.returns


def test_coder_tester_without_valid_tests_runs_no_mutants_and_the_coder_wins():
    match = started(CODER_TESTER, 6, invalid_cost=0.3)
    task = task_of(match)
    match.submit("tester", "<submit>assert solve() == 1</submit>")
    assert not match.over and match.acting() == ["coder"]
    match.submit("coder", "<submit>" + task.reference + "</submit>")
    tester = match.outcome.details["tester"]
    assert tester["valid"] == 0 and tester["told_apart"] == 0 and tester["kill_share"] == 0
    assert match.returns == {"coder": 1.0, "tester": pytest.approx(-0.3)} and match.outcome.winners == ["coder"]


def test_coder_tester_baselines_measured():
    """Measured, seed 0, 6 episodes of reference against phrasebook (seats rotate): the reference coder 1.0, the
    reference tester 1.5 (it kills every mutant told apart and catches the phrasebook coder), the phrasebook
    tester 0.963 (kill share; the reference coder never fails), the phrasebook coder 0.0. Random against itself over
    10 episodes: coder -0.2, tester -0.16."""
    means = mean_returns(CODER_TESTER, ["reference", "phrasebook"], 6)
    assert means[("reference", "coder")] == 1.0
    assert means[("reference", "tester")] == pytest.approx(1.5, abs=0.1)
    assert means[("phrasebook", "tester")] == pytest.approx(0.963, abs=0.15)
    assert means[("phrasebook", "coder")] == pytest.approx(0.0, abs=0.2)
    means = mean_returns(CODER_TESTER, ["random"], 10)
    assert means[("random", "coder")] == pytest.approx(-0.2, abs=0.2)
    assert means[("random", "tester")] == pytest.approx(-0.16, abs=0.15)


# ----------------------------------------------------------------------------- CodeProposerSolver


def test_invalid_proposals_cost_the_proposer_and_lose_the_round():
    match = started(PROPOSER_SOLVER, 0, rounds=5, max_output_chars=20)
    bad = {
        "raises": "print(1 / 0)",
        "nondeterministic": "import time\nprint(time.time_ns())",
        "silent": "x = 1",
        "verbose": "print('y' * 100)",
        "too long": "print(1)\n" + "#" * 3000,
    }
    for program in bad.values():
        match.submit("proposer", tool("propose", program=program, input=""))
    assert match.over and match.returns == {"proposer": pytest.approx(-1.0), "solver": 0.0}
    reasons = [entry["reason"] for entry in match.outcome.details["rounds"]]
    assert "ZeroDivisionError" in reasons[0] and "different outputs" in reasons[1] and "printed nothing" in reasons[2]
    assert "more than 20 characters" in reasons[3] and "longer than 2000" in reasons[4]
    assert match.outcome.winners == []


def test_output_prediction_rounds_and_the_learnability_reward():
    match = started(PROPOSER_SOLVER, 0, rounds=3)
    program = "s = input()\nprint(s.upper())\nprint(len(s))"
    answers = ["ABC\n3", "wrong", "ABC  \n3\n\n"]
    for answer in answers:
        match.submit("proposer", tool("propose", program=program, input="abc"))
        view = match.agent_observation("solver")["view"]
        assert view["program"] == program and view["input"] == "abc"
        match.submit("solver", tool("run_python", code="print(1)"))
        refusal = [m["text"] for m in match.agent_observation("solver")["messages"] if m["kind"] == "tool_result"]
        assert refusal and "not available to the solver" in refusal[0]
        match.submit("solver", tool("answer", output=answer))
    assert match.over
    assert [entry["solved"] for entry in match.outcome.details["rounds"]] == [True, False, True]
    assert match.returns == {"solver": pytest.approx(2 / 3), "proposer": pytest.approx(1 / 3)}
    assert match.outcome.winners == ["proposer"] and match.outcome.details["solve_rate"] == pytest.approx(2 / 3)
    parlour.replay(json.loads(json.dumps(match.record())))


def test_the_other_roles_final_tool_counts_as_an_empty_move():
    match = started(PROPOSER_SOLVER, 0, rounds=2)
    match.submit("proposer", tool("answer", output="1"))
    assert match.outcome is None and match.acting() == ["proposer"]
    match.submit("proposer", tool("propose", program="print(7)", input=""))
    match.submit("solver", tool("propose", program="print(7)", input=""))
    assert match.over and [e["valid"] for e in match.outcome.details["rounds"]] == [False, True]
    assert match.outcome.details["rounds"][1]["solved"] is False
    assert match.returns == {"proposer": pytest.approx(-0.5), "solver": 0.0}


def test_program_induction_shows_pairs_not_the_program_and_judges_code_on_the_rest():
    match = started(PROPOSER_SOLVER, 0, rounds=2, mode="induction", inputs=4)
    program = "n = int(input())\nprint(n * n)"
    match.submit("proposer", tool("propose", program=program, inputs=["2", "3", "4", "5"]))
    view = match.agent_observation("solver")["view"]
    assert view["pairs"] == [{"input": "2", "output": "4\n"}, {"input": "3", "output": "9\n"}] and "program" not in view
    assert program not in match.observation_text("solver")
    match.submit("solver", tool("run_python", code="print(int(input()) ** 2)", stdin="4"))
    assert "16" in match.observation_text("solver")
    match.submit("solver", tool("answer", code="print(int(input()) ** 2)"))
    match.submit("proposer", tool("propose", program=program, inputs=["2", "3", "4", "5"]))
    match.submit("solver", tool("answer", code="n = int(input())\nprint(n * 3 - 2)"))
    assert [e["solved"] for e in match.outcome.details["rounds"]] == [True, False]
    assert match.returns == {"solver": pytest.approx(0.5), "proposer": pytest.approx(0.5)}


def test_the_tracer_works_programs_out_without_running_them():
    box = judge.warm_sandbox()
    for level, template, _make in TEMPLATES:
        program = template.replace("@A@", "3").replace("@B@", "17")
        for stdin in ("7", "12 5 -3 8", "ka lomi su"):
            real = box.run(program, stdin)
            traced = trace(program, stdin)
            if level == "hard":
                assert traced is None
            elif real.verdict == "ok":
                assert traced == real.stdout, (program, stdin)
            else:
                assert traced is None
    for hostile in (
        "__import__('os').system('true')",
        "open('/etc/passwd')",
        "x = 'a' * 10 ** 9",
        "while True:\n    pass",
        "x = 2\nfor i in range(100):\n    x = x * x\nprint(x)",
    ):
        assert trace(hostile, "") is None


def test_proposer_solver_baselines_measured():
    """Measured, seed 0, tracer in both seats (seats rotate): output prediction over 10 episodes, proposer 0.4 and
    solver 0.5; program induction over 6 episodes, proposer 0.458 and solver 0.208. Random over 10 episodes:
    proposer -0.625 (invalid programs), solver 0.0."""
    means = mean_returns(PROPOSER_SOLVER, ["tracer"], 10)
    assert means[("tracer", "proposer")] == pytest.approx(0.4, abs=0.1)
    assert means[("tracer", "solver")] == pytest.approx(0.5, abs=0.1)
    means = mean_returns(PROPOSER_SOLVER, ["tracer"], 6, mode="induction")
    assert means[("tracer", "proposer")] == pytest.approx(0.458, abs=0.15)
    assert means[("tracer", "solver")] == pytest.approx(0.208, abs=0.15)
    means = mean_returns(PROPOSER_SOLVER, ["random"], 10)
    assert means[("random", "proposer")] == pytest.approx(-0.625, abs=0.2)
    assert means[("random", "solver")] == 0.0


def test_phrasebook_tester_asserts_examples_and_its_own_outputs():
    match = started(CODER_TESTER, 0, depth=1, family="list")
    agent = Phrasebook(env_id=CODER_TESTER, seed=0)
    seen = []
    while "tester" in match.acting():
        action = agent.act(match.agent_observation("tester"))
        seen.append(json.loads(action)["tool"])
        match.submit("tester", action)
    assert seen in (["run_python", "submit"], ["submit"])
    match.submit("coder", tool("submit", code=task_of(match).reference))
    tester = match.outcome.details["tester"]
    assert tester["invalid_count"] == 0 and tester["valid"] == (10 if seen[0] == "run_python" else 3)
