"""Shared fixtures: the list of environments and their observation modes, and one torch thread for tiny models."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import parlour
from parlour.envs.registry import all_games


def env_modes() -> list[tuple[str, str]]:
    """(env_id, obs_mode) pairs for every registered environment and every mode it supports."""
    pairs = []
    for game in all_games():
        pairs.append((game.env_id(), "text"))
        if parlour.make_aec(game.env_id()).match.game.enumerable:
            pairs.append((game.env_id(), "vector"))
    return pairs


ENV_IDS = parlour.list_envs()
ENV_MODES = env_modes()


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """One torch thread for a module's tests: their models are tiny and the cores are shared, so more threads only contend."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
