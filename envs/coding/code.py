"""Code: write a function (or a program) for a task, try it in a sandbox, then submit it for hidden tests.

One player, ``coder``. Each episode poses one task (see :mod:`parlour.envs.coding.tasks`): by default a
procgen task drawn fresh from the episode's seed, so no model has seen it. The statement and visible
examples arrive in the first observation.

Tools (calls in any syntax of the core: OpenAI ``tool_calls``, ``{"tool": ..., "arguments": ...}``,
``<tool_call>`` JSON, or ``<submit>code</submit>`` tags):

* ``run_python(code, stdin="")``: run a program in the coder's own warm scratch sandbox (one per player and episode) and see its exit
  status, stdout and stderr;
* ``run_tests(code)``: run a solution on the visible examples and see each test's result;
* ``submit(code)`` (final): the move. The code is judged on the hidden tests in a fresh sandbox and the
  episode ends.

Code runs only inside :mod:`parlour.sandbox` (bubblewrap: no network, a private filesystem, CPU, memory and
process limits). Where bubblewrap is missing, ``reset`` raises :class:`parlour.sandbox.SandboxUnavailable`
saying how to install it (``apt-get install bubblewrap``); ``allow_unsafe=True`` runs code without a
sandbox instead, for development only.

Options:

* ``tasks``: ``"procgen"`` (default), ``"CODE_V1"`` (a practice set of 120 frozen tasks, whose hidden tests and
  references ship with parlour, so results on it never count) or the path
  of a JSONL task file (HumanEval, MBPP, APPS or CodeContests records; see
  :mod:`parlour.envs.coding.loaders`);
* ``depth`` (1 to 4, default 2), ``size`` (1 to 64, default 8) and ``family`` (``list``, ``string``,
  ``number``, ``dict``, ``parser``, ``algorithm``, or None for any): procgen's knobs;
* ``reward``: ``"binary"`` (default: 1 if every hidden test passes, else 0), ``"fraction"`` (the share of
  hidden tests passed) or ``"coderl"`` (-1 if the code does not compile, -0.6 for a runtime error or a
  timeout, -0.3 for a wrong answer, +1 for a pass);
* ``tool_cost`` (default 0): subtracted from the reward for every ``run_python`` or ``run_tests`` call;
* ``allow_unsafe`` (default False): see above.

The engine's ``max_tool_calls`` (default 8) bounds the scratch calls of the episode, which is one turn;
``error_allowance`` (default 2) the replies that hold no valid tool call. Exceeding it ends the episode
with a reward of -1 (as low as code that does not compile under ``coderl``) minus the tool costs.

The view names the task by an opaque per-episode handle, never by its id (see
:mod:`parlour.envs.coding.oracle`); ``rateable`` (an attribute, and in the outcome details) is false for a
task file whose asserts a solution could defeat (see :mod:`parlour.envs.coding.judge`).

Outcome details: the task id, family and steps; the verdict (``pass``, ``wrong_answer``,
``runtime_error``, ``timeout``, ``syntax_error``), tests passed and total, one letter per hidden test
(``P`` pass, ``W`` wrong, ``E`` error, ``T`` timeout, ``N`` not run), the number of scratch calls and
whether the task set is rateable. The submitted code is in the record (the ``submit`` call's arguments).
Replay judges the code again in a fresh sandbox and must reproduce all of it; the scratch tools' answers
are kept whole in the record and played back, since a program's output need not reproduce (the engine
counts the calls, for ``tool_cost``; ``call_tool`` changes nothing in the game).

Version history: v0, first release.
"""

from __future__ import annotations

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
from parlour.envs.coding.task import Task
from parlour.envs.core.context import Context
from parlour.envs.core.game import Game

SUBMIT = code_tool("submit", "Submit your final solution. It is judged on the hidden tests and the episode ends.", final=True)

RULES = """You are the coder. Solve the programming task you are given by writing Python code (standard library only; the sandbox has no network).
Tools:
  run_python(code, stdin) -- run any program in a scratch sandbox and see its output
  run_tests(code) -- run your solution on the visible examples and see each result
  submit(code) -- submit your final solution: it is judged on {hidden} hidden tests and the episode ends
{syntax}
Reward: {reward}{cost}"""


