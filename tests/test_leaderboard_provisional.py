"""Rankings a stranger cannot move (issue 32): a provisional agent's games stay out of the ranked agents' figures and
out of the meta-game, the board says what a provisional agent still needs, and an interval contains its estimate."""

from __future__ import annotations

import numpy as np
import pytest

from parlour.evaluation.runner import evaluate
from parlour.leaderboard import ratings
from parlour.leaderboard.api import Leaderboard
from parlour.leaderboard.site import Site
from tests.test_leaderboard_challenges import seeded_nonces
from tests.test_leaderboard_ranks import zero_sum
from tests.test_leaderboard_roles import DEBATE_SEATS, debates

SEATS = ["player_0", "player_1"]


def field(hands: int = 200) -> list[tuple]:
    """KuhnPoker-like chips between three agents that all met: ppo and nash beat random, and draw each other."""
    rng = np.random.default_rng(0)
    results = []
    for index in range(hands):
        for first, second, edge in (("ppo", "random", 0.3), ("nash", "random", 0.12), ("ppo", "nash", 0.0)):
            results.append(zero_sum(index, first, second, float(rng.choice([-1.0, 1.0, 2.0, -2.0])) + edge))
    return results


def lucky(hands: int = 20) -> list[tuple]:
    """Issue 32's exploitable bot: ``hands`` live hands against nash alone, won four times in five."""
    return [zero_sum(index, "king_only", "nash", 1.0 if index % 5 else -1.0) for index in range(hands)]


def chips(results: list[tuple]) -> dict:
    """The zero-sum payoff table (Nash averaging beside it) of ``results``."""
    return ratings.env_table(results, seats=2, bootstrap=50, category="game", zero_sum=True, players=SEATS)


def by_agent(table: dict) -> dict[str, dict]:
    """The table's rows by agent."""
    return {row["agent"]: row for row in table["rows"]}


def test_the_meta_game_holds_only_ranked_agents():
    # Issue 32: the 20-hand bot took 0.662 of the Nash mass and nash 0.000, its unmeasured pairs counting as draws.
    rows = by_agent(chips(field() + lucky()))
    assert rows["king_only"]["provisional"]
    assert rows["king_only"]["nash_mass"] is None and rows["king_only"]["nash_payoff"] is None
    alone = by_agent(chips(field()))
    ranked = ("nash", "ppo", "random")
    assert sum(rows[name]["nash_mass"] for name in ranked) == pytest.approx(1.0)
    assert {name: rows[name]["nash_mass"] for name in ranked} == {name: alone[name]["nash_mass"] for name in ranked}
    table = chips(field() + lucky())
    assert table["meta_game"]["agents"] == ["nash", "ppo", "random"]
    assert "provisional" in table["meta_game"]["left_out"]["king_only"]


def test_ranked_agents_that_never_met_are_not_paired_in_the_meta_game():
    # Four ranked agents, each met at least two others, but b and c never met: their pair is no draw, it is unknown.
    rng = np.random.default_rng(2)
    results = []
    for a, b, edge in (("a", "b", 0.2), ("a", "c", -0.2), ("a", "d", 0.1), ("b", "d", 0.3), ("c", "d", 0.3)):
        results += [zero_sum(index, a, b, float(rng.choice([-1.0, 1.0])) + edge) for index in range(30)]
    table = chips(results)
    assert all(row["rank"] is not None for row in table["rows"])
    meta = table["meta_game"]
    assert len(meta["agents"]) == 3 and {"b", "c"} - set(meta["agents"])
    (left,) = meta["left_out"]
    assert "never met" in meta["left_out"][left] and by_agent(table)[left]["nash_mass"] is None
    index = {name: k for k, name in enumerate(table["agents"])}
    for i in meta["agents"]:
        for j in meta["agents"]:
            assert i == j or table["pairs"][index[i]][index[j]]


