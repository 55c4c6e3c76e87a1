"""Bargaining: multi-issue "Deal or No Deal" negotiation (Lewis et al. 2017; OpenSpiel's ``bargaining``).

A pool holds items of several types (books, hats, balls, ...). ``player_0`` and
``player_1`` each value every type privately; by default each player's whole
pool is worth ``total_value`` (10) to it. Players alternate, ``player_0``
first. On each turn a player writes free text and one move:

* ``[propose] 2 books, 1 hat, 0 balls`` -- the items the proposer KEEPS (every
  type named once, in any order; bare counts ``[propose] 2, 1, 0`` in pool
  order also work); the rest of the pool goes to the other player. The new
  proposal replaces the standing one.
* ``[accept]`` -- accept the other player's standing proposal: the deal is made.
* ``[pass]`` -- talk only, no proposal this turn.

Everything outside the move is delivered verbatim to the other player as talk.
The last well-formed move in the text counts; text with no well-formed move,
``[accept]`` with no proposal of the other player standing, or a proposal that
asks for more items than the pool holds is an invalid action.

Episodes: after ``deadline`` turns (default 10, OpenSpiel's ``max_turns``)
without a deal the game ends and each player gets its disagreement payoff
(``disagreement``, 0 by default). That is an outcome of the rules, not a
cut-off: the engine's own ``max_turns`` option, if set, truncates the episode
instead. The same instance and the same sequence of proposals and acceptances
(no ``[pass]``) give the same payoffs as OpenSpiel's ``bargaining`` game, where
an offer's quantities are the proposer's share.

Instances: drawn from the seed like OpenSpiel's instance generator (5 to 7
items, every type valued by someone, some type valued by both), or, with
``instances_file``, drawn uniformly from a file in OpenSpiel's format, one
instance per line: ``pool p0_values p1_values``, e.g. ``1,2,3 8,1,0 4,0,2``.

Rewards: on a deal, each player's value of the items it gets, paid at the end;
otherwise the disagreement payoffs. A player exceeding the invalid-action
allowance gets -1 and the other 0. The outcome's ``details`` hold the analysis
of :mod:`parlour.envs.negotiation.analysis` over every split of the pool.

Version history: v0, first release (the turn limit, first named ``max_turns``,
became ``deadline`` when the engine took that name for truncation).
"""

from __future__ import annotations

import functools
import itertools
import re
from pathlib import Path
from typing import Any, Sequence, TypedDict

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.frozen import FrozenDict
from parlour.envs.core.game import Game, int_option
from parlour.envs.core.numbers import LISTED_NUMBER
from parlour.envs.negotiation.pool_split import PoolSplit, bundle_text

ITEM_NAMES = ("book", "hat", "ball", "pen", "cup")
POOL_MIN_ITEMS = 5
POOL_MAX_ITEMS = 7
#: Largest ``total_value``: instance generation enumerates value vectors, which grow with it.
MAX_TOTAL_VALUE = 30


class Instance(TypedDict):
    """One bargaining instance: the ``pool`` (count of each item type) and each player's ``values`` per item type."""

    pool: list[int]
    values: list[list[int]]


MOVE = re.compile(rf"\[\s*+(propose|accept|pass)\s*+\]((?:\s*+{LISTED_NUMBER}\s*+[a-z]*+\s*+(?:,|;|\band\b)?)*+)", re.IGNORECASE)
RULES = """You are {player} in a Deal-or-No-Deal bargaining game against {other}.
A pool of items must be split between you: {pool}.
Your private values per item: {values}. The whole pool is worth {worth} to you. {other} has its own private values, which you do not know; yours are unknown to it.
Players alternate turns, player_0 first; the game lasts at most {deadline} turns in all. If no deal is made by then, you get {disagreement:g}.
On your turn, write anything you like (it is sent to {other} word for word) and end with one move:
  [propose] <count> <item>, ...   the items YOU keep (name every item type); {other} gets the rest
  [accept]                        accept {other}'s standing proposal
  [pass]                          talk only, no proposal this turn
The last move in your text counts. Example:
  Hats matter most to me, books you can have. [propose] 0 books, 2 hats, 1 ball"""


def read_instances(path: str | Path) -> list[Instance]:
    """Instances from a file in OpenSpiel's ``bargaining`` format: lines ``pool p0_values p1_values``."""
    instances: list[Instance] = []
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split()
        try:
            pool, v0, v1 = ([int(x) for x in part.split(",")] for part in parts)
        except ValueError as error:
            raise ValueError(f"{path}:{number}: expected 'pool p0_values p1_values' of comma-separated ints, got {line!r}") from error
        if not len(pool) == len(v0) == len(v1) or len(pool) > len(ITEM_NAMES) or min(pool + v0 + v1) < 0:
            raise ValueError(f"{path}:{number}: pool and values need the same number (<= {len(ITEM_NAMES)}) of non-negative ints")
        instances.append({"pool": pool, "values": [v0, v1]})
    if not instances:
        raise ValueError(f"{path} holds no instances")
    return instances


