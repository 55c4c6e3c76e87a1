"""Scripted traders for Market, speaking the game's text grammar.

* ``shading``: a value-based trader in the spirit of Gode and Sunder's
  budget-constrained zero-intelligence traders and Cliff's ZIP: it never buys
  above or sells below its own value. Each turn it first takes the most
  profitable standing order of another trader (an ask below its value, a bid
  above it), by meeting its price; otherwise it quotes around its value, a
  bid at ``value * (1 - m)`` and an ask at ``value * (1 + m)``, with the margin
  ``m`` shrinking from 30% in the first round to 5% in the last, so it trades
  more readily as the close nears. It quotes first the goods it is most
  likely to trade (a bid where its value is furthest above the public base,
  an ask where it is furthest below), refreshing only quotes that are missing
  or off target, and passes when none is.
* ``random``: a random well-formed order (a good at random, a price uniform
  from 1 to twice the good's base value) or a pass, with a little talk.

Version history: v0, first release.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.random_agent import RandomAgent
from parlour.baselines.seeded import SeededAgent

ENV_ID = "parlour/Market-v0"
#: The shading trader's margin over or under its value in the first round and in the last.
OPENING_MARGIN, CLOSING_MARGIN = 0.30, 0.05


def standing(view: Mapping[str, Any], player: str, good: str, side: str) -> int | None:
    """The price of ``player``'s standing order on ``side`` of ``good``, if any."""
    return next((o["price"] for o in view["orders"] if o["player"] == player and o["good"] == good and o["side"] == side), None)


def free_coins(view: Mapping[str, Any], good: str) -> int:
    """Coins a new bid on ``good`` may use: the trader's coins less those committed to its bids on other goods."""
    me = view["player"]
    return view["money"] - sum(o["price"] for o in view["orders"] if o["player"] == me and o["side"] == "bid" and o["good"] != good)


def allowed(view: Mapping[str, Any], side: str, good: str, price: int) -> bool:
    """Whether the game accepts this order from the viewing trader (see the rules in :mod:`parlour.envs.negotiation.market`)."""
    me = view["player"]
    if not 1 <= price <= view["max_price"]:
        return False
    if side == "bid":
        own = standing(view, me, good, "ask")
        return price <= free_coins(view, good) and (own is None or price < own)
    own = standing(view, me, good, "bid")
    return view["holdings"][view["goods"].index(good)] > 0 and (own is None or price > own)


class ShadingTrader(SeededAgent):
    """The ``shading`` trader: takes profitable standing orders, else quotes around its values; see the module docstring."""

    name = "shading"

    def act(self, observation: Mapping[str, Any]) -> str:
        """Take the best profitable order, else refresh the most promising quote, else pass."""
        view = observation["view"]
        me, goods, values, bases = view["player"], view["goods"], view["values"], view["base_values"]
        takes = []
        for good, value in zip(goods, values):
            others = [o for o in view["orders"] if o["good"] == good and o["player"] != me]
            asks = [o["price"] for o in others if o["side"] == "ask" and o["price"] < value]
            bids = [o["price"] for o in others if o["side"] == "bid" and o["price"] > value]
            if asks and allowed(view, "bid", good, min(asks)):
                takes.append((value - min(asks), "bid", good, min(asks)))
            if bids and allowed(view, "ask", good, max(bids)):
                takes.append((max(bids) - value, "ask", good, max(bids)))
        if takes:
            _, side, good, price = max(takes)
            return f"That {good} suits me. [{side}] {good} {price}"
        progress = min(1.0, view["round"] / max(1, view["rounds"] - 1))
        margin = OPENING_MARGIN + (CLOSING_MARGIN - OPENING_MARGIN) * progress
        quotes = []
        for good, value, base in zip(goods, values, bases):
            bid, ask = max(1, math.floor(value * (1 - margin))), math.ceil(value * (1 + margin))
            quotes.append(((value - base) / base, "bid", good, bid))
            quotes.append(((base - value) / base, "ask", good, ask))
        for _, side, good, price in sorted(quotes, reverse=True):
            if standing(view, me, good, side) != price and allowed(view, side, good, price):
                return f"[{side}] {good} {price}"
        return "[pass]"


class MarketRandomAgent(RandomAgent):
    """Random well-formed orders and passes, with a little talk."""

    TALK = ("", "Fair prices here. ", "I will not go lower. ", "Who is buying? ")

    def free_move(self, observation: Mapping[str, Any]) -> str:
        """A random bid or ask on a random good at a random price if the game would accept it, else a pass."""
        view = observation["view"]
        talk = self.TALK[int(self.rng.integers(len(self.TALK)))]
        side = ("bid", "ask", "pass")[int(self.rng.integers(3))]
        i = int(self.rng.integers(len(view["goods"])))
        good = view["goods"][i]
        price = int(self.rng.integers(1, min(2 * view["base_values"][i], view["max_price"]) + 1))
        if side == "pass" or not allowed(view, side, good, price):
            return f"{talk}[pass]"
        return f"{talk}[{side}] {good} {price}"


register_scripted("shading", ENV_ID, ShadingTrader)
register_scripted("random", ENV_ID, MarketRandomAgent)
