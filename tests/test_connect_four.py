"""ConnectFour: rules on known positions, every way a game ends, OpenSpiel cross-check, and the minimax baseline."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest

import parlour
from parlour.baselines.connect_four import MinimaxAgent
from parlour.envs.core.context import Context
from parlour.envs.core.match import Match
from parlour.envs.games.connect_four import ConnectFour

ENV_ID = "parlour/ConnectFour-v0"
#: A full 6x7 board without a line, as the 1-based columns played in turn.
DRAW = "461547114517541355666172452242736227373363"


def play(sequence: str | list[int], **options) -> Match:
    """A match after the given 1-based columns were played in turn."""
    match = Match(ConnectFour, options)
    match.reset(0)
    for column in sequence:
        match.submit(match.acting()[0], f"column {column}")
    return match


@pytest.mark.parametrize(
    "columns,winner,line",
    [
        ("1122334", "player_0", "horizontal"),
        ("1212121", "player_0", "vertical"),
        ("12233434474", "player_0", "rising diagonal"),
        ("76655454414", "player_0", "falling diagonal"),
        ("71212121", "player_1", "vertical"),
    ],
)
def test_each_kind_of_line_wins(columns, winner, line):
    match = play(columns)
    loser = "player_1" if winner == "player_0" else "player_0"
    assert match.over
    assert match.outcome.winner == winner
    assert match.outcome.details == {"line": line}
    assert match.returns == {winner: 1.0, loser: -1.0}
    assert match.steps[-1]["rewards"] == {winner: 1.0, loser: -1.0}


def test_three_in_a_row_does_not_win_but_does_with_x_in_row_3():
    assert not play("11223").over
    assert play("11223", x_in_row=3).outcome.winner == "player_0"


def test_full_board_without_a_line_is_a_draw():
    before_last = play(DRAW[:-1])
    assert not before_last.over and before_last.game.legal_actions("player_1") == [2]
    match = play(DRAW)
    assert match.over and match.outcome.winner is None
    assert "draw" in match.outcome.reason
    assert match.returns == {"player_0": 0.0, "player_1": 0.0}


def test_discs_fall_and_a_full_column_is_not_legal():
    match = play("111111")
    game = match.game
    assert [row[0] for row in game.board] == [0, 1, 0, 1, 0, 1]  # row 0 is the bottom
    assert game.legal_actions("player_0") == [1, 2, 3, 4, 5, 6]
    match.submit("player_0", "column 1")
    assert match.last_error["player_0"].startswith("'column 1' is not legal now")
    assert match.acting() == ["player_0"] and not match.over
    match.submit("player_0", 0)
    assert "not legal" in match.last_error["player_0"]


def test_the_last_move_in_reasoning_counts_and_bare_numbers_are_not_moves():
    match = play("")
    match.submit("player_0", "Column 3 is weak because of 4 threats; I prefer column 5.")
    assert match.steps[-1]["move"] == "column 5" and match.game.board[0][4] == 0
    match.submit("player_1", "4")
    assert match.steps[-1]["error"].startswith("No move found")


def test_exceeding_the_invalid_action_allowance_forfeits():
    match = play("4", error_allowance=1)
    match.submit("player_1", "pass")
    assert not match.over
    match.submit("player_1", "column 99")
    assert match.over and match.outcome.winner == "player_0"
    assert match.returns == {"player_0": 1.0, "player_1": -1.0}


def test_options_size_the_moves_and_the_vector():
    game = ConnectFour(rows=4, columns=5, x_in_row=3)
    assert game.moves == ["column 1", "column 2", "column 3", "column 4", "column 5"]
    assert game.vector_size == 40
    for bad in ({"rows": 0}, {"columns": 2.5}, {"x_in_row": 8}, {"x_in_row": True}):
        with pytest.raises(ValueError):
            ConnectFour(**bad)


def test_vector_and_view_are_from_the_players_side():
    match = play("45")
    game = match.game
    first, second = game.vector("player_0"), game.vector("player_1")
    assert first.dtype == np.float32 and first.shape == (84,)
    assert np.flatnonzero(first).tolist() == [3, 42 + 4]
    assert np.flatnonzero(second).tolist() == [4, 42 + 3]
    view = game.view("player_1")
    assert view["mark"] == 1 and view["board"][0][3:5] == [0, 1] and view["to_move"] == 0
    assert "X" in game.render() and "O" in game.render()


def test_moves_are_announced_as_the_movers():
    match = play("4")
    (message,) = match.messages("player_1")[1:-1]  # between the rules and the prompt
    assert (message["kind"], message["sender"], message["text"]) == ("move", "player_0", "player_0 (X) plays column 4.")


def test_discs_lined_up_only_across_an_edge_of_the_board_do_not_win():
    # X holds the top three cells of column 1, then drops a disc to the bottom of column 2: the next
    # cell after them when cells are counted column by column.
    match = play("716171161715")
    match.submit("player_0", "column 2")
    assert match.steps[-1]["error"] is None and not match.over
    # X holds (row 3, column 1), (row 4, column 2), (row 5, column 3), rising to the top edge, then
    # drops a disc to the bottom of column 5, where a rising diagonal counted without the top edge would go on.
    board = [[-1] * 7 for _ in range(6)]
    for column, marks in enumerate([[1, 0, 1, 0], [0, 1, 1, 0, 0], [1, 0, 0, 1, 1, 0]]):
        for row, mark in enumerate(marks):
            board[row][column] = mark
    board[0][6] = 1
    game = ConnectFour.from_view({"board": board, "mark": 0, "to_move": 0, "rows": 6, "columns": 7, "x_in_row": 4})
    ctx = Context(game.players, np.random.default_rng(0))
    game.apply(ctx, {"player_0": "column 5"})
    assert ctx.ending is None and game.board[0][4] == 0


def test_from_view_loads_the_position_and_clones_play_on_alone():
    match = play("4453352231")
    game = match.game
    view = game.view("player_0")
    loaded = ConnectFour.from_view(view)
    assert loaded.view("player_0") == view and loaded.to_move() == ["player_0"]
    assert loaded.legal_actions("player_0") == game.legal_actions("player_0")
    copy = loaded.clone()
    ctx = Context(copy.players, np.random.default_rng(0))
    copy.apply(ctx, {"player_0": "column 6"})
    assert ctx.ending is None and copy.to_move() == ["player_1"]
    assert loaded.view("player_0") == view and copy.board[0][5] == 0
    winning = loaded.clone()
    ctx = Context(winning.players, np.random.default_rng(0))
    winning.apply(ctx, {"player_0": "column 3"})  # X's third disc in column 3, and after O's reply its fourth
    assert ctx.ending is None
    winning.apply(ctx, {"player_1": "column 7"})
    winning.apply(ctx, {"player_0": "column 3"})
    assert ctx.ending.winners == ["player_0"] and ctx.ending.details == {"line": "vertical"}
    assert ctx.step_rewards == {"player_0": 1.0, "player_1": -1.0}
    assert loaded.view("player_0") == view
    with pytest.raises(ValueError, match="rows"):
        ConnectFour.from_view({**view, "rows": 5})


@pytest.mark.parametrize("options", [{}, {"rows": 4, "columns": 5, "x_in_row": 3}, {"rows": 3, "columns": 3, "x_in_row": 3}])
def test_legal_moves_and_returns_match_openspiel(options):
    spiel_game = pyspiel.load_game("connect_four", options)
    rng = np.random.default_rng(1)
    for seed in range(40):
        match = Match(ConnectFour, options)
        match.reset(seed)
        state = spiel_game.new_initial_state()
        while not state.is_terminal():
            player = match.acting()[0]
            assert match.players.index(player) == state.current_player()
            assert match.game.legal_actions(player) == state.legal_actions()
            action = int(rng.choice(state.legal_actions()))
            match.submit(player, action if seed % 2 else match.game.moves[action])
            state.apply_action(action)
            assert match.over == state.is_terminal()
        assert [match.returns[p] for p in match.players] == state.returns()


def minimax_against_random(seed: int, minimax_seat: int) -> float:
    """The minimax agent's return in one game against random."""
    match = Match(ConnectFour)
    match.reset(seed)
    minimax, rand = parlour.make_agent("minimax", env_id=ENV_ID), parlour.make_agent("random", env_id=ENV_ID)
    minimax.reset(seed)
    rand.reset(seed + 1000)
    agents = {match.players[minimax_seat]: minimax, match.players[1 - minimax_seat]: rand}
    while not match.over:
        player = match.acting()[0]
        match.submit(player, agents[player].act(match.agent_observation(player)))
    return match.returns[match.players[minimax_seat]]


