"""2048: slides and merges on known rows, the spawns, the endings and the options, the ``corner`` agent, and a
cross-check against OpenSpiel's ``2048`` (its chance nodes fed the tiles parlour drew).

OpenSpiel keeps each tile's "merged this move" flag until the next move, so its legal actions leave out a move
whose only change is a merge into a tile the previous move made, although that move changes the grid; parlour
allows it, as 2048 does. The cross-check plays OpenSpiel's legal moves and checks that this is the only
difference, move by move, with :func:`openspiel_legal`. The full count (the issue's 1000 episodes)::

    .venv/bin/python -c "from tests.test_twenty_forty_eight import disagreements; print(disagreements(1000))"
"""

from __future__ import annotations

import numpy as np
import pytest

import parlour
from parlour.envs.core.match import Match
from parlour.envs.puzzles.twenty_forty_eight import LINES, SIZE, TwentyFortyEight, slide, stuck
from tests.game_positions import play

ENV_ID = "parlour/TwentyFortyEight-v0"
UP, RIGHT, DOWN, LEFT = range(4)


def grid(*rows: str) -> tuple[int, ...]:
    """A board from rows of four numbers (``.`` or ``0`` empty), top row first."""
    return tuple(0 if tile == "." else int(tile) for row in rows for tile in row.split())


def position(board: tuple[int, ...], score: int = 0, moves: int = 0, **options) -> TwentyFortyEight:
    """A game on ``board`` after ``moves`` moves that scored ``score``."""
    game = TwentyFortyEight(**options)
    game.board, game.score, game.moves_made = board, score, moves
    return game


def test_a_line_closes_up_and_each_pair_merges_once_nearest_the_edge_first():
    board = grid("2 2 2 2", "2 2 2 .", "4 . 4 4", "8 4 4 .")
    after, score = slide(board, LEFT)
    assert after == grid("4 4 . .", "4 2 . .", "8 4 . .", "8 8 . .") and score == 4 + 4 + 4 + 8 + 8
    after, score = slide(board, RIGHT)
    assert after == grid(". . 4 4", ". . 2 4", ". . 4 8", ". . 8 8") and score == 28
    after, score = slide(grid("2 . . .", "2 . . .", "4 . . .", "4 . . ."), DOWN)
    assert after == grid(". . . .", ". . . .", "4 . . .", "8 . . .") and score == 12


def test_only_a_move_that_changes_the_grid_is_legal():
    game = position(grid("2 4 . .", ". . . .", ". . . .", ". . . ."))
    assert game.legal_moves("player_0") == ["right", "down"]
    assert stuck(grid("2 4 2 4", "4 2 4 2", "2 4 2 4", "4 2 4 2")) and not stuck(grid("2 4 2 4", "4 2 4 2", "2 4 2 4", "4 2 4 4"))


def test_a_move_pays_its_merges_and_adds_one_tile():
    game = position(grid("2 2 . .", ". . . .", ". . . .", ". . . ."), score=10)
    ctx = play(game, "left")
    assert ctx.step_rewards == {"player_0": 4.0} and game.score == 14 and ctx.ending is None
    ((cell, value),) = game.spawned
    assert value in (2, 4) and cell != 0 and game.board[cell] == value
    assert game.board[0] == 4 and sum(tile > 0 for tile in game.board) == 2


def test_new_tiles_are_twos_nine_times_in_ten_on_a_uniform_empty_cell():
    values, cells = [], []
    for seed in range(2000):
        game = position(grid("2 . . .", ". . . .", ". . . .", ". . . ."))
        play(game, "right", seed)
        ((cell, value),) = game.spawned
        values.append(value)
        cells.append(cell)
    assert 0.08 < values.count(4) / len(values) < 0.12
    assert set(cells) == set(range(SIZE * SIZE)) - {3}


def test_the_start_has_two_tiles():
    match = Match(TwentyFortyEight, {})
    match.reset(3)
    assert sum(tile > 0 for tile in match.game.board) == 2 and len(match.game.spawned) == 2


def test_making_the_max_tile_wins_at_once_without_a_new_tile():
    game = position(grid("8 8 . .", ". . . .", ". . . .", ". . . ."), score=20, max_tile=16)
    ctx = play(game, "left")
    assert ctx.ending.winners == ["player_0"] and ctx.step_rewards == {"player_0": 16.0}
    assert sum(tile > 0 for tile in game.board) == 1 and ctx.ending.details["success"] and ctx.ending.details["score"] == 36


def test_a_full_grid_with_no_merge_left_ends_the_game():
    # The new tile can only land on a1 of the bottom row, beside a 16 and a 32: nothing is left to merge.
    game = position(grid("2 4 2 4", "4 2 4 2", "16 4 2 4", "32 8 16 ."))
    ctx = play(game, "right")
    assert game.board[12] in (2, 4) and ctx.ending.winners == [] and "no move is left" in ctx.ending.reason and not ctx.ending.details["success"]


def test_the_horizon_ends_after_twice_max_tile_less_one_moves():
    game = position(grid("2 . . .", ". . . .", ". . . .", ". . . ."), moves=2 * 8 - 2, max_tile=8)
    ctx = play(game, "right")
    assert game.moves_made == 15 == game.max_moves and "move limit" in ctx.ending.reason


def test_options_and_the_vector():
    with pytest.raises(ValueError, match="power of two"):
        TwentyFortyEight(max_tile=100)
    with pytest.raises(ValueError, match="power of two"):
        TwentyFortyEight(max_tile=4)
    game = position(grid("2 . . .", ". . . .", ". . . .", ". . . 16"), max_tile=16)
    rows = game.vector("player_0").reshape(SIZE * SIZE, 5)
    assert game.vector_size == 80 and [int(np.argmax(row)) for row in rows] == [1] + [0] * 14 + [4]


