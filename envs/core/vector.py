"""The batched vector face: N episodes of a game stepped together, with numpy arrays in and out.

::

    envs = gymnasium.make_vec("parlour/TicTacToe-v0", num_envs=1024, obs_mode="vector", opponent="random")
    observations, infos = envs.reset(seed=0)
    observations, rewards, terminations, truncations, infos = envs.step(actions)   # actions: (N,) ints

A game offers this face when its file holds, beside its :class:`Game`, a
:class:`GameBatch` subclass with the same rules over N episodes as numpy arrays
and the game class names it (``batch = TicTacToeBatch``); the registry then
gives the game's Gymnasium id a ``vector_entry_point``. Everything else, the
engine, lives here once: :class:`VectorGame` runs the learner's seat, the
opponents, autoreset, the invalid-action policy, truncation, seeds and spaces;
:func:`parlour.bridges.sb3.sb3_vec_env` views it as a stable-baselines3 ``VecEnv``.

Observations are those of the one-episode Gymnasium face in vector mode,
stacked: ``{"observation": (N, vector_size) float32, "action_mask": (N,
n_moves) int8}``; the mask is all zero where the learner is not to act (an
ended episode). Actions are ``(N,)`` move indices. Rewards are the learner's,
summed over its move and the opponents' moves that follow, as in the
one-episode face. ``infos["seat"]`` holds each episode's learner seat and
``infos["invalid_action"]`` flags the episodes whose action was not legal.

Autoreset is Gymnasium's next-step mode: the step that ends an episode returns
its last observation; the next step ignores that episode's action and returns
the first observation of a new one, with reward 0 and no termination.
The stable-baselines3 view resets in the same step instead, as SB3 expects
(the last observation goes to ``infos[i]["terminal_observation"]``).

Options (keyword arguments of ``gymnasium.make_vec``):

* ``opponent``: ``"random"`` (uniform over the legal moves, drawn from the
  episode slot's random stream), or a batched policy, a callable
  ``(observations, masks) -> actions`` that gets the opponents' vector
  observations ``(k, vector_size)`` and int8 masks ``(k, n_moves)`` of the
  ``k`` episodes where an opponent is to act and returns ``(k,)`` move indices
  (self-play: a policy trained on this face). Scripted agents play one
  episode at a time: use ``vectorization_mode="sync"`` for them. In a
  simultaneous game (Goofspiel) every seat acts at every position: the
  opponents choose their moves for a position as soon as it is reached,
  from their own observations of it (so no opponent sees the learner's move
  of that turn), and the learner's action plays the turn with them, as the
  one-episode face plays it.
* ``seat``: the learner's seat, an index or a player name, or ``"random"``
  for a seat drawn anew for each episode.
* the game's own options and the engine's: ``error_allowance`` (an invalid
  move is not played, the learner's reward is 0 and it is still to act; one
  more than the allowance forfeits, as ``Game.forfeit`` pays) and
  ``max_turns`` (truncation); ``max_action_chars`` is accepted and has no
  effect on move indices.

Seeds: ``reset(seed=s)`` gives episode slot ``i`` its own random stream, the
``i``-th word of ``SeedSequence(s)`` driving a SplitMix64 counter, so slot
``i``'s deals, seats and random opponent moves depend only on ``s``, ``i``
and the learner's moves there, not on the number of slots or on the other
slots. These streams are not the one-episode face's generators: the same
seed deals other cards there.

``obs_mode="text"`` (the default of ``gymnasium.make_vec``) is served as
before by a ``SyncVectorEnv`` of one-episode environments (see
:func:`make_vector_env`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable, Generic, Hashable, TypeVar

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from parlour.envs.core.context import Context, Ending
from parlour.envs.core.game import Game, int_option
from parlour.envs.core.match import engine_options, split_options

#: A game class, for the tables built from copies of one game (:class:`Tree`, :class:`BettingTreeBatch`).
G = TypeVar("G", bound=Game)

#: SplitMix64's increment (the golden ratio in 64 bits) and its output mixers (Steele, Lea and Flood, 2014).
_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)
#: 2**-53: turns the top 53 bits of a 64-bit word into a float in [0, 1).
_UNIT = 1.0 / (1 << 53)

#: A batched opponent policy: (observations (k, vector_size) float32, masks (k, n_moves) int8) -> (k,) move indices.
Policy = Callable[[np.ndarray, np.ndarray], Any]


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's output function: a well-mixed 64-bit word from each counter value."""
    z = (z ^ (z >> np.uint64(30))) * _MIX_1
    z = (z ^ (z >> np.uint64(27))) * _MIX_2
    return z ^ (z >> np.uint64(31))


