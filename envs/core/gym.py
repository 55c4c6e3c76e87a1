"""The Gymnasium face of a game: ``gymnasium.make("parlour/<Name>-v0", opponent=..., seat=...)``.

The learner plays one seat; agents play the others. ``step`` plays the
learner's action, then lets the other seats act until the learner is to act
again or the game ends, and returns the learner's reward summed over all of it.
"""

from __future__ import annotations

from typing import Any

import gymnasium

from parlour.envs.core.agent import act_batch, reset_agent
from parlour.envs.core.game import Game
from parlour.envs.core.match import Match
from parlour.envs.core.observation import RENDER_MODES, Observer


class GymGame(gymnasium.Env):
    """A parlour game as a single-agent ``gymnasium.Env``.

    Args:
        game_cls: the game to play.
        opponent: who plays the other seats: an agent spec string (``"random"``,
            a scripted baseline such as ``"minimax"``, ``"python:module:factory"``,
            ...), any object with ``act(observation) -> str``, or a list (one per
            other seat, in seat order) or dict (seat name to agent) of those.
        seat: the learner's seat, as an index into the players or a player name.
        obs_mode: ``"text"`` (default) or ``"vector"``.
        render_mode: ``None``, ``"ansi"`` or ``"human"``.
        **options: the game's options.
    """

    metadata = {"render_modes": list(RENDER_MODES)}

    def __init__(
        self,
        game_cls: type[Game],
        opponent: Any = "random",
        seat: int | str = 0,
        obs_mode: str = "text",
        render_mode: str | None = None,
        **options: Any,
    ):
        self.match = Match(game_cls, options)
        self.observer = Observer(self.match, obs_mode, render_mode)
        self.render_mode = render_mode
        players = self.match.players
        if isinstance(seat, str):
            if seat not in players:
                raise ValueError(f"seat {seat!r} is not a player of {game_cls.name}; players: {players}")
            self.player = seat
        elif isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < len(players):
            self.player = players[seat]
        else:
            raise ValueError(f"seat must be a player name or an index below {len(players)}, got {seat!r}")
        self.opponents = self._resolve_opponents(opponent)
        self.observation_space = self.observer.observation_spaces[self.player]
        self.action_space = self.observer.action_spaces[self.player]

    def _resolve_opponents(self, opponent: Any) -> dict[str, Any]:
        from parlour.agents import make_agent

        others = [p for p in self.match.players if p != self.player]
        if isinstance(opponent, dict):
            unknown = set(opponent) - set(others)
            missing = set(others) - set(opponent)
            if unknown or missing:
                raise ValueError(f"opponent dict must name exactly the other seats {others}; unknown {sorted(unknown)}, missing {sorted(missing)}")
            specs = dict(opponent)
        elif isinstance(opponent, (list, tuple)):
            if len(opponent) != len(others):
                raise ValueError(f"opponent list needs one agent per other seat ({len(others)}: {others}), got {len(opponent)}")
            specs = dict(zip(others, opponent))
        else:
            specs = {p: opponent for p in others}
        return {p: make_agent(spec, env_id=self.match.env_id) for p, spec in specs.items()}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start an episode and let the other seats move until the learner is to act."""
        super().reset(seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(1 << 62))
        self.match.reset(seed)
        for index, agent in enumerate(self.opponents.values()):
            reset_agent(agent, seed + 1 + index)
        self._play_opponents()
        return self.observer.observe(self.player), self.observer.info(self.player)

    def step(self, action: Any):
        """Play the learner's action, then the other seats'; returns the Gymnasium 5-tuple."""
        match = self.match
        if match.over:
            raise RuntimeError("the episode is over; call reset() to start a new one")
        if not match.started:
            raise RuntimeError("call reset() before step()")
        reward = match.submit(self.player, action).get(self.player, 0.0)
        reward += self._play_opponents()
        return (
            self.observer.observe(self.player),
            reward,
            match.over,
            False,
            self.observer.info(self.player),
        )

    def _play_opponents(self) -> float:
        """Let other seats act until the learner must act or the game ends; the learner's reward meanwhile."""
        match = self.match
        reward = 0.0
        while not match.over:
            waiting = [p for p in match.acting() if p != self.player]
            if not waiting:
                break
            for player in waiting:
                if match.over:
                    break
                (action,) = act_batch(self.opponents[player], [match.agent_observation(player)])
                reward += match.submit(player, action).get(self.player, 0.0)
        return reward

    def render(self) -> str | None:
        """Render the state (see ``render_mode``)."""
        return self.observer.render()

    def record(self, agents: dict[str, str] | None = None) -> dict[str, Any]:
        """The record of the current episode."""
        return self.match.record(agents)
