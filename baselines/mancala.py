"""Depth-limited alpha-beta ``minimax`` for Mancala, on copies of the real game (see :mod:`parlour.baselines.alphabeta`).

Positions at the depth limit are scored by the difference of the stores
(seeds there are kept for good) plus a quarter of the difference of the seeds
on each side (they count for their owner if the game ends now, but can still
be sown away or captured). Moves that end in the mover's own store search
first: they are often best and prune the rest.
"""

from __future__ import annotations

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.alphabeta import MinimaxAgent
from parlour.envs.games.mancala import PITS, PLACES, STORES, Mancala, first_pit

#: Weight of a seed still on the board against one in a store.
ON_BOARD = 0.25


def evaluate(game: Mancala, player: str) -> float:
    """Store difference plus a quarter of the on-board seed difference, for ``player``."""
    seat = game.players.index(player)
    board = game.board
    sides = [sum(board[first_pit(s) : first_pit(s) + PITS]) for s in (0, 1)]
    return float(board[STORES[seat]] - board[STORES[1 - seat]] + ON_BOARD * (sides[seat] - sides[1 - seat]))


def order(game: Mancala, player: str, actions: list[int]) -> list[int]:
    """Moves whose last seed lands in the mover's store first (sowing skips one store, so it comes round every 13 seeds)."""
    seat = game.players.index(player)
    base = first_pit(seat)

    def lands_in_store(action: int) -> bool:
        pit = base + action
        return game.board[pit] % (PLACES - 1) == (STORES[seat] - pit) % PLACES

    return sorted(actions, key=lambda action: not lands_in_store(action))


class MancalaMinimax(MinimaxAgent[Mancala]):
    """``minimax`` for Mancala: alpha-beta to ``depth`` plies (default 4; a move again counts as a ply) scored by
    :func:`evaluate`, searching :func:`order`'s moves first, playing a best move (ties at random)."""

    game = Mancala
    evaluate = staticmethod(evaluate)
    order = staticmethod(order)

    def __init__(self, env_id: str | None = None, seed: int | None = None, depth: int = 4):
        super().__init__(env_id, seed, depth)


register_scripted("minimax", "parlour/Mancala-v0", MancalaMinimax)
register_ladder("parlour/Mancala-v0", ["random", ("minimax", {"depth": 1}), ("minimax", {"depth": 2}), ("minimax", {"depth": 4})])
