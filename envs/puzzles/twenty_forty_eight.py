"""2048 with OpenSpiel's ``2048`` rules: slide the tiles of a 4x4 grid, equal tiles merge, build the ``max_tile``.

One player, ``player_0``. The grid starts with two tiles drawn from the
seed; each is placed on an empty cell chosen uniformly and is a 2 nine times
in ten, else a 4. A move slides every tile as far as it goes ``up``,
``right``, ``down`` or ``left``; two equal tiles that meet merge into one of
twice the value (a tile merges at most once a move; along a line, the pair
nearest the edge the tiles move towards merges first). Only a move that
changes the grid is legal. After each move one new tile appears, drawn as at
the start (OpenSpiel's chance nodes, drawn here from the episode's generator).

The game ends when a tile reaches ``max_tile`` (default 2048; a power of two
from 8 to 131072, the largest tile a 4x4 grid can hold: OpenSpiel's option of
the same name), when the grid is full and no two neighbouring tiles are equal
(no move is left), or at OpenSpiel's horizon of ``4 * max_tile`` actions,
chance ones included: after move ``2 * max_tile - 1`` and its new tile.

Moves are ``up``, ``right``, ``down`` and ``left`` (``Discrete`` 0-3,
OpenSpiel's actions; the last one written counts). Rewards, OpenSpiel's: each
move pays the sum of the tiles its merges made, so the return is the score
of the classic game. A player that exceeds the invalid-action allowance has
its score taken back and gets -1 (a return of -1). The player wins when it
reaches ``max_tile``. Outcome details: ``success``, ``score``, ``highest``
(the largest tile), ``moves`` and ``max_tile``.

Vector observation: for each cell, row by row, a one-hot of its tile's
exponent (0 for an empty cell, 1 for a 2, ... up to ``log2(max_tile)``):
``16 * (log2(max_tile) + 1)`` values, OpenSpiel's observation tensor (the
tile values) one-hot encoded.

Version history: v0, first release.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.game import Game

SIZE = 4
#: The moves, in OpenSpiel's action order.
DIRECTIONS = ("up", "right", "down", "left")
#: The largest tile a 4x4 grid can hold (a 4 spawned beside 4, 8, ..., 65536 merging all the way up).
LARGEST = 2**17
#: How often a new tile is a 4 rather than a 2.
FOUR_CHANCE = 0.1


def _lines(direction: int) -> tuple[tuple[int, ...], ...]:
    """The grid's four lines for a move in ``direction``, each listing its cells from the edge the tiles move towards."""
    span = range(SIZE)
    if direction == 0:  # up: each column, top first
        return tuple(tuple(r * SIZE + c for r in span) for c in span)
    if direction == 1:  # right: each row, rightmost first
        return tuple(tuple(r * SIZE + c for c in reversed(span)) for r in span)
    if direction == 2:  # down: each column, bottom first
        return tuple(tuple(r * SIZE + c for r in reversed(span)) for c in span)
    return tuple(tuple(r * SIZE + c for c in span) for r in span)  # left: each row, leftmost first


#: The lines of each direction, in action order.
LINES = tuple(_lines(direction) for direction in range(len(DIRECTIONS)))


def slide(board: tuple[int, ...] | list[int], direction: int) -> tuple[tuple[int, ...], int]:
    """The grid after a move in ``direction`` (before any new tile) and the score it makes.

    ``board`` holds the tile values row by row, 0 for an empty cell. Along
    each line the tiles close up towards the edge they move to, and each pair
    of equal neighbours merges once, the pair nearest that edge first.
    """
    result = [0] * (SIZE * SIZE)
    score = 0
    for line in LINES[direction]:
        tiles = [board[cell] for cell in line if board[cell]]
        slot = 0
        i = 0
        while i < len(tiles):
            if i + 1 < len(tiles) and tiles[i] == tiles[i + 1]:
                merged = 2 * tiles[i]
                score += merged
                result[line[slot]] = merged
                i += 2
            else:
                result[line[slot]] = tiles[i]
                i += 1
            slot += 1
    return tuple(result), score


def stuck(board: tuple[int, ...] | list[int]) -> bool:
    """Whether no move is left: every cell holds a tile and no two neighbours (in a row or a column) are equal."""
    if 0 in board:
        return False
    for r in range(SIZE):
        for c in range(SIZE):
            tile = board[r * SIZE + c]
            if (c + 1 < SIZE and board[r * SIZE + c + 1] == tile) or (r + 1 < SIZE and board[(r + 1) * SIZE + c] == tile):
                return False
    return True


@functools.cache
def exponents(max_tile: int) -> dict[int, int]:
    """Each tile value up to ``max_tile`` (0 for empty) to its exponent, for the one-hot vector."""
    return {0: 0, **{2**k: k for k in range(1, max_tile.bit_length())}}


RULES = """You are {player}, playing 2048 on a 4x4 grid.
A move slides every tile as far as it goes up, right, down or left. Two tiles of the same value that meet merge into one tile of their sum (a tile merges at most once per move), and the value of every merged tile is added to your score. A move that changes nothing is not allowed.
After every move a new tile appears on a random empty cell: a 2 nine times in ten, else a 4.
The game ends when a tile reaches {max_tile} (you win), when the grid is full and no move can merge anything, or after {limit} moves. Your reward is your score.
Reply with one move: up, right, down or left."""


