"""Scripted IteratedPrisonersDilemma agents: ``tit_for_tat``, ``always_defect``, ``always_cooperate`` and ``random``.

In games with communication each fixed strategy sends its own fixed message in
the talk phase, and ``random`` a random short one.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Mapping

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.random_agent import RandomAgent
from parlour.envs.games.iterated_prisoners_dilemma import CHOICES

ENV_ID = "parlour/IteratedPrisonersDilemma-v0"
WORDS = ["let's", "cooperate", "defect", "trust", "me", "you", "I", "will", "maybe", "deal", "no", "yes", "together", "win"]

#: A strategy maps the past rounds (``{"you": ..., "opponent": ...}`` each) to this round's choice.
Strategy = Callable[[list[dict[str, str]]], str]


def tit_for_tat(history: list[dict[str, str]]) -> str:
    """Cooperate first, then repeat the opponent's previous choice."""
    return history[-1]["opponent"] if history else "cooperate"


def always_defect(history: list[dict[str, str]]) -> str:
    """Defect every round."""
    return "defect"


def always_cooperate(history: list[dict[str, str]]) -> str:
    """Cooperate every round."""
    return "cooperate"


#: name -> (strategy, talk-phase message)
STRATEGIES: dict[str, tuple[Strategy, str]] = {
    "tit_for_tat": (tit_for_tat, "I start by cooperating, then I do whatever you did in the previous round."),
    "always_defect": (always_defect, "I will defect."),
    "always_cooperate": (always_cooperate, "I will cooperate."),
}


class FixedStrategyAgent:
    """Plays a deterministic strategy of the history and sends a fixed message in talk phases."""

    def __init__(self, name: str, env_id: str | None = None, seed: int | None = None):
        self.name = name
        self.strategy, self.message = STRATEGIES[name]

    def reset(self, seed: int | None = None) -> None:
        """Nothing to reset: the strategy is deterministic and reads the history from the view."""

    def act(self, observation: Mapping[str, Any]) -> str:
        """The talk-phase message, or the strategy's choice for this round."""
        view = observation["view"]
        if view["phase"] == "talk":
            return self.message
        return self.strategy(view["history"])


class RandomTalker(RandomAgent):
    """Uniformly random choices; in talk phases a random message of a few words."""

    def free_move(self, observation: Mapping[str, Any]) -> str:
        """A random message in the talk phase, a random choice in the decision phase."""
        if observation["view"]["phase"] == "talk":
            length = int(self.rng.integers(1, 8))
            return " ".join(WORDS[int(i)] for i in self.rng.integers(len(WORDS), size=length))
        return CHOICES[int(self.rng.integers(len(CHOICES)))]


for strategy_name in STRATEGIES:
    register_scripted(strategy_name, ENV_ID, functools.partial(FixedStrategyAgent, strategy_name))
register_scripted("random", ENV_ID, RandomTalker)
# Weakest first by what a learner can earn against each: 5 a round by defecting on always_cooperate, 3 by cooperating
# with tit_for_tat, 1 against always_defect.
register_ladder(ENV_ID, ["always_cooperate", "tit_for_tat", "always_defect"])
