"""TicTacToe: rules on known positions, the ``minimax`` agent, and a cross-check against OpenSpiel."""

from __future__ import annotations

import random

import numpy as np
import pytest

import parlour
from parlour.envs.core.context import Context
from parlour.envs.core.match import Match
from parlour.envs.games.tic_tac_toe import BOARD, CELLS, LINES, TicTacToe
from tests.openspiel_crosscheck import turn_based_disagreements

ENV_ID = "parlour/TicTacToe-v0"


def new_match(**options) -> Match:
    """A TicTacToe match reset with seed 0."""
    match = Match(TicTacToe, options)
    match.reset(0)
    return match


def play_cells(match: Match, cells: list[int]) -> None:
    """Play the given cell indices, alternating from the player to move."""
    for cell in cells:
        (player,) = match.acting()
        match.submit(player, CELLS[cell])
        assert match.steps[-1]["error"] is None


def opponent_cells(line: tuple[int, int, int], count: int) -> list[int]:
    """``count`` cells off ``line`` for the other player; two marks can never make a line."""
    return [cell for cell in range(9) if cell not in line][:count]


@pytest.mark.parametrize("line", LINES)
def test_x_wins_with_every_line(line):
    match = new_match()
    o = opponent_cells(line, 2)
    play_cells(match, [line[0], o[0], line[1], o[1], line[2]])
    assert match.over and match.outcome.winner == "player_0"
    assert match.returns == {"player_0": 1.0, "player_1": -1.0}


@pytest.mark.parametrize("line", LINES)
def test_o_wins_with_every_line(line):
    match = new_match()
    # X's three cells must not form a line themselves.
    x = next(
        cells
        for cells in ([a, b, c] for a in range(9) for b in range(a + 1, 9) for c in range(b + 1, 9))
        if not set(cells) & set(line) and tuple(sorted(cells)) not in LINES
    )
    play_cells(match, [x[0], line[0], x[1], line[1], x[2], line[2]])
    assert match.over and match.outcome.winner == "player_1"
    assert match.returns == {"player_0": -1.0, "player_1": 1.0}


def test_full_board_without_a_line_is_a_draw():
    match = new_match()
    play_cells(match, [0, 4, 8, 1, 7, 6, 2, 5, 3])
    assert match.over and match.outcome.winner is None
    assert match.returns == {"player_0": 0.0, "player_1": 0.0}


def test_a_line_on_the_last_cell_is_a_win_not_a_draw():
    match = new_match()
    play_cells(match, [2, 1, 7, 3, 0, 5, 4, 6, 8])
    assert -1 not in match.game.board
    assert match.outcome.winner == "player_0" and match.returns["player_0"] == 1.0


def test_an_occupied_cell_is_an_invalid_action():
    match = new_match()
    play_cells(match, [4])
    match.submit("player_1", "b2")
    assert "not legal" in match.last_error["player_1"]
    assert match.acting() == ["player_1"] and match.game.board.count(-1) == 8
    assert match.submit("player_1", 4) == {} and "not legal" in match.last_error["player_1"]


def test_forfeit_after_the_allowance():
    match = new_match(error_allowance=1)
    play_cells(match, [4])
    match.submit("player_1", "b2")
    match.submit("player_1", "the middle one")
    assert match.over and match.outcome.winner == "player_0"
    assert match.returns == {"player_0": 1.0, "player_1": -1.0}


def play_agents(seed: int, names: dict[str, str]) -> Match:
    """One seeded game between named agents."""
    match = Match(TicTacToe, {})
    match.reset(seed)
    agents = {player: parlour.make_agent(name, env_id=ENV_ID) for player, name in names.items()}
    for i, agent in enumerate(agents.values()):
        agent.reset(seed=seed * 10 + i)
    while not match.over:
        (player,) = match.acting()
        match.submit(player, agents[player].act(match.agent_observation(player)))
    return match


@pytest.mark.parametrize("seat", ["player_0", "player_1"])
def test_minimax_never_loses_to_random(seat):
    other = "player_1" if seat == "player_0" else "player_0"
    outcomes = [play_agents(seed, {seat: "minimax", other: "random"}).outcome.winner for seed in range(100)]
    assert other not in outcomes
    assert outcomes.count(seat) > 50


def test_minimax_against_itself_always_draws():
    for seed in range(20):
        assert play_agents(seed, {"player_0": "minimax", "player_1": "minimax"}).outcome.winner is None


def test_matches_openspiel_legal_actions_and_returns():
    pytest.importorskip("pyspiel")
    assert turn_based_disagreements(200, 0, TicTacToe, {}, "tic_tac_toe", {}, rng=np.random.default_rng(7)) == (200, 0)


def test_the_kept_drawing_is_the_board_at_every_move_of_games_clones_and_loaded_views():
    rng = random.Random(0)
    for seed in range(30):
        match = Match(TicTacToe)
        match.reset(seed)
        game = match.game
        while True:
            assert game.board_text() == BOARD.format(*[".XO"[mark + 1] for mark in game.board])
            if match.over:
                break
            player = match.acting()[0]
            twin, loaded = game.clone(), TicTacToe.from_view(game.view(player))
            assert twin.board_text() == loaded.board_text() == game.board_text()
            twin.apply(Context(game.players, None), {player: match.legal_moves_of(player)[0]})
            assert twin.board_text() != game.board_text()
            match.submit(player, rng.choice(match.legal_moves_of(player)))
