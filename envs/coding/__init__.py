"""Coding environments: write, test and attack code, run only inside parlour.sandbox.

``tasks`` generates contamination-free function-writing tasks from a seed (and holds the frozen ``CODE_V1``
practice set), ``loaders`` reads the user's HumanEval/MBPP/APPS/CodeContests JSONL files, ``judge`` runs code on tests
in the sandbox and compares the results on the host, ``mutants`` makes faulty variants of a reference. The
environments: ``code`` (Code), ``coder_tester`` (CoderTester), ``code_proposer_solver`` (CodeProposerSolver).
"""

from parlour.envs.coding.judge import Judgement, same_output
from parlour.envs.coding.loaders import TaskFormatError, load_tasks
from parlour.envs.coding.mutants import mutants
from parlour.envs.coding.task import Task
from parlour.envs.coding.tasks import CODE_V1_SHA256, fingerprint, frozen_tasks, generate_task, task_from_id

__all__ = [
    "CODE_V1_SHA256",
    "Judgement",
    "Task",
    "TaskFormatError",
    "fingerprint",
    "frozen_tasks",
    "generate_task",
    "load_tasks",
    "mutants",
    "same_output",
    "task_from_id",
]
