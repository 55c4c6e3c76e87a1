"""The PettingZoo AEC face of a game: ``pettingzoo.make("aec", "parlour/<Name>-v0")``.

Turn-based games select the player to move; simultaneous games select each
acting player in turn and apply the moves together once all are in. A player
the game eliminates is terminated at once and selected to take its closing
``step(None)`` before play goes on. When the game ends every agent is
terminated (or truncated, when the episode was cut off) and, as PettingZoo
requires, each must then step with ``None`` to leave.

``infos`` is built when read: a step only forgets the last state's, ``last()``
builds the selected agent's alone, and reading ``env.infos`` builds the rest
of the live agents' (the same dict until the next step or reset).
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
        self._infos: dict[str, dict[str, Any]] = {}
        self._build(game_cls, obs_mode, render_mode, options)

    @property
    def infos(self) -> dict[str, dict[str, Any]]:
        """Each live agent's info (see :meth:`parlour.envs.core.match.Match.infos`), built on first read after a step."""
        infos = self._infos
        if len(infos) < len(self.agents):
            missing = [agent for agent in self.agents if agent not in infos]
            infos.update(self.observer.infos(missing))
        return infos

    @infos.setter
    def infos(self, infos: dict[str, dict[str, Any]]) -> None:
        self._infos = infos

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new episode; the same seed gives the same episode."""
        self.match.reset(seed)
        self.agents = agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(agents, 0.0)
        self.terminations = dict.fromkeys(agents, False)
        self.truncations = dict.fromkeys(agents, False)
        self._infos = {}
        self._skip_agent_selection: str | None = None
        self.agent_selection = self.match.acting()[0]

    def last(self, observe: bool = True) -> tuple[dict[str, Any] | None, float, bool, bool, dict[str, Any]]:
        """The selected agent's observation, return so far, termination, truncation and info (as PettingZoo's).

        Only the selected agent's info is built (see the module docstring).
        """
        agent = self.agent_selection
        infos = self._infos
        info = infos.get(agent)
        observer = self.observer
        if info is None:
            info = infos[agent] = observer.info(agent)
        observation = observer.observe(agent) if observe else None
        return observation, self._cumulative_rewards[agent], self.terminations[agent], self.truncations[agent], info

    def observe(self, agent: str) -> dict[str, Any]:
        """The current observation of ``agent``."""
        return self.observer.observe(agent)

    def _was_dead_step(self, action: Any) -> None:
        """The closing step of a dead agent, as PettingZoo's ``AECEnv._was_dead_step``, written here to build no infos.

        The agent leaves every table and ``agents``; the next dead agent is selected if there is one, else play
        returns to the agent selected before the dead ones (``_skip_agent_selection``); rewards are cleared.
        """
        if action is not None:
            raise ValueError("when an agent is dead, the only valid action is None")
        agent = self.agent_selection
        del self.terminations[agent], self.truncations[agent], self.rewards[agent], self._cumulative_rewards[agent]
        self._infos.pop(agent, None)
        agents = self.agents
        agents.remove(agent)
        dead = [other for other in agents if self.terminations[other] or self.truncations[other]]
        if dead:
            if self._skip_agent_selection is None:
                self._skip_agent_selection = agent
            self.agent_selection = dead[0]
        else:
            if self._skip_agent_selection is not None:
                self.agent_selection = self._skip_agent_selection
            self._skip_agent_selection = None
        self._clear_rewards()

    def step(self, action: Any) -> None:
        """Play the selected agent's action (text, or a ``Discrete`` index in vector mode)."""
        agent = self.agent_selection
        terminations = self.terminations
        if terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        match = self.match
        paid = match.submit(agent, action)
        agents = self.agents
        self.rewards = rewards = dict.fromkeys(agents, 0.0)
        cumulative = self._cumulative_rewards
        cumulative[agent] = 0.0
        if paid:
            for player, amount in paid.items():
                if player in rewards:
                    rewards[player] = amount
                    cumulative[player] += amount
        self._infos = {}
        acting = match.acting()
        if acting:
            out = [a for a in agents if a in match.eliminated and not terminations[a]] if match.eliminated else None
            if out:
                # The eliminated take their closing step first; play then resumes with the acting player.
                for player in out:
                    terminations[player] = True
                self._skip_agent_selection = acting[0]
                self.agent_selection = out[0]
            else:
                self.agent_selection = acting[0]
        else:
            done = self.truncations if match.outcome is not None and match.outcome.truncated else terminations
            for player in agents:
                if not terminations[player]:
                    done[player] = True
            self.agent_selection = agents[(agents.index(agent) + 1) % len(agents)]
