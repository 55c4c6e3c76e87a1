"""Outcome analysis shared by every negotiation game: Pareto frontier, Nash bargaining solution, Gini.

A negotiation game enumerates its *feasible outcomes* (the utility vector of
every deal the rules allow, one coordinate per player) and calls
:func:`negotiation_report` when it ends; the report goes into the final
outcome's ``details``. Everything returned is plain JSON (floats, bools, lists,
dicts of those).

Normalisation of distances (:func:`negotiation_report`): each player's utility
is rescaled to [0, 1] over the game's utility range, i.e. over the feasible
outcomes together with the disagreement point, ``(u_i - min_i) / (max_i -
min_i)`` (a player whose utility cannot vary gets 0 in every vector). A
distance is the Euclidean distance between rescaled vectors divided by
``sqrt(n)`` for ``n`` players, so it lies in [0, 1]: 0 means the point itself,
1 means opposite corners of the utility box.

The part that depends only on the game's instance (the feasible outcomes and
the disagreement point: their frontier, Nash solutions and rescaling) is a
:class:`NegotiationSpace`; a game that meets the same instance again (a
replay, a branch from a snapshot, another agent on the same seed) can keep it
and pay only :meth:`NegotiationSpace.report` at its end.
"""

from __future__ import annotations

import bisect
import math
import operator
from itertools import repeat
from typing import Any, Mapping, Sequence

import numpy as np

Vector = tuple[float, ...]


def gini(values: Sequence[float]) -> float:
    """The Gini coefficient of non-negative ``values``: 0 for perfect equality (or all zero), up to ``1 - 1/n``.

    Computed as the mean absolute difference over all ordered pairs divided by
    twice the mean.
    """
    xs = [float(v) for v in values]
    if any(x < 0 for x in xs):
        raise ValueError(f"gini needs non-negative values, got {xs}")
    n = len(xs)
    total = sum(xs)
    if n == 0 or total == 0:
        return 0.0
    # Sorted form of sum_i sum_j |x_i - x_j| / (2 n^2 mean), linear after sorting.
    ordered = sorted(xs)
    weighted = sum((2 * (i + 1) - n - 1) * x for i, x in enumerate(ordered))
    return weighted / (n * total)


def _dominates(a: Vector, b: Vector) -> bool:
    """Whether ``a`` is at least as good as ``b`` for everyone and better for someone."""
    return all(x >= y for x, y in zip(a, b)) and any(x > y for x, y in zip(a, b))


def pareto_frontier(outcomes: Sequence[Sequence[float]]) -> list[tuple[float, ...]]:
    """The distinct non-dominated utility vectors among ``outcomes``, sorted in decreasing lexicographic order."""
    return _frontier({tuple(map(float, o)) for o in outcomes})


def _frontier(vectors: set[Vector]) -> list[Vector]:
    """:func:`pareto_frontier` of distinct vectors of floats."""
    candidates = sorted(vectors, reverse=True)
    if candidates and len(candidates[0]) == 2:
        # Two players: in decreasing lexicographic order a point is undominated
        # exactly when it beats every earlier point on the second utility.
        frontier2: list[Vector] = []
        best_second = -math.inf
        for candidate in candidates:
            if candidate[1] > best_second:
                frontier2.append(candidate)
                best_second = candidate[1]
        return frontier2
    frontier: list[Vector] = []
    # In decreasing lexicographic order, a dominating vector always comes before
    # the vectors it dominates, so checking against the frontier so far is enough.
    for candidate in candidates:
        if not any(_dominates(kept, candidate) for kept in frontier):
            frontier.append(candidate)
    return frontier


def nash_solutions(outcomes: Sequence[Sequence[float]], disagreement: Sequence[float]) -> list[tuple[float, ...]]:
    """Every feasible vector maximising the Nash product over ``disagreement``, among those weakly improving on it.

    When no outcome weakly improves on the disagreement point for everyone, the
    disagreement point itself is the only solution.
    """
    d = tuple(map(float, disagreement))
    return _nash_solutions({tuple(map(float, o)) for o in outcomes}, d)


