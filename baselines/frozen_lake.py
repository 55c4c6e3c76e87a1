"""The ``solver`` for FrozenLake: value iteration on the game's own move rule.

It computes, for every cell, the greatest chance of reaching the goal without
falling into a hole (value iteration over
:func:`parlour.envs.puzzles.frozen_lake.outcomes`, to a change below
``1e-9``), and plays the move that maximises it; ties go to the move that
brings it nearest the goal along a safe path. On ice that is not slippery
every move is certain, so this is the shortest safe path, and the agent
always arrives.
"""

from __future__ import annotations

from typing import Any, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.seeded import SeededAgent
from parlour.envs.puzzles.frozen_lake import MOVES, outcomes, safe_distances, shift

TOLERANCE = 1e-9


def success_chances(holes: frozenset[tuple[int, int]], size: int, slippery: bool) -> dict[tuple[int, int], float]:
    """The greatest chance of reaching the goal from each cell, by value iteration (holes 0, the goal 1)."""
    goal = (size - 1, size - 1)
    cells = [(r, c) for r in range(size) for c in range(size) if (r, c) not in holes and (r, c) != goal]
    value = {cell: 0.0 for cell in holes}
    value[goal] = 1.0
    value.update({cell: 0.0 for cell in cells})
    transitions = {cell: [outcomes(size, cell, move, slippery) for move in MOVES if shift(size, cell, move) != cell] for cell in cells}
    while True:
        change = 0.0
        for cell in cells:
            best = max(sum(chance * value[nxt] for chance, nxt in options) for options in transitions[cell])
            change = max(change, best - value[cell])
            value[cell] = best
        if change < TOLERANCE:
            return value


def distances(holes: frozenset[tuple[int, int]], size: int) -> dict[tuple[int, int], int]:
    """The fewest firm steps from each cell to the goal around the holes (cells with no way are left out)."""
    return safe_distances(holes, size, (size - 1, size - 1))


class FrozenLakeSolver(SeededAgent):
    """Plays the move with the greatest chance of reaching the goal (the shortest safe path on firm ice)."""

    name = "solver"

    def __init__(self, env_id: str | None = None, seed: int | None = None):
        super().__init__(env_id, seed)
        self.lake: tuple | None = None
        self.value: dict[tuple[int, int], float] = {}
        self.distance: dict[tuple[int, int], int] = {}

    def act(self, observation: Mapping[str, Any]) -> str:
        """The best move from the cell in ``observation["view"]``; the plan is worked out once per lake."""
        view = observation["view"]
        size, slippery = view["size"], view["slippery"]
        holes = frozenset((r, c) for r, row in enumerate(view["map"]) for c, symbol in enumerate(row) if symbol == "H")
        if self.lake != (holes, size, slippery):
            self.lake = (holes, size, slippery)
            self.value, self.distance = success_chances(holes, size, slippery), distances(holes, size)
        here = tuple(view["position"])

        def score(move: str) -> tuple[float, float]:
            chance = sum(p * self.value[nxt] for p, nxt in outcomes(size, here, move, slippery))
            # On firm ice every cell with a way out has chance 1, so the safe distance to the goal breaks the tie.
            return round(chance, 12), -self.distance.get(shift(size, here, move), size * size)

        return max(observation["legal_moves"], key=score)


register_scripted("solver", "parlour/FrozenLake-v0", FrozenLakeSolver)
