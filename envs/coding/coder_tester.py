"""CoderTester: a coder writes the solution while a tester writes tests for it; mutants of the reference judge the tests.

Two players act at the same time on the same procgen task (see :mod:`parlour.envs.coding.tasks`), neither
seeing the other's work: the ``coder`` writes ``solve``; the ``tester`` writes assert-style tests, one
assert per test::

    assert solve([3, 1, 2]) == 6
    assert solve([]) == 0

Each test must call the task's function on literal arguments and compare with ``==`` to a literal value
(anything else is an invalid test): tests are values, so they only see the function's behaviour, never
its code. Both players have the tools of :mod:`parlour.envs.coding.code` (``run_python``, ``run_tests``
on the visible examples) and move by calling ``submit(code)``: the coder's solution, or the tester's asserts.

Scoring, once both have submitted (everything runs in one fresh sandbox):

* a tester's test that the reference solution fails is invalid and costs ``invalid_cost`` (default 0.2);
  only the first ``max_tests`` (default 10) asserts count;
* ``mutants`` (default 12) mutants of the reference are drawn (one AST mutation each: comparison flips,
  off-by-one constants, swapped operands, ...; see :mod:`parlour.envs.coding.mutants`); a mutant counts once
  some test tells it apart from the reference (a hidden test or a valid tester test), and the tester scores
  the share of those its valid tests kill;
* the tester gets ``bonus`` (default 0.5) if a valid test of its own fails on the coder's submission;
* the coder scores on the hidden tests, as in Code (``reward``: ``binary``, ``fraction`` or ``coderl``).

Tester's return: kill share + bonus if it caught the coder - invalid_cost per invalid test - tool costs.
Coder's return: its reward - tool costs. Winners: the tester if it caught the coder, else the coder if
it passed every hidden test, else nobody. A player exceeding the invalid-action allowance gets -1 (minus
its tool costs) and the other 0.

A mutant's CPU budget on each test is the reference's own, measured on that test in the same sandbox, times
:data:`MUTANT_FACTOR` (at least :data:`MUTANT_FLOOR`), never a bare threshold: a valid test that is slow for the
reference too gives its mutants the time they need. A mutant that runs out of time on a test is not told
apart by it, nor by the tests after it (they do not run): only values and errors, which replay exactly,
tell a mutant apart or kill it. So a slow valid test kills no equivalent mutant, and the kill count replays.
Its cost: a tester's slow tests make every mutant run as long, up to :data:`MUTANT_FACTOR` times the
reference on the test where it stops.

Sandbox budget. Each side's submission may cost the server ``cpu_budget`` CPU seconds (default 5) an episode;
an overrun counts against the side that caused it. The tester's cost is the reference's CPU on its tests plus
every mutant's CPU on its valid tests, as the harness measures them (the reference and the mutants are the
server's code, so the figures are honest); once past the budget no more mutants run, its tests are not run
on the coder, and the tester scores -1 (minus tool costs), as for a forfeit, whatever they killed. The coder's
runs (the hidden tests, then the tester's valid tests) share its budget: each test gets at most
``cpu_budget`` divided by their number (and never more than :data:`~parlour.envs.coding.judge.TEST_CPU_SECONDS`),
and a test past it is a failed test. Ten slow but valid asserts thus cost the server about the budget, plus
at most one mutant's run, instead of a minute. An overrun is decided from measured CPU time: a submission
within a few percent of the budget may fall on either side of it on another machine, so its record may not
replay (a live match then counts the episode as that side's forfeit; see :mod:`parlour.leaderboard.live`).

Options also: ``tasks`` (``procgen`` or ``CODE_V1``), ``depth``, ``size``, ``family``,
``tool_cost`` and ``allow_unsafe`` as in Code. Outcome details: the coder's verdict summary and the
tester's tests (valid, invalid with reasons, ignored), mutants, how many were told apart and killed,
whether the coder was caught, and whether the tester overran its budget.

Version history: v0, first release.
"""

from __future__ import annotations

import ast
import random
from typing import Any

from parlour.envs.coding import judge
from parlour.envs.coding.common import (
    REWARD_MODES,
    REWARD_TEXT,
    RUN_PYTHON,
    RUN_TESTS,
    TOOL_SYNTAX,
    PosesTask,
    ScratchSandboxes,
    TaskSource,
    bool_option,
    choice_option,
    code_tool,
    float_option,
    reward_of,
)
from parlour.envs.coding.mutants import mutants as mutants_of
from parlour.envs.coding.task import Task
from parlour.envs.core.context import Context
from parlour.envs.core.game import Game, int_option
from parlour.sandbox import Limits

