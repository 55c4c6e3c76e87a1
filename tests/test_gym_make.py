"""What ``gymnasium.make`` returns for a parlour environment: the face itself, with its options in every error."""

from __future__ import annotations

import gymnasium
import pytest

import parlour  # noqa: F401  (registers the environments)

TTT = "parlour/TicTacToe-v0"


@pytest.mark.parametrize(("typo", "meant"), [("oponent", "opponent"), ("seats", "seat"), ("obs_mod", "obs_mode"), ("render_mod", "render_mode")])
def test_a_misspelt_face_option_suggests_the_face_option(typo: str, meant: str) -> None:
    with pytest.raises(TypeError, match=rf"'{typo}' \(did you mean '{meant}'\?\)") as raised:
        gymnasium.make(TTT, **{typo: None})
    # The message lists the face's options beside the game's and the engine's.
    assert "opponent, seat, obs_mode, render_mode" in str(raised.value) and "max_turns" in str(raised.value)


def test_snapshot_restore_and_record_work_on_what_make_returns() -> None:
    env = gymnasium.make(TTT, opponent="random", seat=0)
    env.reset(seed=3)
    env.step("b2")
    saved = env.snapshot()
    first = env.step("a1")
    env.restore(saved)
    again = env.step("a1")
    assert first[0]["text"] == again[0]["text"] and first[1:4] == again[1:4]
    assert env.record()["steps"][0]["action"] == "b2"


def test_a_wrapper_added_by_the_user_reaches_the_face_through_get_wrapper_attr() -> None:
    env = gymnasium.make(TTT, max_episode_steps=20)
    env.reset(seed=0)
    saved = env.get_wrapper_attr("snapshot")()
    env.step("b2")
    env.get_wrapper_attr("restore")(saved)
    assert env.unwrapped.match.steps == []


def test_a_snapshot_taken_at_reset_keeps_the_reward_owed_to_the_first_step() -> None:
    # Hanabi, four players, the learner last: on this deal the partners' plays pay it before its first move, and its
    # first step hands that over, from a restored snapshot as from the live episode.
    env = gymnasium.make("parlour/Hanabi-v0", opponent="convention", seat=3, num_players=4)
    env.reset(seed=2)
    match = env.unwrapped.match
    assert match.returns["player_3"] != 0
    saved = env.snapshot()
    move = match.legal_moves("player_3")[0]
    first = env.step(move)
    # The episode's return so far is all the learner has been paid, and the first step paid it all.
    assert first[1] == pytest.approx(match.returns["player_3"])
    env.restore(saved)
    assert env.step(move)[1] == first[1]
