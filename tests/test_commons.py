"""Commons: discussion, harvest arithmetic, stock dynamics, collapse, every ending, and the scripted fishers."""

from __future__ import annotations

import pytest

import parlour
from parlour.envs.core.match import Match
from parlour.envs.negotiation.commons import Commons

ENV_ID = "parlour/Commons-v0"


def new_match(**options) -> Match:
    """A started Commons match."""
    match = Match(Commons, options)
    match.reset(0)
    return match


def round_of(match: Match, messages: list[str], harvests: list[str]) -> None:
    """One discussion and one harvest phase, failing on any invalid action."""
    for texts in (messages, harvests):
        for player, text in zip(match.players, texts):
            match.submit(player, text)
            assert match.steps[-1]["error"] is None, match.steps[-1]["error"]


def test_discussion_is_heard_verbatim_by_everyone_and_reasoning_before_say_is_not():
    match = new_match(num_players=3)
    for player, text in zip(match.players, ["I think 10 is safe. [say] Let's take 10 each, ok?", "", "[pass]"]):
        match.submit(player, text)
    assert match.game.phase == "harvest"
    for player in match.players:
        seen = match.observation_text(player)
        assert 'player_0: "Let\'s take 10 each, ok?"\n\n' in seen
        assert "player_1 stays silent." in seen and "player_2 stays silent." in seen
        assert "I think 10 is safe" not in seen
        kinds = {(m["kind"], m["sender"]) for m in match.messages(player) if m["sender"] is not None}
        assert kinds == {("talk", "player_0"), ("move", "player_1"), ("move", "player_2")}


@pytest.mark.parametrize(
    "phase_texts, reason",
    [(["let's talk"], "No move found"), (["[pass]", "[harvest] lots"], "No harvest found"), (["[pass]", "[harvest] -3"], "No harvest found")],
)
def test_invalid_actions(phase_texts, reason):
    match = new_match(num_players=2)
    for text in phase_texts[:-1]:
        for player in match.players:
            match.submit(player, text)
    match.submit("player_0", phase_texts[-1])
    assert reason in match.last_error["player_0"]
    assert match.acting() == ["player_0", "player_1"]


def test_requests_within_the_stock_are_granted_and_the_stock_regrows_to_capacity():
    match = new_match(num_players=2)
    round_of(match, ["[pass]"] * 2, ["[harvest] 30", "I'll be modest [harvest] 5 no, [harvest] 10"])
    game = match.game
    assert game.harvests == {"player_0": 30, "player_1": 10}
    assert match.returns == {"player_0": 30.0, "player_1": 10.0}
    assert game.stock == 100  # 60 left, doubled to 120, capped at 100
    round_of(match, ["[pass]"] * 2, ["[harvest] 40", "[harvest] 30"])
    assert game.stock == 60 and game.round == 3  # 30 left, doubled


def test_growth_rate_and_capacity_options():
    match = new_match(num_players=2, initial_stock=80, capacity=90, growth_rate=0.5)
    round_of(match, ["[pass]"] * 2, ["[harvest] 20", "[harvest] 21"])
    assert match.game.stock == 58  # floor(39 * 1.5)


def test_over_demand_is_scaled_down_proportionally_and_the_remainder_stays():
    match = new_match(num_players=3, initial_stock=10, capacity=10, collapse_threshold=1)
    round_of(match, ["[pass]"] * 3, ["[harvest] 7"] * 3)
    # 21 asked of 10: each gets 7 * 10 // 21 = 3; one ton stays and doubles.
    assert match.game.harvests == {p: 3 for p in match.players}
    assert match.game.stock == 2 and not match.over


def test_a_request_above_the_stock_counts_as_the_whole_stock():
    match = new_match(num_players=2)
    for player in match.players:
        match.submit(player, "[pass]")
    assert match.game.parse("player_0", "[harvest] 999999999999999999999999") == 100