#: A mutant's CPU budget on a test: this many times what the reference took on it, and at least MUTANT_FLOOR seconds.
MUTANT_FACTOR = 5.0
MUTANT_FLOOR = 0.1
#: Longest literal text of one test's arguments and expected value.
MAX_TEST_CHARS = 2000

SUBMIT = code_tool("submit", "Submit your work and end your turn: the coder submits its solution, the tester its tests (assert lines).", final=True)

RULES = {
    "coder": """You are the coder in a coder-tester game. Write the function the task asks for; a tester is writing tests for it at the same time.
Tools: run_python(code, stdin) runs a program in a scratch sandbox; run_tests(code) runs your solution on the visible examples; submit(code) submits your solution (your move).
{syntax}
Your score: {reward}""",
    "tester": """You are the tester in a coder-tester game. A coder is writing the function the task asks for; write tests for it, one assert per line, each calling the function on literal arguments and comparing with == to the literal correct result, such as:
    assert {entry}(...) == ...
Only the first {max_tests} asserts count. A test that a correct solution fails costs you {invalid_cost:g}. Your tests may cost the server at most {cpu_budget:g} CPU seconds in all (run on a correct solution and on its faulty versions); past that you score -1. You score the share of faulty versions of a correct solution (small bugs such as < for <=, or an off-by-one constant) that your valid tests catch, plus {bonus:g} if one of your valid tests fails on the coder's solution.
Tools: run_python(code, stdin) runs a program in a scratch sandbox; run_tests(code) runs a solution on the visible examples; submit(code) submits your asserts (your move).
{syntax}""",
}


def parse_tests(text: str, entry: str, limit: int) -> tuple[list[tuple[tuple, Any]], list[str], int]:
    """``(tests, invalid reasons, ignored)`` from a tester's submission: each test an ``(args, expected)`` pair
    read from ``assert entry(<literals>) == <literal>``; asserts past ``limit`` are ignored."""
    try:
        statements = ast.parse(text).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        # Read line by line, so that one broken line does not void the others.
        statements = []
        for line in text.splitlines():
            try:
                statements += ast.parse(line.strip()).body if line.strip() else []
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                statements.append(ast.Pass())
    tests: list[tuple[tuple, Any]] = []
    invalid: list[str] = []
    counted = 0
    for statement in statements:
        if counted >= limit:
            return tests, invalid, len(statements) - counted
        counted += 1
        test = statement.test if isinstance(statement, ast.Assert) else None
        if not (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)
            and isinstance(test.left, ast.Call)
            and isinstance(test.left.func, ast.Name)
            and test.left.func.id == entry
            and not test.left.keywords
        ):
            invalid.append(f"test {counted} is not of the form assert {entry}(...) == ...")
            continue
        try:
            args = tuple(ast.literal_eval(arg) for arg in test.left.args)
            expected = ast.literal_eval(test.comparators[0])
            size = len(repr(args)) + len(repr(expected))
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            invalid.append(f"test {counted} uses something other than literal values")
            continue
        if size > MAX_TEST_CHARS:
            invalid.append(f"test {counted} is longer than {MAX_TEST_CHARS} characters")
            continue
        tests.append((args, expected))
    return tests, invalid, 0


def _fails(outcome: judge.TestRun, expected: Any) -> bool:
    return outcome.status != "ok" or not judge.same(outcome.value, expected)


def _tells_apart(outcome: judge.TestRun, expected: Any) -> bool:
    """Whether a mutant's run of a test shows it differs from the reference: a different value or an error.
    Running out of time (or not running) shows nothing: it depends on the machine, and would not replay."""
    if outcome.status in ("timeout", "not_run"):
        return False
    return _fails(outcome, expected)


def _mutant_limits(budgets: list[float]) -> Limits:
    """Limits of a mutant's whole harness run: room for every test's budget and for loading."""
    cpu = sum(budgets) + 2 * judge.TEST_CPU_SECONDS
    return Limits(cpu_seconds=cpu, wall_seconds=3 * cpu + 10, memory_mb=judge.JUDGE_LIMITS.memory_mb)


