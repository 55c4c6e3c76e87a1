"""Goofspiel (the Game of Pure Strategy), with OpenSpiel's ``goofspiel`` rules and defaults.

Two players, ``player_0`` and ``player_1``, each hold the cards 1 to
``num_cards`` (default 13); a third suit of the same values is the prize
deck. Each turn one prize card is turned up and both players bid for it at
once with a card from their hands. The higher bid takes the prize's value in
points; equal bids discard it. Bid cards are spent, and both bids are shown
to both players. When one card is left in each hand it is played for the last
prize without asking (there is no choice), as OpenSpiel does. The player with
more points at the end wins; equal points are a draw.

``points_order`` says how prizes are turned up: ``"random"`` (the default,
drawn from the episode's generator), ``"ascending"`` or ``"descending"``.
``num_cards`` (2 to 30) is the game's size: fewer cards, a shorter and
simpler game.

Moves are ``bid 1`` .. ``bid N``; a reply that is only a number (``7``) bids
that card. The ``Discrete`` index of ``bid v`` is ``v - 1``, OpenSpiel's
action. Vector observation: OpenSpiel's observation tensor for the default
perfect-information game: the current prize one-hot (N), the prizes still to
come (N), each player's points one-hot over 0 .. N(N+1)/2 (own first), then
each player's hand (own first).

Rewards (zero-sum, OpenSpiel's ``win_loss`` returns), paid at the end: +1 to
the player with more points and -1 to the other, 0 each for equal points. A
player who exceeds the invalid-action allowance gets -1 and the opponent +1.

Batched: :class:`GoofspielBatch` plays N games at once for the batched vector
face (``gymnasium.make_vec(..., obs_mode="vector")``, see
:mod:`parlour.envs.core.vector`), both bids of a turn in one step, its random
prizes drawn from each episode slot's own stream.

Version history: v0, first release.
"""

from __future__ import annotations

import re

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.game import Game, int_option
from parlour.envs.core.vector import GameBatch, Streams

MAX_CARDS = 30
ORDERS = ("random", "ascending", "descending")
#: A reply that is a bare card number; long digit runs are left to the move parser (and rejected there).
BARE_NUMBER = re.compile(r"[0-9]{1,4}")

RULES = """You are playing Goofspiel as {player}, against one opponent.
Each player holds the cards 1 to {cards}. Each turn a prize card (worth 1 to {cards} points) is turned up, {order}, and both players bid for it at the same time with one card from their hands.
The higher bid wins the prize's points; equal bids win nothing (the prize is discarded). Bid cards are used up, and both bids are shown to both players. When one card is left in each hand it is played for the last prize automatically.
The player with more points after all {cards} prizes wins; equal points are a draw.
Reply with the card you bid, for example: bid {example}"""
ORDER_TEXT = {
    "random": "drawn at random from the prizes left",
    "ascending": "in order from 1 up",
    "descending": "in order from {cards} down",
}