def test_collapse_ends_the_game_with_the_details():
    match = new_match(num_players=3, rounds=5)
    round_of(match, ["[pass]"] * 3, ["[harvest] 10"] * 3)
    round_of(match, ["[pass]"] * 3, ["[harvest] 60", "[harvest] 30", "[harvest] 30"])
    # Round 2: 120 asked of 100 -> 50, 25, 25; nothing left, below the threshold of 5.
    assert match.over
    outcome = match.outcome
    assert outcome.winners == [] and "collapsed in round 2" in outcome.reason
    assert match.returns == {"player_0": 60.0, "player_1": 35.0, "player_2": 35.0}
    details = outcome.details
    assert details["collapsed"] and not details["survived"] and details["rounds_survived"] == 1
    assert details["total_harvest"] == 130 and details["final_stock"] == 0
    assert details["harvests"] == {"player_0": 60, "player_1": 35, "player_2": 35}
    # Gini of (35, 35, 60): sum of |differences| over ordered pairs 100, over 2 * 9 * mean 130 / 3.
    assert details["gini"] == pytest.approx(100 / (2 * 9 * 130 / 3))


def test_stock_just_at_the_threshold_survives():
    match = new_match(num_players=2, rounds=1)
    round_of(match, ["[pass]"] * 2, ["[harvest] 50", "[harvest] 45"])
    details = match.outcome.details
    assert match.over and not details["collapsed"] and details["survived"] and details["rounds_survived"] == 1
    assert details["final_stock"] == 5


def test_surviving_the_horizon():
    match = new_match(num_players=2, rounds=3)
    for _ in range(3):
        round_of(match, ["[say] 10 each"] * 2, ["[harvest] 10", "[harvest] 30"])
    details = match.outcome.details
    assert details == {
        "collapsed": False,
        "survived": True,
        "rounds_survived": 3,
        "total_harvest": 120,
        "harvests": {"player_0": 30, "player_1": 90},
        "gini": 0.25,
        "final_stock": 60,
    }
    assert "survived all 3 rounds" in match.outcome.reason


def test_forfeit_takes_back_the_offenders_harvests():
    match = new_match(num_players=3, error_allowance=0)
    round_of(match, ["[pass]"] * 3, ["[harvest] 10", "[harvest] 20", "[harvest] 5"])
    match.submit("player_0", "[pass]")
    match.submit("player_1", "chatter without a tag")
    assert match.over
    assert match.returns == {"player_0": 10.0, "player_1": -1.0, "player_2": 5.0}
    outcome = match.outcome
    assert outcome.winners == [] and outcome.details["rounds_survived"] == 1 and not outcome.details["survived"]


@pytest.mark.parametrize(
    "option",
    [{"num_players": 1}, {"num_players": 9}, {"initial_stock": 101}, {"collapse_threshold": 200}, {"growth_rate": -1}, {"rounds": 0}],
)
def test_bad_options_are_rejected(option):
    with pytest.raises(ValueError):
        Commons(**option)


def play(names: list[str], seed: int, **options) -> Match:
    """One episode of scripted fishers, who must never make an invalid move."""
    match = Match(Commons, {"num_players": len(names), **options})
    match.reset(seed)
    agents = {p: parlour.make_agent(n, env_id=ENV_ID, seed=seed + i) for i, (p, n) in enumerate(zip(match.players, names))}
    while not match.over:
        for player in list(match.acting()):
            match.submit(player, agents[player].act(match.agent_observation(player)))
            assert match.steps[-1]["error"] is None, match.steps[-1]
    return match


@pytest.mark.parametrize("n", [2, 5, 8])
def test_sustainable_fishers_keep_the_lake_alive_for_the_whole_horizon(n):
    for seed, growth_rate in enumerate([1.0, 0.5, 0.25]):
        details = play(["sustainable"] * n, seed, growth_rate=growth_rate).outcome.details
        assert details["survived"] and details["rounds_survived"] == 12
        assert details["total_harvest"] > 0 and details["gini"] == 0.0


@pytest.mark.parametrize("n", [2, 5, 8])
def test_greedy_fishers_collapse_it_in_the_first_rounds(n):
    for seed in range(3):
        details = play(["greedy"] * n, seed).outcome.details
        assert details["collapsed"] and details["rounds_survived"] <= 1


def test_one_greedy_fisher_among_sustainable_ones_takes_the_most():
    match = play(["sustainable"] * 4 + ["greedy"], 0)
    harvests = match.outcome.details["harvests"]
    assert max(harvests, key=harvests.get) == "player_4"


def test_random_fishers_speak_only_valid_moves():
    for seed in range(5):
        assert play(["random"] * 4, seed).over
