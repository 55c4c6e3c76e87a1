"""Breakthrough.

Players ``player_0`` (B, black, moves first) and ``player_1`` (W, white) each
start with two full rows of pieces (one row on boards of fewer than 6 rows,
as in OpenSpiel) on their own side of a board of ``rows`` rows and
``columns`` columns (default 6x6; OpenSpiel's ``breakthrough`` options of the
same names, whose default is 8x8). Black starts on top and moves down, white
at the bottom and moves up. A piece moves one
cell forward, straight or diagonally, to an empty cell; it captures only
diagonally forward, onto an opponent's piece. The first player to bring a
piece to the far row, or to capture every opponent piece, wins. (A side
with pieces always has a move: its most advanced piece can always step
diagonally, or capture.)

Moves name the piece's cell and the cell it moves to: ``c5c4``, ``c5d4``
(column letter, row number; row 1 is the bottom row, white's home). A capture
is a diagonal move onto an opponent's piece, written the same way. The
``Discrete`` actions are every on-board ``(cell, direction)`` pair in
OpenSpiel's order (cell row-major from the top, then its six directions:
three down, three up, each left, straight, right), leaving out the moves off
the board; OpenSpiel's action for a move is ``2 * (6 * cell + direction) +
capture``. Vector observation: ``2 * rows * columns`` values, the player's
own pieces then the opponent's, row-major from the top row.

Rewards (zero-sum): +1 to the winner and -1 to the loser at the last move (no
draws). A player who exceeds the invalid-action allowance gets -1 and the
opponent +1.

Batched: :class:`BreakthroughBatch` plays N boards at once for the batched
vector face (``gymnasium.make_vec(..., obs_mode="vector")``, see
:mod:`parlour.envs.core.vector`).

Version history: v0, first release.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.game import Game, int_option, lettered_board
from parlour.envs.core.vector import GameBatch, Streams
from parlour.envs.games.boards import board_from_rows, board_rows, cell_planes, step_moves, stone_planes

MARKS = ("B", "W")
COLOURS = ("black", "white")
#: Row and column step of each direction, in OpenSpiel's order: black's three (down), then white's three (up).
DIRECTIONS = ((1, -1), (1, 0), (1, 1), (-1, -1), (-1, 0), (-1, 1))
MAX_SIDE = 26

RULES = """You are playing Breakthrough as {mark} ({colour}, {player}); {first}.
The board has {rows} rows and {columns} columns; each player starts with {home} of pieces. Black (B) starts at the top and moves down; white (W) starts at the bottom and moves up. You are {colour}: you move {direction}.
On your turn move one of your pieces one cell forward, straight or diagonally, to an empty cell. A piece captures only by moving diagonally forward onto an opponent's piece, which is removed. Pieces never move backwards or sideways.
You win by bringing a piece to the far row (row {goal}) or by capturing all of your opponent's pieces.
Cells are named by column letter and row number, row 1 at the bottom. A move names the piece's cell then its destination, for example: {example}"""


