"""What the coding environments share: their tools, the task sources, reward shapes, option checks, the
text of scratch runs and visible-test reports, and the episode mechanics of the games that pose one task."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from parlour.envs.coding import judge
from parlour.envs.coding.blocks import FAMILIES
from parlour.envs.coding.judge import Judgement
from parlour.envs.coding.loaders import file_tasks
from parlour.envs.coding.oracle import episode_handle
from parlour.envs.coding.task import Task
from parlour.envs.coding.tasks import FROZEN_SETS, MAX_DEPTH, MAX_SIZE, frozen_tasks, generate_task
from parlour.envs.core.context import Context
from parlour.envs.core.game import InvalidMove, int_option
from parlour.envs.core.tools import Tool
from parlour.sandbox import Sandbox

#: Characters of a scratch run's stdout and stderr shown to the agent.
SHOWN_OUTPUT = 4000

REWARD_MODES = ("binary", "fraction", "coderl")
#: CodeRL's reward shape (Le et al., 2022): -1 if the code does not compile, -0.6 for a runtime error (timeouts
#: included), -0.3 if it runs but fails a test, +1 if it passes every test.
CODERL = {"syntax_error": -1.0, "runtime_error": -0.6, "timeout": -0.6, "wrong_answer": -0.3, "pass": 1.0}
#: Each reward mode in words, for rules prompts.
REWARD_TEXT = {
    "binary": "1 if your submission passes every hidden test, otherwise 0.",
    "fraction": "the share of hidden tests your submission passes.",
    "coderl": "+1 if your submission passes every hidden test, -0.3 if it fails one, -0.6 if it raises an error or runs out "
    "of time, -1 if it does not compile.",
}


def code_tool(name: str, description: str, final: bool = False, stdin: bool = False, recorded: bool = False) -> Tool:
    """A tool taking ``code`` (and, with ``stdin=True``, an optional ``stdin``); ``recorded`` as in :class:`Tool`."""
    properties: dict[str, Any] = {"code": {"type": "string", "description": "Python source code"}}
    if stdin:
        properties["stdin"] = {"type": "string", "description": "text the program reads from standard input"}
    return Tool(
        name,
        description,
        {"type": "object", "properties": properties, "required": ["code"], "additionalProperties": False},
        final=final,
        recorded=recorded,
    )


# A program's output need not reproduce (it may print the clock), so the scratch tools' answers are kept whole in
# the record and played back on replay: a player cannot void its match with them.
RUN_PYTHON = code_tool(
    "run_python",
    "Run a Python program in a scratch sandbox (standard library only, no network) and see "
    "its exit status, stdout and stderr. Nothing run here is judged.",
    stdin=True,
    recorded=True,
)
RUN_TESTS = code_tool("run_tests", "Run your solution on the task's visible examples and see the result of each.", recorded=True)


def bool_option(name: str, value: Any) -> bool:
    """``value`` if it is a bool; otherwise a ``ValueError`` naming the option."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value


def float_option(name: str, value: Any, low: float, high: float) -> float:
    """``value`` as a float if it is a number in [low, high]; otherwise a ``ValueError`` naming the option and its range."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not low <= value <= high:
        raise ValueError(f"{name} must be a number from {low:g} to {high:g}, got {value!r}")
    return float(value)


def choice_option(name: str, value: Any, choices: tuple[str, ...]) -> str:
    """``value`` if it is one of ``choices``; otherwise a ``ValueError`` listing them."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


