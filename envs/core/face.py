"""What the two PettingZoo faces (AEC and Parallel) share: the match, the spaces, rendering and the record."""

from __future__ import annotations

from typing import Any

from gymnasium import spaces

from parlour.envs.core.game import Game
from parlour.envs.core.match import Match
from parlour.envs.core.observation import Observer


class MultiAgentFace:
    """Mixin giving a PettingZoo environment its parlour match, spaces, ``render``, ``record`` and ``close``."""

    metadata: dict[str, Any]

    def _build(self, game_cls: type[Game], obs_mode: str, render_mode: str | None, options: dict[str, Any]) -> None:
        self.match = Match(game_cls, options)
        self.observer = Observer(self.match, obs_mode, render_mode)
        self.metadata = {**self.metadata, "name": game_cls.env_id()}
        self.render_mode = render_mode
        self.possible_agents = list(self.match.players)
        self.observation_spaces = self.observer.observation_spaces
        self.action_spaces = self.observer.action_spaces
        self.agents: list[str] = []

    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of ``agent`` (the same object every call)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """The action space of ``agent`` (the same object every call)."""
        return self.action_spaces[agent]

    def render(self) -> str | None:
        """Render the state (see ``render_mode``)."""
        return self.observer.render()

    def record(self, agents: dict[str, str] | None = None) -> dict[str, Any]:
        """The record of the current episode, for :func:`parlour.replay` and the leaderboard."""
        return self.match.record(agents)

    def close(self) -> None:
        """Nothing to release."""
