"""The declared type of an episode record (see :mod:`parlour.envs.core.record` for the format and its replay).

Its own module, below :class:`~parlour.envs.core.match.Match` (which writes records) and
:mod:`parlour.envs.core.record` (which replays them, with a Match), so both and the faces can name it.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from parlour.envs.core.game import OutcomeDict


class ToolCall(TypedDict):
    """One tool call of a step (see :mod:`parlour.envs.core.record`): what was called, and a digest of its answer.

    A final tool's call has no ``result`` (it is the step's move); a ``recorded`` tool's call keeps its whole
    answer under ``output``, which replay plays back.
    """

    name: str
    arguments: dict[str, Any]
    result: NotRequired[str]
    output: NotRequired[str]


class Step(TypedDict):
    """One action of one player in a record (see :mod:`parlour.envs.core.record`).

    ``action`` is the text as read, a move index (vector mode) or ``None``; ``move`` the parsed move (a JSON value)
    or ``None``; ``error`` why the action was refused, or ``None``; ``rewards`` what the step paid. The rest appear
    only when they apply: ``action_chars`` (the text's length before it was cut), ``calls`` (the tools it called),
    ``failure`` and ``forfeit`` (an agent that could not decide).
    """

    player: str
    action: str | int | None
    move: Any
    error: str | None
    rewards: dict[str, float]
    action_chars: NotRequired[int]
    calls: NotRequired[list[ToolCall]]
    failure: NotRequired[str]
    forfeit: NotRequired[bool]


class Record(TypedDict):
    """An episode record, the versioned JSON document described in :mod:`parlour.envs.core.record`.

    ``agents``, ``agent_seeds`` and ``episode`` are written by whoever ran the episode (an evaluation);
    ``turn_rewards`` (each seat's reward per turn) by the bridges that train on records, and ``mixture``
    (the episode's draw: its index, environment and level) by :class:`parlour.envs.mixture.Mixture`.
    """

    format: str
    format_version: int
    env_id: str
    env_version: int
    options: dict[str, Any]
    seed: int
    players: list[str]
    steps: list[Step]
    done: bool
    returns: dict[str, float]
    eliminated: dict[str, str]
    outcome: OutcomeDict | None
    agents: NotRequired[dict[str, str]]
    agent_seeds: NotRequired[dict[str, int]]
    episode: NotRequired[int]
    turn_rewards: NotRequired[dict[str, list[float]]]
    mixture: NotRequired[dict[str, Any]]
