"""Clobber, with OpenSpiel's ``clobber`` rules.

The board of ``rows`` rows and ``columns`` columns (default 5x6, OpenSpiel's;
each 2-26, its options of the same names) starts full, in a checkerboard of
``o`` stones (``player_0``, moves first) and ``x`` stones (``player_1``), with
``o`` on a1, the bottom left cell. A move takes one of the mover's stones one
cell up, down, left or right onto an adjacent opponent stone, which is
removed ("clobbered"); a stone never moves to an empty cell. Every move
removes a stone, so a game lasts at most ``rows * columns - 1`` moves. The
player to move who has no move loses (then neither side has one: moves exist
exactly where an ``o`` and an ``x`` are neighbours), so the last player to
move wins; there are no draws.

Moves name the stone's cell and the cell it clobbers, as OpenSpiel writes
them: ``a5b5`` (column letter, row number; row 1 is the bottom row). The
``Discrete`` actions are every on-board ``(cell, direction)`` pair in
OpenSpiel's order (cells row-major from the top row, then the directions up,
right, down, left), leaving out the moves off the board; OpenSpiel's action
for a move is ``4 * cell + direction``. Vector observation: OpenSpiel's
observation tensor, ``3 * rows * columns`` values: the player's own stones,
the opponent's, then the empty cells, each row-major from the top row.

Rewards (zero-sum): +1 to the winner and -1 to the loser at the last move. A
player who exceeds the invalid-action allowance gets -1 and the opponent +1.

Batched: :class:`ClobberBatch` plays N boards at once for the batched vector
face (``gymnasium.make_vec(..., obs_mode="vector")``, see
:mod:`parlour.envs.core.vector`).

Version history: v0, first release.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.game import Game, int_option, lettered_board
from parlour.envs.core.vector import GameBatch, Streams
from parlour.envs.games.boards import board_from_rows, board_rows, cell_planes, step_moves, stone_planes

MARKS = ("o", "x")
#: Row and column step of each direction, in OpenSpiel's order: up, right, down, left.
DIRECTIONS = ((-1, 0), (0, 1), (1, 0), (0, -1))
MAX_SIDE = 26

RULES = """You are playing Clobber as {mark} ({player}); {first}.
The board has {rows} rows and {columns} columns and starts full: a checkerboard of o and x stones, o on a1 (the bottom left cell). You play the {mark} stones.
On your turn move one of your stones one cell up, down, left or right onto an adjacent stone of your opponent, which is removed. A stone may only move by capturing: never onto an empty cell, never diagonally.
If you have no move on your turn, you lose: the last player to move wins.
Cells are named by column letter and row number, row 1 at the bottom. A move names your stone's cell then the cell it captures, for example: {example}"""


@functools.cache
def layout(rows: int, columns: int) -> tuple[tuple[str, ...], tuple[tuple[int, int], ...], tuple[tuple[tuple[int, int], ...], ...]]:
    """What a board size fixes, worked out once per size: the move names, each move's ``(source, destination)``
    cells, and per cell its on-board moves as ``(destination, index)``: in Clobber
    every direction moves alike, so the direction is left out."""
    names, ends, steps = step_moves(rows, columns, DIRECTIONS)
    return names, ends, tuple(tuple((destination, index) for _, destination, index in here) for here in steps)


