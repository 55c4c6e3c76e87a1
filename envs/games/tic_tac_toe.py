"""Tic-tac-toe.

Players ``player_0`` (X, moves first) and ``player_1`` (O) take turns placing
their mark on a 3x3 board; three in a row, column or diagonal wins.

Moves are cell names ``a1`` .. ``c3`` (column letter, row number, row 1 on
top); the ``Discrete`` index of cell (row r, column c) is ``3 * r + c``, as in
OpenSpiel's ``tic_tac_toe``. Vector observation: 18 values, the player's own
marks then the opponent's, row-major.

Rewards (zero-sum): +1 to the winner and -1 to the loser at the last move, 0
each for a draw. A player who exceeds the invalid-action allowance gets -1 and
the opponent +1.

Batched: :class:`TicTacToeBatch` plays N boards at once for the batched vector
face (``gymnasium.make_vec(..., obs_mode="vector")``, see
:mod:`parlour.envs.core.vector`).

Version history: v0, first release.
"""

from __future__ import annotations

from typing import Self

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.game import Game
from parlour.envs.core.vector import GameBatch, Streams

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
CELLS = [f"{'abc'[i % 3]}{i // 3 + 1}" for i in range(9)]
MARKS = ("X", "O")
BOARD = "   a b c\n 1 {} {} {}\n 2 {} {} {}\n 3 {} {} {}"
#: The empty board as :meth:`TicTacToe.board_text` draws it (ASCII), and where each cell's mark goes in it.
EMPTY_DRAWING = BOARD.format(*"." * 9).encode("ascii")
PLACES = [i for i, char in enumerate(EMPTY_DRAWING) if char == ord(".")]

RULES = """You are playing Tic-tac-toe as {mark} ({player}); {first}.
Players take turns placing their mark in an empty cell of a 3x3 board. The first to get three marks in a row, column or diagonal wins; a full board without a line is a draw.
Cells are named by column letter and row number: a1 is the top-left cell, c3 the bottom-right.
Reply with the cell you choose, for example: b2"""


#: Tables over the 512 sets of cells (bit ``i`` is cell ``i``), for many boards at once: each set's cells
#: as 0/1 values, the cells outside it, and whether it holds a line.
CELL_VALUES = ((np.arange(512)[:, None] >> np.arange(9)) & 1).astype(np.float32)
OUTSIDE = CELL_VALUES == 0
HAS_LINE = np.array([any(all(cells >> c & 1 for c in line) for line in LINES) for cells in range(512)])
FULL = 511


#: The lines through each cell: only they can be completed by a mark placed there.
LINES_THROUGH = [[line for line in LINES if cell in line] for cell in range(9)]


def completes_line(board: list[int], cell: int) -> bool:
    """Whether the mark on ``cell`` completes a line through it."""
    mark = board[cell]
    for a, b, c in LINES_THROUGH[cell]:
        if board[a] == board[b] == board[c] == mark:
            return True
    return False