class TwentyFortyEight(Game):
    """2048 on a 4x4 grid, as OpenSpiel's ``2048``; see the module docstring for the rules and rewards.

    ``board`` holds the 16 tile values row by row (0 empty), ``score`` the
    merges' total so far, ``moves_made`` the moves played and ``spawned`` the
    ``(cell, value)`` tiles the last start or move added.

    Version history: v0, first release.
    """

    name = "TwentyFortyEight"
    description = (
        "2048: slide a 4x4 grid's tiles, equal tiles merge, a new 2 or 4 appears after each move; reward = score "
        "(OpenSpiel's 2048; difficulty: option max_tile, the tile that ends it, a power of two 8-131072, default 2048)."
    )
    category = "puzzle"
    zero_sum = False
    fixed_rules = True
    reference_agents = ("corner", "random")

    def __init__(self, *, max_tile: int = 2048):
        if not isinstance(max_tile, int) or isinstance(max_tile, bool) or not 8 <= max_tile <= LARGEST or max_tile & (max_tile - 1):
            raise ValueError(f"max_tile must be a power of two from 8 to {LARGEST}, got {max_tile!r}")
        self.max_tile = max_tile
        #: The most moves a game lasts: OpenSpiel's horizon of 4 * max_tile actions counts the two opening tiles and one tile a move.
        self.max_moves = 2 * max_tile - 1
        self.players = ["player_0"]
        self.moves = list(DIRECTIONS)
        self._exponents = exponents(max_tile)
        self.vector_size = SIZE * SIZE * (max_tile.bit_length())
        self.board: tuple[int, ...] = (0,) * (SIZE * SIZE)
        self.score = 0
        self.moves_made = 0
        self.spawned: tuple[tuple[int, int], ...] = ()

    def spawn(self, ctx: Context) -> tuple[int, int]:
        """Put a new tile on an empty cell drawn uniformly: a 2, or a 4 one time in ten; returns ``(cell, value)``."""
        empty = [cell for cell, tile in enumerate(self.board) if tile == 0]
        cell = empty[int(ctx.rng.integers(len(empty)))]
        value = 4 if ctx.rng.random() < FOUR_CHANCE else 2
        board = list(self.board)
        board[cell] = value
        self.board = tuple(board)
        return cell, value

    def start(self, ctx: Context) -> None:
        """An empty grid with two new tiles."""
        self.board = (0,) * (SIZE * SIZE)
        self.score = 0
        self.moves_made = 0
        first = self.spawn(ctx)
        self.spawned = (first, self.spawn(ctx))

    def to_move(self) -> list[str]:
        """The one player."""
        return self.players

    def rules(self, player: str) -> str:
        """The rules, the winning tile and the move limit."""
        return RULES.format(player=player, max_tile=self.max_tile, limit=self.max_moves)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The grid, the score, where the new tiles appeared and the legal moves."""
        new = "; ".join(f"a {value} appeared at row {cell // SIZE + 1}, column {cell % SIZE + 1}" for cell, value in self.spawned)
        return f"{self.grid_text()}\nScore: {self.score}. New: {new}. Legal moves: {', '.join(legal or [])}."

    def legal_actions(self, player: str) -> list[int]:
        """The directions whose move changes the grid."""
        return [direction for direction in range(len(DIRECTIONS)) if slide(self.board, direction)[0] != self.board]

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Slide and merge, pay the merges; end at the winning tile, else add a tile and end when stuck or at the horizon."""
        ((player, move),) = moves.items()
        self.board, gained = slide(self.board, self.move_index(move))
        self.score += gained
        self.moves_made += 1
        ctx.reward(player, gained)
        if self.max_tile in self.board:
            ctx.tell(f"{player} moves {move}, +{gained}: score {self.score}.", kind="move", sender=player)
            ctx.finish(winners=[player], reason=f"{player} made the {self.max_tile} tile", details=self.report())
            return
        cell, value = self.spawn(ctx)
        self.spawned = ((cell, value),)
        ctx.tell(
            f"{player} moves {move}, +{gained}: score {self.score}. A {value} appears at row {cell // SIZE + 1}, column {cell % SIZE + 1}.",
            kind="move",
            sender=player,
        )
        if stuck(self.board):
            ctx.finish(reason="the grid is full and no move is left", details=self.report())
        elif self.moves_made >= self.max_moves:
            ctx.finish(reason=f"the move limit of {self.max_moves} ran out", details=self.report())

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """The score is taken back and the player gets -1."""
        ctx.finish({player: -1.0 - self.score}, reason=reason, details=self.report())

    def report(self) -> dict[str, Any]:
        """The outcome details (see the module docstring)."""
        return {
            "success": self.max_tile in self.board,
            "score": self.score,
            "highest": max(self.board),
            "moves": self.moves_made,
            "max_tile": self.max_tile,
        }

    def view(self, player: str) -> dict[str, Any]:
        """The grid (rows from the top, 0 empty), the score, the moves played and allowed, the new tiles and the winning tile."""
        rows = [list(self.board[r * SIZE : (r + 1) * SIZE]) for r in range(SIZE)]
        return {
            "board": rows,
            "score": self.score,
            "moves": self.moves_made,
            "max_moves": self.max_moves,
            "spawned": [list(tile) for tile in self.spawned],
            "max_tile": self.max_tile,
        }

    def vector(self, player: str) -> np.ndarray:
        """A one-hot of each cell's tile exponent, row by row."""
        width = self.max_tile.bit_length()
        values = np.zeros((SIZE * SIZE, width), dtype=np.float32)
        values[np.arange(SIZE * SIZE), [self._exponents[tile] for tile in self.board]] = 1.0
        return values.reshape(-1)

    def grid_text(self) -> str:
        """The grid, one row a line, ``.`` for an empty cell."""
        width = len(str(max(self.board)))
        return "\n".join(" ".join((str(tile) if tile else ".").rjust(width) for tile in self.board[r * SIZE : (r + 1) * SIZE]) for r in range(SIZE))

    def render(self) -> str:
        """The grid, the score and the moves played."""
        return f"{self.grid_text()}\nscore {self.score}, moves {self.moves_made}/{self.max_moves}"