class BreakthroughBatch(GameBatch):
    """Breakthrough's rules on N boards at once (see :class:`parlour.envs.core.vector.GameBatch`).

    ``board`` is ``(N, cells)`` int8 and ``pieces`` ``(N, 2)`` as in
    :class:`Breakthrough`. The moves are tabulated once, each move's source and
    destination cell and per seat whether it is one of that seat's forward
    moves and whether it may capture, so that the legal moves of k boards are
    a few ``(k, moves)`` comparisons of the cells gathered at both ends.
    """

    def __init__(self, game: Breakthrough, n: int):
        super().__init__(game, n)
        ends = np.array(game._ends, dtype=np.int64)
        self.source, self.destination = ends[:, 0], ends[:, 1]
        self.columns = game.columns
        direction = np.empty(len(ends), dtype=np.int64)
        for steps in game._steps:
            for d, _, index in steps:
                direction[index] = d
        # Black's directions are the first three, white's the last three; the middle one of each goes straight.
        self.forward = np.stack([direction < 3, direction >= 3])
        self.diagonal = direction % 3 != 1
        #: The row each seat wins on reaching: the far row from its home.
        self.goal_row = np.array([game.rows - 1, 0])
        self.opening = np.array(game.opening(), dtype=np.int8)
        self.home = game.home_rows * game.columns
        self.board = np.zeros((n, len(self.opening)), dtype=np.int8)
        self.pieces = np.zeros((n, 2), dtype=np.int64)
        self._board = self.board.reshape(-1)
        self._pieces = self.pieces.reshape(-1)

    def reset(self, rows: np.ndarray, rng: Streams) -> None:
        """The opening position, black to move."""
        self.board[rows] = self.opening
        self.pieces[rows] = self.home
        self.turn[rows] = 0

    def legal(self, rows: np.ndarray) -> np.ndarray:
        """Forward moves to empty cells, and diagonal forward moves onto opponent pieces."""
        boards = np.take(self.board, rows, axis=0)
        marks = self.turn[rows][:, None]
        target = boards[:, self.destination]
        return (boards[:, self.source] == marks) & self.forward[marks[:, 0]] & ((target == -1) | ((target == 1 - marks) & self.diagonal))

    def step(self, rows: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Move, capturing what the piece lands on; the far row or the last capture wins."""
        marks = self.turn[rows]
        base = rows * self.board.shape[1]
        destination = self.destination[actions]
        captured = self._board[base + destination] == 1 - marks
        self._board[base + self.source[actions]] = -1
        self._board[base + destination] = marks
        left = 2 * rows + 1 - marks
        self._pieces[left] -= captured
        won = (destination // self.columns == self.goal_row[marks]) | (self._pieces[left] == 0)
        self.turn[rows] = 1 - marks
        return self.wins(marks, won), won

    def vector(self, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """Own pieces then opponent pieces, row-major from the top row, as :meth:`Breakthrough.vector`."""
        return cell_planes(np.take(self.board, rows, axis=0), seats)


class Breakthrough(Game):
    """Breakthrough for two players; see the module docstring for moves and rewards.

    ``board`` holds one entry per cell, row-major from the top row (-1 empty,
    0 black, 1 white); ``pieces`` counts each side's pieces.
    """

    name = "Breakthrough"
    reference_agents = ("minimax", "random")
    mutable_state = ("board", "pieces")
    description = (
        "Race a piece to the far row, capturing diagonally; 6x6 by default "
        "(difficulty: options rows, 4-26, and columns, 2-26, as OpenSpiel's breakthrough)."
    )
    zero_sum = True
    fixed_rules = True
    batch = BreakthroughBatch

    def __init__(self, *, rows: int = 6, columns: int = 6):
        int_option("rows", rows, 4, MAX_SIDE)
        int_option("columns", columns, 2, MAX_SIDE)
        self.rows, self.columns = rows, columns
        self.players = ["player_0", "player_1"]
        names, self._ends, self._steps = step_moves(rows, columns, DIRECTIONS)
        self.moves = list(names)
        self.vector_size = 2 * rows * columns
        self.board = self.opening()
        self.pieces = [self.home_rows * columns] * 2
        self.turn = 0

    @property
    def home_rows(self) -> int:
        """Rows of pieces each side starts with: two, or one on boards of fewer than 6 rows (OpenSpiel's rule)."""
        return 2 if self.rows >= 6 else 1

    def opening(self) -> list[int]:
        """The starting board: black on its home rows at the top, white on its home rows at the bottom."""
        side = self.home_rows * self.columns
        return [0] * side + [-1] * (self.rows * self.columns - 2 * side) + [1] * side

    @classmethod
    def from_view(cls, view: dict[str, Any]) -> Breakthrough:
        """A game in the position a player's :meth:`view` shows (nothing is hidden), for lookahead on ``clone()`` copies."""
        game = cls(rows=view["rows"], columns=view["columns"])
        game.board = board_from_rows(view["board"], game.rows, game.columns)
        game.pieces = [game.board.count(0), game.board.count(1)]
        game.turn = view["to_move"]
        return game

    def start(self, ctx: Context) -> None:
        """The opening position, black to move."""
        self.board = self.opening()
        self.pieces = [self.home_rows * self.columns] * 2
        self.turn = 0

    def rules(self, player: str) -> str:
        """Rules, the board size and the player's side."""
        index = self.players.index(player)
        first = "you move first" if index == 0 else "your opponent moves first"
        column = chr(ord("a") + self.columns // 2)
        if index == 0:
            front = self.rows - self.home_rows + 1
            example, direction, goal = f"{column}{front}{column}{front - 1}", "down", 1
        else:
            front = self.home_rows
            example, direction, goal = f"{column}{front}{column}{front + 1}", "up", self.rows
        return RULES.format(
            mark=MARKS[index],
            colour=COLOURS[index],
            player=player,
            first=first,
            rows=self.rows,
            columns=self.columns,
            home="two full rows" if self.home_rows == 2 else "one full row",
            direction=direction,
            goal=goal,
            example=example,
        )

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The board, the piece counts and the legal moves."""
        me = self.players.index(player)
        return (
            f"Board:\n{self.board_text()}\nPieces: B {self.pieces[0]}, W {self.pieces[1]}. "
            f"You are {MARKS[me]}, moving {'down' if me == 0 else 'up'}. Legal moves: {', '.join(legal or [])}."
        )

    def legal_actions(self, player: str) -> list[int]:
        """Forward moves to empty cells, and diagonal forward moves onto opponent pieces."""
        mark = self.players.index(player)
        board = self.board
        # Black's directions are the first three, white's the last three.
        low = 0 if mark == 0 else 3
        legal = []
        for cell, steps in enumerate(self._steps):
            if board[cell] != mark:
                continue
            for direction, destination, index in steps:
                if low <= direction < low + 3:
                    target = board[destination]
                    if target == -1 or (target == 1 - mark and direction != low + 1):
                        legal.append(index)
        return legal

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Move the piece, capturing what it lands on; end the game on the far row or the last capture."""
        ((player, move),) = moves.items()
        mark = self.turn
        source, destination = self._ends[self.move_index(move)]
        captured = self.board[destination] == 1 - mark
        self.board[source] = -1
        self.board[destination] = mark
        if captured:
            self.pieces[1 - mark] -= 1
        ctx.tell(f"{player} ({MARKS[mark]}) plays {move}{', capturing' if captured else ''}.", kind="move", sender=player)
        self.turn = 1 - mark
        opponent = self.players[self.turn]
        goal_row = self.rows - 1 if mark == 0 else 0
        if destination // self.columns == goal_row:
            reason = f"{player} reached the far row"
        elif self.pieces[1 - mark] == 0:
            reason = f"{player} captured every opposing piece"
        else:
            return
        ctx.finish({player: 1.0, opponent: -1.0}, winners=[player], reason=reason)

    def view(self, player: str) -> dict:
        """The board (rows from the top; -1 empty, 0 black, 1 white), the player's mark, whose turn it is and the size."""
        board = board_rows(self.board, self.rows, self.columns)
        return {"board": board, "mark": self.players.index(player), "to_move": self.turn, "rows": self.rows, "columns": self.columns}

    def vector(self, player: str) -> np.ndarray:
        """Own pieces then opponent pieces, row-major from the top row."""
        return stone_planes(self.board, self.players.index(player))

    def board_text(self) -> str:
        """The board, top row first, with row numbers and column letters."""
        return lettered_board(self.board, self.rows, self.columns, {-1: ".", 0: "B", 1: "W"})

    def render(self) -> str:
        """The board."""
        return self.board_text()
