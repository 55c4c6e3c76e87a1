"""Each advantage estimator of the LLM trainer against a table computed by hand.

One small turn table serves them all: game ``E``, seed 7 played three times
(episodes 0-2, two seats) and seed 8 once (episode 3, one seat). Every seat's
turn rewards add up to its return, the final reward lands on its last turn,
and the rows of episode 2 are out of turn order on purpose.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from parlour.baselines.train.advantages import ESTIMATORS, compute_advantages

ROWS = [
    # episode, seed, seat, turn, reward, episode_return, state
    (0, 7, "p0", 0, 0.0, 1.0, "s0"),
    (0, 7, "p1", 0, 0.0, -1.0, "t0"),
    (0, 7, "p0", 1, 1.0, 1.0, "s1"),
    (0, 7, "p1", 1, -1.0, -1.0, "t1"),
    (1, 7, "p0", 0, -1.0, -1.0, "s0"),
    (1, 7, "p1", 0, 1.0, 1.0, "t0"),
    (2, 7, "p0", 2, 1.5, 1.0, "s2"),
    (2, 7, "p0", 0, -0.5, 1.0, "s0"),
    (2, 7, "p0", 1, 0.0, 1.0, "s1"),
    (3, 8, "p0", 0, 0.0, 0.0, "s0"),
]


def table() -> dict[str, np.ndarray]:
    """The turn table above as columns."""
    episode, seed, seat, turn, reward, episode_return, state = zip(*ROWS)
    return {
        "episode": np.array(episode),
        "env_id": np.array(["E"] * len(ROWS)),
        "seed": np.array(seed),
        "seat": np.array(seat),
        "turn": np.array(turn),
        "reward": np.array(reward),
        "episode_return": np.array(episode_return),
        "state": np.array(state),
    }


R3, R2 = math.sqrt(3), math.sqrt(2)
# GRPO groups: (E, 7, p0) returns 1, -1, 1: mean 1/3, std sqrt(4/3), so +1/sqrt(3) and -2/sqrt(3);
# (E, 7, p1) returns -1, 1: mean 0, std sqrt(2); (E, 8, p0) a group of one: 0.
GRPO = [1 / R3, -1 / R2, 1 / R3, -1 / R2, -2 / R3, 1 / R2, 1 / R3, 1 / R3, 1 / R3, 0.0]


def test_grpo_groups_share_env_seed_and_seat() -> None:
    advantages, state = compute_advantages("grpo", table(), "kept", eps=0.0)
    np.testing.assert_allclose(advantages, GRPO, atol=1e-9)
    assert state == "kept"


def test_rae_role_baselines_are_read_before_their_update() -> None:
    # decay 0.5, baselines start at 0, episodes in order, p0 before p1:
    # ep0 p0 R=1: A=1, b0=0.5 | ep0 p1 R=-1: A=-1, b1=-0.5 | ep1 p0 R=-1: A=-1.5, b0=-0.25
    # ep1 p1 R=1: A=1.5, b1=0.25 | ep2 p0 R=1: A=1.25, b0=0.375 | ep3 p0 R=0: A=-0.375, b0=0.1875
    expected = [1.0, -1.0, 1.0, -1.0, -1.5, 1.5, 1.25, 1.25, 1.25, -0.375]
    advantages, baselines = compute_advantages("rae", table(), None, decay=0.5)
    np.testing.assert_allclose(advantages, expected, atol=1e-12)
    assert baselines == {("E", "p0"): 0.1875, ("E", "p1"): 0.25}
    # The state carries over: the next batch starts from these baselines.
    again, _ = compute_advantages("rae", table(), baselines, decay=0.5)
    assert again[0] == pytest.approx(1.0 - 0.1875)


def test_turn_rtg_normalises_rewards_to_go_per_seat() -> None:
    # gamma 0.5, rewards-to-go over each seat's own turns:
    # p0: ep0 0.5, 1 | ep1 -1 | ep2 (turns 0,1,2) -0.125, 0.75, 1.5 | ep3 0  -> mean 0.375, var 4.09375 / 6
    # p1: ep0 -0.5, -1 | ep1 1                                              -> mean -1/6, var 13/12
    s0, s1 = math.sqrt(4.09375 / 6), math.sqrt(13 / 12)
    m1 = -1 / 6
    expected = [
        (0.5 - 0.375) / s0,
        (-0.5 - m1) / s1,
        (1 - 0.375) / s0,
        (-1 - m1) / s1,
        (-1 - 0.375) / s0,
        (1 - m1) / s1,
        (1.5 - 0.375) / s0,
        (-0.125 - 0.375) / s0,
        (0.75 - 0.375) / s0,
        (0 - 0.375) / s0,
    ]
    advantages, _ = compute_advantages("turn_rtg", table(), gamma=0.5, eps=0.0)
    np.testing.assert_allclose(advantages, expected, atol=1e-9)


def test_gigpo_adds_anchor_state_step_groups() -> None:
    # gamma 0.5, the same rewards-to-go as above, grouped by (env, seed, seat, state):
    # (7, p0, s0): rows 0, 4, 7 with 0.5, -1, -0.125: mean -5/24, deviations 17/24, -19/24, 2/24,
    #              std sqrt(327)/24, so 17, -19, 2 over sqrt(327)
    # (7, p0, s1): rows 2, 8 with 1, 0.75: +-1/sqrt(2) | (7, p1, t0): rows 1, 5 with -0.5, 1: -+1/sqrt(2)
    # (7, p0, s2), (7, p1, t1), (8, p0, s0): groups of one: 0
    q = math.sqrt(327)
    step = [17 / q, -1 / R2, 1 / R2, 0.0, -19 / q, 1 / R2, 0.0, 2 / q, -1 / R2, 0.0]
    advantages, _ = compute_advantages("gigpo", table(), gamma=0.5, step_weight=1.0, eps=0.0)
    np.testing.assert_allclose(advantages, np.add(GRPO, step), atol=1e-9)
    half, _ = compute_advantages("gigpo", table(), gamma=0.5, step_weight=0.5, eps=0.0)
    np.testing.assert_allclose(half, np.add(GRPO, np.multiply(step, 0.5)), atol=1e-9)


def test_estimators_by_name_and_their_errors() -> None:
    assert set(ESTIMATORS) == {"grpo", "rae", "turn_rtg", "gigpo"}
    with pytest.raises(ValueError, match="choose one of grpo, rae, turn_rtg, gigpo"):
        compute_advantages("ppo", table())
    broken = table()
    del broken["state"]
    with pytest.raises(KeyError, match="no column 'state'"):
        compute_advantages("gigpo", broken)
    broken = table()
    broken["reward"] = broken["reward"][:-1]
    with pytest.raises(ValueError, match="different lengths"):
        compute_advantages("grpo", broken)
