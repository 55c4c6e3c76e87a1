"""Opaque task handles, and the privileged channel from a handle to the task behind it.

Observations of the coding environments never carry a task's id (``procgen:SEED:...``, ``CODE_V1:7``,
``file:PATH#LINE``): :func:`parlour.envs.coding.tasks.task_from_id` rebuilds a task from its id, hidden tests
and reference included. They carry a *handle* instead: a keyed hash of the id under a secret drawn from the
episode's generator and kept out of every view (:func:`episode_handle`), so a handle names the task within
its episode and says nothing about it; the same task gets another handle in another episode. The id itself
is in the outcome's details, after the episode.

Oracles need the task anyway: the ``reference`` baseline, the upper bound of the scale, submits the task's
reference solution. They get it here, through :func:`privileged_oracle`, which maps the handles of this
process's recent episodes to their tasks. Using it makes an agent *privileged*: such an agent says so with a
class attribute ``privileged = True``, and :func:`is_privileged` is what the leaderboard checks to refuse it.
(An agent that runs in the environment's own process can reach the environment's state whatever this module
does; the channel exists so that the oracle is named and refusable, never to hide data from local code.)
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Any

from parlour.envs.coding.task import Task

#: How many recent episodes' tasks the oracle keeps (enough for every episode a rollout has in flight).
REMEMBERED = 4096
#: Bytes of the per-episode secret.
SECRET_BYTES = 16


class Oracle:
    """The tasks behind recent episodes' handles, in this process. Privileged: see the module docstring."""

    def __init__(self) -> None:
        self._tasks: OrderedDict[str, Task] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, handle: str, task: Task) -> None:
        """Keep ``task`` under ``handle``, forgetting the oldest beyond :data:`REMEMBERED`."""
        with self._lock:
            self._tasks[handle] = task
            self._tasks.move_to_end(handle)
            while len(self._tasks) > REMEMBERED:
                self._tasks.popitem(last=False)

    def task(self, handle: str) -> Task:
        """The task behind ``handle``; ``LookupError`` if no recent episode of this process posed it."""
        with self._lock:
            found = self._tasks.get(handle)
        if found is None:
            raise LookupError(
                f"no episode of this process posed a task with handle {handle!r}: the oracle knows only the "
                "tasks of environments running in the same process as the privileged agent"
            )
        return found

    def __deepcopy__(self, memo: dict) -> Oracle:
        # An agent copied per episode still reads the one channel of its process.
        return self

    def __reduce__(self) -> tuple[Any, tuple]:
        # An agent sent to a worker process reads that process's channel, where its episodes run.
        return privileged_oracle, ()


_ORACLE = Oracle()


def episode_handle(rng: Any, task: Task) -> str:
    """The opaque handle of ``task`` in an episode: a keyed BLAKE2b of its id under a secret drawn from the
    episode's generator ``rng``; the task is remembered under it for :func:`privileged_oracle`."""
    secret = bytes(rng.bytes(SECRET_BYTES))
    handle = "task-" + hashlib.blake2b(task.task_id.encode("utf-8"), key=secret, digest_size=12).hexdigest()
    _ORACLE.remember(handle, task)
    return handle


def privileged_oracle() -> Oracle:
    """The oracle of this process: for privileged agents only (``privileged = True``), which the leaderboard refuses."""
    return _ORACLE


def is_privileged(agent: Any) -> bool:
    """Whether ``agent`` says it reads hidden data through :func:`privileged_oracle` (its ``privileged`` attribute)."""
    return getattr(agent, "privileged", False) is True
