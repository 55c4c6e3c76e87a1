"""The ``heuristic`` agent for LeducHoldem: bets by hand strength, with an occasional bluff."""

from __future__ import annotations

from typing import Any, Mapping

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.seeded import SeededAgent

KING = 2
#: How often a jack opens with a raise when nothing is owed in round 1.
BLUFF_RATE = 0.1


class HeuristicAgent(SeededAgent):
    """Hand-strength play: raise strong hands, call medium ones, fold weak ones facing a bet.

    Round 1: a king raises, a queen calls, a jack checks (bluff-raising now and
    then) and folds to a raise. Round 2: a pair raises, a king calls, anything
    else checks and folds to a bet.
    """

    name = "heuristic"

    def act(self, observation: Mapping[str, Any]) -> str:
        """Fold, call or raise for the hand in ``observation["view"]``."""
        view = observation["view"]
        legal = observation["legal_moves"]
        rank, owed = view["rank"], view["owed"]
        if view["round"] == 1:
            strength = 2 if rank == KING else 1 if rank == KING - 1 else 0
            if strength == 0 and owed == 0 and self.rng.random() < BLUFF_RATE:
                strength = 2
        else:
            strength = 2 if rank == view["public_rank"] else 1 if rank == KING else 0
        if strength == 2 and "raise" in legal:
            return "raise"
        if strength >= 1 or owed == 0:
            return "call"
        return "fold"


register_scripted("heuristic", "parlour/LeducHoldem-v0", HeuristicAgent)
register_ladder("parlour/LeducHoldem-v0", ["random", "heuristic"])
