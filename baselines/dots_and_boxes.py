"""Depth-limited alpha-beta ``minimax`` for Dots and Boxes, on copies of the real game (see :mod:`parlour.baselines.alphabeta`).

The search follows the rule that a player who closes a box moves again (the
helper negates a value only when the turn passes). Positions at the depth
limit are scored by boxes won so far plus the boxes with three sides drawn,
which the player to move can close at once; so a line that hands the
opponent a box is seen as the loss it is.
"""

from __future__ import annotations

from typing import Any, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.alphabeta import AlphaBeta
from parlour.baselines.seeded import SeededAgent
from parlour.envs.games.dots_and_boxes import DotsAndBoxes, layout


def evaluate(game: DotsAndBoxes, player: str) -> float:
    """``player``'s boxes minus its opponent's, plus the boxes it can close at once (it is to move)."""
    me = game.players.index(player)
    mine, theirs = game.scores()[me], game.scores()[1 - me]
    _, _, sides = layout(game.rows, game.columns)
    ready = sum(1 for box, lines in enumerate(sides) if game.owners[box] == -1 and sum(game.lines[line] for line in lines) == 3)
    return float(mine - theirs + ready)


class MinimaxAgent(SeededAgent):
    """Searches ``depth`` plies with alpha-beta and draws a best line, breaking ties at random."""

    name = "minimax"

    def __init__(self, env_id: str | None = None, seed: int | None = None, depth: int = 2):
        if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
            raise ValueError(f"depth must be a positive int, got {depth!r}")
        self.depth = depth
        super().__init__(env_id, seed)

    def act(self, observation: Mapping[str, Any]) -> str:
        """The chosen line for the player to move."""
        game = DotsAndBoxes.from_view(observation["view"])
        choices = AlphaBeta(evaluate, self.rng).best_actions(game, self.depth)
        return game.moves[choices[int(self.rng.integers(len(choices)))]]


register_scripted("minimax", "parlour/DotsAndBoxes-v0", MinimaxAgent)
