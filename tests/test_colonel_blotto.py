"""ColonelBlotto: allocation grammar, scoring on known allocations, rounds, forfeit and the ``heuristic`` agent."""

from __future__ import annotations

import numpy as np
import pytest

import parlour
from parlour.envs.core.game import InvalidMove
from parlour.envs.core.match import Match
from parlour.envs.games.colonel_blotto import ColonelBlotto, compositions

ENV_ID = "parlour/ColonelBlotto-v0"


def new_match(**options) -> Match:
    """A Blotto match reset with seed 0."""
    match = Match(ColonelBlotto, options)
    match.reset(0)
    return match


def play_round(match: Match, first: str, second: str) -> dict[str, float]:
    """Submit both allocations; the rewards paid when the round resolves."""
    match.submit("player_0", first)
    return match.submit("player_1", second)


def test_moves_are_every_composition():
    game = ColonelBlotto()
    assert len(game.moves) == 66 == len(set(game.moves))
    assert game.moves[0] == "0 0 10" and game.moves[-1] == "10 0 0"
    assert compositions(2, 2) == [(0, 2), (1, 1), (2, 0)]
    assert all(sum(map(int, move.split())) == 10 for move in game.moves)


@pytest.mark.parametrize(
    "text",
    ["4 3 3", "4,3,3", "4-3-3", "[4, 3, 3]", "A4 B3 C3", "A: 4, B: 3, C: 3", "c=3 a=4 b=3", "Maybe 5 5 0? No: my final answer is 4 3 3."],
)
def test_allocation_grammar_accepts_natural_variants(text):
    assert ColonelBlotto().parse("player_0", text) == "4 3 3"


@pytest.mark.parametrize(
    "text,complaint",
    [("4 4 4", "uses 12 soldiers"), ("1 2 3 4", "No allocation"), ("A5 B5", "No allocation"), ("3.5 3 3.5", "No allocation"), ("", "No allocation")],
)
def test_malformed_allocations_are_rejected_with_a_reason(text, complaint):
    with pytest.raises(InvalidMove, match=complaint):
        ColonelBlotto().parse("player_0", text)


@pytest.mark.parametrize(
    "first,second,rewards,winner",
    [
        ("4 3 3", "5 5 0", {"player_0": -1.0, "player_1": 1.0}, "player_1"),
        ("0 0 10", "1 1 8", {"player_0": -1.0, "player_1": 1.0}, "player_1"),
        ("4 4 2", "3 3 4", {"player_0": 1.0, "player_1": -1.0}, "player_0"),
        ("5 3 2", "5 2 3", {}, None),
        ("4 3 3", "4 3 3", {}, None),
    ],
)
def test_round_scoring_on_known_allocations(first, second, rewards, winner):
    match = new_match()
    assert play_round(match, first, second) == rewards
    assert match.over and match.outcome.winners == ([] if winner is None else [winner])


def test_rounds_accumulate_and_the_most_rounds_won_wins():
    match = new_match(rounds=3)
    play_round(match, "4 3 3", "5 5 0")
    play_round(match, "4 4 2", "3 3 4")
    assert not match.over and match.game.wins == {"player_0": 1, "player_1": 1}
    play_round(match, "4 4 2", "10 0 0")
    assert match.over
    assert match.returns == {"player_0": 1.0, "player_1": -1.0}
    assert match.outcome.winner == "player_0"


def test_forfeit_counts_as_losing_every_round():
    match = new_match(rounds=3, error_allowance=0)
    play_round(match, "4 4 2", "3 3 4")
    match.submit("player_0", "all on A")
    assert match.over
    assert match.returns == {"player_0": -3.0, "player_1": 3.0}
    assert match.outcome.winners == ["player_1"]


