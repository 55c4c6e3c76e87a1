"""Scripted fishers for Commons: ``reciprocator``, ``sustainable``, ``greedy`` and ``random``, speaking the game's text grammar.

* ``sustainable`` always takes an equal share of the regrowth, whatever the others do.
* ``greedy`` asks for the whole stock every round.
* ``reciprocator`` (the game's reference agent) pledges the sustainable share and keeps it while
  everyone else does: every other fisher pledged a harvest no larger in this round's discussion,
  and everyone has taken the same so far. Otherwise the lake is lost anyway, and it asks for the
  whole stock. A return is the fish a player takes, so an unconditional cooperator is what the
  others live off: among random fishers ``sustainable`` takes 15 to their 70 (issue 22), while
  the reciprocator out-fishes them and keeps the lake full for twelve rounds with its own kind.
* ``random`` says a random line or passes and asks for a uniform amount up to the stock.
"""

from __future__ import annotations

import math
import re
from abc import ABC, abstractmethod
from typing import Any, Mapping

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.random_agent import RandomAgent

ENV_ID = "parlour/Commons-v0"

#: Whole numbers in a message: a pledge names the harvest its sender promises.
NUMBER = re.compile(r"(?<![\d.])\d{1,6}(?![\d.])")
RANDOM_MESSAGES = ("Let's be careful with the lake.", "I will fish as I please.", "How much is everyone taking?")


def sustainable_share(view: Mapping[str, Any]) -> int:
    """One player's equal share of the largest total harvest after which regrowth restores the current stock.

    Leaving ``L`` tons regrows to ``L * (1 + growth_rate)`` (capped at
    capacity), so leaving ``ceil(stock / (1 + growth_rate))``, and never less
    than the collapse threshold, keeps the stock where it is.
    """
    stock = view["stock"]
    keep = max(math.ceil(stock / (1 + view["growth_rate"])), view["collapse_threshold"])
    return max(stock - keep, 0) // view["num_players"]


class Fisher(ABC):
    """Base of the deterministic fishers: a line in the discussion phase, a harvest request in the harvest phase."""

    def __init__(self, env_id: str | None = None, seed: int | None = None):
        self.env_id = env_id

    def act(self, observation: Mapping[str, Any]) -> str:
        """:meth:`discuss`'s move in the discussion phase; ``[harvest]`` with :meth:`harvest`'s tons otherwise."""
        view = observation["view"]
        if view["phase"] == "discuss":
            return self.discuss(view)
        return f"[harvest] {self.harvest(observation)}"

    @abstractmethod
    def discuss(self, view: Mapping[str, Any]) -> str:
        """The discussion move (``[say] ...`` or ``[pass]``)."""

    @abstractmethod
    def harvest(self, observation: Mapping[str, Any]) -> int:
        """The tons to ask for; the observation carries this round's discussion messages."""


class SustainableAgent(Fisher):
    """Proposes and takes an equal share of the regrowth, so the stock never shrinks."""

    name = "sustainable"

    def discuss(self, view: Mapping[str, Any]) -> str:
        """Announce the sustainable share."""
        return f"[say] If each of us takes at most {sustainable_share(view)} tons, the lake refills every round."

    def harvest(self, observation: Mapping[str, Any]) -> int:
        """The sustainable share."""
        return sustainable_share(observation["view"])


def pledged(text: str, share: int) -> bool:
    """Whether a discussion message names a harvest of at most ``share`` (every number in it is at most the share)."""
    numbers = [int(number) for number in NUMBER.findall(text)]
    return bool(numbers) and max(numbers) <= share


class ReciprocatorAgent(Fisher):
    """Keeps the sustainable share while everyone pledges and keeps it; takes the whole stock otherwise."""

    name = "reciprocator"

    def discuss(self, view: Mapping[str, Any]) -> str:
        """Pledge the sustainable share, and say what breaking it costs."""
        share = sustainable_share(view)
        return f"[say] I take {share} tons while each of you takes at most {share}; if anyone takes more, I take everything."

    def harvest(self, observation: Mapping[str, Any]) -> int:
        """The share if every other fisher pledged it and all took alike so far; the whole stock otherwise."""
        view = observation["view"]
        share = sustainable_share(view)
        talk = {message["sender"]: message["text"] for message in observation["messages"] if message["kind"] == "talk"}
        others = [player for player in view["harvests"] if player != view["player"]]
        kept = len(set(view["harvests"].values())) == 1
        if kept and all(pledged(talk.get(player, ""), share) for player in others):
            return share
        return view["stock"]


class GreedyAgent(Fisher):
    """Says nothing and asks for the whole stock every round."""

    name = "greedy"

    def discuss(self, view: Mapping[str, Any]) -> str:
        """Pass."""
        return "[pass]"

    def harvest(self, observation: Mapping[str, Any]) -> int:
        """The whole stock."""
        return observation["view"]["stock"]


class CommonsRandomAgent(RandomAgent):
    """Says a random line or passes; harvests a uniform amount between 0 and the stock."""

    def free_move(self, observation: Mapping[str, Any]) -> str:
        """A random discussion move or harvest request."""
        view = observation["view"]
        if view["phase"] == "discuss":
            choice = int(self.rng.integers(len(RANDOM_MESSAGES) + 1))
            return "[pass]" if choice == len(RANDOM_MESSAGES) else f"[say] {RANDOM_MESSAGES[choice]}"
        return f"[harvest] {int(self.rng.integers(view['stock'] + 1))}"


register_scripted("reciprocator", ENV_ID, ReciprocatorAgent)
register_scripted("sustainable", ENV_ID, SustainableAgent)
register_scripted("greedy", ENV_ID, GreedyAgent)
register_scripted("random", ENV_ID, CommonsRandomAgent)
# Weakest first by what the learner can harvest: sustainable fishers leave it a stock, the reciprocator does while it
# harvests sustainably itself, greedy fishers collapse it.
register_ladder(ENV_ID, ["sustainable", "reciprocator", "greedy"])
