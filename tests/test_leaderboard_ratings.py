"""Ratings: Bradley–Terry recovers known strengths with honest intervals; mean scores; normalised overall table."""

from __future__ import annotations

import math

import numpy as np
import pytest

from parlour.leaderboard import ratings

SEATS = ("player_0", "player_1")


def synthetic(strengths: dict[str, float], games: int, rng: np.random.Generator) -> list[ratings.Result]:
    """Two-seat games between random pairs, won with Bradley–Terry probabilities of the log-strengths."""
    names = list(strengths)
    results = []
    for index in range(games):
        a, b = rng.choice(len(names), size=2, replace=False)
        p = 1.0 / (1.0 + math.exp(strengths[names[b]] - strengths[names[a]]))
        win = rng.random() < p
        returns = {"player_0": 1.0 if win else -1.0, "player_1": -1.0 if win else 1.0}
        results.append((f"{index:08d}", {"player_0": names[a], "player_1": names[b]}, returns))
    return results


TRUE = {"random": 0.0, "weak": 0.4, "fair": 0.9, "good": 1.5, "strong": 2.2, "best": 3.0}


def true_rating(name: str) -> float:
    """The Elo-scale rating of ``name``'s true strength, random at the anchor."""
    return ratings.ANCHOR_RATING + ratings.ELO_PER_NAT * (TRUE[name] - TRUE["random"])


def test_bradley_terry_recovers_the_order_and_the_values():
    table = ratings.bradley_terry(synthetic(TRUE, 6000, np.random.default_rng(1)), bootstrap=100)
    assert [row["agent"] for row in table["rows"]] == sorted(TRUE, key=TRUE.get, reverse=True)
    assert table["anchor"] == "random"
    for row in table["rows"]:
        assert row["low"] <= row["rating"] <= row["high"]
        assert abs(row["rating"] - true_rating(row["agent"])) < 60
    random_row = next(row for row in table["rows"] if row["agent"] == "random")
    assert random_row["rating"] == random_row["low"] == random_row["high"] == ratings.ANCHOR_RATING


def test_intervals_cover_the_true_values_at_about_the_nominal_rate():
    rng = np.random.default_rng(7)
    covered = total = 0
    for _ in range(30):
        table = ratings.bradley_terry(synthetic(TRUE, 1500, rng), bootstrap=200, seed=int(rng.integers(1 << 30)))
        for row in table["rows"]:
            if row["agent"] != "random":
                total += 1
                covered += row["low"] <= true_rating(row["agent"]) <= row["high"]
    assert 0.88 <= covered / total <= 0.995, covered / total


def test_result_does_not_depend_on_arrival_order():
    results = synthetic(TRUE, 800, np.random.default_rng(3))
    shuffled = [results[i] for i in np.random.default_rng(4).permutation(len(results))]
    assert ratings.env_table(results, seats=2, bootstrap=50) == ratings.env_table(shuffled, seats=2, bootstrap=50)


def test_multi_seat_episodes_split_into_pairwise_results_with_half_ties():
    results = [("e0", {"s0": "a", "s1": "b", "s2": "c", "s3": "a"}, {"s0": 3.0, "s1": 1.0, "s2": 1.0, "s3": 0.0})]
    _, first, second, score = ratings.pairwise(results, ["a", "b", "c"])
    # s0/s3 are both "a": no comparison; b and c tie.
    pairs = sorted(zip(first.tolist(), second.tolist(), score.tolist()))
    assert pairs == [(0, 1, 1.0), (0, 2, 1.0), (1, 0, 1.0), (1, 2, 0.5), (2, 0, 1.0)]


def test_undefeated_and_winless_agents_get_finite_ratings_and_the_mean_anchors_without_random():
    results = [(f"{i}", {"player_0": "champ", "player_1": "chump"}, {"player_0": 1.0, "player_1": -1.0}) for i in range(20)]
    table = ratings.bradley_terry(results, bootstrap=20)
    assert table["anchor"] is None
    values = {row["agent"]: row["rating"] for row in table["rows"]}
    assert all(math.isfinite(v) for v in values.values()) and values["champ"] > values["chump"]
    assert (values["champ"] + values["chump"]) / 2 == pytest.approx(ratings.ANCHOR_RATING)
    assert table["win_rate"][table["agents"].index("champ")][table["agents"].index("chump")] == 1.0


def test_fit_matches_the_closed_form_for_two_agents():
    wins = np.array([[0.0, 30.0], [10.0, 0.0]])  # agent 0 beat agent 1 30 times, lost 10
    theta = ratings.fit_bradley_terry(wins, prior_sd=1e6)
    assert theta[0] - theta[1] == pytest.approx(math.log(3.0), abs=1e-6)


def test_single_agent_tasks_use_mean_and_standard_error():
    results = [(f"{i}", {"solo": "a"}, {"solo": value}) for i, value in enumerate([1.0, 2.0, 3.0, 6.0])]
    results += [("z", {"solo": "b"}, {"solo": 5.0})]
    table = ratings.env_table(results, seats=1)
    assert table["kind"] == "mean-score"
    row = {r["agent"]: r for r in table["rows"]}["a"]
    assert row["rating"] == pytest.approx(3.0)
    assert row["stderr"] == pytest.approx(math.sqrt(14.0 / 3.0) / 2.0)
    assert row["high"] - row["rating"] == pytest.approx(1.96 * row["stderr"])
    assert [r["agent"] for r in table["rows"]] == ["b", "a"]


def test_overall_normalises_random_to_0_and_the_best_baseline_to_100():
    game = {"kind": "bradley-terry", "rows": [
        {"agent": "random", "rating": 1000.0}, {"agent": "minimax", "rating": 1400.0},
        {"agent": "greedy", "rating": 1200.0}, {"agent": "llm", "rating": 1300.0}]}
    task = {"kind": "mean-score", "rows": [{"agent": "random", "rating": 2.0}, {"agent": "llm", "rating": 4.0}, {"agent": "oracle", "rating": 6.0}]}
    lonely = {"kind": "mean-score", "rows": [{"agent": "llm", "rating": 1.0}]}
    scores = {
        "game": ratings.normalised(game, ["random", "minimax", "greedy"]),
        "task": ratings.normalised(task, ["random", "oracle"]),
        "lonely": ratings.normalised(lonely, ["random"]),
    }
    assert scores["game"] == {"random": 0.0, "minimax": 100.0, "greedy": 50.0, "llm": 75.0}
    assert scores["lonely"] is None
    table = ratings.overall(scores)
    by_agent = {row["agent"]: row for row in table["rows"]}
    assert by_agent["llm"]["score"] == pytest.approx((75.0 + 50.0) / 2) and by_agent["llm"]["environments"] == 2
    assert by_agent["minimax"]["environments"] == 1
    assert table["environments"] == ["game", "task"] and table["unnormalised"] == ["lonely"]
