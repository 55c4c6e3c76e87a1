"""ColonelBlotto agents: ``heuristic`` (a nearly even split with random jitter) and ``random``.

``random`` draws a uniformly random allocation, also in configurations too
large to enumerate, where the generic random agent has no move list.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from parlour.baselines import register_scripted
from parlour.baselines.seeded import SeededAgent
from parlour.baselines.random_agent import RandomAgent
from parlour.envs.games.colonel_blotto import allocation_name

ENV_ID = "parlour/ColonelBlotto-v0"
#: Dirichlet concentration of the field weights: large enough to stay near the even split
#: (which beats uniformly random allocations), small enough not to be predictable.
CONCENTRATION = 10.0


class HeuristicAgent(SeededAgent):
    """Splits the soldiers by random weights close to equal, so that no field is left nearly empty."""

    name = "heuristic"

    def act(self, observation: Mapping[str, Any]) -> str:
        """An allocation of ``soldiers`` over ``fields`` from ``observation["view"]``."""
        view = observation["view"]
        fields, soldiers = view["fields"], view["soldiers"]
        weights = self.rng.dirichlet(np.full(fields, CONCENTRATION))
        allocation = np.floor(weights * soldiers).astype(int)
        # Flooring leaves fewer than ``fields`` soldiers over; they go to distinct random fields.
        leftover = soldiers - int(allocation.sum())
        allocation[self.rng.choice(fields, size=leftover, replace=False)] += 1
        return allocation_name([int(n) for n in allocation])


class RandomAllocationAgent(RandomAgent):
    """Uniform over all allocations: the legal move list when there is one, stars and bars otherwise."""

    def free_move(self, observation: Mapping[str, Any]) -> str:
        """A uniformly random allocation: ``fields - 1`` distinct bar positions among ``soldiers + fields - 1`` slots."""
        view = observation["view"]
        fields, soldiers = view["fields"], view["soldiers"]
        bars = np.sort(self.rng.choice(soldiers + fields - 1, size=fields - 1, replace=False))
        edges = np.concatenate([[-1], bars, [soldiers + fields - 1]])
        return allocation_name([int(n) for n in np.diff(edges) - 1])


register_scripted("heuristic", ENV_ID, HeuristicAgent)
register_scripted("random", ENV_ID, RandomAllocationAgent)
