"""Fixed-role games (a debate's judge and debaters): rotating seats is refused before any episode, with the fix named."""

from __future__ import annotations

import pytest

import parlour

DEBATE = "parlour/Debate-v0"


def test_rotating_a_fixed_role_game_is_refused_up_front_naming_no_rotate() -> None:
    # Rotation seated the judge-only verifier as debater_a, which failed mid-run without naming the fix.
    with pytest.raises(ValueError, match=r"--no-rotate.*rotate_seats=False"):
        parlour.evaluate(DEBATE, ["honest", "dishonest", "verifier"], episodes=3, progress=False)


def test_a_fixed_role_game_plays_in_seat_order_without_rotation() -> None:
    results = parlour.evaluate(DEBATE, ["honest", "dishonest", "verifier"], episodes=2, rotate_seats=False, progress=False)
    assert all(record["agents"]["judge"] == "verifier" for record in results.records)


def test_a_live_match_of_a_fixed_role_game_keeps_its_seats_in_order(tmp_path) -> None:
    # Live matches rotated seats whatever the game: the remote debater was seated as the judge in the third episode.
    from parlour.baselines import make_scripted
    from parlour.leaderboard.api import Leaderboard
    from parlour.leaderboard.live import LiveHub, play_local

    board = Leaderboard(f"sqlite:///{tmp_path}/lb.db", bootstrap=0)
    board.add_submitter("alice")
    play_local(LiveHub(board, episodes=3), "alice", make_scripted("honest", DEBATE), DEBATE, opponent="random", name="my_debater")
    seatings = [seating for _, seating, _, _ in board.store.results(DEBATE)]
    assert len(seatings) == 3
    assert all(seating == {"debater_a": "my_debater", "debater_b": "random", "judge": "random"} for seating in seatings)
