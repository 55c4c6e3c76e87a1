"""Depth-limited alpha-beta ``minimax`` for Othello, on copies of the real game (see :mod:`parlour.baselines.alphabeta`).

Positions at the depth limit are scored by the classic square weights
(corners are never flipped back, so they are worth most; the cells next to an
empty corner hand it to the opponent, so they count against the mover) plus
mobility, the difference in the number of legal moves: a player short of moves
is forced into bad ones.
"""

from __future__ import annotations

from typing import Any, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.alphabeta import AlphaBeta
from parlour.baselines.seeded import SeededAgent
from parlour.envs.games.othello import Othello, cells_of, legal_bits

#: Square weights, row-major from a1 (the usual table of Othello programs).
WEIGHTS = (
    100, -20, 10, 5, 5, 10, -20, 100,
    -20, -50, -2, -2, -2, -2, -50, -20,
    10, -2, -1, -1, -1, -1, -2, 10,
    5, -2, -1, -1, -1, -1, -2, 5,
    5, -2, -1, -1, -1, -1, -2, 5,
    10, -2, -1, -1, -1, -1, -2, 10,
    -20, -50, -2, -2, -2, -2, -50, -20,
    100, -20, 10, 5, 5, 10, -20, 100,
)  # fmt: skip
#: Points per legal move more than the opponent has.
MOBILITY = 5


def evaluate(game: Othello, player: str) -> float:
    """Square weights and mobility of ``player`` minus its opponent's."""
    me = game.players.index(player)
    own, other = game.discs[me], game.discs[1 - me]
    squares = sum(WEIGHTS[cell] for cell in cells_of(own)) - sum(WEIGHTS[cell] for cell in cells_of(other))
    mobility = legal_bits(own, other).bit_count() - legal_bits(other, own).bit_count()
    return float(squares + MOBILITY * mobility)


class MinimaxAgent(SeededAgent):
    """Searches ``depth`` plies with alpha-beta and plays a best move, breaking ties at random."""

    name = "minimax"

    def __init__(self, env_id: str | None = None, seed: int | None = None, depth: int = 2):
        if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
            raise ValueError(f"depth must be a positive int, got {depth!r}")
        self.depth = depth
        super().__init__(env_id, seed)

    def act(self, observation: Mapping[str, Any]) -> str:
        """The chosen move for the player to move."""
        game = Othello.from_view(observation["view"])
        choices = AlphaBeta(evaluate, self.rng).best_actions(game, self.depth)
        return game.moves[choices[int(self.rng.integers(len(choices)))]]


register_scripted("minimax", "parlour/Othello-v0", MinimaxAgent)
