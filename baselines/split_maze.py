"""Scripted SplitMaze agents: ``bfs`` (share the map, merge, plan by breadth-first search) and ``random``.

``bfs`` keeps no state between turns: everything it needs is in the view (its
map, the token, the goal, the last proposals and every message heard).

* It merges into its own map the cells its partner shared in the form
  ``open: b1 b2; walls: c3`` (the form the rules suggest and that it writes itself).
* It plans a shortest path over the merged map, taking unknown cells as open,
  and proposes the path's first step. Ties between equally short paths are
  broken in the fixed order north, east, south, west, so two ``bfs`` players
  with the same map always propose the same step.
* In ``pair`` mode it shares its whole half on the first turn and says which
  step it proposes.
* While its map still has unknown cells and the last proposals differed,
  ``player_1`` proposes what ``player_0`` proposed last (a leader convention):
  without it two players who plan on different maps could disagree forever.
  In ``silent`` mode this is the only coordination there is.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any, Mapping

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.random_agent import RandomAgent
from parlour.baselines.seeded import SeededAgent
from parlour.envs.social.split_maze import DELTAS, OPEN, UNKNOWN, WALL, cell_name, parse_cell

ENV_ID = "parlour/SplitMaze-v0"
ORDER = ("north", "east", "south", "west")
SHARED = re.compile(r"\b(open|walls?)\s*:\s*((?:[a-z]\d{1,2}\b[\s,]*)+)", re.IGNORECASE)
WORDS = ["go", "north", "east", "left", "wall", "here", "I", "see", "open", "maybe", "wait", "ok"]


def merged_map(view: Mapping[str, Any]) -> list[list[str]]:
    """The player's map with the cells its partner shared filled in (its own knowledge wins)."""
    grid = [list(row) for row in view["map"]]
    size = view["size"]
    for message in view["heard"]:
        for kind, cells in SHARED.findall(message):
            symbol = OPEN if kind.lower() == "open" else WALL
            for name in re.findall(r"[a-z]\d{1,2}", cells.lower()):
                cell = parse_cell(name, size)
                if cell is not None and grid[cell[0]][cell[1]] == UNKNOWN:
                    grid[cell[0]][cell[1]] = symbol
    return grid


def plan(grid: list[list[str]], position: tuple[int, int], goal: tuple[int, int]) -> str:
    """The first step of a shortest path from ``position`` to ``goal``, unknown cells taken as open; ``stay`` if none."""
    size = len(grid)
    dist = {goal: 0}
    queue = deque([goal])
    while queue:
        row, col = queue.popleft()
        for dr, dc in DELTAS.values():
            cell = (row + dr, col + dc)
            if 0 <= cell[0] < size and 0 <= cell[1] < size and cell not in dist and grid[cell[0]][cell[1]] != WALL:
                dist[cell] = dist[(row, col)] + 1
                queue.append(cell)
    best, choice = dist.get(position, -1), "stay"
    if best <= 0:
        return choice
    for step in ORDER:
        cell = (position[0] + DELTAS[step][0], position[1] + DELTAS[step][1])
        if dist.get(cell, best) < best:
            return step
    return choice


class BFSAgent(SeededAgent):
    """Shares its half of the maze, merges its partner's, and proposes the first step of a shortest path."""

    name = "bfs"

    def act(self, observation: Mapping[str, Any]) -> str:
        """This turn's reply: ``[step] ...`` with talk in ``pair`` mode, a bare step name otherwise."""
        view = observation["view"]
        size = view["size"]
        grid = merged_map(view)
        position, goal = parse_cell(view["position"], size), parse_cell(view["goal"], size)
        assert position is not None and goal is not None
        step = plan(grid, position, goal)
        last = view["last_proposals"]
        complete = all(UNKNOWN not in row for row in grid)
        leader = last.get("player_0")
        if not complete and view["player"] == "player_1" and len(set(last.values())) > 1 and leader in view["legal_steps"]:
            step = leader
        if view["mode"] != "pair":
            return step
        talk = f"I propose {step}."
        if view["turn"] == 0:
            talk = f"{share(view)} {talk}"
        return f"{talk} [step] {step}"


def share(view: Mapping[str, Any]) -> str:
    """``open: ...; walls: ...``: every cell of the player's own map it knows."""
    opened, walls = [], []
    for row, line in enumerate(view["map"]):
        for col, symbol in enumerate(line):
            if symbol == OPEN:
                opened.append(cell_name(row, col))
            elif symbol == WALL:
                walls.append(cell_name(row, col))
    return f"open: {' '.join(opened)}; walls: {' '.join(walls)}."


class SplitMazeRandomAgent(RandomAgent):
    """Uniformly random steps on the grid; in ``pair`` mode a few random words before the step tag."""

    def free_move(self, observation: Mapping[str, Any]) -> str:
        """Random words, then ``[step]`` and a random step that stays on the grid."""
        view = observation["view"]
        steps = view["legal_steps"]
        words = " ".join(WORDS[int(i)] for i in self.rng.integers(len(WORDS), size=int(self.rng.integers(0, 5))))
        return f"{words} [step] {steps[int(self.rng.integers(len(steps)))]}"


register_scripted("bfs", ENV_ID, BFSAgent)
register_scripted("random", ENV_ID, SplitMazeRandomAgent)
# A cooperative game: the easiest partner (who proposes the shortest path's steps) first, a random one last.
register_ladder(ENV_ID, ["bfs", "random"])
