"""The :class:`Task` every coding environment poses: what to write, how it is tested, and a reference.

Its own module so that the task sources import it one way: :mod:`parlour.envs.coding.tasks` (procgen, the
frozen sets, ids) and :mod:`parlour.envs.coding.loaders` (task files) both build tasks, and ``tasks`` reads
file ids through ``loaders``.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

from parlour.envs.coding.judge import Judgement, assert_plan, judge_asserts, judge_function, judge_stdio
from parlour.sandbox import Sandbox


@dataclass(frozen=True)
class Task:
    """A coding task: what to write, how it is tested, and a reference solution.

    ``kind``: ``function`` (``visible``/``hidden`` hold ``(args, expected)`` pairs: call ``entry_point(*args)``),
    ``asserts`` (they hold test code, HumanEval/MBPP style, run after the solution and ``setup``) or ``stdio``
    (they hold ``(stdin, expected stdout)`` pairs, compared with ``tolerance`` on decimal numbers).
    ``reference`` is a correct solution, or ``""`` where the source gave none. ``steps`` names the blocks of
    a procgen task.
    """

    task_id: str
    kind: str
    family: str
    statement: str
    entry_point: str
    visible: tuple[Any, ...]
    hidden: tuple[Any, ...]
    reference: str
    setup: str = ""
    tolerance: float = 1e-6
    steps: tuple[str, ...] = ()

    def examples(self) -> list[dict[str, Any]]:
        """The visible tests as JSON-ready dicts, for observations."""
        if self.kind == "function":
            return [{"args": list(args), "output": expected} for args, expected in self.visible]
        if self.kind == "stdio":
            return [{"input": stdin, "output": stdout} for stdin, stdout in self.visible]
        return [{"test": test} for test in self.visible]

    @functools.cached_property
    def host_checked(self) -> bool:
        """Whether every verdict on this task comes from the host: always for ``function`` and ``stdio`` tasks;
        for ``asserts`` tasks, when every test can be split between the solution's sandbox and the checker's
        (:func:`parlour.envs.coding.judge.assert_plan`). A task that is not cannot be rated: a solution can
        defeat its tests."""
        if self.kind != "asserts":
            return True
        return assert_plan(self.visible + self.hidden, self.setup, self.entry_point) is not None

    def judge(self, sandbox: Sandbox, code: str, hidden: bool = True) -> Judgement:
        """Run ``code`` on the hidden (or visible) tests in ``sandbox``; see :mod:`parlour.envs.coding.judge`."""
        tests = self.hidden if hidden else self.visible
        if self.kind == "function":
            return judge_function(sandbox, code, self.entry_point, tests)
        if self.kind == "asserts":
            return judge_asserts(sandbox, code, tests, self.setup, self.entry_point)
        return judge_stdio(sandbox, code, tests, self.tolerance)

    def to_json(self) -> dict[str, Any]:
        """Everything about the task as JSON (tuples become lists), for fingerprints and exports."""
        return json.loads(
            json.dumps(
                {
                    "task_id": self.task_id,
                    "kind": self.kind,
                    "family": self.family,
                    "statement": self.statement,
                    "entry_point": self.entry_point,
                    "visible": self.visible,
                    "hidden": self.hidden,
                    "reference": self.reference,
                    "setup": self.setup,
                    "tolerance": self.tolerance,
                    "steps": self.steps,
                }
            )
        )
