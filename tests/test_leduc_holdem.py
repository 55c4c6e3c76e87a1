"""LeducHoldem: rules on hand-written deals, every ending, the heuristic agent, and a cross-check with OpenSpiel."""

from __future__ import annotations

import json

import numpy as np
import pytest

import parlour
from parlour.envs.core.match import Match
from parlour.envs.games.leduc_holdem import CARD_NAMES, LeducHoldem

ENV_ID = "parlour/LeducHoldem-v0"
J1, J2, Q1, Q2, K1, K2 = range(6)


def dealt(cards: list[int], **options) -> Match:
    """A match whose deal is replaced by ``cards`` (player_0's, player_1's, public)."""
    match = Match(LeducHoldem, options)
    match.reset(0)
    match.game.cards = list(cards)
    return match


def play(match: Match, *actions: str) -> None:
    """Submit ``actions`` in turn order; each must be valid."""
    for action in actions:
        match.submit(match.acting()[0], action)
        assert match.steps[-1]["error"] is None, match.steps[-1]


def test_fold_gives_the_pot_to_the_other_player():
    match = dealt([J1, K1, Q1])
    play(match, "raise", "fold")
    assert match.over
    assert match.returns == {"player_0": 1.0, "player_1": -1.0}
    assert match.outcome.winner == "player_0"
    assert "folded" in match.outcome.reason
    assert "cards" not in match.outcome.details, "a fold must not reveal the hidden cards"


def test_fold_in_round_two_loses_everything_put_in():
    match = dealt([J1, K1, Q1])
    play(match, "raise", "call", "raise", "raise", "fold")
    # player_0 put in 1 + 2 + 4 = 7 before folding to player_1's re-raise.
    assert match.returns == {"player_0": -7.0, "player_1": 7.0}


def test_pair_beats_high_card_at_showdown():
    match = dealt([J1, K1, J2])
    play(match, "check", "check", "raise", "call")
    assert match.over and match.outcome.winner == "player_0"
    assert match.returns == {"player_0": 5.0, "player_1": -5.0}
    assert match.outcome.details["cards"] == ["J♠", "K♠", "J♥"], "a showdown shows both hands and the public card"


def test_higher_card_wins_without_a_pair():
    match = dealt([Q1, K1, J1])
    play(match, "call", "call", "call", "call")
    assert match.returns == {"player_0": -1.0, "player_1": 1.0}
    assert match.outcome.winner == "player_1"


def test_equal_ranks_split_the_pot():
    match = dealt([Q1, Q2, K1])
    play(match, "raise", "call", "raise", "raise", "call")
    assert match.over
    assert match.returns == {"player_0": 0.0, "player_1": 0.0}
    assert match.outcome.winner is None and match.outcome.winners == [], "a split pot is a draw"
    assert match.outcome.details["pot"] == 22


def test_raise_sizes_and_the_raise_cap():
    match = dealt([J1, K1, Q1])
    game = match.game
    play(match, "raise")
    assert game.contributions == [3, 1]
    play(match, "raise")
    assert game.contributions == [3, 5]
    assert game.legal_moves("player_0") == ["fold", "call"]
    play(match, "call")
    assert game.round == 2 and game.contributions == [5, 5]
    assert game.to_move() == ["player_0"]
    play(match, "raise")
    assert game.contributions == [9, 5]


def test_fold_needs_something_owed_and_check_or_bet_need_nothing_owed():
    match = dealt([J1, K1, Q1])
    game = match.game
    assert game.legal_moves("player_0") == ["call", "raise"]
    with pytest.raises(parlour.InvalidMove):
        game.parse("player_0", "fold")
    assert game.parse("player_0", "I will check.") == "call"
    assert game.parse("player_0", "Let me bet") == "raise"
    play(match, "raise")
    with pytest.raises(parlour.InvalidMove, match="owe 2"):
        game.parse("player_1", "check")
    assert game.parse("player_1", "I won't raise, I fold") == "fold"


def test_players_see_only_their_own_card_and_the_public_card_after_round_one():
    match = Match(LeducHoldem, {})
    match.reset(3)
    game = match.game
    own, other, public = (CARD_NAMES[c] for c in game.cards)
    for player, mine, theirs in (("player_0", own, other), ("player_1", other, own)):
        view = game.view(player)
        assert view["card"] == mine and view["public_card"] is None
        assert theirs not in json.dumps(view, ensure_ascii=False)
        text = match.observation_text(player) + game.prompt(player, match.legal_moves(player))
        assert mine in text and theirs not in text and public not in text
    assert f"public: {public} (face down)" in game.render(), "the render is a spectator's view"
    play(match, "call")
    moves = [(m["sender"], m["text"]) for m in match.messages("player_1") if m["kind"] == "move"]
    assert moves == [("player_0", "player_0 checks.")]
    play(match, "call")
    assert game.view("player_1")["public_card"] == public
    assert public in match.observation_text("player_0")
    assert other not in match.observation_text("player_0")
    assert f"public: {public}\n" in game.render()


def test_exceeding_the_allowance_folds_the_offender():
    match = dealt([J1, K1, Q1], error_allowance=0)
    play(match, "raise", "raise")
    match.submit("player_0", "I am thinking")
    assert match.over
    assert match.returns == {"player_0": -3.0, "player_1": 3.0}
    assert match.outcome.winner == "player_1"


def test_vector_encodes_cards_chips_and_betting():
    match = dealt([J1, K1, Q1])
    play(match, "raise", "call", "check")
    values = match.game.vector("player_1")
    assert values.dtype == np.float32 and values.shape == (27,)
    assert values.min() >= 0 and values.max() <= 1
    assert list(values[:11]) == pytest.approx([0, 1, 0, 0, 1, 0, 1, 0, 1, 3 / 13, 3 / 13])
    # round 1: raise (01), call (10); round 2: check (10)
    assert list(values[11:15]) == [0, 1, 1, 0] and list(values[19:21]) == [1, 0]


def test_heuristic_beats_random():
    results = parlour.evaluate(ENV_ID, ["heuristic", "random"], episodes=200, seed=0, progress=False)
    assert results.summary["heuristic"]["mean_reward"] > 0.5


def test_same_deals_legal_moves_and_returns_as_openspiel():
    pyspiel = pytest.importorskip("pyspiel")
    spiel_game = pyspiel.load_game("leduc_poker")
    for seed in range(200):
        rng = np.random.default_rng(1000 + seed)
        match = Match(LeducHoldem, {})
        match.reset(seed)
        game = match.game
        state = spiel_game.new_initial_state()
        state.apply_action(game.cards[0])
        state.apply_action(game.cards[1])
        while not match.over:
            if state.is_chance_node():
                assert game.round == 2
                state.apply_action(game.cards[2])
            player = match.acting()[0]
            assert state.current_player() == match.players.index(player)
            legal = game.legal_actions(player)
            assert legal == state.legal_actions()
            action = legal[int(rng.integers(len(legal)))]
            match.submit(player, action)
            state.apply_action(action)
        assert state.is_terminal()
        assert [match.returns[p] for p in match.players] == state.returns()
