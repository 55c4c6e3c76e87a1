"""Scripted writers and critics for ConstrainedWriting.

* ``checker``: as writer, it builds a text meeting every constraint out of the
  game's vocabulary (:func:`satisfying_text`) and submits it twice; as critic,
  it runs the game's own checker (:func:`parlour.envs.social.constrained_writing.check`)
  on the draft, names every violated constraint and says why in a comment.
* ``random``: as writer, one to six lines of two to eight random words of the
  vocabulary; as critic, a random subset of the constraints as its verdict.

Version history: v0, first release.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from parlour.baselines import register_scripted
from parlour.baselines.random_agent import RandomAgent
from parlour.baselines.seeded import SeededAgent
from parlour.envs.social.constrained_writing import VOCABULARY, check, describe

ENV_ID = "parlour/ConstrainedWriting-v0"


def satisfying_text(constraints: Sequence[Mapping[str, Any]], choose: Callable[[list[str]], str]) -> str:
    """A text meeting every one of ``constraints``, made of words of the vocabulary; ``choose(options)`` picks a word.

    Lines of at least two words: the first starts with the acrostic's letter, the last ends with the ending letter,
    and the included words and fillers go in between, round the lines, up to the word count. Banned words are
    never in the vocabulary, and every word is drawn short enough.
    """
    by_kind = {c["kind"]: c for c in constraints}
    longest = by_kind["length"]["max"] if "length" in by_kind else max(map(len, VOCABULARY))
    pool = [w for w in VOCABULARY if len(w) <= longest]
    acrostic = by_kind["acrostic"]["word"] if "acrostic" in by_kind else None
    ending = by_kind["ending"]["letter"] if "ending" in by_kind else ""
    count = len(acrostic) if acrostic else by_kind["lines"]["count"] if "lines" in by_kind else 3
    include = list(by_kind["include"]["words"]) if "include" in by_kind else []
    total = by_kind["words"]["count"] if "words" in by_kind else 2 * count + len(include) + 2
    lines = [
        [choose([w for w in pool if acrostic is None or w[0] == acrostic[i]]), choose([w for w in pool if w.endswith(ending)])] for i in range(count)
    ]
    for i, word in enumerate(include + [choose(pool) for _ in range(total - 2 * count - len(include))]):
        lines[i % count].insert(-1, word)
    return "\n".join(" ".join(line) for line in lines)


class CheckerAgent(SeededAgent):
    """The ``checker`` writer and critic; see the module docstring."""

    name = "checker"

    def choose(self, options: list[str]) -> str:
        """A word among ``options``, at random."""
        return options[int(self.rng.integers(len(options)))]

    def act(self, observation: Mapping[str, Any]) -> str:
        """A text that meets every constraint, or the checker's verdict on the draft."""
        view = observation["view"]
        constraints = view["constraints"]
        if view["player"] == "writer":
            return f"<text>\n{satisfying_text(constraints, self.choose)}\n</text>"
        broken = [i for i, c in enumerate(constraints, start=1) if not check(c, view["draft"])]
        if not broken:
            return "Every constraint is met. [verdict] none"
        comments = " ".join(f"Constraint {i} fails: it asks for {describe(constraints[i - 1])}." for i in broken)
        return f"{comments} [verdict] {', '.join(map(str, broken))}"


class WritingRandomAgent(RandomAgent):
    """Random words as a writer, a random verdict as a critic."""

    def free_move(self, observation: Mapping[str, Any]) -> str:
        """Random lines of vocabulary words, or a random subset of the constraints as the verdict."""
        view = observation["view"]
        if view["player"] == "writer":
            lines = [
                " ".join(VOCABULARY[int(i)] for i in self.rng.integers(len(VOCABULARY), size=int(self.rng.integers(2, 9))))
                for _ in range(int(self.rng.integers(1, 7)))
            ]
            return "<text>\n" + "\n".join(lines) + "\n</text>"
        named = [i for i in range(1, len(view["constraints"]) + 1) if self.rng.random() < 0.5]
        return f"[verdict] {', '.join(map(str, named)) or 'none'}"


register_scripted("checker", ENV_ID, CheckerAgent)
register_scripted("random", ENV_ID, WritingRandomAgent)
