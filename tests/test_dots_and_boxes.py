"""DotsAndBoxes: lines, closing boxes and moving again, the end on known positions, the move grammar, the ``minimax``
agent, and a cross-check against OpenSpiel on several grid sizes."""

from __future__ import annotations

import numpy as np
import pytest

import parlour
from parlour.envs.core.match import Match
from parlour.envs.games.dots_and_boxes import DotsAndBoxes
from tests.openspiel_crosscheck import turn_based_disagreements

ENV_ID = "parlour/DotsAndBoxes-v0"


def new_match(**options) -> Match:
    """A match reset with seed 0."""
    match = Match(DotsAndBoxes, options)
    match.reset(0)
    return match


def draw(match: Match, *lines: str) -> None:
    """Draw ``lines`` in turn, each by the player to move; each must be valid."""
    for line in lines:
        match.submit(match.acting()[0], line)
        assert match.steps[-1]["error"] is None, match.steps[-1]


def test_lines_follow_openspiel_order():
    game = DotsAndBoxes(num_rows=2, num_cols=2)
    assert game.moves[:6] == ["a1-b1", "b1-c1", "a2-b2", "b2-c2", "a3-b3", "b3-c3"]
    assert game.moves[6:] == ["a1-a2", "b1-b2", "c1-c2", "a2-a3", "b2-b3", "c2-c3"]


def test_closing_a_box_scores_it_and_the_closer_draws_again():
    match = new_match()
    draw(match, "a1-b1", "a1-a2", "a2-b2")
    assert match.acting() == ["player_1"]
    draw(match, "b1-b2")
    assert match.game.owners[0] == 1 and match.acting() == ["player_1"]
    assert "closes 1 box" in match.observation_text("player_0")


def test_one_line_can_close_two_boxes():
    match = new_match(num_rows=1, num_cols=2)
    draw(match, "a1-b1", "b1-c1", "a2-b2", "b2-c2", "a1-a2", "c1-c2")
    mover = match.acting()[0]
    draw(match, "b1-b2")  # the middle line closes both boxes and ends the game
    assert match.over and match.game.owners == [match.players.index(mover)] * 2
    assert match.returns[mover] == 1.0 and match.outcome.winner == mover


def test_equal_boxes_are_a_draw():
    match = new_match(num_rows=1, num_cols=2)
    # player_0 closes the left box with its fourth line; player_1 then closes the right one.
    draw(match, "a1-b1", "a2-b2", "a1-a2", "b1-c1", "b1-b2")
    assert match.game.owners == [0, -1] and match.acting() == ["player_0"]
    draw(match, "b2-c2", "c1-c2")
    assert match.game.owners == [0, 1] and match.over
    assert match.outcome.winner is None and match.returns == {"player_0": 0.0, "player_1": 0.0}


@pytest.mark.parametrize("text", ["b1-a1", "a1 b1", "b1a1", "I join a1 to b1", "first c3-c4, no: A1-B1"])
def test_a_line_may_be_named_either_way_round(text):
    match = new_match()
    assert match.game.parse("player_0", text) == "a1-b1"


@pytest.mark.parametrize(
    "text,why", [("a1-c1", "not neighbouring"), ("a1-b2", "not neighbouring"), ("z9-z10", "not neighbouring"), ("the top line", "No line found")]
)
def test_bad_lines_are_explained(text, why):
    match = new_match()
    with pytest.raises(parlour.InvalidMove, match=why):
        match.game.parse("player_0", text)


def test_a_drawn_line_cannot_be_drawn_again():
    match = new_match()
    draw(match, "a1-b1")
    with pytest.raises(parlour.InvalidMove, match="already drawn"):
        match.game.parse("player_1", "b1-a1")


def test_sizes_are_validated():
    with pytest.raises(ValueError, match="num_rows must be an int from 1 to 10"):
        DotsAndBoxes(num_rows=0)
    assert len(DotsAndBoxes(num_rows=10, num_cols=10).moves) == 220


def test_minimax_takes_a_free_box_and_does_not_give_one_away():
    match = new_match(num_rows=1, num_cols=2)
    draw(match, "a1-b1", "a2-b2", "a1-a2")  # the left box has three sides; player_1 is to move
    agent = parlour.make_agent("minimax", env_id=ENV_ID)
    agent.reset(seed=0)
    assert agent.act(match.agent_observation("player_1")) == "b1-b2"


def test_matches_openspiel_legal_actions_and_returns():
    pytest.importorskip("pyspiel")
    moves = np.random.default_rng(7)  # one stream of random moves across the four sizes
    for rows, columns, episodes in ((3, 3, 80), (2, 2, 60), (1, 3, 30), (4, 2, 30)):
        size = {"num_rows": rows, "num_cols": columns}
        found = turn_based_disagreements(episodes, 0, DotsAndBoxes, size, "dots_and_boxes", size, rng=moves)
        assert found == (episodes, 0), size
