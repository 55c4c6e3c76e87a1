"""Scripted negotiators for DealOrWalk: the time-dependent tactics of :mod:`parlour.baselines.negotiators`, with a floor.

DealOrWalk's view speaks Bargaining's (pool, values, proposals, standing,
turn, deadline, and the payoff without a deal as ``disagreement``, here the
player's walk-away value), so the negotiators see it through Bargaining's
:class:`parlour.baselines.negotiators.Position`: the aspiration runs from the
whole pool's worth down to the walk-away value, never below it.

* ``boulware``, ``linear``, ``conceder``: target ``high - (high - low) *
  t ** (1 / e)`` with ``e`` = 0.2, 1 and 5; accept a standing proposal worth
  at least the target, else propose the cheapest split meeting it (items the
  other side kept in its proposals are given up first). On the game's last
  turn, where a proposal can no longer be accepted, they walk instead.
* ``random``: a random proposal, acceptance (when one stands), pass, or
  walk (rarely), with a little talk.

Version history: v0, first release.
"""

from __future__ import annotations

import functools
from typing import Any, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.negotiators import BARGAINING, TACTICS, TimeDependent
from parlour.baselines.random_agent import RandomAgent
from parlour.envs.negotiation.bargaining import bundle_text

ENV_ID = "parlour/DealOrWalk-v1"
#: How often the random negotiator walks on a turn.
RANDOM_WALK = 0.05


class WalkAwayNegotiator(TimeDependent):
    """A time-dependent negotiator whose floor is its walk-away value, walking on the last turn without a deal."""

    def __init__(self, env_id: str | None = None, seed: int | None = None, *, e: float = 1.0, name: str = "linear"):
        # The position of Bargaining reads DealOrWalk's view as it is: the walk-away value is its disagreement payoff.
        super().__init__(BARGAINING, seed, e=e, name=name)
        self.env_id = env_id

    def act(self, observation: Mapping[str, Any]) -> str:
        """Accept a proposal meeting the target; else walk on the game's last turn, propose at the target before it."""
        view = observation["view"]
        move = super().act(observation)
        if move != "[accept]" and view["turn"] >= view["deadline"] - 1:
            return "No deal, then. [walk]"
        return move


class DealOrWalkRandomAgent(RandomAgent):
    """Random well-formed moves: proposals, acceptances, passes and (rarely) walks."""

    TALK = ("", "Let's make a deal. ", "I have other options. ", "That is my final word. ")

    def free_move(self, observation: Mapping[str, Any]) -> str:
        """A random move valid in the current position."""
        view = observation["view"]
        talk = self.TALK[int(self.rng.integers(len(self.TALK)))]
        standing = view["standing"]
        roll = self.rng.random()
        if roll < RANDOM_WALK:
            return f"{talk}[walk]"
        if standing is not None and standing["player"] != view["player"] and roll < 0.25:
            return f"{talk}[accept]"
        if roll > 0.9:
            return f"{talk}[pass]"
        keep = [int(self.rng.integers(c + 1)) for c in view["pool"]]
        return f"{talk}[propose] {bundle_text(keep, view['items'])}"


for _name, _e in TACTICS.items():
    register_scripted(_name, ENV_ID, functools.partial(WalkAwayNegotiator, e=_e, name=_name))
register_scripted("random", ENV_ID, DealOrWalkRandomAgent)