def test_a_pending_allocation_is_never_shown_to_the_other_player():
    match = new_match(rounds=2)
    before = match.agent_observation("player_1")
    match.submit("player_0", "10 0 0")
    assert match.agent_observation("player_1") == before
    match.submit("player_1", "3 3 4")
    assert "your opponent sent A10 B0 C0" in match.observation_text("player_1")
    assert match.agent_observation("player_1")["view"]["history"] == ({"you": (3, 3, 4), "opponent": (10, 0, 0)},)


def test_vector_holds_rounds_and_the_last_allocations():
    match = new_match(rounds=2)
    play_round(match, "4 4 2", "8 2 0")
    assert match.game.vector("player_0").tolist() == pytest.approx([0.5, 0.5, 0.0, 0.4, 0.4, 0.2, 0.8, 0.2, 0.0])
    assert match.game.vector("player_1").tolist() == pytest.approx([0.5, 0.0, 0.5, 0.8, 0.2, 0.0, 0.4, 0.4, 0.2])


def test_large_configurations_are_text_only_and_still_play():
    match = new_match(fields=5, soldiers=100)
    assert match.game.moves is None and match.legal_moves("player_0") is None
    agents = {"player_0": parlour.make_agent("heuristic", env_id=ENV_ID, seed=0), "player_1": parlour.make_agent("random", env_id=ENV_ID, seed=1)}
    for player in match.players:
        match.submit(player, agents[player].act(match.agent_observation(player)))
    assert match.over and match.steps[0]["error"] is None and match.steps[1]["error"] is None
    assert all(len(a) == 5 and sum(a) == 100 for a in match.game.history[0].values())


def test_random_allocations_are_uniform_over_compositions():
    agent = parlour.make_agent("random", env_id=ENV_ID, seed=3)
    view = {"fields": 3, "soldiers": 2}
    counts: dict[str, int] = {}
    for _ in range(600):
        move = agent.free_move({"view": view})
        counts[move] = counts.get(move, 0) + 1
    assert sorted(counts) == sorted(" ".join(map(str, c)) for c in compositions(2, 3))
    assert min(counts.values()) > 60


@pytest.mark.parametrize("options", [{"fields": 1}, {"fields": 27}, {"soldiers": 0}, {"rounds": 0}, {"soldiers": 2.5}])
def test_bad_options_are_rejected(options):
    with pytest.raises(ValueError):
        ColonelBlotto(**options)


def test_heuristic_beats_uniform_random():
    heuristic = parlour.make_agent("heuristic", env_id=ENV_ID, seed=1)
    random_agent = parlour.make_agent("random", env_id=ENV_ID, seed=2)
    wins = losses = 0
    for seed in range(300):
        match = new_match()
        match.reset(seed)
        play_round(
            match,
            heuristic.act(match.agent_observation("player_0")),
            random_agent.act(match.agent_observation("player_1")),
        )
        wins += match.outcome.winner == "player_0"
        losses += match.outcome.winner == "player_1"
    assert wins / (wins + losses) > 0.55


def test_nash_is_an_approximate_equilibrium_that_beats_the_even_split_and_random():
    from parlour.baselines.colonel_blotto import MAX_EQUILIBRIUM_MOVES, equilibrium

    allocations, probabilities = equilibrium(10, 3)
    mine = np.array(allocations)
    payoff = np.sign((mine[:, None, :] > mine[None, :, :]).sum(axis=2) - (mine[:, None, :] < mine[None, :, :]).sum(axis=2))
    assert probabilities.sum() == pytest.approx(1.0) and (probabilities >= 0).all()
    # No allocation earns more than 0.01 a round against it (the game's value is 0).
    assert (payoff @ probabilities).max() < 0.01
    even = allocations.index((4, 3, 3))
    assert -(payoff[even] @ probabilities) > 0 and -(np.full(len(allocations), 1 / len(allocations)) @ payoff @ probabilities) > 0.05
    with pytest.raises(ValueError, match="use heuristic"):
        equilibrium(60, 5)
    assert len(compositions(60, 5)) > MAX_EQUILIBRIUM_MOVES
