"""parlour/Mixture-v0: draws from weights, determinism under a seed, text observations over different games, the
curriculum's rule (up after successes, down after failures only when asked), per-episode difficulty in infos, history
and records, and records that replay."""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import parlour
from parlour.envs.mixture import Curriculum, Mixture

SOKOBAN = "parlour/Sokoban-v0"
NIM = "parlour/Nim-v0"


class Fixed:
    """An opponent that plays the first legal move: cheap and picklable."""

    name = "fixed"

    def act(self, observation: Mapping[str, Any]) -> str:
        """The first legal move."""
        return observation["legal_moves"][0]


def play_out(env: gymnasium.Env, seed: int | None = None, win: bool | None = None) -> dict[str, Any]:
    """One episode from ``reset(seed)``: legal first moves, or (``win`` set) the puzzle's solver's moves or a give-up."""
    observation, info = env.reset(seed=seed)
    start = info
    done = False
    while not done:
        if win is None:
            action = info["legal_moves"][0]
        elif win:
            solver = parlour.make_agent("solver", env_id=start["env_id"])
            action = solver.act(env.unwrapped.env.match.agent_observation("player_0"))
        else:
            action = "no move"  # invalid until the allowance is spent: a loss
        observation, reward, terminated, truncated, info = env.step(action)
        assert set(observation) == {"text", "messages"}
        done = terminated or truncated
    assert (info["env_id"], info["level"]) == (start["env_id"], start["level"])
    return start


def test_it_is_registered_and_draws_environments_by_weight():
    env = gymnasium.make("parlour/Mixture-v0", entries=[{"env_id": NIM, "weight": 3, "opponent": Fixed()}, {"env_id": SOKOBAN, "levels": [1]}])
    assert isinstance(env.unwrapped, Mixture)
    counts = Counter(env.reset(seed=seed)[1]["env_id"] for seed in range(400))
    # 3:1 weights: 300 of 400 expected; a binomial's 4-sigma band is about +-35.
    assert 265 <= counts[NIM] <= 335 and counts[NIM] + counts[SOKOBAN] == 400


def test_levels_are_drawn_by_their_weights_and_an_int_level_is_the_difficulty_option():
    env = Mixture([{"env_id": SOKOBAN, "levels": [1, 2, 5], "level_weights": [1, 0, 1]}])
    seen = Counter()
    for seed in range(60):
        _, info = env.reset(seed=seed)
        seen[info["level"]] += 1
        assert info["difficulty"] == {"difficulty": [1, 2, 5][info["level"]]}
        assert env.env.match.game.difficulty == info["difficulty"]["difficulty"]
    assert seen[1] == 0 and seen[0] > 10 and seen[2] > 10


def test_a_seed_reproduces_the_draws_and_the_episodes():
    entries = [{"env_id": NIM, "opponent": Fixed()}, {"env_id": SOKOBAN, "levels": [1, 2]}]

    def run(seed: int) -> list[tuple[Any, ...]]:
        env = Mixture(entries)
        env.reset(seed=seed)
        out = []
        for _ in range(6):
            observation, info = env.reset()
            out.append((info["env_id"], info["level"], observation["text"]))
        return out

    assert run(5) == run(5)
    assert run(5) != run(6)


def test_observations_are_text_with_moves_in_info():
    env = Mixture([{"env_id": NIM, "opponent": Fixed()}, SOKOBAN])
    for seed in range(4):
        observation, info = env.reset(seed=seed)
        assert env.observation_space.contains(observation)
        assert info["legal_moves"] and info["action_mask"].sum() == len(info["legal_moves"])


def test_records_carry_the_draw_and_replay():
    env = Mixture([{"env_id": NIM, "opponent": Fixed(), "levels": [{"heaps": [1, 2]}, {"heaps": [3, 4, 5]}]}, {"env_id": SOKOBAN, "levels": [1, 2]}])
    for seed in range(6):
        start = play_out(env, seed)
        record = env.record()
        assert record["mixture"] == {"episode": seed, **{key: start[key] for key in ("env_id", "level", "difficulty")}}
        assert record["env_id"] == start["env_id"]
        parlour.replay(record)
    assert [episode["episode"] for episode in env.history] == list(range(6))
    assert all(set(episode) == {"episode", "env_id", "level", "difficulty", "seed", "return", "success"} for episode in env.history)


