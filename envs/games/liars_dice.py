"""Liar's dice for 2 to 6 players, with OpenSpiel's ``liars_dice`` bidding and wild-face rules.

Options: ``num_players`` (2..6, default 2; players ``player_0`` ..),
``dice_per_player`` (1..10, default 5) and ``single_round`` (default
``False``). Dice have six faces.

Each round every player with dice rolls them in secret. Starting with the
round's first player and going round the table (seat order, skipping players
without dice), each player either bids "at least Q dice on the table show face
F" or calls the standing bid a lie. A bid must be higher than the standing one:
more dice, or the same number of a higher face (OpenSpiel's ``reset-face``
rule). Sixes are wild: they count as every face, so a bid on F counts the dice
showing F or six (a bid on sixes counts the sixes). A challenge reveals all
dice: if the bid holds the challenger loses, otherwise the bidder loses.

* Classic elimination game (default): the loser of a challenge loses a die; a
  player who loses its last die is out at once (eliminated: terminated on
  every face, never to act again). The next round is started by the loser,
  or, if the loser is out, by the next player still in. The last player with
  dice wins.
* ``single_round=True``: OpenSpiel's game: one round, the challenge decides it.

Moves: the bid of quantity Q on face F is ``"Q Fs"`` in words, e.g. ``"3
fives"`` (``"1 five"`` for one die), with ``Discrete`` index ``(Q - 1) * 6 + F
- 1``, and ``"liar"`` is the last index, ``6 * num_players *
dice_per_player``: the same numbering as OpenSpiel. Bids above the dice now in
play are illegal, and ``liar`` needs a standing bid. Text actions accept, as
the last move mentioned in the text: ``3 fives``, ``3 five``, ``three fives``,
``3 5s``, ``3x5``, ``3 x 5``, ``3*5``, ``3-5``, ``3 of 5``, optionally after
"bid"; and ``liar``, ``challenge`` or ``doubt`` for the challenge.

Vector observation: own dice per face divided by ``dice_per_player`` (6), the
standing bid one-hot over the bids (zero before the first bid), then, in seat
order starting from the observer: each player's dice divided by
``dice_per_player``, the player to move (one-hot) and the standing bid's
bidder (one-hot).

Rewards (zero-sum). Elimination game: each player who is out gets -1/(n-1)
at the step it loses its last die, and the last player with dice +1 when the
game ends. Single round (as OpenSpiel), paid at the end: the winner of the
challenge +1, its loser -1, anyone else 0. A player who exceeds the
invalid-action allowance gets -1 and the other players still in share the
rest equally: +1, plus the -1/(n-1) each player already out was paid.

Version history: v0, first release. Still v0 under the Core v2 protocol: the
returns of a game played to its end are unchanged, but a player who is out
is now paid and terminated at the step it loses its last die instead of at
the end, and a forfeit's share no longer reaches players already out.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.game import Game, InvalidMove, int_option

SIDES = 6
WILD = SIDES
FACE_WORDS = ["one", "two", "three", "four", "five", "six"]
FACE_PLURALS = ["ones", "twos", "threes", "fours", "fives", "sixes"]
NUMBER_WORDS = {
    word: value
    for value, word in enumerate(
        "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty".split(),
        start=1,
    )
} | {"thirty": 30}
_FACE = r"ones?|twos?|threes?|fours?|fives?|six(?:es|s)?"
_QUANTITY = r"\d+|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
MOVE_PATTERN = re.compile(
    rf"(?<![\w.])(?:(?P<liar>liar|challenge|doubt)"
    rf"|(?P<q>{_QUANTITY})(?:\s*(?:x|×|\*|-|of)\s*(?P<f1>\d+|{_FACE})|\s+(?P<f2>{_FACE}|\d+'?s)))(?![\w'])",
    re.IGNORECASE,
)

RULES = """You are playing Liar's dice as {player}, against {others}. Each player starts with {dice} six-sided dice.{mode}
Each round every player rolls their dice in secret. Players take turns in seat order (player_0, player_1, ...). On your turn either bid or call liar.
A bid "Q Fs" claims that at least Q of all the dice on the table show face F. Sixes are wild: they count as every face (a bid on sixes counts only sixes).
A new bid must be higher than the standing one: more dice, or the same number of dice with a higher face (3 fives < 3 sixes < 4 ones).
Calling liar challenges the standing bid: all dice are revealed. If the bid holds, the challenger loses; otherwise the bidder loses.
{ending}
Reply with a bid such as: 3 fives   or with: liar"""

ELIMINATION = """The loser of a challenge loses one die; a player who loses its last die is out at once and gets -1/{losers}. The loser starts the next round (or the next player still in, if the loser is out). The last player with dice wins: +1."""
DUEL = """The loser of a challenge loses one die and starts the next round. The last player with dice wins: +1, and the loser gets -1."""
SINGLE = """The game is a single round: the winner of the challenge gets +1, its loser -1{others}."""


def bid_name(quantity: int, face: int) -> str:
    """The canonical text of a bid, e.g. ``"3 fives"`` or ``"1 five"``."""
    return f"{quantity} {(FACE_WORDS if quantity == 1 else FACE_PLURALS)[face - 1]}"


def bid_index(quantity: int, face: int) -> int:
    """The ``Discrete`` index of a bid (OpenSpiel's numbering)."""
    return (quantity - 1) * SIDES + face - 1


def matches(dice: list[list[int]], face: int) -> int:
    """How many dice count for a bid on ``face``: that face or a wild six."""
    return sum(1 for hand in dice for d in hand if d == face or d == WILD)


def _face_value(text: str) -> int:
    """The face a captured face token names (0 when it names none)."""
    token = text.lower().rstrip("s").rstrip("'")
    if token.isdigit():
        return int(token)
    if token in ("sixe", "six"):
        return 6
    return FACE_WORDS.index(token) + 1 if token in FACE_WORDS else 0


class LiarsDice(Game):
    """Liar's dice, elimination or single round; see the module docstring for moves and rewards."""

    name = "LiarsDice"
    reference_agents = ("probabilistic", "random")
    description = "Bluffing dice game: bid on the dice under everyone's cups or call the last bid a lie."
    category = "game"
    zero_sum = True
    fixed_rules = True

    def __init__(
        self,
        *,
        num_players: int = 2,
        dice_per_player: int = 5,
        single_round: bool = False,
    ):
        int_option("num_players", num_players, 2, 6)
        int_option("dice_per_player", dice_per_player, 1, 10)
        if not isinstance(single_round, bool):
            raise ValueError(f"single_round must be True or False, got {single_round!r}")
        self.num_players = num_players
        self.dice_per_player = dice_per_player
        self.single_round = single_round
        self.players = [f"player_{i}" for i in range(num_players)]
        self.max_dice = num_players * dice_per_player
        self.liar_index = self.max_dice * SIDES
        self.moves: list[str] = [bid_name(q, f) for q in range(1, self.max_dice + 1) for f in range(1, SIDES + 1)] + ["liar"]
        self.vector_size = SIDES + self.liar_index + 3 * num_players
        self.dice: list[list[int]] = []
        self.turn = 0
        self.bid: tuple[int, int] | None = None
        self.bidder: int | None = None
        self.round = 0
        self.round_bids: list[str] = []
        self.eliminated: list[str] = []
        self.revealed: list[list[int]] = []

    # ----------------------------------------------------------------- episode
    def start(self, ctx: Context) -> None:
        """Everyone gets their dice; player_0 opens the first round."""
        self.dice = [[0] * self.dice_per_player for _ in self.players]
        self.round = 0
        self.eliminated = []
        self.revealed = []
        self._new_round(ctx, 0)

    def _new_round(self, ctx: Context, first: int) -> None:
        """Roll every hand still in play and tell each player its own dice; ``first`` opens the bidding."""
        self.round += 1
        # One draw for every die in play, dealt out seat by seat: the same numbers as a draw per hand (numpy's bounded
        # draws take one 32-bit word per die, whatever the call's size), at one call's cost.
        sizes = [len(hand) for hand in self.dice]
        rolled = ctx.rng.integers(1, SIDES + 1, size=sum(sizes)).tolist()
        dice, taken = [], 0
        for size in sizes:
            dice.append(sorted(rolled[taken : taken + size]))
            taken += size
        self.dice = dice
        self.turn = first
        self.bid = None
        self.bidder = None
        self.round_bids = []
        counts = ", ".join([f"{p} {len(h)}" for p, h in zip(self.players, self.dice) if h])
        ctx.tell(f"Round {self.round} begins; {self.players[first]} bids first. Dice in play: {counts}.")
        for player, hand in zip(self.players, self.dice):
            if hand:
                ctx.tell(f"Your dice: {' '.join(map(str, hand))}.", to=player)

    @property
    def dice_in_play(self) -> int:
        """Total dice on the table this round."""
        return sum(map(len, self.dice))

    def _next_seat(self, seat: int) -> int:
        """The next seat after ``seat`` whose player still has dice."""
        for step in range(1, self.num_players + 1):
            candidate = (seat + step) % self.num_players
            if self.dice[candidate]:
                return candidate
        raise AssertionError("no player has dice")

    # ------------------------------------------------------------------- rules
    def rules(self, player: str) -> str:
        """Rules, the mode and the player's seat."""
        others = ", ".join(p for p in self.players if p != player)
        n = self.num_players
        if self.single_round:
            mode, ending = "", SINGLE.format(others=", anyone else 0" if n > 2 else "")
        else:
            mode = " Lose all your dice and you are out."
            ending = ELIMINATION.format(losers=n - 1) if n > 2 else DUEL
        return RULES.format(player=player, others=others, dice=self.dice_per_player, mode=mode, ending=ending)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The dice in play, the standing bid and what may be played.

        The player's own dice are not repeated here: the private message of the
        roll, sent at the start of each round, tells them.
        """
        counts = ", ".join([f"{p} {len(h)} (you)" if p == player else f"{p} {len(h)}" for p, h in zip(self.players, self.dice) if h])
        in_play = self.dice_in_play
        # The highest bid is the move of that index: the move names are the bids' names, already written.
        highest = self.moves[bid_index(in_play, SIDES)]
        assert legal is not None  # an enumerable game's prompt is given the legal moves
        lowest = legal[0] if legal[0] != "liar" else None
        if self.bid is None:
            return f"Round {self.round}. Dice in play: {counts} ({in_play} in all).\nNo bid yet: open with any bid from {lowest} up to {highest}."
        options = f"bid from {lowest} up to {highest}, or call liar" if lowest else "no higher bid exists: call liar"
        assert self.bidder is not None  # set with the bid
        return (
            f"Round {self.round}. Dice in play: {counts} ({in_play} in all).\n"
            f"Standing bid: {self.moves[bid_index(*self.bid)]} by {self.players[self.bidder]}. Your options: {options}."
        )

    def legal_actions(self, player: str) -> list[int]:
        """Bids above the standing one with at most the dice in play, and liar once there is a bid."""
        return self.legal_indexed_moves(player)[0]

    def legal_indexed_moves(self, player: str) -> tuple[list[int], list[str]]:
        """The legal moves (see :meth:`legal_actions`) and their names: the bids are one run of indices, their names a slice."""
        low = 0 if self.bid is None else bid_index(*self.bid) + 1
        high = self.dice_in_play * SIDES
        actions, names = list(range(low, high)), self.moves[low:high]
        if self.bid is not None:
            actions.append(self.liar_index)
            names.append("liar")
        return actions, names

    def parse(self, player: str, text: str) -> str:
        """The last bid or challenge written in the text, if legal (grammar in the module docstring)."""
        found = list(MOVE_PATTERN.finditer(text))
        if not found:
            raise InvalidMove('No move found. Reply with a bid such as "3 fives" (at least 3 dice show five), or "liar".')
        last = found[-1]
        if last["liar"]:
            if self.bid is None:
                raise InvalidMove('There is no bid to challenge yet: open with a bid such as "1 three".')
            return "liar"
        quantity_text = last["q"].lower()
        quantity = NUMBER_WORDS.get(quantity_text) or (int(quantity_text) if quantity_text.isdigit() and len(quantity_text) < 4 else 0)
        face = _face_value(last["f1"] or last["f2"])
        shown = last[0]
        if not 1 <= face <= SIDES:
            raise InvalidMove(f"'{shown}' names no face: faces are 1 to {SIDES}.")
        if not 1 <= quantity <= self.dice_in_play:
            raise InvalidMove(f"'{shown}': the quantity must be from 1 to {self.dice_in_play}, the dice in play.")
        if self.bid is not None and bid_index(quantity, face) <= bid_index(*self.bid):
            raise InvalidMove(
                f"'{shown}' is not higher than the standing bid {bid_name(*self.bid)}: bid more dice, "
                "or the same number of a higher face, or call liar."
            )
        return bid_name(quantity, face)

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Record a bid and pass the turn, or resolve a challenge."""
        ((player, move),) = moves.items()
        seat = self.turn
        if move != "liar":
            index = self.move_index(move)
            self.bid = (index // SIDES + 1, index % SIDES + 1)
            self.bidder = seat
            self.round_bids.append(move)
            ctx.tell(f"{player} bids {move}.", kind="move", sender=player)
            self.turn = self._next_seat(seat)
            return
        assert self.bid is not None and self.bidder is not None
        quantity, face = self.bid
        count = matches(self.dice, face)
        holds = count >= quantity
        loser, winner = (seat, self.bidder) if holds else (self.bidder, seat)
        revealed = "; ".join(f"{p}: {' '.join(map(str, h))}" for p, h in zip(self.players, self.dice) if h)
        what = "sixes" if face == WILD else f"{FACE_PLURALS[face - 1]} (sixes wild)"
        verdict = "the bid holds" if holds else "the bid fails"
        self.round_bids.append("liar")
        self.revealed = [list(hand) for hand in self.dice]
        ctx.tell(f"{player} calls liar on {self.players[self.bidder]}'s {bid_name(*self.bid)}.", kind="move", sender=player)
        ctx.tell(f"Dice: {revealed}. There are {count} {what}: {verdict}, {self.players[loser]} loses the challenge.")
        if self.single_round:
            rewards = {p: 0.0 for p in self.players}
            rewards[self.players[winner]], rewards[self.players[loser]] = 1.0, -1.0
            ctx.finish(rewards, winners=[self.players[winner]], reason=f"{self.players[loser]} lost the challenge", details=self._details())
            return
        self.dice[loser].pop()
        left = len(self.dice[loser])
        ctx.tell(f"{self.players[loser]} loses a die ({left} left).")
        if not left:
            out = self.players[loser]
            self.eliminated.append(out)
            ctx.tell(f"{out} is out.")
            # Eliminated players are terminated at once, so their final reward is paid now, not at the end.
            ctx.reward(out, -1.0 / (self.num_players - 1))
            ctx.eliminate(out, f"{out} lost its last die")
        alive = [s for s, hand in enumerate(self.dice) if hand]
        if len(alive) == 1:
            champion = self.players[alive[0]]
            ctx.finish({champion: 1.0}, winners=[champion], reason=f"{champion} is the last player with dice", details=self._details())
            return
        self._new_round(ctx, loser if left else self._next_seat(loser))

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """The offender gets -1; the other players still in share +1 and what the players already out were paid.

        Players already out were paid -1/(n-1) when they lost their last die and
        nothing reaches them after that, so the share that keeps the game
        zero-sum goes to the players still in.
        """
        still_in = [p for p, hand in zip(self.players, self.dice) if hand and p != player]
        paid_out = len(self.eliminated) / (self.num_players - 1)
        share = (1.0 + paid_out) / len(still_in)
        ctx.finish({player: -1.0, **{p: share for p in still_in}}, winners=still_in, reason=reason)

    def _details(self) -> dict[str, Any]:
        """The outcome's details: rounds played, players in the order they went out, the last round's bids and the dice its challenge revealed."""
        return {"rounds": self.round, "eliminated": list(self.eliminated), "final_bids": list(self.round_bids), "final_dice": self.revealed}

    # ------------------------------------------------------------ observations
    def view(self, player: str) -> dict[str, Any]:
        """Own dice, everyone's dice count, the standing bid and this round's bids."""
        seat = self.players.index(player)
        return {
            "seat": seat,
            "dice": list(self.dice[seat]),
            "dice_counts": [len(hand) for hand in self.dice],
            "bid": None if self.bid is None else list(self.bid),
            "bidder": self.bidder,
            "to_move": self.turn,
            "round": self.round,
            "round_bids": list(self.round_bids),
            "sides": SIDES,
            "wild": WILD,
            "single_round": self.single_round,
        }

    def vector(self, player: str) -> np.ndarray:
        """Own dice per face, the standing bid, and per seat (from the observer): dice, turn, bidder."""
        seat = self.players.index(player)
        n = self.num_players
        values = np.zeros(self.vector_size, dtype=np.float32)
        for die in self.dice[seat]:
            values[die - 1] += 1.0 / self.dice_per_player
        if self.bid is not None:
            values[SIDES + bid_index(*self.bid)] = 1.0
        base = SIDES + self.liar_index
        for offset in range(n):
            other = (seat + offset) % n
            values[base + offset] = len(self.dice[other]) / self.dice_per_player
            values[base + n + offset] = float(other == self.turn)
            values[base + 2 * n + offset] = float(other == self.bidder)
        return values

    def render(self) -> str:
        """Every player's dice (a spectator sees them all) and the standing bid."""
        lines = [f"round {self.round}"]
        lines += [f"{player}: {' '.join(map(str, hand)) or 'out'}" for player, hand in zip(self.players, self.dice)]
        standing = "none"
        if self.bid is not None:
            assert self.bidder is not None  # set with the bid
            standing = f"{bid_name(*self.bid)} by {self.players[self.bidder]}"
        lines.append(f"standing bid: {standing}")
        return "\n".join(lines)
