"""FrozenLake: walk across a frozen lake from the start to the goal without falling into a hole.

One player, ``player_0``. The lake is a square grid drawn from the seed: the
start ``S`` is the top-left corner, the goal ``G`` the bottom-right one, and
every other cell is a hole ``H`` with the difficulty's chance, else frozen
``F``. Lakes without a path from start to goal are drawn again, so one always
exists. The player's cell is shown as ``@``.

Moves: ``up``, ``down``, ``left``, ``right`` (compass words are accepted);
a move off the lake is an invalid action. With ``slippery=True`` (default
``False``) the ice moves the player in the intended direction with chance 1/3
and in each of the two perpendicular directions with chance 1/3 (as
Gymnasium's ``FrozenLake``); a slide off the lake leaves the player where it
was. The slides are drawn from the episode's seed.

``difficulty`` (1 to 5, default 2): the side of the lake (4, 5, 6, 7, 8) and
the chance of a hole (0.15, 0.2, 0.2, 0.25, 0.25). The step limit is four
times the number of cells.

Rewards: 1 on reaching the goal (the player wins), 0 on falling into a hole
or running out of steps. A player that exceeds the invalid-action allowance
gets -1. Outcome details: ``difficulty``, ``slippery``, ``success``,
``steps``, ``max_steps``, ``fell`` (into a hole) and ``shortest`` (the length
of the shortest safe path).

Vector observation: three planes of ``size * size`` cells (holes, the goal,
the player), then the fraction of the step limit used.

Version history: v0, first release.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.errors import InvalidMove
from parlour.envs.core.game import Game, int_option
from parlour.envs.puzzles.solo import SoloPuzzle, grid_rows

#: difficulty -> (side of the lake, chance that a cell other than start and goal is a hole)
LEVELS = {1: (4, 0.15), 2: (5, 0.2), 3: (6, 0.2), 4: (7, 0.25), 5: (8, 0.25)}
#: Steps allowed per cell of the lake.
STEPS_PER_CELL = 4

MOVES = ["up", "down", "left", "right"]
STEPS = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}
#: The two directions at right angles to each move, where a slippery lake may send the player instead.
PERPENDICULAR = {"up": ("left", "right"), "down": ("left", "right"), "left": ("up", "down"), "right": ("up", "down")}
SYNONYMS = {"up": "up", "north": "up", "down": "down", "south": "down", "left": "left", "west": "left", "right": "right", "east": "right"}
MOVE_PATTERN = re.compile(r"\b(" + "|".join(SYNONYMS) + r")\b", re.IGNORECASE)

RULES = """You are {player}, crossing a frozen lake. Walk from the start S (top-left) to the goal G (bottom-right) without stepping into a hole H; F is safe frozen ice and @ marks where you stand.
Each move is up, down, left or right ("up" is towards the top row); you cannot walk off the lake.
{ice}
Stepping into a hole ends the game as a loss; you have {limit} steps at most.
Reply with one move: up, down, left or right."""

ICE = {
    False: "The ice is not slippery: you always go where you choose.",
    True: "The ice is slippery: you go the way you choose with chance 1/3, and with chance 1/3 each you slide to one side instead (at right angles to your move); a slide off the lake leaves you in place.",
}


def shift(size: int, cell: tuple[int, int], move: str) -> tuple[int, int]:
    """The cell a step ``move`` from ``cell`` leads to; ``cell`` itself if the step would leave the lake."""
    row, col = cell[0] + STEPS[move][0], cell[1] + STEPS[move][1]
    return (row, col) if 0 <= row < size and 0 <= col < size else cell


def outcomes(size: int, cell: tuple[int, int], move: str, slippery: bool) -> list[tuple[float, tuple[int, int]]]:
    """The rule of a move: ``(chance, cell)`` for every place it may lead; the game samples it, the solver plans on it."""
    if not slippery:
        return [(1.0, shift(size, cell, move))]
    return [(1 / 3, shift(size, cell, way)) for way in (move, *PERPENDICULAR[move])]


def safe_distances(holes: frozenset[tuple[int, int]], size: int, source: tuple[int, int]) -> dict[tuple[int, int], int]:
    """The fewest steps between ``source`` and each cell it can reach around the holes (cells with no way are left out).

    Every step can be walked back, so these are the distances both from and to ``source``.
    """
    distance = {source: 0}
    frontier = deque([source])
    while frontier:
        cell = frontier.popleft()
        for move in MOVES:
            nxt = shift(size, cell, move)
            if nxt not in distance and nxt not in holes:
                distance[nxt] = distance[cell] + 1
                frontier.append(nxt)
    return distance


def shortest_path(holes: frozenset[tuple[int, int]], size: int) -> int | None:
    """The fewest steps from the top-left corner to the bottom-right one avoiding holes, or ``None`` when there is no way."""
    return safe_distances(holes, size, (0, 0)).get((size - 1, size - 1))


class FrozenLake(SoloPuzzle, Game):
    """FrozenLake on a lake drawn from the seed with a safe path; see the module docstring for the rules and rewards."""

    name = "FrozenLake"
    description = (
        "Cross a generated frozen lake to the goal without falling into a hole, optionally on slippery ice; "
        "difficulty 1-5 (default 2) sets the lake's size (4 to 8) and its share of holes."
    )

    def __init__(self, *, difficulty: int = 2, slippery: bool = False):
        self.difficulty = int_option("difficulty", difficulty, 1, len(LEVELS))
        if not isinstance(slippery, bool):
            raise ValueError(f"slippery must be True or False, got {slippery!r}")
        self.slippery = slippery
        self.size, self.hole_chance = LEVELS[self.difficulty]
        self.max_steps = STEPS_PER_CELL * self.size * self.size
        self.players = ["player_0"]
        self.moves = list(MOVES)
        self.vector_size = 3 * self.size * self.size + 1
        self.holes: frozenset[tuple[int, int]] = frozenset()
        self.position = (0, 0)
        self.steps = 0
        self.shortest = 0

    def start(self, ctx: Context) -> None:
        """Draw holes until the goal can be reached, and put the player on the start."""
        goal = (self.size - 1, self.size - 1)
        while True:
            draws = ctx.rng.random((self.size, self.size)) < self.hole_chance
            holes = frozenset((r, c) for r in range(self.size) for c in range(self.size) if draws[r, c] and (r, c) not in ((0, 0), goal))
            shortest = shortest_path(holes, self.size)
            if shortest is not None:
                break
        self.holes, self.shortest = holes, shortest
        self.position = (0, 0)
        self.steps = 0

    def rules(self, player: str) -> str:
        """The rules, the ice and the step limit."""
        return RULES.format(player=player, ice=ICE[self.slippery], limit=self.max_steps)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The lake, the steps left and the legal moves."""
        return f"{self.map_text()}\nSteps left: {self.max_steps - self.steps}. Legal moves: {', '.join(legal or [])}."

    def legal_actions(self, player: str) -> list[int]:
        """The moves that stay on the lake."""
        return [i for i, move in enumerate(MOVES) if shift(self.size, self.position, move) != self.position]

    def parse(self, player: str, text: str) -> str:
        """The last direction named in the text (compass words accepted), if it stays on the lake."""
        found = MOVE_PATTERN.findall(text)
        if not found:
            raise InvalidMove("No move found. Reply with one of: up, down, left, right.")
        move = SYNONYMS[found[-1].lower()]
        if shift(self.size, self.position, move) == self.position:
            raise InvalidMove(f"You cannot move {move}: that leaves the lake. Legal moves: {', '.join(self.legal_moves(player))}.")
        return move

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Step (or slide); the goal wins, a hole or the step limit loses."""
        ((player, move),) = moves.items()
        intended = shift(self.size, self.position, move)
        options = outcomes(self.size, self.position, move, self.slippery)
        # A slippery lake's three outcomes are equally likely, so a uniform draw samples them.
        landed = options[int(ctx.rng.integers(len(options)))][1]
        self.position = landed
        self.steps += 1
        slid = "" if landed == intended else f" but slides to {self.cell_name(landed)}"
        ctx.tell(f"{player} moves {move}{slid}.", kind="move", sender=player)
        if landed == (self.size - 1, self.size - 1):
            self.solved(ctx, "reached the goal")
        elif landed in self.holes:
            self.failed(ctx, "fell into a hole")
        elif self.steps >= self.max_steps:
            self.failed(ctx, "the step limit ran out")

    def report(self, success: bool) -> dict[str, Any]:
        """The outcome details (see the module docstring)."""
        return {
            "difficulty": self.difficulty,
            "slippery": self.slippery,
            "success": success,
            "steps": self.steps,
            "max_steps": self.max_steps,
            "fell": self.position in self.holes,
            "shortest": self.shortest,
        }

    @staticmethod
    def cell_name(cell: tuple[int, int]) -> str:
        """A cell as ``row R, column C``, counted from 1."""
        return f"row {cell[0] + 1}, column {cell[1] + 1}"

    def view(self, player: str) -> dict[str, Any]:
        """The map rows, the player's cell (row, column from 0), the ice and the steps used and allowed."""
        return {
            "difficulty": self.difficulty,
            "size": self.size,
            "slippery": self.slippery,
            "map": self.map_rows(),
            "position": list(self.position),
            "steps": self.steps,
            "max_steps": self.max_steps,
        }

    def vector(self, player: str) -> np.ndarray:
        """Holes, goal and player planes, then the share of the step limit used."""
        cells = self.size * self.size
        values = np.zeros(self.vector_size, dtype=np.float32)
        for row, col in self.holes:
            values[row * self.size + col] = 1.0
        values[2 * cells - 1] = 1.0
        values[2 * cells + self.position[0] * self.size + self.position[1]] = 1.0
        values[-1] = self.steps / self.max_steps
        return values

    def symbol(self, row: int, col: int) -> str:
        """What the map shows of a cell: S, F, H, G, and @ for the player."""
        cell = (row, col)
        return (
            "@"
            if cell == self.position
            else "H"
            if cell in self.holes
            else "S"
            if cell == (0, 0)
            else "G"
            if cell == (self.size - 1, self.size - 1)
            else "F"
        )

    def map_rows(self) -> list[str]:
        """The lake, one string per row."""
        return grid_rows(self.size, self.symbol)

    def map_text(self) -> str:
        """The lake, one line per row."""
        return "\n".join(self.map_rows())

    def render(self) -> str:
        """The lake and the steps used."""
        return f"{self.map_text()}\nsteps {self.steps}/{self.max_steps}{', slippery' if self.slippery else ''}"
