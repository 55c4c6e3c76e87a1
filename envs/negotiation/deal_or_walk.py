"""DealOrWalk: Deal-or-No-Deal over more issues, with a private walk-away value per player and an explicit walk move.

Bargaining (Lewis et al. 2017) with outside options, as in the negotiation
literature's BATNA: ``player_0`` and ``player_1`` split a pool of items of
several types (books, hats, balls, pens, cups). ``difficulty`` (1 to 4,
default 3) sets the issues, 2, 3, 4 or 5 item types, and how much each side
can secure without a deal: its walk-away value lies within 5-30%, 15-50%,
20-60% or 40-80% of what the whole pool is worth to it. More issues leave more
room for trades that suit both sides, so the walk-away values rise faster:
the harder the level, the fewer the deals both sides prefer to walking (two
``boulware`` negotiators agree in 96%, 83%, 69% and 23% of seeds 0-199). The
instance, drawn from the seed: 1 to 4 items of each type; each player values
each type privately, a whole number from 0 to 10 (every type valued by
someone, some type by both, each player's pool worth enough that a whole
number lies within its walk-away range); and each player has a private
walk-away value, the payoff it can always secure by leaving: a whole number
within that range.

Players alternate, ``player_0`` first. On each turn a player writes free text
and one move (the last well-formed one counts; everything outside it reaches
the other player verbatim as talk):

* ``[propose] 2 books, 1 hat, 0 balls, 1 pen`` -- the items the proposer KEEPS
  (every type named once, in any order; bare counts ``[propose] 2, 1, 0, 1`` in
  pool order also work); the rest go to the other player. It replaces the
  standing proposal.
* ``[accept]`` -- accept the other player's standing proposal: the deal is made.
* ``[walk]`` -- leave: no deal, and each player gets its walk-away value.
* ``[pass]`` -- talk only.

Text with no well-formed move, ``[accept]`` with no proposal of the other
player standing, or a proposal keeping more than the pool holds is an invalid
action. After ``deadline`` turns (default 10) without a deal the game ends as
a walk does (an outcome of the rules; the engine's own ``max_turns`` option,
if set, truncates the episode instead, unpaid).

Rewards, paid at the end: on a deal, the value of the items each player gets,
at its own values; otherwise each player's walk-away value. A deal worth less
than a player's walk-away value is its loss to accept. On a deal the sole
best-off player wins; nobody wins without one. A player who exceeds the
invalid-action allowance gets -1 (below anything it could have secured) and
the other its walk-away value, and the other wins.

Outcome details: :func:`parlour.envs.negotiation.analysis.negotiation_report`
over every split of the pool, with the walk-away values as the disagreement
point, plus ``difficulty``, ``walked`` (the player who walked, or ``None``)
and ``walk_away`` (both values, revealed at the end).

Version history: v0, first release; v1, walk-away values rise with the
difficulty (they lay within 20-60% at every level, so more issues made
agreement easier), and a pool worth too little to hold a whole walk-away value
is redrawn (v0 raised ``ValueError`` for such seeds).
"""

from __future__ import annotations

import re
from typing import Any

from parlour.envs.core.context import Context
from parlour.envs.core.frozen import FrozenDict
from parlour.envs.core.game import Game, int_option
from parlour.envs.core.numbers import LISTED_NUMBER
from parlour.envs.negotiation.pool_split import PoolSplit, bundle_text

ITEMS = ("book", "hat", "ball", "pen", "cup")
#: difficulty -> (number of item types, the range of a walk-away value in percent of the pool's worth to its player).
LEVELS = {1: (2, (5, 30)), 2: (3, (15, 50)), 3: (4, (20, 60)), 4: (5, (40, 80))}
MAX_COUNT = 4
MAX_VALUE = 10

MOVE = re.compile(rf"\[\s*+(propose|accept|walk|pass)\s*+\]((?:\s*+{LISTED_NUMBER}\s*+[a-z]*+\s*+(?:,|;|\band\b)?)*+)", re.IGNORECASE)

RULES = """You are {player} in a Deal-or-No-Deal negotiation with a walk-away option, against {other}.
A pool of items must be split between you: {pool}.
Your private values per item: {values}. The whole pool is worth {worth} to you.
Your private walk-away value: {walk}. You get it if you walk away, if {other} does, or if no deal is made in time. {other} has its own private values and walk-away value, unknown to you; yours are unknown to it.
Players alternate turns, player_0 first; the game lasts at most {deadline} turns in all.
On your turn, write anything you like (it is sent to {other} word for word) and include one move (the last one counts):
  [propose] <count> <item>, ...   the items YOU keep (name every item type); {other} gets the rest
  [accept]                        accept {other}'s standing proposal: you get the rest of the pool
  [walk]                          end the negotiation: both get their walk-away values
  [pass]                          talk only
Example: "Books matter most to me. [propose] 3 books, 0 hats, 1 ball, 0 pens\""""


