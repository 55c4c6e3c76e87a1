"""How an episode's seeds derive from a base seed: one rule for the Gymnasium face, the runner and the leaderboard.

Episode ``i`` of a run with base seed ``s`` uses the seeds of
``SeedSequence(s, spawn_key=(0, i))``: the first for the game, then one per
seat for the agent in it. The Gymnasium face's ``reset(seed=s)`` is episode 0
of a run with base seed ``s``, so ``parlour.evaluate`` can re-run it.
"""

from __future__ import annotations

import numpy as np


def episode_seeds(base_seed: int, episode: int, n_seats: int) -> tuple[int, list[int]]:
    """The game's seed and each seat's agent seed for ``episode`` of a run with seed ``base_seed``."""
    state = np.random.SeedSequence(base_seed, spawn_key=(0, episode)).generate_state(1 + n_seats, np.uint64)
    return int(state[0] >> 1), [int(s >> 1) for s in state[1:]]
