"""The ``solver`` for the Tower of Hanoi: the optimal recursive strategy,
:func:`parlour.envs.puzzles.tower_of_hanoi.solution`, from the position it is shown.

Every move it plays is the first of a shortest solution from the current
position, so it needs no plan of its own and solves any start in the fewest
moves, always within the move limit.
"""

from __future__ import annotations

from typing import Any, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.seeded import SeededAgent
from parlour.envs.puzzles.tower_of_hanoi import PEGS, solution


class TowerOfHanoiSolver(SeededAgent):
    """Plays the first move of the shortest solution from the shown position."""

    name = "solver"

    def act(self, observation: Mapping[str, Any]) -> str:
        """The next move of the optimal strategy (a solved position ends the episode, so there always is one)."""
        source, dest = solution(observation["view"]["positions"])[0]
        return f"{PEGS[source]}->{PEGS[dest]}"


register_scripted("solver", "parlour/TowerOfHanoi-v0", TowerOfHanoiSolver)
