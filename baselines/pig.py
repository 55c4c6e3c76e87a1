"""``hold`` for Pig: roll until the turn total reaches the die's break-even point (20 on the default six-faced
die), then stop; stop sooner when banking would win.

One more roll of a ``d``-faced die gains ``2 + 3 + ... + d`` over ``d`` on
average (one point a roll but a 1 under ``piglet``) and loses the turn total
``T`` one time in ``d``; it stops paying once ``T`` reaches ``d(d+1)/2 - 1``
(``d - 1`` under ``piglet``): 20 on six faces, the classic "hold at 20" that
maximises the expected points of a turn.

Version history: v0, first release.
"""

from __future__ import annotations

from typing import Any, Mapping

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.seeded import SeededAgent


def break_even(dice_outcomes: int, piglet: bool) -> int:
    """The turn total at which one more roll's expected gain no longer exceeds its expected loss."""
    return dice_outcomes - 1 if piglet else dice_outcomes * (dice_outcomes + 1) // 2 - 1


class Hold(SeededAgent):
    """Rolls while the turn total is under the die's break-even point and banking it would not win; stops otherwise.

    Version history: v0, first release.
    """

    name = "hold"

    def act(self, observation: Mapping[str, Any]) -> str:
        """``roll`` or ``stop`` for the position in ``observation["view"]``."""
        view = observation["view"]
        needed = view["win_score"] - view["scores"][view["seat"]]
        target = break_even(view["dice_outcomes"], view["piglet"])
        return "stop" if view["turn_total"] >= min(target, needed) else "roll"


register_scripted("hold", "parlour/Pig-v0", Hold)
register_ladder("parlour/Pig-v0", ["random", "hold"])
