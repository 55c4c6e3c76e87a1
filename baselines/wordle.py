"""The ``solver`` for Wordle: keep the words consistent with every mark so far, and guess the word whose marks
split them most evenly (the greatest entropy of the marks' distribution over the candidates).

Candidates are the listed words that would have given every mark seen, by the
game's own rule, :func:`parlour.envs.puzzles.wordle.feedback`. Every listed
word may be guessed; among equally informative guesses a candidate comes
first (it may win at once), then the earlier word. With one or two
candidates left it guesses a candidate. The first guess, the same every
episode, is computed once per process.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache
from typing import Any, Mapping, Sequence

from parlour.baselines import register_scripted
from parlour.baselines.seeded import SeededAgent
from parlour.envs.puzzles.wordle import WORDS, feedback


def candidates(history: Sequence[Sequence[str]], words: Sequence[str] = WORDS) -> list[str]:
    """The words that would have given every ``(guess, marks)`` of ``history``."""
    return [word for word in words if all(feedback(guess, word) == marks for guess, marks in history)]


def entropy(guess: str, pool: Sequence[str]) -> float:
    """The entropy, in bits, of the marks ``guess`` would get over ``pool``, each word equally likely."""
    counts = Counter(feedback(guess, word) for word in pool)
    total = len(pool)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def best_guess(pool: Sequence[str], words: Sequence[str] = WORDS) -> str:
    """The guess with the most informative marks over ``pool``; a candidate on ties; a candidate outright for two or fewer."""
    if len(pool) <= 2:
        return pool[0]
    members = set(pool)
    return max(words, key=lambda word: (entropy(word, pool), word in members))


@lru_cache(maxsize=1)
def opening() -> str:
    """The first guess over the whole list (the same every episode)."""
    return best_guess(WORDS)


class WordleSolver(SeededAgent):
    """Guesses the most informative word given the marks so far (see the module docstring)."""

    name = "solver"

    def act(self, observation: Mapping[str, Any]) -> str:
        """The next guess."""
        history = observation["view"]["guesses"]
        if not history:
            return opening()
        return best_guess(candidates(history))


register_scripted("solver", "parlour/Wordle-v0", WordleSolver)
