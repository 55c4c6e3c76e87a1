"""Hanabi for 2 to 5 players: a cooperative card game of hidden hands and costly hints (the Hanabi Learning Environment's rules).

Options: ``num_players`` (2..5, default 2; players ``player_0`` ..) and
``preset``, the game's size, after the Hanabi Learning Environment's presets:

========== ======= ===== ============================ =========== ===========
preset     colours ranks hand size                    hint tokens life tokens
========== ======= ===== ============================ =========== ===========
full       5       5     5 (2-3 players), 4 (4-5)     8           3
small      2       5     2                            3           1
very_small 1       5     2                            3           1
========== ======= ===== ============================ =========== ===========

``small`` is the default, so episodes are short; ``full`` is the published
game. ``colors`` (1..5), ``ranks`` (1..5), ``hand_size`` (1..10),
``hint_tokens`` (1..20) and ``life_tokens`` (1..10) override the preset one
by one. Colours are red, yellow, green, white and blue, in that order. Each
colour has three 1s, one card of the highest rank and two of every rank
between (with one rank: three 1s).

Play. The deck is shuffled and each player is dealt ``hand_size`` cards,
player_0's hand first. Players hold their cards facing out: each sees every
hand but its own. On its turn a player does one of:

* ``play N``: play the card in slot N of its hand. It succeeds if its rank is
  one more than the firework of its colour, which then grows by one (playing a
  firework's last rank also returns a hint token, if any was spent); otherwise
  it is discarded and a life token is lost.
* ``discard N``: discard the card in slot N and regain a hint token; illegal
  while every hint token is unspent.
* ``hint P C`` / ``hint P R`` (e.g. ``hint player_1 red``, ``hint player_1
  3``): spend a hint token to tell teammate P which of its cards have colour C
  (or rank R), and so which do not; the hint must touch at least one card.

After a play or a discard the player draws the top card of the deck, if any.
Slots are numbered from 1 (the oldest card) and a drawn card goes to the end.
The game ends when the last life token is lost (the score is then 0), when
every firework is complete, or once each player has had one more turn after
the deck ran out. The score is the sum of the fireworks.

Moves and ``Discrete`` indices: ``discard 1`` .. ``discard H``, ``play 1`` ..
``play H``, then ``hint P C`` for every player P (seat order) and colour C,
then ``hint P R`` for every player and rank: hints to oneself are never legal.
Text actions accept a move name anywhere in the reply (the last one counts).

Vector observation (all in [0, 1]), from the observer's seat: the other
players' cards (one-hot over colour x rank, per slot, in seat order after the
observer), the fireworks (a thermometer per colour), hint and life tokens
(thermometers), the share of the deck left, the discards (per card kind, the
share of its copies), then what every player (the observer first) knows of
each of its slots: a slot-holds-a-card bit, the colours and the ranks still
possible given the hints.

Rewards (cooperative, ``zero_sum = False``, as OpenSpiel's ``hanabi``): every
player gets the change of the score at each step, so a finished game returns
the final score to everyone (0 when the last life was lost). A player who
exceeds the invalid-action allowance ends the game: the score is lost as if
the last life were (every return becomes 0) and the offender also gets -1.
Nobody "wins"; the outcome details hold ``score``, ``max_score``, the
``fireworks``, the tokens left, ``misplays``, ``turns`` and why it ended.

Cross-checked against OpenSpiel's ``hanabi`` (the Hanabi Learning
Environment) on the deal order, legal moves, card knowledge, tokens, the end
of the game and returns (``tests/test_hanabi.py``).

Version history: v0, first release.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.frozen import FrozenDict, freeze
from parlour.envs.core.game import Game, int_option

COLOR_NAMES = ("red", "yellow", "green", "white", "blue")

#: The Hanabi Learning Environment's presets ("Hanabi-Full", "Hanabi-Small", "Hanabi-Very-Small"); a hand
#: size of None means the published rule: 5 cards with 2 or 3 players, 4 with 4 or 5.
PRESETS: dict[str, dict[str, int | None]] = {
    "full": {"colors": 5, "ranks": 5, "hand_size": None, "hint_tokens": 8, "life_tokens": 3},
    "small": {"colors": 2, "ranks": 5, "hand_size": 2, "hint_tokens": 3, "life_tokens": 1},
    "very_small": {"colors": 1, "ranks": 5, "hand_size": 2, "hint_tokens": 3, "life_tokens": 1},
}

RULES = """You are playing Hanabi as {player}, with {others}: a cooperative card game; you all win or lose together.
The deck has {colors} colour(s) ({color_names}) and ranks 1 to {ranks}; per colour: {copies}.
Every player holds {hand_size} cards facing out: you see your teammates' cards but never your own.
The team builds one firework per colour, in order from 1 to {ranks}. On your turn do exactly one of:
- play N: play the card in slot N of your hand. If its rank is one more than its colour's firework, the firework grows; otherwise it is discarded and the team loses a life token.{bonus}
- discard N: discard the card in slot N and regain a hint token (not allowed while all {hint_tokens} hint tokens are unspent).
- hint P C or hint P R (e.g. "hint {example} {first_color}", "hint {example} 1"): spend a hint token to tell teammate P which of its cards have that colour or rank (and so which do not). It must touch at least one card.
After playing or discarding you draw a card. Slots are numbered from 1 (your oldest card); a new card goes to the end.
The game ends when the team has lost all {life_tokens} life token(s) (the score is then 0), when every firework is complete, or when each player has had one more turn after the deck runs out.
Score: the sum of the fireworks (at most {max_score}). Every player's reward is the score.
Reply with one move, e.g.: play 1"""


def card_name(color: int, rank: int) -> str:
    """``"red 3"`` for colour index 0 and rank 3."""
    return f"{COLOR_NAMES[color]} {rank}"


def copies_of(rank: int, ranks: int) -> int:
    """How many cards of ``rank`` each colour has: three 1s, one of the highest rank, two of every other."""
    if rank == 1:
        return 3
    return 1 if rank == ranks else 2


class Hanabi(Game):
    """Cooperative Hanabi with the Hanabi Learning Environment's rules; see the module docstring."""

    name = "Hanabi"
    reference_agents = ("convention", "random")
    description = "Cooperative card game: see everyone's cards but your own, give costly hints, build the fireworks."
    category = "cooperation"
    zero_sum = False

    def __init__(
        self,
        *,
        num_players: int = 2,
        preset: str = "small",
        colors: int | None = None,
        ranks: int | None = None,
        hand_size: int | None = None,
        hint_tokens: int | None = None,
        life_tokens: int | None = None,
    ):
        self.num_players = int_option("num_players", num_players, 2, 5)
        if preset not in PRESETS:
            raise ValueError(f"preset must be one of {', '.join(PRESETS)}, got {preset!r}")
        self.preset = preset
        base = PRESETS[preset]
        self.colors = int_option("colors", base["colors"] if colors is None else colors, 1, len(COLOR_NAMES))
        self.ranks = int_option("ranks", base["ranks"] if ranks is None else ranks, 1, 5)
        default_hand = base["hand_size"] or (5 if num_players < 4 else 4)
        self.hand_size = int_option("hand_size", default_hand if hand_size is None else hand_size, 1, 10)
        self.max_hints = int_option("hint_tokens", base["hint_tokens"] if hint_tokens is None else hint_tokens, 1, 20)
        self.max_lives = int_option("life_tokens", base["life_tokens"] if life_tokens is None else life_tokens, 1, 10)
        self.kinds = self.colors * self.ranks
        self.deck_total = sum(copies_of(r, self.ranks) for r in range(1, self.ranks + 1)) * self.colors
        if self.num_players * self.hand_size > self.deck_total:
            raise ValueError(
                f"{self.num_players} hands of {self.hand_size} cards need {self.num_players * self.hand_size} cards, "
                f"but the deck has {self.deck_total}: use a smaller hand_size or more colors"
            )
        self.max_score = self.kinds
        self.players = [f"player_{i}" for i in range(num_players)]
        H = self.hand_size
        self.moves = (
            [f"discard {i}" for i in range(1, H + 1)]
            + [f"play {i}" for i in range(1, H + 1)]
            + [f"hint {p} {COLOR_NAMES[c]}" for p in self.players for c in range(self.colors)]
            + [f"hint {p} {r}" for p in self.players for r in range(1, self.ranks + 1)]
        )
        self._color_hints = 2 * H
        self._rank_hints = 2 * H + num_players * self.colors
        n = num_players
        self.vector_size = (
            (n - 1) * H * self.kinds
            + self.colors * self.ranks
            + self.max_hints
            + self.max_lives
            + 1
            + self.kinds
            + n * H * (1 + self.colors + self.ranks)
        )
        self._reset_state()

    def _reset_state(self) -> None:
        """The state of a game not yet dealt."""
        self.cards: list[int] = []  # card kinds (colour * ranks + rank - 1) in deal order; a card's id is its index
        self.drawn = 0
        self.hands: list[list[int]] = [[] for _ in self.players]
        # What the hints told about each card, public: bit masks of the colours and ranks still possible.
        self.color_masks: dict[int, int] = {}
        self.rank_masks: dict[int, int] = {}
        self.clued: set[int] = set()
        self.fireworks = [0] * self.colors
        self.hints = self.max_hints
        self.lives = self.max_lives
        self.discards: list[int] = []
        # The discards by name and the log of moves are tuples of read-only entries that only grow: every view
        # shares them instead of copying them (see parlour.envs.core.frozen).
        self.discarded: tuple[str, ...] = ()
        self.turn = 0
        self.turns = 0
        self.turns_left = self.num_players
        self.misplays = 0
        self.log: tuple[FrozenDict, ...] = ()

    # ----------------------------------------------------------------- episode
    def start(self, ctx: Context) -> None:
        """Shuffle the deck and deal the hands, player_0's first."""
        self._reset_state()
        deck = [c * self.ranks + r - 1 for c in range(self.colors) for r in range(1, self.ranks + 1) for _ in range(copies_of(r, self.ranks))]
        self.cards = [deck[i] for i in ctx.rng.permutation(len(deck))]
        for seat in range(self.num_players):
            for _ in range(self.hand_size):
                self._draw(seat)
        ctx.tell(f"The cards are dealt. {self.players[0]} starts.")

    def _draw(self, seat: int) -> None:
        """The top card of the deck goes to the end of ``seat``'s hand, nothing known about it."""
        card = self.drawn
        self.drawn += 1
        self.hands[seat].append(card)
        self.color_masks[card] = (1 << self.colors) - 1
        self.rank_masks[card] = (1 << self.ranks) - 1

    @property
    def deck_size(self) -> int:
        """Cards left to draw."""
        return len(self.cards) - self.drawn

    @property
    def score(self) -> int:
        """The fireworks' sum, or 0 once the last life is lost (as the Hanabi Learning Environment scores it)."""
        return 0 if self.lives <= 0 else sum(self.fireworks)

    def color_of(self, card: int) -> int:
        """The colour index of card ``card``."""
        return self.cards[card] // self.ranks

    def rank_of(self, card: int) -> int:
        """The rank (from 1) of card ``card``."""
        return self.cards[card] % self.ranks + 1

    def name_of(self, card: int) -> str:
        """``"red 3"``."""
        return card_name(self.color_of(card), self.rank_of(card))

    # ------------------------------------------------------------------- rules
    def rules(self, player: str) -> str:
        """The rules with this game's sizes, and the player's seat."""
        others = ", ".join(p for p in self.players if p != player)
        copies = ", ".join(f"{copies_of(r, self.ranks)} of rank {r}" for r in range(1, self.ranks + 1))
        bonus = f" Completing a firework (playing a {self.ranks}) returns a spent hint token."
        example = next(p for p in self.players if p != player)
        return RULES.format(
            player=player,
            others=others,
            colors=self.colors,
            color_names=", ".join(COLOR_NAMES[: self.colors]),
            ranks=self.ranks,
            copies=copies,
            hand_size=self.hand_size,
            bonus=bonus,
            hint_tokens=self.max_hints,
            example=example,
            first_color=COLOR_NAMES[0],
            life_tokens=self.max_lives,
            max_score=self.max_score,
        )

    def legal_actions(self, player: str) -> list[int]:
        """Discards (while a hint token is spent), plays, and hints that touch a card (while a hint token is left)."""
        seat = self.players.index(player)
        held = len(self.hands[seat])
        H = self.hand_size
        actions = list(range(held)) if self.hints < self.max_hints else []
        actions += [H + i for i in range(held)]
        if self.hints > 0:
            colors_hints, rank_hints = [], []
            for target, hand in enumerate(self.hands):
                if target == seat:
                    continue
                colors = {self.color_of(card) for card in hand}
                ranks = {self.rank_of(card) for card in hand}
                colors_hints += [self._color_hints + target * self.colors + c for c in sorted(colors)]
                rank_hints += [self._rank_hints + target * self.ranks + r - 1 for r in sorted(ranks)]
            actions += colors_hints + rank_hints
        return actions

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Play, discard or hint; draw; check the end of the game; pay the change of the score."""
        ((player, move),) = moves.items()
        seat = self.turn
        before = self.score
        # The Hanabi Learning Environment counts the final round down before each move once the deck is empty.
        if self.deck_size == 0:
            self.turns_left -= 1
        index = self.move_index(move)
        H = self.hand_size
        if index < 2 * H:
            slot = index % H
            if index < H:
                self._discard(ctx, player, seat, slot)
            else:
                self._play(ctx, player, seat, slot)
        elif index < self._rank_hints:
            target, color = divmod(index - self._color_hints, self.colors)
            self._hint(ctx, player, target, lambda card: self.color_of(card) == color, COLOR_NAMES[color], color=color)
        else:
            target, rank = divmod(index - self._rank_hints, self.ranks)
            self._hint(ctx, player, target, lambda card: self.rank_of(card) == rank + 1, str(rank + 1), rank=rank + 1)
        self.turns += 1
        delta = self.score - before
        if delta:
            for p in self.players:
                ctx.reward(p, delta)
        ending = self._ending()
        if ending:
            ctx.finish(reason=ending, details=self.report(ending))
            return
        self.turn = (seat + 1) % self.num_players

    def _remove(self, seat: int, slot: int) -> tuple[int, str]:
        """Take the card in ``slot`` out of ``seat``'s hand and draw its replacement if the deck has one.

        Returns the card and the sentence that says whether a card was drawn.
        """
        card = self.hands[seat].pop(slot)
        self.clued.discard(card)
        if self.deck_size == 0:
            return card, " The deck is empty: no card is drawn."
        self._draw(seat)
        return card, f" {self.players[seat]} draws a card ({self.deck_size} left in the deck)."

    def _discard(self, ctx: Context, player: str, seat: int, slot: int) -> None:
        """Discard a card and regain a hint token."""
        card, drew = self._remove(seat, slot)
        self.discards.append(self.cards[card])
        self.discarded += (self.name_of(card),)
        self.hints += 1
        self.log += (FrozenDict(player=player, type="discard", slot=slot + 1, id=card, card=self.name_of(card)),)
        ctx.tell(f"{player} discards {self.name_of(card)} (slot {slot + 1}) and regains a hint token.{drew}", kind="move", sender=player)

    def _play(self, ctx: Context, player: str, seat: int, slot: int) -> None:
        """Play a card onto its firework, or lose a life if it does not fit."""
        card, drew = self._remove(seat, slot)
        color, rank = self.color_of(card), self.rank_of(card)
        success = self.fireworks[color] == rank - 1
        if success:
            self.fireworks[color] = rank
            bonus = rank == self.ranks and self.hints < self.max_hints
            if bonus:
                self.hints += 1
            result = f"it fits: the {COLOR_NAMES[color]} firework is at {rank}" + (", and a hint token returns" if bonus else "")
        else:
            self.lives -= 1
            self.misplays += 1
            self.discards.append(self.cards[card])
            self.discarded += (self.name_of(card),)
            result = f"it does not fit (the {COLOR_NAMES[color]} firework is at {self.fireworks[color]}): a life token is lost, {self.lives} left"
        self.log += (FrozenDict(player=player, type="play", slot=slot + 1, id=card, card=self.name_of(card), success=success),)
        ctx.tell(f"{player} plays {self.name_of(card)} (slot {slot + 1}): {result}.{drew}", kind="move", sender=player)

    def _hint(self, ctx: Context, player: str, target: int, touches, value: str, *, color: int | None = None, rank: int | None = None) -> None:
        """Spend a hint token: the touched cards get the value, the others lose it from their possibilities."""
        self.hints -= 1
        hand = self.hands[target]
        touched = [card for card in hand if touches(card)]
        new = [card for card in touched if card not in self.clued]
        for card in hand:
            if color is not None:
                self.color_masks[card] = (1 << color) if card in touched else self.color_masks[card] & ~(1 << color)
            else:
                assert rank is not None
                self.rank_masks[card] = (1 << (rank - 1)) if card in touched else self.rank_masks[card] & ~(1 << (rank - 1))
        self.clued.update(touched)
        slots = [i + 1 for i, card in enumerate(hand) if card in touched]
        name = self.players[target]
        self.log += (freeze({"player": player, "type": "hint", "target": name, "value": value, "slots": slots, "touched": touched, "new": new}),)
        which = " and ".join(", ".join(map(str, slots)).rsplit(", ", 1))
        kind = "colour" if color is not None else "rank"
        ctx.tell(
            f"{player} hints {name}: slot{'s' if len(slots) > 1 else ''} {which} {'are' if len(slots) > 1 else 'is'} {value} (a {kind} hint; {self.hints} hint token(s) left).",
            kind="move",
            sender=player,
        )

    def _ending(self) -> str | None:
        """Why the game is over, in the Hanabi Learning Environment's order of checks, or None."""
        if self.lives <= 0:
            return "the last life token was lost, so the score is 0"
        if sum(self.fireworks) == self.max_score:
            return f"every firework is complete: a perfect {self.max_score}"
        if self.turns_left <= 0:
            return f"the deck ran out and everyone had a last turn: the score is {self.score}"
        return None

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """The team loses the score (every return becomes 0) and the offender also gets -1."""
        lost = self.score
        for p in self.players:
            ctx.reward(p, -lost - (1.0 if p == player else 0.0))
        ctx.finish(reason=reason, details={**self.report(reason), "score": 0})

    def report(self, why: str) -> dict[str, Any]:
        """The outcome details (see the module docstring)."""
        return {
            "score": self.score,
            "max_score": self.max_score,
            "fireworks": {COLOR_NAMES[c]: level for c, level in enumerate(self.fireworks)},
            "hint_tokens": self.hints,
            "life_tokens": self.lives,
            "misplays": self.misplays,
            "turns": self.turns,
            "deck_left": self.deck_size,
            "ending": why,
        }

    # ------------------------------------------------------------ observations
    def _possible(self, card: int) -> tuple[list[str], list[int]]:
        """The colours and ranks the hints leave possible for ``card``."""
        colors = [COLOR_NAMES[c] for c in range(self.colors) if self.color_masks[card] >> c & 1]
        ranks = [r + 1 for r in range(self.ranks) if self.rank_masks[card] >> r & 1]
        return colors, ranks

    def _knowledge_text(self, card: int) -> str:
        """What the hints say of a card, e.g. ``"red, rank 2 or 3"``."""
        colors, ranks = self._possible(card)
        color = colors[0] if len(colors) == 1 else "colour " + "/".join(colors)
        rank = f"rank {ranks[0]}" if len(ranks) == 1 else "rank " + "/".join(map(str, ranks))
        return f"{color}, {rank}"

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The fireworks, tokens, deck and discards, every hand the player may see, what it knows of its own, its moves."""
        seat = self.players.index(player)
        fireworks = ", ".join(f"{COLOR_NAMES[c]} {level}" for c, level in enumerate(self.fireworks))
        lines = [
            f"Fireworks: {fireworks} (score {sum(self.fireworks)} of {self.max_score}).",
            f"Hint tokens: {self.hints} of {self.max_hints}. Life tokens: {self.lives} of {self.max_lives}. Deck: {self.deck_size} card(s).",
        ]
        if self.deck_size == 0:
            lines.append(f"The deck is empty: {self.turns_left} turn(s) left in the game.")
        discards = sorted(self.discards)
        lines.append("Discarded: " + (", ".join(card_name(k // self.ranks, k % self.ranks + 1) for k in discards) if discards else "nothing") + ".")
        for offset in range(1, self.num_players):
            other = (seat + offset) % self.num_players
            cards = "; ".join(
                f"slot {i + 1}: {self.name_of(card)} (they know: {self._knowledge_text(card)})" for i, card in enumerate(self.hands[other])
            )
            lines.append(f"{self.players[other]}'s hand: {cards}.")
        own = "; ".join(f"slot {i + 1}: {self._knowledge_text(card)}" for i, card in enumerate(self.hands[seat]))
        lines.append(f"Your hand (hidden from you; what the hints tell you): {own}.")
        lines.append("Your moves: " + ", ".join(legal or []) + ".")
        return "\n".join(lines)

    def view(self, player: str) -> dict[str, Any]:
        """Everything the player may know: the public state, every hand but its own, and what the hints say of all cards.

        The discards and the log are shared, read-only tuples.
        """
        seat = self.players.index(player)
        hands = {}
        for s, hand in enumerate(self.hands):
            cards = []
            for card in hand:
                colors, ranks = self._possible(card)
                seen = s != seat
                cards.append(
                    {
                        "id": card,
                        "color": COLOR_NAMES[self.color_of(card)] if seen else None,
                        "rank": self.rank_of(card) if seen else None,
                        "colors": colors,
                        "ranks": ranks,
                        "clued": card in self.clued,
                    }
                )
            hands[self.players[s]] = cards
        return {
            "player": player,
            "players": list(self.players),
            "colors": list(COLOR_NAMES[: self.colors]),
            "ranks": self.ranks,
            "copies": [copies_of(r, self.ranks) for r in range(1, self.ranks + 1)],
            "hand_size": self.hand_size,
            "fireworks": {COLOR_NAMES[c]: level for c, level in enumerate(self.fireworks)},
            "hint_tokens": self.hints,
            "max_hint_tokens": self.max_hints,
            "life_tokens": self.lives,
            "deck_size": self.deck_size,
            "discards": self.discarded,
            "hands": hands,
            "log": self.log,
            "turns_left": self.turns_left if self.deck_size == 0 else None,
            "score": self.score,
        }

    def vector(self, player: str) -> np.ndarray:
        """See the module docstring for the layout."""
        seat = self.players.index(player)
        n, H, C, R = self.num_players, self.hand_size, self.colors, self.ranks
        values = np.zeros(self.vector_size, dtype=np.float32)
        base = 0
        for offset in range(1, n):
            for slot, card in enumerate(self.hands[(seat + offset) % n]):
                values[base + slot * self.kinds + self.cards[card]] = 1.0
            base += H * self.kinds
        for c, level in enumerate(self.fireworks):
            values[base + c * R : base + c * R + level] = 1.0
        base += C * R
        values[base : base + self.hints] = 1.0
        base += self.max_hints
        values[base : base + self.lives] = 1.0
        base += self.max_lives
        values[base] = self.deck_size / self.deck_total
        base += 1
        for kind in self.discards:
            values[base + kind] += 1.0 / copies_of(kind % R + 1, R)
        base += self.kinds
        for offset in range(n):
            for slot, card in enumerate(self.hands[(seat + offset) % n]):
                at = base + slot * (1 + C + R)
                values[at] = 1.0
                for c in range(C):
                    values[at + 1 + c] = self.color_masks[card] >> c & 1
                for r in range(R):
                    values[at + 1 + C + r] = self.rank_masks[card] >> r & 1
            base += H * (1 + C + R)
        return values

    def render(self) -> str:
        """Every hand (a spectator sees them all), the fireworks and the tokens."""
        fireworks = " ".join(f"{COLOR_NAMES[c]} {level}" for c, level in enumerate(self.fireworks))
        lines = [f"fireworks: {fireworks} | hints {self.hints}/{self.max_hints} | lives {self.lives}/{self.max_lives} | deck {self.deck_size}"]
        for player, hand in zip(self.players, self.hands):
            lines.append(f"{player}: " + ", ".join(self.name_of(card) + ("*" if card in self.clued else "") for card in hand))
        return "\n".join(lines)
