"""Fixed roles rated per role, and one interval method on the board (issue 22).

Debate ranked judges and debaters on one scale and Mafia's tables broke down
by seat; here every row of a role game is one (agent, role), ranked and
normalised within its role. The board's intervals are the CLI's: Wilson's
score interval inside the returns' range, never a point.
"""

from __future__ import annotations

import numpy as np
import pytest

from parlour.cli import main
from parlour.evaluation.results import INTERVAL_SENTENCE, mean_ci, score_range
from parlour.evaluation.rollout import make_plan
from parlour.evaluation.runner import evaluate
from parlour.leaderboard import ratings
from parlour.leaderboard.api import Leaderboard
from parlour.leaderboard.site import Site, rating_plot
from tests.test_leaderboard_challenges import seeded_nonces

DEBATE_SEATS = ["debater_a", "debater_b", "judge"]


def debates(episodes: int = 30, seed: int = 0) -> list[tuple]:
    """Debate-like episodes: debaters ``honest`` and ``random``, judges ``verifier`` (right 90%) and ``random`` (50%)."""
    rng = np.random.default_rng(seed)
    results = []
    for a, b, judge in (
        ("honest", "random", "verifier"),
        ("random", "honest", "random"),
        ("random", "random", "verifier"),
        ("honest", "random", "random"),
    ):
        for index in range(episodes):
            a_wins = rng.random() < {"honest": 0.75, "random": 0.5}[a] * (1.5 - {"honest": 0.75, "random": 0.5}[b])
            right = rng.random() < {"verifier": 0.9, "random": 0.5}[judge]
            seating = {"debater_a": a, "debater_b": b, "judge": judge}
            returns = {"debater_a": 1.0 if a_wins else -1.0, "debater_b": -1.0 if a_wins else 1.0, "judge": 1.0 if right else 0.0}
            honest, other = ("debater_a", "debater_b") if index % 2 else ("debater_b", "debater_a")
            results.append((f"{a}-{b}-{judge}-{index:03d}", seating, returns, {"teams": {"true_side": [honest], "false_side": [other]}}))
    return results


def test_a_debate_ranks_judges_and_debaters_each_within_their_role():
    table = ratings.env_table(debates(), 3, bootstrap=50, category="social", zero_sum=False, players=DEBATE_SEATS, fixed_roles=True)
    assert table["roles"] == ["debater", "judge"]
    by_role = {role: [row for row in table["rows"] if row["role"] == role] for role in table["roles"]}
    assert {row["agent"] for row in by_role["judge"]} == {"verifier", "random"}
    assert {row["agent"] for row in by_role["debater"]} == {"honest", "random"}
    # Ranks restart in each role: the best judge and the best debater are both first.
    assert [(row["agent"], row["rank"]) for row in by_role["judge"]] == [("verifier", 1), ("random", 2)]
    assert [(row["agent"], row["rank"]) for row in by_role["debater"]] == [("honest", 1), ("random", 2)]
    verifier = by_role["judge"][0]
    assert verifier["episodes"] == 60 and verifier["rating"] == pytest.approx(
        np.mean([r[2]["judge"] for r in debates() if r[1]["judge"] == "verifier"])
    )


def test_a_role_game_is_normalised_per_role_and_an_environment_weighs_its_roles_equally():
    table = ratings.env_table(debates(), 3, bootstrap=50, category="social", zero_sum=False, players=DEBATE_SEATS, fixed_roles=True)
    scale = ratings.normalised(table, ("verifier", "honest", "random"))
    assert scale["normalised"] and "judge" in scale["reason"] and "debater" in scale["reason"]
    # Each agent's score is the mean of its roles' scores, a role it never held counting as random's 0.
    assert scale["scores"]["verifier"]["score"] == pytest.approx(50.0)
    assert scale["scores"]["honest"]["score"] == pytest.approx(50.0)
    assert scale["scores"]["random"]["score"] == pytest.approx(0.0)
    # Debate declares only the judge-only verifier: the debater role cannot be normalised, and the page says why.
    declared = ratings.normalised(table, ("verifier", "random"))
    assert declared["normalised"] and declared["scores"]["verifier"]["score"] == pytest.approx(100.0)
    assert "honest" not in declared["scores"] and "debater" in declared["reason"] and "not normalised" in declared["reason"]


