"""The base of scripted agents: an environment id and a random generator reseeded every episode."""

from __future__ import annotations

from parlour.envs.core.match import lazy_default_rng


class SeededAgent:
    """A scripted agent whose every random choice comes from ``self.rng``, reseeded by :meth:`reset`.

    The runner and the Gymnasium face call ``reset(seed=...)`` with a seed
    derived from the episode's, so scripted play is reproducible. ``self.rng``
    draws what ``np.random.default_rng(seed)`` draws, but is made on its first
    draw (:func:`~parlour.envs.core.match.lazy_default_rng`): the runner copies
    and reseeds an agent for every seat of every episode, and numpy's seeding
    and the deep copy of its generator were a fifth of a TicTacToe episode's cost.
    """

    name = ""

    def __init__(self, env_id: str | None = None, seed: int | None = None):
        self.env_id = env_id
        self.rng = lazy_default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Reseed for a new episode."""
        self.rng = lazy_default_rng(seed)
