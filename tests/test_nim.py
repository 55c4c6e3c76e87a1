"""Nim: rules on known positions, both variants' endings, forfeit, and the optimality of ``nim_sum``."""

from __future__ import annotations

import functools
import itertools
import random

import pytest

import parlour
from parlour.baselines.nim import winning_move
from parlour.envs.core.match import Match
from parlour.envs.games.nim import Nim

ENV_ID = "parlour/Nim-v0"


def new_match(**options) -> Match:
    """A Nim match reset with seed 0."""
    match = Match(Nim, options)
    match.reset(0)
    return match


def play(match: Match, agents: dict) -> None:
    """Let ``agents`` (player -> agent) play ``match`` to the end."""
    while not match.over:
        (player,) = match.acting()
        match.submit(player, agents[player].act(match.agent_observation(player)))


@functools.cache
def mover_wins(heaps: tuple[int, ...], misere: bool) -> bool:
    """Brute force: whether the player to move wins ``heaps`` under perfect play."""
    if not any(heaps):
        # The previous player took the last object: it won in normal play, lost in misère.
        return misere
    for heap, size in enumerate(heaps):
        for count in range(1, size + 1):
            after = heaps[:heap] + (size - count,) + heaps[heap + 1 :]
            if not mover_wins(after, misere):
                return True
    return False


def test_moves_enumerate_every_heap_and_count():
    game = Nim(heaps=[1, 2])
    assert game.moves == ["take 1 from heap 1", "take 1 from heap 2", "take 2 from heap 2"]
    assert len(Nim().moves) == 3 + 5 + 7


def test_parse_takes_the_last_well_formed_move_in_prose():
    match = new_match()
    game = match.game
    text = "I could take 1 from heap 1, but I will Remove 2 objects from heap 3."
    assert game.parse("player_0", text) == "take 2 from heap 3"
    assert game.parse("player_0", "take 7 from heap 3") == "take 7 from heap 3"


@pytest.mark.parametrize(
    "text,complaint",
    [
        ("take 8 from heap 3", "between 1 and 7"),
        ("take 0 from heap 1", "between 1 and 3"),
        ("take 1 from heap 4", "no heap 4"),
        ("two from the second heap", "No move"),
    ],
)
def test_parse_rejects_impossible_moves_with_a_reason(text, complaint):
    match = new_match()
    match.submit("player_0", text)
    assert complaint in match.last_error["player_0"]
    assert match.game.heaps == [3, 5, 7] and match.acting() == ["player_0"]


def test_an_emptied_heap_cannot_be_taken_from():
    match = new_match()
    match.submit("player_0", "take 3 from heap 1")
    (announced,) = [m for m in match.messages("player_1") if m["kind"] == "move"]
    assert (announced["sender"], announced["text"]) == ("player_0", "player_0 takes 3 from heap 1.")
    assert match.game.heaps == [0, 5, 7]
    assert match.legal_moves("player_1")[:3] == ["take 1 from heap 2", "take 2 from heap 2", "take 3 from heap 2"]
    assert len(match.legal_moves("player_1")) == 12
    match.submit("player_1", "take 1 from heap 1")
    assert "empty" in match.last_error["player_1"]


def test_vector_is_each_heap_over_its_initial_size():
    match = new_match(heaps=[4, 2])
    match.submit("player_0", "take 1 from heap 1")
    assert match.game.vector("player_1").tolist() == [0.75, 1.0]


@pytest.mark.parametrize("misere,winner", [(False, "player_1"), (True, "player_0")])
def test_taking_the_last_object_wins_in_normal_play_and_loses_in_misere(misere, winner):
    match = new_match(heaps=[2, 1], misere=misere)
    match.submit("player_0", "take 2 from heap 1")
    match.submit("player_1", "take 1 from heap 2")
    assert match.over
    loser = "player_0" if winner == "player_1" else "player_1"
    assert match.outcome.winner == winner
    assert match.returns == {winner: 1.0, loser: -1.0}


def test_forfeit_after_the_allowance():
    match = new_match(error_allowance=0)
    match.submit("player_0", "take 1 from heap 1")
    match.submit("player_1", "pass")
    assert match.over
    assert match.outcome.winner == "player_0"
    assert match.returns == {"player_0": 1.0, "player_1": -1.0}


@pytest.mark.parametrize("options", [{"heaps": []}, {"heaps": [0, 2]}, {"heaps": "357"}, {"heaps": [1.5]}, {"misere": "yes"}])
def test_bad_options_are_rejected(options):
    with pytest.raises(ValueError):
        Nim(**options)


@pytest.mark.parametrize("misere", [False, True])
def test_winning_move_is_optimal_on_every_small_position(misere):
    for heaps in itertools.product(range(5), repeat=3):
        if not any(heaps):
            continue
        move = winning_move(list(heaps), misere)
        assert (move is not None) == mover_wins(heaps, misere), heaps
        if move is not None:
            heap, count = move
            assert 1 <= count <= heaps[heap]
            after = heaps[:heap] + (heaps[heap] - count,) + heaps[heap + 1 :]
            assert not mover_wins(after, misere), (heaps, move)


@pytest.mark.parametrize("misere", [False, True])
@pytest.mark.parametrize("heaps", [[3, 5, 7], [1, 2, 4], [2, 2, 1], [1, 1, 1]])
def test_nim_sum_never_loses_from_a_winning_position(heaps, misere):
    # The first player holds the winning position; otherwise nim_sum takes the second seat.
    seat = 0 if mover_wins(tuple(heaps), misere) else 1
    expert = f"player_{seat}"
    for seed in range(20):
        match = Match(Nim, {"heaps": heaps, "misere": misere})
        match.reset(seed)
        agents = {
            expert: parlour.make_agent("nim_sum", env_id=ENV_ID),
            f"player_{1 - seat}": parlour.make_agent("random", env_id=ENV_ID),
        }
        for i, agent in enumerate(agents.values()):
            agent.reset(seed=seed * 10 + i)
        play(match, agents)
        assert match.outcome.winner == expert


def test_nim_sum_beats_random_from_the_losing_seat_most_of_the_time():
    wins = 0
    for seed in range(40):
        match = Match(Nim, {})
        match.reset(seed)
        agents = {"player_0": parlour.make_agent("random", env_id=ENV_ID), "player_1": parlour.make_agent("nim_sum", env_id=ENV_ID)}
        agents["player_0"].reset(seed=seed)
        play(match, agents)
        wins += match.outcome.winner == "player_1"
    assert wins >= 32


@pytest.mark.parametrize("heaps", [[3, 5, 7], [1], [10, 1, 4, 4], [100, 2]])
def test_legal_moves_and_heaps_text_follow_the_heaps_at_every_move(heaps):
    rng = random.Random(1)
    for episode in range(10):
        match = Match(Nim, {"heaps": heaps})
        match.reset(episode)
        game = match.game
        while not match.over:
            player = match.acting()[0]
            assert game.legal_actions(player) == [i for i, (h, c) in enumerate(game.actions) if c <= game.heaps[h]]
            width = max(heaps)
            assert game.heaps_text() == "\n".join(f"heap {h + 1}: {'|' * size:<{width}} ({size})" for h, size in enumerate(game.heaps))
            match.submit(player, rng.choice(match.legal_moves_of(player)))
