"""What the two PettingZoo faces (AEC and Parallel) share: the match, the spaces, rendering, the record and snapshots."""

from __future__ import annotations

import pickle
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from gymnasium import spaces

from parlour.envs.core.game import Game
from parlour.envs.core.match import Match, Snapshot
from parlour.envs.core.observation import Observer

if TYPE_CHECKING:
    from parlour.envs.core.record_types import Record


class MultiAgentFace:
    """Mixin giving a PettingZoo environment its parlour match, spaces, ``action_mask``, ``render``, ``record``, ``snapshot`` and ``close``."""

    metadata: dict[str, Any]
    #: The attributes of the face itself that a snapshot keeps beside the match.
    FACE_STATE: ClassVar[tuple[str, ...]] = ("agents",)

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

    def action_mask(self, agent: str) -> np.ndarray:
        """``agent``'s int8 mask of legal move indices, built on demand: text observations carry none (vector ones do)."""
        return self.observer.action_mask(agent)

    def render(self) -> str | None:
        """Render the state (see ``render_mode``)."""
        return self.observer.render()

    def record(self, agents: dict[str, str] | None = None) -> Record:
        """The record of the current episode, for :func:`parlour.replay` and the leaderboard."""
        return self.match.record(agents)

    def snapshot(self) -> Snapshot:
        """A picklable copy of the whole episode; :meth:`restore` puts it back, and the same actions then give the same results."""
        face = {name: getattr(self, name, None) for name in self.FACE_STATE}
        return self.match.snapshot(pickle.dumps(face, pickle.HIGHEST_PROTOCOL))

    def restore(self, snapshot: Snapshot) -> None:
        """Return to the episode as :meth:`snapshot` saw it."""
        self.match.restore(snapshot)
        if snapshot.face:
            for name, value in pickle.loads(snapshot.face).items():
                setattr(self, name, value)

    def close(self) -> None:
        """Nothing to release."""
