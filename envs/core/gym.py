"""The Gymnasium face of a game: ``gymnasium.make("parlour/<Name>-v0", opponent=..., seat=...)``.

The learner plays one seat; agents play the others. ``step`` plays the
learner's action, then lets the other seats act until the learner is to act
again or the game ends, and returns the learner's reward summed over all of it.
A tool call answers the learner at once: the observation holds the result and
the learner is still to move. What the game pays the learner before its first
move (while it sets up and while the seats before the learner's act) is added
to the reward of the learner's first ``step``, so the step rewards of an
episode always sum to the learner's return in its record. If the game eliminates the learner, the episode
terminates for it; the other seats play the game out, so the record is whole.

Every reset hands the learner an episode in which it is to act, as
Gymnasium's contract asks. The seats before the learner's may end an episode
before it acts (a Hanabi partner's misplays, an asker who answers without
asking the expert); such a deal is skipped and the next one of the run dealt,
up to ``MAX_DEALS`` in a row, and the game seeds of the deals skipped are in
the reset's ``info["skipped_seeds"]``. Opponents that end every one of them
(a random proposer, whose questions are never valid) are a ``RuntimeError``
saying so: no loop could train that seat against them.

Seeds: ``reset(seed=s)`` is episode ``k`` of a :func:`parlour.evaluate` run
with base seed ``s`` and seats in order (see :mod:`parlour.envs.core.seeding`),
where ``k`` is the number of deals skipped (usually 0), so
``parlour.evaluate(env_id, agents, episodes=k + 1, seed=s, rotate_seats=False)``
re-runs it as its last episode. The environment has ``action_masks()``, which
``sb3_contrib.MaskablePPO`` reads without a wrapper; in text mode it is the only mask, built on
demand, since text observations carry none.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import gymnasium
import numpy as np

from parlour.envs.core.agent import act_batch, reset_agent, wants_vector
from parlour.envs.core.game import Game
from parlour.envs.core.match import Match, Snapshot, game_options
from parlour.envs.core.observation import RENDER_MODES, Observer
from parlour.envs.core.seeding import episode_seeds

if TYPE_CHECKING:
    from parlour.envs.core.record_types import Record

#: Deals ``reset`` tries, in a row, for one in which the learner gets to act (see the module docstring).
MAX_DEALS = 32


#: Turns an opponent spec (a string such as ``"minimax"`` or ``"hf:PATH"``) into an agent, given the
#: environment id. The core knows no agents: ``import parlour`` installs the agents layer's
#: :func:`parlour.make_agent` here, and any caller may install another with :func:`set_agent_resolver`.
AgentResolver = Callable[..., Any]
_agent_resolver: AgentResolver | None = None


def set_agent_resolver(resolver: AgentResolver | None) -> None:
    """Install how the Gymnasium face turns opponent specs into agents: ``resolver(spec, env_id=...) -> agent``."""
    global _agent_resolver
    _agent_resolver = resolver


def resolve_agent(spec: Any, env_id: str) -> Any:
    """An agent for a seat, through the installed resolver; without one, only objects with ``act`` can play."""
    if _agent_resolver is not None:
        return _agent_resolver(spec, env_id=env_id)
    if hasattr(spec, "act"):
        return spec
    raise RuntimeError(
        f"no agent resolver is installed to turn {spec!r} into an agent: `import parlour` installs "
        "parlour.make_agent, or pass an object with act(observation) -> str"
    )


#: An environment's opponent ladder, rung 1 (weakest) first: the opponent specs ``difficulty=k`` picks in games that
#: have no ``difficulty`` option of their own. Installed by the agents layer, which knows the scripted agents.
LadderResolver = Callable[[str], list[Any]]
_ladder_resolver: LadderResolver | None = None


def set_ladder_resolver(resolver: LadderResolver | None) -> None:
    """Install how the Gymnasium face finds an environment's opponent ladder: ``resolver(env_id) -> [spec, ...]``."""
    global _ladder_resolver
    _ladder_resolver = resolver


