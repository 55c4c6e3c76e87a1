"""Alpha-beta ``minimax`` for Clobber, on copies of the real game (see :mod:`parlour.baselines.alphabeta`), searched
to the end of the game once few stones are still in play.

Positions at the depth limit are scored by active stones: the player's
stones that touch an opponent stone minus the opponent's. (Counting moves
instead would score every position zero: each move of one side is a
neighbouring pair that the other side can take the other way round.)

The last player to move wins, so the game turns on parity, which a shallow
search cannot see. Stones move only onto occupied cells, so a group of
touching stones never grows and one of a single colour never moves again;
the moves left are fewer than the stones in groups holding both colours. When
those number :data:`ENDGAME` or fewer, the search runs that many plies, to
the end of every line, and plays a won position out exactly (and picks up
each mistake of its opponent).

Version history: v0, first release.
"""

from __future__ import annotations

from typing import Any, Mapping

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.alphabeta import AlphaBeta, MinimaxAgent
from parlour.envs.games.clobber import Clobber

#: Stones in play at or below which the search reaches the end of the game (it stays well under a second a move on 5x6).
ENDGAME = 14


def evaluate(game: Clobber, player: str) -> float:
    """``player``'s stones beside an opponent stone minus the opponent's stones beside one of ``player``'s."""
    me = game.players.index(player)
    board = game.board
    score = 0
    for cell, steps in enumerate(game._steps):
        mark = board[cell]
        if mark != -1 and any(board[destination] == 1 - mark for destination, _ in steps):
            score += 1 if mark == me else -1
    return float(score)


def stones_in_play(game: Clobber) -> int:
    """Stones in groups of touching stones that hold both colours: every move left is made by one of them."""
    board, steps = game.board, game._steps
    seen = [False] * len(board)
    total = 0
    for first, mark in enumerate(board):
        if mark == -1 or seen[first]:
            continue
        seen[first] = True
        group, marks = [first], {mark}
        for cell in group:
            for destination, _ in steps[cell]:
                if board[destination] != -1 and not seen[destination]:
                    seen[destination] = True
                    group.append(destination)
                    marks.add(board[destination])
        if len(marks) == 2:
            total += len(group)
    return total


class ClobberMinimax(MinimaxAgent[Clobber]):
    """``minimax`` for Clobber: alpha-beta to ``depth`` plies scored by :func:`evaluate`, or to the end of the game
    once :data:`ENDGAME` or fewer stones are in play, playing a best move (ties at random).

    Version history: v0, first release.
    """

    game = Clobber
    evaluate = staticmethod(evaluate)

    def act(self, observation: Mapping[str, Any]) -> str:
        """A best move for the player to move."""
        game = Clobber.from_view(observation["view"])
        in_play = stones_in_play(game)
        depth = max(self.depth, in_play) if in_play <= ENDGAME else self.depth
        choices = AlphaBeta(evaluate, self.rng).best_actions(game, depth)
        moves = game.moves
        assert moves is not None  # Clobber enumerates its moves
        return moves[choices[int(self.rng.integers(len(choices)))]]


register_scripted("minimax", "parlour/Clobber-v0", ClobberMinimax)
# One rung of search: before the endgame is searched to the end, depth 2 is no stronger than depth 1 here (+0.06 a
# game over 100 games, standard error 0.10).
register_ladder("parlour/Clobber-v0", ["random", ("minimax", {"depth": 2})])
