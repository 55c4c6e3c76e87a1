"""Sokoban: pushes on known positions, the end of an episode both ways, generated levels, and the BFS solver."""

from __future__ import annotations

import pytest

from parlour.baselines import make_scripted
from parlour.baselines.sokoban import live_cells, solve
from parlour.envs.core.match import Match
from parlour.envs.puzzles.sokoban import LEVELS, Sokoban, deltas, step

ENV_ID = "parlour/Sokoban-v0"

#: A corridor level: the box must go right twice onto the goal.
CORRIDOR = ["#######", "#-----#", "#@-$-.#", "#-----#", "#######"]


def load(match: Match, rows: list[str]) -> None:
    """Put the level drawn in ``rows`` (XSB with ``-`` for floor; a square-padded room) into the match's game."""
    game = match.game
    size = game.size
    padded = rows + ["#" * size] * (size - len(rows))
    cells = {symbol: {r * size + c for r, row in enumerate(padded) for c, s in enumerate(row.ljust(size, "#")) if s == symbol} for symbol in "#.$*@+"}
    game.walls = frozenset(cells["#"])
    game.goals = frozenset(cells["."] | cells["*"] | cells["+"])
    game.boxes = frozenset(cells["$"] | cells["*"])
    (game.player,) = cells["@"] | cells["+"]
    match._refresh()


def new_match(difficulty: int = 2, rows: list[str] | None = None) -> Match:
    """A Sokoban match reset with seed 0, holding ``rows`` if given."""
    match = Match(Sokoban, {"difficulty": difficulty})
    match.reset(0)
    if rows is not None:
        load(match, rows)
    return match


def test_a_push_moves_the_box_and_a_blocked_push_changes_nothing():
    size = 7
    walls = frozenset({0, 1, 2, 10})
    assert step(walls, frozenset({16}), 15, 1) == (16, frozenset({17}), True)
    assert step(walls, frozenset({16, 17}), 15, 1) is None
    assert step(walls, frozenset(), 8, -size) is None
    assert step(walls, frozenset(), 15, 1) == (16, frozenset(), False)


def test_walking_into_a_wall_is_an_invalid_action_that_says_why():
    match = new_match(rows=CORRIDOR)
    assert match.legal_moves("player_0") == ["up", "down", "right"]
    match.submit("player_0", "left")
    assert "a wall" in match.last_error["player_0"] and match.game.moves_made == 0


def test_pushing_the_box_onto_the_goal_wins():
    match = new_match(rows=CORRIDOR)
    match.submit("player_0", "I walk east")
    match.submit("player_0", "right")
    assert match.game.map_rows()[2] == "#--@$.#" and match.game.pushes == 1
    match.submit("player_0", "right")
    assert match.over and match.returns == {"player_0": 1.0}
    outcome = match.outcome
    assert outcome.winners == ["player_0"]
    assert outcome.details == {"difficulty": 2, "success": True, "moves": 3, "pushes": 2, "max_moves": 80, "boxes": 1, "boxes_on_goals": 1}


def test_the_move_limit_ends_the_episode_as_a_failure():
    match = new_match(rows=CORRIDOR)
    for _ in range(match.game.max_moves // 2):
        match.submit("player_0", "up")
        match.submit("player_0", "down")
    assert match.over and match.returns == {"player_0": 0.0} and match.outcome.winners == []
    assert match.outcome.details["success"] is False and match.outcome.details["moves"] == 80


def test_a_box_cannot_be_pushed_into_another():
    match = new_match(rows=["#######", "#@$$-.#", "#######"])
    match.submit("player_0", "right")
    assert "cannot be pushed" in match.last_error["player_0"]


def test_forfeit_costs_one_and_reports_the_difficulty():
    match = new_match(difficulty=1, rows=["######", "#@$-.#", "######"])
    for _ in range(3):
        match.submit("player_0", "jump")
    assert match.over and match.returns == {"player_0": -1.0} and match.outcome.details["difficulty"] == 1


@pytest.mark.parametrize("difficulty", sorted(LEVELS))
def test_generated_levels_start_unsolved_and_the_solver_solves_them_within_the_limit(difficulty):
    for seed in range(4):
        match = Match(Sokoban, {"difficulty": difficulty})
        match.reset(seed)
        game = match.game
        size, boxes, _ = LEVELS[difficulty]
        assert game.size == size and len(game.boxes) == len(game.goals) == boxes and not game.boxes & game.goals
        plan = solve(game.walls, game.goals, game.boxes, game.player, size)
        assert plan is not None and len(plan) <= game.max_moves
        for move in plan:
            match.submit("player_0", move)
        assert match.over and match.returns == {"player_0": 1.0}


def test_the_solver_finds_the_fewest_pushes_and_knows_a_lost_level():
    match = new_match(rows=CORRIDOR)
    game = match.game
    assert solve(game.walls, game.goals, game.boxes, game.player, game.size) == ["right", "right", "right"]
    # A box in a corner that is not a goal can never move again.
    stuck = new_match(rows=["#######", "#$---.#", "#@----#", "#######"]).game
    assert 8 not in live_cells(stuck.walls, stuck.goals, stuck.size)
    assert solve(stuck.walls, stuck.goals, stuck.boxes, stuck.player, stuck.size) is None


def test_the_solver_agent_plays_a_generated_level_to_the_end():
    match = Match(Sokoban, {"difficulty": 3})
    match.reset(5)
    agent = make_scripted("solver", ENV_ID)
    agent.reset(5)
    while not match.over:
        match.submit("player_0", agent.act(match.agent_observation("player_0")))
    assert match.returns == {"player_0": 1.0}


def test_difficulty_is_validated():
    with pytest.raises(ValueError, match="difficulty must be an int from 1 to 5"):
        Sokoban(difficulty=6)
    with pytest.raises(ValueError, match="difficulty"):
        Sokoban(difficulty=True)


def test_vector_marks_walls_goals_boxes_and_player():
    match = new_match(rows=CORRIDOR)
    game = match.game
    vector = game.vector("player_0")
    cells = game.size * game.size
    assert vector.shape == (4 * cells + 1,) and vector[:cells].sum() == len(game.walls)
    assert vector[cells + 2 * 7 + 5] == 1 and vector[2 * cells + 2 * 7 + 3] == 1 and vector[3 * cells + 2 * 7 + 1] == 1
    assert deltas(7)["up"] == -7