def _nash_solutions(vectors: set[Vector], d: Vector) -> list[Vector]:
    """:func:`nash_solutions` of distinct vectors of floats."""
    improving = [o for o in vectors if all(map(operator.ge, o, d))]
    if not improving:
        return [d]
    products = {o: math.prod(map(operator.sub, o, d)) for o in improving}
    best = max(products.values())
    return sorted((o for o, p in products.items() if p == best), reverse=True)


def nash_solution(outcomes: Sequence[Sequence[float]], disagreement: Sequence[float]) -> tuple[float, ...]:
    """The feasible utility vector maximising the product of gains over ``disagreement``.

    Only outcomes that weakly improve on the disagreement point for every player
    count. Ties go to the highest social welfare, then to the lexicographically
    largest vector; with no improving outcome the disagreement point is returned.
    """
    return _best_nash(nash_solutions(outcomes, disagreement))


def _best_nash(solutions: list[Vector]) -> Vector:
    """The solution :func:`nash_solution` picks: the highest social welfare, then the largest vector."""
    return max(solutions, key=lambda o: (sum(o), o))


#: Above this many points a nearest-point search first narrows the candidates with numpy; below, numpy costs more.
VECTORISE_FROM = 64


def _scaled(points: Sequence[Vector], lows: Sequence[float], spans: Sequence[float]) -> list[Vector]:
    """``points`` rescaled to the utility box, column by column (one comprehension per player, not one per point)."""
    rescaled = [[(x - lo) / span for x in column] if span > 0 else [0.0] * len(points) for column, lo, span in zip(zip(*points), lows, spans)]
    return list(zip(*rescaled))


class _Points:
    """Points to query: the nearest one to a point, and whether one dominates a point; exact as a scan of them all.

    Large sets are narrowed with numpy first: its distances may differ from ``math.dist`` in the last bits, so
    every point within a relative 1e-7 (and an absolute 1e-100) of numpy's smallest is measured again with
    ``math.dist``, far more than any rounding can move, and the smallest of those is the scan's minimum.
    """

    def __init__(self, points: Sequence[Vector]):
        self.points = list(points)
        self.array = np.array(self.points, dtype=float) if len(self.points) >= VECTORISE_FROM else None

    def nearest(self, point: Vector) -> float:
        """The smallest ``math.dist`` from ``point`` to one of the points."""
        if self.array is None:
            return min(map(math.dist, repeat(point), self.points))
        gaps = self.array - np.asarray(point, dtype=float)
        approximate = np.sqrt(np.einsum("ij,ij->i", gaps, gaps))
        close = np.flatnonzero(approximate <= approximate.min() * (1 + 1e-7) + 1e-100)
        return min(math.dist(point, self.points[i]) for i in close)

    def dominated(self, point: Vector) -> bool:
        """Whether a point other than ``point`` is at least as good as it in every coordinate."""
        if self.array is None:
            return any(o != point and all(map(operator.ge, o, point)) for o in self.points)
        target = np.asarray(point, dtype=float)
        return bool(((self.array >= target).all(axis=1) & (self.array != target).any(axis=1)).any())


