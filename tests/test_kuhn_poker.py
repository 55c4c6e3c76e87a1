"""KuhnPoker: every way a hand ends, private information, OpenSpiel cross-check, and the exact Nash baseline."""

from __future__ import annotations

import copy
import itertools

import gymnasium
import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as spiel_policy
from open_spiel.python.algorithms import exploitability

import parlour
from parlour.baselines.kuhn_poker import NashAgent, nash_probabilities
from parlour.envs.core.match import Match
from parlour.envs.games.kuhn_poker import CARDS, MOVES, KuhnPoker

ENV_ID = "parlour/KuhnPoker-v0"
DEALS = list(itertools.permutations(CARDS, 2))


def dealt(cards: tuple[str, str]) -> Match:
    """A fresh match whose seed deals ``cards`` to (player_0, player_1)."""
    for seed in range(1000):
        match = Match(KuhnPoker)
        match.reset(seed)
        if tuple(match.game.cards) == cards:
            return match
    raise AssertionError(f"no seed below 1000 deals {cards}")


def play(cards: tuple[str, str], moves: list[str]) -> Match:
    """The match after ``moves`` were played in turn from the deal ``cards``."""
    match = dealt(cards)
    for move in moves:
        match.submit(match.acting()[0], move)
    return match


def test_the_deal_is_two_distinct_cards_and_every_deal_occurs():
    seen = set()
    for seed in range(60):
        match = Match(KuhnPoker)
        match.reset(seed)
        seen.add(tuple(match.game.cards))
    assert seen == set(DEALS)


@pytest.mark.parametrize(
    "cards,moves,returns,winner",
    [
        (("K", "J"), ["check", "check"], 1.0, "player_0"),
        (("J", "Q"), ["check", "check"], -1.0, "player_1"),
        (("K", "Q"), ["check", "bet", "fold"], -1.0, "player_1"),
        (("Q", "K"), ["check", "bet", "call"], -2.0, "player_1"),
        (("J", "K"), ["bet", "fold"], 1.0, "player_0"),
        (("K", "Q"), ["bet", "call"], 2.0, "player_0"),
    ],
)
def test_every_way_a_hand_ends_pays_the_chips(cards, moves, returns, winner):
    match = play(cards, moves)
    assert match.over and match.outcome.winner == winner
    assert match.returns == {"player_0": returns, "player_1": -returns}
    assert match.steps[-1]["rewards"] == match.returns
    assert all(step["rewards"] == {} for step in match.steps[:-1])
    showdown = moves[-1] != "fold"
    assert ("cards" in match.outcome.details) == showdown
    assert match.outcome.details["history"] == moves


def test_only_the_owner_sees_a_card_until_the_showdown():
    match = dealt(("K", "J"))  # cards appear in the text as "King (K)": the rules only name the ranks
    assert "King (K)" in match.observation_text("player_0") and "(J)" not in match.observation_text("player_0")
    assert "Jack (J)" in match.agent_observation("player_1")["text"]
    assert "(K)" not in match.agent_observation("player_1")["text"]
    assert match.game.view("player_1") == {"seat": 1, "card": "J", "history": [], "pot": 2, "opponent_card": None}
    (deal,) = [message for message in match.messages("player_1") if message["kind"] == "event"]
    assert (deal["to"], deal["sender"], deal["text"]) == (["player_1"], None, "Your card is the Jack (J).")
    match.submit("player_0", "bet")
    assert "(K)" not in match.observation_text("player_1") and "You face a bet" in match.observation_text("player_1")
    (move,) = [message for message in match.messages("player_1") if message["kind"] == "move"]
    assert (move["sender"], move["to"], move["text"]) == ("player_0", None, "player_0 bets.")
    match.submit("player_1", "call")
    for player in match.players:
        assert "Showdown: player_0 shows the King (K), player_1 shows the Jack (J)" in match.observation_text(player)
    assert match.game.view("player_1")["opponent_card"] == "K" and match.game.view("player_0")["pot"] == 4


def test_a_fold_reveals_nothing():
    match = play(("Q", "J"), ["bet", "fold"])
    assert match.game.view("player_0")["opponent_card"] is None
    assert "(J)" not in match.observation_text("player_0")


def test_moves_must_fit_the_situation():
    match = dealt(("Q", "K"))
    assert match.legal_moves("player_0") == ["check", "bet"]
    match.submit("player_0", "call")
    assert match.last_error["player_0"].startswith("'call' is not legal now")
    match.submit("player_0", "I will not raise; I bet.")
    assert match.steps[-1]["move"] == "bet"
    assert match.legal_moves("player_1") == ["fold", "call"]
    match.submit("player_1", 0)
    assert "not legal" in match.last_error["player_1"] and not match.over