class ClobberBatch(GameBatch):
    """Clobber's rules on N boards at once (see :class:`parlour.envs.core.vector.GameBatch`).

    ``board`` is ``(N, cells)`` int8 as in :class:`Clobber`. Each move's source
    and destination cells are tabulated once; the legal moves of the seat to
    act, ``moves_of`` ``(N, moves)``, are worked out once per move, since the
    game's end (no move for the next seat) needs them anyway.
    """

    def __init__(self, game: Clobber, n: int):
        super().__init__(game, n)
        ends = np.array(game._ends, dtype=np.int64)
        self.source, self.destination = ends[:, 0], ends[:, 1]
        self.opening = np.array(game.opening(), dtype=np.int8)
        self.board = np.zeros((n, len(self.opening)), dtype=np.int8)
        self.moves_of = np.zeros((n, len(ends)), dtype=bool)
        self._board = self.board.reshape(-1)
        self._opening_moves = self.moves_for(self.opening[None, :], np.zeros(1, dtype=np.int64))[0]

    def moves_for(self, boards: np.ndarray, marks: np.ndarray) -> np.ndarray:
        """``(k, moves)``: each stone of ``marks[j]`` onto each neighbouring opponent stone of ``boards[j]``."""
        marks = marks[:, None]
        return (boards[:, self.source] == marks) & (boards[:, self.destination] == 1 - marks)

    def reset(self, rows: np.ndarray, rng: Streams) -> None:
        """The full checkerboard, ``o`` to move."""
        self.board[rows] = self.opening
        self.moves_of[rows] = self._opening_moves
        self.turn[rows] = 0

    def legal(self, rows: np.ndarray) -> np.ndarray:
        """Each of the mover's stones onto each neighbouring opponent stone."""
        return np.take(self.moves_of, rows, axis=0)

    def step(self, rows: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Clobber; the game ends, the mover winning, when the next seat has no move."""
        marks = self.turn[rows]
        base = rows * self.board.shape[1]
        self._board[base + self.source[actions]] = -1
        self._board[base + self.destination[actions]] = marks
        following = self.moves_for(np.take(self.board, rows, axis=0), 1 - marks)
        self.moves_of[rows] = following
        self.turn[rows] = 1 - marks
        won = np.logical_not(following.any(axis=1))
        return self.wins(marks, won), won

    def vector(self, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """Own stones, opponent stones, empty cells, as :meth:`Clobber.vector`."""
        return cell_planes(np.take(self.board, rows, axis=0), seats, empty=True)


class Clobber(Game):
    """Clobber for two players; see the module docstring for moves and rewards.

    ``board`` holds one entry per cell, row-major from the top row (-1 empty,
    0 an ``o`` stone, 1 an ``x`` stone); ``turn`` is the seat to move.
    """

    name = "Clobber"
    reference_agents = ("minimax", "random")
    mutable_state = ("board",)
    description = (
        "Move a stone onto an adjacent enemy stone to capture it; no move on your turn loses; 5x6 by default "
        "(difficulty: options rows and columns, 2-26, as OpenSpiel's clobber)."
    )
    zero_sum = True
    fixed_rules = True
    batch = ClobberBatch

    def __init__(self, *, rows: int = 5, columns: int = 6):
        self.rows = int_option("rows", rows, 2, MAX_SIDE)
        self.columns = int_option("columns", columns, 2, MAX_SIDE)
        self.players = ["player_0", "player_1"]
        names, self._ends, self._steps = layout(self.rows, self.columns)
        self.moves = list(names)
        self.vector_size = 3 * self.rows * self.columns
        self.board = self.opening()
        self.turn = 0

    def opening(self) -> list[int]:
        """The full starting board: ``o`` wherever the cell's row counted from the bottom plus its column is even."""
        rows, columns = self.rows, self.columns
        return [(rows - 1 - cell // columns + cell % columns) % 2 for cell in range(rows * columns)]

    @classmethod
    def from_view(cls, view: dict[str, Any]) -> Clobber:
        """A game in the position a player's :meth:`view` shows (nothing is hidden), for lookahead on ``clone()`` copies."""
        game = cls(rows=view["rows"], columns=view["columns"])
        game.board = board_from_rows(view["board"], game.rows, game.columns)
        game.turn = view["to_move"]
        return game

    def start(self, ctx: Context) -> None:
        """The full checkerboard, ``o`` to move."""
        self.board = self.opening()
        self.turn = 0

    def rules(self, player: str) -> str:
        """Rules, the board size and the player's stones."""
        seat = self.players.index(player)
        first = "you move first" if seat == 0 else "your opponent moves first"
        # a1 holds o and b1 holds x, so each side's first legal move along the bottom row makes the example.
        example = "a1b1" if seat == 0 else "b1a1"
        return RULES.format(mark=MARKS[seat], player=player, first=first, rows=self.rows, columns=self.columns, example=example)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The board, the stone counts and the legal moves."""
        seat = self.players.index(player)
        counts = f"o {self.board.count(0)}, x {self.board.count(1)}"
        return f"Board:\n{self.board_text()}\nStones: {counts}. You are {MARKS[seat]}. Legal moves: {', '.join(legal or [])}."

    def legal_actions(self, player: str) -> list[int]:
        """Each of the player's stones onto each neighbouring opponent stone."""
        mark = self.players.index(player)
        board = self.board
        return [
            index for cell, steps in enumerate(self._steps) if board[cell] == mark for destination, index in steps if board[destination] == 1 - mark
        ]

    def has_move(self, mark: int) -> bool:
        """Whether a stone of ``mark`` has an opponent stone beside it."""
        board = self.board
        return any(board[destination] == 1 - mark for cell, steps in enumerate(self._steps) if board[cell] == mark for destination, _ in steps)

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Clobber the neighbouring stone; the game ends when the next player has no move."""
        ((player, move),) = moves.items()
        mark = self.turn
        source, destination = self._ends[self.move_index(move)]
        self.board[source] = -1
        self.board[destination] = mark
        ctx.tell(f"{player} ({MARKS[mark]}) plays {move}.", kind="move", sender=player)
        self.turn = 1 - mark
        if not self.has_move(self.turn):
            opponent = self.players[self.turn]
            ctx.finish({player: 1.0, opponent: -1.0}, winners=[player], reason=f"{opponent} has no move left")

    def view(self, player: str) -> dict:
        """The board (rows from the top; -1 empty, 0 ``o``, 1 ``x``), the player's mark, whose turn it is and the size."""
        board = board_rows(self.board, self.rows, self.columns)
        return {"board": board, "mark": self.players.index(player), "to_move": self.turn, "rows": self.rows, "columns": self.columns}

    def vector(self, player: str) -> np.ndarray:
        """Own stones, opponent stones, empty cells, each row-major from the top row (OpenSpiel's tensor)."""
        return stone_planes(self.board, self.players.index(player), empty=True)

    def board_text(self) -> str:
        """The board, top row first, with row numbers and column letters."""
        return lettered_board(self.board, self.rows, self.columns, {-1: ".", 0: "o", 1: "x"})

    def render(self) -> str:
        """The board."""
        return self.board_text()