def test_a_forfeit_takes_the_score_back():
    match = Match(TwentyFortyEight, {"error_allowance": 0})
    match.reset(0)
    match.submit("player_0", match.game.legal_moves("player_0")[0])
    match.submit("player_0", "north")
    assert match.over and match.returns["player_0"] == -1.0


def test_corner_keeps_the_largest_tile_in_its_corner():
    agent = parlour.make_agent("corner", env_id=ENV_ID)
    agent.reset(seed=0)
    # Left merges the 4s beside the 64 in its corner; right or up would pull the 64 out.
    game = position(grid(". . . .", ". . . .", ". . . .", "64 . 4 4"))
    assert game.legal_moves("player_0") == ["up", "right", "left"] and agent.act({"view": game.view("player_0")}) == "left"
    # Down brings the 2 onto the snake above the 64; up or right would pull the 64 out.
    game = position(grid("2 . . .", ". . . .", ". . . .", "64 32 . ."))
    assert game.legal_moves("player_0") == ["up", "right", "down"] and agent.act({"view": game.view("player_0")}) == "down"


def merged_cells(board: tuple[int, ...], direction: int) -> set[int]:
    """The cells where a move's merges land: OpenSpiel flags them until the next move."""
    cells = set()
    for line in LINES[direction]:
        tiles = [board[cell] for cell in line if board[cell]]
        slot = i = 0
        while i < len(tiles):
            if i + 1 < len(tiles) and tiles[i] == tiles[i + 1]:
                cells.add(line[slot])
                i += 1
            i += 1
            slot += 1
    return cells


def openspiel_legal(board: tuple[int, ...], flagged: set[int], legal: list[int]) -> list[int]:
    """The moves of ``legal`` OpenSpiel allows: it refuses one whose only change is a merge into a ``flagged`` tile."""
    allowed = []
    for direction in legal:
        for line in LINES[direction]:
            tiles = [(slot, line[slot]) for slot in range(SIZE) if board[line[slot]]]
            # A tile moves if a gap lies ahead of it, or merges with the tile ahead unless that one is flagged.
            if any(
                slot != k or (k and board[tiles[k - 1][1]] == board[cell] and tiles[k - 1][1] not in flagged) for k, (slot, cell) in enumerate(tiles)
            ):
                allowed.append(direction)
                break
    return allowed


def disagreements(episodes: int, seed: int = 0, dawdle: bool = False, **options) -> tuple[int, int, int, dict[str, int]]:
    """(episodes, episodes where any step differs from OpenSpiel's ``2048``, OpenSpiel's stale-flag refusals met,
    how many games ended each way: ``win``, ``stuck``, ``limit``).

    Play is uniformly random over OpenSpiel's legal moves (with ``dawdle``,
    over those that do not make the max tile where there are any, so that
    games reach the move limit); its chance nodes
    are given the tiles parlour drew. Each step compares the legal moves
    (parlour's, less the ones :func:`openspiel_legal` says OpenSpiel's stale
    flags refuse), their names, the board (OpenSpiel's observation tensor),
    the step's reward and whether the game is over; each episode's end
    compares the returns.
    """
    import pyspiel

    max_tile = TwentyFortyEight(**options).max_tile
    spiel_game = pyspiel.load_game("2048", {"max_tile": max_tile})
    rng = np.random.default_rng(seed)
    mismatches = refusals = 0
    endings = {"win": 0, "stuck": 0, "limit": 0}
    for episode in range(episodes):
        match = Match(TwentyFortyEight, options)
        match.reset(seed + episode)
        game, state = match.game, spiel_game.new_initial_state()
        flagged: set[int] = set()
        agrees = True
        for cell, value in game.spawned:
            state.apply_action(2 * cell + (value == 4))
        while agrees and not match.over:
            legal = game.legal_actions("player_0")
            expected = openspiel_legal(game.board, flagged, legal)
            refusals += len(legal) - len(expected)
            agrees &= expected == state.legal_actions() and state.current_player() == 0
            agrees &= [game.moves[a] for a in legal] == [state.action_to_string(0, a).lower() for a in legal]
            agrees &= np.array_equal(np.asarray(state.observation_tensor(0)), game.board)
            if not agrees:
                break
            slow = [a for a in expected if game.max_tile not in slide(game.board, a)[0]] if dawdle else []
            action = int(rng.choice(slow or expected))
            flagged = merged_cells(game.board, action)
            match.submit("player_0", action if episode % 2 else game.moves[action])
            state.apply_action(action)
            agrees &= match.steps[-1]["rewards"].get("player_0", 0.0) == state.rewards()[0]
            if state.is_chance_node():  # the move's new tile (none once the max tile is made)
                ((cell, value),) = game.spawned
                state.apply_action(2 * cell + (value == 4))
            agrees &= match.over == state.is_terminal()
        agrees &= state.is_terminal() and match.returns["player_0"] == state.returns()[0]
        mismatches += not agrees
        reason = match.outcome.reason
        endings["win" if "made the" in reason else "stuck" if "no move" in reason else "limit"] += 1
    return episodes, mismatches, refusals, endings


def test_matches_openspiel_on_random_play():
    pytest.importorskip("pyspiel")
    episodes, mismatches, refusals, endings = disagreements(120)
    assert (episodes, mismatches) == (120, 0) and refusals > 0 and endings["stuck"] == 120
    episodes, mismatches, _, endings = disagreements(100, dawdle=True, max_tile=16)
    assert (episodes, mismatches) == (100, 0) and endings["limit"] > 0 and endings["win"] > 0