def test_minimax_beats_random():
    results = [(seed % 2, minimax_against_random(seed, seed % 2)) for seed in range(50)]
    assert sum(r == 1.0 for _, r in results) >= 45
    assert all(r > -1.0 for seat, r in results if seat == 0)


def test_minimax_takes_a_win_and_blocks_a_loss():
    agent = MinimaxAgent(seed=0)
    match = play("121217")  # X has three in column 1, O two in column 2
    assert agent.act(match.agent_observation("player_0")) == "column 1"
    match = play("33441")  # X holds the bottom of columns 1, 3 and 4: O must fill column 2
    assert agent.act(match.agent_observation("player_1")) == "column 2"
    match = play("1525", rows=4, columns=5, x_in_row=3)  # three in a row wins: X completes its bottom row
    assert agent.act(match.agent_observation("player_0")) == "column 3"


def test_minimax_is_deterministic_under_a_seed_and_checks_depth():
    first = MinimaxAgent(seed=3, depth=2)
    second = MinimaxAgent(seed=3, depth=2)
    observation = play("4").agent_observation("player_1")
    assert [first.act(observation) for _ in range(5)] == [second.act(observation) for _ in range(5)]
    with pytest.raises(ValueError, match="depth"):
        MinimaxAgent(depth=0)


def drawn_from_board(game: ConnectFour) -> str:
    """The board text written out from ``game.board``, cell by cell, as the players are shown it."""
    width = len(str(game.columns))
    lines = [" ".join(str(c + 1).rjust(width) for c in range(game.columns))]
    for row in reversed(game.board):
        lines.append(" ".join(".XO"[mark + 1].rjust(width) for mark in row))
    return "\n".join(lines)


@pytest.mark.parametrize("options", [{}, {"rows": 3, "columns": 12, "x_in_row": 3}, {"rows": 1, "columns": 1, "x_in_row": 1}])
def test_the_kept_drawing_is_the_board_at_every_move_of_games_clones_and_loaded_views(options):
    rng = np.random.default_rng(0)
    for _ in range(20):
        match = Match(ConnectFour, options)
        match.reset(0)
        game = match.game
        assert game.board_text() == drawn_from_board(game)
        while not match.over:
            player = match.acting()[0]
            match.submit(player, str(rng.choice(match.legal_moves_of(player))))
            assert game.board_text() == drawn_from_board(game)
            assert game.render() in match.render()
            twin = game.clone()
            loaded = ConnectFour.from_view(game.view(player))
            assert twin.board_text() == loaded.board_text() == game.board_text()
            if not match.over:
                twin.apply(Context(game.players, rng), {match.acting()[0]: match.legal_moves_of(match.acting()[0])[0]})
                assert twin.board_text() == drawn_from_board(twin) != game.board_text()
