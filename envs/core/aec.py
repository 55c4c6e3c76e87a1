"""The PettingZoo AEC face of a game: ``pettingzoo.make("aec", "parlour/<Name>-v0")``.

Turn-based games select the player to move; simultaneous games select each
acting player in turn and apply the moves together once all are in. A player
the game eliminates is terminated at once and selected to take its closing
``step(None)`` before play goes on. When the game ends every agent is
terminated (or truncated, when the episode was cut off) and, as PettingZoo
requires, each must then step with ``None`` to leave.
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv

from parlour.envs.core.face import MultiAgentFace
from parlour.envs.core.game import Game
from parlour.envs.core.observation import RENDER_MODES


class AECGame(MultiAgentFace, AECEnv):
    """A parlour game as a PettingZoo ``AECEnv``.

    Args:
        game_cls: the game to play.
        obs_mode: ``"text"`` (default) or ``"vector"``.
        render_mode: ``None``, ``"ansi"`` or ``"human"``.
        **options: the game's options and the engine's (``error_allowance``, ``max_turns``, ...).
    """

    metadata = {"render_modes": list(RENDER_MODES), "is_parallelizable": True}
    FACE_STATE = (
        "agents",
        "rewards",
        "_cumulative_rewards",
        "terminations",
        "truncations",
        "infos",
        "agent_selection",
        "_skip_agent_selection",
    )

    def __init__(self, game_cls: type[Game], obs_mode: str = "text", render_mode: str | None = None, **options: Any):
        super().__init__()
        self._build(game_cls, obs_mode, render_mode, options)

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new episode; the same seed gives the same episode."""
        self.match.reset(seed)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = self.observer.infos(self.agents)
        self._skip_agent_selection = None
        self.agent_selection = self.match.acting()[0]

    def observe(self, agent: str) -> dict[str, Any]:
        """The current observation of ``agent``."""
        return self.observer.observe(agent)

    def step(self, action: Any) -> None:
        """Play the selected agent's action (text, or a ``Discrete`` index in vector mode)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        match = self.match
        paid = match.submit(agent, action)
        agents = self.agents
        self.rewards = rewards = dict.fromkeys(agents, 0.0)
        cumulative = self._cumulative_rewards
        cumulative[agent] = 0.0
        for player, amount in paid.items():
            if player in rewards:
                rewards[player] = amount
                cumulative[player] += amount
        self.infos = self.observer.infos(agents)
        acting = match.acting()
        if acting:
            out = [a for a in agents if a in match.eliminated and not self.terminations[a]] if match.eliminated else None
            if out:
                # The eliminated take their closing step first; play then resumes with the acting player.
                for player in out:
                    self.terminations[player] = True
                self._skip_agent_selection = acting[0]
                self.agent_selection = out[0]
            else:
                self.agent_selection = acting[0]
        else:
            done = self.truncations if match.outcome is not None and match.outcome.truncated else self.terminations
            for player in agents:
                if not self.terminations[player]:
                    done[player] = True
            self.agent_selection = agents[(agents.index(agent) + 1) % len(agents)]
