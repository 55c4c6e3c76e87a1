"""Goofspiel: bids, ties, the forced last turn and prize orders on known games, the ``matching`` agent, and a cross-check against OpenSpiel.

The cross-check's full count (the issue's 1000 episodes)::

    .venv/bin/python -c "from tests.test_goofspiel import disagreements; print(disagreements(1000))"
"""

from __future__ import annotations

import numpy as np
import pytest

import parlour
from parlour.envs.core.errors import InvalidMove
from parlour.envs.core.match import Match
from parlour.envs.games.goofspiel import Goofspiel

ENV_ID = "parlour/Goofspiel-v0"


def new_match(**options) -> Match:
    """A Goofspiel match reset with seed 0."""
    match = Match(Goofspiel, options)
    match.reset(0)
    return match


def bid(match: Match, first: str, second: str) -> dict[str, float]:
    """Both players' bids for the prize up; the rewards paid when the turn resolves."""
    match.submit("player_0", first)
    return match.submit("player_1", second)


def test_defaults_are_openspiels():
    game = Goofspiel()
    assert (game.num_cards, game.points_order) == (13, "random")
    assert game.moves[0] == "bid 1" and game.moves[12] == "bid 13" and game.vector_size == 236


@pytest.mark.parametrize("text", ["7", " 7\n", "bid 7", "BID 7", "I bid 13? No: bid 7", "bid 7."])
def test_a_bare_number_or_the_last_bid_mentioned_is_the_move(text):
    assert Goofspiel().parse("player_0", text) == "bid 7"


@pytest.mark.parametrize(
    "text,complaint", [("14", "No move found"), ("0", "No move found"), ("seven", "No move found"), ("9" * 5000, "No move found")]
)
def test_a_card_outside_the_hand_is_rejected_with_a_reason(text, complaint):
    with pytest.raises(InvalidMove, match=complaint):
        Goofspiel().parse("player_0", text)


def test_a_spent_card_is_an_invalid_action():
    match = new_match(num_cards=4, points_order="ascending")
    bid(match, "bid 2", "bid 1")
    match.submit("player_0", "bid 2")
    assert "not legal" in match.last_error["player_0"]
    assert match.game.legal_moves("player_0") == ["bid 1", "bid 3", "bid 4"]


def test_the_higher_bid_takes_the_prize_a_tie_discards_it_and_the_last_card_plays_itself():
    match = new_match(num_cards=4, points_order="ascending")
    game = match.game
    assert game.prize == 1
    assert bid(match, "bid 2", "bid 1") == {}
    assert game.points == [1, 0] and game.prize == 2
    bid(match, "bid 3", "bid 3")  # the 2 is discarded
    assert game.points == [1, 0] and game.prize == 3
    rewards = bid(match, "bid 1", "bid 4")  # player_1 takes the 3; then 4 against 2 for the 4 without a question
    assert match.over and game.history == [(1, 2, 1), (2, 3, 3), (3, 1, 4), (4, 4, 2)]
    assert game.points == [5, 3] and rewards == {"player_0": 1.0, "player_1": -1.0}
    assert match.outcome.winner == "player_0" and "points 5 to 3" in match.outcome.reason


def test_equal_points_are_a_draw_and_descending_order_turns_up_the_highest_first():
    match = new_match(num_cards=3, points_order="descending")
    assert match.game.prize == 3
    bid(match, "bid 3", "bid 1")  # player_0 takes the 3
    assert match.game.prize == 2
    bid(match, "bid 2", "bid 3")  # player_1 takes the 2, then the 1 with 2 against 1
    assert match.over and match.game.points == [3, 3]
    assert match.outcome.winners == [] and match.returns == {"player_0": 0.0, "player_1": 0.0}


def test_random_prizes_come_from_the_seed():
    orders = []
    for seed in (0, 0, 1):
        match = Match(Goofspiel, {})
        match.reset(seed)
        while not match.over:
            bid(match, match.game.legal_moves("player_0")[0], match.game.legal_moves("player_1")[0])
        orders.append([prize for prize, _, _ in match.game.history])
    assert orders[0] == orders[1] != orders[2] and sorted(orders[0]) == list(range(1, 14))


def test_a_pending_bid_reaches_nobody():
    match = new_match()
    match.submit("player_0", "bid 13")
    view = match.game.view("player_1")
    assert view["history"] == [] and view["opponent_hand"] == list(range(1, 14))
    assert match.game.legal_moves("player_1") == [f"bid {v}" for v in range(1, 14)]


def test_matching_bids_the_prize_and_the_nearest_card_once_it_is_spent():
    agent = parlour.make_agent("matching", env_id=ENV_ID)
    assert agent.act({"view": {"prize": 9, "hand": list(range(1, 14))}}) == "bid 9"
    assert agent.act({"view": {"prize": 9, "hand": [2, 8, 10, 13]}}) == "bid 8"
    assert agent.act({"view": {"prize": 9, "hand": [2, 11, 13]}}) == "bid 11"


def disagreements(episodes: int, num_cards: int = 13, points_order: str = "random", seed: int = 0) -> tuple[int, int]:
    """(episodes, episodes where any step differs from OpenSpiel's ``goofspiel``) on uniformly random bids.

    Each step compares both players' legal actions and observation tensors;
    each episode's end compares the returns. OpenSpiel's random prizes are
    fed the prizes the parlour game drew.
    """
    import pyspiel

    spiel_game = pyspiel.load_game("goofspiel", {"num_cards": num_cards, "points_order": points_order})
    rng = np.random.default_rng(seed)
    mismatches = 0
    for episode in range(episodes):
        match = Match(Goofspiel, {"num_cards": num_cards, "points_order": points_order})
        match.reset(seed + episode)
        game, state = match.game, spiel_game.new_initial_state()
        agrees = True
        while agrees and not match.over:
            if state.is_chance_node():
                state.apply_action(game.prize - 1)
            for p, player in enumerate(game.players):
                agrees &= game.legal_actions(player) == state.legal_actions(p)
                agrees &= game.vector(player).tolist() == state.observation_tensor(p)
            actions = [int(rng.choice(game.legal_actions(player))) for player in game.players]
            for player, action in zip(game.players, actions):
                match.submit(player, action if episode % 2 else game.moves[action])
            state.apply_actions(actions)
            agrees &= match.over == state.is_terminal()
        agrees &= [match.returns[p] for p in match.players] == state.returns()
        agrees &= all(game.vector(player).tolist() == state.observation_tensor(p) for p, player in enumerate(game.players))
        mismatches += not agrees
    return episodes, mismatches


@pytest.mark.parametrize("num_cards,points_order,episodes", [(13, "random", 150), (4, "random", 100), (6, "ascending", 20), (5, "descending", 20)])
def test_matches_openspiel_legal_actions_observations_and_returns(num_cards, points_order, episodes):
    pytest.importorskip("pyspiel")
    assert disagreements(episodes, num_cards, points_order) == (episodes, 0)
