"""The PettingZoo Parallel face of a game: ``pettingzoo.make("parallel", "parlour/<Name>-v0")``.

Each ``step`` applies the actions of the players acting at that moment; the
actions given for other agents are ignored. ``infos[agent]["acting"]`` says who
is to act, so turn-based games work here too (one actor per step). A player
the game eliminates is terminated in that step's returns and leaves ``agents``.
"""

from __future__ import annotations

from typing import Any

from pettingzoo import ParallelEnv

from parlour.envs.core.face import MultiAgentFace
from parlour.envs.core.game import Game
from parlour.envs.core.observation import RENDER_MODES


class ParallelGame(MultiAgentFace, ParallelEnv):
    """A parlour game as a PettingZoo ``ParallelEnv``; arguments as :class:`parlour.envs.core.aec.AECGame`."""

    metadata = {"render_modes": list(RENDER_MODES)}

    def __init__(self, game_cls: type[Game], obs_mode: str = "text", render_mode: str | None = None, **options: Any):
        super().__init__()
        self._build(game_cls, obs_mode, render_mode, options)

    def reset(self, seed: int | None = None, options: dict | None = None):
        """Start a new episode; returns ``(observations, infos)``."""
        self.match.reset(seed)
        self.agents = list(self.possible_agents)
        return (
            {a: self.observer.observe(a) for a in self.agents},
            self.observer.infos(self.agents),
        )

    def step(self, actions: dict[str, Any]):
        """Apply the acting agents' actions; returns observations, rewards, terminations, truncations, infos."""
        match = self.match
        if not self.agents:
            raise RuntimeError("the episode is over; call reset() to start a new one")
        if not isinstance(actions, dict):
            raise TypeError(f"actions must be a dict from agent to action, got {type(actions).__name__}")
        acting = match.acting()
        missing = [a for a in acting if a not in actions]
        if missing:
            raise ValueError(f"no action given for acting agent(s) {missing}; infos[agent]['acting'] says who acts")
        agents = self.agents
        rewards = {a: 0.0 for a in agents}
        for agent in acting:
            if match.over:
                break
            for player, amount in match.submit(agent, actions[agent]).items():
                if player in rewards:
                    rewards[player] += amount
        observations = {a: self.observer.observe(a) for a in agents}
        truncated = match.outcome is not None and match.outcome.truncated
        terminations = {a: (match.over and not truncated) or a in match.eliminated for a in agents}
        truncations = {a: truncated and a not in match.eliminated for a in agents}
        infos = self.observer.infos(agents)
        self.agents = [] if match.over else [a for a in agents if a not in match.eliminated]
        return observations, rewards, terminations, truncations, infos