def bargaining(seed: int) -> list[tuple]:
    """General-sum two-seat episodes: three ranked agents that all met (the α-Rank view)."""
    rng = np.random.default_rng(seed)
    results = []
    for a, b in (("boulware", "conceder"), ("boulware", "random"), ("conceder", "random")):
        for index in range(25):
            deal = rng.random() < 0.7
            results.append(
                (f"{a}-{b}-{index:03d}", {"player_0": a, "player_1": b}, {"player_0": 6.0 * deal + rng.random(), "player_1": 4.0 * deal}, {})
            )
    return results


def win_loss(seed: int) -> list[tuple]:
    """Win/loss episodes between three ranked agents (the Bradley–Terry method)."""
    rng = np.random.default_rng(seed)
    results = []
    for a, b, p in (("minimax", "random", 0.9), ("ppo", "random", 0.7), ("minimax", "ppo", 0.6)):
        for index in range(30):
            win = rng.random() < p
            results.append(
                (f"{a}-{b}-{index:03d}", {"player_0": a, "player_1": b}, {"player_0": 1.0 if win else -1.0, "player_1": -1.0 if win else 1.0})
            )
    return results


def cooperation(seed: int) -> list[tuple]:
    """Two-seat team episodes of three ranked agents in self-play and every mixed pair."""
    rng = np.random.default_rng(seed)
    skill = {"good": 8.0, "fair": 5.0, "random": 1.0}
    results = []
    for a, b in (("good", "good"), ("fair", "fair"), ("random", "random"), ("good", "fair"), ("good", "random"), ("fair", "random")):
        for index in range(12):
            score = (skill[a] + skill[b]) / 2 + float(rng.random())
            results.append((f"{a}-{b}-{index:03d}", {"cook_0": a, "waiter_1": b}, {"cook_0": score, "waiter_1": score}))
    return results


STRANGERS = {
    # Each method's field, and a provisional newcomer's games against one ranked agent.
    "payoff": (lambda: field(), lucky, dict(category="game", zero_sum=True, players=SEATS)),
    "alpha-rank": (
        lambda: bargaining(1),
        lambda: [(f"s{index:03d}", {"player_0": "greedy", "player_1": "boulware"}, {"player_0": 9.0, "player_1": 0.0}, {}) for index in range(8)],
        dict(category="negotiation", zero_sum=False, players=SEATS),
    ),
    "bradley-terry": (
        lambda: win_loss(3),
        lambda: [(f"s{index:03d}", {"player_0": "stranger", "player_1": "minimax"}, {"player_0": 1.0, "player_1": -1.0}) for index in range(20)],
        dict(category="game", zero_sum=True, players=SEATS),
    ),
    "team": (
        lambda: cooperation(4),
        lambda: [(f"s{index:03d}", {"cook_0": "saboteur", "waiter_1": "good"}, {"cook_0": -5.0, "waiter_1": -5.0}) for index in range(6)],
        dict(category="cooperation", zero_sum=False, players=["cook_0", "waiter_1"]),
    ),
    "roles": (
        lambda: debates(),
        lambda: [
            (
                f"s{index:03d}",
                {"debater_a": "honest", "debater_b": "random", "judge": "lazy"},
                {"debater_a": -1.0, "debater_b": 1.0, "judge": 0.0},
                {"teams": {"true_side": ["debater_a"], "false_side": ["debater_b"]}},
            )
            for index in range(5)
        ],
        dict(category="social", zero_sum=False, players=DEBATE_SEATS, fixed_roles=True),
    ),
}