class NegotiationSpace:
    """The per-instance part of :func:`negotiation_report`: the outcomes' range, Pareto frontier and Nash solutions.

    Built once from the feasible outcomes and the disagreement point (both as :func:`negotiation_report` takes
    them, coordinates in player order); :meth:`report` then analyses any result of that instance in time that
    no longer depends on the number of outcomes, bar a vectorised pass over the frontier.
    """

    def __init__(self, outcomes: Sequence[Sequence[float]], disagreement: Sequence[float]):
        d = tuple(map(float, disagreement))
        n = self.players = len(d)
        feasible = [tuple(map(float, o)) for o in outcomes]
        for o in feasible:
            if len(o) != n:
                raise ValueError(f"outcome {o} has {len(o)} coordinates; expected one per player ({n})")
        feasible.append(d)
        columns = list(zip(*feasible))
        self.lows = [min(column) for column in columns]
        self.spans = [max(column) - low for column, low in zip(columns, self.lows)]
        self.max_social_welfare = float(max(map(sum, feasible)))
        distinct = set(feasible)
        frontier = _frontier(distinct)
        solutions = _nash_solutions(distinct, d)
        self.nash = _best_nash(solutions)
        self.frontier = frontier
        # Two players' frontier falls strictly in the first utility and rises strictly in the second (see _frontier),
        # so the points at least as good in the first are a prefix, found by bisection, and its last point is the
        # best of them in the second: the only one to compare. More players query all the points.
        self.falling_firsts = [-o[0] for o in frontier] if n == 2 else None
        self.frontier_points = _Points(frontier) if n != 2 else None
        self.scaled_frontier = _Points(_scaled(frontier, self.lows, self.spans))
        self.scaled_solutions = _Points(_scaled(solutions, self.lows, self.spans))

    def dominated(self, achieved: Vector) -> bool:
        """Whether a frontier point other than ``achieved`` is at least as good for everyone."""
        if self.frontier_points is not None:
            return self.frontier_points.dominated(achieved)
        assert self.falling_firsts is not None  # two players: __init__ sets one of the two
        prefix = bisect.bisect_right(self.falling_firsts, -achieved[0])
        if prefix == 0:
            return False
        best = self.frontier[prefix - 1]
        return best != achieved and best[1] >= achieved[1]

    def report(self, utilities: Mapping[str, float], agreed: bool) -> dict[str, Any]:
        """:func:`negotiation_report` of this instance for ``utilities`` (its key order is the players' order)."""
        players = list(utilities)
        if len(players) != self.players:
            raise ValueError(f"utilities name {len(players)} players {players}; the outcomes have {self.players} coordinates")
        n = len(players)
        achieved = tuple(float(utilities[p]) for p in players)
        point = _scaled([achieved], self.lows, self.spans)[0]
        # Dividing by sqrt(n) keeps the order of distances, so it is done once, on the smallest.
        root = math.sqrt(n)
        return {
            "agreement": bool(agreed),
            "utilities": {p: u for p, u in zip(players, achieved)},
            "social_welfare": float(sum(achieved)),
            "max_social_welfare": self.max_social_welfare,
            "pareto_optimal": not self.dominated(achieved),
            "pareto_distance": float(self.scaled_frontier.nearest(point) / root),
            "nash_solution": {p: x for p, x in zip(players, self.nash)},
            "nash_distance": float(self.scaled_solutions.nearest(point) / root),
        }


def negotiation_report(
    utilities: Mapping[str, float],
    outcomes: Sequence[Sequence[float]],
    disagreement: Mapping[str, float],
    agreed: bool,
) -> dict[str, Any]:
    """The analysis of a finished negotiation, JSON-ready, for the final outcome's ``details``.

    Args:
        utilities: each player's achieved utility (the disagreement payoff when
            there was no agreement); its key order fixes the coordinate order.
        outcomes: the utility vectors of every feasible deal, coordinates in the
            order of ``utilities``' keys. The disagreement point is added to them.
        disagreement: each player's payoff when no deal is made.
        agreed: whether a deal was reached.

    Returns a dict with ``agreement``, ``utilities``, ``social_welfare``,
    ``max_social_welfare``, ``pareto_optimal`` (no feasible outcome dominates
    the result), ``pareto_distance`` (to the nearest frontier point),
    ``nash_solution`` (per player), ``nash_distance`` (to the nearest Nash
    product maximiser), both distances normalised as the module docstring says.
    A game that analyses one instance more than once keeps its
    :class:`NegotiationSpace` instead.
    """
    return NegotiationSpace(outcomes, [disagreement[p] for p in utilities]).report(utilities, agreed)
