"""Pig, the dice game, with OpenSpiel's ``pig`` rules.

``num_players`` players (default 2, up to 10; OpenSpiel's ``players``) take
turns, ``player_0`` first. On its turn a player rolls a die of
``dice_outcomes`` faces (default 6) as often as it likes: each roll of 2 or
more adds the face to its turn total, and a 1 wipes the turn total out and
ends the turn. A player who stops banks its turn total into its score and
passes the turn. The first to bank ``win_score`` points (default 100)
wins; a player whose score and turn total reach it can only stop. With
``piglet=True`` every roll but a 1 counts one point. OpenSpiel's options are
``winscore``, ``diceoutcomes`` and ``piglet``; its ``horizon`` stays at its
default: the game is a draw once 1000 decisions (rolls and stops) were made
without a winner, before the die of a 1000th-decision roll is cast.

Dice are OpenSpiel's chance nodes, drawn here from the episode's generator
when a player rolls. Moves are ``roll`` and ``stop`` (``Discrete`` 0 and 1,
OpenSpiel's actions). Vector observation: OpenSpiel's observation tensor
turned to the player's side, ``(1 + num_players) * (win_score + 1)``
values: one-hot rows of the turn total, then the scores of the player and of
the others in seat order after it (each capped at ``win_score``).

Rewards (zero-sum, OpenSpiel's): +1 to the winner and -1/(n-1) to each other
player at the last move; 0 each for a draw. A player who exceeds the
invalid-action allowance gets -1 and the others share +1.

Batched: :class:`PigBatch` plays N games at once for the batched vector face
(``gymnasium.make_vec(..., obs_mode="vector")``, see
:mod:`parlour.envs.core.vector`), its dice drawn from each episode slot's
own stream.

Version history: v0, first release.
"""

from __future__ import annotations

from typing import Any, Self

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.game import Game, int_option
from parlour.envs.core.vector import GameBatch, Streams

#: Decisions after which the game is a draw: OpenSpiel's default horizon.
HORIZON = 1000
ROLL, STOP = 0, 1

RULES = """You are playing Pig as {player}, one of {count} players; {first}.
On your turn you roll a {faces}-sided die as many times as you like. A roll of 2 or more adds {gain} to your turn total; a roll of 1 loses your turn total and ends your turn. When you stop, your turn total is added to your score and the next player rolls.
The first player to reach {win} points wins. Once your score plus your turn total reaches {win}, you can only stop. If {horizon} rolls and stops are made without a winner, the game is a draw.
Reply with roll or stop."""


