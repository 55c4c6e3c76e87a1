"""A random agent under a name of the test's choosing, for the leaderboard tests (names are what they rate)."""

from __future__ import annotations

import parlour


class NamedRandom:
    """``random`` for ``env_id``, reported under ``name``."""

    def __init__(self, name: str, env_id: str):
        self.name = name
        self.inner = parlour.make_agent("random", env_id=env_id)

    def reset(self, seed=None):
        """Reseed the random play."""
        self.inner.reset(seed=seed)

    def act(self, observation):
        """A random legal move."""
        return self.inner.act(observation)
