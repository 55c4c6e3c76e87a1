"""Shared fixtures: the list of environments and their observation modes."""

from __future__ import annotations

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