class Streams:
    """One random stream per episode slot, all advanced together with numpy.

    Stream ``i`` is a SplitMix64 counter started at the ``i``-th 64-bit word of
    ``SeedSequence(seed)``: its draws depend on the seed and ``i`` only.

    Args:
        seed: the base seed; ``None`` draws one from the operating system.
        n: the number of streams.
    """

    def __init__(self, seed: int | None, n: int):
        self.state = np.random.SeedSequence(seed).generate_state(n, np.uint64)
        self._steps = _GAMMA * np.arange(1, 65, dtype=np.uint64)

    def _words(self, rows: np.ndarray, count: int) -> np.ndarray:
        """The next ``count`` 64-bit words of each stream in ``rows``, shape ``(k, count)``."""
        if count > len(self._steps):
            self._steps = _GAMMA * np.arange(1, count + 1, dtype=np.uint64)
        z = self.state[rows][:, None] + self._steps[:count]
        self.state[rows] = z[:, -1]
        return _mix(z)

    def uniform(self, rows: np.ndarray, count: int) -> np.ndarray:
        """``count`` floats in [0, 1) from each stream in ``rows``, shape ``(k, count)``."""
        return (self._words(rows, count) >> np.uint64(11)).astype(np.float64) * _UNIT

    def below(self, rows: np.ndarray, bounds: np.ndarray | int) -> np.ndarray:
        """One int in ``[0, bound)`` from each stream in ``rows`` (bounds below 2**32), shape ``(k,)``."""
        z = self.state[rows] + _GAMMA
        self.state[rows] = z
        high = _mix(z) >> np.uint64(32)
        return ((high * np.asarray(bounds, dtype=np.uint64)) >> np.uint64(32)).astype(np.int64)

    def choice(self, rows: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """A uniformly random allowed index of each row of the boolean ``masks`` (each with one allowed at least).

        The allowed index with the largest of fresh random words: uniform, and
        cheaper for small rows than counting and ranking the allowed indices.
        """
        return (self._words(rows, masks.shape[1]) * masks).argmax(axis=1)

    def permutations(self, rows: np.ndarray, size: int) -> np.ndarray:
        """A uniformly random permutation of ``range(size)`` for each stream in ``rows``, shape ``(k, size)``."""
        return np.argsort(self.uniform(rows, size), axis=1)


class GameBatch:
    """A game's rules over N episodes at once, as numpy arrays: the batched twin of a :class:`Game`.

    A subclass lives in the game's own file and the game class names it
    (``batch = TicTacToeBatch``). It must agree exactly with the one-episode
    game: the same legal moves, the same rewards at the same moves, the same
    ends, and :meth:`vector` equal to ``Game.vector`` value for value.

    ``rows`` arguments are int arrays of distinct episode indices. The engine
    calls :meth:`step` only with legal moves of the seat to act, and never for
    an episode that has ended until :meth:`reset` starts it again.

    A game whose chance comes during play (dice) keeps the ``rng`` that
    :meth:`reset` was given and draws from those rows' streams in :meth:`step`:
    the engine gives every reset the same :class:`Streams` until it is
    reseeded, and a reseed resets every episode.

    A simultaneous game's batch sets ``simultaneous = True``: every seat acts
    at every position of a live episode, :meth:`legal` gives every seat's
    moves, ``(k, n_players, n_moves)``, :meth:`step` takes one legal move per
    seat, ``(k, n_players)``, and ``turn`` is not used.

    Args:
        game: a game built with the options (so they are validated once, by the game).
        n: the number of episodes.

    Attributes:
        n: the number of episodes.
        n_players: the number of seats.
        turn: ``(n,)`` int, the seat to act in each episode (any value once it has ended).
        simultaneous: whether all seats act at once (see above).
    """

    simultaneous = False

    def __init__(self, game: Game, n: int):
        self.n = n
        self.n_players = len(game.players)
        self.zero_sum = game.zero_sum
        self.turn = np.zeros(n, dtype=np.int64)

    def reset(self, rows: np.ndarray, rng: Streams) -> None:
        """Start new episodes in ``rows``, drawing any chance outcome from ``rng`` (those rows' streams)."""
        raise NotImplementedError

    def legal(self, rows: np.ndarray) -> np.ndarray:
        """``(k, n_moves)`` bool: the legal moves of the seat to act in each episode of ``rows`` (a simultaneous game: every seat's)."""
        raise NotImplementedError

    def step(self, rows: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Play ``actions`` (legal move indices, ``(k,)``; a simultaneous game's: one per seat, ``(k, n_players)``) in ``rows``.

        Returns ``(rewards (k, n_players) float64, ended (k,) bool)``.
        """
        raise NotImplementedError

    def vector(self, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """``(k, vector_size)`` float32: each episode of ``rows`` as ``Game.vector`` shows it to seat ``seats[j]``."""
        raise NotImplementedError

    @staticmethod
    def wins(winners: np.ndarray, won: np.ndarray) -> np.ndarray:
        """Rewards ``(k, 2)`` of a two-player game: +1 to seat ``winners[j]`` and -1 to the other where ``won[j]``, else 0."""
        rewards = np.zeros((len(won), 2))
        # Few moves win, so the winners are found first and only their rows written.
        rows = won.nonzero()[0]
        seats = winners[rows]
        rewards[rows, seats] = 1.0
        rewards[rows, 1 - seats] = -1.0
        return rewards

    def forfeit(self, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """End ``rows`` because seat ``seats[j]`` exceeded its invalid-action allowance; the rewards ``(k, n_players)``.

        The default is ``Game.forfeit``'s: -1 to the offender, the others share
        +1 in a zero-sum game (0 otherwise). Games whose ``forfeit`` differs override this.
        """
        rewards = np.full((len(rows), self.n_players), 1.0 / (self.n_players - 1) if self.zero_sum else 0.0)
        rewards[np.arange(len(rows)), seats] = -1.0
        return rewards


@dataclass
class Tree(Generic[G]):
    """The positions reachable from one position of a game by legal moves (see :func:`explore`).

    Attributes:
        positions: the positions, copies of the game; ``positions[0]`` is the start.
        children: ``(len(positions), n_moves)`` int: the position each legal move leads to, -1 for the others.
        turns: the seat to act at each position (0 where the game has ended).
        via: the move index that led to each position (-1 for the start).
        endings: how each position ended the game (the context's ``Ending``), or ``None``.
        rewards: ``(len(positions), n_players)``: what the move into each position paid.
    """

    positions: list[G]
    children: np.ndarray
    turns: np.ndarray
    via: np.ndarray
    endings: list[Ending | None]
    rewards: np.ndarray


def explore(game: G, key: Callable[[G], Hashable]) -> Tree[G]:
    """Every position reachable from the started ``game`` by legal moves, found by playing its ``clone()`` copies.

    A batch class whose game's public state is a small tree (the betting of a
    poker hand) tabulates it with this, so that a move is a table lookup and
    the tables follow the game's own rules. ``key`` names a position (two
    positions with the same key are one). The game must not draw randomness
    after its start.
    """
    assert game.moves is not None
    players = game.players
    rng = np.random.default_rng(0)
    positions = [game.clone()]
    index = {key(positions[0]): 0}
    children: list[list[int]] = []
    turns: list[int] = []
    via, rewards = [-1], [[0.0] * len(players)]
    endings: list[Ending | None] = [None]
    for i, position in enumerate(positions):  # grows as positions are found: breadth first
        row = [-1] * len(game.moves)
        children.append(row)
        if endings[i] is not None:
            turns.append(0)
            continue
        (player,) = position.to_move()
        turns.append(players.index(player))
        for action in position.legal_actions(player):
            child = position.clone()
            ctx = Context(players, rng)
            child.apply(ctx, {player: game.moves[action]})
            name = key(child)
            if name not in index:
                index[name] = len(positions)
                positions.append(child)
                via.append(action)
                endings.append(ctx.ending)
                rewards.append([ctx.step_rewards.get(p, 0.0) for p in players])
            row[action] = index[name]
    return Tree(
        positions, np.array(children, dtype=np.int64), np.array(turns, dtype=np.int64), np.array(via, dtype=np.int64), endings, np.array(rewards)
    )


class BettingTreeBatch(GameBatch, Generic[G]):
    """The batched rules of a two-player card game whose betting does not depend on the cards (Kuhn, Leduc).

    The betting tree is tabulated once from the game itself with :func:`explore`,
    so a hand is its dealt ``cards`` ``(N, dealt)`` and its ``position`` in the
    tree, and a move is a table lookup. Subclasses set ``deck`` (cards shuffled
    per hand) and ``dealt`` (cards kept, in the order the game deals them), and
    give :meth:`position_key`, :meth:`showdown` and ``vector``; ``positions``
    holds the tree's positions for tables of their own.
    """

    deck: int
    dealt: int

    def __init__(self, game: G, n: int):
        super().__init__(game, n)
        start = game.clone()
        start.start(Context(start.players, np.random.default_rng(0)))
        tree = explore(start, key=self.position_key)
        assert game.moves is not None
        self.positions = tree.positions
        self.children = tree.children
        self.to_act = tree.turns
        self.ended = np.array([ending is not None for ending in tree.endings])
        self.at_showdown = self.ended & (tree.via != game.moves.index("fold"))
        self.fold_rewards = tree.rewards
        self.cards = np.zeros((n, self.dealt), dtype=np.int64)
        self.position = np.zeros(n, dtype=np.int64)

    @staticmethod
    def position_key(game: G) -> Hashable:
        """What identifies a betting position of ``game`` (its betting history)."""
        raise NotImplementedError

    def showdown(self, cards: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """What seat 0 wins (seat 1 loses) at each showdown: ``cards`` ``(k, dealt)`` at tree ``positions``."""
        raise NotImplementedError

    def reset(self, rows: np.ndarray, rng: Streams) -> None:
        """Shuffle, deal, and put every hand at the root of the tree (the antes are in)."""
        self.cards[rows] = rng.permutations(rows, self.deck)[:, : self.dealt]
        self.position[rows] = 0
        self.turn[rows] = 0

    def legal(self, rows: np.ndarray) -> np.ndarray:
        """The moves with a child in the tree."""
        return self.children[self.position[rows]] >= 0

    def step(self, rows: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Move down the tree; a fold pays what the tree says, a showdown what the cards decide."""
        positions = self.children[self.position[rows], actions]
        self.position[rows] = positions
        self.turn[rows] = self.to_act[positions]
        rewards = self.fold_rewards[positions]
        showdown = self.at_showdown[positions].nonzero()[0]
        if showdown.size:
            won = self.showdown(self.cards[rows[showdown]], positions[showdown])
            rewards[showdown, 0] = won
            rewards[showdown, 1] = -won
        return rewards, self.ended[positions]


def _seat_option(seat: Any, players: list[str]) -> int | None:
    """The learner's seat index, or ``None`` for a random seat per episode; ``ValueError`` for anything else."""
    if seat == "random":
        return None
    if isinstance(seat, str):
        if seat not in players:
            raise ValueError(f"seat {seat!r} is not a player; players: {players}, or 'random' for a seat per episode")
        return players.index(seat)
    if isinstance(seat, (int, np.integer)) and not isinstance(seat, bool) and 0 <= seat < len(players):
        return int(seat)
    raise ValueError(f"seat must be a player name, an index below {len(players)}, or 'random', got {seat!r}")


def _opponent_option(opponent: Any) -> Policy | None:
    """The batched opponent policy, or ``None`` for uniformly random play; ``ValueError`` naming what is supported otherwise."""
    supported = "opponent='random' or a batched policy, a callable (observations, masks) -> actions"
    if isinstance(opponent, str):
        if opponent == "random":
            return None
        raise ValueError(
            f"the batched vector face plays {supported}; {opponent!r} is a one-episode agent: "
            "use gymnasium.make_vec(..., vectorization_mode='sync') to play it"
        )
    if callable(opponent) and not hasattr(opponent, "act"):
        return opponent
    raise ValueError(f"the batched vector face plays {supported}; got {type(opponent).__name__} (agents with act() need vectorization_mode='sync')")


class VectorGame(VectorEnv):
    """N episodes of a game with a batched twin, as one Gymnasium ``VectorEnv`` (see the module docstring).

    Args:
        game_cls: the game; its ``batch`` class plays the episodes.
        num_envs: the number of episodes stepped together.
        opponent: ``"random"`` or a batched policy callable (see the module docstring).
        seat: the learner's seat (index or player name), or ``"random"`` for one per episode.
        obs_mode: ``"vector"``, the only mode of this face.
        render_mode: ``None``; this face does not render.
        **options: the game's options and the engine's.

    Attributes:
        moves_played: moves played in all episodes since construction, by every seat (for throughput figures; a
            simultaneous game's turn counts each seat's move).
        bids: a simultaneous game's moves chosen by the opponents for each episode's position, ``(N, n_players)``
            (the learner's column unused), beside ``bid`` (which are chosen); ``None`` in a turn-based game.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        game_cls: type[Game],
        num_envs: int = 1,
        opponent: Any = "random",
        seat: int | str = 0,
        obs_mode: str = "vector",
        render_mode: str | None = None,
        **options: Any,
    ):
        if obs_mode != "vector":
            raise ValueError(f"the batched face has obs_mode='vector' only, got {obs_mode!r}; for text use vectorization_mode='sync' or 'async'")
        if render_mode is not None:
            raise ValueError(f"the batched face does not render (render_mode={render_mode!r}); render a one-episode environment instead")
        batch_cls = game_cls.batch
        if batch_cls is None:
            raise ValueError(f"{game_cls.name} has no batched rules (no batch class); use vectorization_mode='sync'")
        self.num_envs = n = int_option("num_envs", num_envs, 1)
        own, engine = split_options(game_cls, options)
        self.game = game = game_cls(**own)
        if game.moves is None:
            raise ValueError(f"{game.name} has no enumerable moves in this configuration, so no vector face")
        self.settings = engine_options(game, engine)
        self.players = list(game.players)
        self.batch: GameBatch = batch_cls(game, n)
        self.fixed_seat = _seat_option(seat, self.players)
        self.policy = _opponent_option(opponent)
        n_moves = len(game.moves)
        self.single_observation_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (game.vector_size,), np.float32),
                "action_mask": spaces.Box(0, 1, (n_moves,), np.int8),
            }
        )
        self.single_action_space = spaces.Discrete(n_moves)
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        self.render_mode = None
        self.streams: Streams | None = None
        self.seat = np.zeros(n, dtype=np.int64)
        self.over = np.ones(n, dtype=bool)
        self.truncated = np.zeros(n, dtype=bool)
        self.errors = np.zeros((n, len(self.players)), dtype=np.int64)
        self.turns = np.zeros(n, dtype=np.int64)
        self.mask = np.zeros((n, n_moves), dtype=bool)
        self.moves_played = 0
        self.bids = np.zeros((n, len(self.players)), dtype=np.int64) if self.batch.simultaneous else None
        self.bid = np.zeros((n, len(self.players)), dtype=bool)
        self._all = np.arange(n)
        self._everywhere = np.ones(n, dtype=bool)

    # ---------------------------------------------------------------- the API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start a new episode in every slot; ``seed`` gives each slot a new stream (see the module docstring), without one the streams go on."""
        if options:
            raise ValueError(f"the batched face takes no reset options, got {options!r}")
        if seed is not None and (not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0):
            raise ValueError(f"seed must be a non-negative int or None, got {seed!r}")
        super().reset(seed=seed)
        if seed is not None or self.streams is None:
            self.streams = Streams(seed, self.num_envs)
        self._start(self._all)
        self._play_opponents(np.zeros(self.num_envs))
        return self._observe(), self._infos(np.zeros(self.num_envs, dtype=bool))

    def step(self, actions: Any):
        """Play the learner's move in every live episode, then the opponents'; restart the episodes that ended last step."""
        actions = self._check(actions)
        ended = self.over.nonzero()[0]
        live = (~self.over).nonzero()[0]
        if ended.size:
            # Started before the learner moves elsewhere, so that one round of opponent moves serves both.
            self._start(ended)
        rewards, invalid = self._move(live, actions)
        if ended.size:
            # The step of a restarted slot is its reset (next-step autoreset), and pays nothing. Unlike GymGame, this face
            # does not carry what the opponents' opening moves pay to the learner's first step: no batched game pays then.
            rewards[ended] = 0.0
        return self._observe(), rewards, self.over & ~self.truncated, self.truncated.copy(), self._infos(invalid)

    def action_masks(self) -> np.ndarray:
        """``(N, n_moves)`` bool: the learner's legal moves in each episode (none where it ended)."""
        return self.mask.copy()

    def close(self, **kwargs: Any) -> None:
        """Nothing to release: the episodes are arrays."""

    # ---------------------------------------------------------------- engine
    def _check(self, actions: Any) -> np.ndarray:
        """The learner's actions as an ``(N,)`` int array; ``ValueError`` for another shape or non-integers."""
        if self.streams is None:
            raise RuntimeError("call reset() before step()")
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or actions.dtype.kind not in "iu":
            raise ValueError(
                f"actions must be {self.num_envs} move indices (an int array of shape ({self.num_envs},)), got {actions.dtype} {actions.shape}"
            )
        return actions.astype(np.int64, copy=False)

    def _move(self, live: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The learner's moves in the ``live`` episodes, then the opponents' wherever one is to act; the learner's rewards and invalid flags."""
        rewards = np.zeros(self.num_envs)
        invalid = np.zeros(self.num_envs, dtype=bool)
        if live.size:
            valid = self._play(live, self.seat[live], actions[live], np.take(self.mask, live, axis=0), rewards)
            assert valid is not None
            invalid[live] = ~valid
        self._play_opponents(rewards)
        return rewards, invalid

    def _start(self, rows: np.ndarray) -> None:
        """New episodes in ``rows`` (the opponents' opening moves are left to :meth:`_play_opponents`)."""
        streams = self.streams
        assert streams is not None
        self.batch.reset(rows, streams)
        self.seat[rows] = self.fixed_seat if self.fixed_seat is not None else streams.below(rows, len(self.players))
        self.over[rows] = False
        self.truncated[rows] = False
        self.errors[rows] = 0
        self.turns[rows] = 0
        self.bid[rows] = False

    def _play_opponents(self, rewards: np.ndarray) -> None:
        """Let the opponents move wherever one is to act, until the learner is to act or the episode ends everywhere.

        In a simultaneous game they choose their moves for the position instead (see :meth:`_choose_bids`).
        """
        if self.bids is not None:
            self._choose_bids(rewards)
            return
        batch = self.batch
        while True:
            rows = (~self.over & (batch.turn != self.seat)).nonzero()[0]
            if not rows.size:
                return
            legal = batch.legal(rows)
            seats = batch.turn[rows]
            if self.policy is None:
                # Drawn from the legal moves, so no check is needed.
                self._play(rows, seats, self.streams.choice(rows, legal), None, rewards)  # type: ignore[union-attr]
                continue
            self._play(rows, seats, self._ask(rows, seats, legal), legal, rewards)

    def _choose_bids(self, rewards: np.ndarray) -> None:
        """A simultaneous game's opponents choose their moves for each live episode's position, where they have none; adds the learner's rewards.

        Each opponent decides from its own observation before the learner's
        move is known, as the one-episode face has the other seats submit
        first. An invalid choice counts against the seat's allowance and the
        seat is asked again, or forfeits past it.
        """
        batch, bids = self.batch, self.bids
        assert bids is not None
        n_players = len(self.players)
        asked = True
        while asked:
            asked = False
            # Each opponent by its place after the learner, so that no episode appears twice in one draw from the streams.
            for shift in range(1, n_players):
                others = (self.seat + shift) % n_players
                rows = (~self.over & ~self.bid[self._all, others]).nonzero()[0]
                if not rows.size:
                    continue
                asked = True
                seats = others[rows]
                legal = batch.legal(rows)[self._all[: rows.size], seats]
                if self.policy is None:
                    actions = self.streams.choice(rows, legal)  # type: ignore[union-attr]
                    valid = np.ones(rows.size, dtype=bool)
                else:
                    actions = self._ask(rows, seats, legal)
                    valid = self._valid(actions, legal)
                chosen, refused = valid.nonzero()[0], (~valid).nonzero()[0]
                bids[rows[chosen], seats[chosen]] = actions[chosen]
                self.bid[rows[chosen], seats[chosen]] = True
                if refused.size:
                    paid, out = self._refuse(rows[refused], seats[refused])
                    self.over[rows[refused]] = out
                    rewards[rows[refused]] += paid[self._all[: refused.size], self.seat[rows[refused]]]

    def _ask(self, rows: np.ndarray, seats: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """The opponent policy's moves for ``seats`` in ``rows``, from their observations and masks; ``ValueError`` for a malformed answer."""
        policy = self.policy
        assert policy is not None, "the random opponent draws its moves without asking"
        actions = np.asarray(policy(self.batch.vector(rows, seats), legal.astype(np.int8)))
        if actions.shape != rows.shape or actions.dtype.kind not in "iu":
            raise ValueError(f"the opponent policy must return {rows.size} move indices (ints), got {actions.dtype} {actions.shape}")
        return actions.astype(np.int64, copy=False)

    def _valid(self, actions: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """Which of ``actions`` are legal: each a move index marked in its row of ``legal``."""
        k, n_moves = legal.shape
        safe = np.maximum(np.minimum(actions, n_moves - 1), 0)
        # Flat indices: much cheaper than indexing a 2-D array with two index arrays.
        return legal.reshape(-1)[self._all[:k] * n_moves + safe] & (safe == actions)

    def _refuse(self, rows: np.ndarray, seats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Invalid actions of ``seats`` in ``rows``, counted against their allowance; the rewards ``(k, n_players)`` and which forfeited."""
        self.errors[rows, seats] += 1
        out = self.errors[rows, seats] > self.settings.error_allowance
        paid = np.zeros((rows.size, len(self.players)))
        if out.any():
            paid[out] = self.batch.forfeit(rows[out], seats[out])
        return paid, out

    def _resolve(self, rows: np.ndarray, seats: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``batch.step`` with the acting ``seats``' legal ``actions``; in a simultaneous game, beside the opponents' chosen moves."""
        if self.bids is None:
            return self.batch.step(rows, actions)
        moves = self.bids[rows]
        moves[self._all[: rows.size], seats] = actions
        # A new position: the opponents choose again.
        self.bid[rows] = False
        return self.batch.step(rows, moves)

    def _play(self, rows: np.ndarray, seats: np.ndarray, actions: np.ndarray, legal: np.ndarray | None, rewards: np.ndarray) -> np.ndarray | None:
        """The acting ``seats``' ``actions`` in the live ``rows`` under the invalid-action policy; adds the learner's rewards.

        ``legal`` holds the acting seats' legal moves, or is ``None`` when the
        actions were drawn from them. Returns which actions were legal (``None``: all, unchecked).
        """
        k = rows.size
        index = self._all[:k]
        valid = None if legal is None else self._valid(actions, legal)
        if valid is None or valid.all():
            paid, ended = self._resolve(rows, seats, actions)
            moved = rows
        else:
            paid = np.zeros((k, len(self.players)))
            ended = np.zeros(k, dtype=bool)
            good = valid.nonzero()[0]
            if good.size:
                paid[good], ended[good] = self._resolve(rows[good], seats[good], actions[good])
            bad = (~valid).nonzero()[0]
            paid[bad], ended[bad] = self._refuse(rows[bad], seats[bad])
            moved = rows[good]
        self.moves_played += moved.size if self.bids is None else moved.size * len(self.players)
        limit = self.settings.max_turns
        if limit is not None:
            self.turns[moved] += 1
            cut = ~ended & (self.turns[rows] >= limit)
            self.truncated[rows[cut]] = True
            ended |= cut
        self.over[rows] = ended
        rewards[rows] += paid.reshape(-1)[index * paid.shape[1] + self.seat[rows]]
        return valid

    def _observe(self) -> dict[str, np.ndarray]:
        """The learner's observations and masks, stacked; the mask is kept for the next step's legality check."""
        batch = self.batch
        if self.bids is None:
            self.mask = batch.legal(self._all) & (~self.over & (batch.turn == self.seat))[:, None]
        else:
            # Every seat acts at every position of a simultaneous game.
            self.mask = batch.legal(self._all)[self._all, self.seat] & ~self.over[:, None]
        return {"observation": batch.vector(self._all, self.seat), "action_mask": self.mask.astype(np.int8)}

    def _infos(self, invalid: np.ndarray) -> dict[str, np.ndarray]:
        """Each episode's learner seat, and which episodes' actions were invalid (Gymnasium's ``_key`` masks beside)."""
        return {"seat": self.seat.copy(), "_seat": self._everywhere.copy(), "invalid_action": invalid, "_invalid_action": invalid.copy()}


def make_vector_env(game_cls: type[Game], num_envs: int = 1, obs_mode: str = "text", **kwargs: Any) -> VectorEnv:
    """The ``vector_entry_point`` registered for games with a batch class.

    ``obs_mode="vector"`` gives the batched :class:`VectorGame`; text mode
    (``gymnasium.make_vec``'s default when no mode is named) gives what
    ``vectorization_mode="sync"`` gives, a ``SyncVectorEnv`` of one-episode environments.
    """
    if obs_mode == "vector":
        return VectorGame(game_cls, num_envs=num_envs, obs_mode=obs_mode, **kwargs)
    env_id = game_cls.env_id()
    return gymnasium.vector.SyncVectorEnv([functools.partial(gymnasium.make, env_id, obs_mode=obs_mode, **kwargs) for _ in range(num_envs)])