class TicTacToeBatch(GameBatch):
    """Tic-tac-toe's rules on N boards at once (see :class:`parlour.envs.core.vector.GameBatch`).

    ``cells`` is ``(N, 2)``: the set of cells each mark holds, bit ``i`` for
    cell ``i`` (move-index order), and ``occupied`` their union, so that lines,
    legal moves and vectors are read from tables over the 512 sets; ``turn``
    is the mark to move.
    """

    def __init__(self, game: TicTacToe, n: int):
        super().__init__(game, n)
        self.cells = np.zeros((n, 2), dtype=np.int64)
        self.occupied = np.zeros(n, dtype=np.int64)

    def reset(self, rows: np.ndarray, rng: Streams) -> None:
        """Empty boards, X to move."""
        self.cells[rows] = 0
        self.occupied[rows] = 0
        self.turn[rows] = 0

    def legal(self, rows: np.ndarray) -> np.ndarray:
        """Empty cells."""
        return OUTSIDE[self.occupied[rows]]

    def step(self, rows: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Place the marks; a line wins, a full board draws."""
        marks = self.turn[rows]
        cell = 1 << actions
        taken = self.cells[rows, marks] | cell
        self.cells[rows, marks] = taken
        occupied = self.occupied[rows] | cell
        self.occupied[rows] = occupied
        won = HAS_LINE[taken]
        self.turn[rows] = 1 - marks
        return self.wins(marks, won), won | (occupied == FULL)

    def vector(self, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """Own marks then opponent marks, as :meth:`TicTacToe.vector`."""
        return np.concatenate([CELL_VALUES[self.cells[rows, seats]], CELL_VALUES[self.cells[rows, 1 - seats]]], axis=1)


class TicTacToe(Game):
    """Tic-tac-toe for two players; see the module docstring for moves and rewards."""

    name = "TicTacToe"
    reference_agents = ("minimax", "random")
    description = "Classic 3x3 noughts and crosses; three in a line wins."
    zero_sum = True
    fixed_rules = True
    batch = TicTacToeBatch

    def __init__(self) -> None:
        self.players = ["player_0", "player_1"]
        self.moves: list[str] = list(CELLS)
        self.vector_size = 18
        self.board = [-1] * 9
        self.turn = 0
        self._vectors = np.zeros((2, 18), dtype=np.float32)
        self.drawing = bytearray(EMPTY_DRAWING)

    @classmethod
    def from_view(cls, view: dict) -> TicTacToe:
        """A game in the position a player's :meth:`view` shows (nothing is hidden), for lookahead on ``clone()`` copies."""
        game = cls()
        game.board = list(view["board"])
        game.turn = view["to_move"]
        for cell, mark in enumerate(game.board):
            if mark != -1:
                game._vectors[mark, cell] = 1.0
                game._vectors[1 - mark, 9 + cell] = 1.0
                game.drawing[PLACES[cell]] = ord(MARKS[mark])
        return game

    def clone(self) -> Self:
        """An independent copy: the position is copied, the move names (never changed after ``__init__``) shared.

        Search copies the game at every node, and this is many times cheaper than the default pickling copy.
        """
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy.board = list(self.board)
        copy._vectors = self._vectors.copy()
        copy.drawing = bytearray(self.drawing)
        return copy

    def start(self, ctx: Context) -> None:
        """Empty board, X to move."""
        self.board = [-1] * 9
        self.turn = 0
        # Each player's vector view and the board's text, kept up to date move by move: vector mode is the RL hot
        # path, and a text episode shows the board every move.
        self._vectors = np.zeros((2, 18), dtype=np.float32)
        self.drawing = bytearray(EMPTY_DRAWING)

    def rules(self, player: str) -> str:
        """Rules and the player's mark."""
        index = self.players.index(player)
        first = "you move first" if index == 0 else "your opponent moves first"
        return RULES.format(mark=MARKS[index], player=player, first=first)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The board and the empty cells."""
        return f"Board:\n{self.board_text()}\nYou are {MARKS[self.players.index(player)]}. Empty cells: {', '.join(legal or [])}."

    def legal_actions(self, player: str) -> list[int]:
        """Empty cells."""
        return [i for i, mark in enumerate(self.board) if mark == -1]

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Place the mark; end the game on a line or a full board."""
        ((player, move),) = moves.items()
        cell = self.move_index(move)
        mark = self.turn
        self.board[cell] = mark
        self._vectors[mark, cell] = 1.0
        self._vectors[1 - mark, 9 + cell] = 1.0
        self.drawing[PLACES[cell]] = ord(MARKS[mark])
        ctx.tell(f"{player} ({MARKS[mark]}) plays {move}.", kind="move", sender=player)
        if completes_line(self.board, cell):
            ctx.finish({player: 1.0, self.other(player): -1.0}, winners=[player], reason=f"{player} made three in a row")
        elif -1 not in self.board:
            ctx.finish(reason="the board is full: a draw")
        else:
            self.turn = 1 - mark

    def view(self, player: str) -> dict:
        """The board (-1 empty, 0 X, 1 O) and the player's mark."""
        return {"board": list(self.board), "mark": self.players.index(player), "to_move": self.turn}

    def vector(self, player: str) -> np.ndarray:
        """Own marks then opponent marks."""
        return self._vectors[0 if player == "player_0" else 1].copy()

    def board_text(self) -> str:
        """The board with coordinates."""
        return self.drawing.decode("ascii")

    def render(self) -> str:
        """The board."""
        return self.board_text()