class GoofspielBatch(GameBatch):
    """Goofspiel's rules on N games at once, both bids of a turn in one step (see :class:`parlour.envs.core.vector.GameBatch`).

    ``hands`` ``(N, 2, num_cards)`` bool (card ``v`` at index ``v - 1``),
    ``deck`` ``(N, num_cards)`` bool (the prizes not yet turned up), ``prize``,
    ``points`` ``(N, 2)`` and ``resolved`` (the turns played) as in
    :class:`Goofspiel`. A random prize is drawn as :meth:`Goofspiel.turn_up`
    draws it, a position among the prizes left in ascending order, one draw
    from the slot's stream (the one :meth:`reset` was given) per prize turned
    up, the last one included.
    """

    simultaneous = True

    def __init__(self, game: Goofspiel, n: int):
        super().__init__(game, n)
        self.num_cards, self.points_order = game.num_cards, game.points_order
        self.point_slots, self.vector_size = game.point_slots, game.vector_size
        self.hands = np.zeros((n, 2, game.num_cards), dtype=bool)
        self.deck = np.zeros((n, game.num_cards), dtype=bool)
        self.prize = np.zeros(n, dtype=np.int64)
        self.points = np.zeros((n, 2), dtype=np.int64)
        self.resolved = np.zeros(n, dtype=np.int64)
        self.rng: Streams | None = None

    def reset(self, rows: np.ndarray, rng: Streams) -> None:
        """Full hands and prize deck, no points; the first prize turned up, it and the prizes to come drawn from ``rng``."""
        self.rng = rng
        self.hands[rows] = True
        self.deck[rows] = True
        self.points[rows] = 0
        self.resolved[rows] = 0
        self._turn_up(rows)

    def _turn_up(self, rows: np.ndarray) -> None:
        """Take the next prize out of the deck in each episode of ``rows``, as ``points_order`` says."""
        turned = self.resolved[rows]  # one prize turned up per turn resolved
        if self.points_order == "random":
            assert self.rng is not None, "reset() gives the prizes' streams"
            position = self.rng.below(rows, self.num_cards - turned)
            # The prize at that position among those left: the first whose running count of prizes left passes it.
            prizes = (np.cumsum(self.deck[rows], axis=1) > position[:, None]).argmax(axis=1) + 1
        elif self.points_order == "ascending":
            prizes = turned + 1
        else:
            prizes = self.num_cards - turned
        self.deck[rows, prizes - 1] = False
        self.prize[rows] = prizes

    def _resolve(self, rows: np.ndarray, bids: np.ndarray) -> None:
        """Spend both bid cards (``bids`` ``(k, 2)``, card indices) and give the prize to the higher bid, to nobody on a tie."""
        self.hands[rows, 0, bids[:, 0]] = False
        self.hands[rows, 1, bids[:, 1]] = False
        prize = self.prize[rows]
        self.points[rows, 0] += prize * (bids[:, 0] > bids[:, 1])
        self.points[rows, 1] += prize * (bids[:, 1] > bids[:, 0])
        self.resolved[rows] += 1

    def legal(self, rows: np.ndarray) -> np.ndarray:
        """``(k, 2, num_cards)`` bool: each seat's cards in hand."""
        return self.hands[rows]

    def step(self, rows: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Both seats' bids ``(k, 2)``; then the next prize, or the forced last turn and the end, as :meth:`Goofspiel.apply`."""
        self._resolve(rows, actions)
        ended = self.resolved[rows] == self.num_cards - 1
        final = rows[ended]
        if final.size:
            # Each hand holds one card: the last turn has no choice in it.
            self._turn_up(final)
            self._resolve(final, self.hands[final].argmax(axis=2))
        going = rows[~ended]
        if going.size:
            self._turn_up(going)
        points = self.points[rows]
        return self.wins((points[:, 1] > points[:, 0]).astype(np.int64), ended & (points[:, 0] != points[:, 1])), ended

    def vector(self, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """The prize one-hot, the prizes to come, both points one-hot and both hands, own first, as :meth:`Goofspiel.vector`."""
        cards, slots = self.num_cards, self.point_slots
        k = len(rows)
        index = np.arange(k)
        others = 1 - seats
        values = np.zeros((k, self.vector_size), dtype=np.float32)
        values[index, self.prize[rows] - 1] = 1.0
        values[:, cards : 2 * cards] = self.deck[rows]
        points = self.points[rows]
        values[index, 2 * cards + points[index, seats]] = 1.0
        values[index, 2 * cards + slots + points[index, others]] = 1.0
        hands = self.hands[rows]
        start = 2 * cards + 2 * slots
        values[:, start : start + cards] = hands[index, seats]
        values[:, start + cards :] = hands[index, others]
        return values


class Goofspiel(Game):
    """Two-player Goofspiel, both bids at once; see the module docstring for moves and rewards.

    ``hands`` holds each player's unplayed card values (sorted), ``prizes`` the
    prize values not yet turned up, ``prize`` the one up now (the last one
    once the game is over), ``points`` each player's total and ``history``
    every resolved turn as ``(prize, bid of player_0, bid of player_1)``.
    """

    name = "Goofspiel"
    reference_agents = ("matching", "random")
    description = "Bid cards 1-13 at once for prize cards turned up one by one; more points wins."
    zero_sum = True
    fixed_rules = True
    simultaneous = True
    batch = GoofspielBatch

    def __init__(self, *, num_cards: int = 13, points_order: str = "random"):
        self.num_cards = int_option("num_cards", num_cards, 2, MAX_CARDS)
        if points_order not in ORDERS:
            raise ValueError(f"points_order must be one of {', '.join(ORDERS)}, got {points_order!r}")
        self.points_order = points_order
        self.players = ["player_0", "player_1"]
        self.moves = [f"bid {v}" for v in range(1, num_cards + 1)]
        self.point_slots = num_cards * (num_cards + 1) // 2 + 1
        self.vector_size = 4 * num_cards + 2 * self.point_slots
        self.hands = [list(range(1, num_cards + 1)) for _ in self.players]
        self.prizes = list(range(1, num_cards + 1))
        self.prize = 0
        self.points = [0, 0]
        self.history: list[tuple[int, int, int]] = []

    def start(self, ctx: Context) -> None:
        """Full hands and prize deck; turn up the first prize."""
        self.hands = [list(range(1, self.num_cards + 1)) for _ in self.players]
        self.prizes = list(range(1, self.num_cards + 1))
        self.points = [0, 0]
        self.history = []
        self.turn_up(ctx)

    def turn_up(self, ctx: Context) -> None:
        """Take the next prize out of the deck, as ``points_order`` says, and announce it."""
        if self.points_order == "random":
            position = int(ctx.rng.integers(len(self.prizes)))
        else:
            position = 0 if self.points_order == "ascending" else len(self.prizes) - 1
        self.prize = self.prizes.pop(position)
        ctx.tell(f"The prize card turned up is {self.prize}.")

    def rules(self, player: str) -> str:
        """Rules, the number of cards and how prizes are turned up."""
        order = ORDER_TEXT[self.points_order].format(cards=self.num_cards)
        return RULES.format(player=player, cards=self.num_cards, order=order, example=(self.num_cards + 1) // 2)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The prize, both hands, the prizes to come and the points."""
        me = self.players.index(player)
        return (
            f"Prize: {self.prize}. Points: you {self.points[me]}, opponent {self.points[1 - me]}.\n"
            f"Your cards: {' '.join(map(str, self.hands[me]))}. Opponent's cards: {' '.join(map(str, self.hands[1 - me]))}.\n"
            f"Prizes still to come: {' '.join(map(str, self.prizes)) or 'none'}.\nYour bid:"
        )

    def legal_actions(self, player: str) -> list[int]:
        """The cards still in the player's hand."""
        return [v - 1 for v in self.hands[self.players.index(player)]]

    def parse(self, player: str, text: str) -> str:
        """A bare number bids that card; anything else is read as for any enumerable game (the last ``bid v`` counts)."""
        bare = text.strip()
        if BARE_NUMBER.fullmatch(bare):
            text = f"bid {int(bare)}"
        return super().parse(player, text)

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Resolve the bids; then turn up the next prize, play the forced last turn, or end the game."""
        self.resolve(ctx, [int(moves[p].split()[1]) for p in self.players])
        if len(self.history) == self.num_cards - 1:
            # Each hand holds one card: the last turn has no choice in it.
            self.turn_up(ctx)
            self.resolve(ctx, [hand[0] for hand in self.hands])
        if self.prizes:
            self.turn_up(ctx)
            return
        a, b = self.points
        score = f"points {a} to {b}"
        if a == b:
            ctx.finish(reason=f"all {self.num_cards} prizes were bid for; {score}: a draw")
        else:
            winner = self.players[0 if a > b else 1]
            ctx.finish({winner: 1.0, self.other(winner): -1.0}, winners=[winner], reason=f"all {self.num_cards} prizes were bid for; {score}")

    def resolve(self, ctx: Context, bids: list[int]) -> None:
        """Spend both bid cards and give the prize to the higher bid (none on a tie); tell each player the turn."""
        for hand, bid in zip(self.hands, bids):
            hand.remove(bid)
        self.history.append((self.prize, bids[0], bids[1]))
        taker = 0 if bids[0] > bids[1] else 1 if bids[1] > bids[0] else None
        if taker is not None:
            self.points[taker] += self.prize
        for me, player in enumerate(self.players):
            result = "equal bids: the prize is discarded" if taker is None else "you take it" if taker == me else "your opponent takes it"
            ctx.tell(
                f"Prize {self.prize}: you bid {bids[me]}, your opponent bid {bids[1 - me]}; {result}. "
                f"Points: you {self.points[me]}, opponent {self.points[1 - me]}.",
                to=player,
            )

    def view(self, player: str) -> dict:
        """Everything but the pending bids: the prize, both hands, the prizes to come, the points and past turns."""
        me = self.players.index(player)
        return {
            "num_cards": self.num_cards,
            "prize": self.prize,
            "hand": list(self.hands[me]),
            "opponent_hand": list(self.hands[1 - me]),
            "prizes_left": list(self.prizes),
            "points": {"you": self.points[me], "opponent": self.points[1 - me]},
            "history": [{"prize": prize, "you": bids[me], "opponent": bids[1 - me]} for prize, *bids in self.history],
        }

    def vector(self, player: str) -> np.ndarray:
        """OpenSpiel's observation tensor: prize one-hot, prizes to come, points one-hot and hands, own first."""
        me = self.players.index(player)
        n = self.num_cards
        values = np.zeros(self.vector_size, dtype=np.float32)
        values[self.prize - 1] = 1.0
        values[[n + v - 1 for v in self.prizes]] = 1.0
        slots = 2 * n
        values[slots + self.points[me]] = 1.0
        values[slots + self.point_slots + self.points[1 - me]] = 1.0
        hands = slots + 2 * self.point_slots
        values[[hands + v - 1 for v in self.hands[me]]] = 1.0
        values[[hands + n + v - 1 for v in self.hands[1 - me]]] = 1.0
        return values

    def render(self) -> str:
        """Every resolved turn, the points, both hands and the prize up now."""
        first, second = self.players
        lines = [f"prize {prize}: {first} bid {a}, {second} bid {b}" for prize, a, b in self.history]
        lines.append(f"points: {first} {self.points[0]}, {second} {self.points[1]}")
        lines += [f"{p} hand: {' '.join(map(str, hand)) or '-'}" for p, hand in zip(self.players, self.hands)]
        if self.hands[0]:
            lines.append(f"prize up: {self.prize}; to come: {' '.join(map(str, self.prizes)) or 'none'}")
        return "\n".join(lines)
