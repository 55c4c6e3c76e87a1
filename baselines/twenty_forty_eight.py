"""``corner`` for 2048: the greedy corner strategy, one move ahead with the game's own :func:`slide`.

Each legal move is scored by the grid it leaves (before the new tile): the
sum of every tile times a weight that falls by a factor of 4 along a snake
from the bottom-left corner (the bottom row left to right, the row above
right to left, and so on). The largest tiles are so pulled into that corner
and the rest lined up behind them in falling order, where they merge in
turn; a move that would pull the largest tile out of the corner costs far
more than any merge elsewhere gains. Ties are broken at random.

Version history: v0, first release.
"""

from __future__ import annotations

from typing import Any, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.seeded import SeededAgent
from parlour.envs.puzzles.twenty_forty_eight import DIRECTIONS, SIZE, slide

#: The cells from the bottom-left corner along the snake, the most valuable first.
SNAKE = (12, 13, 14, 15, 11, 10, 9, 8, 4, 5, 6, 7, 3, 2, 1, 0)
#: Each cell's weight: 4 ** (15 - its place on the snake).
WEIGHTS = tuple(4 ** (SIZE * SIZE - 1 - SNAKE.index(cell)) for cell in range(SIZE * SIZE))


def value(board: tuple[int, ...]) -> int:
    """The snake-weighted sum of the tiles of ``board`` (row by row, 0 empty)."""
    return sum(tile * weight for tile, weight in zip(board, WEIGHTS))


class Corner(SeededAgent):
    """Plays the legal move whose grid has the highest :func:`value` (ties at random).

    Version history: v0, first release.
    """

    name = "corner"

    def act(self, observation: Mapping[str, Any]) -> str:
        """The best move for the grid in ``observation["view"]`` (an episode that goes on always has a legal move)."""
        board = tuple(tile for row in observation["view"]["board"] for tile in row)
        scores = {}
        for direction in range(len(DIRECTIONS)):
            after = slide(board, direction)[0]
            if after != board:
                scores[direction] = value(after)
        best = max(scores.values())
        choices = [direction for direction, score in scores.items() if score == best]
        return DIRECTIONS[choices[int(self.rng.integers(len(choices)))]]


register_scripted("corner", "parlour/TwentyFortyEight-v0", Corner)
