"""The base of scripted agents: an environment id and a random generator reseeded every episode."""

from __future__ import annotations

import numpy as np


class SeededAgent:
    """A scripted agent whose every random choice comes from ``self.rng``, reseeded by :meth:`reset`.

    The runner and the Gymnasium face call ``reset(seed=...)`` with a seed
    derived from the episode's, so scripted play is reproducible.
    """

    name = ""

    def __init__(self, env_id: str | None = None, seed: int | None = None):
        self.env_id = env_id
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Reseed for a new episode."""
        self.rng = np.random.default_rng(seed)