@dataclass(frozen=True)
class TaskSource:
    """Where an environment's tasks come from: ``procgen`` (with depth, size, family), a frozen set by name
    (``CODE_V1``), or a JSONL file (see :mod:`parlour.envs.coding.loaders`). Picklable; draws with the episode's rng."""

    tasks: str
    depth: int
    size: int
    family: str | None
    function_only: bool = False

    @classmethod
    def from_options(cls, tasks: Any, depth: Any, size: Any, family: Any, function_only: bool = False) -> TaskSource:
        """Check the options (clear errors) and return the source."""
        if not isinstance(tasks, str) or not tasks:
            raise ValueError(
                f"tasks must be 'procgen', the name of a frozen set ({', '.join(FROZEN_SETS)}) or the path of a JSONL task file, got {tasks!r}"
            )
        if tasks != "procgen" and (depth is not None or size is not None or family is not None):
            raise ValueError("depth, size and family choose procgen tasks; leave them out with tasks=" + repr(tasks))
        depth = 2 if depth is None else int_option("depth", depth, 1, MAX_DEPTH)
        size = 8 if size is None else int_option("size", size, 1, MAX_SIZE)
        if family is not None:
            choice_option("family", family, FAMILIES)
        source = cls(tasks, depth, size, family, function_only)
        if tasks not in ("procgen", *FROZEN_SETS):
            loaded = source.loaded()
            if function_only and any(task.kind != "function" for task in loaded):
                raise ValueError(
                    f"{tasks} holds tasks that are not function tasks with test values; this environment needs procgen or frozen-set tasks"
                )
        return source

    @property
    def rateable(self) -> bool:
        """Whether every verdict on these tasks comes from the host (:attr:`Task.host_checked`): procgen and the
        frozen sets always; a task file when every one of its tests can be split so. The leaderboard rates only
        environments whose ``rateable`` is true."""
        return self.tasks in ("procgen", *FROZEN_SETS) or all(task.host_checked for task in self.loaded())

    def loaded(self) -> tuple[Task, ...]:
        """The tasks of the file (read again only when it changes)."""
        if not os.path.isfile(os.path.expanduser(self.tasks)):
            raise ValueError(f"tasks={self.tasks!r} is neither 'procgen', a frozen set ({', '.join(FROZEN_SETS)}) nor an existing JSONL task file")
        return file_tasks(self.tasks)

    def draw(self, rng: np.random.Generator) -> Task:
        """A task for one episode."""
        if self.tasks == "procgen":
            return generate_task(int(rng.integers(1 << 31)), self.depth, self.size, self.family)
        pool = frozen_tasks(self.tasks) if self.tasks in FROZEN_SETS else self.loaded()
        return pool[int(rng.integers(len(pool)))]


def pose(ctx: Any, source: TaskSource) -> tuple[Task, str]:
    """Draw an episode's task from ``source`` and its opaque handle (see :mod:`parlour.envs.coding.oracle`)."""
    task = source.draw(ctx.rng)
    return task, episode_handle(ctx.rng, task)


def reward_of(mode: str, judgement: Judgement) -> float:
    """The reward of a judgement: ``binary`` (1 for a pass, else 0), ``fraction`` (the share of tests passed) or
    ``coderl`` (:data:`CODERL`)."""
    if mode == "binary":
        return 1.0 if judgement.verdict == "pass" else 0.0
    if mode == "fraction":
        return judgement.fraction
    return CODERL[judgement.verdict]


def _cut(text: str, limit: int = SHOWN_OUTPUT) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} more characters]"


class ScratchSandboxes:
    """The warm sandboxes of one episode's scratch runs: one per player, started on its first run, closed with the episode.

    A warm sandbox carries state between its runs (PID numbering, tmpfs inode numbers; see
    :mod:`parlour.sandbox`), so sharing one would let a player signal the other player, or one tenant's live
    match another's. Each player of each episode therefore runs in a sandbox of its own, with its own uid.
    They are not part of the game's state: a snapshot or a pickled copy starts with none and opens its own.
    """

    def __init__(self, allow_unsafe: bool = False) -> None:
        self.allow_unsafe = allow_unsafe
        self.open: dict[str, Sandbox] = {}

    def of(self, player: str) -> Sandbox:
        """``player``'s sandbox, started on first use."""
        if player not in self.open:
            self.open[player] = Sandbox(judge.SCRATCH_LIMITS, allow_unsafe=self.allow_unsafe)
        return self.open[player]

    def close(self) -> None:
        """Stop every sandbox of the episode (the game calls this when a new episode starts and when one ends)."""
        for sandbox in self.open.values():
            sandbox.close()
        self.open = {}

    def __getstate__(self) -> dict[str, Any]:
        return {"allow_unsafe": self.allow_unsafe}

    def __setstate__(self, state: dict[str, Any]) -> None:
        ScratchSandboxes.__init__(self, state["allow_unsafe"])

    def __del__(self) -> None:
        self.close()