@functools.cache
def value_vectors(pool: Sequence[int], total: int) -> list[tuple[int, ...]]:
    """Every vector of non-negative integer values per type under which ``pool`` is worth exactly ``total``."""
    if not pool:
        return [()] if total == 0 else []
    first, rest = pool[0], tuple(pool[1:])
    return [(x, *tail) for x in range(total // first + 1) for tail in value_vectors(rest, total - first * x)]


def generate_instance(rng: np.random.Generator, types: int, total: int) -> Instance:
    """A random instance with OpenSpiel's generator constraints.

    5 to 7 items with at least one of each type; each player's pool worth
    ``total``; every type valued by at least one player and some type by both.
    """
    while True:
        pool = [int(x) for x in rng.integers(1, POOL_MAX_ITEMS + 1, size=types)]
        if not POOL_MIN_ITEMS <= sum(pool) <= POOL_MAX_ITEMS:
            continue
        vectors = value_vectors(tuple(pool), total)
        if not vectors:
            continue
        v0, v1 = (vectors[int(i)] for i in rng.integers(len(vectors), size=2))
        if acceptable_values(v0, v1):
            return {"pool": pool, "values": [list(v0), list(v1)]}


def acceptable_values(v0: Sequence[int], v1: Sequence[int]) -> bool:
    """OpenSpiel's constraint on a pair of value vectors: every type valued by someone, some type by both."""
    return all(a > 0 or b > 0 for a, b in zip(v0, v1)) and any(a > 0 and b > 0 for a, b in zip(v0, v1))


@functools.cache
def instances_exist(types: int, total: int) -> bool:
    """Whether :func:`generate_instance` can succeed for ``types`` item types worth ``total`` each."""
    for pool in itertools.product(range(1, POOL_MAX_ITEMS + 1), repeat=types):
        if POOL_MIN_ITEMS <= sum(pool) <= POOL_MAX_ITEMS:
            vectors = value_vectors(pool, total)
            if any(acceptable_values(v0, v1) for v0 in vectors for v1 in vectors):
                return True
    return False


class Bargaining(PoolSplit, Game):
    """Two-player multi-issue bargaining over a pool of items; see the module docstring."""

    name = "Bargaining"
    reference_agents = ("boulware", "random")
    description = "Deal-or-No-Deal: split a pool of items, each side with private values; talk, propose, accept."
    category = "negotiation"
    zero_sum = False
    move_pattern = MOVE
    no_proposal = "There is no proposal of the other player to accept; use [propose] or [pass]."
    no_move = "No move found. End with [propose] <count> <item>, ... naming every item ({items}), [accept] or [pass]."

    def __init__(
        self,
        *,
        deadline: int = 10,
        item_types: int = 3,
        total_value: int = 10,
        instances_file: str | None = None,
        disagreement: float = 0.0,
    ):
        int_option("deadline", deadline, 1)
        int_option("item_types", item_types, 1, len(ITEM_NAMES))
        int_option("total_value", total_value, 1, MAX_TOTAL_VALUE)
        if instances_file is None and not instances_exist(item_types, total_value):
            raise ValueError(
                f"no pool of {POOL_MIN_ITEMS} to {POOL_MAX_ITEMS} items of {item_types} type(s) can be worth exactly "
                f"{total_value} to both players under OpenSpiel's rules; choose other item_types or total_value"
            )
        if not isinstance(disagreement, (int, float)) or isinstance(disagreement, bool):
            raise ValueError(f"disagreement must be a number, got {disagreement!r}")
        self.deadline = deadline
        self.item_types = item_types
        self.total_value = total_value
        self.instances = read_instances(instances_file) if instances_file is not None else None
        self.disagreement = float(disagreement)
        self.players = ["player_0", "player_1"]
        self.pool: list[int] = []
        self.values: list[list[int]] = []
        self.names: list[str] = []
        self.turn = 0
        # Read-only entries in a tuple that only grows: every view shares it instead of copying it.
        self.proposals: tuple[FrozenDict, ...] = ()
        self.deal: dict[str, Any] | None = None

    def start(self, ctx: Context) -> None:
        """Draw the instance: from the instances file if given, else from the generator."""
        if self.instances is not None:
            instance = self.instances[int(ctx.rng.integers(len(self.instances)))]
        else:
            instance = generate_instance(ctx.rng, self.item_types, self.total_value)
        self.pool = list(instance["pool"])
        self.values = [list(v) for v in instance["values"]]
        self.names = list(ITEM_NAMES[: len(self.pool)])
        self.turn = 0
        self.proposals = ()
        self.deal = None

    def no_deal(self) -> dict[str, float]:
        """The disagreement payoffs."""
        return {p: self.disagreement for p in self.players}

    # -------------------------------------------------------------------- text
    def rules(self, player: str) -> str:
        """Rules, the pool and this player's private values."""
        values = self.values[self.seat(player)]
        return RULES.format(
            player=player,
            other=self.other(player),
            pool=bundle_text(self.pool, self.names),
            values=", ".join(f"{v} per {n}" for v, n in zip(values, self.names)),
            worth=self.value(player, self.pool),
            deadline=self.deadline,
            disagreement=self.disagreement,
        )

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """Turns left and the standing proposal, valued with this player's own values."""
        return "\n".join(
            [
                f"Turn {self.turn + 1} of {self.deadline}. Pool: {bundle_text(self.pool, self.names)}.",
                self.standing_text(player),
                "Write your message and end with [propose] ..., [accept] or [pass].",
            ]
        )

    # ------------------------------------------------------------------- rules
    def accept(self, ctx: Context, player: str, standing: FrozenDict) -> None:
        """Keep the deal as ``deal``, then close it."""
        self.deal = standing
        super().accept(ctx, player, standing)

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """-1 to the offender, 0 to the other, who wins; the analysis treats it as no deal."""
        other = self.other(player)
        details = self.report(self.no_deal(), agreed=False)
        ctx.finish({player: -1.0, other: 0.0}, winners=[other], reason=reason, details=details)

    # ------------------------------------------------------------------- views
    def view(self, player: str) -> dict[str, Any]:
        """Own values, the pool, the public proposals (shared, read-only) and the clock."""
        return {
            "player": player,
            "items": list(self.names),
            "pool": list(self.pool),
            "values": list(self.values[self.seat(player)]),
            "disagreement": self.disagreement,
            "turn": self.turn,
            "deadline": self.deadline,
            "proposals": self.proposals,
            "standing": self.standing(),
        }
