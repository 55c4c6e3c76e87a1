"""The ``matching`` agent for Goofspiel: bid the card whose value is the prize's.

Played from the start, matching always holds the card it wants (the prizes
and its hand are spent value for value), spends its big cards only on big
prizes, and against a uniformly random bidder wins most games. Taken over
mid-game, it bids the card in hand nearest the prize, the lower one on a tie.
"""

from __future__ import annotations

from typing import Any, Mapping

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.seeded import SeededAgent


class MatchingAgent(SeededAgent):
    """Bids the prize's value, or the nearest card in hand when that one is spent."""

    name = "matching"

    def act(self, observation: Mapping[str, Any]) -> str:
        """The bid for the prize up in ``observation["view"]``."""
        view = observation["view"]
        prize = view["prize"]
        return f"bid {min(view['hand'], key=lambda card: (abs(card - prize), card))}"


register_scripted("matching", "parlour/Goofspiel-v0", MatchingAgent)
register_ladder("parlour/Goofspiel-v0", ["random", "matching"])
