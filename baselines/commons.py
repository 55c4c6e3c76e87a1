"""Scripted fishers for Commons: ``sustainable``, ``greedy`` and ``random``, speaking the game's text grammar."""

from __future__ import annotations

import math
from typing import Any, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.random_agent import RandomAgent

ENV_ID = "parlour/Commons-v0"

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


class SustainableAgent:
    """Proposes and takes an equal share of the regrowth, so the stock never shrinks."""

    name = "sustainable"

    def __init__(self, env_id: str | None = None, seed: int | None = None):
        self.env_id = env_id

    def act(self, observation: Mapping[str, Any]) -> str:
        """Announce the sustainable share in the discussion, harvest it in the harvest phase."""
        view = observation["view"]
        share = sustainable_share(view)
        if view["phase"] == "discuss":
            return f"[say] If each of us takes at most {share} tons, the lake refills every round."
        return f"[harvest] {share}"


class GreedyAgent:
    """Says nothing and asks for the whole stock every round."""

    name = "greedy"

    def __init__(self, env_id: str | None = None, seed: int | None = None):
        self.env_id = env_id

    def act(self, observation: Mapping[str, Any]) -> str:
        """Pass in the discussion; request everything in the harvest."""
        view = observation["view"]
        if view["phase"] == "discuss":
            return "[pass]"
        return f"[harvest] {view['stock']}"


class CommonsRandomAgent(RandomAgent):
    """Says a random line or passes; harvests a uniform amount between 0 and the stock."""

    def free_move(self, observation: Mapping[str, Any]) -> str:
        """A random discussion move or harvest request."""
        view = observation["view"]
        if view["phase"] == "discuss":
            choice = int(self.rng.integers(len(RANDOM_MESSAGES) + 1))
            return "[pass]" if choice == len(RANDOM_MESSAGES) else f"[say] {RANDOM_MESSAGES[choice]}"
        return f"[harvest] {int(self.rng.integers(view['stock'] + 1))}"


register_scripted("sustainable", ENV_ID, SustainableAgent)
register_scripted("greedy", ENV_ID, GreedyAgent)
register_scripted("random", ENV_ID, CommonsRandomAgent)
