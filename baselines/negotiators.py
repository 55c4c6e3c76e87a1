"""Scripted negotiators for Bargaining, PriceNegotiation and Ultimatum, speaking the games' text grammar.

Every negotiator reads ``observation["view"]`` and answers with the same text
an LLM would write (``[propose] ...``, ``[offer] 120``, ``[accept]``, ...).
They share one frame: a game is seen through a :class:`Position` in the
negotiator's own utility -- its aspiration range ``[low, high]``, the time
``t`` in [0, 1] (0 at the first turn, 1 at the last), the utility to it of the
other side's offers so far, and how to write an offer worth a target utility.

* ``boulware``, ``linear``, ``conceder``: time-dependent tactics of the ANAC
  literature (Faratin et al. 1998). The target utility at time ``t`` is
  ``high - (high - low) * t ** (1 / e)`` with ``e`` = 0.2, 1 and 5: Boulware
  holds out until the deadline, Conceder gives ground early.
* ``tit_for_tat``: relative tit-for-tat; opens at ``high`` and concedes, in
  its own utility, as much in total as the other side's offers have conceded
  to it since its first one.
* ``hardliner``: opens at ``high`` and never concedes.

All of them accept an offer worth at least their current target (at the
deadline the target of the time-dependent tactics reaches ``low``). Aspiration
ranges: in Bargaining, from the whole pool's value down to the disagreement
payoff; in PriceNegotiation, from the surplus of the most extreme price down to
0; in Ultimatum, the proposer's kept share goes from the pie down to half the
pie and the responder's accepted share from half the pie down to 0, with
``t`` the round number over the number of rounds (so a one-shot game is played
at ``t = 0``). Ultimatum's ``tit_for_tat`` mirrors the other side instead: as
proposer it offers what it was last offered (half the pie at first), as
responder it accepts any offer not lower than the previous one it received.

The ``random`` negotiators write well-formed random moves for these games.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.random_agent import RandomAgent
from parlour.envs.negotiation.bargaining import bundle_text

BARGAINING = "parlour/Bargaining-v0"
PRICE = "parlour/PriceNegotiation-v0"
ULTIMATUM = "parlour/Ultimatum-v0"
ENV_IDS = [BARGAINING, PRICE, ULTIMATUM]


@dataclass
class Position:
    """A negotiation seen in one negotiator's own utility (see the module docstring)."""

    low: float
    high: float
    t: float
    standing: float | None
    opponent_offers: list[float]
    offer: Callable[[float], str]
    accept: str


def _bargaining(view: Mapping[str, Any]) -> Position:
    """Bargaining: utilities are the values of the bundles kept; offers are the cheapest bundles meeting the target."""
    pool, values, me = view["pool"], view["values"], view["player"]

    def worth(counts: list[int]) -> float:
        return float(sum(v * c for v, c in zip(values, counts)))

    def rest(keep: list[int]) -> list[int]:
        return [p - k for p, k in zip(pool, keep)]

    theirs = [p["keep"] for p in view["proposals"] if p["player"] != me]
    # The other side keeps what it wants: items it keeps often are guessed to be worth more to it.
    wanted = [sum(k[i] for k in theirs) / pool[i] if pool[i] else 0.0 for i in range(len(pool))]

    def offer(target: float) -> str:
        bundles = [list(b) for b in itertools.product(*(range(c + 1) for c in pool))]
        meeting = [b for b in bundles if worth(b) >= target - 1e-9] or [list(pool)]
        best = min(meeting, key=lambda b: (worth(b), -sum(w * r for w, r in zip(wanted, rest(b))), b))
        return f"[propose] {bundle_text(best, view['items'])}"

    standing = view["standing"]
    last = max(view["deadline"] - 1, 1)
    return Position(
        low=float(view["disagreement"]),
        high=worth(pool),
        t=min(view["turn"] / last, 1.0),
        standing=worth(rest(standing["keep"])) if standing and standing["player"] != me else None,
        opponent_offers=[worth(rest(k)) for k in theirs],
        offer=offer,
        accept="[accept]",
    )


def _price(view: Mapping[str, Any]) -> Position:
    """PriceNegotiation: utility is surplus; the seller's best price is ``max_price``, the buyer's 0."""
    side, reservation = view["player"], view["reservation"]
    seller = side == "seller"

    def surplus(price: float) -> float:
        return float(price - reservation if seller else reservation - price)

    def offer(target: float) -> str:
        price = reservation + target if seller else reservation - target
        price = math.ceil(price - 1e-9) if seller else math.floor(price + 1e-9)
        return f"[offer] {int(min(max(price, 0), view['max_price']))}"

    standing = view["standing"]
    last = max(view["deadline"] - 1, 1)
    return Position(
        low=0.0,
        high=surplus(view["max_price"] if seller else 0),
        t=min(view["turn"] / last, 1.0),
        standing=surplus(standing["price"]) if standing and standing["player"] != side else None,
        opponent_offers=[surplus(o["price"]) for o in view["offers"] if o["player"] != side],
        offer=offer,
        accept="[accept]",
    )


def _ultimatum(view: Mapping[str, Any]) -> Position:
    """Ultimatum: the proposer's utility is its kept share, the responder's the offered share."""
    pie, me = view["pie"], view["player"]
    proposing = view["role"] == "proposer"
    received = [float(h["offer"]) for h in view["history"] if h["proposer"] != me]
    return Position(
        low=pie / 2 if proposing else 0.0,
        high=float(pie) if proposing else pie / 2,
        t=view["round"] / view["rounds"],
        standing=None if proposing else float(view["offer"]),
        opponent_offers=received,
        offer=lambda target: f"[offer] {int(pie - math.ceil(target - 1e-9))}",
        accept="[accept]",
    )


