"""Connect Four.

Players ``player_0`` (X, moves first) and ``player_1`` (O) take turns dropping
a disc into a column of an upright grid (default 6 rows x 7 columns); it falls
to the lowest empty cell. The first to line up ``x_in_row`` discs (default 4)
horizontally, vertically or diagonally wins; a full grid without a line is a
draw. Options ``rows``, ``columns`` and ``x_in_row`` are named as in
OpenSpiel's ``connect_four``.

Moves are ``column 1`` .. ``column 7`` (numbered left to right, as on the
board shown to the players). A move names its column with the word "column",
so that numbers in an agent's reasoning are never read as moves; the last move
mentioned in the reply counts. The ``Discrete`` index of ``column k`` is
``k - 1``, which is OpenSpiel's ``connect_four`` action for that column.
Vector observation: ``2 * rows * columns`` values, the player's own discs then
the opponent's, row-major with the bottom row first.

Rewards (zero-sum): +1 to the winner and -1 to the loser at the winning move, 0
each for a draw. A player who exceeds the invalid-action allowance gets -1 and
the opponent +1.

Version history: v0, first release.
"""

from __future__ import annotations

import numpy as np

from parlour.envs.core.game import Game, int_option

MARKS = ("X", "O")
#: (row step, column step, name) of the four line directions; row 0 is the bottom row.
DIRECTIONS = ((0, 1, "horizontal"), (1, 0, "vertical"), (1, 1, "rising diagonal"), (1, -1, "falling diagonal"))

RULES = """You are playing Connect Four as {mark} ({player}); {first}.
The board has {rows} rows and {columns} columns. Players take turns dropping one disc into a column that is not full; the disc falls to the lowest empty cell of that column.
The first player to line up {x_in_row} of their discs in a row, horizontally, vertically or diagonally, wins. A full board without such a line is a draw.
Columns are numbered 1 to {columns} from left to right. Reply with the column you choose, for example: column {example}"""


def column_name(column: int) -> str:
    """The move name of the 0-based ``column``."""
    return f"column {column + 1}"


def line_through(board: list[list[int]], row: int, column: int, x_in_row: int) -> str | None:
    """The direction of a line of ``x_in_row`` equal discs through the occupied cell, or ``None``."""
    mark = board[row][column]
    rows, columns = len(board), len(board[0])
    for d_row, d_column, direction in DIRECTIONS:
        length = 1
        for sign in (1, -1):
            r, c = row + sign * d_row, column + sign * d_column
            while 0 <= r < rows and 0 <= c < columns and board[r][c] == mark:
                length += 1
                r, c = r + sign * d_row, c + sign * d_column
        if length >= x_in_row:
            return direction
    return None


class ConnectFour(Game):
    """Connect Four for two players; see the module docstring for moves and rewards."""

    name = "ConnectFour"
    description = "Drop discs into a 6x7 grid; four in a line wins."
    zero_sum = True

    def __init__(self, *, rows: int = 6, columns: int = 7, x_in_row: int = 4, error_allowance: int | None = None):
        super().__init__(error_allowance=error_allowance)
        for option, value in (("rows", rows), ("columns", columns), ("x_in_row", x_in_row)):
            int_option(option, value, 1)
        if x_in_row > max(rows, columns):
            raise ValueError(f"x_in_row ({x_in_row}) must not exceed the larger of rows ({rows}) and columns ({columns})")
        self.rows, self.columns, self.x_in_row = rows, columns, x_in_row
        self.players = ["player_0", "player_1"]
        self.moves = [column_name(c) for c in range(columns)]
        self.vector_size = 2 * rows * columns
        self.board = [[-1] * columns for _ in range(rows)]
        self.heights = [0] * columns
        self.turn = 0

    def start(self, rng: np.random.Generator) -> None:
        """Empty board, X to move."""
        self.board = [[-1] * self.columns for _ in range(self.rows)]
        self.heights = [0] * self.columns
        self.turn = 0

    def to_move(self) -> list[str]:
        """The player whose turn it is."""
        return [self.players[self.turn]]

    def rules(self, player: str) -> str:
        """Rules and the player's mark."""
        index = self.players.index(player)
        first = "you move first" if index == 0 else "your opponent moves first"
        return RULES.format(
            mark=MARKS[index],
            player=player,
            first=first,
            rows=self.rows,
            columns=self.columns,
            x_in_row=self.x_in_row,
            example=(self.columns + 1) // 2,
        )

    def prompt(self, player: str) -> str:
        """The board and the columns that are not full."""
        mark = MARKS[self.players.index(player)]
        return f"Board:\n{self.board_text()}\nYou are {mark}. Legal moves: {', '.join(self.legal_moves(player))}."

    def legal_actions(self, player: str) -> list[int]:
        """Columns that are not full."""
        return [c for c in range(self.columns) if self.heights[c] < self.rows]

    def apply(self, moves: dict[str, str]) -> None:
        """Drop the disc; end the game on a line or a full board."""
        ((player, move),) = moves.items()
        column = self.move_index(move)
        row = self.heights[column]
        mark = self.turn
        self.board[row][column] = mark
        self.heights[column] += 1
        self.tell(f"{player} ({MARKS[mark]}) plays {move}.")
        direction = line_through(self.board, row, column, self.x_in_row)
        if direction is not None:
            other = self.players[1 - mark]
            reason = f"{player} lined up {self.x_in_row} ({direction})"
            self.finish({player: 1.0, other: -1.0}, winner=player, reason=reason, details={"line": direction})
        elif all(height == self.rows for height in self.heights):
            self.finish({}, winner=None, reason="the board is full: a draw")
        else:
            self.turn = 1 - mark

    def view(self, player: str) -> dict:
        """The board (``board[r][c]``: -1 empty, 0 X, 1 O; row 0 is the bottom), the player's mark and the options."""
        return {
            "board": [list(row) for row in self.board],
            "mark": self.players.index(player),
            "to_move": self.turn,
            "rows": self.rows,
            "columns": self.columns,
            "x_in_row": self.x_in_row,
        }

    def vector(self, player: str) -> np.ndarray:
        """Own discs then opponent discs, bottom row first."""
        me = self.players.index(player)
        board = np.asarray(self.board).ravel()
        return np.concatenate([board == me, board == 1 - me]).astype(np.float32)

    def board_text(self) -> str:
        """The board, top row first, under its column numbers."""
        width = len(str(self.columns))
        header = " ".join(str(c + 1).rjust(width) for c in range(self.columns))
        lines = [header]
        for row in reversed(self.board):
            lines.append(" ".join(("." if mark == -1 else MARKS[mark]).rjust(width) for mark in row))
        return "\n".join(lines)

    def render(self) -> str:
        """The board and whose turn it is."""
        status = "game over" if self.over else f"{MARKS[self.turn]} to move"
        return f"{self.board_text()}\n({status})"
