"""The AEC face in text mode: no action mask in the observation (a mask on demand instead), and infos built when read."""

from __future__ import annotations

import json
import pickle
import random

import numpy as np
import pytest
from pettingzoo import AECEnv

import parlour
from parlour.envs.core.aec import AECGame
from tests.conftest import ENV_IDS

SHARED = ["parlour/TicTacToe-v0", "parlour/ConnectFour-v0", "parlour/KuhnPoker-v0", "parlour/LiarsDice-v0", "parlour/Nim-v0"]


@pytest.mark.parametrize("env_id", SHARED)
def test_text_observations_carry_no_mask_and_the_mask_comes_on_demand(env_id):
    env = parlour.make_aec(env_id)
    env.reset(seed=1)
    agent = env.agent_selection
    observation = env.observe(agent)
    assert "action_mask" not in observation and "action_mask" not in env.observation_space(agent).spaces
    assert env.observation_space(agent).contains(observation)
    mask = env.action_mask(agent)
    moves = env.match.game.moves
    assert mask.dtype == np.int8 and [moves[i] for i in np.flatnonzero(mask)] == env.infos[agent]["legal_moves"]
    vector = parlour.make_aec(env_id, obs_mode="vector")
    vector.reset(seed=1)
    assert np.array_equal(vector.observe(agent)["action_mask"], mask)


def test_a_game_without_enumerable_moves_says_it_has_no_mask():
    env_id = next(e for e in ENV_IDS if not parlour.make_aec(e).match.game.enumerable)
    env = parlour.make_aec(env_id)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="no enumerable moves"):
        env.action_mask(env.agent_selection)


def eager_infos(env) -> dict:
    """The infos of every live agent, built afresh from the match."""
    return {agent: env.match.info(agent) for agent in env.agents}


@pytest.mark.parametrize("env_id", SHARED)
def test_infos_built_when_read_equal_the_match_s_at_every_step(env_id):
    env = parlour.make_aec(env_id)
    rng = random.Random(0)
    for seed in range(3):
        env.reset(seed=seed)
        for agent in env.agent_iter():
            observation, _, terminated, truncated, info = env.last()
            assert info == env.match.info(agent)
            assert env.infos is env.infos and env.infos == eager_infos(env)
            assert env.infos[agent] is info  # last() built the one the dict holds
            if terminated or truncated:
                env.step(None)
                assert agent not in env.infos
            else:
                env.step(rng.choice(info["legal_moves"]))
        assert env.infos == {}


def test_a_closing_step_builds_no_info_of_the_agents_left():
    env = parlour.make_aec("parlour/TicTacToe-v0")
    env.reset(seed=0)
    for move in ("a1", "a2", "b1", "b2", "c1"):
        env.step(move)
    env.step(None)
    assert env._infos == {}  # nothing was read, so nothing was built
    assert list(env.infos) == ["player_0"] and env.infos["player_0"]["outcome"]["winner"] == "player_0"


def test_a_refused_closing_step_keeps_the_agent_and_its_info():
    env = parlour.make_aec("parlour/TicTacToe-v0")
    env.reset(seed=0)
    for move in ("a1", "a2", "b1", "b2", "c1"):
        env.step(move)
    agent = env.agent_selection
    info = env.last()[4]
    with pytest.raises(ValueError):
        env.step("a3")
    assert agent in env.agents and env.infos[agent] is info


def test_snapshot_and_restore_keep_the_infos_built_or_not():
    env = parlour.make_aec("parlour/KuhnPoker-v0")
    env.reset(seed=2)
    env.step(env.last()[4]["legal_moves"][0])
    saved = env.snapshot()
    expected = {agent: dict(info) for agent, info in env.infos.items()}
    env.step(env.last()[4]["legal_moves"][1])
    env.restore(saved)
    assert env.infos == expected and env.last()[4] == expected[env.agent_selection]


def test_reading_a_text_observation_s_mask_says_where_the_mask_is():
    env = parlour.make_aec("parlour/Nim-v0")
    env.reset(seed=0)
    observation = env.last()[0]
    with pytest.raises(KeyError, match=r"no action mask.*action_mask\(agent\)"):
        observation["action_mask"]
    with pytest.raises(KeyError, match="'other'"):
        observation["other"]
    assert observation.get("action_mask") is None and json.loads(json.dumps(observation)) == dict(observation)
    assert pickle.loads(pickle.dumps(observation)) == observation


class PettingZooClosing(AECGame):
    """The AEC face with PettingZoo's own closing step of a dead agent, to compare parlour's against."""

    _was_dead_step = AECEnv._was_dead_step


@pytest.mark.parametrize(("env_id", "options"), [("parlour/LiarsDice-v0", {"num_players": 4, "dice_per_player": 1}), ("parlour/TicTacToe-v0", {})])
def test_closing_steps_leave_the_tables_as_pettingzoo_s_own_do(env_id, options):
    game_cls = parlour.make_aec(env_id).match.game.__class__
    ours, theirs = AECGame(game_cls, **options), PettingZooClosing(game_cls, **options)
    mid_game = 0
    for seed in range(20):
        rng = random.Random(seed)
        ours.reset(seed=seed)
        theirs.reset(seed=seed)
        for agent in ours.agent_iter():
            assert agent == theirs.agent_selection
            _, _, terminated, truncated, info = ours.last()
            assert info == theirs.last()[4]
            action = None if terminated or truncated else rng.choice(info["legal_moves"])
            mid_game += action is None and not ours.match.over
            ours.step(action)
            theirs.step(action)
            for table in ("agents", "rewards", "_cumulative_rewards", "terminations", "truncations", "infos", "_skip_agent_selection"):
                assert getattr(ours, table) == getattr(theirs, table), table
        assert not theirs.agents
    assert (mid_game > 0) == (game_cls.name == "LiarsDice")  # four players: the eliminated close while play goes on