def test_exceeding_the_invalid_action_allowance_loses_like_a_fold():
    match = Match(KuhnPoker, {"error_allowance": 0})
    match.reset(0)
    match.submit("player_0", "raise")
    assert match.over and match.outcome.winner == "player_1"
    assert match.returns == {"player_0": -1.0, "player_1": 1.0}


def test_legal_moves_vectors_and_returns_match_openspiel():
    game = pyspiel.load_game("kuhn_poker")
    rng = np.random.default_rng(7)
    for seed in range(200):
        match = Match(KuhnPoker)
        match.reset(seed)
        state = game.new_initial_state()
        for card in match.game.cards:
            state.apply_action(CARDS.index(card))
        while not state.is_terminal():
            player = match.acting()[0]
            seat = match.players.index(player)
            assert seat == state.current_player()
            legal = match.game.legal_actions(player)
            assert sorted(i % 2 for i in legal) == state.legal_actions()
            assert match.game.vector(player).tolist() == state.information_state_tensor(seat)
            index = int(rng.choice(legal))
            match.submit(player, index if seed % 2 else MOVES[index])
            state.apply_action(index % 2)
            assert match.over == state.is_terminal()
        assert [match.returns[p] for p in match.players] == state.returns()


def expected_value(match: Match, alpha: float) -> float:
    """player_0's exact expected return from ``match`` when both players follow the equilibrium ``alpha``."""
    if match.over:
        return match.returns["player_0"]
    player = match.acting()[0]
    view = match.game.view(player)
    total = 0.0
    for move, probability in nash_probabilities(view["card"], view["history"], alpha).items():
        if probability > 0:
            child = copy.deepcopy(match)
            child.submit(player, move)
            total += probability * expected_value(child, alpha)
    return total


@pytest.mark.parametrize("alpha", [0.0, 1 / 6, 1 / 3])
def test_nash_self_play_is_worth_minus_one_eighteenth_to_player_0(alpha):
    value = sum(expected_value(dealt(cards), alpha) for cards in DEALS) / len(DEALS)
    assert value == pytest.approx(-1 / 18, abs=1e-12)


def tabular_policy(alpha: float) -> spiel_policy.TabularPolicy:
    """OpenSpiel's tabular policy filled from :func:`nash_probabilities`."""
    game = pyspiel.load_game("kuhn_poker")
    table = spiel_policy.TabularPolicy(game)
    for key, row in table.state_lookup.items():
        card, letters = CARDS[int(key[0])], key[1:]
        history = []
        for letter in letters:
            facing = "bet" in history
            history.append(("fold", "call")[letter == "b"] if facing else ("check", "bet")[letter == "b"])
        for move, probability in nash_probabilities(card, history, alpha).items():
            table.action_probability_array[row, MOVES.index(move) % 2] = probability
    return table


@pytest.mark.parametrize("alpha", [0.0, 1 / 6, 1 / 3])
def test_nash_is_unexploitable(alpha):
    game = pyspiel.load_game("kuhn_poker")
    assert exploitability.exploitability(game, tabular_policy(alpha)) < 1e-9


def test_the_tabular_policy_maps_moves_to_openspiel_actions():
    table = tabular_policy(1 / 6)
    assert table.policy_for_key("0").tolist() == pytest.approx([5 / 6, 1 / 6])  # Jack bluffs with alpha
    assert table.policy_for_key("0b").tolist() == pytest.approx([1.0, 0.0])  # Jack folds to a bet
    assert table.policy_for_key("2p").tolist() == pytest.approx([0.0, 1.0])  # King bets after a check


def test_nash_rejects_alpha_outside_the_family_and_impossible_histories():
    with pytest.raises(ValueError, match="alpha"):
        NashAgent(alpha=0.5)
    with pytest.raises(ValueError, match="no decision"):
        nash_probabilities("K", ["bet", "call"])


def test_nash_agent_plays_through_gymnasium_reproducibly():
    def episode(seed: int) -> list:
        env = gymnasium.make(ENV_ID, opponent="nash")
        env.reset(seed=seed)
        agent = parlour.make_agent("nash", env_id=ENV_ID)
        agent.reset(seed=seed)
        terminated = False
        while not terminated:
            observation = env.unwrapped.match.agent_observation("player_0")
            _, _, terminated, _, _ = env.step(agent.act(observation))
        return env.unwrapped.record()["steps"]

    for seed in range(5):
        assert episode(seed) == episode(seed)
        assert all(step["error"] is None for step in episode(seed))