@pytest.mark.parametrize("kind", sorted(STRANGERS))
def test_a_provisional_agents_games_leave_the_ranked_figures_unchanged(kind):
    # Issue 32: a stranger's live matches moved nash on KuhnPoker from 0.279 to 0.126, and boulware on Bargaining.
    base, stranger, options = STRANGERS[kind]
    seats = len(options["players"])
    before = ratings.env_table(base(), seats, bootstrap=40, **options)
    after = ratings.env_table(base() + stranger(), seats, bootstrap=40, **options)
    newcomer = {row["agent"] for row in after["rows"]} - {row["agent"] for row in before["rows"]}
    assert newcomer and all(row["provisional"] for row in after["rows"] if row["agent"] in newcomer)
    ranked = [row for row in before["rows"] if row["rank"] is not None]
    assert ranked and [row for row in after["rows"] if row["rank"] is not None] == ranked
    # The per-agent tables beside the ratings are ranked agents' figures too.
    for part in ("negotiation",):
        if part in before:
            kept = [row for row in after[part] if row["agent"] not in newcomer]
            assert kept == before[part]
    if "by_role" in before:
        assert {name: value for name, value in after["by_role"].items() if name not in newcomer} == before["by_role"]


def test_an_agent_whose_only_opponents_are_provisional_is_provisional_too():
    # echo's 20 episodes against two agents would rank it, but both of them are provisional (18 and 10 episodes).
    echo = [zero_sum(index, "echo", opponent, 0.5) for index in range(10) for opponent in ("king_only", "ghost")]
    rows = by_agent(chips(field() + lucky(8) + echo))
    assert rows["king_only"]["provisional"] and rows["ghost"]["provisional"] and rows["echo"]["provisional"]
    assert rows["echo"]["episodes"] == 20 and rows["echo"]["opponents"] == 2
    assert "not provisional" in rows["echo"]["provisional"]
    assert rows["echo"]["needs"] == "20 more episodes and 2 more opponents, against ranked agents"
    assert {name: rows[name]["rating"] for name in ("nash", "ppo", "random")} == {
        name: row["rating"] for name, row in by_agent(chips(field())).items()
    }


def test_a_provisional_row_says_what_it_still_needs():
    rows = by_agent(chips(field() + lucky(8)))
    king = rows["king_only"]
    assert king["needs"] == "12 more episodes and one more opponent"
    assert king["provisional"] == (
        "8 episodes, under the 20 a rank needs; met 1 other agent(s), under the 2 a rank needs: it needs 12 more episodes and one more opponent"
    )
    assert all(rows[name]["needs"] is None for name in ("nash", "ppo", "random"))


def test_two_agents_alone_are_ranked_against_each_other_whatever_a_stranger_plays():
    # A stranger's games against one of two established agents would have asked both for a second opponent.
    pair = [zero_sum(index, "nash", "random", 0.1 * (index % 3)) for index in range(40)]
    rows = by_agent(chips(pair + lucky(30)))
    assert rows["nash"]["rank"] == 1 and rows["random"]["rank"] == 2 and rows["king_only"]["provisional"]
    assert "one more opponent" in rows["king_only"]["needs"]


def test_a_perfect_record_sits_inside_its_bradley_terry_interval():
    # Issue 32: with a perfect record the rating was the top of its own interval (every resample repeats the record).
    sweep = [(f"{i:03d}", {"player_0": "champ", "player_1": "random"}, {"player_0": 1.0, "player_1": -1.0}) for i in range(20)]
    mixed = win_loss(5) + [(f"c{i:03d}", {"player_0": "champ", "player_1": "ppo"}, {"player_0": 1.0, "player_1": -1.0}) for i in range(12)]
    for results in (sweep, mixed):
        table = ratings.env_table(results, seats=2, bootstrap=100, players=SEATS)
        assert table["method"] == "bradley-terry"
        for row in table["rows"]:
            if row["agent"] != table["anchor"]:
                assert row["low"] < row["rating"] < row["high"], row