POSITIONS: dict[str, Callable[[Mapping[str, Any]], Position]] = {BARGAINING: _bargaining, PRICE: _price, ULTIMATUM: _ultimatum}


#: The time-dependent tactics of the ANAC literature and their concession exponents.
TACTICS = {"boulware": 0.2, "linear": 1.0, "conceder": 5.0}


def concede(high: float, low: float, t: float, e: float) -> float:
    """The aspiration at time ``t`` in [0, 1] of a tactic with exponent ``e``: ``high - (high - low) * t ** (1 / e)``."""
    return high - (high - low) * t ** (1 / e)


class Negotiator:
    """Base of the scripted negotiators: accept an offer meeting the target, otherwise offer at the target.

    In PriceNegotiation's critic seat a negotiator gives fixed advice.
    """

    name = "negotiator"

    def __init__(self, env_id: str | None = None, seed: int | None = None):
        if env_id not in POSITIONS:
            raise ValueError(f"{self.name} negotiates in {', '.join(POSITIONS)}, not {env_id}")
        # A subclass may negotiate with another game's position and keep its own id (WalkAwayNegotiator).
        self.env_id: str | None = env_id
        self.position = POSITIONS[env_id]

    def reset(self, seed: int | None = None) -> None:
        """Nothing to reset: the negotiators are deterministic and read everything from the view."""

    def target(self, position: Position) -> float:
        """The utility this negotiator aims for now."""
        raise NotImplementedError

    def act(self, observation: Mapping[str, Any]) -> str:
        """Accept the standing offer if it meets the target, else offer at the target."""
        if observation["view"]["player"] == "critic":
            return "Concede slowly and make the other side move first."
        position = self.position(observation["view"])
        target = self.target(position)
        if position.standing is not None and position.standing >= target - 1e-9:
            return position.accept
        if position.standing is not None and self.env_id == ULTIMATUM:
            return "[reject]"
        return position.offer(target)


class TimeDependent(Negotiator):
    """Time-dependent concession with exponent ``e``: Boulware (e < 1), linear (e = 1), Conceder (e > 1)."""

    def __init__(self, env_id: str | None = None, seed: int | None = None, *, e: float = 1.0, name: str = "linear"):
        super().__init__(env_id, seed)
        self.e = e
        self.name = name

    def target(self, position: Position) -> float:
        """``high - (high - low) * t ** (1 / e)``."""
        return concede(position.high, position.low, position.t, self.e)


class Hardliner(Negotiator):
    """Opens at its best outcome and never concedes."""

    name = "hardliner"

    def target(self, position: Position) -> float:
        """Always the top of the aspiration range."""
        return position.high


class TitForTat(Negotiator):
    """Relative tit-for-tat: concedes as much as the other side's last offer conceded (Ultimatum: mirrors offers)."""

    name = "tit_for_tat"

    def target(self, position: Position) -> float:
        """The opening target lowered by the other side's total concession so far, never below ``low``."""
        offers = position.opponent_offers
        conceded = max(offers[-1] - offers[0], 0.0) if len(offers) > 1 else 0.0
        return max(position.high - conceded, position.low)

    def act(self, observation: Mapping[str, Any]) -> str:
        """Bargaining and PriceNegotiation as the base; Ultimatum by mirroring."""
        if self.env_id != ULTIMATUM:
            return super().act(observation)
        view = observation["view"]
        received = [h["offer"] for h in view["history"] if h["proposer"] != view["player"]]
        if view["role"] == "proposer":
            return f"[offer] {received[-1] if received else view['pie'] // 2}"
        return "[accept]" if not received or view["offer"] >= received[-1] else "[reject]"


class RandomNegotiator(RandomAgent):
    """Well-formed random moves with a little talk, for Bargaining, PriceNegotiation and Ultimatum."""

    TALK = ("", "Let's make a deal. ", "That is my final word. ", "I can do better than that. ")

    def free_move(self, observation: Mapping[str, Any]) -> str:
        """A random proposal, offer, acceptance or pass, valid in the current position."""
        view = observation["view"]
        talk = self.TALK[int(self.rng.integers(len(self.TALK)))]
        if self.env_id == ULTIMATUM:
            if view["role"] == "proposer":
                return f"{talk}[offer] {int(self.rng.integers(view['pie'] + 1))}"
            return talk + ("[accept]" if self.rng.random() < 0.5 else "[reject]")
        if view["player"] == "critic":
            return f"{talk}Advice: aim for {int(self.rng.integers(view['max_price'] + 1))}."
        standing = view["standing"]
        roll = self.rng.random()
        if standing is not None and standing["player"] != view["player"] and roll < 0.2:
            return f"{talk}[accept]"
        if roll > 0.9:
            return f"{talk}[pass]"
        if self.env_id == BARGAINING:
            keep = [int(self.rng.integers(c + 1)) for c in view["pool"]]
            return f"{talk}[propose] {bundle_text(keep, view['items'])}"
        return f"{talk}[offer] {int(self.rng.integers(view['max_price'] + 1))}"


for _name, _e in TACTICS.items():
    register_scripted(_name, ENV_IDS, functools.partial(TimeDependent, e=_e, name=_name))
register_scripted("tit_for_tat", ENV_IDS, TitForTat)
register_scripted("hardliner", ENV_IDS, Hardliner)
register_scripted("random", ENV_IDS, RandomNegotiator)
# Weakest first: the time-dependent tactics from the one that concedes early to the one that never concedes.
for _env_id in ENV_IDS:
    register_ladder(_env_id, ["conceder", "linear", "boulware", "hardliner"])
