"""The ``thematic`` agent for Codenames: a spymaster and a guesser that read the board through the theme lists.

It reads only its observation's ``view`` and the public theme lists
(:data:`parlour.envs.social.codenames.THEMES`).

* Spymaster: for every theme it counts, among the unrevealed board words that
  relate to it, its own team's (``good``) and the others (``bad``: opposing
  and neutral). A guesser that tries the related words in an unknown order
  reveals ``good / (bad + 1)`` of its words before its first miss, on
  average; it clues the theme with the most by that measure, never one the
  assassin relates to unless every theme with a word of its team does, and
  gives N = ``good``.
* Guesser: it tries the unrevealed words related to the clue's theme, up to
  N, and then passes. Words an opposing clue related to (the other spymaster
  meant them) come last, then those of the most themes; ties are broken at
  random. With no related word left it guesses a random unrevealed word once.

Version history: v0, first release.
"""

from __future__ import annotations

from typing import Any, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.seeded import SeededAgent
from parlour.envs.social.codenames import THEMES, WORD_THEMES

ENV_ID = "parlour/Codenames-v0"


def best_clue(view: Mapping[str, Any]) -> tuple[str, int]:
    """The spymaster's clue (theme, number) for ``view`` (see the module docstring)."""
    key, revealed, team = view["key"], view["revealed"], view["team"]
    hidden = [w for w in view["board"] if w not in revealed]
    choices = []
    for theme, words in THEMES.items():
        related = [w for w in hidden if w in words]
        good = sum(key[w] == team for w in related)
        if not good:
            continue
        bad = len(related) - good
        deadly = any(key[w] == "assassin" for w in related)
        choices.append((deadly, -good / (bad + 1), -good, theme, good))
    deadly, _, _, theme, good = min(choices)
    return theme, good


class ThematicAgent(SeededAgent):
    """The ``thematic`` spymaster and guesser; see the module docstring."""

    name = "thematic"

    def act(self, observation: Mapping[str, Any]) -> str:
        """A clue, a guess or a pass."""
        view = observation["view"]
        if view["phase"] == "clue":
            theme, n = best_clue(view)
            return f"clue {theme} {min(n, 5)}"
        theme, n = view["clue"]
        hidden = [w for w in view["board"] if w not in view["revealed"]]
        if view["guessed"] >= n:
            return "pass"
        related = [w for w in hidden if w in THEMES[theme]]
        if not related:
            return "pass" if view["guessed"] else f"guess {hidden[int(self.rng.integers(len(hidden)))]}"
        theirs = {c["theme"] for c in view["clues"] if c["team"] != view["team"]}
        order = self.rng.permutation(len(related))
        ranked = sorted(
            related,
            key=lambda w: (bool(theirs & set(WORD_THEMES[w])), len(WORD_THEMES[w]), int(order[related.index(w)])),
        )
        return f"guess {ranked[0]}"


register_scripted("thematic", ENV_ID, ThematicAgent)
