"""The agent protocol: anything with ``act(observation) -> str``.

The observation an agent receives is a dict (see
:meth:`parlour.envs.core.match.Match.agent_observation`):

* ``"text"``: what the player sees this turn, exactly what an LLM is shown;
* ``"legal_moves"``: the exact strings accepted now, or ``None`` when moves
  are not enumerable;
* ``"player"``: the agent's role; ``"env_id"``: the environment;
* ``"view"``: a structured dict of what the player knows (for scripted agents);
* ``"invalid_action"``: why its previous action was rejected, if it was;
* ``"vector"``: the player's vector observation (enumerable games), only for
  agents whose ``needs_vector`` attribute is true (policies trained on the
  vector face), since building it costs time every other agent would pay.

Optional methods: ``act_batch(observations) -> list[str]`` for agents that
decide many moves at once (LLMs), and ``reset(seed=None)`` called at the start
of each episode with a seed derived from the episode's.

``act`` and ``act_batch`` may return an :class:`Action` instead of a string:
the engine plays its ``text``, and rollouts (:mod:`parlour.evaluation.rollout`) keep its
``metadata`` (token ids, log-probabilities) for trainers. An agent that could not
decide at all (its model server failed after its retries) returns an
:class:`AgentFailure`: the engine counts that turn as an invalid action and
records the reason, so the episode, the allowance and the record stay consistent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, runtime_checkable


@runtime_checkable
class Agent(Protocol):
    """An agent: returns its action text for an observation."""

    def act(self, observation: Mapping[str, Any]) -> str:
        """The action text for ``observation``."""
        ...


@dataclass
class Action:
    """An action with what a trainer needs to know about how it was made.

    Attributes:
        text: what the engine plays: text, or an OpenAI assistant message dict with ``tool_calls``.
        metadata: anything the agent wants kept beside the turn, e.g. ``prompt_ids``,
            ``completion_ids`` and per-token ``logprobs``; never seen by the game.
    """

    text: Any
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AgentFailure:
    """What an agent plays when it could not decide: the engine records it as that turn's invalid action.

    Attributes:
        reason: why, for the record and the run's failure summary (e.g. the backend's error after its retries).
        forfeit: end the episode for this player at once, whatever its invalid-action allowance (an agent
            whose backend is known to be down, behind an open circuit breaker, forfeits the rest).
    """

    reason: str
    forfeit: bool = False


def as_action(value: Any) -> Action:
    """``value`` as an :class:`Action` (a plain string gets empty metadata)."""
    return value if isinstance(value, Action) else Action(value)


def action_text(value: Any) -> Any:
    """What the engine plays for an agent's answer: the ``text`` of an :class:`Action`, anything else as it is."""
    return value.text if isinstance(value, Action) else value


def wants_vector(agent: Any) -> bool:
    """Whether ``agent`` asks for the vector observation (its ``needs_vector`` attribute)."""
    return bool(getattr(agent, "needs_vector", False))


def decide(agent: Agent, observations: list[Mapping[str, Any]]) -> list[Action]:
    """Ask ``agent`` for many actions at once, through ``act_batch`` when it has one; every answer as an :class:`Action`."""
    batch = getattr(agent, "act_batch", None)
    if batch is not None:
        actions = list(batch(observations))
        if len(actions) != len(observations):
            raise ValueError(f"{type(agent).__name__}.act_batch returned {len(actions)} actions for {len(observations)} observations")
        return [as_action(action) for action in actions]
    return [as_action(agent.act(observation)) for observation in observations]


def act_batch(agent: Agent, observations: list[Mapping[str, Any]]) -> list[Any]:
    """Like :func:`decide`, but only what the engine plays (the actions' text)."""
    return [action.text for action in decide(agent, observations)]


def reset_agent(agent: Any, seed: int | None) -> None:
    """Call ``agent.reset(seed=...)`` if the agent has a ``reset`` method."""
    reset = getattr(agent, "reset", None)
    if reset is not None:
        reset(seed=seed)