class PigBatch(GameBatch):
    """Pig's rules on N games at once (see :class:`parlour.envs.core.vector.GameBatch`).

    ``scores`` ``(N, players)``, ``turn_total``, ``decisions`` and
    ``last_roll`` ``(N,)`` as in :class:`Pig`. The dice come from the streams
    :meth:`reset` was given, one draw from a slot's stream per roll.
    """

    def __init__(self, game: Pig, n: int):
        super().__init__(game, n)
        self.win_score, self.dice_outcomes, self.piglet = game.win_score, game.dice_outcomes, game.piglet
        #: What each other player gets when one wins (zero-sum, as Pig.apply pays).
        self.share = -1.0 / (self.n_players - 1)
        self.scores = np.zeros((n, self.n_players), dtype=np.int64)
        self.turn_total = np.zeros(n, dtype=np.int64)
        self.decisions = np.zeros(n, dtype=np.int64)
        self.last_roll = np.zeros(n, dtype=np.int64)
        self.rng: Streams | None = None
        self._scores = self.scores.reshape(-1)
        self._seats = np.arange(self.n_players)

    def reset(self, rows: np.ndarray, rng: Streams) -> None:
        """Every score 0, ``player_0`` to roll; the dice will come from ``rng``."""
        self.rng = rng
        self.scores[rows] = 0
        self.turn_total[rows] = 0
        self.decisions[rows] = 0
        self.last_roll[rows] = 0
        self.turn[rows] = 0

    def legal(self, rows: np.ndarray) -> np.ndarray:
        """Roll or stop; only stop once the score and turn total reach the winning score."""
        legal = np.ones((len(rows), 2), dtype=bool)
        legal[:, ROLL] = self._scores[rows * self.n_players + self.turn[rows]] + self.turn_total[rows] < self.win_score
        return legal

    def step(self, rows: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Bank or roll (a 1 loses the turn total and the turn); a banked win or the horizon ends the game."""
        seats = self.turn[rows]
        following = (seats + 1) % self.n_players
        decisions = self.decisions[rows] + 1
        self.decisions[rows] = decisions
        rewards = np.zeros((len(rows), self.n_players))
        ended = decisions >= HORIZON
        stops = (actions == STOP).nonzero()[0]
        if stops.size:
            stopped, mine = rows[stops], rows[stops] * self.n_players + seats[stops]
            self._scores[mine] += self.turn_total[stopped]
            self.turn_total[stopped] = 0
            self.turn[stopped] = following[stops]
            winners = stops[self._scores[mine] >= self.win_score]
            rewards[winners] = self.share
            rewards[winners, seats[winners]] = 1.0
            ended[winners] = True
        # At the horizon a roll casts no die.
        rolls = ((actions == ROLL) & ~ended).nonzero()[0]
        if rolls.size:
            rolled = rows[rolls]
            assert self.rng is not None, "reset() gives the dice's streams"
            faces = self.rng.below(rolled, self.dice_outcomes) + 1
            self.last_roll[rolled] = faces
            lost = faces == 1
            self.turn_total[rolled[lost]] = 0
            self.turn[rolled[lost]] = following[rolls[lost]]
            self.turn_total[rolled[~lost]] += 1 if self.piglet else faces[~lost]
        return rewards, ended

    def vector(self, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """One-hot rows of the turn total, then the scores from each seat on, capped at the winning score, as :meth:`Pig.vector`."""
        width = self.win_score + 1
        k = len(rows)
        values = np.zeros((k, (1 + self.n_players) * width), dtype=np.float32)
        index = np.arange(k)
        values[index, np.minimum(self.turn_total[rows], self.win_score)] = 1.0
        order = (seats[:, None] + self._seats) % self.n_players
        scores = np.minimum(self._scores[(rows * self.n_players)[:, None] + order], self.win_score)
        values[index[:, None], (1 + self._seats) * width + scores] = 1.0
        return values


class Pig(Game):
    """Pig for 2-10 players; see the module docstring for the rules and rewards.

    ``scores`` holds the banked points per seat, ``turn`` the seat to move,
    ``turn_total`` its points at risk, ``decisions`` the rolls and stops so
    far and ``last_roll`` the last face rolled (0 before the first roll).
    """

    name = "Pig"
    reference_agents = ("hold", "random")
    description = (
        "Dice: roll to build a turn total, stop to bank it, a 1 loses it; first to 100 wins "
        "(difficulty: win_score 10-200, dice_outcomes 2-20, piglet, 2-10 players, as OpenSpiel's pig)."
    )
    zero_sum = True
    fixed_rules = True
    batch = PigBatch

    def __init__(self, *, num_players: int = 2, win_score: int = 100, dice_outcomes: int = 6, piglet: bool = False):
        self.num_players = int_option("num_players", num_players, 2, 10)
        self.win_score = int_option("win_score", win_score, 10, 200)
        self.dice_outcomes = int_option("dice_outcomes", dice_outcomes, 2, 20)
        if not isinstance(piglet, bool):
            raise ValueError(f"piglet must be True or False, got {piglet!r}")
        self.piglet = piglet
        self.players = [f"player_{i}" for i in range(self.num_players)]
        self.moves = ["roll", "stop"]
        self.vector_size = (1 + self.num_players) * (self.win_score + 1)
        self.scores = [0] * self.num_players
        self.turn = 0
        self.turn_total = 0
        self.decisions = 0
        self.last_roll = 0

    @classmethod
    def from_view(cls, view: dict[str, Any]) -> Pig:
        """A game in the position a player's :meth:`view` shows (nothing is hidden)."""
        game = cls(num_players=len(view["scores"]), win_score=view["win_score"], dice_outcomes=view["dice_outcomes"], piglet=view["piglet"])
        game.scores = list(view["scores"])
        game.turn = view["to_move"]
        game.turn_total = view["turn_total"]
        game.decisions = view["decisions"]
        game.last_roll = view["last_roll"]
        return game

    def clone(self) -> Self:
        """An independent copy: the scores are copied, the options and move names shared."""
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy.scores = list(self.scores)
        return copy

    def start(self, ctx: Context) -> None:
        """Every score 0, ``player_0`` to roll."""
        self.scores = [0] * self.num_players
        self.turn = 0
        self.turn_total = 0
        self.decisions = 0
        self.last_roll = 0

    def rules(self, player: str) -> str:
        """Rules, the options and the player's seat."""
        first = "you move first" if player == self.players[0] else f"{self.players[0]} moves first, then each player in seat order"
        return RULES.format(
            player=player,
            count=self.num_players,
            first=first,
            faces=self.dice_outcomes,
            gain="1 point" if self.piglet else "its face",
            win=self.win_score,
            horizon=HORIZON,
        )

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """Every score, the player's turn total and the legal moves."""
        scores = ", ".join(f"{p} {score}" for p, score in zip(self.players, self.scores))
        return f"Scores: {scores}. Your turn total: {self.turn_total}. Legal moves: {', '.join(legal or [])}."

    def legal_actions(self, player: str) -> list[int]:
        """Roll or stop; only stop once the score and turn total reach the winning score."""
        if self.scores[self.players.index(player)] + self.turn_total >= self.win_score:
            return [STOP]
        return [ROLL, STOP]

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Roll the die (a 1 loses the turn total and the turn) or bank the turn total; end on a win or the horizon."""
        ((player, move),) = moves.items()
        seat = self.turn
        self.decisions += 1
        if move == "stop":
            banked, self.turn_total = self.turn_total, 0
            self.scores[seat] += banked
            self.turn = (seat + 1) % self.num_players
            ctx.tell(f"{player} stops and banks {banked}: score {self.scores[seat]}.", kind="move", sender=player)
            if self.scores[seat] >= self.win_score:
                share = -1.0 / (self.num_players - 1)
                payoffs = {p: 1.0 if p == player else share for p in self.players}
                ctx.finish(payoffs, winners=[player], reason=f"{player} reached {self.win_score} points")
                return
        elif self.decisions >= HORIZON:
            ctx.tell(f"{player} rolls.", kind="move", sender=player)
        else:
            face = int(ctx.rng.integers(1, self.dice_outcomes + 1))
            self.last_roll = face
            if face == 1:
                self.turn_total = 0
                self.turn = (seat + 1) % self.num_players
                ctx.tell(f"{player} rolls a 1 and loses its turn total.", kind="move", sender=player)
            else:
                self.turn_total += 1 if self.piglet else face
                ctx.tell(f"{player} rolls a {face}: turn total {self.turn_total}.", kind="move", sender=player)
        if self.decisions >= HORIZON:
            ctx.finish(reason=f"{HORIZON} rolls and stops were made without a winner: a draw")

    def view(self, player: str) -> dict:
        """The scores, the player's seat, whose turn it is, its turn total, the last face rolled, the decisions made and the options."""
        return {
            "scores": list(self.scores),
            "seat": self.players.index(player),
            "to_move": self.turn,
            "turn_total": self.turn_total,
            "last_roll": self.last_roll,
            "decisions": self.decisions,
            "win_score": self.win_score,
            "dice_outcomes": self.dice_outcomes,
            "piglet": self.piglet,
        }

    def vector(self, player: str) -> np.ndarray:
        """One-hot rows of the turn total, then the scores from the player's seat on, each capped at the winning score."""
        seat = self.players.index(player)
        width = self.win_score + 1
        values = np.zeros((1 + self.num_players, width), dtype=np.float32)
        values[0, min(self.turn_total, self.win_score)] = 1.0
        for row in range(self.num_players):
            values[1 + row, min(self.scores[(seat + row) % self.num_players], self.win_score)] = 1.0
        return values.reshape(-1)

    def render(self) -> str:
        """The scores and the turn total of the player to move."""
        scores = ", ".join(f"{p} {score}" for p, score in zip(self.players, self.scores))
        return f"Scores: {scores}. {self.players[self.turn]} to move, turn total {self.turn_total}."
