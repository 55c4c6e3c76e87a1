"""Leduc hold'em, with the rules of OpenSpiel's ``leduc_poker`` for two players.

The deck has six cards, J, Q and K in two suits (spades and hearts); card ``c``
(0..5) is rank ``c // 2`` (J, Q, K) of suit ``c % 2``, as in OpenSpiel. Each of
``player_0`` and ``player_1`` antes 1 chip and gets one private card. Two
betting rounds follow; ``player_0`` acts first in both. A raise puts in what is
owed plus 2 chips in round 1, 4 chips in round 2; at most two raises per round.
A round ends when both players checked, or when a raise has been called. After
round 1 a public card is turned up. At the showdown a pair (private card of the
public card's rank) beats any high card; otherwise the higher private card wins
and equal ranks split the pot. A fold ends the hand at once.

Moves, in ``Discrete`` index order equal to OpenSpiel's actions: ``fold`` (0),
``call`` (1) and ``raise`` (2). ``call`` puts in what is owed; when nothing is
owed it is a check, and the text ``check`` is accepted for it then. The text
``bet`` is accepted for ``raise`` when nothing is owed. Folding is legal only
when something is owed; raising only while fewer than two raises were made in
the round. Text actions are free text: the last of fold/call/check/raise/bet
mentioned counts.

Vector observation (27 values): own seat (2, one-hot), private card rank (3,
one-hot), public card rank (3, one-hot, zero before round 2), round-2 flag (1),
own and opponent chips in the pot divided by 13 (2), then the betting sequence
of each round as OpenSpiel encodes it: up to 4 actions per round, 2 bits each
(call ``10``, raise ``01``).

Rewards (zero-sum, paid at the end): each player's net chips, that is chips won
from the pot minus chips put in; a split pot returns each player's own chips
and is a draw (the outcome names no winner).
A player who exceeds the invalid-action allowance folds: it loses the chips it
has put in and the opponent wins them.

Batched: :class:`LeducHoldemBatch` plays N hands at once for the batched
vector face (``gymnasium.make_vec(..., obs_mode="vector")``, see
:mod:`parlour.envs.core.vector`); it deals from each episode slot's own random
stream, not from the one-episode game's generator.

Version history: v0, first release.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.errors import InvalidMove
from parlour.envs.core.game import Game
from parlour.envs.core.vector import BettingTreeBatch

RANKS = "JQK"
SUITS = "♠♥"
CARD_NAMES = [f"{RANKS[c // 2]}{SUITS[c % 2]}" for c in range(6)]
ANTE = 1
RAISE_SIZES = (2, 4)
MAX_RAISES = 2
#: Most chips one player can put in: ante, then two raises per round.
MAX_CONTRIBUTION = ANTE + MAX_RAISES * sum(RAISE_SIZES)
#: Most actions in one betting round (check, raise, raise, call).
MAX_BETS_PER_ROUND = 4
MOVES = ["fold", "call", "raise"]
SYNONYMS = {"check": "call", "bet": "raise"}
WORD_PATTERN = re.compile(r"(?<![\w])(fold|call|check|raise|bet)(?![\w])", re.IGNORECASE)

RULES = """You are playing Leduc hold'em as {player}; {first}.
The deck has six cards: J, Q and K in two suits. Each player antes 1 chip and gets one private card. There are two betting rounds; player_0 acts first in both.
In a round you may call (put in what you owe; when you owe nothing it is a check), raise (put in what you owe plus 2 chips in round 1, 4 chips in round 2) or fold (give up the pot; only when you owe something). At most two raises per round. A round ends when both players check or a raise is called.
After round 1 a public card is turned up. At the showdown a pair (your card matches the public card's rank) beats any high card; otherwise the higher card wins (K > Q > J) and equal ranks split the pot.
Your reward is the chips you win minus the chips you put in.
Reply with one move: fold, call (or check), raise (or bet). For example: raise"""


def hand_rank(private: int, public: int) -> int:
    """Showdown strength of a private card with the public card: higher is better, pairs above every high card."""
    if private // 2 == public // 2:
        return 10 + private // 2
    return private // 2


class LeducHoldemBatch(BettingTreeBatch["LeducHoldem"]):
    """Leduc hold'em's rules on N hands at once (see :class:`parlour.envs.core.vector.BettingTreeBatch`).

    The betting tree has 85 positions over both rounds; a hand's ``cards`` are
    ``(N, 3)``: the two private cards, then the public one.
    """

    deck = 6
    dealt = 3

    def __init__(self, game: LeducHoldem, n: int):
        super().__init__(game, n)
        self.contributions = np.array([position.contributions for position in self.positions])
        self.second_round = np.array([position.round == 2 for position in self.positions])
        #: Each position's vector for each seat without the cards' ranks (filled in from ``cards``).
        self.public = np.stack([np.stack([position.vector(player) for player in game.players]) for position in self.positions])
        self.public[:, :, 2:8] = 0.0

    @staticmethod
    def position_key(game: LeducHoldem) -> tuple:
        """The betting history of both rounds."""
        return tuple(tuple(moves) for moves in game.history)

    def showdown(self, cards: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Both put in the same chips before a showdown: the better hand takes the other's, equal hands split."""
        ranks = np.where(cards[:, :2] // 2 == cards[:, 2:] // 2, 10 + cards[:, :2] // 2, cards[:, :2] // 2)
        return np.sign(ranks[:, 0] - ranks[:, 1]) * self.contributions[positions, 0]

    def forfeit(self, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """The offenders fold, as :meth:`LeducHoldem.forfeit`: each loses its chips in the pot to the other."""
        index = np.arange(len(rows))
        lost = self.contributions[self.position[rows], seats].astype(np.float64)
        rewards = np.empty((len(rows), 2))
        rewards[index, seats] = -lost
        rewards[index, 1 - seats] = lost
        return rewards

    def vector(self, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """Seat, card ranks, round, chips in the pot and the betting sequence, as :meth:`LeducHoldem.vector`."""
        positions = self.position[rows]
        out = self.public[positions, seats]
        cards = self.cards[rows]
        index = np.arange(len(rows))
        out[index, 2 + cards[index, seats] // 2] = 1.0
        second = self.second_round[positions].nonzero()[0]
        out[second, 5 + cards[second, 2] // 2] = 1.0
        return out


class LeducHoldem(Game):
    """Two-player Leduc hold'em; see the module docstring for moves and rewards."""

    name = "LeducHoldem"
    reference_agents = ("heuristic", "random")
    description = "Two-player poker with a six-card deck, one private and one public card, two betting rounds."
    category = "game"
    zero_sum = True
    fixed_rules = True
    batch = LeducHoldemBatch

    def __init__(self) -> None:
        self.players = ["player_0", "player_1"]
        self.moves: list[str] = list(MOVES)
        self.vector_size = 2 + 3 + 3 + 1 + 2 + 2 * MAX_BETS_PER_ROUND * 2
        self._new_hand([])

    def _new_hand(self, cards: list[int]) -> None:
        """The state before the first action of a hand dealt ``cards`` (two private cards, then the public one)."""
        self.cards = cards
        self.round = 1
        self.contributions = [ANTE, ANTE]
        self.stakes = ANTE
        self.raises = 0
        self.calls = 0
        self.turn = 0
        self.history: list[list[str]] = [[], []]

    def start(self, ctx: Context) -> None:
        """Shuffle; deal one private card each and set the public card aside."""
        self._new_hand([int(c) for c in ctx.rng.permutation(6)[:3]])
        for seat, player in enumerate(self.players):
            ctx.tell(f"You are dealt {CARD_NAMES[self.cards[seat]]}. Both players ante {ANTE}. Round 1 begins.", to=player)

    @property
    def public_card(self) -> int | None:
        """The public card, once turned up in round 2."""
        return self.cards[2] if self.round == 2 else None

    def owed(self, seat: int) -> int:
        """Chips ``seat`` must put in to call."""
        return self.stakes - self.contributions[seat]

    def rules(self, player: str) -> str:
        """Rules and the player's seat."""
        first = "you act first in each round" if player == "player_0" else "your opponent acts first in each round"
        return RULES.format(player=player, first=first)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The cards, the pot and the legal moves."""
        seat = self.players.index(player)
        public = CARD_NAMES[self.cards[2]] if self.round == 2 else "not yet shown"
        owed = self.owed(seat)
        call = f"call ({owed} chip{'s' if owed != 1 else ''})" if owed else "call (= check, you owe nothing)"
        names = {"fold": "fold", "call": call, "raise": f"raise (+{RAISE_SIZES[self.round - 1]} chips after calling)"}
        return (
            f"Round {self.round}. Your card: {CARD_NAMES[self.cards[seat]]}. Public card: {public}.\n"
            f"Chips in the pot: you {self.contributions[seat]}, opponent {self.contributions[1 - seat]}. "
            f"Raises this round: {self.raises} of {MAX_RAISES}.\n"
            f"Legal moves: {', '.join(names[m] for m in legal or [])}."
        )

    def legal_actions(self, player: str) -> list[int]:
        """Fold only when something is owed, call always, raise below the raise cap."""
        seat = self.players.index(player)
        actions = [0] if self.owed(seat) > 0 else []
        actions.append(1)
        if self.raises < MAX_RAISES:
            actions.append(2)
        return actions

    def parse(self, player: str, text: str) -> str:
        """The last of fold/call/check/raise/bet in the text; check and bet only when nothing is owed."""
        legal = self.legal_moves(player)
        words = WORD_PATTERN.findall(text)
        if not words:
            raise InvalidMove(f"No move found. Reply with one of: {', '.join(legal)}.")
        word = words[-1].lower()
        owed = self.owed(self.players.index(player))
        if word in SYNONYMS and owed > 0:
            raise InvalidMove(f"You cannot {word}: you owe {owed} chips. Legal moves: {', '.join(legal)}.")
        move = SYNONYMS.get(word, word)
        if move not in legal:
            raise InvalidMove(f"'{word}' is not legal now. Legal moves: {', '.join(legal)}.")
        return move

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Bet, end the round when it is settled, and end the hand at a fold or the final showdown."""
        ((player, move),) = moves.items()
        seat = self.turn
        self.history[self.round - 1].append(move)
        if move == "fold":
            ctx.tell(f"{player} folds.", kind="move", sender=player)
            self._pay(ctx, winners=[1 - seat], reason=f"{player} folded")
            return
        owed = self.owed(seat)
        if move == "call":
            self.contributions[seat] += owed
            self.calls += 1
            ctx.tell(f"{player} calls {owed}." if owed else f"{player} checks.", kind="move", sender=player)
        else:
            size = RAISE_SIZES[self.round - 1]
            self.stakes += size
            self.contributions[seat] = self.stakes
            self.raises += 1
            self.calls = 0
            ctx.tell(f"{player} raises by {size} (puts in {owed + size}).", kind="move", sender=player)
        settled = self.calls == (2 if self.raises == 0 else 1)
        if not settled:
            self.turn = 1 - seat
        elif self.round == 1:
            self.round, self.raises, self.calls, self.turn = 2, 0, 0, 0
            ctx.tell(f"Round 2 begins. The public card is {CARD_NAMES[self.cards[2]]}.")
        else:
            self._showdown(ctx)

    def _showdown(self, ctx: Context) -> None:
        ranks = [hand_rank(self.cards[seat], self.cards[2]) for seat in (0, 1)]
        shown = ", ".join(f"{p} shows {CARD_NAMES[self.cards[s]]}" for s, p in enumerate(self.players))
        ctx.tell(f"Showdown: {shown}; the public card is {CARD_NAMES[self.cards[2]]}.")
        best = max(ranks)
        winners = [seat for seat in (0, 1) if ranks[seat] == best]
        if len(winners) == 2:
            reason = "showdown: equal hands split the pot"
        else:
            reason = f"{self.players[winners[0]]} won the showdown"
        self._pay(ctx, winners=winners, reason=reason, details={"cards": [CARD_NAMES[c] for c in self.cards]})

    def _pay(self, ctx: Context, winners: list[int], reason: str, details: dict[str, Any] | None = None) -> None:
        """Split the pot among the seats ``winners``; ``details`` adds to the outcome (the cards, only when they were shown).

        A split pot is a draw: each player gets its own chips back and the outcome names no winner.
        """
        pot = sum(self.contributions)
        rewards = {p: (pot / len(winners) if s in winners else 0.0) - self.contributions[s] for s, p in enumerate(self.players)}
        names = [self.players[winners[0]]] if len(winners) == 1 else []
        ctx.finish(rewards, winners=names, reason=reason, details={"pot": pot, **(details or {})})

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """The offender folds: it loses its chips in the pot."""
        self.history[self.round - 1].append("fold")
        self._pay(ctx, winners=[1 - self.players.index(player)], reason=reason)

    def view(self, player: str) -> dict[str, Any]:
        """Own card, the public card once shown, chips in the pot, raises this round and the betting history."""
        seat = self.players.index(player)
        public = self.public_card
        return {
            "seat": seat,
            "card": CARD_NAMES[self.cards[seat]],
            "rank": self.cards[seat] // 2,
            "public_card": None if public is None else CARD_NAMES[public],
            "public_rank": None if public is None else public // 2,
            "round": self.round,
            "contributions": list(self.contributions),
            "owed": self.owed(seat),
            "raises": self.raises,
            "history": [list(h) for h in self.history],
            "to_move": self.turn,
        }

    def vector(self, player: str) -> np.ndarray:
        """Seat, card ranks, round, chips in the pot and the betting sequence (see the module docstring)."""
        seat = self.players.index(player)
        values = np.zeros(self.vector_size, dtype=np.float32)
        values[seat] = 1.0
        values[2 + self.cards[seat] // 2] = 1.0
        if self.public_card is not None:
            values[5 + self.public_card // 2] = 1.0
        values[8] = float(self.round == 2)
        values[9] = self.contributions[seat] / MAX_CONTRIBUTION
        values[10] = self.contributions[1 - seat] / MAX_CONTRIBUTION
        for round_index, actions in enumerate(self.history):
            for i, move in enumerate(actions[:MAX_BETS_PER_ROUND]):
                if move != "fold":
                    values[11 + 2 * (round_index * MAX_BETS_PER_ROUND + i) + (move == "raise")] = 1.0
        return values

    def render(self) -> str:
        """A spectator's view: both private cards, the public card (face down until round 2), the pot, the round and the betting so far."""
        public = CARD_NAMES[self.cards[2]] + ("" if self.round == 2 else " (face down)")
        return (
            f"player_0: {CARD_NAMES[self.cards[0]]} ({self.contributions[0]} in)   "
            f"player_1: {CARD_NAMES[self.cards[1]]} ({self.contributions[1]} in)   public: {public}\n"
            f"round {self.round} of 2   round 1: {' '.join(self.history[0]) or '-'}   round 2: {' '.join(self.history[1]) or '-'}"
        )
