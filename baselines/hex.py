"""Depth-limited alpha-beta ``minimax`` for Hex, on copies of the real game (see :mod:`parlour.baselines.alphabeta`).

Positions at the depth limit are scored by connection distance: the fewest
empty cells each player still has to fill to join its two edges (its own
stones are free, the opponent's impassable), found by a 0-1 breadth-first
search. The score is the opponent's distance minus the player's own, so a
move that both shortens one's own path and lengthens the opponent's, the
essence of Hex, scores twice.
"""

from __future__ import annotations

from collections import deque

from parlour.baselines import register_scripted
from parlour.baselines.alphabeta import MinimaxAgent
from parlour.envs.games.hex import Hex, neighbours


def distance(board: list[int], size: int, mark: int) -> float:
    """Empty cells ``mark`` must still fill to join its edges (X: top to bottom, O: left to right); inf if blocked."""
    near = neighbours(size)
    unreached = size * size + 1
    best = [unreached] * (size * size)
    queue: deque[int] = deque()
    for i in range(size):
        cell = i if mark == 0 else i * size  # X starts from the top row, O from the left column
        if board[cell] != 1 - mark:
            best[cell] = 0 if board[cell] == mark else 1
            queue.append(cell)
    while queue:
        here = queue.popleft()
        for there in near[here]:
            if board[there] == 1 - mark:
                continue
            cost = best[here] + (board[there] != mark)
            if cost < best[there]:
                best[there] = cost
                # 0-1 search: free steps go to the front, so cells leave the queue in distance order.
                queue.appendleft(there) if board[there] == mark else queue.append(there)
    ends = [best[(size - 1) * size + i] if mark == 0 else best[i * size + size - 1] for i in range(size)]
    result = min(ends)
    return float("inf") if result == unreached else float(result)


def evaluate(game: Hex, player: str) -> float:
    """The opponent's connection distance minus ``player``'s."""
    me = game.players.index(player)
    return distance(game.board, game.size, 1 - me) - distance(game.board, game.size, me)


class HexMinimax(MinimaxAgent):
    """``minimax`` for Hex: alpha-beta to ``depth`` plies scored by :func:`evaluate`, playing a best cell (ties at random)."""

    game = Hex
    evaluate = staticmethod(evaluate)


register_scripted("minimax", "parlour/Hex-v0", HexMinimax)
