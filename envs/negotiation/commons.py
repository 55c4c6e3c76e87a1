"""Commons: n fishers share a regrowing stock that collapses when over-harvested (GovSim, "Cooperate or Collapse").

Players ``player_0`` .. ``player_{n-1}`` (option ``num_players``, 2 to 8,
default 5) share a stock of ``initial_stock`` units (default 100) that can hold
at most ``capacity`` (default 100). The game lasts ``rounds`` rounds (default
12); each round has two simultaneous phases:

1. Discussion: every player sends ``[say] <message>`` (the text after the last
   ``[say]`` tag is the message; text before it is private) or ``[pass]``; an
   empty action is a pass too. Once all have acted, every message is delivered
   to everyone verbatim. Text with neither tag is an invalid action.
2. Harvest: every player sends ``[harvest] N`` (N a non-negative integer; the
   last such move in the text counts, everything else is ignored). A request
   above the current stock counts as the whole stock.

Harvest arithmetic (integers, deterministic): with stock ``S`` and requests
``r_i`` summing to ``R``, each player gets ``r_i`` if ``R <= S``; otherwise
``r_i * S // R`` (proportional, rounded down; the rounding remainder stays in
the stock). If what is left is below ``collapse_threshold`` (default 5) the
commons collapses and the game ends. Otherwise the remaining stock ``L``
regrows to ``min(capacity, floor(L * (1 + growth_rate)))`` (default
``growth_rate`` 1.0: the stock doubles up to capacity) and, unless it was the
last round, the next round begins.

Rewards: each player's harvest, paid in the round it is taken. Winners: none,
ever (a cooperative game scored by the outcome details). A player who
exceeds the invalid-action allowance forfeits: its return becomes -1 (its
harvests are taken back, minus one), the others keep theirs, the game ends.

Outcome details: ``collapsed`` (the stock fell below the threshold),
``survived`` (the commons lasted all rounds), ``rounds_survived`` (rounds
completed without a collapse), ``total_harvest``, ``harvests`` per player,
``gini`` of the per-player harvests (:func:`parlour.envs.negotiation.analysis.gini`)
and ``final_stock``. Nothing is random: the seed does not change the game.

Version history: v0, first release.
"""

from __future__ import annotations

import math
import re
from typing import Any

from parlour.envs.core.context import Context
from parlour.envs.core.game import Game, InvalidMove, int_option
from parlour.envs.core.numbers import NUMBER, whole_number
from parlour.envs.negotiation.analysis import gini

SAY_PATTERN = re.compile(r"\[(say|pass)\]", re.IGNORECASE)
HARVEST_PATTERN = re.compile(rf"\[harvest\]\s*+(?::\s*+)?({NUMBER})", re.IGNORECASE)

RULES = """You are {player}, one of {n} fishers ({players}) sharing a lake for {rounds} rounds.
The lake holds {stock} tons of fish now and at most {capacity}. Each round has two phases.
1. Discussion: everyone speaks at once, then hears every message. Reply "[say] your message" (only the text after [say] is heard, word for word, by everyone) or "[pass]" to stay silent.
2. Harvest: everyone decides at once. Reply "[harvest] N" to ask for N tons. If the requests add up to more than the lake holds, each gets a proportional share, rounded down.
After the harvest, if fewer than {threshold} tons remain the lake collapses and the game ends for everyone. Otherwise the fish left grow by {growth:g}% (up to {capacity} tons).
Your reward is the fish you harvest.
Example: "[say] If we each take 10 tons the lake refills every round." then later "[harvest] 10"."""


