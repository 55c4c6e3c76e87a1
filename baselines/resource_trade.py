"""Scripted traders for ResourceTrade, speaking the game's text grammar.

Every negotiator weighs one-for-one-kind trades ("I give a units of X; you
give b units of Y") by its own gain at its private values, and estimates the
opponent's gain with the public base values (it cannot know the opponent's
private ones). Each turn it has an *aspiration*: the least own gain it will
accept, between ``hi`` (the best gain any trade offers it now) and 1 (the
smallest strictly profitable gain, values being integers). It accepts a
standing offer worth at least its aspiration, and otherwise offers the trade
that looks best for the opponent among those meeting its aspiration.

* ``boulware``, ``linear``, ``conceder``: time-dependent tactics (Faratin et
  al. 1998, the ANAC family): aspiration ``hi - (hi - 1) * p ** (1 / e)`` at
  progress ``p`` in [0, 1] through the turns, with ``e`` = 0.2, 1 and 5.
* ``hardliner``: aspiration stays at ``hi``.
* ``tit_for_tat``: relative tit-for-tat: concedes from ``hi`` as much as the
  opponent's offers have improved for it since the opponent's first offer.
* ``random``: a uniformly random well-formed move.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from typing import Any, Mapping

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.negotiators import TACTICS, concede
from parlour.baselines.random_agent import RandomAgent
from parlour.envs.negotiation.resource_trade import BASE_VALUES, RESOURCES, offer_text

ENV_ID = "parlour/ResourceTrade-v0"

#: One candidate trade: (what I give, what I get, my gain, the opponent's gain at base values).
Candidate = tuple[dict[str, int], dict[str, int], int, int]


def offer_gain(values: list[int], offer: Mapping[str, Any], me: str) -> int:
    """Gain to ``me``, at ``values``, of an offer (standing, or from the history) made by either side."""
    received, given = (offer["give"], offer["get"]) if offer["to"] == me else (offer["get"], offer["give"])
    worth = dict(zip(RESOURCES, values))
    return sum(worth[r] * n for r, n in received.items()) - sum(worth[r] * n for r, n in given.items())


def candidates(view: Mapping[str, Any]) -> list[Candidate]:
    """Every trade of some units of one resource for some units of another that both sides can make."""
    mine, theirs, values = view["inventory"], view["other_inventory"], view["values"]
    found: list[Candidate] = []
    for i, give in enumerate(RESOURCES):
        for j, get in enumerate(RESOURCES):
            if i == j:
                continue
            for a in range(1, mine[i] + 1):
                for b in range(1, theirs[j] + 1):
                    found.append(({give: a}, {get: b}, b * values[j] - a * values[i], a * BASE_VALUES[i] - b * BASE_VALUES[j]))
    return found


class Negotiator(ABC):
    """Base of the aspiration-driven traders: subclasses define :meth:`aspiration`."""

    name = "negotiator"

    def __init__(self, env_id: str | None = None, seed: int | None = None):
        self.env_id = env_id

    @abstractmethod
    def aspiration(self, view: Mapping[str, Any], hi: int) -> float:
        """The least own gain acceptable now, between 1 and ``hi``."""

    def act(self, observation: Mapping[str, Any]) -> str:
        """Accept a good enough standing offer, else offer the friendliest trade meeting the aspiration."""
        view = observation["view"]
        me = view["player"]
        options = [c for c in candidates(view) if c[2] > 0]
        standing = view["standing_offer"]
        hi = max((c[2] for c in options), default=1)
        target = self.aspiration(view, hi)
        if standing is not None and standing["to"] == me and offer_gain(view["values"], standing, me) >= target:
            return "Deal. [accept]"
        acceptable = [c for c in options if c[2] >= target]
        if not acceptable:
            return "Nothing works for me right now. [pass]"
        give, get, _, _ = max(acceptable, key=lambda c: (c[3], -c[2]))
        return f"Here is a trade that should suit us both. {offer_text(give, get)}"


def progress(view: Mapping[str, Any]) -> float:
    """How far through the game this turn is: 0 on the first turn, 1 on the last."""
    return min(1.0, view["turn"] / max(1, view["deadline"] - 1))


class TimeDependentAgent(Negotiator):
    """Concedes with time: exponent < 1 is Boulware (late), 1 linear, > 1 Conceder (early)."""

    def __init__(self, env_id: str | None = None, seed: int | None = None, *, exponent: float = 1.0, name: str = "linear"):
        super().__init__(env_id, seed)
        self.exponent = exponent
        self.name = name

    def aspiration(self, view: Mapping[str, Any], hi: int) -> float:
        """``hi - (hi - 1) * progress ** (1 / exponent)``."""
        return concede(hi, 1, progress(view), self.exponent)


class HardlinerAgent(Negotiator):
    """Never concedes: asks for and accepts only the best gain available."""

    name = "hardliner"

    def aspiration(self, view: Mapping[str, Any], hi: int) -> float:
        """Always ``hi``."""
        return hi


class TitForTatAgent(Negotiator):
    """Concedes as much as the opponent has conceded to it (relative tit-for-tat)."""

    name = "tit_for_tat"

    def aspiration(self, view: Mapping[str, Any], hi: int) -> float:
        """``hi`` minus the improvement of the opponent's latest offer over its first, at own values."""
        me, values = view["player"], view["values"]
        gains = [offer_gain(values, e, me) for e in view["history"] if e["type"] == "offer" and e["player"] != me]
        conceded = gains[-1] - gains[0] if gains else 0
        return max(1, hi - max(0, conceded))


class ResourceTradeRandomAgent(RandomAgent):
    """Picks uniformly among the moves open to it; offers swap random amounts of random resources."""

    def free_move(self, observation: Mapping[str, Any]) -> str:
        """A random offer, pass, or (when an offer stands for it) accept or deny."""
        view = observation["view"]
        standing = view["standing_offer"]
        moves = ["offer", "pass"]
        if standing is not None and standing["to"] == view["player"]:
            moves += ["accept", "deny"]
        move = moves[int(self.rng.integers(len(moves)))]
        if move != "offer":
            return f"[{move}]"
        give = self.random_bundle(view["inventory"])
        get = self.random_bundle(view["other_inventory"])
        return offer_text(give, get) if give or get else "[pass]"

    def random_bundle(self, inventory: list[int]) -> dict[str, int]:
        """Up to the whole holding of one random resource, possibly nothing."""
        i = int(self.rng.integers(len(RESOURCES)))
        count = int(self.rng.integers(inventory[i] + 1))
        return {RESOURCES[i]: count} if count else {}


for _name, _exponent in TACTICS.items():
    register_scripted(_name, ENV_ID, functools.partial(TimeDependentAgent, exponent=_exponent, name=_name))
register_scripted("hardliner", ENV_ID, HardlinerAgent)
register_scripted("tit_for_tat", ENV_ID, TitForTatAgent)
register_scripted("random", ENV_ID, ResourceTradeRandomAgent)
# Weakest first: the time-dependent tactics from the one that concedes early to the one that never concedes.
register_ladder(ENV_ID, ["conceder", "linear", "boulware", "hardliner"])
