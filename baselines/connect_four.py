"""Depth-limited alpha-beta ``minimax`` for ConnectFour.

The search runs on bitboards: column ``c`` holds bits ``c * (rows + 1)`` up to
``c * (rows + 1) + rows - 1``, bottom row first, and one always-empty bit on
top, so that shifting a board by one line step never wraps a line from one
column into the next. Positions at the depth limit are scored by counting, for
every window of ``x_in_row`` cells that only one player occupies, 10^(k-1) for
``k`` discs of that player: three discs with room for a fourth (a threat) are
worth far more than two, and central cells, which lie in the most windows,
count most.
"""

from __future__ import annotations

import functools
from typing import Any, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.seeded import SeededAgent
from parlour.envs.games.connect_four import DIRECTIONS, column_name


@functools.cache
def geometry(rows: int, columns: int, x_in_row: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...], int]:
    """For a board size: the line shifts, the window masks, the window weights, the centre-first column order, and the win score."""
    height = rows + 1
    shifts = (height, 1, height + 1, height - 1)  # horizontal, vertical, rising, falling: as DIRECTIONS
    windows = []
    for d_row, d_column, _ in DIRECTIONS:
        for row in range(rows):
            for column in range(columns):
                cells = [(row + k * d_row, column + k * d_column) for k in range(x_in_row)]
                if all(0 <= r < rows and 0 <= c < columns for r, c in cells):
                    windows.append(sum(1 << (c * height + r) for r, c in cells))
    weights = tuple([0] + [10 ** (k - 1) for k in range(1, x_in_row)])
    order = tuple(sorted(range(columns), key=lambda c: abs(2 * c - (columns - 1))))
    # Above any heuristic score, so that a forced win or loss always dominates.
    win = len(windows) * 10**x_in_row + 1
    return shifts, tuple(windows), weights, order, win


class Search:
    """Alpha-beta negamax over one board size; scores are from the view of the player to move."""

    def __init__(self, rows: int, columns: int, x_in_row: int):
        self.rows, self.columns, self.x_in_row = rows, columns, x_in_row
        self.height = rows + 1
        self.shifts, self.windows, self.weights, self.order, self.win = geometry(rows, columns, x_in_row)

    def has_line(self, discs: int) -> bool:
        """Whether ``discs`` contain ``x_in_row`` in a line."""
        for shift in self.shifts:
            line = discs
            for k in range(1, self.x_in_row):
                line &= discs >> (k * shift)
            if line:
                return True
        return False

    def evaluate(self, own: int, other: int) -> int:
        """Heuristic score of a position for the owner of ``own``."""
        weights = self.weights
        score = 0
        for window in self.windows:
            mine = own & window
            theirs = other & window
            if mine:
                if not theirs:
                    score += weights[mine.bit_count()]
            elif theirs:
                score -= weights[theirs.bit_count()]
        return score

    def negamax(self, own: int, other: int, heights: list[int], depth: int, alpha: float, beta: float) -> float:
        """Fail-soft alpha-beta value for the player to move, who owns ``own``; ``depth`` plies are left."""
        legal = [c for c in self.order if heights[c] < self.rows]
        if not legal:
            return 0
        if depth == 0:
            return self.evaluate(own, other)
        for column in legal:
            if self.has_line(own | 1 << (column * self.height + heights[column])):
                return self.win + depth  # sooner wins score higher
        best = -float("inf")
        for column in legal:
            bit = 1 << (column * self.height + heights[column])
            heights[column] += 1
            score = -self.negamax(other, own | bit, heights, depth - 1, -beta, -alpha)
            heights[column] -= 1
            if score > best:
                best = score
                alpha = max(alpha, score)
                if alpha >= beta:
                    break
        return best

    def best_columns(self, own: int, other: int, heights: list[int], depth: int) -> list[int]:
        """Every legal column whose ``depth``-ply value is the best one."""
        legal = [c for c in self.order if heights[c] < self.rows]
        winning = [c for c in legal if self.has_line(own | 1 << (c * self.height + heights[c]))]
        if winning:
            return winning
        best = -float("inf")
        chosen: list[int] = []
        for column in legal:
            bit = 1 << (column * self.height + heights[column])
            heights[column] += 1
            # Just below the best so far: an equal score comes back exact, so ties are all found.
            score = -self.negamax(other, own | bit, heights, depth - 1, -float("inf"), -(best - 1))
            heights[column] -= 1
            if score > best:
                best, chosen = score, [column]
            elif score == best:
                chosen.append(column)
        return chosen


def bitboards(board: list[list[int]], mark: int) -> tuple[int, int, list[int]]:
    """The bitboards of ``mark`` and of its opponent, and the column heights, of a view's board."""
    rows, columns = len(board), len(board[0])
    own = other = 0
    heights = [0] * columns
    for row in range(rows):
        for column in range(columns):
            cell = board[row][column]
            if cell == -1:
                continue
            bit = 1 << (column * (rows + 1) + row)
            if cell == mark:
                own |= bit
            else:
                other |= bit
            heights[column] = row + 1
    return own, other, heights


class MinimaxAgent(SeededAgent):
    """Searches ``depth`` plies with alpha-beta and plays a best column, breaking ties at random."""

    name = "minimax"

    def __init__(self, env_id: str | None = None, seed: int | None = None, depth: int = 4):
        if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
            raise ValueError(f"depth must be a positive int, got {depth!r}")
        self.depth = depth
        super().__init__(env_id, seed)

    def act(self, observation: Mapping[str, Any]) -> str:
        """The chosen column for the player to move."""
        view = observation["view"]
        search = Search(view["rows"], view["columns"], view["x_in_row"])
        own, other, heights = bitboards(view["board"], view["mark"])
        choices = search.best_columns(own, other, heights, self.depth)
        return column_name(choices[int(self.rng.integers(len(choices)))])


register_scripted("minimax", "parlour/ConnectFour-v0", MinimaxAgent)
