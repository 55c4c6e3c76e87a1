"""The shared negotiation analysis on hand-computed instances."""

from __future__ import annotations

import json
import math
import random

import pytest

from parlour.envs.negotiation.analysis import (
    VECTORISE_FROM,
    NegotiationSpace,
    gini,
    nash_solution,
    nash_solutions,
    negotiation_report,
    pareto_frontier,
)

# Pool: 1 book, 2 hats. player_0 values (4, 3), player_1 values (2, 4): each whole pool is worth 10.
# Splits (books, hats) to player_0 and the utilities (u0, u1):
SPLITS = {(0, 0): (0, 10), (0, 1): (3, 6), (0, 2): (6, 2), (1, 0): (4, 8), (1, 1): (7, 4), (1, 2): (10, 0)}
OUTCOMES = list(SPLITS.values())
ZERO = {"player_0": 0.0, "player_1": 0.0}


def test_gini_known_values():
    assert gini([1, 1, 1]) == 0.0
    assert gini([0, 0, 0]) == 0.0
    assert gini([]) == 0.0
    assert gini([0, 0, 1]) == pytest.approx(2 / 3)
    assert gini([1, 2, 3, 4]) == pytest.approx(0.25)
    with pytest.raises(ValueError):
        gini([1, -1])


def test_pareto_frontier_of_the_small_instance():
    assert pareto_frontier(OUTCOMES) == [(10.0, 0.0), (7.0, 4.0), (4.0, 8.0), (0.0, 10.0)]


def test_nash_solution_maximises_the_product_of_gains():
    # products over (0, 0): 0, 18, 12, 32, 28, 0
    assert nash_solution(OUTCOMES, (0, 0)) == (4.0, 8.0)
    # over (5, 0) only (7, 4) and (10, 0) improve: products 8 and 0
    assert nash_solution(OUTCOMES, (5, 0)) == (7.0, 4.0)
    assert nash_solution(OUTCOMES, (11, 11)) == (11.0, 11.0)
    assert nash_solutions([(2, 1), (1, 2), (0, 0)], (0, 0)) == [(2.0, 1.0), (1.0, 2.0)]


def test_report_distances_are_normalised_to_the_utility_range():
    report = negotiation_report({"player_0": 3, "player_1": 6}, OUTCOMES, ZERO, agreed=True)
    # nearest frontier point and Nash point are both (4, 8): ((0.1)^2 + (0.2)^2) / 2 under the root
    assert report["pareto_distance"] == pytest.approx(math.sqrt(0.025))
    assert report["nash_distance"] == pytest.approx(math.sqrt(0.025))
    assert report["pareto_optimal"] is False
    assert report["social_welfare"] == 9.0
    assert report["max_social_welfare"] == 12.0
    assert report["nash_solution"] == {"player_0": 4.0, "player_1": 8.0}
    assert report["agreement"] is True
    assert json.loads(json.dumps(report)) == report


def test_report_at_the_nash_point_and_at_disagreement():
    at_nash = negotiation_report({"player_0": 4, "player_1": 8}, OUTCOMES, ZERO, agreed=True)
    assert at_nash["pareto_distance"] == 0.0 and at_nash["nash_distance"] == 0.0 and at_nash["pareto_optimal"]
    no_deal = negotiation_report(ZERO, OUTCOMES, ZERO, agreed=False)
    assert no_deal["agreement"] is False
    assert no_deal["pareto_distance"] == pytest.approx(math.sqrt((0.49 + 0.16) / 2))  # to (7, 4)
    assert no_deal["nash_distance"] == pytest.approx(math.sqrt((0.16 + 0.64) / 2))  # to (4, 8)
    corner = negotiation_report({"player_0": 10, "player_1": 0}, OUTCOMES, ZERO, agreed=True)
    assert corner["pareto_distance"] == 0.0
    assert corner["nash_distance"] == pytest.approx(math.sqrt((0.36 + 0.64) / 2))


def test_report_rejects_outcomes_of_the_wrong_length():
    with pytest.raises(ValueError, match="coordinates"):
        negotiation_report(ZERO, [(1.0, 2.0, 3.0)], ZERO, agreed=False)


def test_a_kept_space_reports_exactly_what_a_scan_of_every_frontier_point_gives():
    # Frontiers longer than VECTORISE_FROM are narrowed with numpy first: the distances and the Pareto verdict
    # must still be the exact ones of a plain scan, since replay compares outcome details exactly.
    rng = random.Random(0)
    players = ["player_0", "player_1"]
    for _ in range(20):
        outcomes = [(float(x), float(300 - x - rng.randint(0, 2))) for x in range(300)]
        space = NegotiationSpace(outcomes, (0.0, 0.0))
        feasible = outcomes + [(0.0, 0.0)]
        lows = [min(c) for c in zip(*feasible)]
        spans = [max(c) - lo for c, lo in zip(zip(*feasible), lows)]
        frontier = pareto_frontier(feasible)
        assert len(frontier) > VECTORISE_FROM

        def scaled(v):
            return tuple((x - lo) / span for x, lo, span in zip(v, lows, spans))

        for achieved in (rng.choice(outcomes), (0.0, 0.0), (rng.uniform(0, 300), rng.uniform(0, 300)), frontier[rng.randrange(len(frontier))]):
            utilities = dict(zip(players, achieved))
            report = space.report(utilities, agreed=True)
            assert report == negotiation_report(utilities, outcomes, {p: 0.0 for p in players}, agreed=True)
            assert report["pareto_distance"] == min(math.dist(scaled(achieved), scaled(o)) for o in frontier) / math.sqrt(2)
            dominated = any(o != achieved and o[0] >= achieved[0] and o[1] >= achieved[1] for o in frontier)
            assert report["pareto_optimal"] is (not dominated)
