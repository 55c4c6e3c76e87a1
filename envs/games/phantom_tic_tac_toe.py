"""Phantom tic-tac-toe, with OpenSpiel's ``phantom_ttt`` rules (observation type ``reveal-nothing``).

Tic-tac-toe (see :mod:`parlour.envs.games.tic_tac_toe`, whose board and lines
it uses) in which neither player sees the other's marks. ``player_0`` (X,
moves first) and ``player_1`` (O) each see only their own marks and the
opponent marks their own attempts found. A player names any cell it has not
seen filled: if the cell is empty its mark goes there and the turn passes; if
the opponent holds it, the player now sees that mark and, in the default
``gameversion="classical"``, tries again (with ``"abrupt"`` the turn passes
instead). Nothing about the opponent's attempts is told, not even how many
there were. Three in a row, column or diagonal wins; a full board without a
line is a draw. When the game ends, the whole board is shown to both.

Moves are cell names ``a1`` .. ``c3`` (column letter, row number, row 1 on
top); the ``Discrete`` index of cell (row r, column c) is ``3 * r + c``, as in
OpenSpiel. Legal moves are the cells the player has not seen filled. Vector
observation: OpenSpiel's observation tensor, 27 values: the cells the player
sees empty, then those it sees holding O, then X, row-major each.

Rewards (zero-sum): +1 to the winner and -1 to the loser at the last move, 0
each for a draw. A player who exceeds the invalid-action allowance gets -1 and
the opponent +1.

Version history: v0, first release.
"""

from __future__ import annotations

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.game import Game
from parlour.envs.games.tic_tac_toe import BOARD, CELLS, MARKS, completes_line

VERSIONS = ("classical", "abrupt")
#: The block of OpenSpiel's observation tensor that holds each mark's cells (its cell states: empty, nought, cross).
TENSOR_BLOCK = {-1: 0, 1: 1, 0: 2}
SEEN = {-1: ".", 0: "X", 1: "O"}

RULES = """You are playing Phantom tic-tac-toe as {mark} ({player}); {first}.
It is tic-tac-toe on a 3x3 board (three of your marks in a row, column or diagonal wins; a full board without a line is a draw), but you cannot see your opponent's marks, and your opponent cannot see yours.
On your turn name a cell you have not seen filled. If it is empty, your mark goes there and your turn ends. If your opponent's mark is there, you now see that mark and {failed}. Your opponent is never told where you tried, nor how many times.
Cells are named by column letter and row number: a1 is the top-left cell, c3 the bottom-right.
Reply with the cell you choose, for example: b2"""
FAILED = {"classical": "you choose again", "abrupt": "your turn ends"}


class PhantomTicTacToe(Game):
    """Phantom tic-tac-toe for two players; see the module docstring for moves and rewards.

    ``board`` is the true board (-1 empty, 0 X, 1 O); ``seen[p]`` what player
    ``p`` has seen of it (its own marks and the opponent marks it ran into).
    """

    name = "PhantomTicTacToe"
    reference_agents = ("heuristic", "random")
    description = "Tic-tac-toe without seeing the opponent's marks: a move on a taken cell reveals it and you try again."
    zero_sum = True
    fixed_rules = True

    def __init__(self, *, gameversion: str = "classical"):
        if gameversion not in VERSIONS:
            raise ValueError(f"gameversion must be one of {', '.join(VERSIONS)}, got {gameversion!r}")
        self.gameversion = gameversion
        self.players = ["player_0", "player_1"]
        self.moves = list(CELLS)
        self.vector_size = 27
        self.board = [-1] * 9
        self.seen = [[-1] * 9, [-1] * 9]
        self.turn = 0

    def start(self, ctx: Context) -> None:
        """Empty board, nothing seen, X to move."""
        self.board = [-1] * 9
        self.seen = [[-1] * 9, [-1] * 9]
        self.turn = 0

    def rules(self, player: str) -> str:
        """Rules, the player's mark and what a failed attempt does."""
        index = self.players.index(player)
        first = "you move first" if index == 0 else "your opponent moves first"
        return RULES.format(mark=MARKS[index], player=player, first=first, failed=FAILED[self.gameversion])

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """What the player has seen of the board and the cells it may try."""
        me = self.players.index(player)
        return (
            f"What you have seen of the board:\n{self.board_text(self.seen[me])}\nYou are {MARKS[me]}. Cells you may try: {', '.join(legal or [])}."
        )

    def legal_actions(self, player: str) -> list[int]:
        """The cells the player has not seen filled."""
        return [cell for cell, mark in enumerate(self.seen[self.players.index(player)]) if mark == -1]

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Place the mark on an empty cell, or reveal the opponent's mark on a taken one; end on a line or a full board."""
        ((player, move),) = moves.items()
        cell = self.move_index(move)
        mark = self.turn
        if self.board[cell] != -1:
            self.seen[mark][cell] = 1 - mark
            then = "choose again" if self.gameversion == "classical" else "your turn ends"
            ctx.tell(f"{move} holds your opponent's mark ({MARKS[1 - mark]}): {then}.", to=player, kind="move", sender=player)
            if self.gameversion == "abrupt":
                self.turn = 1 - mark
            return
        self.board[cell] = self.seen[mark][cell] = mark
        ctx.tell(f"You place your mark ({MARKS[mark]}) on {move}.", to=player, kind="move", sender=player)
        if completes_line(self.board, cell):
            self.reveal(ctx)
            ctx.finish({player: 1.0, self.other(player): -1.0}, winners=[player], reason=f"{player} made three in a row")
        elif -1 not in self.board:
            self.reveal(ctx)
            ctx.finish(reason="the board is full: a draw")
        else:
            self.turn = 1 - mark

    def reveal(self, ctx: Context) -> None:
        """Show the whole board to both players: the game is over, nothing is hidden any more."""
        ctx.tell(f"The final board:\n{self.board_text(self.board)}")

    def view(self, player: str) -> dict:
        """What the player has seen of the board (-1 not seen filled, 0 X, 1 O), its mark and the game version."""
        me = self.players.index(player)
        return {"board": list(self.seen[me]), "mark": me, "gameversion": self.gameversion}

    def vector(self, player: str) -> np.ndarray:
        """OpenSpiel's observation tensor: the cells seen empty, holding O, holding X."""
        values = np.zeros(27, dtype=np.float32)
        for cell, mark in enumerate(self.seen[self.players.index(player)]):
            values[9 * TENSOR_BLOCK[mark] + cell] = 1.0
        return values

    @staticmethod
    def board_text(board: list[int]) -> str:
        """A board with coordinates, ``.`` for a cell not known to be filled."""
        return BOARD.format(*[SEEN[m] for m in board])

    def render(self) -> str:
        """The true board and what each player has seen of it."""
        seen = "\n".join(f"{p} has seen:\n{self.board_text(self.seen[i])}" for i, p in enumerate(self.players))
        return f"{self.board_text(self.board)}\n{seen}"