class Code(PosesTask, Game):
    """Write code for a task with scratch runs and visible tests, then submit it for hidden tests; see the module docstring."""

    name = "Code"
    reference_agents = ("reference", "random")
    description = (
        "Write a function for a generated task: run code and visible tests in a sandbox, then submit for hidden tests "
        "(tasks='CODE_V1' is a practice set)."
    )
    category = "coding"
    zero_sum = False

    def __init__(
        self,
        *,
        tasks: str = "procgen",
        depth: int | None = None,
        size: int | None = None,
        family: str | None = None,
        reward: str = "binary",
        tool_cost: float = 0.0,
        allow_unsafe: bool = False,
    ):
        self.source = TaskSource.from_options(tasks, depth, size, family)
        self.reward_mode = choice_option("reward", reward, REWARD_MODES)
        self.tool_cost = float_option("tool_cost", tool_cost, 0.0, 1.0)
        self.allow_unsafe = bool_option("allow_unsafe", allow_unsafe)
        self.scratch = ScratchSandboxes(self.allow_unsafe)
        #: Whether every verdict here comes from the host: false for task files whose asserts a solution can defeat.
        self.rateable = self.source.rateable
        self.players = ["coder"]
        self.tools = [RUN_PYTHON, RUN_TESTS, SUBMIT]
        self.task: Task | None = None
        self.handle = ""
        self.result: dict[str, Any] | None = None

    # ------------------------------------------------------------------ episode
    def start(self, ctx: Context) -> None:
        """Check that code can run here, draw the task and show it."""
        task = self.pose_task(ctx)
        ctx.tell(task.statement, to="coder")

    def to_move(self) -> list[str]:
        """The coder, until it submits."""
        return ["coder"]

    def rules(self, player: str) -> str:
        """How the episode works: tools, call syntax and reward."""
        hidden = len(self.task.hidden) if self.task is not None else "the"
        cost = f" Each run_python or run_tests call costs {self.tool_cost:g}." if self.tool_cost else ""
        return RULES.format(hidden=hidden, syntax=TOOL_SYNTAX, reward=REWARD_TEXT[self.reward_mode], cost=cost)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """What to write, and the tools."""
        assert self.task is not None
        target = f"the function `{self.task.entry_point}`" if self.task.entry_point else "the program"
        return f"Write {target}. Call run_python, run_tests, or submit when you are done."

    def apply(self, ctx: Context, moves: dict[str, Any]) -> None:
        """Judge the submission on the hidden tests in a fresh sandbox and end the episode."""
        assert self.task is not None
        code = moves["coder"]["arguments"]["code"]
        with judge.fresh_sandbox(self.allow_unsafe) as sandbox:
            judgement = self.task.judge(sandbox, code)
        reward = reward_of(self.reward_mode, judgement) - self.tool_cost * ctx.tool_calls["coder"]
        self.result = judgement.summary()
        ctx.tell(
            f"Submitted: {judgement.verdict.replace('_', ' ')}, {judgement.passed} of {judgement.total} hidden tests passed.",
            to="coder",
            kind="move",
            sender="coder",
        )
        self.scratch.close()
        ctx.finish(
            {"coder": reward},
            reason=f"the coder submitted ({judgement.verdict.replace('_', ' ')}, {judgement.passed}/{judgement.total} hidden tests)",
            winners=["coder"] if judgement.verdict == "pass" else [],
            details=self._details(ctx, self.result),
        )

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """Too many replies without a valid tool call: -1 minus the tool costs."""
        self.scratch.close()
        ctx.finish({player: -1.0 - self.tool_cost * ctx.tool_calls[player]}, reason=reason, details=self._details(ctx, None))

    def _details(self, ctx: Context, result: dict[str, Any] | None) -> dict[str, Any]:
        assert self.task is not None
        details: dict[str, Any] = {
            "task": self.task.task_id,
            "family": self.task.family,
            "steps": list(self.task.steps),
            "scratch_calls": ctx.tool_calls["coder"],
            "rateable": self.rateable,
        }
        if result is not None:
            details.update(result)
        return details

    # ------------------------------------------------------------------ views
    def view(self, player: str) -> dict[str, Any]:
        """The task as the coder sees it (its opaque handle, statement, function, visible examples) and the result."""
        if self.task is None:
            return {}
        return {
            "task_id": self.handle,
            "kind": self.task.kind,
            "entry_point": self.task.entry_point,
            "statement": self.task.statement,
            "examples": self.task.examples(),
            "result": self.result,
        }

    def render(self) -> str:
        """The task's handle and, once submitted, the verdict."""
        if self.task is None:
            return "no task yet"
        status = f"{self.result['verdict']} ({self.result['passed']}/{self.result['total']})" if self.result else "not submitted"
        return f"task {self.handle} [{self.task.family}]: {status}"
