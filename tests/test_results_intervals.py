"""Confidence intervals of evaluation summaries: they stay in the reward's range and cover at about the nominal rate."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from parlour.evaluation.results import INTERVAL_SENTENCE, WIN_DRAW_LOSS_SENTENCE, Results, mean_ci, summarize, wilson_interval


def record(returns: dict[str, float], winner: str | None) -> dict[str, Any]:
    """A finished two-player episode between "champ" (player_0) and "chump" (player_1)."""
    return {
        "players": ["player_0", "player_1"],
        "agents": {"player_0": "champ", "player_1": "chump"},
        "steps": [{"player": "player_0", "error": None}, {"player": "player_1", "error": None}],
        "returns": returns,
        "outcome": {"winner": winner},
    }


WIN = record({"player_0": 1.0, "player_1": -1.0}, "player_0")
LOSS = record({"player_0": -1.0, "player_1": 1.0}, "player_1")
DRAW = record({"player_0": 0.0, "player_1": 0.0}, None)


@pytest.mark.parametrize("episodes", [1, 2, 5, 20, 200])
def test_an_all_wins_sample_stays_in_range_with_some_width(episodes: int) -> None:
    summary = summarize([WIN] * episodes, with_winner=True)
    champ, chump = summary["champ"], summary["chump"]
    assert champ["win_rate"] == 1.0 and chump["loss_rate"] == 1.0
    low, high = champ["win_rate_ci95"]
    assert 0.0 < low < high == 1.0
    assert chump["win_rate_ci95"][0] == 0.0 < chump["win_rate_ci95"][1] < 1.0
    if episodes >= 2:
        low, high = champ["ci95"]
        assert -1.0 <= low < high <= 1.0 and high == 1.0
        low, high = chump["ci95"]
        assert low == -1.0 < high <= 1.0


def test_a_mostly_winning_sample_stays_below_the_top_reward() -> None:
    # 19 wins and a loss: a Student-t interval reaches +1.11, past the best reward there is.
    summary = summarize([WIN] * 19 + [LOSS], with_winner=True)
    low, high = summary["champ"]["ci95"]
    assert -1.0 <= low < summary["champ"]["mean_reward"] < high <= 1.0
    for seat_block in summary["champ"]["seats"].values():
        assert -1.0 <= seat_block["ci95"][0] <= seat_block["ci95"][1] <= 1.0


def test_all_draws_have_an_interval_with_width_inside_the_win_loss_range() -> None:
    # Every return 0: the old interval was the point [0, 0], as if four draws proved the agents equal forever.
    low, high = summarize([DRAW] * 4, with_winner=True)["champ"]["ci95"]
    assert -1.0 <= low < 0.0 < high <= 1.0


def solo(reward: float, won: bool) -> dict[str, Any]:
    """A finished one-seat task episode of "solver"."""
    return {
        "players": ["player_0"],
        "agents": {"player_0": "solver"},
        "steps": [{"player": "player_0", "error": None}],
        "returns": {"player_0": reward},
        "outcome": {"winner": "player_0" if won else None, "winners": ["player_0"] if won else []},
    }


def test_a_perfect_score_has_an_interval_reaching_down_from_the_top() -> None:
    # The CLI showed [1.000, 1.000] for a task solved every time.
    summary = summarize([solo(1.0, True)] * 10, with_winner=True)
    low, high = summary["solver"]["ci95"]
    assert -1.0 <= low < high == 1.0


def test_one_meaning_of_win_draw_loss_in_every_table() -> None:
    # A team win has several winners (no single "winner"): it counted as a draw for everyone; a failed one-seat
    # task counted as a draw too. A win is being among the winners; a draw, a game of several seats nobody won.
    team = {
        "players": ["a_0", "a_1", "b_0"],
        "agents": {"a_0": "alpha", "a_1": "alpha", "b_0": "beta"},
        "steps": [],
        "returns": {"a_0": 1.0, "a_1": 1.0, "b_0": -1.0},
        "outcome": {"winner": None, "winners": ["a_0", "a_1"]},
    }
    summary = summarize([team], with_winner=True)
    assert summary["alpha"]["win_rate"] == 1.0 and summary["beta"]["loss_rate"] == 1.0
    assert summarize([solo(0.2, False)] * 2, with_winner=True)["solver"]["loss_rate"] == 1.0
    assert summarize([DRAW], with_winner=True)["champ"]["draw_rate"] == 1.0


def test_the_cli_table_states_the_interval_method_and_what_win_draw_loss_mean() -> None:
    results = Results(
        env_id="parlour/TicTacToe-v0", env_version=0, agents=["champ", "chump"], seed=0, episodes=3, env_kwargs={}, records=[WIN, LOSS, DRAW]
    )
    table = results.table()
    assert INTERVAL_SENTENCE in table and WIN_DRAW_LOSS_SENTENCE in table


def test_the_range_of_the_run_bounds_every_interval() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(2, 30))
        low_bound, high_bound = sorted(rng.uniform(-10, 10, 2))
        values = list(rng.choice([low_bound, high_bound, (low_bound + high_bound) / 2], n))
        mean, (low, high) = mean_ci(values, bounds=(low_bound, high_bound))
        assert low_bound <= low <= mean <= high <= high_bound


def test_without_bounds_the_interval_is_student_t() -> None:
    mean, (low, high) = mean_ci([1.0, 2.0, 3.0, 4.0])
    # t(0.975, 3) = 3.182446, standard error = sqrt(5/3) / 2.
    assert (high - low) / 2 == pytest.approx(3.182446 * (5 / 3) ** 0.5 / 2, rel=1e-6)
    mean, (low, high) = mean_ci([0.0, 1.0] * 200)
    # t(0.975, 399) = 1.965927.
    assert (high - low) / 2 == pytest.approx(1.965927 * (0.25 * 400 / 399 / 400) ** 0.5, rel=1e-6)


def coverage(sample: Any, truth: float, interval: Any, trials: int = 400, seed: int = 0) -> float:
    """How often ``interval(sample(rng))`` holds ``truth`` over seeded trials."""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(trials):
        low, high = interval(sample(rng))
        hits += low <= truth <= high
    return hits / trials


@pytest.mark.parametrize(("p", "n"), [(0.5, 30), (0.2, 50), (0.1, 200)])
def test_wilson_intervals_cover_bernoulli_rates_at_about_95_percent(p: float, n: int) -> None:
    rate = coverage(lambda rng: int(rng.binomial(n, p)), p, lambda wins: wilson_interval(wins, n))
    assert 0.93 <= rate <= 0.97


@pytest.mark.parametrize(
    ("outcomes", "probabilities", "n"),
    [([1.0, -1.0], [0.5, 0.5], 30), ([1.0, -1.0], [0.2, 0.8], 60), ([1.0, 0.0, -1.0], [0.5, 0.3, 0.2], 40)],
)
def test_mean_reward_intervals_cover_at_about_95_percent(outcomes: list[float], probabilities: list[float], n: int) -> None:
    truth = float(np.dot(outcomes, probabilities))
    rate = coverage(lambda rng: list(rng.choice(outcomes, n, p=probabilities)), truth, lambda values: mean_ci(values, bounds=(-1.0, 1.0))[1])
    assert 0.93 <= rate <= 0.975