def test_mafia_rows_break_down_by_role_not_by_seat():
    rng = np.random.default_rng(1)
    seats = [f"player_{i}" for i in range(5)]
    results = []
    for index in range(60):
        mafia = list(rng.choice(seats, size=2, replace=False))
        names = ["sly", "meek", "sly", "meek", "random"]
        seating = dict(zip(seats, np.roll(names, index)))
        village_wins = rng.random() < 0.5
        returns = {seat: (1.0 if (seat in mafia) != village_wins else -1.0) for seat in seats}
        results.append(
            (
                f"{index:03d}",
                {k: str(v) for k, v in seating.items()},
                returns,
                {"teams": {"mafia": mafia, "village": [s for s in seats if s not in mafia]}},
            )
        )
    table = ratings.env_table(results, 5, bootstrap=20, category="social", zero_sum=False, players=seats)
    assert table["roles"] == ["mafia", "village"]
    assert {(row["agent"], row["role"]) for row in table["rows"]} == {(a, r) for a in ("sly", "meek", "random") for r in ("mafia", "village")}
    plot = rating_plot(table)
    assert {point["label"] for point in plot["points"]} == {f"{a} · {r}" for a in ("sly", "meek", "random") for r in ("mafia", "village")}


def every_return_equal() -> dict[str, list[tuple]]:
    """Tables of each method whose every return is the same (all draws, all zero scores)."""
    duel = [
        (f"{i:03d}", {"player_0": a, "player_1": b}, {"player_0": 0.5, "player_1": 0.5})
        for i in range(12)
        for a, b in (("x", "y"), ("y", "z"), ("z", "x"))
    ]
    solo = [(f"{i:03d}", {"solo": name}, {"solo": 0.0}) for i in range(12) for name in ("x", "y")]
    return {"negotiation": duel, "cooperation": duel, "social": duel, "search": solo}


@pytest.mark.parametrize("category", ["negotiation", "cooperation", "social", "search"])
def test_an_environment_of_equal_returns_never_gets_a_zero_width_interval(category):
    results = every_return_equal()[category]
    seats = len(results[0][1])
    table = ratings.env_table(results, seats, bootstrap=30, category=category, zero_sum=False)
    low, high = score_range([value for result in results for value in result[2].values()])
    for row in table["rows"] + table.get("teams", []):
        assert low <= row["low"] < row["high"] <= high, (category, row)
    for line_low, line_high in zip(table.get("payoff_low", []), table.get("payoff_high", [])):
        for cell_low, cell_high in zip(line_low, line_high):
            assert cell_low is None or low <= cell_low < cell_high <= high


def test_a_mean_score_interval_is_the_clis_interval():
    values = {"x": [0.0, 1.0, 1.0, 0.5, 1.0], "y": [0.2, 0.0, 0.1]}
    results = [(f"{name}{i}", {"solo": name}, {"solo": v}) for name, scores in values.items() for i, v in enumerate(scores)]
    bounds = score_range([v for scores in values.values() for v in scores])
    table = ratings.env_table(results, 1, category="search")
    for row in table["rows"]:
        mean, interval = mean_ci(values[row["agent"]], bounds)
        assert row["rating"] == pytest.approx(mean) and [row["low"], row["high"]] == pytest.approx(interval)


def test_method_sentences_leave_intervals_to_the_one_interval_sentence():
    for method in ratings.METHODS.values():
        assert "interval" not in method.sentence and "bootstrap" not in method.sentence, method.key
    assert "Wilson" in INTERVAL_SENTENCE and "Bradley–Terry" in INTERVAL_SENTENCE


@pytest.fixture(scope="module")
def debate_board(tmp_path_factory):
    """A leaderboard holding counted Debate runs of built-in line-ups, seats fixed by role."""
    db = f"sqlite:///{tmp_path_factory.mktemp('roles')}/lb.db"
    board = Leaderboard(db, bootstrap=20, min_challenge_episodes=1, nonces=seeded_nonces(0))
    board.add_submitter("alice")
    env_id = "parlour/Debate-v0"
    for seating in (
        {"debater_a": "honest", "debater_b": "dishonest", "judge": "verifier"},
        {"debater_a": "dishonest", "debater_b": "honest", "judge": "credulous"},
    ):
        plan = make_plan(env_id, seating, {}, 0, False)
        challenge = board.issue_challenge("alice", env_id, plan.names, 3, plan.lineup, plan.rotate_seats)
        board.submit(evaluate(env_id, seating, challenge=challenge, progress=False), "alice")
    return db, board


def test_the_debate_page_and_the_cli_show_a_role_column(debate_board, capsys):
    db, board = debate_board
    page = Site(board).environment("parlour/Debate-v0")
    assert '<th data-type="text">role</th>' in page
    assert page.count('<td data-value="judge">judge</td>') == 2 and page.count('<td data-value="debater">debater</td>') == 2
    assert main(["leaderboard", "show", "--db", db, "--env", "parlour/Debate-v0"]) == 0
    shown = capsys.readouterr().out
    header = next(line for line in shown.splitlines() if line.lstrip().startswith("#"))
    assert header.split()[:3] == ["#", "agent", "role"]
    assert any("verifier" in line and "judge" in line for line in shown.splitlines())
    assert INTERVAL_SENTENCE in shown