def test_without_random_a_provisional_rating_stands_on_the_ranked_agents_scale():
    # No random to anchor the scale: the ranked agents' mean is the 1000, and a provisional agent (rated on every
    # episode) is placed as its own fit places it against them.
    results = [(key, {seat: name.replace("random", "rookie") for seat, name in seating.items()}, returns) for key, seating, returns in win_loss(6)]
    stranger = [
        (f"s{i:03d}", {"player_0": "stranger", "player_1": "ppo"}, {"player_0": 1.0 if i % 4 else -1.0, "player_1": -1.0 if i % 4 else 1.0})
        for i in range(20)
    ]
    table = ratings.env_table(results + stranger, seats=2, bootstrap=30, players=SEATS)
    rows = by_agent(table)
    assert table["anchor"] is None and rows["stranger"]["provisional"]
    assert np.mean([rows[name]["rating"] for name in ("minimax", "ppo", "rookie")]) == pytest.approx(ratings.ANCHOR_RATING)
    whole = by_agent(ratings.bradley_terry(sorted(results + stranger), bootstrap=0, players=SEATS))
    ranked_shift = np.mean([rows[name]["rating"] - whole[name]["rating"] for name in ("minimax", "ppo", "rookie")])
    assert rows["stranger"]["rating"] == pytest.approx(whole["stranger"]["rating"] + ranked_shift)


def test_every_interval_contains_its_estimate():
    for kind, (base, stranger, options) in STRANGERS.items():
        table = ratings.env_table(base() + stranger(), len(options["players"]), bootstrap=40, **options)
        for row in table["rows"]:
            assert row["low"] <= row["rating"] <= row["high"], (kind, row)


def test_headlines_that_disagree_with_exploitability_say_why():
    # Issue 32: the bot held 0.662 of the Nash mass and nash 0.000, beside an exploitability column saying the opposite.
    from parlour.leaderboard.site import headline_notes

    table = {
        "value": "expected payoff",
        "exploitability": "chips a best responder wins",
        "rows": [
            {"agent": "nash", "rating": 0.11, "nash_mass": 0.0, "exploitability": 0.0, "rank": 1},
            {"agent": "king_only", "rating": 0.05, "nash_mass": 0.66, "exploitability": 0.25, "rank": 2},
        ],
    }
    (note,) = headline_notes(table)
    assert note.startswith("Nash mass and exploitability disagree") and "king_only holds 0.660" in note and "nash is less exploitable" in note
    table["rows"][0]["nash_mass"], table["rows"][1]["nash_mass"] = 1.0, 0.0
    assert headline_notes(table) == []
    # Ranked first on a lucky expected payoff against this field, yet more exploitable.
    table["rows"][0]["rank"], table["rows"][1]["rank"] = 2, 1
    (note,) = headline_notes(table)
    assert note.startswith("Rank and exploitability disagree") and "king_only ranks first by expected payoff" in note
    # A table without exploitability (no poker) has nothing to reconcile.
    assert headline_notes({"rows": table["rows"]}) == []


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """A Bargaining board: three built-ins that all met (ranked) and hardliner's 8 episodes against boulware (provisional)."""
    db = f"sqlite:///{tmp_path_factory.mktemp('provisional')}/lb.db"
    board = Leaderboard(db, bootstrap=20, min_challenge_episodes=1, nonces=seeded_nonces(0))
    board.add_submitter("alice")
    env_id = "parlour/Bargaining-v0"
    for agents, episodes in (
        (["boulware", "random"], 20),
        (["conceder", "boulware"], 20),
        (["conceder", "random"], 20),
        (["hardliner", "boulware"], 8),
    ):
        challenge = board.issue_challenge("alice", env_id, agents, episodes)
        board.submit(evaluate(env_id, agents, challenge=challenge, progress=False), "alice")
    return board


def test_the_index_lists_provisional_agents_with_what_they_still_need(board):
    page = Site(board).index()
    assert 'id="provisional"' in page
    section = page.split('id="provisional"', 1)[1].split("</table>", 1)[0]
    assert "hardliner" in section and "12 more episodes and one more opponent" in section
    assert "boulware" not in section  # ranked agents are in the overall table, not here


def test_a_provisional_agents_page_says_why_it_is_not_ranked(board):
    page = Site(board).agent("hardliner")
    assert "provisional" in page and "12 more episodes and one more opponent" in page
    assert "Not in the overall table" in page
