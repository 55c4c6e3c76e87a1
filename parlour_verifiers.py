"""The ``parlour_verifiers`` taskset of the ``verifiers`` package: every parlour environment, one seat per trace.

verifiers (0.4, ``verifiers.v1``) finds a taskset by importing the module
named by its id and taking the ``Taskset``, ``Env`` and ``Harness``
subclasses in its ``__all__``. This top-level module, installed with parlour,
is that module, so any process can load the bridge by name::

    vf-eval parlour_verifiers --env.taskset.env-id parlour/TicTacToe-v0 --env.learner-seats '[0]' --model MODEL ...

The classes live in :mod:`parlour.bridges.verifiers_env`, which documents them.
"""

from parlour.bridges.verifiers_env import ChatHarness, ParlourEnv, ParlourEnvConfig, ParlourTask, ParlourTaskset, ParlourTasksetConfig

__all__ = ["ChatHarness", "ParlourEnv", "ParlourEnvConfig", "ParlourTask", "ParlourTaskset", "ParlourTasksetConfig"]
