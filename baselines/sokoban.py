"""The ``solver`` for Sokoban: breadth-first search over box pushes, walked out move by move.

A state is the set of boxes and the region the player can walk to (named by
its smallest cell), so walking is not searched, only pushes: the fewest
pushes that solve the level are found, and each push is reached by the
shortest walk. Boxes are never pushed onto a dead cell, one from which no
push can bring a box to a goal (a corner, a wall with no goal along it). Moves
are made by the game's own rule, :func:`parlour.envs.puzzles.sokoban.step`.
The search is complete, so on a solvable level the agent always solves it.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.seeded import SeededAgent
from parlour.envs.puzzles.sokoban import deltas, reachable, step


def live_cells(walls: frozenset[int], goals: frozenset[int], size: int) -> set[int]:
    """Cells from which some sequence of pushes (other boxes aside) brings a box to a goal."""
    live = set(goals)
    frontier = list(goals)
    while frontier:
        cell = frontier.pop()
        for delta in deltas(size).values():
            # A box arrives at ``cell`` from ``cell - delta`` pushed by a player standing at ``cell - 2 delta``.
            source = cell - delta
            if source not in live and source not in walls and source - delta not in walls:
                live.add(source)
                frontier.append(source)
    return live


def walk(walls: frozenset[int], boxes: frozenset[int], start: int, goal: int, size: int) -> list[str]:
    """The shortest walk (no pushes) from ``start`` to ``goal``, as moves."""
    parents: dict[int, tuple[int, str] | None] = {start: None}
    frontier = deque([start])
    while goal not in parents:
        cell = frontier.popleft()
        for move, delta in deltas(size).items():
            nxt = cell + delta
            if nxt not in parents and nxt not in walls and nxt not in boxes:
                parents[nxt] = (cell, move)
                frontier.append(nxt)
    path = []
    while (link := parents[goal]) is not None:
        goal, move = link
        path.append(move)
    return path[::-1]


def solve(walls: frozenset[int], goals: frozenset[int], boxes: frozenset[int], player: int, size: int) -> list[str] | None:
    """Moves that put every box on a goal with the fewest pushes, or ``None`` when no pushes can."""
    live = live_cells(walls, goals, size)
    moves = deltas(size)
    start = (boxes, min(reachable(walls, boxes, player, size)))
    parents: dict[tuple[frozenset[int], int], tuple[tuple[frozenset[int], int], int, str] | None] = {start: None}
    frontier = deque([(boxes, player)])
    while frontier:
        boxes_now, at = frontier.popleft()
        key = (boxes_now, min(region := reachable(walls, boxes_now, at, size)))
        if boxes_now == goals:
            return unwind(parents, key, walls, boxes, player, size)
        for box in boxes_now:
            for move, delta in moves.items():
                if box - delta in region and box + delta in live:
                    after = step(walls, boxes_now, box - delta, delta)
                    if after is None:
                        continue
                    next_key = (after[1], min(reachable(walls, after[1], after[0], size)))
                    if next_key not in parents:
                        parents[next_key] = (key, box, move)
                        frontier.append((after[1], after[0]))
    return None


def unwind(parents: dict, key: tuple[frozenset[int], int], walls: frozenset[int], boxes: frozenset[int], player: int, size: int) -> list[str]:
    """The moves of the pushes leading to ``key``: the walk to each push, then the push."""
    pushes = []
    while (link := parents[key]) is not None:
        key, box, move = link
        pushes.append((box, move))
    moves: list[str] = []
    for box, move in reversed(pushes):
        delta = deltas(size)[move]
        moves += walk(walls, boxes, player, box - delta, size) + [move]
        after = step(walls, boxes, box - delta, delta)
        assert after is not None
        player, boxes, _ = after
    return moves


class SokobanSolver(SeededAgent):
    """Solves the level from the position it is shown, then plays the plan; solves again if the position is not the plan's."""

    name = "solver"

    def __init__(self, env_id: str | None = None, seed: int | None = None):
        super().__init__(env_id, seed)
        self.plan: list[str] = []
        self.expected: tuple | None = None

    def reset(self, seed: int | None = None) -> None:
        """Reseed and forget the plan."""
        super().reset(seed)
        self.plan, self.expected = [], None

    def act(self, observation: Mapping[str, Any]) -> str:
        """The next move of a plan that solves the shown position (a random legal move if none does)."""
        view = observation["view"]
        size = view["size"]
        cell = lambda rc: rc[0] * size + rc[1]  # noqa: E731
        walls = frozenset(r * size + c for r, row in enumerate(view["map"]) for c, symbol in enumerate(row) if symbol == "#")
        goals = frozenset(map(cell, view["goals"]))
        boxes = frozenset(map(cell, view["boxes"]))
        player = cell(view["player"])
        if not self.plan or self.expected != (boxes, player):
            self.plan = solve(walls, goals, boxes, player, size) or []
        if not self.plan:
            legal = observation["legal_moves"]
            return legal[int(self.rng.integers(len(legal)))]
        move = self.plan.pop(0)
        after = step(walls, boxes, player, deltas(size)[move])
        assert after is not None
        self.expected = (after[1], after[0])
        return move


register_scripted("solver", "parlour/Sokoban-v0", SokobanSolver)
