"""Playing one move on a game object directly, for the tests of rules on known positions."""

from __future__ import annotations

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.game import Game


def play(game: Game, move: str, seed: int = 0) -> Context:
    """Apply ``move`` for the player to move on ``game``, with a generator seeded ``seed``; the context that saw it."""
    ctx = Context(game.players, np.random.default_rng(seed))
    game.apply(ctx, {game.to_move()[0]: move})
    return ctx
