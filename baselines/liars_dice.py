"""The ``probabilistic`` agent for LiarsDice: bids and challenges by binomial odds given its own dice."""

from __future__ import annotations

import math
from typing import Any, Mapping

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.seeded import SeededAgent
from parlour.envs.games.liars_dice import bid_index, bid_name

#: Bids whose chance of holding is within this of the best one are equally good candidates.
MARGIN = 0.05


def at_least(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p)."""
    if k <= 0:
        return 1.0
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))


def bid_holds(quantity: int, face: int, own: list[int], unknown: int, sides: int, wild: int) -> float:
    """Probability that at least ``quantity`` dice count for ``face``, knowing ``own`` dice and ``unknown`` others."""
    counting = {face, wild}
    known = sum(1 for d in own if d in counting)
    return at_least(quantity - known, unknown, len(counting) / sides)


class ProbabilisticAgent(SeededAgent):
    """Challenges when the standing bid is likelier false than any raise is true; else makes a likely bid.

    Each unseen die counts for a face with probability 2/6 (the face or a wild
    six; 1/6 for sixes). Among the bids nearly as likely to hold as the best
    one, it picks one at random.
    """

    name = "probabilistic"

    def act(self, observation: Mapping[str, Any]) -> str:
        """A bid such as ``"3 fives"`` or ``"liar"`` for the position in ``observation["view"]``."""
        view = observation["view"]
        own, sides, wild = view["dice"], view["sides"], view["wild"]
        total = sum(view["dice_counts"])
        unknown = total - len(own)
        low = 0 if view["bid"] is None else bid_index(*view["bid"]) + 1
        bids = [(i // sides + 1, i % sides + 1) for i in range(low, total * sides)]
        chances = [bid_holds(q, f, own, unknown, sides, wild) for q, f in bids]
        best = max(chances, default=0.0)
        if view["bid"] is not None and (not bids or 1.0 - bid_holds(view["bid"][0], view["bid"][1], own, unknown, sides, wild) > best):
            return "liar"
        candidates = [bid for bid, chance in zip(bids, chances) if chance >= best - MARGIN]
        return bid_name(*candidates[int(self.rng.integers(len(candidates)))])


register_scripted("probabilistic", "parlour/LiarsDice-v0", ProbabilisticAgent)
register_ladder("parlour/LiarsDice-v0", ["random", "probabilistic"])