def opponent_ladder(env_id: str) -> list[Any]:
    """The opponents of ``difficulty`` 1, 2, ... for ``env_id``, weakest first (empty: no ladder is installed)."""
    return [] if _ladder_resolver is None else list(_ladder_resolver(env_id))


#: The Gymnasium face's own options, suggested beside the game's when an option is misspelt.
FACE_OPTIONS = ("opponent", "seat", "obs_mode", "render_mode", "difficulty")


class GymGame(gymnasium.Env):
    """A parlour game as a single-agent ``gymnasium.Env``.

    Args:
        game_cls: the game to play.
        opponent: who plays the other seats: an agent spec string (``"random"``,
            a scripted baseline such as ``"minimax"``, ``"python:module:factory"``,
            ...), any object with ``act(observation) -> str``, or a list (one per
            other seat, in seat order) or dict (seat name to agent) of those.
            Default: the game's ``default_opponents`` for the seats it names, ``"random"`` for the others.
        seat: the learner's seat, as an index into the players or a player name.
        difficulty: in a game with a ``difficulty`` option of its own, that option; in any other, the rung of the
            environment's opponent ladder (1 = weakest, see :func:`opponent_ladder`) that plays the other seats,
            instead of ``opponent``.
        obs_mode: ``"text"`` (default) or ``"vector"``.
        render_mode: ``None``, ``"ansi"`` or ``"human"``.
        **options: the game's options and the engine's.
    """

    metadata = {"render_modes": list(RENDER_MODES)}

    def __init__(
        self,
        game_cls: type[Game],
        opponent: Any = None,
        seat: int | str = 0,
        obs_mode: str = "text",
        render_mode: str | None = None,
        **options: Any,
    ):
        if "difficulty" in options and "difficulty" not in game_options(game_cls):
            opponent = self._ladder_rung(game_cls.env_id(), options.pop("difficulty"), opponent)
        self.match = Match(game_cls, options, face_options=FACE_OPTIONS)
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
        self.agent_seeds: dict[str, int] = {}
        #: What the game paid the learner before its first move of the episode, owed to that move's step.
        self.carried = 0.0
        self.observation_space = self.observer.observation_spaces[self.player]
        self.action_space = self.observer.action_spaces[self.player]

    @staticmethod
    def _ladder_rung(env_id: str, level: Any, opponent: Any) -> Any:
        """The opponent of ``difficulty=level`` on ``env_id``'s ladder; ``ValueError`` naming the rungs otherwise."""
        ladder = opponent_ladder(env_id)
        if not ladder:
            raise ValueError(f"{env_id} has no difficulty option and no opponent ladder; choose its opponent with opponent=...")
        rungs = ", ".join(f"{rung}: {getattr(spec, 'name', None) or spec}" for rung, spec in enumerate(ladder, 1))
        if not isinstance(level, int) or isinstance(level, bool) or not 1 <= level <= len(ladder):
            raise ValueError(f"difficulty on {env_id} is a rung of its opponent ladder, an int from 1 to {len(ladder)} ({rungs}); got {level!r}")
        if opponent is not None:
            raise ValueError(f"difficulty={level} already picks {env_id}'s opponent ({rungs}); give difficulty or opponent, not both")
        return ladder[level - 1]

    def _resolve_opponents(self, opponent: Any) -> dict[str, Any]:
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
        elif opponent is None:
            specs = {p: self.match.game.default_opponents.get(p, "random") for p in others}
        else:
            specs = {p: opponent for p in others}
        agents = {p: resolve_agent(spec, self.match.env_id) for p, spec in specs.items()}
        # The agents layer names an agent after its spec (or an AgentSpec's name); an object keeps its own name.
        self.opponent_names = {p: str(getattr(agent, "name", None) or type(agent).__name__) for p, agent in agents.items()}
        return agents

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start an episode and let the other seats move until the learner is to act; a deal they end before
        that is skipped for the run's next one (see the module docstring)."""
        super().reset(seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(1 << 62))
        match, players = self.match, self.match.players
        skipped = []
        for episode in range(MAX_DEALS):
            game_seed, seat_seeds = episode_seeds(seed, episode, len(players))
            match.reset(game_seed)
            self.agent_seeds = {}
            for player, seat_seed in zip(players, seat_seeds):
                if player in self.opponents:
                    reset_agent(self.opponents[player], seat_seed)
                    self.agent_seeds[player] = seat_seed
            self._play_opponents()
            if self.player in match.acting():
                break
            skipped.append(game_seed)
        else:
            raise RuntimeError(
                f"the other seats ({', '.join(f'{p}: {name}' for p, name in self.opponent_names.items())}) ended {MAX_DEALS} "
                f"episodes in a row (base seed {seed}) before {self.player} could act, so there is no episode to hand "
                f"the learner: choose other opponents (a scripted agent of {match.game.name}) or another seat"
            )
        # Rewards the set-up and the earlier seats paid the learner: its first step hands them over (see the module docstring).
        self.carried = match.returns[self.player]
        info = self.observer.info(self.player)
        if skipped:
            info["skipped_seeds"] = skipped
        return self.observer.observe(self.player), info

    def step(self, action: Any):
        """Play the learner's action, then the other seats'; returns the Gymnasium 5-tuple."""
        match = self.match
        if not match.started:
            raise RuntimeError("call reset() before step()")
        if match.over or self.player in match.eliminated:
            raise RuntimeError("the episode is over; call reset() to start a new one")
        reward = self.carried + match.submit(self.player, action).get(self.player, 0.0)
        self.carried = 0.0
        reward += self._play_opponents()
        outcome = match.outcome
        truncated = outcome is not None and outcome.truncated
        terminated = (match.over and not truncated) or self.player in match.eliminated
        return self.observer.observe(self.player), reward, terminated, truncated, self.observer.info(self.player)

    def _play_opponents(self) -> float:
        """Let other seats act until the learner must act or the game ends; the learner's reward meanwhile."""
        match = self.match

        def decide(player: str) -> Any:
            opponent = self.opponents[player]
            return act_batch(opponent, [match.agent_observation(player, wants_vector(opponent))])[0]

        return match.play_until(decide, seats=self.opponents)[self.player]

    def action_masks(self) -> np.ndarray:
        """The learner's legal moves as a boolean mask, built on demand in either mode (``sb3_contrib.MaskablePPO`` calls this)."""
        return self.observer.action_mask(self.player).astype(bool)

    def render(self) -> str | None:
        """Render the state (see ``render_mode``)."""
        return self.observer.render()

    def record(self, agents: dict[str, str] | None = None) -> Record:
        """The record of the current episode, with the opponents' names and seeds (the learner is ``"learner"`` unless named)."""
        names = {self.player: "learner", **self.opponent_names, **(agents or {})}
        record = self.match.record(names)
        record["agent_seeds"] = dict(self.agent_seeds)
        return record

    def snapshot(self) -> Snapshot:
        """A picklable copy of the episode, the opponents' state included; :meth:`restore` puts it back."""
        try:
            face = pickle.dumps({"opponents": self.opponents, "agent_seeds": self.agent_seeds, "carried": self.carried}, pickle.HIGHEST_PROTOCOL)
        except Exception as error:
            raise TypeError(f"the opponents cannot be copied into a snapshot ({error}); use picklable agents") from None
        return self.match.snapshot(face)

    def restore(self, snapshot: Snapshot) -> None:
        """Return to the episode as :meth:`snapshot` saw it."""
        self.match.restore(snapshot)
        state = pickle.loads(snapshot.face)
        self.opponents = state["opponents"]
        self.agent_seeds = state["agent_seeds"]
        self.carried = state["carried"]
