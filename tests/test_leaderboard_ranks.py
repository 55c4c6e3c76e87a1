"""Ranks that mean something (issue 22): thin evidence is provisional, poker is headlined by exact exploitability."""

from __future__ import annotations

import numpy as np
import pytest

from parlour.evaluation.runner import evaluate
from parlour.leaderboard import ratings
from parlour.leaderboard.api import Leaderboard
from parlour.leaderboard.exploitability import exploitabilities
from parlour.leaderboard.site import Site

KUHN = "parlour/KuhnPoker-v0"
KING_ONLY = "python:tests.test_leaderboard_ranks:KingOnly"


class KingOnly:
    """Issue 22's exploitable KuhnPoker bot: bets or calls with a King, otherwise checks or folds."""

    name = "king_only"

    def act(self, observation):
        """Aggressive with a King, passive with anything else."""
        legal = observation["legal_moves"]
        wanted = ("bet", "call") if observation["view"]["card"] == "K" else ("check", "fold")
        return next(move for move in wanted if move in legal)


def zero_sum(index: int, first: str, second: str, value: float) -> tuple:
    """One two-seat episode: ``first`` in player_0 wins ``value`` chips from ``second``."""
    return (f"{first}-{second}-{index:05d}", {"player_0": first, "player_1": second}, {"player_0": value, "player_1": -value}, {})


def test_twenty_lucky_hands_against_one_opponent_rank_nobody():
    # Issue 22: the King-only bot topped KuhnPoker after 20 live hands against nash (interval -0.24 to 0.84), above ppo's 400.
    rng = np.random.default_rng(0)
    results = []
    for index in range(400):
        for first, second, edge in (("ppo", "random", 0.3), ("nash", "random", 0.12), ("ppo", "nash", 0.0)):
            results.append(zero_sum(index, first, second, float(rng.choice([-1.0, 1.0, 2.0, -2.0])) + edge))
    results += [zero_sum(index, "king_only", "nash", 1.0 if index % 5 else -1.0) for index in range(20)]
    table = ratings.env_table(results, seats=2, bootstrap=50, category="game", zero_sum=True, players=["player_0", "player_1"])
    king = next(row for row in table["rows"] if row["agent"] == "king_only")
    assert king["rating"] > max(row["rating"] for row in table["rows"] if row["agent"] != "king_only")  # the lucky point estimate
    assert king["provisional"] and king["rank"] is None and table["rows"][-1] is king
    assert "met 1 other agent" in king["provisional"]
    ranked = [row for row in table["rows"] if row["rank"] is not None]
    assert [row["rank"] for row in ranked] == [1, 2, 3] and ranked[0]["agent"] == "ppo"
    for row in ranked:
        assert 1 <= row["rank_low"] <= row["rank"] <= row["rank_high"] <= 3
    # Enough episodes against enough opponents: ranked.
    results += [zero_sum(index, "king_only", "random", 0.2) for index in range(20)]
    table = ratings.env_table(results, seats=2, bootstrap=50, category="game", zero_sum=True, players=["player_0", "player_1"])
    assert next(row for row in table["rows"] if row["agent"] == "king_only")["rank"] is not None


def test_a_single_agent_task_needs_episodes_only():
    results = [(f"{i:03d}", {"solo": "a"}, {"solo": 1.0}) for i in range(ratings.MIN_EPISODES)]
    results += [(f"b{i:03d}", {"solo": "b"}, {"solo": 1.0}) for i in range(ratings.MIN_EPISODES - 1)]
    rows = {row["agent"]: row for row in ratings.env_table(results, seats=1, category="search")["rows"]}
    assert rows["a"]["rank"] == 1 and rows["b"]["provisional"] == (
        f"{ratings.MIN_EPISODES - 1} episodes, under the {ratings.MIN_EPISODES} a rank needs: it needs one more episode"
    )


def test_exploitability_is_exact_for_nash_and_high_for_the_king_only_bot():
    found = exploitabilities(KUHN, ["nash", "king_only", "mystery", "random"], {"nash": "nash", "king_only": KING_ONLY, "random": "random"}.get)
    assert found["nash"]["value"] == pytest.approx(0.0, abs=1e-9) and found["nash"]["exact"]
    assert found["king_only"]["value"] > 0.2 and found["random"]["value"] == pytest.approx(0.4583333, abs=1e-6)
    assert found["mystery"]["value"] is None and found["mystery"]["reason"].startswith("unknown: the agent plays from its submitter's machine")


def test_the_kuhn_table_headlines_exploitability(tmp_path):
    board = Leaderboard(f"sqlite:///{tmp_path}/board.db", min_challenge_episodes=1, bootstrap=20, agent_specs={"king_only": KING_ONLY})
    board.add_submitter("alice")
    challenge = board.issue_challenge("alice", KUHN, ["nash", "random"], episodes=40)
    board.submit(evaluate(KUHN, ["nash", "random"], challenge=challenge, progress=False), "alice")
    # The bot's own runs are self-reported (it plays from its submitter's machine); the server can still load it to query it.
    board.submit(evaluate(KUHN, [KingOnly(), "nash"], episodes=20, progress=False), "alice")
    counted = {row["agent"]: row for row in board.ratings(KUHN)["rows"]}
    assert counted["nash"]["exploitability"] == pytest.approx(0.0, abs=1e-9) and counted["nash"]["rank"] is not None
    assert counted["random"]["exploitability"] == pytest.approx(0.4583333, abs=1e-6)
    reported = {row["agent"]: row for row in board.ratings(KUHN, counted=False)["rows"]}
    assert reported["king_only"]["exploitability"] > 0.2 and reported["nash"]["exploitability"] == pytest.approx(0.0, abs=1e-9)
    page = Site(board).environment(KUHN)
    assert "exploitability" in page and "OpenSpiel solves the best response" in page
