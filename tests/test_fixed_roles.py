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