def walk_range(worth: int, percent: tuple[int, int]) -> tuple[int, int]:
    """The whole numbers within ``percent`` of ``worth``, as ``(lowest, highest)``; empty (lowest > highest) for a small worth."""
    low, high = percent
    return -(-low * worth // 100), high * worth // 100


def draw_instance(rng: Any, types: int, walk_percent: tuple[int, int]) -> dict[str, Any]:
    """Pool, values and walk-away values (see the module docstring)."""
    pool = [int(n) for n in rng.integers(1, MAX_COUNT + 1, size=types)]
    while True:
        values = [[int(v) for v in rng.integers(0, MAX_VALUE + 1, size=types)] for _ in range(2)]
        both = any(a > 0 and b > 0 for a, b in zip(*values))
        ranges = [walk_range(sum(v * n for v, n in zip(own, pool)), walk_percent) for own in values]
        # A pool worth too little to a player holds no whole walk-away value in its range: draw the values again.
        if both and all(a > 0 or b > 0 for a, b in zip(*values)) and all(low <= high for low, high in ranges):
            break
    walk = [int(rng.integers(low, high + 1)) for low, high in ranges]
    return {"pool": pool, "values": values, "walk": walk}


class DealOrWalk(PoolSplit, Game):
    """Two-player multi-issue bargaining with private walk-away values; see the module docstring."""

    name = "DealOrWalk"
    version = 1
    reference_agents = ("boulware", "random")
    description = (
        "Deal-or-No-Deal with 2-5 issues and a private walk-away value each: talk, propose, accept or walk; "
        "difficulty 1-4 (default 3) sets the number of item types and how high the walk-away values lie."
    )
    category = "negotiation"
    zero_sum = False
    move_pattern = MOVE
    no_proposal = "There is no proposal of the other player to accept; use [propose], [walk] or [pass]."
    no_move = "No move found. Include [propose] <count> <item>, ... naming every item ({items}), [accept], [walk] or [pass]."

    def __init__(self, *, difficulty: int = 3, deadline: int = 10):
        self.difficulty = int_option("difficulty", difficulty, 1, len(LEVELS))
        self.deadline = int_option("deadline", deadline, 1, 1000)
        self.players = ["player_0", "player_1"]
        types, self.walk_percent = LEVELS[self.difficulty]
        self.names = list(ITEMS[:types])
        self.pool: list[int] = []
        self.values: list[list[int]] = []
        self.walk: list[int] = []
        self.turn = 0
        # Read-only entries in a tuple that only grows: every view shares it instead of copying it.
        self.proposals: tuple[FrozenDict, ...] = ()
        self.walked: str | None = None

    def start(self, ctx: Context) -> None:
        """Draw the pool, the private values and the walk-away values."""
        instance = draw_instance(ctx.rng, len(self.names), self.walk_percent)
        self.pool, self.values, self.walk = instance["pool"], instance["values"], instance["walk"]
        self.turn = 0
        self.proposals = ()
        self.walked = None

    def no_deal(self) -> dict[str, float]:
        """Each player's walk-away value, as payoffs."""
        return {p: float(w) for p, w in zip(self.players, self.walk)}

    # -------------------------------------------------------------------- text
    def rules(self, player: str) -> str:
        """Rules, the pool, this player's private values and walk-away value."""
        return RULES.format(
            player=player,
            other=self.other(player),
            pool=bundle_text(self.pool, self.names),
            values=", ".join(f"{v} per {n}" for v, n in zip(self.values[self.seat(player)], self.names)),
            worth=self.value(player, self.pool),
            walk=self.walk[self.seat(player)],
            deadline=self.deadline,
        )

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """Turns left, the walk-away value and the standing proposal, valued with this player's own values."""
        return "\n".join(
            [
                f"Turn {self.turn + 1} of {self.deadline}. Pool: {bundle_text(self.pool, self.names)}. "
                f"Your walk-away value: {self.walk[self.seat(player)]}.",
                self.standing_text(player),
                "Write your message and include [propose] ..., [accept], [walk] or [pass].",
            ]
        )

    # ------------------------------------------------------------------- rules
    def own_move(self, ctx: Context, player: str, kind: str) -> None:
        """``[walk]``: no deal, each player gets its walk-away value."""
        self.walked = player
        ctx.tell(f"{player} walks away.", kind="move", sender=player)
        self.end(ctx, self.no_deal(), agreed=False, reason=f"{player} walked away")

    def report(self, utilities: dict[str, float], agreed: bool) -> dict[str, Any]:
        """The negotiation report over every split of the pool, from the walk-away point, and the walk."""
        details = super().report(utilities, agreed)
        details.update(difficulty=self.difficulty, walked=self.walked, walk_away=self.no_deal())
        return details

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """-1 to the offender, its walk-away value to the other, who wins; the analysis treats it as no deal."""
        other = self.other(player)
        rewards = {player: -1.0, other: float(self.walk[self.seat(other)])}
        ctx.finish(rewards, winners=[other], reason=reason, details=self.report(self.no_deal(), agreed=False))

    # ------------------------------------------------------------------- views
    def view(self, player: str) -> dict[str, Any]:
        """Own values and walk-away value (also as ``disagreement``), the pool, the public proposals (shared) and the clock."""
        own = self.walk[self.seat(player)]
        return {
            "player": player,
            "items": list(self.names),
            "pool": list(self.pool),
            "values": list(self.values[self.seat(player)]),
            "walk_away": own,
            # The payoff without a deal, under the name the scripted negotiators read.
            "disagreement": float(own),
            "turn": self.turn,
            "deadline": self.deadline,
            "proposals": self.proposals,
            "standing": self.standing(),
        }

    def private_note(self, player: str) -> str:
        """The walk-away value, for :meth:`render`."""
        return f"; walk-away {self.walk[self.seat(player)]}"
