"""Every environment, in every observation mode, passes the ecosystems' own checkers."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pettingzoo
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

import parlour
from tests.conftest import ENV_IDS, ENV_MODES


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("env_id,obs_mode", ENV_MODES)
def test_pettingzoo_aec_api(env_id, obs_mode):
    api_test(pettingzoo.make("aec", env_id, obs_mode=obs_mode), num_cycles=200)


@pytest.mark.parametrize("env_id,obs_mode", ENV_MODES)
def test_pettingzoo_parallel_api(env_id, obs_mode):
    parallel_api_test(pettingzoo.make("parallel", env_id, obs_mode=obs_mode), num_cycles=200)


@pytest.mark.parametrize("env_id,obs_mode", ENV_MODES)
def test_pettingzoo_seed(env_id, obs_mode):
    seed_test(lambda: parlour.make_aec(env_id, obs_mode=obs_mode), num_cycles=100)
    parallel_seed_test(lambda: parlour.make_parallel(env_id, obs_mode=obs_mode), num_cycles=100)


@pytest.mark.parametrize("env_id,obs_mode", ENV_MODES)
def test_gymnasium_check_env(env_id, obs_mode):
    env = gymnasium.make(env_id, obs_mode=obs_mode, opponent="random")
    check_env(env.unwrapped, skip_render_check=True)


@pytest.mark.parametrize("env_id", [e for e, m in ENV_MODES if m == "vector"])
def test_sb3_check_env_vector_mode(env_id):
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    sb3_check_env(gymnasium.make(env_id, obs_mode="vector").unwrapped, warn=False)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_make_vec_runs_episodes(env_id):
    envs = gymnasium.make_vec(env_id, num_envs=3, vectorization_mode="sync", opponent="random")
    observations, infos = envs.reset(seed=5)
    finished = 0
    for _ in range(300):
        actions = []
        for i in range(3):
            legal = infos["legal_moves"][i] if "legal_moves" in infos else None
            actions.append(legal[0] if legal else "hello")
        observations, rewards, terminations, truncations, infos = envs.step(actions)
        finished += int(np.sum(terminations))
        if finished >= 3:
            break
    envs.close()
    assert finished >= 1


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_registered_in_both_registries(env_id):
    assert env_id in gymnasium.registry
    assert env_id in pettingzoo.aec_registry
    assert env_id in pettingzoo.parallel_registry


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_render_ansi(env_id):
    env = parlour.make_aec(env_id, render_mode="ansi")
    env.reset(seed=0)
    picture = env.render()
    assert isinstance(picture, str) and picture


def test_unknown_option_names_the_known_ones():
    with pytest.raises(TypeError, match="error_allowance"):
        parlour.make_aec("parlour/TicTacToe-v0", not_an_option=3)


def test_unknown_env_lists_known_ids():
    with pytest.raises(KeyError, match="TicTacToe"):
        parlour.make_aec("parlour/Nope-v0")


def test_stepping_a_finished_episode_raises_a_clear_error():
    env = gymnasium.make("parlour/TicTacToe-v0", opponent="minimax").unwrapped
    env.reset(seed=0)
    terminated = False
    while not terminated:  # invalid actions until the allowance is exhausted
        _, _, terminated, _, _ = env.step("zzz")
    with pytest.raises(RuntimeError, match="reset"):
        env.step("a1")
