"""The agent protocol: anything with ``act(observation) -> str``.

The observation an agent receives is a dict (see
:meth:`parlour.envs.core.match.Match.agent_observation`):

* ``"text"``: what the player sees this turn, exactly what an LLM is shown;
* ``"legal_moves"``: the exact strings accepted now, or ``None`` when moves
  are not enumerable;
* ``"player"``: the agent's role; ``"env_id"``: the environment;
* ``"view"``: a structured dict of what the player knows (for scripted agents);
* ``"invalid_action"``: why its previous action was rejected, if it was.

Optional methods: ``act_batch(observations) -> list[str]`` for agents that
decide many moves at once (LLMs), and ``reset(seed=None)`` called at the start
of each episode with a seed derived from the episode's.
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol, runtime_checkable


@runtime_checkable
class Agent(Protocol):
    """An agent: returns its action text for an observation."""

    def act(self, observation: Mapping[str, Any]) -> str:
        """The action text for ``observation``."""
        ...


def act_batch(agent: Agent, observations: list[Mapping[str, Any]]) -> list[str]:
    """Ask ``agent`` for many actions at once, through ``act_batch`` when it has one."""
    batch = getattr(agent, "act_batch", None)
    if batch is not None:
        actions = list(batch(observations))
        if len(actions) != len(observations):
            raise ValueError(f"{type(agent).__name__}.act_batch returned {len(actions)} actions for {len(observations)} observations")
        return actions
    return [agent.act(observation) for observation in observations]


def reset_agent(agent: Any, seed: int | None) -> None:
    """Call ``agent.reset(seed=...)`` if the agent has a ``reset`` method."""
    reset = getattr(agent, "reset", None)
    if reset is not None:
        reset(seed=seed)