class Commons(Game):
    """A shared regrowing stock with talk and simultaneous harvests; see the module docstring."""

    name = "Commons"
    reference_agents = ("reciprocator", "random")
    description = "n fishers discuss, then harvest a shared regrowing stock that collapses if over-fished."
    category = "negotiation"
    zero_sum = False
    simultaneous = True

    def __init__(
        self,
        *,
        num_players: int = 5,
        initial_stock: int = 100,
        capacity: int = 100,
        growth_rate: float = 1.0,
        collapse_threshold: int = 5,
        rounds: int = 12,
    ):
        self.num_players = int_option("num_players", num_players, 2, 8)
        self.capacity = int_option("capacity", capacity, 1)
        self.initial_stock = int_option("initial_stock", initial_stock, 1, capacity)
        self.collapse_threshold = int_option("collapse_threshold", collapse_threshold, 0, initial_stock)
        self.rounds = int_option("rounds", rounds, 1, 1000)
        if isinstance(growth_rate, bool) or not isinstance(growth_rate, (int, float)) or not 0 <= growth_rate <= 100:
            raise ValueError(f"growth_rate must be a number in [0, 100], got {growth_rate!r}")
        self.growth_rate = float(growth_rate)
        self.players = [f"player_{i}" for i in range(num_players)]
        self.stock = initial_stock
        self.round = 1
        self.phase = "discuss"
        self.harvests: dict[str, int] = {}
        self.collapsed = False
        self.completed = 0

    def start(self, ctx: Context) -> None:
        """Full starting stock, round 1, discussion phase."""
        self.stock = self.initial_stock
        self.round = 1
        self.phase = "discuss"
        self.harvests = {p: 0 for p in self.players}
        self.collapsed = False
        self.completed = 0

    def rules(self, player: str) -> str:
        """Rules, the player's seat and the example."""
        return RULES.format(
            player=player,
            n=self.num_players,
            players=", ".join(self.players),
            rounds=self.rounds,
            stock=self.stock,
            capacity=self.capacity,
            threshold=self.collapse_threshold,
            growth=100 * self.growth_rate,
        )

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The round, the stock and the phase's move."""
        head = f"Round {self.round} of {self.rounds}. The lake holds {self.stock} tons."
        if self.phase == "discuss":
            return f"{head} Discussion: reply [say] your message, or [pass]."
        return f"{head} Harvest: reply [harvest] N."

    def parse(self, player: str, text: str) -> dict[str, Any] | int:
        """Discussion: ``{"say": message}`` (``""`` for a pass). Harvest: the tons asked, capped at the stock."""
        if self.phase == "discuss":
            found = list(SAY_PATTERN.finditer(text))
            if not found:
                if text.strip():
                    raise InvalidMove('No move found. In the discussion reply "[say] your message" or "[pass]".')
                return {"say": ""}
            last = found[-1]
            message = text[last.end() :].strip() if last.group(1).lower() == "say" else ""
            return {"say": message}
        requests = HARVEST_PATTERN.findall(text)
        if not requests:
            raise InvalidMove('No harvest found. Reply "[harvest] N" with N a whole number of tons, e.g. [harvest] 10.')
        tons = whole_number(
            requests[-1], 0, None, 'Harvest a whole number of tons, 0 or more, got {written}. Reply "[harvest] N", e.g. [harvest] 10.', "[harvest] 10"
        )
        return min(tons, self.stock)

    def apply(self, ctx: Context, moves: dict[str, Any]) -> None:
        """Deliver the discussion, or resolve the harvest, the collapse and the regrowth."""
        if self.phase == "discuss":
            for player in self.players:
                message = moves[player]["say"]
                if message:
                    ctx.say(player, message)
                else:
                    ctx.tell(f"{player} stays silent.", kind="move", sender=player)
            self.phase = "harvest"
            return
        taken = self.split(moves)
        self.stock -= sum(taken.values())
        for player in self.players:
            self.harvests[player] += taken[player]
            ctx.reward(player, taken[player])
        summary = "; ".join(f"{p} asked {moves[p]}, got {taken[p]}" for p in self.players)
        ctx.tell(f"Round {self.round} harvest: {summary}. {self.stock} tons remain.")
        if self.stock < self.collapse_threshold:
            self.collapsed = True
            ctx.finish(reason=f"the lake collapsed in round {self.round}", details=self.report())
            return
        self.completed = self.round
        if self.round == self.rounds:
            ctx.finish(reason=f"the lake survived all {self.rounds} rounds", details=self.report())
            return
        self.stock = min(self.capacity, math.floor(self.stock * (1 + self.growth_rate)))
        self.round += 1
        self.phase = "discuss"
        ctx.tell(f"The fish regrow: the lake holds {self.stock} tons.")

    def split(self, requests: dict[str, int]) -> dict[str, int]:
        """What each player gets: its request, or its proportional share rounded down when requests exceed the stock."""
        total = sum(requests.values())
        if total <= self.stock:
            return dict(requests)
        return {p: r * self.stock // total for p, r in requests.items()}

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """The offender's harvests are taken back and it pays 1 more (return -1); the others keep theirs; nobody wins."""
        taken_back = self.harvests[player]
        self.harvests[player] = 0
        ctx.finish({player: -1.0 - taken_back}, reason=reason, details=self.report())

    def report(self) -> dict[str, Any]:
        """The outcome details (see the module docstring)."""
        return {
            "collapsed": self.collapsed,
            "survived": not self.collapsed and self.completed == self.rounds,
            "rounds_survived": self.completed,
            "total_harvest": sum(self.harvests.values()),
            "harvests": dict(self.harvests),
            "gini": gini(list(self.harvests.values())),
            "final_stock": self.stock,
        }

    def view(self, player: str) -> dict[str, Any]:
        """Everything public: the phase, round, stock, parameters and each player's harvest so far."""
        return {
            "player": player,
            "phase": self.phase,
            "round": self.round,
            "rounds": self.rounds,
            "stock": self.stock,
            "capacity": self.capacity,
            "growth_rate": self.growth_rate,
            "collapse_threshold": self.collapse_threshold,
            "num_players": self.num_players,
            "harvests": dict(self.harvests),
        }

    def render(self) -> str:
        """Round, phase, stock and harvests."""
        harvests = ", ".join(f"{p}: {h}" for p, h in self.harvests.items())
        return f"Round {self.round}/{self.rounds} ({self.phase}), stock {self.stock}/{self.capacity}; harvests: {harvests}"
