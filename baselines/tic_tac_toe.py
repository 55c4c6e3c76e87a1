"""Perfect-play ``minimax`` for TicTacToe.

The search plays ahead on ``clone()`` copies of the real game
(:func:`~parlour.baselines.alphabeta.play_ahead`), loaded from the player's
view with :meth:`TicTacToe.from_view`: the game's own ``apply`` places the
marks and says, through a scratch context, when a move wins or fills the
board. Values are memoised per position (5,478 of them at most).
"""

from __future__ import annotations

import functools
from typing import Any, Mapping

import numpy as np

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.alphabeta import play_ahead
from parlour.baselines.seeded import SeededAgent
from parlour.envs.games.tic_tac_toe import TicTacToe


def _move_value(game: TicTacToe, cell: int) -> int:
    """The value of taking ``cell`` for the player to move: +1 win, 0 draw, -1 loss under perfect play."""
    mover = game.to_move()[0]
    # TicTacToe never draws from the scratch context's generator; a move that ends the game wins or draws.
    child, outcome = play_ahead(game, mover, game.moves[cell], np.random.default_rng(0))
    if outcome is not None:
        return outcome
    return -_value(tuple(child.board), child.turn)


@functools.cache
def _value(board: tuple[int, ...], turn: int) -> int:
    """Game value for the player to move in a position that is not over."""
    game = TicTacToe.from_view({"board": list(board), "to_move": turn})
    return max(_move_value(game, cell) for cell in game.legal_actions(game.players[turn]))


class MinimaxAgent(SeededAgent):
    """Plays a game-theoretically optimal move, breaking ties at random (never loses)."""

    name = "minimax"

    def act(self, observation: Mapping[str, Any]) -> str:
        """The best cell for the player to move."""
        game = TicTacToe.from_view(observation["view"])
        cells = game.legal_actions(game.to_move()[0])
        scores = [_move_value(game, cell) for cell in cells]
        best = max(scores)
        choices = [cell for cell, score in zip(cells, scores) if score == best]
        return game.moves[choices[int(self.rng.integers(len(choices)))]]


register_scripted("minimax", "parlour/TicTacToe-v0", MinimaxAgent)
register_ladder("parlour/TicTacToe-v0", ["random", "minimax"])