class CoderTester(PosesTask, Game):
    """A coder and a tester work on the same task at once; mutants of the reference score the tests. See the module docstring."""

    name = "CoderTester"
    reference_agents = ("reference", "random")
    description = "A coder writes a function while a tester writes asserts; the tests are scored by the mutants of the reference they kill."
    category = "coding"
    zero_sum = False
    simultaneous = True

    def __init__(
        self,
        *,
        tasks: str = "procgen",
        depth: int | None = None,
        size: int | None = None,
        family: str | None = None,
        reward: str = "binary",
        tool_cost: float = 0.0,
        max_tests: int = 10,
        mutants: int = 12,
        invalid_cost: float = 0.2,
        bonus: float = 0.5,
        cpu_budget: float = 5.0,
        allow_unsafe: bool = False,
    ):
        self.source = TaskSource.from_options(tasks, depth, size, family, function_only=True)
        self.reward_mode = choice_option("reward", reward, REWARD_MODES)
        self.tool_cost = float_option("tool_cost", tool_cost, 0.0, 1.0)
        self.max_tests = int_option("max_tests", max_tests, 1, 50)
        self.n_mutants = int_option("mutants", mutants, 1, 40)
        self.invalid_cost = float_option("invalid_cost", invalid_cost, 0.0, 1.0)
        self.bonus = float_option("bonus", bonus, 0.0, 1.0)
        self.cpu_budget = float_option("cpu_budget", cpu_budget, 0.5, 60.0)
        self.allow_unsafe = bool_option("allow_unsafe", allow_unsafe)
        self.scratch = ScratchSandboxes(self.allow_unsafe)
        #: Always true: CoderTester poses function tasks only, judged on the host.
        self.rateable = self.source.rateable
        self.players = ["coder", "tester"]
        self.tools = [RUN_PYTHON, RUN_TESTS, SUBMIT]
        self.task: Task | None = None
        self.handle = ""
        self.result: dict[str, Any] | None = None

    # ------------------------------------------------------------------ episode
    def start(self, ctx: Context) -> None:
        """Check that code can run here, draw the task and show it to both."""
        task = self.pose_task(ctx)
        ctx.tell(task.statement)

    def rules(self, player: str) -> str:
        """The player's role, tools and scoring."""
        if player == "coder":
            return RULES["coder"].format(syntax=TOOL_SYNTAX, reward=REWARD_TEXT[self.reward_mode])
        entry = self.task.entry_point if self.task is not None else "solve"
        return RULES["tester"].format(
            entry=entry, max_tests=self.max_tests, invalid_cost=self.invalid_cost, bonus=self.bonus, cpu_budget=self.cpu_budget, syntax=TOOL_SYNTAX
        )

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """What to submit."""
        if player == "coder":
            return "Write the function. Call run_python, run_tests, or submit(code) with your solution."
        assert self.task is not None
        return f"Write your tests: submit(code) with one `assert {self.task.entry_point}(...) == ...` per line."

    def apply(self, ctx: Context, moves: dict[str, Any]) -> None:
        """Judge the tests on the reference and the mutants, the solution on the hidden tests and the valid tests; end."""
        task = self.task
        assert task is not None
        code = moves["coder"]["arguments"]["code"]
        tests, invalid, ignored = parse_tests(moves["tester"]["arguments"]["code"], task.entry_point, self.max_tests)
        written = len(tests) + len(invalid)
        rng = random.Random(f"parlour.coding.mutants/{task.task_id}")
        pool = mutants_of(task.reference, task.entry_point)
        chosen = sorted(rng.sample(range(len(pool)), min(self.n_mutants, len(pool))))
        hidden_args = [args for args, _ in task.hidden]
        with judge.fresh_sandbox(self.allow_unsafe) as sandbox:
            # The reference runs the tester's tests (to check them) and the hidden ones, timed: its times set the mutants' budgets.
            on_reference = judge.execute(sandbox, task.reference, "call", [args for args, _ in tests] + hidden_args, entry=task.entry_point)
            valid, budgets = [], []
            for (args, expected), outcome in zip(tests, on_reference.outcomes):
                if _fails(outcome, expected):
                    got = judge.show(outcome.value, 120) if outcome.status == "ok" else outcome.detail[:120]
                    invalid.append(
                        f"a correct solution fails {task.entry_point}({', '.join(judge.show(a, 80) for a in args)}) "
                        f"== {judge.show(expected, 80)} (it gives {got})"
                    )
                else:
                    valid.append((args, expected))
                    budgets.append(max(MUTANT_FLOOR, MUTANT_FACTOR * outcome.cpu))
            budgets += [max(MUTANT_FLOOR, MUTANT_FACTOR * outcome.cpu) for outcome in on_reference.outcomes[len(tests) :]]
            expected_all = [expected for _, expected in valid] + [expected for _, expected in task.hidden]
            # The tester's cost: the reference's CPU on its tests, then each mutant's on its valid tests (see the module docstring).
            spent = sum(outcome.cpu for outcome in on_reference.outcomes[: len(tests)])
            told_apart = killed = 0
            # Without a valid test the tester kills nothing, whatever the mutants do: they need not run.
            for index in chosen if valid and spent <= self.cpu_budget else []:
                run = judge.execute(
                    sandbox,
                    pool[index],
                    "call",
                    [args for args, _ in valid] + hidden_args,
                    entry=task.entry_point,
                    cpu=budgets,
                    limits=_mutant_limits(budgets),
                )
                spent += sum(outcome.cpu for outcome in run.outcomes[: len(valid)])
                if spent > self.cpu_budget:
                    break
                differs = [_tells_apart(outcome, expected) for outcome, expected in zip(run.outcomes, expected_all)]
                caught_by_tester = run.load != "ok" or any(differs[: len(valid)])
                killed += caught_by_tester
                told_apart += caught_by_tester or any(differs)
            overran = spent > self.cpu_budget
            # The coder's runs share its budget, a test at a time: a test past its share fails, the coder's own loss.
            per_test = min(judge.TEST_CPU_SECONDS, self.cpu_budget / (len(task.hidden) + (0 if overran else len(valid))))
            hidden = judge.judge_function(sandbox, code, task.entry_point, task.hidden, cpu=per_test)
            against_tests = judge.judge_function(sandbox, code, task.entry_point, valid, cpu=per_test) if valid and not overran else None
        caught = against_tests is not None and against_tests.passed < against_tests.total
        share = killed / told_apart if told_apart else 0.0
        coder = reward_of(self.reward_mode, hidden) - self.tool_cost * ctx.tool_calls["coder"]
        if overran:
            tester = -1.0 - self.tool_cost * ctx.tool_calls["tester"]
        else:
            tester = share + (self.bonus if caught else 0.0) - self.invalid_cost * len(invalid) - self.tool_cost * ctx.tool_calls["tester"]
        self.result = {
            "coder": hidden.summary(),
            "tester": {
                "tests": written,
                "valid": len(valid),
                "invalid": invalid[:10],
                "invalid_count": len(invalid),
                "ignored": ignored,
                "mutants": len(chosen),
                "told_apart": told_apart,
                "killed": killed,
                "kill_share": round(share, 6),
                "caught_coder": caught,
                "overran": overran,
                "coder_on_tests": against_tests.summary()["tests"] if against_tests is not None else "",
            },
        }
        over = f"the tests cost more than the tester's budget of {self.cpu_budget:g} CPU seconds"
        ctx.tell(
            f"The coder's solution: {hidden.verdict.replace('_', ' ')}, {hidden.passed} of {hidden.total} hidden tests passed. "
            + (
                f"The tester's tests: {over}."
                if overran
                else f"The tester's tests: {len(valid)} valid, {len(invalid)} invalid; they killed {killed} of the {told_apart} "
                f"mutants told apart" + ("; one of them fails on the coder's solution." if caught else ".")
            ),
            kind="move",
        )
        winners = ["tester"] if caught else (["coder"] if hidden.verdict == "pass" else [])
        self.scratch.close()
        ctx.finish(
            {"coder": coder, "tester": tester},
            reason=f"both submitted: the solution {hidden.verdict.replace('_', ' ')}, "
            + (over if overran else f"the tests killed {killed}/{told_apart} mutants" + (" and caught the coder" if caught else "")),
            winners=winners,
            details=self._details(ctx),
        )

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """Too many replies without a valid tool call: -1 (minus tool costs) for the offender, 0 for the other."""
        other = self.other(player)
        self.scratch.close()
        ctx.finish({player: -1.0 - self.tool_cost * ctx.tool_calls[player], other: 0.0}, reason=reason, winners=[other], details=self._details(ctx))

    def _details(self, ctx: Context) -> dict[str, Any]:
        assert self.task is not None
        return {
            "task": self.task.task_id,
            "family": self.task.family,
            "steps": list(self.task.steps),
            "scratch_calls": {player: ctx.tool_calls[player] for player in self.players},
            **(self.result or {}),
        }

    # ------------------------------------------------------------------ views
    def view(self, player: str) -> dict[str, Any]:
        """The task as both see it (its opaque handle, statement, examples), the player's role, and the result once
        both have submitted."""
        if self.task is None:
            return {}
        return {
            "role": player,
            "task_id": self.handle,
            "entry_point": self.task.entry_point,
            "statement": self.task.statement,
            "examples": self.task.examples(),
            "max_tests": self.max_tests,
            "result": self.result,
        }

    def render(self) -> str:
        """The task's handle and the result."""
        if self.task is None:
            return "no task yet"
        if self.result is None:
            return f"task {self.handle} [{self.task.family}]: working"
        tester = self.result["tester"]
        return (
            f"task {self.handle}: coder {self.result['coder']['verdict']}, tester {tester['valid']} valid tests, "
            f"killed {tester['killed']}/{tester['told_apart']} mutants"
        )
