"""ColonelBlotto agents: ``nash`` (an equilibrium mixed strategy), ``heuristic`` (a nearly even split with random
jitter) and ``random``.

``nash`` plays a mixed strategy computed by regret matching on the round's payoff matrix (every allocation
against every other: +1 for winning more fields, -1 for fewer, 0 for a tie). Blotto is symmetric and
zero-sum, so an equilibrium strategy loses nothing in expectation to any opponent, and it takes points from
any strategy that is not one (the even split, a uniformly random allocation). Rounds are independent, so it
plays the round's equilibrium every round. Configurations with more than :data:`MAX_EQUILIBRIUM_MOVES`
allocations are too large to solve here and are refused.

``random`` draws a uniformly random allocation, also in configurations too
large to enumerate, where the generic random agent has no move list.
"""

from __future__ import annotations

import functools
from typing import Any, Mapping

import numpy as np

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.random_agent import RandomAgent
from parlour.baselines.seeded import SeededAgent
from parlour.envs.games.colonel_blotto import allocation_name, compositions

ENV_ID = "parlour/ColonelBlotto-v0"
#: Dirichlet concentration of the field weights: large enough to stay near the even split
#: (which beats uniformly random allocations), small enough not to be predictable.
CONCENTRATION = 10.0
#: The most allocations whose equilibrium ``nash`` computes (the payoff matrix is this squared).
MAX_EQUILIBRIUM_MOVES = 2000
#: Regret-matching iterations: the average strategy's exploitability falls as one over the square root.
EQUILIBRIUM_ITERATIONS = 4000


@functools.lru_cache(maxsize=8)
def equilibrium(soldiers: int, fields: int) -> tuple[tuple[tuple[int, ...], ...], np.ndarray]:
    """An approximate equilibrium of one round: the allocations and the probability of each.

    Regret matching plus (negative regrets reset to zero) in self-play; in a two-player zero-sum game the
    average strategy converges to an equilibrium. Deterministic: no randomness is drawn.
    """
    allocations = tuple(compositions(soldiers, fields))
    if len(allocations) > MAX_EQUILIBRIUM_MOVES:
        raise ValueError(
            f"nash solves Blotto with at most {MAX_EQUILIBRIUM_MOVES} allocations; {soldiers} soldiers over "
            f"{fields} fields have {len(allocations)}: use heuristic there"
        )
    mine = np.array(allocations)
    fields_won = (mine[:, None, :] > mine[None, :, :]).sum(axis=2)
    fields_lost = (mine[:, None, :] < mine[None, :, :]).sum(axis=2)
    payoff = np.sign(fields_won - fields_lost).astype(float)
    regrets = np.zeros(len(allocations))
    average = np.zeros(len(allocations))
    for iteration in range(1, EQUILIBRIUM_ITERATIONS + 1):
        positive = np.maximum(regrets, 0.0)
        strategy = positive / positive.sum() if positive.sum() > 0 else np.full(len(allocations), 1 / len(allocations))
        values = payoff @ strategy  # each allocation's payoff against the current strategy (the game is symmetric)
        regrets = np.maximum(regrets + values - strategy @ values, 0.0)
        average += iteration * strategy  # linear averaging: later, better strategies weigh more
    return allocations, average / average.sum()


class NashAgent(SeededAgent):
    """Draws each round's allocation from an equilibrium of the round (see the module docstring)."""

    name = "nash"

    def act(self, observation: Mapping[str, Any]) -> str:
        """An allocation drawn from the equilibrium for ``soldiers`` over ``fields`` from ``observation["view"]``."""
        view = observation["view"]
        allocations, probabilities = equilibrium(view["soldiers"], view["fields"])
        return allocation_name(allocations[int(self.rng.choice(len(allocations), p=probabilities))])


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


register_scripted("nash", ENV_ID, NashAgent)
register_scripted("heuristic", ENV_ID, HeuristicAgent)
register_scripted("random", ENV_ID, RandomAllocationAgent)
# nash and ppo are left off: a random allocator does better against them than against random (nash, unexploitable,
# does not exploit it), so they would not climb.
register_ladder(ENV_ID, ["random", "heuristic"])
