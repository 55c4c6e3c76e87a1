"""Spaces for text observations and actions.

Gymnasium's ``Text`` space only accepts a fixed charset, while an agent's text
can be any Unicode. :class:`TextSpace` accepts any ``str`` up to ``max_length``
characters. When a game's moves are enumerable, the space knows them, so that
``sample(mask)`` (used by PettingZoo's test suites and by random agents) draws
a legal move name.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from gymnasium import spaces

_SAMPLE_ALPHABET = np.array(list("abcdefghijklmnopqrstuvwxyz0123456789 ,.!?-[]{}\":é中\n\t\x00"))


class TextSpace(spaces.Space[str]):
    """Any Unicode string of at most ``max_length`` characters.

    Args:
        max_length: the longest string the space contains.
        moves: the move names of an enumerable game; ``sample(mask)`` then
            returns one of the moves allowed by ``mask``.
        seed: seed for ``sample``.
    """

    def __init__(self, max_length: int = 1 << 20, moves: Sequence[str] | None = None, seed: int | None = None):
        if max_length < 1:
            raise ValueError(f"max_length must be positive, got {max_length}")
        self.max_length = int(max_length)
        self.moves = list(moves) if moves is not None else None
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        """Text cannot be flattened into a numpy array."""
        return False

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is a string no longer than ``max_length``."""
        return isinstance(x, str) and len(x) <= self.max_length

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        """A random legal move when ``mask`` and moves are known, else random text.

        Random text is mostly not a valid action: it exercises the invalid-action
        policy, which is what API checkers sampling blindly should see.
        """
        if self.moves is not None and mask is not None:
            allowed = np.flatnonzero(np.asarray(mask))
            if len(allowed) == 0:
                return ""
            return self.moves[int(self.np_random.choice(allowed))]
        if self.moves is not None and self.np_random.random() < 0.5:
            return self.moves[int(self.np_random.integers(len(self.moves)))]
        length = int(self.np_random.integers(0, min(self.max_length, 24) + 1))
        return "".join(self.np_random.choice(_SAMPLE_ALPHABET, size=length))

    def __repr__(self) -> str:
        return f"TextSpace(max_length={self.max_length}, moves={len(self.moves) if self.moves else None})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, TextSpace) and other.max_length == self.max_length and other.moves == self.moves

    def __hash__(self) -> int:
        return hash((self.max_length, tuple(self.moves or ())))
