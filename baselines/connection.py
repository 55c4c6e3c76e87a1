"""Connection distance for the connection games' minimax (Hex, Y): the fewest empty cells a player must fill to reach cells from a side."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence


def fill_costs(board: Sequence[int], near: Sequence[Sequence[int]], mark: int, sources: Iterable[int]) -> list[int]:
    """For each cell, the fewest empty cells (the cell itself included) ``mark`` must fill to join it to a cell of ``sources``.

    ``mark``'s own stones are free and the opponent's (``1 - mark``) impassable;
    a cell it cannot reach costs ``len(board) + 1``. Found by a 0-1
    breadth-first search.
    """
    best = [len(board) + 1] * len(board)
    queue: deque[int] = deque()
    for cell in sources:
        if board[cell] != 1 - mark:
            best[cell] = 0 if board[cell] == mark else 1
            queue.appendleft(cell) if board[cell] == mark else queue.append(cell)
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
    return best
