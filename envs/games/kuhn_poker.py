"""Kuhn poker, with OpenSpiel's ``kuhn_poker`` rules.

The deck holds three cards, Jack < Queen < King. Each player antes 1 chip and
is dealt one private card (``player_0`` first, then ``player_1``); the third
card is not used. ``player_0`` acts first. A player with no bet to face may
``check`` or ``bet`` 1 chip; a player facing a bet may ``fold`` (the bettor
takes the pot) or ``call`` 1 chip (showdown). Two checks also lead to the
showdown, where the higher card takes the pot and both cards are shown to
both players. At most one bet is made per hand, so the possible hands are
check-check, check-bet-fold, check-bet-call, bet-fold and bet-call.

Moves and their ``Discrete`` indices: ``check`` 0, ``bet`` 1 (no bet pending),
``fold`` 2, ``call`` 3 (facing a bet). OpenSpiel's action is the index modulo
2: ``check`` and ``fold`` are its pass (0), ``bet`` and ``call`` its bet (1).
The last move mentioned in a reply counts.
Vector observation: 11 values, as OpenSpiel's information state tensor: the
player's seat one-hot (2), its card one-hot (3), then for each of the up to
three actions so far a pass/bet one-hot (2 each).

Rewards (zero-sum), paid when the hand ends: the net chips won or lost, that
is +1/-1 after a fold or a showdown without a bet, +2/-2 after a called bet. A
player who exceeds the invalid-action allowance loses as if it folded: -1, and
the opponent +1.

Batched: :class:`KuhnPokerBatch` plays N hands at once for the batched vector
face (``gymnasium.make_vec(..., obs_mode="vector")``, see
:mod:`parlour.envs.core.vector`); it deals from each episode slot's own random
stream, not from the one-episode game's generator.

Version history: v0, first release.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.game import Game
from parlour.envs.core.vector import BettingTreeBatch

CARDS = ("J", "Q", "K")
CARD_NAMES = {"J": "Jack", "Q": "Queen", "K": "King"}
MOVES = ["check", "bet", "fold", "call"]
#: Moves that put a chip into the pot.
PAYING = ("bet", "call")
ANTE = 1

RULES = """You are playing Kuhn poker as {player}; {first}.
The deck has three cards: Jack < Queen < King. Each player puts 1 chip into the pot (the ante) and gets one private card; the third card stays hidden.
Players act in turn, at most one bet per hand:
- with no bet to face, you may "check" (bet nothing) or "bet" (add 1 chip);
- facing a bet, you may "fold" (give up the pot) or "call" (add 1 chip).
The hand ends when a player folds (the other takes the pot), after a call, or after two checks. Without a fold, both cards are shown and the higher card takes the pot.
Your reward is the chips you win or lose: 1 after a fold or two checks, 2 after a called bet.
Reply with your move, for example: check"""


class KuhnPokerBatch(BettingTreeBatch["KuhnPoker"]):
    """Kuhn poker's rules on N hands at once (see :class:`parlour.envs.core.vector.BettingTreeBatch`).

    The betting tree has nine positions; a hand's ``cards`` are ``(N, 2)``
    indices into :data:`CARDS`, two of the three dealt.
    """

    deck = len(CARDS)
    dealt = 2

    def __init__(self, game: KuhnPoker, n: int):
        super().__init__(game, n)
        self.stakes = np.array([position.contributions[0] for position in self.positions])
        #: Each position's vector for each seat without the card (filled in from ``cards``).
        self.public = np.stack([np.stack([position.vector(player) for player in game.players]) for position in self.positions])
        self.public[:, :, 2 : 2 + len(CARDS)] = 0.0

    @staticmethod
    def position_key(game: KuhnPoker) -> tuple:
        """The betting history."""
        return tuple(game.history)

    def showdown(self, cards: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Both put in the same chips before a showdown; the higher card takes them."""
        return np.where(cards[:, 0] > cards[:, 1], 1.0, -1.0) * self.stakes[positions]

    def vector(self, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """Seat, card and a pass/bet one-hot per action so far, as :meth:`KuhnPoker.vector`."""
        out = self.public[self.position[rows], seats]
        out[np.arange(len(rows)), 2 + self.cards[rows, seats]] = 1.0
        return out


class KuhnPoker(Game):
    """Two-player Kuhn poker; see the module docstring for moves and rewards."""

    name = "KuhnPoker"
    reference_agents = ("nash", "random")
    description = "Three-card poker (J, Q, K): one private card each, ante 1, one bet of 1."
    zero_sum = True
    fixed_rules = True
    batch = KuhnPokerBatch

    def __init__(self) -> None:
        self.players = ["player_0", "player_1"]
        self.moves: list[str] = list(MOVES)
        self.vector_size = 11
        self.cards: list[str] = []
        self.history: list[str] = []
        self.contributions = [ANTE, ANTE]
        self.revealed = False

    def start(self, ctx: Context) -> None:
        """Deal one card to each player and collect the antes."""
        # Shuffling the list draws as rng.permutation(3) does, without building and converting an array.
        deck = list(CARDS)
        ctx.rng.shuffle(deck)
        self.cards = deck[:2]
        self.history = []
        self.contributions = [ANTE, ANTE]
        self.revealed = False
        for player, card in zip(self.players, self.cards):
            ctx.tell(f"Your card is the {CARD_NAMES[card]} ({card}).", to=player)

    def facing_bet(self) -> bool:
        """Whether the player to act must answer a bet."""
        return "bet" in self.history

    def to_move(self) -> list[str]:
        """``player_0`` on the first and third actions, ``player_1`` on the second."""
        return [self.players[len(self.history) % 2]]

    def rules(self, player: str) -> str:
        """Rules and the player's seat."""
        first = "you act first" if player == self.players[0] else "your opponent acts first"
        return RULES.format(player=player, first=first)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The player's card, the pot and its options."""
        card = self.cards[self.players.index(player)]
        situation = "You face a bet." if self.facing_bet() else "There is no bet to face."
        return f"Your card: {CARD_NAMES[card]} ({card}). Pot: {sum(self.contributions)} chips. {situation}\nLegal moves: {', '.join(legal or [])}."

    def legal_actions(self, player: str) -> list[int]:
        """Check or bet with no bet pending; fold or call facing one."""
        return [2, 3] if self.facing_bet() else [0, 1]

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Record the action; end the hand on a fold, a call or a second check."""
        ((player, move),) = moves.items()
        seat = self.players.index(player)
        self.history.append(move)
        if move in PAYING:
            self.contributions[seat] += 1
        ctx.tell(f"{player} {'checks' if move == 'check' else move + 's'}.", kind="move", sender=player)
        if move == "fold":
            self.settle(ctx, winner=1 - seat, reason=f"{player} folded")
        elif move == "call" or self.history == ["check", "check"]:
            self.showdown(ctx)

    def showdown(self, ctx: Context) -> None:
        """Show both cards and give the pot to the higher one."""
        self.revealed = True
        winner = max(range(2), key=lambda seat: CARDS.index(self.cards[seat]))
        shown = ", ".join(f"{p} shows the {CARD_NAMES[c]} ({c})" for p, c in zip(self.players, self.cards))
        ctx.tell(f"Showdown: {shown}.")
        self.settle(ctx, winner=winner, reason=f"showdown: {self.players[winner]}'s {CARD_NAMES[self.cards[winner]]} wins")

    def settle(self, ctx: Context, winner: int, reason: str) -> None:
        """Pay the pot to seat ``winner``: each player's reward is the chips won minus the chips put in."""
        loser = 1 - winner
        won = self.contributions[loser]
        rewards = {self.players[winner]: float(won), self.players[loser]: -float(won)}
        details: dict[str, Any] = {"history": list(self.history)}
        if self.revealed:
            details["cards"] = dict(zip(self.players, self.cards))
        ctx.finish(rewards, winners=[self.players[winner]], reason=reason, details=details)

    def view(self, player: str) -> dict:
        """The player's seat and card, the actions so far, the pot, and the opponent's card once shown."""
        seat = self.players.index(player)
        return {
            "seat": seat,
            "card": self.cards[seat],
            "history": list(self.history),
            "pot": sum(self.contributions),
            "opponent_card": self.cards[1 - seat] if self.revealed else None,
        }

    def vector(self, player: str) -> np.ndarray:
        """Seat one-hot, card one-hot, then a pass/bet one-hot per action so far (OpenSpiel's layout)."""
        seat = self.players.index(player)
        vector = np.zeros(self.vector_size, dtype=np.float32)
        vector[seat] = 1.0
        vector[2 + CARDS.index(self.cards[seat])] = 1.0
        for i, move in enumerate(self.history):
            vector[5 + 2 * i + MOVES.index(move) % 2] = 1.0
        return vector

    def render(self) -> str:
        """Both cards, the actions so far and the pot."""
        cards = "  ".join(f"{p}: {c}" for p, c in zip(self.players, self.cards))
        actions = " ".join(self.history) or "(no action yet)"
        return f"{cards}\nActions: {actions}\nPot: {sum(self.contributions)}"