def scratch_run(sandbox: Sandbox, code: str, stdin: str) -> str:
    """Run a program in a player's scratch sandbox; what the agent is told (no timings: replay compares this text)."""
    result = sandbox.run(code, stdin)
    status = {
        "ok": "ran to the end",
        "error": "failed",
        "timeout": "ran out of time",
        "memory": "ran out of memory",
        "output_limit": "wrote too much output and was stopped",
    }[result.verdict]
    exit_text = f"exit status {result.exit_code}" if result.exit_code is not None else f"killed by signal {result.signal}"
    text = f"The program {status} ({exit_text}).\nstdout:\n" + (_cut(result.stdout) if result.stdout else "(empty)\n")
    if result.stderr:
        text += ("" if text.endswith("\n") else "\n") + "stderr:\n" + _cut(result.stderr[-SHOWN_OUTPUT:])
    return text


def describe_test(task: Task, index: int) -> str:
    """A visible test in words: the call, the input, or the test code."""
    test = task.visible[index]
    if task.kind == "function":
        args, _ = test
        return f"{task.entry_point}({', '.join(judge.show(a, 200) for a in args)})"
    if task.kind == "stdio":
        return f"input {judge.show(test[0], 200)}"
    return test.strip()[:300]


def visible_report(task: Task, code: str, sandbox: Sandbox) -> str:
    """Judge ``code`` on the visible tests in a player's scratch sandbox; the agent's report, one line per test."""
    if not task.visible:
        return "This task has no visible tests; try your code with run_python."
    result = task.judge(sandbox, code, hidden=False)
    if result.verdict == "syntax_error":
        return f"Your code does not compile: {result.detail}"
    lines = [f"{result.passed} of {result.total} visible tests passed."]
    if result.detail:
        lines.append(f"Your code did not load: {result.detail}")
    for index, verdict in enumerate(result.tests):
        expected = task.visible[index][1] if task.kind != "asserts" else None
        head = f"test {index + 1}: {describe_test(task, index)}"
        if verdict.status == "pass":
            line = f"{head} -> {verdict.got or 'ok'}: passed"
        elif verdict.status == "wrong":
            line = f"{head}: wrong, {verdict.detail}" if expected is not None else f"{head}: failed ({verdict.detail})"
        elif verdict.status == "not_run":
            line = f"{head}: not run ({verdict.detail})"
        else:
            line = f"{head}: {verdict.status}, {verdict.detail}"
        lines.append(line)
        if verdict.printed:
            lines.append("  printed: " + judge.show(verdict.printed, 300))
    return "\n".join(lines)


TOOL_SYNTAX = (
    "Call a tool in your reply, in any of these forms: an OpenAI tool call; a JSON object "
    '{"tool": "submit", "arguments": {"code": "..."}}; <tool_call>{"name": "submit", "arguments": {"code": "..."}}</tool_call>; '
    "or a tag around the code, <submit>...</submit> (also <run_python>...</run_python>, <run_tests>...</run_tests>)."
)


class PosesTask:
    """Mixin for the games that pose one task per episode (Code, CoderTester): their players try code with the
    scratch tools (``run_python``, ``run_tests``) and move only by a tool call.

    Not a :class:`Game` itself, since the registry registers every Game a module of this package defines: list it
    before Game (``class Code(PosesTask, Game)``). It uses the game's ``name``, ``allow_unsafe``, ``source`` and
    ``scratch``, and sets ``task``, ``handle`` and ``result``.
    """

    name: ClassVar[str]
    allow_unsafe: bool
    source: TaskSource
    scratch: ScratchSandboxes
    task: Task | None
    handle: str
    result: dict[str, Any] | None

    def pose_task(self, ctx: Context) -> Task:
        """Start an episode: check that code can run here, close the last episode's scratch sandboxes, draw the task
        and its handle, and clear the result. Returns the task."""
        judge.require_sandbox(self.name, self.allow_unsafe)
        self.scratch.close()
        task, self.handle = pose(ctx, self.source)
        self.task = task
        self.result = None
        return task

    def parse(self, player: str, text: str) -> Any:
        """Only tool calls are moves here."""
        raise InvalidMove(f"Reply with a tool call: run_python(code, stdin), run_tests(code) or submit(code). {TOOL_SYNTAX}")

    def call_tool(self, player: str, name: str, arguments: dict[str, Any]) -> str:
        """Scratch runs and visible tests, in the player's own scratch sandbox (recorded tools: this changes nothing in the game)."""
        assert self.task is not None
        if name == "run_python":
            return scratch_run(self.scratch.of(player), arguments["code"], arguments.get("stdin", ""))
        return visible_report(self.task, arguments["code"], self.scratch.of(player))