def test_agent_specs_in_a_level_are_written_as_specs():
    env = Mixture([{"env_id": NIM, "levels": [{"opponent": parlour.AgentSpec("nim_sum")}, {"opponent": "random"}]}])
    difficulties = {env.reset(seed=seed)[1]["level"]: env.current["difficulty"] for seed in range(10)}
    assert difficulties == {0: {"opponent": "nim_sum"}, 1: {"opponent": "random"}}


def test_the_curriculum_raises_the_level_after_a_window_of_successes():
    env = Mixture([{"env_id": SOKOBAN, "levels": [1, 2, 3]}], curriculum={"window": 3, "promote": 0.6})
    levels = []
    for seed in range(8):
        levels.append(play_out(env, seed, win=True)["level"])
    assert levels == [0, 0, 0, 1, 1, 1, 2, 2]
    assert env.levels == [2] and all(episode["success"] for episode in env.history)
    assert [episode["difficulty"] for episode in env.history][:4] == [{"difficulty": 1}] * 3 + [{"difficulty": 2}]


def test_failures_hold_the_level_and_demote_lowers_it_only_when_set():
    held = Mixture([{"env_id": SOKOBAN, "levels": [1, 2]}], curriculum={"window": 2, "promote": 0.5})
    assert [play_out(held, seed, win=False)["level"] for seed in range(4)] == [0, 0, 0, 0]
    lowered = Mixture([{"env_id": SOKOBAN, "levels": [1, 2]}], curriculum={"window": 2, "promote": 1.0, "demote": 0.0})
    lowered.levels = [1]
    assert [play_out(lowered, seed, win=False)["level"] for seed in range(3)] == [1, 1, 0]


def test_the_curriculum_is_deterministic_under_a_seed():
    def levels(seed: int) -> list[int]:
        env = Mixture(
            [{"env_id": NIM, "opponent": Fixed(), "levels": [{"heaps": [1]}, {"heaps": [2, 3]}, {"heaps": [3, 5, 7]}]}],
            curriculum=Curriculum(window=2, promote=0.5, demote=0.0),
        )
        env.reset(seed=seed)
        return [play_out(env)["level"] for _ in range(12)]

    assert levels(3) == levels(3)


@pytest.mark.parametrize(
    "entries,curriculum,message",
    [
        ([], None, "non-empty"),
        ([{"env_id": "parlour/Nope-v0"}], None, "unknown environment"),
        ([{"env_id": NIM, "weight": 0}], None, "weight"),
        ([{"env_id": NIM, "levels": [1, 2], "level_weights": [1]}], None, "level_weights"),
        ([{"env_id": NIM, "levels": ["hard"]}], None, "levels"),
        ([NIM], {"window": 0}, "window"),
        ([NIM], {"promote": 0.5, "demote": 0.7}, "demote"),
    ],
)
def test_bad_entries_and_curricula_are_refused(entries, curriculum, message):
    with pytest.raises((ValueError, KeyError), match=message):
        Mixture(entries, curriculum=curriculum)


def test_gymnasium_check_env_passes():
    check_env(Mixture([{"env_id": NIM, "opponent": Fixed()}, {"env_id": SOKOBAN, "levels": [1, 2]}]), skip_render_check=True)


def test_step_before_reset_is_refused():
    with pytest.raises(RuntimeError, match="reset"):
        Mixture([NIM]).step("take 1 from heap 1")


def test_the_history_books_the_learners_whole_return_and_the_rewards_sum_to_it():
    # Hanabi with four players and the learner last: the partners' plays pay it before its first move (issue 32).
    env = Mixture([{"env_id": "parlour/Hanabi-v0", "opponent": "convention", "seat": 3, "num_players": 4}])
    paid_before = 0
    for seed in range(10):
        _, info = env.reset(seed=seed)
        face = env.env
        paid_before += face.match.returns[face.player] != 0
        total, done = 0.0, False
        while not done:
            _, reward, terminated, truncated, info = env.step(info["legal_moves"][0])
            total += reward
            done = terminated or truncated
        booked = env.history[-1]["return"]
        assert booked == pytest.approx(env.record()["returns"][face.player], abs=1e-9), seed
        assert total == pytest.approx(booked, abs=1e-9), seed
    assert paid_before > 0
