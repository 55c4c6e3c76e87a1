"""What the one-player puzzles share: their seat and metadata, their three endings, and square grids drawn row by row.

Countdown, FrozenLake, Minesweeper, Sokoban, Sudoku, the Tower of Hanoi and
Wordle are each played by one player, ``player_0``, who is always to move;
each pays 1 for solving it, 0 for failing and -1 for exceeding the
invalid-action allowance, with its outcome details from ``report``.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar

from parlour.envs.core.context import Context


class SoloPuzzle:
    """The seat, metadata and endings (solved, failed, forfeited) of a one-player puzzle, mixed into a game before ``Game``.

    The game keeps ``players`` (``["player_0"]``) and gives :meth:`report`. It
    is no ``Game`` itself, so the registry, which registers every game class of
    this package, does not take it for one.
    """

    category: ClassVar[str] = "puzzle"
    zero_sum: ClassVar[bool] = False
    fixed_rules: ClassVar[bool] = True
    reference_agents: ClassVar[tuple[str, ...]] = ("solver", "random")

    players: list[str]

    def report(self, success: bool) -> dict[str, Any]:
        """The outcome details of an episode solved (``success``) or not."""
        raise NotImplementedError

    def to_move(self) -> list[str]:
        """The one player."""
        return self.players

    def solved(self, ctx: Context, reason: str) -> None:
        """End the episode solved, saying why: the player wins and gets 1."""
        player = self.players[0]
        ctx.finish({player: 1.0}, winners=[player], reason=reason, details=self.report(True))

    def failed(self, ctx: Context, reason: str) -> None:
        """End the episode unsolved, saying why: the player gets 0."""
        ctx.finish({self.players[0]: 0.0}, reason=reason, details=self.report(False))

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """The player gets -1."""
        ctx.finish({player: -1.0}, reason=reason, details=self.report(False))


def grid_rows(size: int, symbol: Callable[[int, int], str]) -> list[str]:
    """A ``size`` x ``size`` grid as text, one string per row from the top, each cell drawn by ``symbol(row, column)``."""
    return ["".join(symbol(row, col) for col in range(size)) for row in range(size)]
